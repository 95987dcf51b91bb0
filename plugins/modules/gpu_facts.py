#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts: what the NVIDIA GPUs of a host are and how they are wired, for the NCCL policy."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Gather NVIDIA GPU, PCIe/NVLink topology, P2P, BAR1, IOMMU and ACS facts
version_added: 0.1.0
description:
  - Reads the GPUs of the host through NVML (C(libnvidia-ml.so.1) loaded with ctypes, no Python package
    needed) and, when NVML cannot be loaded, parses the text of C(nvidia-smi).
  - Reports each GPU (name, UUID, memory, PCI bus id, PCIe generation and width, NUMA node, CPU affinity,
    BAR1 size), the link class of every GPU pair as C(nvidia-smi topo -m) prints it (C(NV#), C(PIX), C(PXB),
    C(PHB), C(NODE), C(SYS)), the driver's P2P read verdict per pair, NVLink full mesh and NVSwitch presence.
  - Adds the host facts that decide whether PCIe peer-to-peer traffic can work, the IOMMU DMA mode
    (C(/proc/cmdline), C(/sys/class/iommu)), PCIe bridges with ACS redirect (C(lspci -vvv)) and the CPU vendor.
  - A host without a GPU or without a loaded driver is not an error, it returns RV(gpu_count=0).
  - Read-only. The result is also set as the fact C(gpu_facts).
  - The facts feed P(gpufleet.sglang.gpu_tuning#role), whose NCCL policy follows the named rules of the
    collection's NCCL over PCIe reference (C(docs/reference/nccl-over-pcie.md)).
author:
  - gpufleet maintainers (@gpufleet)
options:
  backend:
    description:
      - Where to read GPU facts from.
      - V(auto) uses NVML when C(libnvidia-ml.so.1) loads and initialises, else C(nvidia-smi).
      - V(nvml) uses NVML only; V(nvidia-smi) parses C(nvidia-smi) only (what GPU-less lab hosts with the
        C(nvidia-smi) stand-in exercise).
    type: str
    choices: [auto, nvml, nvidia-smi]
    default: auto
  nvidia_smi_path:
    description:
      - Path of C(nvidia-smi). Default is to look it up in E(PATH), C(/usr/bin) and C(/usr/local/bin).
    type: path
  check_acs:
    description:
      - Run C(lspci -vvv) (when installed) to find PCIe bridges whose ACS redirects peer traffic.
      - Without root C(lspci) hides the ACS capability and RV(acs) comes back empty.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
    details: The module only reads; check mode runs the same commands.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
notes:
  - NVML is read with ctypes, so no C(nvidia-ml-py) install is needed on the target.
  - The link class tells the type of a path, not its quality; only a measured all-reduce does.
seealso:
  - name: nvidia-smi documentation
    description: The output formats this module parses.
    link: https://docs.nvidia.com/deploy/nvidia-smi/index.html
  - name: NCCL troubleshooting, PCI Access Control Services
    description: Why ACS and IOMMU translation matter for peer-to-peer traffic.
    link: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
"""

EXAMPLES = r"""
- name: Gather GPU facts
  gpufleet.sglang.gpu_facts:

- name: Show how the GPUs are wired
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpu_facts.gpu_count }} GPUs, links {{ ansible_facts.gpu_facts.links }}"

- name: Parse nvidia-smi even where NVML loads (what the lab stand-in exercises)
  gpufleet.sglang.gpu_facts:
    backend: nvidia-smi
  register: gpu

- name: Refuse a tensor-parallel deployment without two GPUs
  ansible.builtin.assert:
    that: gpu.gpu_count >= 2
    fail_msg: "TP=2 needs two GPUs, this host has {{ gpu.gpu_count }}"
"""

RETURN = r"""
gpu_count:
  description: Number of NVIDIA GPUs visible to the driver; 0 without GPU or driver.
  returned: always
  type: int
  sample: 2
