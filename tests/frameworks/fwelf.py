"""fwelf: small 64-bit ELF files with a .nv_fatbin section, for the fatbin reader's tests (and the fuzz seeds)."""
import platform
import struct

# this machine's e_machine, so the loader's search takes the files as loadable (x86-64 62, AArch64 183)
MACHINE = {"x86_64": 62, "aarch64": 183, "ppc64le": 21, "riscv64": 243}.get(platform.machine(), 62)

PTX, SASS = 1, 2


def fatbin(containers, payload=b"\0"):
    """The bytes of a .nv_fatbin section: CONTAINERS is a list of containers, each a list of (kind, arch,
    payload size); entry headers of 64 bytes (80 for PTX of sm_100 and up, as NVIDIA's tools write)."""
    out = b""
    for entries in containers:
        body = b""
        for kind, arch, size in entries:
            hs = 80 if kind == PTX and arch >= 100 else 64
            padded = (size + 7) & ~7
            # kind, 0x0101, header size, payload size (padded), payload size, 0, minor/major, arch
            head = struct.pack("<HHIQII", kind, 0x0101, hs, padded, size, 0) + struct.pack("<HHI", 7, 1, arch)
            head += b"\0" * (hs - len(head))
            body += head + (payload * padded)[:padded]
        out += struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
    return out


def elf(sections):
    """A little-endian ELFCLASS64 shared object of this machine with SECTIONS [(name, bytes)] and a .shstrtab."""
    names = b"\0"
    offs = []
    for name, _ in sections + [(".shstrtab", None)]:
        offs.append(len(names))
        names += name.encode() + b"\0"
    data = b""
    placed = []
    pos = 64
    for _, body in sections:
        placed.append((pos, len(body)))
        data += body
        pos += len(body)
    str_off = pos
    data += names
    pos += len(names)
    shoff = (pos + 7) & ~7
    data += b"\0" * (shoff - pos)
    shnum = len(sections) + 2
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    # e_type ET_DYN, e_machine x86-64, e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize,
    # e_phnum, e_shentsize, e_shnum, e_shstrndx
    hdr = ident + struct.pack("<HHIQQQIHHHHHH", 3, MACHINE, 1, 0, 0, shoff, 0, 64, 56, 0, 64, shnum, shnum - 1)
    sh = b"\0" * 64
    for i, (off, size) in enumerate(placed):
        sh += struct.pack("<IIQQQQIIQQ", offs[i], 1, 2, 0, off, size, 0, 0, 8, 0)
    sh += struct.pack("<IIQQQQIIQQ", offs[-1], 3, 0, 0, str_off, len(names), 0, 0, 1, 0)
    return hdr + data + sh


def real_fatbin(path):
    """The .nv_fatbin section of the ELF file at PATH, read the simple way (the whole section)."""
    with open(path, "rb") as f:
        eh = f.read(64)
        shoff, = struct.unpack_from("<Q", eh, 0x28)
        shnum, shstrndx = struct.unpack_from("<HH", eh, 0x3c)
        f.seek(shoff)
        sh = f.read(shnum * 64)
        sec = [struct.unpack_from("<IIQQQQIIQQ", sh, i * 64) for i in range(shnum)]
        f.seek(sec[shstrndx][4])
        names = f.read(sec[shstrndx][5])
        for s in sec:
            if names[s[0]:names.index(b"\0", s[0])] == b".nv_fatbin":
                f.seek(s[4])
                return f.read(s[5])
    return None


def archs(section):
    """({sm_XX}, {compute_XX}) of a .nv_fatbin section's bytes, walked in Python."""
    sass, ptx, pos = set(), set(), 0
    while pos + 16 <= len(section):
        magic, _, hs, size = struct.unpack_from("<IHHQ", section, pos)
        if magic != 0xBA55ED50:
            break
        e, end = pos + hs, pos + hs + size
        while e + 32 <= end:
            kind, _, ehs, psize = struct.unpack_from("<HHIQ", section, e)
            arch, = struct.unpack_from("<I", section, e + 28)
            (ptx if kind == PTX else sass).add(arch)
            e += ehs + psize
        pos = end
    return sass, ptx
