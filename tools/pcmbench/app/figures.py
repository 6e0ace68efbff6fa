# SPDX-License-Identifier: GPL-2.0-only
"""The figure of an app run: TPS per device, dm-linear's in grey, with its
CSV (figures/app-tps.png, .csv)."""
import os

from pcmlib import clock
from .spec import LINEAR
from .tables import fmt


def draw(rs, run, outdir):
    """figures/app-tps.png: TPS per device (dm-linear's line across), with
    its CSV; (png, csv)."""
    from pcmchar import figures, results as R
    os.makedirs(outdir, exist_ok=True)
    csv_path = os.path.join(outdir, 'app-tps.csv')
    R.write_csv(csv_path, ['device', 'tps', 'lat_mean_us', 'lat_p99_us'],
                [[r['device'], r['tps'], r['lat_mean_us'], r['lat_p99_us']] for r in rs])
    plt = figures.plt
    fig, ax = plt.subplots(figsize=(7, 4))
    names = [figures.device_name(r['device']).replace(', ', '\n') for r in rs]
    ax.bar(names, [r['tps'] or 0 for r in rs],
           color=['grey' if r['device'] == LINEAR else 'tab:blue' for r in rs])
    for i, r in enumerate(rs):
        ax.annotate(fmt(r['tps']), (i, r['tps'] or 0), ha='center', va='bottom', fontsize=8)
    ax.set_ylabel('transactions per second (TPS, device clock)')
    ax.set_xlabel('device')
    import textwrap
    cond = figures.conditions_line({'clock': clock.name(run.get('icount')),
                                    'dilation': run.get('dilation') or 1,
                                    'calibration': report_cal(run)})
    # each line wrapped to the figure's width: a longer one was cut off
    ax.set_title(textwrap.fill(f'pgbench on ext4 over each device: {run["workload"]}', 100) +
                 '\n' + textwrap.fill(cond, 100), fontsize=8)
    fig.tight_layout()
    png = os.path.join(outdir, 'app-tps.png')
    fig.savefig(png)
    plt.close(fig)
    return png, csv_path


def report_cal(run):
    from pcmchar import report
    return report.calibration_text(run)
