# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parsers for what a GPU host says about itself: nvidia-smi text, NVML codes, lspci, /proc.

Why pure functions over text: the same facts come from NVML on GPU hosts and from ``nvidia-smi`` text
on hosts where NVML cannot be loaded (and on the GPU-less lab hosts, from the nvidia-smi stand-in).
Parsing is where real-world variety bites (tabs or spaces, an ANSI-underlined header, NIC columns,
a shell prompt pasted along, legends re-wrapped by a terminal), so it lives here, away from the
module, and is tested on real outputs copied from public issues
(``tests/unit/plugins/module_utils/data/gpu/README.md`` lists them).

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

# Path classes printed by ``nvidia-smi topo -m``, nearest first (docs/reference/nccl-over-pcie.md#path-classes).
# ``SOC`` is the pre-2017 spelling of ``SYS``; ``NV#`` is matched separately.
LINK_CLASSES = ("PIX", "PXB", "PHB", "NODE", "SYS")
_LEGACY_LINK = {"SOC": "SYS"}
_NV_RE = re.compile(r"^NV(\d+)$")

# Driver P2P verdicts printed by ``nvidia-smi topo -p2p r|w|n|a|p``.
P2P_STATUSES = ("OK", "CNS", "GNS", "TNS", "NS", "DR", "U")

# NVML enums (nvml.h) mapped to the letters nvidia-smi prints, so both sources give the same facts.
# nvmlGpuTopologyLevel_t: INTERNAL=0 (same board), SINGLE=10, MULTIPLE=20, HOSTBRIDGE=30, NODE=40, SYSTEM=50.
NVML_TOPOLOGY_LEVELS = {0: "PIX", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
# nvmlGpuP2PStatus_t: OK=0, CHIPSET_NOT_SUPPORED=1, GPU_NOT_SUPPORTED=2, IOH_TOPOLOGY_NOT_SUPPORTED=3,
# DISABLED_BY_REGKEY=4, NOT_SUPPORTED=5, UNKNOWN=6.
NVML_P2P_STATUS = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}

# The most NVLinks any single GPU has (H100/H200/B200: 18). A GPU whose NV# counts to its peers add up to
# more than this cannot be wired point to point: the links go through NVSwitch chips.
MAX_NVLINKS_PER_GPU = 18

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_GPU_LABEL_RE = re.compile(r"^GPU(\d+)$")
_AFFINITY_HEADERS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences: drivers 590+ underline the ``topo -m`` header even through a pipe."""
    return _ANSI_RE.sub("", text or "")


def pair_key(i: int, j: int) -> str:
    """Key of an unordered GPU pair, lower index first (``"0-1"``): one spelling for every fact and rule."""
    a, b = (i, j) if i <= j else (j, i)
    return "%d-%d" % (a, b)


def split_pair(key: str) -> tuple:
    """``"0-1"`` -> ``(0, 1)``."""
    left, right = key.split("-", 1)
    return int(left), int(right)


def normalize_link(token: str) -> Optional[str]:
    """Return the canonical link class for a matrix cell, ``"X"`` for the diagonal, or None if it is not one."""
    token = token.strip()
    if token == "X":
        return "X"
    token = _LEGACY_LINK.get(token, token)
    if token in LINK_CLASSES or _NV_RE.match(token):
        return token
    return None


def nvlink_count(link: Optional[str]) -> int:
    """Number of bonded NVLinks in an ``NV#`` class, 0 for PCIe classes or unknown."""
    match = _NV_RE.match(link or "")
    return int(match.group(1)) if match else 0


def is_nvlink(link: Optional[str]) -> bool:
    """True for ``NV#`` classes."""
    return nvlink_count(link) > 0


def _header_columns(tokens: List[str]) -> List[str]:
    """Device column labels of a matrix header (GPUs, then NICs), stopping at the affinity columns."""
    cols = []
    for tok in tokens:
        if tok in ("CPU", "NUMA", "Affinity") or (tok == "GPU" and cols):
            break
        cols.append(tok)
    return cols


