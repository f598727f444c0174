#!/bin/sh
# ptxas_check.sh: assemble the CUDA smoke test's embedded PTX (the exact bytes shipped) for every real GPU target the toolkit's ptxas knows.
# usage: ptxas_check.sh CUDA_SMOKE_RUN PTXAS WORKDIR
set -eu
run=$1 ptxas=$2 dir=$3
mkdir -p "$dir"
ptx=$dir/cuda_smoke.ptx
"$run" --ptx > "$ptx"
grep -q '^\.version 6\.0$' "$ptx"
grep -q '^\.target sm_50$' "$ptx"
grep -q '^\.address_size 64$' "$ptx"
# Real targets from ptxas --help ('sm_75', 'sm_90', ... without the a/f variants); CUDA 13 no longer
# lists sm_50-sm_72, but assembles .target sm_50 PTX for any newer one.
archs=$("$ptxas" --help | grep -o "'sm_[0-9]*'" | tr -d "'" | sort -u)
[ -n "$archs" ] || { echo "ptxas lists no sm_ targets" >&2; exit 1; }
n=0
for a in $archs; do
    "$ptxas" -arch="$a" "$ptx" -o "$dir/cuda_smoke.$a.cubin"
    echo "ptxas -arch=$a: ok"
    n=$((n + 1))
done
# The GPU this was written for (H100, sm_90) must be among them with a CUDA 12 or 13 toolkit.
echo "$archs" | grep -qx 'sm_90' || echo "note: this ptxas does not know sm_90"
echo "$n targets"
