#!/usr/bin/env bash
# Every speed and memory target of specdash measured in one run, each figure printed beside its anchor by the
# benchmark that owns it (see each script's docstring for its method):
#   start-up: `specdash --help`, first frame and last line of a small log (bench_startup.py)
#   a big log: last line on screen and history analysed, 1M and 10M lines, peak RSS (bench_tail_first.py)
#   `specdash scan` throughput and peak RSS on a 1M-line log (bench_scan.py)
#   recording's CPU cost on a 20 000 lines/s stream (bench_recording_cost.py)
#   the live log pane at 20 000 lines/s (bench_log_pane.py)
#   the benchmark client beside SGLang's bench_serving (bench_vs_bench_serving.py; needs a Python with SGLang)
# Usage, from the repository root, on a quiet machine (~25 min on 2 cores; ~4 GB of generated logs in $TMPDIR, removed):
#   benchmarks/speed_targets.sh [SGLANG_PYTHON]
# PYTHON (environment) picks the interpreter that runs specdash (default python3). Exit status: 1 when a benchmark
# failed to run (the others still run); whether a target is met is printed, not an exit status.
set -uo pipefail
py=${PYTHON:-python3}
sglang_py=${1:-${SGLANG_PYTHON:-}}
status=0
echo "== speed targets: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
     "$("$py" -c 'import platform; print("Python", platform.python_version())'), $(nproc) CPUs," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
run() {
    echo
    echo "\$ $* (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    "$@" || { echo "!! exited with $?"; status=1; }
}
run "$py" benchmarks/bench_startup.py --runs 5
run "$py" benchmarks/bench_tail_first.py 1000000 1000
run "$py" benchmarks/bench_tail_first.py 10000000
run "$py" benchmarks/bench_scan.py --rounds 3 --floors
run "$py" benchmarks/bench_recording_cost.py 200000
run "$py" benchmarks/bench_log_pane.py 20000 20 200000
if [ -n "$sglang_py" ]; then
    run "$py" benchmarks/bench_vs_bench_serving.py --sglang-python "$sglang_py" --rates 2000,5000,10000 --rounds 3
else
    run "$py" benchmarks/bench_vs_bench_serving.py --rates 2000,5000,10000 --rounds 3
fi
echo
echo "== done $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
