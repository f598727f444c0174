#!/usr/bin/env bash
# perf/bench-opencl.sh: time `gpucheckup opencl --json` against `clinfo --json` on PoCL with hyperfine.
#
# Times both tools with 1, 4 and 8 PoCL devices (POCL_DEVICES), with a warm PoCL kernel cache and with one
# emptied before every run, next to perf/cl-floor.c (the least any tool must do). On a shared machine a
# burst of load would skew whichever command runs during it, so the whole set runs in ROUNDS rounds of
# RUNS runs each and the statistics pool every round. Prints medians, minimums and the ratios the opencl
# issue sets as goals (judged on medians): gpucheckup no slower than clinfo; 8 devices at most 1.5x one.
#
#   perf/bench-opencl.sh              uses build/gpucheckup, 5 rounds of 6 runs
#   GPUCHECKUP=path ROUNDS=10 RUNS=5 perf/bench-opencl.sh
#   BENCH_OUT=dir                      keep hyperfine's JSON and markdown there (default: a temp dir)
#   BENCH_STRICT=1                     exit 1 when a goal is missed
set -eu
cd "$(dirname "$0")/.."

gpucheckup=$(realpath "${GPUCHECKUP:-build/gpucheckup}")
runs=${RUNS:-6}
rounds=${ROUNDS:-5}
for tool in hyperfine clinfo python3 cc; do
    command -v "$tool" >/dev/null || { echo "bench-opencl: $tool is not installed" >&2; exit 2; }
done
[ -x "$gpucheckup" ] || { echo "bench-opencl: $gpucheckup is not built (meson compile -C build)" >&2; exit 2; }

out=${BENCH_OUT:-$(mktemp -d -t gc-bench-opencl.XXXXXX)}
mkdir -p "$out"
cache="$out/pocl-cache"
mkdir -p "$cache"
# Only the system loader and PoCL: no test overrides from the caller's environment.
unset OCL_ICD_VENDORS OPENCL_VENDOR_PATH OCL_ICD_FILENAMES GPUCHECKUP_LIBOPENCL || true
export POCL_CACHE_DIR="$cache"

# The floor: a program that only loads the loader and lists platforms and devices (what any tool pays).
cc -O2 -o "$out/cl-floor" perf/cl-floor.c -ldl

devices() { local n=$1 s=""; for _ in $(seq "$n"); do s="$s pthread"; done; echo "${s# }"; }

commands=()
names=()
for n in 1 4 8; do
    d=$(devices "$n")
    # No shell in between (-N): env sets the device list; hyperfine discards the output.
    commands+=("env 'POCL_DEVICES=$d' '$gpucheckup' opencl --json")
    names+=("gpucheckup-$n")
    commands+=("env 'POCL_DEVICES=$d' clinfo --json")
    names+=("clinfo-$n")
    commands+=("env 'POCL_DEVICES=$d' '$out/cl-floor'")
    names+=("floor-$n")
done
args=()
for i in "${!commands[@]}"; do
    args+=(--command-name "${names[$i]}" "${commands[$i]}")
done

for round in $(seq "$rounds"); do
    echo "== round $round/$rounds: warm PoCL kernel cache ($runs runs each)"
    # gpucheckup exits 1 when it finds a problem (no GPU here is one): time it anyway (-i).
    hyperfine -N --warmup 2 --runs "$runs" -i --style basic --export-json "$out/warm-$round.json" "${args[@]}"
    echo "== round $round/$rounds: empty PoCL kernel cache before every run ($runs runs each)"
    hyperfine -N --runs "$runs" -i --style basic --prepare "sh -c 'rm -rf \"\$0\" && mkdir -p \"\$0\"' '$cache'" \
        --export-json "$out/cold-$round.json" "${args[@]}"
done

python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
missed = 0
# Medians decide the goals: on a shared machine a burst of load inflates a mean. Minimums show the
# cost without any contention. "floor" only loads the loader and lists platforms and devices: what
# PoCL itself costs per device (it reads the CPU topology once per device) bounds every tool's ratio.
print()
print("%-5s %-4s %-20s %-20s %-15s  %s" % ("cache", "devs", "gpucheckup med/min", "clinfo med/min", "ratio med/min",
                                         "floor med/min"))
for mode in ("warm", "cold"):
    times = {}
    for r in range(1, rounds + 1):
        with open(os.path.join(out, "%s-%d.json" % (mode, r))) as f:
            for res in json.load(f)["results"]:
                times.setdefault(res["command"], []).extend(res["times"])
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    low = {k: min(v) * 1000 for k, v in times.items()}
    for n in (1, 4, 8):
        g, c = "gpucheckup-%d" % n, "clinfo-%d" % n
        ok = med[g] <= med[c]
        missed += not ok
        fl = "floor-%d" % n
        print("%-5s %-4d %7.1f / %5.1f ms   %7.1f / %6.1f ms  %5.2fx / %5.2fx  %6.1f / %5.1f ms%s" % (
            mode, n, med[g], low[g], med[c], low[c], med[g] / med[c], low[g] / low[c], med[fl], low[fl],
            "" if ok else "  GOAL MISSED (<= 1.00x)"))
    for tool in ("gpucheckup", "clinfo", "floor"):
        rm = med["%s-8" % tool] / med["%s-1" % tool]
        rl = low["%s-8" % tool] / low["%s-1" % tool]
        goal = tool == "gpucheckup"
        ok = not goal or rm <= 1.5
        missed += not ok
        print("%-5s %-10s 8 devices / 1 device: %.2fx median, %.2fx min%s" % (
            mode, tool, rm, rl, ("  (goal <= 1.50x)" if ok else "  GOAL MISSED (<= 1.50x)") if goal else ""))
print()
print("samples per command and cache: %d; hyperfine JSON in %s" % (len(next(iter(times.values()))), out))
if missed and os.environ.get("BENCH_STRICT") == "1":
    sys.exit(1)
PY
