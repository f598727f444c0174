#!/usr/bin/env bash
# perf/bench-peers.sh: issue 37's speed goals with hyperfine: gpucheckup against the listing tools it replaces (clinfo, vulkaninfo), interleaved, in one run.
#
#   perf/bench-peers.sh                          build/gpucheckup, ROUNDS=5 rounds of RUNS=3 runs each
#   GPUCHECKUP=path BEFORE=path/to/old/gpucheckup perf/bench-peers.sh
#                                                BEFORE: also time an older build in the same rounds
#
# Goals, as ratios of medians within this one run, with every driver installed as on the test machine
# (PoCL, NEO, Mesa's OpenCL and Vulkan drivers, ROCm 5.2, Level Zero):
#   - the full check (`gpucheckup --json`) at most 1.0x `clinfo --json` followed by `vulkaninfo --summary`;
#   - `gpucheckup vulkan --json` at most 1.0x `vulkaninfo --summary`;
#   - `gpucheckup --health --no-smoke` at most 0.5x `clinfo --json` (it runs on every node every few minutes).
# Also timed, no goal: `gpucheckup --json --no-smoke`, to tell the smoke tests' own share of the full check.
# Prints each ratio, the machine's load, and whether its goal is met; exits 0 either way (a benchmark, not a
# test), 2 if it cannot run. On a shared machine a burst of load skews whichever command runs during it:
# every command runs in each round, and the medians pool all rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${GPUCHECKUP:-build/gpucheckup}")
before=${BEFORE:-}
runs=${RUNS:-3}
rounds=${ROUNDS:-5}
for tool in hyperfine clinfo vulkaninfo python3; do
    command -v "$tool" >/dev/null || { echo "bench-peers: $tool is not installed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "bench-peers: $bin is not built" >&2; exit 2; }
[ -z "$before" ] || before=$(realpath "$before")

work=$(mktemp -d "${TMPDIR:-/tmp}/gc-bench-peers.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset OCL_ICD_VENDORS OPENCL_VENDOR_PATH OCL_ICD_FILENAMES VK_DRIVER_FILES VK_ICD_FILENAMES || true
# Warm every cache the commands keep (PoCL's kernels, Mesa's shaders) so that no round pays for it.
for b in "$bin" $before; do "$b" --json >/dev/null 2>&1 || true; done
clinfo --json >/dev/null 2>&1 || true
vulkaninfo --summary >/dev/null 2>&1 || true

args=(-n "clinfo --json" "clinfo --json"
      -n "vulkaninfo --summary" "vulkaninfo --summary"
      -n "clinfo+vulkaninfo" "sh -c 'clinfo --json >/dev/null; vulkaninfo --summary >/dev/null'"
      -n "check" "$bin --json"
      -n "vulkan" "$bin vulkan --json"
      -n "health" "$bin --health --no-smoke"
      -n "check --no-smoke" "$bin --json --no-smoke")
if [ -n "$before" ]; then
    args+=(-n "before: check" "$before --json" -n "before: vulkan" "$before vulkan --json"
           -n "before: health" "$before --health --no-smoke")
fi
# gpucheckup exits 1 when it finds a problem: time it anyway (-i).
for round in $(seq "$rounds"); do
    echo "== round $round/$rounds (load $(cut -d' ' -f1 /proc/loadavg))"
    hyperfine -N -i --style basic --warmup 1 --runs "$runs" --export-json "$work/r-$round.json" "${args[@]}"
done

python3 - "$work"/r-*.json <<'PY'
import json, statistics, sys
times = {}
for path in sys.argv[1:]:
    for r in json.load(open(path))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
t = {c: statistics.median(v) for c, v in times.items()}
def line(what, num, den, goal):
    ratio = t[num] / t[den]
    print("  %-44s %5.2fx  goal <= %.1fx  %s" % (what, ratio, goal, "met" if ratio <= goal else "MISSED"))
print("\nResults (medians of this run; load average now %s):" % " ".join(open("/proc/loadavg").read().split()[:3]))
for pre in [""] + (["before: "] if "before: check" in t else []):
    print(" " + (pre or "this build: "))
    line("check / (clinfo --json; vulkaninfo --summary)", pre + "check", "clinfo+vulkaninfo", 1.0)
    line("vulkan / vulkaninfo --summary", pre + "vulkan", "vulkaninfo --summary", 1.0)
    line("--health --no-smoke / clinfo --json", pre + "health", "clinfo --json", 0.5)
    print("  (check %.0f ms, vulkan %.0f ms, --health --no-smoke %.0f ms; clinfo --json %.0f ms, "
          "vulkaninfo --summary %.0f ms, both %.0f ms)"
          % (t[pre + "check"] * 1e3, t[pre + "vulkan"] * 1e3, t[pre + "health"] * 1e3, t["clinfo --json"] * 1e3,
             t["vulkaninfo --summary"] * 1e3, t["clinfo+vulkaninfo"] * 1e3))
# Not a goal: how much of the full check is the smoke tests' own work (what clinfo and vulkaninfo never do).
print("  (this build's check --no-smoke: %.0f ms, %.2fx clinfo+vulkaninfo)"
      % (t["check --no-smoke"] * 1e3, t["check --no-smoke"] / t["clinfo+vulkaninfo"]))
PY
