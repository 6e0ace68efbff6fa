# SPDX-License-Identifier: GPL-2.0-only
"""pcmbench: tools/pcm-bench, one module per mode.

  main          the command line (argparse subcommands, each with its own
                --help), the guest's and the host's drivers
  common        what the modes share: the ramdisk, dm devices over it,
                fio, status
  passthrough, scaling, ecc, startgap, barriers, timing, bigdev
                one mode each: NAME, HELP, guest(args, runs) (in the VM:
                appends the runs) and summarize(res) (on the host: the
                table and the summary)
  characterize  the study of a spec (tools/pcmchar does the work)
"""
