#!/usr/bin/env bash
# perf/bench-gemm.sh: measure the speed goals of `gpucheckup bench` (issue 15) on PoCL, and print the ratios.
#
# Goal 1: gpucheckup's own fp32 kernel at N = 1024 >= 1.0x CLBlast's SGEMM on the same PoCL device. Both are
#         read from one `gpucheckup bench --bench-precision fp32 --json` run whose budget lets both sweeps
#         reach N = 1024 (each gets a quarter of it); the run is repeated ROUNDS times and the median of the
#         per-run ratios (median GFLOPS of 3 to 7 timed runs each) is the figure.
# Goal 2: the whole default `gpucheckup bench` on one PoCL device in under 15 s (hyperfine, warm PoCL
#         kernel cache, stdout to /dev/null).
#
#   perf/bench-gemm.sh                  uses build/gpucheckup, 3 rounds, a 60 s budget for goal 1
#   GPUCHECKUP=path ROUNDS=5 GEMM_BUDGET=120 perf/bench-gemm.sh
#   BENCH_OUT=dir                        keep the JSON and hyperfine's output there (default: a temp dir)
#   BENCH_STRICT=1                       exit 1 when a goal is missed
set -eu
cd "$(dirname "$0")/.."

gpucheckup=$(realpath "${GPUCHECKUP:-build/gpucheckup}")
rounds=${ROUNDS:-3}
budget=${GEMM_BUDGET:-60}
for tool in hyperfine python3; do
    command -v "$tool" >/dev/null || { echo "bench-gemm: $tool is not installed" >&2; exit 2; }
done
[ -x "$gpucheckup" ] || { echo "bench-gemm: $gpucheckup is not built (meson compile -C build)" >&2; exit 2; }

out=${BENCH_OUT:-$(mktemp -d -t gc-bench-gemm.XXXXXX)}
mkdir -p "$out/pocl-cache"
# Only the system loader and PoCL's one pthread device; the real CLBlast and CPU BLAS.
unset OCL_ICD_VENDORS OPENCL_VENDOR_PATH OCL_ICD_FILENAMES GPUCHECKUP_LIBOPENCL GPUCHECKUP_LIBCLBLAST \
    GPUCHECKUP_LIBCBLAS || true
export POCL_CACHE_DIR="$out/pocl-cache" POCL_DEVICES=pthread

echo "bench-gemm: warming the PoCL kernel cache (CLBlast compiles its GEMM on first use) ..."
"$gpucheckup" bench --bench-time 1 --timeout 300 >/dev/null || true

for r in $(seq "$rounds"); do
    echo "bench-gemm: round $r/$rounds: bench --bench-precision fp32 --bench-time $budget ..."
    "$gpucheckup" bench --bench-precision fp32 --bench-time "$budget" --timeout 300 --json >"$out/gemm-$r.json" || true
done

hyperfine --warmup 1 --runs "${RUNS:-3}" --export-json "$out/default.json" \
    "$gpucheckup bench --timeout 300" >"$out/hyperfine.txt" 2>&1 || { cat "$out/hyperfine.txt"; exit 2; }

python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ratios, ours, theirs = [], [], []
for r in range(1, rounds + 1):
    doc = json.load(open(os.path.join(out, "gemm-%d.json" % r)))
    dev = doc["bench"]["devices"][0]
    at = {}
    for sw in dev.get("sweeps", []):
        for p in sw["points"]:
            if p["n"] == 1024:
                at[sw["implementation"]] = p["gflops"]
    if at.get("gpucheckup") and at.get("clblast"):
        ours.append(at["gpucheckup"]); theirs.append(at["clblast"])
        ratios.append(at["gpucheckup"] / at["clblast"])
    else:
        print("round %d: N = 1024 not reached or not valid by both (%s); raise GEMM_BUDGET" % (r, at))
wall = json.load(open(os.path.join(out, "default.json")))["results"][0]
med_wall = statistics.median(wall["times"])
print("device: %s" % dev.get("name"))
ok = True
if ratios:
    ratio = statistics.median(ratios)
    print("goal 1: fp32 N=1024: gpucheckup %.2f GFLOPS, CLBlast %.2f GFLOPS (medians of %d rounds): ratio %.2fx (goal >= 1.0x) %s"
          % (statistics.median(ours), statistics.median(theirs), len(ratios), ratio, "met" if ratio >= 1.0 else "MISSED"))
    ok &= ratio >= 1.0
else:
    print("goal 1: no round measured both at N = 1024")
    ok = False
print("goal 2: default bench wall time: median %.2f s (min %.2f, max %.2f, %d runs): %.2fx of the 15 s limit %s"
      % (med_wall, min(wall["times"]), max(wall["times"]), len(wall["times"]), med_wall / 15.0,
         "met" if med_wall < 15.0 else "MISSED"))
ok &= med_wall < 15.0
open(os.path.join(out, "ok"), "w").write("1" if ok else "0")
PY
echo "bench-gemm: JSON and hyperfine output in $out"
if [ "${BENCH_STRICT:-0}" = 1 ] && [ "$(cat "$out/ok")" != 1 ]; then
    exit 1
fi