gpus:
  description: One entry per GPU, in the driver's index order. Values the source cannot tell are null.
  returned: always
  type: list
  elements: dict
  contains:
    index:
      description: Driver index.
      type: int
    name:
      description: Product name.
      type: str
      sample: NVIDIA RTX A6000
    uuid:
      description: GPU UUID.
      type: str
    memory_total_mib:
      description: Frame buffer size in MiB.
      type: int
      sample: 49140
    pci_bus_id:
      description: PCI bus id as nvidia-smi prints it.
      type: str
      sample: "00000000:01:00.0"
    pcie_gen_current:
      description: Current PCIe generation (idle GPUs often drop to 1).
      type: int
    pcie_gen_max:
      description: Maximum PCIe generation of the GPU.
      type: int
    pcie_width_current:
      description: Current PCIe link width in lanes.
      type: int
    pcie_width_max:
      description: Maximum PCIe link width in lanes.
      type: int
    numa_node:
      description: NUMA node of the GPU; null when the platform does not tell one node.
      type: int
    cpu_affinity:
      description: CPUs close to the GPU, as ranges.
      type: str
      sample: "0-31"
    bar1_total_mib:
      description: BAR1 aperture size in MiB; a BAR1 much smaller than the frame buffer breaks P2P.
      type: int
      sample: 65536
    compute_cap:
      description: CUDA compute capability.
      type: str
      sample: "8.6"
    persistence_mode:
      description: C(Enabled) or C(Disabled).
      type: str
    power_limit_w:
      description: Enforced power limit in watts.
      type: float
  sample:
    - index: 0
      name: NVIDIA RTX A6000
      uuid: GPU-3b8a5c1e-7d2f-4e11-9a60-0c2f8d4b6a01
      memory_total_mib: 49140
      pci_bus_id: "00000000:01:00.0"
      pcie_gen_current: 4
      pcie_gen_max: 4
      pcie_width_current: 16
      pcie_width_max: 16
      numa_node: 0
      cpu_affinity: "0-31"
      bar1_total_mib: 65536
      compute_cap: "8.6"
      persistence_mode: Disabled
      power_limit_w: 300.0
links:
  description: Link class per GPU pair (lower index first), as C(nvidia-smi topo -m) prints it.
  returned: always
  type: dict
  sample: {"0-1": PHB}
p2p_read:
  description: The driver's P2P read status per GPU pair (C(OK), C(NS), C(CNS), C(GNS), C(TNS), C(DR), C(U)).
  returned: always
  type: dict
  sample: {"0-1": OK}
driver_version:
  description: NVIDIA driver version, null without driver.
  returned: always
  type: str
  sample: "580.105.08"
cuda_version:
  description: Highest CUDA version the driver supports.
  returned: always
  type: str
  sample: "13.0"
nvlink_full_mesh:
  description: Every GPU pair is joined by NVLink.
  returned: always
  type: bool
nvswitch:
  description: The GPUs talk through NVSwitch chips (nvidia-fabricmanager needed).
  returned: always
  type: bool
iommu:
  description: IOMMU DMA mode, from C(/proc/cmdline) and C(/sys/class/iommu).
  returned: always
  type: dict
  contains:
    mode:
      description: C(passthrough), C(translated) (peer traffic goes through the IOMMU), C(off) or C(unknown).
      type: str
      sample: passthrough
    explicit:
      description: Whether the kernel command line chose RV(iommu.mode); an active IOMMU without such an argument is reported as C(translated).
      type: bool
    active:
      description: Whether C(/sys/class/iommu) lists IOMMU units; null when it cannot be read.
      type: bool
    units:
      description: Names listed in C(/sys/class/iommu).
      type: list
      elements: str
      sample: [dmar0, dmar1]
    cmdline_args:
      description: IOMMU-related kernel command line arguments.
      type: list
      elements: str
      sample: [intel_iommu=on, iommu=pt]
acs:
  description:
    - PCIe bridges whose ACS control redirects peer requests or completions.
    - Null when C(lspci) is missing, not run, or could not read the ACS capability (not root).
  returned: always
  type: dict
  contains:
    checked:
      description: Number of C(ACSCtl) lines read.
      type: int
      sample: 12
    enabled:
      description: Whether any bridge redirects peer traffic.
      type: bool
    redirecting:
      description: The bridges that redirect; an entry's C(device) is null when lspci printed no header for it.
      type: list
      elements: dict
      sample: [{device: "0000:00:01.1", name: "PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge", flags: {ReqRedir: true}}]
