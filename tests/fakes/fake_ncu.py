"""A stand-in for the `ncu` command line: it runs the profiled program like ncu does and writes
a log (and a report) according to FAKE_NCU_MODE: ok, perm (ERR_NVGPUCTRPERM), nokernel, error
(ncu refuses its arguments and never starts the program)."""

import os
import subprocess
import sys

WITH_VALUE = {"--clock-control", "--target-processes", "--kernel-name-base", "--kernel-name",
              "--launch-skip", "--launch-count", "--export", "--log-file", "--section",
              "--metrics", "--import-source"}


def main():
    args, opts = sys.argv[1:], {}
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        opts.setdefault(flag, []).append(args.pop(0) if flag in WITH_VALUE else True)
    with open(opts["--log-file"][0], "w") as log:
        return run(args, opts, log, os.environ.get("FAKE_NCU_MODE", "ok"))


def run(args, opts, log, mode):
    if mode == "error":
        log.write("==ERROR== Failed to find metric no_such_metric.sum\n")
        return 1
    log.write(f"==PROF== Connected to process {os.getpid()}\n")
    code = subprocess.call(args)
    if mode == "perm":
        log.write("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                  "NVIDIA GPU Performance Counters on the target device 0.\n")
    elif mode == "nokernel":
        log.write("==WARNING== No kernels were profiled.\n")
    else:
        log.write(f'==PROF== Profiling "{opts["--kernel-name"][0]}": 0%....100% - 21 passes\n')
        with open(opts["--export"][0], "wb") as report:
            report.write(b"fake report")
        log.write(f"==PROF== Report: {opts['--export'][0]}\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
