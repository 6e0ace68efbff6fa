# SPDX-License-Identifier: GPL-2.0-only
"""pcmbench: tools/pcm-bench, one module per mode.

  main          the command line (argparse subcommands, each with its own
                --help), the guest's and the host's drivers
  options       the option groups the modes share (parents of their
                parsers)
  common        what the modes share: the ramdisk, dm devices over it,
                fio, status
  passthrough, scaling, ecc, startgap, barriers, timing, calibrate,
  bigdev, counters, trace
                one mode each: NAME, HELP, PARENTS (its option groups),
                add_args(p) if it has options of its own, guest(args,
                runs) (in the VM: appends the runs) and summarize(res) (on
                the host: the table and the summary)
  characterize  the study of a spec (tools/pcmchar does the work)
  app, appwork  a database's benchmark on ext4 over each device: app/ a
                package (its __init__ lists its modules), appwork.py the
                programs other than pgbench
"""