cpu_vendor:
  description: C(intel), C(amd), C(arm) or C(unknown), from C(/proc/cpuinfo).
  returned: always
  type: str
  sample: amd
source:
  description: Where the GPU facts came from.
  returned: always
  type: str
  choices: [nvml, nvidia-smi, none]
notes:
  description: What could not be read and why (a failing command, a missing tool).
  returned: always
  type: list
  elements: str
"""

import ctypes
import glob
import os
from typing import Any, Callable, Dict, List, Optional

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import (
    NVML_P2P_STATUS,
    NVML_TOPOLOGY_LEVELS,
    cpu_mask_to_list,
    detect_nvswitch,
    numa_node_from_affinity,
    nvlink_full_mesh,
    pair_key,
    parse_acs,
    parse_cpu_vendor,
    parse_iommu,
    parse_memory_query,
    parse_p2p_matrix,
    parse_query_gpu_csv,
    parse_topo_matrix,
)

# Fields asked of nvidia-smi; compute_cap needs driver >= 510, so it is retried without the optional ones.
BASE_FIELDS = ["index", "name", "uuid", "memory.total", "pci.bus_id", "pcie.link.gen.current", "pcie.link.gen.max",
               "pcie.link.width.current", "pcie.link.width.max", "driver_version", "persistence_mode", "power.limit"]
OPTIONAL_FIELDS = ["compute_cap"]

NVML_SUCCESS = 0
NVML_NVLINK_MAX_LINKS = 18
NVML_NVLINK_DEVICE_TYPE_SWITCH = 2
NVML_P2P_CAPS_INDEX_READ = 0


class _NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class _NvmlBar1Memory(ctypes.Structure):
    _fields_ = [("bar1Total", ctypes.c_ulonglong), ("bar1Free", ctypes.c_ulonglong), ("bar1Used", ctypes.c_ulonglong)]


class _NvmlPciInfo(ctypes.Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]


def load_nvml() -> Optional[Any]:
    """Load libnvidia-ml.so.1, or None: a host without the driver is a normal case, not an error."""
    try:
        return ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None


def _int(value: Any) -> Optional[int]:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> Optional[float]:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _mib(value_bytes: int) -> int:
    return int(value_bytes // (1024 * 1024))


class GpuFacts:
    """Collects the facts; ``result`` is what the module returns. Host paths are attributes so tests can point them elsewhere."""

    proc_cmdline = "/proc/cmdline"
    proc_cpuinfo = "/proc/cpuinfo"
    sys_iommu = "/sys/class/iommu"
    sys_pci_devices = "/sys/bus/pci/devices"
    nvswitch_globs = ("/dev/nvidia-nvswitch[0-9]*", "/proc/driver/nvidia-nvswitch/devices/*")

    def __init__(self, module: AnsibleModule, nvml_loader: Callable[[], Optional[Any]] = load_nvml) -> None:
        self.module = module
        self.nvml_loader = nvml_loader
        self.notes: List[str] = []
        self.facts: Dict[str, Any] = self.empty()

    @staticmethod
    def empty() -> Dict[str, Any]:
        """The facts of a host without GPU: every key present, so templates never meet an undefined one."""
        return {"gpu_count": 0, "gpus": [], "links": {}, "p2p_read": {}, "driver_version": None, "cuda_version": None,
                "nvlink_full_mesh": False, "nvswitch": False, "iommu": {}, "acs": None, "cpu_vendor": "unknown",
                "source": "none", "notes": []}

    # -- host files -------------------------------------------------------------------------------------
    def _read(self, path: str) -> Optional[str]:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return None

    def _listdir(self, path: str) -> Optional[List[str]]:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return None

    # -- NVML --------------------------------------------------------------------------------------------
    def from_nvml(self) -> Optional[Dict[str, Any]]:
        """GPU facts from NVML, or None when the library is missing or will not initialise."""
        lib = self.nvml_loader()
        if lib is None:
            self.notes.append("libnvidia-ml.so.1 not loadable: NVML not used")
            return None
        init = getattr(lib, "nvmlInit_v2", None) or getattr(lib, "nvmlInit", None)
        if init is None:
            return None
        rc = init()
        if rc != NVML_SUCCESS:
            self.notes.append("nvmlInit failed with NVML error %s" % rc)
            return None
        try:
            return self._nvml_collect(lib)
        finally:
            lib.nvmlShutdown()

    @staticmethod
    def _call(lib: Any, name: str, *args: Any) -> Optional[int]:
        func = getattr(lib, name, None)
        if func is None:
            return None
        return func(*args)

    def _nvml_collect(self, lib: Any) -> Dict[str, Any]:
        """Driver, CUDA version, per-GPU facts and per-pair link class and P2P verdict, between init and shutdown."""
        call = self._call
        facts: Dict[str, Any] = {}
        buf = ctypes.create_string_buffer(96)
        facts["driver_version"] = buf.value.decode() if call(lib, "nvmlSystemGetDriverVersion", buf, 96) == NVML_SUCCESS else None
        cuda = ctypes.c_int()
        if call(lib, "nvmlSystemGetCudaDriverVersion_v2", ctypes.byref(cuda)) == NVML_SUCCESS or \
                call(lib, "nvmlSystemGetCudaDriverVersion", ctypes.byref(cuda)) == NVML_SUCCESS:
            facts["cuda_version"] = "%d.%d" % (cuda.value // 1000, (cuda.value % 1000) // 10)
        else:
            facts["cuda_version"] = None
        count = ctypes.c_uint()
        if call(lib, "nvmlDeviceGetCount_v2", ctypes.byref(count)) != NVML_SUCCESS:
            self.notes.append("nvmlDeviceGetCount failed")
            count.value = 0
        handles = []
        gpus = []
        for idx in range(count.value):
            handle = ctypes.c_void_p()
            if call(lib, "nvmlDeviceGetHandleByIndex_v2", idx, ctypes.byref(handle)) != NVML_SUCCESS:
                self.notes.append("nvmlDeviceGetHandleByIndex(%d) failed" % idx)
                continue
            handles.append((idx, handle))
            gpus.append(self._nvml_gpu(lib, idx, handle))
        facts["gpus"] = gpus
        bus_to_idx = {g["pci_bus_id"].lower(): g["index"] for g in gpus if g["pci_bus_id"]}
        direct, switch_links = self._nvml_nvlinks(lib, handles, bus_to_idx)
        links, p2p = {}, {}
        for a, (i, hi) in enumerate(handles):
            for j, hj in handles[a + 1:]:
                key = pair_key(i, j)
                if direct.get(key):
                    links[key] = "NV%d" % direct[key]
                elif switch_links.get(i) and switch_links.get(j):
                    links[key] = "NV%d" % min(switch_links[i], switch_links[j])
                else:
                    level = ctypes.c_int()
                    if call(lib, "nvmlDeviceGetTopologyCommonAncestor", hi, hj, ctypes.byref(level)) == NVML_SUCCESS:
                        links[key] = NVML_TOPOLOGY_LEVELS.get(level.value, "SYS")
                status = ctypes.c_int()
                if call(lib, "nvmlDeviceGetP2PStatus", hi, hj, NVML_P2P_CAPS_INDEX_READ, ctypes.byref(status)) == NVML_SUCCESS:
                    p2p[key] = NVML_P2P_STATUS.get(status.value, "U")
        facts["links"] = links
        facts["p2p_read"] = p2p
        facts["nvswitch_hint"] = True if switch_links else None
        return facts

    def _nvml_gpu(self, lib: Any, idx: int, handle: Any) -> Dict[str, Any]:
        call = self._call
        gpu: Dict[str, Any] = {"index": idx}
        buf = ctypes.create_string_buffer(96)
        gpu["name"] = buf.value.decode() if call(lib, "nvmlDeviceGetName", handle, buf, 96) == NVML_SUCCESS else None
        buf = ctypes.create_string_buffer(96)
        gpu["uuid"] = buf.value.decode() if call(lib, "nvmlDeviceGetUUID", handle, buf, 96) == NVML_SUCCESS else None
        mem = _NvmlMemory()
        gpu["memory_total_mib"] = _mib(mem.total) if call(lib, "nvmlDeviceGetMemoryInfo", handle, ctypes.byref(mem)) == NVML_SUCCESS else None
        pci = _NvmlPciInfo()
        if call(lib, "nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(pci)) == NVML_SUCCESS:
            gpu["pci_bus_id"] = pci.busId.decode()
        else:
            gpu["pci_bus_id"] = None
        for key, func in (("pcie_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"), ("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
                          ("pcie_width_current", "nvmlDeviceGetCurrPcieLinkWidth"), ("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth")):
            value = ctypes.c_uint()
            gpu[key] = value.value if call(lib, func, handle, ctypes.byref(value)) == NVML_SUCCESS else None
        numa = ctypes.c_uint()
        if call(lib, "nvmlDeviceGetNumaNodeId", handle, ctypes.byref(numa)) == NVML_SUCCESS:
            gpu["numa_node"] = numa.value
        else:
            gpu["numa_node"] = self._sysfs_numa(gpu["pci_bus_id"])
        # Room for CPU ids up to 1023 at least: ids can exceed the online count (offline or isolated CPUs).
        words = max(16, ((os.cpu_count() or 0) + 63) // 64)
        mask = (ctypes.c_ulong * words)()
        if call(lib, "nvmlDeviceGetCpuAffinity", handle, words, mask) == NVML_SUCCESS:
            bits = ctypes.sizeof(ctypes.c_ulong) * 8
            gpu["cpu_affinity"] = cpu_mask_to_list(list(mask), bits) or None
        else:
            gpu["cpu_affinity"] = None
        bar1 = _NvmlBar1Memory()
        gpu["bar1_total_mib"] = _mib(bar1.bar1Total) if call(lib, "nvmlDeviceGetBAR1MemoryInfo", handle, ctypes.byref(bar1)) == NVML_SUCCESS else None
        major, minor = ctypes.c_int(), ctypes.c_int()
        if call(lib, "nvmlDeviceGetCudaComputeCapability", handle, ctypes.byref(major), ctypes.byref(minor)) == NVML_SUCCESS:
            gpu["compute_cap"] = "%d.%d" % (major.value, minor.value)
        else:
            gpu["compute_cap"] = None
        mode = ctypes.c_int()
        if call(lib, "nvmlDeviceGetPersistenceMode", handle, ctypes.byref(mode)) == NVML_SUCCESS:
            gpu["persistence_mode"] = "Enabled" if mode.value == 1 else "Disabled"
        else:
            gpu["persistence_mode"] = None
        limit = ctypes.c_uint()
        if call(lib, "nvmlDeviceGetEnforcedPowerLimit", handle, ctypes.byref(limit)) == NVML_SUCCESS:
            gpu["power_limit_w"] = round(limit.value / 1000.0, 2)
        else:
            gpu["power_limit_w"] = None
        return gpu

    def _nvml_nvlinks(self, lib: Any, handles: List[Any], bus_to_idx: Dict[str, int]):
        """Count active NVLinks per GPU pair and per GPU towards NVSwitch chips."""
        call = self._call
        direct: Dict[str, int] = {}
        switch_links: Dict[int, int] = {}
        for idx, handle in handles:
            for link in range(NVML_NVLINK_MAX_LINKS):
                active = ctypes.c_uint()
                if call(lib, "nvmlDeviceGetNvLinkState", handle, link, ctypes.byref(active)) != NVML_SUCCESS or not active.value:
                    continue
                kind = ctypes.c_int()
                if call(lib, "nvmlDeviceGetNvLinkRemoteDeviceType", handle, link, ctypes.byref(kind)) == NVML_SUCCESS \
                        and kind.value == NVML_NVLINK_DEVICE_TYPE_SWITCH:
                    switch_links[idx] = switch_links.get(idx, 0) + 1
                    continue
                pci = _NvmlPciInfo()
                if call(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", handle, link, ctypes.byref(pci)) == NVML_SUCCESS:
                    peer = bus_to_idx.get(pci.busId.decode().lower())
                    if peer is not None and peer != idx:
                        key = pair_key(idx, peer)
                        direct[key] = direct.get(key, 0) + 1
        # Each direct link was seen from both ends.
        return {k: max(1, v // 2) for k, v in direct.items()}, switch_links

    def _sysfs_numa(self, bus_id: Optional[str]) -> Optional[int]:
        if not bus_id:
            return None
        domain, rest = bus_id.lower().split(":", 1)
        text = self._read(os.path.join(self.sys_pci_devices, "%s:%s" % (domain[-4:], rest), "numa_node"))
        value = _int(text.strip()) if text else None
        return value if value is not None and value >= 0 else None

    # -- nvidia-smi ------------------------------------------------------------------------------------
    def _smi(self, smi: str, args: List[str]):
        return self.module.run_command([smi] + args, environ_update={"LC_ALL": "C"})

    def from_nvidia_smi(self, smi: str) -> Optional[Dict[str, Any]]:
        """GPU facts parsed from nvidia-smi text; ``{"gpus": []}`` when it says there is no GPU or driver."""
        fields = BASE_FIELDS + OPTIONAL_FIELDS
        rc, out, err = self._smi(smi, ["--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
        if rc != 0 and "is not a valid field" in out + err:
            fields = BASE_FIELDS
            rc, out, err = self._smi(smi, ["--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
        text = (out + err).strip()
        if rc != 0:
            if rc == 9 or "couldn't communicate with the NVIDIA driver" in text:
                self.notes.append("nvidia-smi: no NVIDIA driver loaded (rc %d)" % rc)
            elif "No devices were found" in text:
                self.notes.append("nvidia-smi: no devices were found")
            else:
                self.notes.append("nvidia-smi --query-gpu failed (rc %d): %s" % (rc, text.splitlines()[0] if text else ""))
            return {"gpus": [], "driver_version": None, "cuda_version": None, "links": {}, "p2p_read": {}}
        rows = parse_query_gpu_csv(out, fields)
        topo = self._smi_parse(smi, ["topo", "-m"], parse_topo_matrix) or {}
        p2p = self._smi_parse(smi, ["topo", "-p2p", "r"], parse_p2p_matrix) or {}
        memory = self._smi_parse(smi, ["-q", "-d", "MEMORY"], parse_memory_query) or {}
        bar1 = {m["pci_bus_id"].lower(): m["bar1_total_mib"] for m in memory.get("gpus", [])}
        affinity = topo.get("affinity", {})
        gpus = []
        for row in rows:
            idx = _int(row.get("index"))
            aff = affinity.get(str(idx), {})
            bus = row.get("pci.bus_id")
            gpus.append({
                "index": idx, "name": row.get("name"), "uuid": row.get("uuid"),
                "memory_total_mib": _int(row.get("memory.total")), "pci_bus_id": bus,
                "pcie_gen_current": _int(row.get("pcie.link.gen.current")), "pcie_gen_max": _int(row.get("pcie.link.gen.max")),
                "pcie_width_current": _int(row.get("pcie.link.width.current")), "pcie_width_max": _int(row.get("pcie.link.width.max")),
                "numa_node": numa_node_from_affinity(aff.get("numa_affinity")),
                "cpu_affinity": aff.get("cpu_affinity") if aff.get("cpu_affinity") not in (None, "N/A") else None,
                "bar1_total_mib": bar1.get((bus or "").lower()),
                "compute_cap": row.get("compute_cap"), "persistence_mode": row.get("persistence_mode"),
                "power_limit_w": _float(row.get("power.limit")),
            })
        if topo and topo.get("gpu_count") not in (0, len(gpus)):
            self.notes.append("topo -m shows %s GPUs, --query-gpu %d" % (topo.get("gpu_count"), len(gpus)))
        driver = rows[0].get("driver_version") if rows else None
        return {"gpus": gpus, "driver_version": driver or memory.get("driver_version"), "cuda_version": memory.get("cuda_version"),
                "links": topo.get("links", {}), "p2p_read": p2p, "nvswitch_hint": None}

    def _smi_parse(self, smi: str, args: List[str], parser: Callable[[str], Any]) -> Any:
        rc, out, err = self._smi(smi, args)
        if rc != 0:
            first = ((out + err).strip().splitlines() or [""])[0]
            self.notes.append("nvidia-smi %s failed (rc %d): %s" % (" ".join(args), rc, first))
            return None
        return parser(out)

    # -- host ----------------------------------------------------------------------------------------------
    def host_facts(self) -> Dict[str, Any]:
        """IOMMU mode, ACS redirect and CPU vendor: what decides whether PCIe P2P can work on this host."""
        iommu_entries = self._listdir(self.sys_iommu)
        if iommu_entries is None and os.path.isdir(os.path.dirname(self.sys_iommu)):
            iommu_entries = []
        host: Dict[str, Any] = {
            "iommu": parse_iommu(self._read(self.proc_cmdline), iommu_entries),
            "cpu_vendor": parse_cpu_vendor(self._read(self.proc_cpuinfo)),
            "acs": None,
        }
        if self.module.params["check_acs"]:
            lspci = self.module.get_bin_path("lspci", opt_dirs=["/usr/bin", "/usr/sbin", "/sbin"])
            if lspci is None:
                self.notes.append("lspci not installed: ACS not checked")
            else:
                rc, out, _err = self.module.run_command([lspci, "-vvv"], environ_update={"LC_ALL": "C"})
                host["acs"] = parse_acs(out) if rc == 0 else None
                if rc != 0:
                    self.notes.append("lspci -vvv failed (rc %d): ACS not checked" % rc)
                elif host["acs"] is None:
                    self.notes.append("lspci showed no ACS control (no such bridges, or not run as root)")
        return host

    def nvswitch_devices(self) -> List[str]:
        """NVSwitch device nodes the driver created: present only on switched (HGX/DGX) boards."""
        found: List[str] = []
        for pattern in self.nvswitch_globs:
            found.extend(glob.glob(pattern))
        return sorted(found)

    # -- all together -------------------------------------------------------------------------------------
    def collect(self) -> Dict[str, Any]:
        """Gather everything: NVML or nvidia-smi per ``backend``, then the host facts."""
        backend = self.module.params["backend"]
        gpu = None
        source = "none"
        if backend in ("auto", "nvml"):
            gpu = self.from_nvml()
            if gpu is not None:
                source = "nvml"
        if gpu is None and backend in ("auto", "nvidia-smi"):
            smi = self.module.params["nvidia_smi_path"] or self.module.get_bin_path("nvidia-smi", opt_dirs=["/usr/bin", "/usr/local/bin"])
            if smi is None:
                self.notes.append("nvidia-smi not found: no NVIDIA driver installed")
            else:
                gpu = self.from_nvidia_smi(smi)
                if gpu is not None and gpu["gpus"]:
                    source = "nvidia-smi"
        facts = self.empty()
        if gpu:
            gpus = gpu.get("gpus", [])
            count = len(gpus)
            facts.update({"gpu_count": count, "gpus": gpus, "links": gpu.get("links", {}), "p2p_read": gpu.get("p2p_read", {}),
                          "driver_version": gpu.get("driver_version"), "cuda_version": gpu.get("cuda_version")})
            facts["nvlink_full_mesh"] = nvlink_full_mesh(facts["links"], count)
            facts["nvswitch"] = count > 1 and detect_nvswitch(facts["links"], count, gpu.get("nvswitch_hint"), self.nvswitch_devices())
        facts["source"] = source if facts["gpu_count"] else "none"
        facts.update(self.host_facts())
        facts["notes"] = self.notes
        self.facts = facts
        return facts

    @property
    def result(self) -> Dict[str, Any]:
        """Module result: the facts at top level and under ``ansible_facts.gpu_facts``; never changed."""
        result = dict(self.facts)
        result["changed"] = False
        result["ansible_facts"] = {"gpu_facts": dict(self.facts)}
        return result


def build_module() -> AnsibleModule:
    """Module construction kept separate so unit tests can build it with their own arguments."""
    return AnsibleModule(
        argument_spec=dict(
            backend=dict(type="str", default="auto", choices=["auto", "nvml", "nvidia-smi"]),
            nvidia_smi_path=dict(type="path"),
            check_acs=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )


def main() -> None:
    """Entry point: gather and exit; the module never fails for a missing GPU or driver."""
    module = build_module()
    gpu_facts = GpuFacts(module)
    gpu_facts.collect()
    module.exit_json(**gpu_facts.result)


if __name__ == "__main__":
    main()
