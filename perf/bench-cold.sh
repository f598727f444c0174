#!/usr/bin/env bash
# perf/bench-cold.sh: issue 30's bench goal with hyperfine: the default `gpucheckup bench` on PoCL with an empty kernel cache (cold) and a warm one, against its --bench-time, before/after.
#
#   perf/bench-cold.sh                         build/gpucheckup, 3 runs each
#   GPUCHECKUP=path BEFORE=path/to/old/gpucheckup RUNS=3 BENCH_TIME=10 perf/bench-cold.sh
#
# Cold: a fresh POCL_CACHE_DIR before every run (hyperfine --prepare): PoCL compiles gpucheckup's kernels and
# CLBlast's GEMM programs again (CLBlast keeps no cache of its own on disk). Warm: one cache, filled by the
# warmup run. Goal: cold within the budget. Prints medians and whether each is within --bench-time; exits
# 0 either way (a benchmark, not a test), 2 if it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${GPUCHECKUP:-build/gpucheckup}")
before=${BEFORE:-}
runs=${RUNS:-3}
budget=${BENCH_TIME:-10}
for tool in hyperfine python3; do
    command -v "$tool" >/dev/null || { echo "bench-cold: $tool is not installed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "bench-cold: $bin is not built" >&2; exit 2; }
[ -z "$before" ] || before=$(realpath "$before")
work=$(mktemp -d "${TMPDIR:-/tmp}/gc-bench-cold.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset OCL_ICD_VENDORS OPENCL_VENDOR_PATH OCL_ICD_FILENAMES GPUCHECKUP_LIBOPENCL || true
export POCL_DEVICES=pthread
echo "gpucheckup: $bin; budget $budget s; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

cold=(); warm=()
for b in "$bin" $before; do
    name=$([ "$b" = "$bin" ] && echo "" || echo "before: ")
    cold+=(-n "${name}cold" "env POCL_CACHE_DIR=$work/cold $b bench --json --bench-time $budget")
    warm+=(-n "${name}warm" "env POCL_CACHE_DIR=$work/warm-$([ -z "$name" ] && echo a || echo b) $b bench --json --bench-time $budget")
done
# gpucheckup exits 1 when it finds a problem (no GPU here is one): time it anyway (-i).
hyperfine -N -i --style basic --runs "$runs" --prepare "rm -rf $work/cold" --export-json "$work/cold.json" "${cold[@]}"
hyperfine -N -i --style basic --runs "$runs" --warmup 1 --export-json "$work/warm.json" "${warm[@]}"
python3 - "$budget" "$work/cold.json" "$work/warm.json" <<'PY'
import json, statistics, sys
budget = float(sys.argv[1])
t = {}
for path in sys.argv[2:]:
    for r in json.load(open(path))["results"]:
        t[r["command"]] = (statistics.median(r["times"]), max(r["times"]))
print("\nResults (medians; load average now %s):" % " ".join(open("/proc/loadavg").read().split()[:3]))
for pre in ("", "before: "):
    if pre + "cold" not in t:
        continue
    c, w = t[pre + "cold"], t[pre + "warm"]
    print("  %-14s cold %5.1f s (slowest %5.1f)  warm %5.1f s  cold within the %.0f s budget: %s"
          % (pre or "this build:", c[0], c[1], w[0], budget, "yes" if c[1] <= budget else "NO"))
PY
