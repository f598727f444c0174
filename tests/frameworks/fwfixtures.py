"""fwfixtures: the pinned NVIDIA wheels of a framework fixture, as dist-info folders beside it (the state pip leaves)."""
import os
import re

PIN = re.compile(r"^Requires-Dist:\s*((?:nvidia|cuda-toolkit|cuda-bindings)[A-Za-z0-9_.-]*)\s*(\[[^\]]*\])?\s*([^;]*)")


def pinned(metadata):
    """[(project, version)] of METADATA's NVIDIA pins that are no extra's: the version each pin allows (its
    `==` version, else its `>=` bound)."""
    out = []
    with open(metadata, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                break
            m = PIN.match(line)
            if not m or "extra ==" in line:
                continue
            spec = m.group(3)
            v = re.search(r"(?:==|>=|~=)\s*([0-9][0-9.]*)", spec)
            out.append((m.group(1), v.group(1) if v else "1.0"))
    return out


def install_pins(site, metadata, skip=(), versions=None):
    """Make SITE/NAME-VERSION.dist-info/METADATA for each pin of METADATA, but those in SKIP; VERSIONS maps a
    project to another version than its pin's. Returns the pins made [(project, version)]."""
    made = []
    for name, version in pinned(metadata):
        if name in skip:
            continue
        version = (versions or {}).get(name, version)
        d = os.path.join(site, "%s-%s.dist-info" % (re.sub(r"[-.]+", "_", name), version))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as fh:
            fh.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
        made.append((name, version))
    return made