def _iter_matrices(text: str):
    """Yield (header columns, header line, [row token lists]) for each matrix block found in the text.

    A header is a line whose first token is ``GPU0`` and whose second token is not a cell value; rows
    are the following lines whose first token is ``GPU<n>`` (NIC rows are kept too, labelled as printed).
    """
    lines = strip_ansi(text).replace("\r", "").split("\n")
    i = 0
    while i < len(lines):
        tokens = lines[i].split()
        if len(tokens) >= 1 and tokens[0] == "GPU0" and (len(tokens) == 1 or _GPU_LABEL_RE.match(tokens[1]) or tokens[1] in ("CPU", "NIC0")):
            header_line = lines[i]
            cols = _header_columns(tokens)
            rows = []
            j = i + 1
            while j < len(lines):
                row = lines[j].split()
                if not row:
                    break
                if _GPU_LABEL_RE.match(row[0]) or (row[0] in cols and row[0] not in ("CPU", "NUMA")):
                    rows.append(row)
                    j += 1
                    continue
                break
            yield cols, header_line, rows
            i = j
            continue
        i += 1


def _square_gpu_matrices(text: str, read: Callable[[str], Optional[str]],
                         accept: Callable[[Optional[str]], bool]) -> Iterator[Tuple[List[str], str, List[List[str]], Dict[int, List[Any]]]]:
    """Each matrix of ``text`` whose GPU rows and columns form a square with ``X`` on the diagonal.

    Yields (columns, header line, GPU rows, cells by GPU index) where each cell went through ``read`` and
    every off-diagonal cell passed ``accept``; matrices of another kind printed in the same text (``topo -m``
    beside ``topo -p2p``) fail that test and are skipped.
    """
    for cols, header_line, rows in _iter_matrices(text):
        n = len([c for c in cols if _GPU_LABEL_RE.match(c)])
        gpu_rows = [r for r in rows if _GPU_LABEL_RE.match(r[0])]
        if n == 0 or len(gpu_rows) < n:
            continue
        cells: Dict[int, List[Any]] = {}
        for row in gpu_rows[:n]:
            idx = int(_GPU_LABEL_RE.match(row[0]).group(1))
            values = [read(tok) for tok in row[1:1 + n]]
            if len(values) < n or idx >= n or values[idx] != "X" or \
                    not all(accept(v) for i, v in enumerate(values) if i != idx):
                break
            cells[idx] = values
        else:
            if sorted(cells) == list(range(n)):
                yield cols, header_line, gpu_rows, cells


def parse_topo_matrix(text: str) -> Dict[str, Any]:
    """Parse ``nvidia-smi topo -m`` output.

    Returns ``{"gpu_count": n, "links": {"0-1": "PHB", ...}, "affinity": {"0": {...}}, "nics": [...]}``:
    ``links`` holds GPU pairs i<j only (NIC columns are read past); ``affinity`` maps each GPU index to
    its ``cpu_affinity``, ``numa_affinity`` and ``gpu_numa_id`` strings where the columns exist;
    ``nics`` lists NIC names (``NIC Legend`` entries, or the column labels of older drivers).
    Tolerates tabs or runs of spaces, an ANSI-underlined header, leading prompt or report lines,
    indentation, the ``topo -p2p`` matrix printed in the same text (skipped: its cells are not link
    classes), and legends in any wrapping. A text without a matrix gives ``gpu_count`` 0.
    """
    result: Dict[str, Any] = {"gpu_count": 0, "links": {}, "affinity": {}, "nics": []}
    clean = strip_ansi(text)
    for cols, header_line, gpu_rows, cells in _square_gpu_matrices(clean, normalize_link, lambda v: v is not None):
        n = len(cells)
        for i in range(n):
            for j in range(i + 1, n):
                result["links"][pair_key(i, j)] = cells[i][j]
        result["gpu_count"] = n
        present = [h for h in _AFFINITY_HEADERS if h in header_line]
        for row in gpu_rows[:n]:
            idx = int(_GPU_LABEL_RE.match(row[0]).group(1))
            tail = row[1 + len(cols):]
            # Read the affinity columns from the end: the only empty cell real outputs show is a doubled
            # tab, which whitespace splitting removes, and a garbled NIC header cannot shift them.
            tail = tail[-len(present):] if present and len(tail) >= len(present) else tail
            info = {}
            for name, value in zip(present, tail):
                info[name.lower().replace(" ", "_")] = value
            result["affinity"][str(idx)] = info
        nic_cols = [c for c in cols if not _GPU_LABEL_RE.match(c)]
        legend = re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", clean, re.M)
        names = dict(legend)
        result["nics"] = [names.get(c, c) for c in nic_cols]
        return result
    return result


