#!/usr/bin/env bash
# make_seeds.sh: regenerate the fuzz seeds that are made, not hand-written: ld.so.cache images
# written by this machine's ldconfig (new, compat and biarch formats) over a tiny fake root, and
# the copies of the cpu area's fixtures. Run from anywhere; needs no root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ld.so.cache: two 64-bit libraries, then a 32-bit one through an ld.so.conf.d include.
r=$tmp/root
mkdir -p "$r/usr/lib/x86_64-linux-gnu" "$r/etc/ld.so.conf.d" "$r/lib32"
ln -s usr/lib "$r/lib"
for lib in libOpenCL.so.1 libjson-c.so.5; do
    cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$r/usr/lib/x86_64-linux-gnu/"
done
echo 'include /etc/ld.so.conf.d/*.conf' > "$r/etc/ld.so.conf"
ldconfig -r "$r" -c new && cp "$r/etc/ld.so.cache" "$corpus/ldcache/debian12-new"
ldconfig -r "$r" -c compat && cp "$r/etc/ld.so.cache" "$corpus/ldcache/debian12-compat"
if [ -e /lib32/libdl.so.2 ]; then
    cp -L /lib32/libdl.so.2 "$r/lib32/"
    echo /lib32 > "$r/etc/ld.so.conf.d/biarch.conf"
    ldconfig -r "$r" -c new && cp "$r/etc/ld.so.cache" "$corpus/ldcache/debian12-biarch"
fi

# The cpu area's fixtures (captured on real machines or derived: see tests/cpu/make_dumps.py).
cpu=$here/../cpu
for d in epyc-milan-kvm epyc-milan-kvm-all epyc-milan-kvm-libcpuid avx512 no-avx; do
    cp "$cpu/dumps/$d.dump" "$corpus/cpudump/$d"
done
# Real dumps in the other formats, one per layout (see tests/cpu/dumps/real/README.md).
for d in AuthenticAMD0000F4A_K8_Clawhammer_CPUID AuthenticAMD0010FF0_K8_Palermo_CPUID \
         AuthenticAMD0100F42_K10_Callisto_CPUID2 AuthenticAMD0500F20_K14_Bobcat_CPUID \
         AuthenticAMD0A60F12_K19_Raphael_01_CPUID GenuineIntel00206A6_SandyBridge_CPUID \
         GenuineIntel0050654_SkylakeXeon_CPUID16 GenuineIntel0090675_AlderLake_00_CPUID \
         GenuineIntel00606C1_ICX_01v_CPUID this-machine-epyc-milan-kvm.cpuid-r; do
    cp "$cpu/dumps/real/$d.txt" "$corpus/cpudump/$d"
done
for c in epyc-milan-kvm neoverse-n1; do
    cp "$cpu/cpuinfo/$c.txt" "$corpus/cpuinfo/$c"
done
# The fatbin reader's seeds: synthetic ELF files and the skeleton of a real cuDNN .nv_fatbin (payloads zeroed).
python3 "$here/make_fatbin_seeds.py"
echo "seeds regenerated under $corpus"
