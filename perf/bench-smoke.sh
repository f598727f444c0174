#!/usr/bin/env bash
# perf/bench-smoke.sh: time `gpucheckup smoke` on PoCL against `clinfo --json`: warm and empty kernel cache, 1 and 4 devices.
#
# Usage: perf/bench-smoke.sh [RUNS]   (GPUCHECKUP=path/to/gpucheckup, default build/gpucheckup)
# Goals, as ratios within this one run: smoke with a warm PoCL kernel cache at most 2x `clinfo --json`;
# smoke with an empty cache under 1.5 s; 4 PoCL devices at most 2x one device. Prints each measured
# value and whether its goal is met; exits 0 either way (a benchmark, not a test), 2 if it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${GPUCHECKUP:-build/gpucheckup}
runs=${1:-20}
cold_runs=$(( runs < 10 ? runs : 10 ))
for tool in hyperfine clinfo python3; do
    command -v "$tool" >/dev/null || { echo "bench-smoke: $tool is not installed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "bench-smoke: $bin is not built (meson setup build && meson compile -C build)" >&2; exit 2; }
bin=$(realpath "$bin")

work=$(mktemp -d "${TMPDIR:-/tmp}/gc-bench-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
warm=$work/cache-warm
cold=$work/cache-cold
mkdir -p "$warm" "$cold"
one="pthread"
four="pthread pthread pthread pthread"

echo "gpucheckup: $bin ($("$bin" --version)); $(clinfo --version 2>&1 | head -1); $(nproc) CPUs"
# Fill the warm cache (both device counts, both tools); check that the smoke test passes at all.
for devs in "$one" "$four"; do
    POCL_CACHE_DIR=$warm POCL_DEVICES=$devs "$bin" smoke --json >/dev/null ||
        { echo "bench-smoke: gpucheckup smoke did not pass on PoCL ($devs)" >&2; exit 2; }
done
POCL_CACHE_DIR=$warm POCL_DEVICES=$one clinfo --json >/dev/null

hyperfine -N --style basic --warmup 3 --runs "$runs" --export-json "$work/warm.json" \
    -n "clinfo --json" "env POCL_CACHE_DIR=$warm POCL_DEVICES=$one clinfo --json" \
    -n "smoke, warm cache, 1 device" "env POCL_CACHE_DIR=$warm POCL_DEVICES=$one $bin smoke --json" \
    -n "smoke, warm cache, 4 devices" "env POCL_CACHE_DIR=$warm 'POCL_DEVICES=$four' $bin smoke --json"
hyperfine -N --style basic --runs "$cold_runs" --prepare "rm -rf $cold" --export-json "$work/cold.json" \
    -n "smoke, empty cache, 1 device" "env POCL_CACHE_DIR=$cold POCL_DEVICES=$one $bin smoke --json" \
    -n "clinfo --json, empty cache" "env POCL_CACHE_DIR=$cold POCL_DEVICES=$one clinfo --json"

python3 - "$work/warm.json" "$work/cold.json" <<'PY'
import json, sys
t = {}
for path in sys.argv[1:]:
    for r in json.load(open(path))["results"]:
        t[r["command"]] = r["mean"]
clinfo = t["clinfo --json"]
one, four = t["smoke, warm cache, 1 device"], t["smoke, warm cache, 4 devices"]
cold = t["smoke, empty cache, 1 device"]
def line(what, value, goal, ok):
    print("  %-44s %-9s goal %-10s %s" % (what, value, goal, "met" if ok else "MISSED"))
print("\nResults (means of this run):")
line("smoke warm / clinfo --json", "%.2fx" % (one / clinfo), "<= 2x", one / clinfo <= 2.0)
line("smoke, empty kernel cache", "%.2f s" % cold, "< 1.5 s", cold < 1.5)
line("smoke 4 devices / 1 device (warm)", "%.2fx" % (four / one), "<= 2x", four / one <= 2.0)
print("  (clinfo --json %.0f ms warm, %.0f ms with an empty cache; smoke %.0f ms warm)"
      % (clinfo * 1e3, t["clinfo --json, empty cache"] * 1e3, one * 1e3))
PY
