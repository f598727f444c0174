#!/usr/bin/env python3
"""make_fatbin_seeds.py: the fatbin fuzz seeds. cudnn-ext-skeleton: the first containers of the real .nv_fatbin of
libcudnn_ext.so.9 (nvidia-cudnn-cu12, tests/real/fetch-wheels' cache), their headers as NVIDIA wrote them and every
payload zeroed, in a small ELF file; the others made by tests/frameworks/fwelf.py."""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "frameworks"))
import fwelf  # noqa: E402

out = os.path.join(here, "corpus", "fatbin")
os.makedirs(out, exist_ok=True)


def write(name, data):
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)


write("sass-ptx", fwelf.elf([(".text", b"\x90" * 8), (".nv_fatbin", fwelf.fatbin(
    [[(fwelf.SASS, 80, 12), (fwelf.SASS, 90, 9), (fwelf.PTX, 90, 20)], [(fwelf.PTX, 120, 5)]]))]))
write("no-fatbin", fwelf.elf([(".text", b"\x90" * 8), (".nv_fatbin_x", b"\0" * 16)]))
lib = os.path.expanduser(sys.argv[1] if len(sys.argv) > 1 else "~/.cache/gpucheckup-tests/cudnn-wheel/venv/lib/"
                         "python3.11/site-packages/nvidia/cudnn/lib/libcudnn_ext.so.9")
section = fwelf.real_fatbin(lib)
if section:
    keep, pos, n = bytearray(), 0, 0
    while pos + 16 <= len(section) and n < 2:
        _, _, hs, size = struct.unpack_from("<IHHQ", section, pos)
        cont = bytearray(section[pos:pos + hs + size])
        e = hs
        while e + 32 <= len(cont):
            ehs, psize = struct.unpack_from("<IQ", cont, e + 4)
            cont[e + ehs:e + ehs + psize] = b"\0" * psize
            e += ehs + psize
        keep += cont
        pos += hs + size
        n += 1
    write("cudnn-ext-skeleton", fwelf.elf([(".nv_fatbin", bytes(keep))]))
else:
    print("no %s: cudnn-ext-skeleton kept as it is" % lib, file=sys.stderr)
