"""gcscope: properties every gpucheckup report must hold about its verdict's reasons and its causes (issue 36).

- Scope: no target of a compute API that drives one vendor's GPUs only (CUDA: NVIDIA, HIP: AMD, Level Zero:
  Intel) gives as a reason a finding below every API (bus, firmware, kernel) about another vendor's device,
  module, library or nodes. Platform-wide rows (--list-checks "scope": "platform") are reasons for all.
- A cause must be able to cause: a packaging fact (a row of "kind": "file", a library the loader cannot find)
  is caused only by another packaging fact, never by a node, a module or a GPU's state.

The vendor of a finding is judged here on its own, from the report (the PCI device or device node its subject
names, else the vendor words of its subject and message): not the doctor's code read back.
"""
import json
import re
import subprocess

# The one vendor whose GPUs the compute API of a verdict target can drive (CUDA's cuda12 and cuda13, HIP's
# rocm, Level Zero's levelzero); the targets of APIs of any vendor (gpu, opencl, vulkan) are not listed.
TARGET_VENDOR = ((r"cuda[0-9]+", "nvidia"), (r"rocm", "amd"), (r"levelzero", "intel"))
PCI_VENDOR = {0x10de: "nvidia", 0x1002: "amd", 0x1022: "amd", 0x8086: "intel"}
WORDS = (("nvidia", r"nvidia|nouveau|geforce"),
         ("amd", r"amdgpu|radeon|/dev/kfd|\bamd\b|advanced micro|\brocm\b"),
         ("intel", r"\bintel\b|i915"))
BELOW_APIS = ("hardware", "firmware", "kernel")

_catalogue = {}


def catalogue(binary):
    """The rows of --list-checks --json of BINARY, by ID (read once per binary)."""
    if binary not in _catalogue:
        out = subprocess.run([binary, "--list-checks", "--json"], capture_output=True, text=True, timeout=60,
                             check=True).stdout
        _catalogue[binary] = {c["id"]: c for c in json.loads(out)["checks"]}
    return _catalogue[binary]


def _pci_vendor(doc, addr):
    for d in (doc.get("pci") or {}).get("devices") or []:
        if d.get("address") == addr:
            try:
                return PCI_VENDOR.get(int(str(d.get("vendor_id")), 16))
            except ValueError:
                return None
    return None


def finding_vendor(doc, f):
    """The one vendor finding F of report DOC is about, or None (none, several, or unknown)."""
    subject = f.get("subject") or ""
    pci = doc.get("pci") or {}
    if any(d.get("address") == subject for d in pci.get("devices") or []):
        return _pci_vendor(doc, subject)
    for n in pci.get("nodes") or []:
        if n.get("path") == subject and n.get("device"):
            return _pci_vendor(doc, n["device"])
    for text in (subject, f.get("message") or ""):
        found = {v for v, rx in WORDS if re.search(rx, text, re.IGNORECASE)}
        if len(found) == 1:
            return found.pop()
        if found:
            return None
    return None


def scope_violations(doc, binary):
    """'target: reason (vendor)' for every reason of a one-vendor API's target about another vendor."""
    rows = catalogue(binary)
    verdict = doc.get("verdict") or {}
    bad = []
    for name, t in (verdict.get("targets") or {}).items():
        want = next((v for rx, v in TARGET_VENDOR if re.fullmatch(rx, name)), None)
        if not want:
            continue
        for rid in t.get("reasons") or []:
            row = rows.get(rid) or {}
            if row.get("scope") == "platform" or row.get("layer") not in BELOW_APIS:
                continue
            vendors = {finding_vendor(doc, f) for f in doc.get("findings") or [] if f["id"] == rid}
            if vendors and None not in vendors and want not in vendors:
                bad.append("%s: %s (%s)" % (name, rid, ", ".join(sorted(vendors))))
    return bad


# What the doctor appends to a finding it makes information because its stack has no device here
# (doctor_no_device_relief): its caused_by is that absence, which says why it cannot matter, not why it happened.
NO_DEVICE_NOTE = "(no device for it on this machine: it matters only once there is one)"


def cause_violations(doc, binary):
    """'ID caused by ID' for every packaging fact caused by something that is not one."""
    rows = catalogue(binary)
    bad = []
    for f in doc.get("findings") or []:
        cause = (f.get("caused_by") or {}).get("id")
        if (f.get("message") or "").endswith(NO_DEVICE_NOTE):
            continue
        if cause and (rows.get(f["id"]) or {}).get("kind") == "file" and (rows.get(cause) or {}).get("kind") != "file":
            bad.append("%s (%s) caused by %s" % (f["id"], f.get("subject"), cause))
    return bad


def check_report(doc, binary):
    """Raise AssertionError naming each violation of the properties above in report DOC."""
    if not isinstance(doc, dict) or "findings" not in doc:
        return  # an error document, the catalogue, a snapshot: no verdict to judge
    bad = scope_violations(doc, binary) + cause_violations(doc, binary)
    if bad:
        raise AssertionError("issue 36 properties: " + "; ".join(bad))