def parse_p2p_matrix(text: str) -> Dict[str, str]:
    """Parse ``nvidia-smi topo -p2p r`` (or w/n/a/p): ``{"0-1": "OK", ...}`` for GPU pairs i<j.

    When the driver reports the two directions differently the worse one is kept (anything but ``OK``),
    since a P2P path that works one way only is not usable by NCCL or SGLang's custom all-reduce.
    """
    for _cols, _header, _rows, table in _square_gpu_matrices(strip_ansi(text), str, lambda v: v in P2P_STATUSES or v == "X"):
        n = len(table)
        out = {}
        for i in range(n):
            for j in range(i + 1, n):
                a, b = table[i][j], table[j][i]
                out[pair_key(i, j)] = a if b in (a, "OK") else b
        return out
    return {}


_NA_VALUES = ("", "N/A", "[N/A]", "[Not Supported]", "Not Supported", "[Unknown Error]", "[Requested functionality has been deprecated]")
_UNIT_RE = re.compile(r"^(-?[0-9.]+)\s*(MiB|W|%|MHz|C|KiB|GiB|x)$")


def _clean_cell(value: str) -> Optional[str]:
    value = value.strip()
    if value in _NA_VALUES or (value.startswith("[") and value.endswith("]")):
        return None
    match = _UNIT_RE.match(value)
    return match.group(1) if match else value


def parse_query_gpu_csv(text: str, fields: List[str]) -> List[Dict[str, Optional[str]]]:
    """Parse ``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`` into one dict per GPU.

    Keys are the requested field names; values are strings with units removed (``"49140 MiB"`` ->
    ``"49140"``), or None for ``[N/A]``/``[Not Supported]`` cells. A header line is detected and skipped.
    Rows with the wrong number of cells are ignored rather than guessed at.
    """
    rows = []
    reader = csv.reader(io.StringIO(strip_ansi(text)), skipinitialspace=True)
    for cells in reader:
        if not cells or all(not c.strip() for c in cells):
            continue
        if len(cells) != len(fields):
            continue
        if [c.split(" [")[0].strip() for c in cells] == [f.strip() for f in fields]:
            continue  # header line
        rows.append({field: _clean_cell(cell) for field, cell in zip(fields, cells)})
    return rows


def _mib(value: str) -> Optional[int]:
    match = re.match(r"^\s*(\d+)\s*MiB\s*$", value)
    return int(match.group(1)) if match else None


