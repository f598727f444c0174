#!/usr/bin/env bash
# perf/bench-cuda-libs.sh: issue 30's library goal with hyperfine: `gpucheckup cuda` and the full check with the real NVIDIA 535 userspace on the path, this machine's CUDA toolkit and the cuDNN wheel, before/after.
#
#   perf/bench-cuda-libs.sh                     build/gpucheckup, 3 rounds of 5 runs
#   GPUCHECKUP=path BEFORE=path/to/old/gpucheckup ROUNDS=3 RUNS=5 perf/bench-cuda-libs.sh
#                                                BEFORE: also time an older build in the same run
#
# Runs as root inside tests/real/private-dev (the real libcuda and NVML would make /dev/nvidiactl), with
# tests/real/fetch-nvidia's libraries first on LD_LIBRARY_PATH and VIRTUAL_ENV at tests/real/fetch-wheels'
# venv (both fetched once into ~/.cache/gpucheckup-tests). The page cache is warm (a warmup run each): a
# first run after boot reads the libraries it loads from disk and costs more. Also counts the CUDA library
# files each build's children load (LD_DEBUG=files). Prints medians and ratios; exits 0 either way (a
# benchmark, not a test), 2 if it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${GPUCHECKUP:-build/gpucheckup}")
before=${BEFORE:-}
runs=${RUNS:-5}
rounds=${ROUNDS:-3}
for tool in hyperfine python3 unshare; do
    command -v "$tool" >/dev/null || { echo "bench-cuda-libs: $tool is not installed" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench-cuda-libs: must run as root (tests/real/private-dev)" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench-cuda-libs: $bin is not built" >&2; exit 2; }
[ -z "$before" ] || before=$(realpath "$before")
nv=$(tests/real/fetch-nvidia | tail -n 1)/amd64/usr/lib/x86_64-linux-gnu/nvidia/current
venv=$(tests/real/fetch-wheels | tail -n 1)
work=$(mktemp -d "${TMPDIR:-/tmp}/gc-bench-cudalibs.XXXXXX")
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$nv VIRTUAL_ENV=$venv

echo "gpucheckup: $bin; driver userspace $nv; venv $venv; toolkit $(readlink -f /usr/local/cuda 2>/dev/null || echo none)"
echo "$(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
# CUDA library files each build's children load (the dynamic linker's own trace).
count() {
    rm -rf "$work/ld" && mkdir "$work/ld"
    tests/real/private-dev "$work/new" env LD_DEBUG=files LD_DEBUG_OUTPUT="$work/ld/ld" "$1" cuda --json >/dev/null || true
    grep -hoE 'file=[^ ]*lib(cudart|cublas|cublasLt|cufft|cusparse|cusolver|cudnn[a-z_]*|nccl|nvrtc|nvJitLink)\.so[.0-9]* ' \
        "$work"/ld/ld.* | sort -u | wc -l
}
echo "CUDA library files loaded by 'cuda': this build $(count "$bin")${before:+, before $(count "$before")}"

args=(-n "cuda" "$bin cuda --json" -n "check" "$bin --json")
[ -z "$before" ] || args+=(-n "before: cuda" "$before cuda --json" -n "before: check" "$before --json")
for round in $(seq "$rounds"); do
    echo "== round $round/$rounds (load $(cut -d' ' -f1 /proc/loadavg))"
    # gpucheckup exits 1 when it finds a problem (no GPU here is one): time it anyway (-i).
    tests/real/private-dev "$work/new" hyperfine -N -i --style basic --warmup 1 --runs "$runs" \
        --export-json "$work/round-$round.json" "${args[@]}"
done
python3 - "$work"/round-*.json <<'PY'
import json, statistics, sys
times = {}
for path in sys.argv[1:]:
    for r in json.load(open(path))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
t = {c: statistics.median(v) for c, v in times.items()}
print("\nResults (medians of this run; load average now %s):" % " ".join(open("/proc/loadavg").read().split()[:3]))
for c in ("cuda", "check"):
    line = "  %-6s this build %7.0f ms" % (c, t[c] * 1e3)
    if "before: " + c in t:
        b = t["before: " + c]
        line += "   before %7.0f ms   before/after %.1fx" % (b * 1e3, b / t[c])
    print(line)
PY
