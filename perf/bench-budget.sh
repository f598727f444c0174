#!/usr/bin/env bash
# perf/bench-budget.sh: the time goals of issue 17 with hyperfine: a full check against `clinfo --json`, smoke on 1, 4 and 8 PoCL devices, and a run with a hanging driver against --timeout.
#
#   perf/bench-budget.sh                 uses build/gpucheckup and its fake hanging ICD, 4 rounds of 3 runs
#   GPUCHECKUP=path BEFORE=path/to/old/gpucheckup ROUNDS=4 RUNS=3 perf/bench-budget.sh
#                                         BEFORE: also time an older build in the same run (before/after)
#   FAKE_HANG=path/to/libgcfakeicd-hang.so  the hanging driver (default: the build's tests/icd one)
#
# On a shared machine a burst of load skews whichever command runs during it: every command runs in
# each of ROUNDS rounds and the medians pool all rounds.
# Goals, as ratios within this one run (medians; the machine's load is printed with them): full check with
# smoke at most 1.3x `clinfo --json` (warm PoCL cache); smoke on 4 devices at most 1.5x one, 8 at most 2x;
# a hanging driver: the whole run within --timeout + 1 s. Prints each value and whether its goal is met;
# exits 0 either way (a benchmark, not a test), 2 if it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${GPUCHECKUP:-build/gpucheckup}")
before=${BEFORE:-}
runs=${RUNS:-3}
rounds=${ROUNDS:-4}
tmo=${TIMEOUT:-3}
hang=${FAKE_HANG:-$(dirname "$bin")/tests/icd/libgcfakeicd-hang.so}
for tool in hyperfine clinfo python3; do
    command -v "$tool" >/dev/null || { echo "bench-budget: $tool is not installed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "bench-budget: $bin is not built" >&2; exit 2; }
[ -f "$hang" ] || { echo "bench-budget: no hanging fake ICD at $hang (meson compile -C build)" >&2; exit 2; }
[ -z "$before" ] || before=$(realpath "$before")

work=$(mktemp -d "${TMPDIR:-/tmp}/gc-bench-budget.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset OCL_ICD_VENDORS OPENCL_VENDOR_PATH OCL_ICD_FILENAMES GPUCHECKUP_LIBOPENCL || true
export POCL_CACHE_DIR=$work/cache
mkdir -p "$POCL_CACHE_DIR" "$work/vendors"
echo "$hang" >"$work/vendors/00-hang.icd"
devices() { local n=$1 s=""; for _ in $(seq "$n"); do s="$s pthread"; done; echo "${s# }"; }
one=$(devices 1) four=$(devices 4) eight=$(devices 8)

echo "gpucheckup: $bin; $(clinfo --version 2>&1 | head -1); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
# Warm the kernel cache for every device count and both builds.
for d in "$one" "$four" "$eight"; do
    for b in "$bin" $before; do POCL_DEVICES=$d "$b" smoke --json >/dev/null || true; done
done
POCL_DEVICES=$one clinfo --json >/dev/null

args=(-n "clinfo --json" "env POCL_DEVICES=$one clinfo --json"
      -n "check" "env POCL_DEVICES=$one $bin --json"
      -n "smoke 1" "env POCL_DEVICES=$one $bin smoke --json"
      -n "smoke 4" "env 'POCL_DEVICES=$four' $bin smoke --json"
      -n "smoke 8" "env 'POCL_DEVICES=$eight' $bin smoke --json")
if [ -n "$before" ]; then
    args+=(-n "before: check" "env POCL_DEVICES=$one $before --json"
           -n "before: smoke 1" "env POCL_DEVICES=$one $before smoke --json"
           -n "before: smoke 4" "env 'POCL_DEVICES=$four' $before smoke --json"
           -n "before: smoke 8" "env 'POCL_DEVICES=$eight' $before smoke --json")
fi
# gpucheckup exits 1 when it finds a problem (no GPU here is one): time it anyway (-i).
for round in $(seq "$rounds"); do
    echo "== round $round/$rounds (load $(cut -d' ' -f1 /proc/loadavg))"
    hyperfine -N -i --style basic --warmup 1 --runs "$runs" --export-json "$work/warm-$round.json" "${args[@]}"
done
hargs=(-n "hang" "env OCL_ICD_VENDORS=$work/vendors POCL_DEVICES=$one $bin --json --timeout $tmo")
[ -z "$before" ] || hargs+=(-n "before: hang" "env OCL_ICD_VENDORS=$work/vendors POCL_DEVICES=$one $before --json --timeout $tmo")
hyperfine -N -i --style basic --runs 3 --export-json "$work/hang.json" "${hargs[@]}"

python3 - "$tmo" "$work/hang.json" "$work"/warm-*.json <<'PY'
import json, statistics, sys
tmo = float(sys.argv[1])
times = {}
for path in sys.argv[2:]:
    for r in json.load(open(path))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
t = {c: (statistics.median(v), max(v)) for c, v in times.items()}
def line(what, value, goal, ok):
    print("  %-40s %-9s goal %-12s %s" % (what, value, goal, "met" if ok is True else "MISSED" if ok is False else ""))
load = open("/proc/loadavg").read().split()[:3]
print("\nResults (medians of this run; load average now %s):" % " ".join(load))
for pre in ([""] + (["before: "] if "before: check" in t else [])):
    c, one = t[pre + "check"][0], t[pre + "smoke 1"][0]
    print(" " + (pre or "this build: "))
    line("check / clinfo --json", "%.2fx" % (c / t["clinfo --json"][0]), "<= 1.3x", c / t["clinfo --json"][0] <= 1.3)
    line("smoke 4 devices / 1", "%.2fx" % (t[pre + "smoke 4"][0] / one), "<= 1.5x", t[pre + "smoke 4"][0] / one <= 1.5)
    line("smoke 8 devices / 1", "%.2fx" % (t[pre + "smoke 8"][0] / one), "<= 2x", t[pre + "smoke 8"][0] / one <= 2.0)
    h = t[pre + "hang"][1]
    line("hanging driver, slowest run", "%.2f s" % h, "<= %.0f+1 s" % tmo, h <= tmo + 1)
    print("  (clinfo --json %.0f ms, check %.0f ms, smoke 1/4/8 devices %.0f/%.0f/%.0f ms)"
          % (t["clinfo --json"][0] * 1e3, c * 1e3, one * 1e3, t[pre + "smoke 4"][0] * 1e3, t[pre + "smoke 8"][0] * 1e3))
PY