def parse_memory_query(text: str) -> Dict[str, Any]:
    """Parse ``nvidia-smi -q -d MEMORY`` (or full ``-q``): driver/CUDA version and FB/BAR1 sizes per GPU.

    Returns ``{"driver_version", "cuda_version", "gpus": [{"pci_bus_id", "fb_total_mib", "fb_reserved_mib",
    "fb_used_mib", "bar1_total_mib", "bar1_used_mib"}]}`` in output order (which is index order).
    Key/value layout differs by driver (42- or 55-column keys), so keys are matched after stripping.
    """
    out: Dict[str, Any] = {"driver_version": None, "cuda_version": None, "gpus": []}
    current: Optional[Dict[str, Any]] = None
    section = None
    for raw in strip_ansi(text).replace("\r", "").split("\n"):
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        gpu = re.match(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$", line)
        if gpu and indent == 0:
            current = {"pci_bus_id": gpu.group(1), "fb_total_mib": None, "fb_reserved_mib": None, "fb_used_mib": None,
                       "bar1_total_mib": None, "bar1_used_mib": None}
            out["gpus"].append(current)
            section = None
            continue
        if ":" not in line:
            if indent == 4:
                section = {"FB Memory Usage": "fb", "BAR1 Memory Usage": "bar1"}.get(line)
            continue
        key, value = [p.strip() for p in line.split(":", 1)]
        if current is None:
            if key == "Driver Version":
                out["driver_version"] = value
            elif key == "CUDA Version":
                out["cuda_version"] = None if value in ("Not Found", "N/A") else value
            continue
        if indent <= 4:
            section = None
            continue
        if section and indent == 8 and key in ("Total", "Reserved", "Used"):
            current["%s_%s_mib" % (section, key.lower())] = _mib(value)
    return out


def nvlink_full_mesh(links: Dict[str, str], gpu_count: int, gpus: Optional[List[int]] = None) -> bool:
    """True when every pair among ``gpus`` (default: all) is joined by NVLink (docs/reference/nccl-over-pcie.md#nvlink-uses-p2p)."""
    members = sorted(gpus) if gpus is not None else list(range(gpu_count))
    if len(members) < 2:
        return False
    return all(is_nvlink(links.get(pair_key(i, j))) for k, i in enumerate(members) for j in members[k + 1:])


def detect_nvswitch(links: Dict[str, str], gpu_count: int, hint: Optional[bool] = None,
                    nvswitch_devices: Optional[List[str]] = None) -> bool:
    """Decide whether the GPUs talk through NVSwitch chips (which then need nvidia-fabricmanager: docs/reference/nccl-over-pcie.md#nvswitch-and-fabric-manager).

    Signals, strongest first: an explicit hint (NVML reporting a switch at the far end of a link, or a
    profile), NVSwitch device nodes on the host (``/dev/nvidia-nvswitch*``, ``/proc/driver/nvidia-nvswitch``),
    and the NV# counts: if one GPU's links to its peers add up to more than ``MAX_NVLINKS_PER_GPU``,
    the matrix can only come from a switched fabric (8x H100 shows NV18 to all 7 peers).
    """
    if hint is not None:
        return bool(hint)
    if nvswitch_devices:
        return True
    for i in range(gpu_count):
        total = sum(nvlink_count(links.get(pair_key(i, j))) for j in range(gpu_count) if j != i)
        if total > MAX_NVLINKS_PER_GPU:
            return True
    return False


def parse_iommu(cmdline: Optional[str], iommu_entries: Optional[List[str]]) -> Dict[str, Any]:
    """Work out the IOMMU DMA mode from ``/proc/cmdline`` and the ``/sys/class/iommu`` listing.

    Why: with the IOMMU translating DMA (not ``iommu=pt``), peer-to-peer traffic is redirected through
    the root complex: slow, or a hang at the first all-reduce even when ``topo -p2p`` says OK
    (docs/reference/nccl-over-pcie.md#acs-and-iommu, NCCL troubleshooting docs, nccl #199).

    Returns ``{"mode": "passthrough"|"translated"|"off"|"unknown", "explicit": bool, "active": bool|None,
    "units": [...], "cmdline_args": [...]}``. ``explicit`` tells whether the kernel command line chose the
    mode; an active IOMMU without such an argument is reported as ``translated``, the kernel's default
    DMA domain type on mainstream distributions.
    """
    args = [a for a in (cmdline or "").split() if a.split("=")[0] in (
        "iommu", "intel_iommu", "amd_iommu", "iommu.passthrough", "iommu.strict")]
    values = {}
    for arg in args:
        key, _sep, val = arg.partition("=")
        values.setdefault(key, []).append(val)
    units = sorted(iommu_entries) if iommu_entries is not None else []
    active = None if iommu_entries is None else bool(units)
    mode = None
    explicit = False
    # Later arguments win, as in the kernel; check the ones that turn the IOMMU off first.
    iommu_vals = [v for val in values.get("iommu", []) for v in val.split(",")]
    if "off" in iommu_vals or "off" in values.get("intel_iommu", []) or "off" in values.get("amd_iommu", []):
        mode, explicit = "off", True
    if "pt" in iommu_vals or "1" in values.get("iommu.passthrough", []):
        mode, explicit = "passthrough", True
    elif "nopt" in iommu_vals or "0" in values.get("iommu.passthrough", []):
        mode, explicit = "translated", True
    if mode is None:
        if active:
            mode = "translated"
        elif active is False:
            mode = "off"
        else:
            mode = "unknown"
    elif mode == "off" and active:
        mode = "translated"  # the listing shows a working IOMMU whatever the command line claimed
        explicit = False
    return {"mode": mode, "explicit": explicit, "active": active, "units": units, "cmdline_args": args}


_LSPCI_DEV_RE = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.*)$")
_ACS_FLAG_RE = re.compile(r"(SrcValid|TransBlk|ReqRedir|CmpltRedir|UpstreamFwd|EgressCtrl|DirectTrans)([+-])")


def parse_acs(lspci_text: Optional[str]) -> Optional[Dict[str, Any]]:
    """Find PCIe bridges whose ACS redirects peer-to-peer requests (``ACSCtl: ... ReqRedir+``/``CmpltRedir+``).

    Why: ACS request/completion redirect on bridges sends GPU peer traffic up to the root complex and
    through the IOMMU: P2P slows down or hangs (NCCL troubleshooting docs, "PCI Access Control
    Services"; nccl #199, #2079). ACS is also what isolates VFIO groups, so this only reports.

    Accepts full ``lspci -vvv`` text or just its ``ACSCtl`` lines. Returns None when the text has no ACS
    information at all (lspci missing, or run without root so capabilities were hidden), else
    ``{"checked": n, "redirecting": [{"device": "0000:02:08.0"|None, "name": ..., "flags": {...}}],
    "enabled": bool}``.
    """
    if not lspci_text:
        return None
    device = None
    name = None
    checked = 0
    redirecting = []
    for raw in lspci_text.replace("\r", "").split("\n"):
        match = _LSPCI_DEV_RE.match(raw)
        if match:
            device, name = match.group(1), match.group(2)
            if len(device.split(":")) == 2:
                device = "0000:" + device
            continue
        line = raw.strip()
        if not line.startswith("ACSCtl:"):
            continue
        checked += 1
        flags = {k: v == "+" for k, v in _ACS_FLAG_RE.findall(line)}
        if flags.get("ReqRedir") or flags.get("CmpltRedir"):
            redirecting.append({"device": device, "name": name, "flags": flags})
        device, name = None, None
    if checked == 0:
        return None
    return {"checked": checked, "redirecting": redirecting, "enabled": bool(redirecting)}


def parse_cpu_vendor(cpuinfo: Optional[str]) -> str:
    """CPU vendor from ``/proc/cpuinfo``: ``intel``, ``amd``, ``arm`` or ``unknown``.

    Why it matters: since NCCL 2.23.4 P2P through the host bridge is on by default only on AMD hosts
    with at most two GPUs (docs/reference/nccl-over-pcie.md#default-p2p-level, from ``src/graph/paths.cc``).
    """
    for line in (cpuinfo or "").split("\n"):
        key, _sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "vendor_id":
            return {"GenuineIntel": "intel", "AuthenticAMD": "amd", "HygonGenuine": "amd"}.get(value, value.lower() or "unknown")
        if key == "CPU implementer":
            return "arm"
    return "unknown"


def cpu_mask_to_list(words: List[int], word_bits: int = 64) -> str:
    """Turn NVML's CPU affinity bitmask (array of unsigned longs, lowest CPUs first) into ``0-31,64-95``."""
    cpus = [w * word_bits + b for w, word in enumerate(words) for b in range(word_bits) if word >> b & 1]
    ranges = []
    for cpu in cpus:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in ranges)


def numa_node_from_affinity(value: Optional[str]) -> Optional[int]:
    """The single NUMA node a ``NUMA Affinity`` cell names, or None for ``N/A`` or a range such as ``0-1``."""
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() else None
