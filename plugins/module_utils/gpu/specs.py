# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU memory bandwidths and interconnect figures that the decode ceiling is computed from.

Why a table in code rather than a query: nothing a driver reports gives the peak memory bandwidth (nvidia-smi
and NVML give clocks and bus width for some boards only, and not at all on the GPU-less hosts that plan a
deploy), and the figure that matters for a ceiling is the one NVIDIA publishes. Each row names its source: the
NVIDIA product page or datasheet that prints the figure. Where a page prints only the memory data rate and bus
width, the figure is their product (noted ``derived``). Check a row against its source before changing it.

The interconnect figures are orders of magnitude from published measurements (each cited): a ceiling needs
to know whether all-reduce costs 5 or 50 microseconds, not the third digit.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple


class GpuSpec(NamedTuple):
    """One GPU model: peak memory bandwidth in GB/s (10^9 bytes/s), memory size, P2P on stock drivers, source."""

    key: str
    name: str
    pattern: str          # regular expression over the normalised name (see normalise_gpu_name)
    bandwidth_gbs: float
    memory_gb: float
    segment: str          # data-centre, workstation or consumer
    p2p: bool             # PCIe peer-to-peer on stock drivers (GeForce: no; docs/reference/nccl-over-pcie.md#which-gpus-grant-p2p)
    source: str


_DC = "https://www.nvidia.com/en-us/data-center/"
_WS = "https://www.nvidia.com/en-us/design-visualization/"
_GF = "https://www.nvidia.com/en-us/geforce/graphics-cards/"
_PRO = "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/"

# Most specific first: the first pattern that matches wins ("h100 nvl" before "h100", "rtx pro 6000" and
# "rtx 6000 ada" before "rtx a6000"). Patterns run on normalise_gpu_name() output: lower case, the words
# "nvidia", "geforce", "tesla" and "quadro" dropped, punctuation turned into spaces.
GPU_SPECS: Tuple[GpuSpec, ...] = (
    # --- data centre: Blackwell ---
    GpuSpec("b300", "NVIDIA B300", r"\bb300\b", 8000.0, 288.0,
            "data-centre", True, _DC + "hgx/ (HGX B300: 8 TB/s HBM3e per GPU)"),
    GpuSpec("gb200", "NVIDIA GB200 (per B200 GPU)", r"\bgb200\b", 8000.0, 186.0,
            "data-centre", True, _DC + "gb200-nvl72/ (576 TB/s over 72 GPUs = 8 TB/s each)"),
    GpuSpec("b200", "NVIDIA B200", r"\bb200\b", 8000.0, 180.0,
            "data-centre", True, _DC + "hgx/ (HGX B200: 8 TB/s HBM3e per GPU)"),
    # --- data centre: Hopper ---
    GpuSpec("gh200-144", "NVIDIA GH200 144GB HBM3e", r"\bgh200\b.*\b(144|141)\s*gb\b", 4900.0, 144.0,
            "data-centre", True, _DC + "grace-hopper-superchip/ (HBM3e 144 GB: 4.9 TB/s)"),
    GpuSpec("gh200", "NVIDIA GH200 96GB HBM3", r"\bgh200\b", 4000.0, 96.0,
            "data-centre", True, _DC + "grace-hopper-superchip/ (HBM3 96 GB: 4 TB/s)"),
    GpuSpec("h200", "NVIDIA H200 (SXM or NVL)", r"\bh200\b", 4800.0, 141.0,
            "data-centre", True, _DC + "h200/ (H200 SXM and H200 NVL: 4.8 TB/s)"),
    GpuSpec("h100-nvl", "NVIDIA H100 NVL", r"\bh100\b.*\bnvl\b", 3900.0, 94.0,
            "data-centre", True, _DC + "h100/ (H100 NVL: 3.9 TB/s)"),
    GpuSpec("h100-pcie", "NVIDIA H100 PCIe", r"\bh100\b.*\bpcie\b", 2000.0, 80.0,
            "data-centre", True, _DC + "h100/ (H100 PCIe: 2 TB/s)"),
    GpuSpec("h100-sxm", "NVIDIA H100 SXM", r"\bh100\b", 3350.0, 80.0,
            "data-centre", True, _DC + "h100/ (H100 SXM: 3.35 TB/s; nvidia-smi names it 'NVIDIA H100 80GB HBM3')"),
    # --- data centre: Ampere, Ada, Volta, Turing ---
    GpuSpec("a100-80-pcie", "NVIDIA A100 80GB PCIe", r"\ba100\b.*(\b80\s*gb\b.*\bpcie\b|\bpcie\b.*\b80\s*gb\b)", 1935.0, 80.0,
            "data-centre", True, _DC + "a100/ (A100 80GB PCIe: 1,935 GB/s)"),
    GpuSpec("a100-80-sxm", "NVIDIA A100 80GB SXM", r"\ba100\b.*\b80\s*gb\b", 2039.0, 80.0,
            "data-centre", True, _DC + "a100/ (A100 80GB SXM: 2,039 GB/s)"),
    GpuSpec("a100-40", "NVIDIA A100 40GB (PCIe or SXM)", r"\ba100\b", 1555.0, 40.0,
            "data-centre", True, _DC + "a100/ (A100 40GB PCIe and SXM: 1,555 GB/s)"),
    GpuSpec("a30", "NVIDIA A30", r"\ba30\b", 933.0, 24.0,
            "data-centre", True, _DC + "products/a30-gpu/ (933 GB/s)"),
    GpuSpec("a40", "NVIDIA A40", r"\ba40\b", 696.0, 48.0,
            "data-centre", True, _DC + "a40/ (696 GB/s)"),
    GpuSpec("a10", "NVIDIA A10", r"\ba10\b", 600.0, 24.0,
            "data-centre", True, _DC + "products/a10-gpu/ (600 GB/s)"),
    GpuSpec("l40s", "NVIDIA L40S", r"\bl40s\b", 864.0, 48.0,
            "data-centre", True, _DC + "l40s/ (864 GB/s)"),
    GpuSpec("l40", "NVIDIA L40", r"\bl40\b", 864.0, 48.0,
            "data-centre", True, _DC + "l40/ (864 GB/s)"),
    GpuSpec("l4", "NVIDIA L4", r"\bl4\b", 300.0, 24.0,
            "data-centre", True, _DC + "l4/ (300 GB/s)"),
    GpuSpec("v100s", "NVIDIA V100S", r"\bv100s\b", 1134.0, 32.0,
            "data-centre", True, _DC + "v100/ (V100S PCIe: 1,134 GB/s)"),
    GpuSpec("v100", "NVIDIA V100 (SXM2 or PCIe)", r"\bv100\b", 900.0, 32.0,
            "data-centre", True, _DC + "v100/ (V100 SXM2 and PCIe: 900 GB/s)"),
    GpuSpec("t4", "NVIDIA T4", r"\bt4\b", 320.0, 16.0,
            "data-centre", True, _DC + "tesla-t4/ (320+ GB/s)"),
    # --- workstation (professional boards: P2P over PCIe on stock drivers) ---
    GpuSpec("rtx-pro-6000-server", "NVIDIA RTX PRO 6000 Blackwell Server Edition", r"\brtx pro 6000\b.*\bserver\b", 1597.0, 96.0,
            "workstation", True, _DC + "rtx-pro-6000-blackwell-server-edition/ (datasheet: 1,597 GB/s)"),
    GpuSpec("rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell (Workstation or Max-Q)", r"\brtx pro 6000\b", 1792.0, 96.0,
            "workstation", True, _PRO + "rtx-pro-6000/ (1,792 GB/s)"),
    GpuSpec("rtx-pro-5000", "NVIDIA RTX PRO 5000 Blackwell", r"\brtx pro 5000\b", 1344.0, 48.0,
            "workstation", True, _PRO + "rtx-pro-5000/ (1,344 GB/s)"),
    GpuSpec("rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation", r"\brtx 6000 ada\b", 960.0, 48.0,
            "workstation", True, _WS + "rtx-6000/ (960 GB/s)"),
    GpuSpec("rtx-5000-ada", "NVIDIA RTX 5000 Ada Generation", r"\brtx 5000 ada\b", 576.0, 32.0,
            "workstation", True, _WS + "rtx-5000/ (576 GB/s)"),
    GpuSpec("rtx-4000-ada", "NVIDIA RTX 4000 Ada Generation", r"\brtx 4000 ada\b", 360.0, 20.0,
            "workstation", True, _WS + "rtx-4000/ (360 GB/s)"),
    GpuSpec("rtx-a6000", "NVIDIA RTX A6000", r"\brtx a6000\b", 768.0, 48.0,
            "workstation", True, _WS + "rtx-a6000/ (768 GB/s)"),
    GpuSpec("rtx-a5500", "NVIDIA RTX A5500", r"\brtx a5500\b", 768.0, 24.0,
            "workstation", True, _WS + "rtx-a5500/ (768 GB/s)"),
    GpuSpec("rtx-a5000", "NVIDIA RTX A5000", r"\brtx a5000\b", 768.0, 24.0,
            "workstation", True, _WS + "rtx-a5000/ (768 GB/s)"),
    GpuSpec("rtx-a4000", "NVIDIA RTX A4000", r"\brtx a4000\b", 448.0, 16.0,
            "workstation", True, _WS + "rtx-a4000/ (448 GB/s)"),
    GpuSpec("quadro-rtx-8000", "NVIDIA Quadro RTX 8000 / 6000", r"^rtx [86]000$", 672.0, 48.0,
            "workstation", True, _WS + "quadro/ (Quadro RTX 8000 and 6000: 672 GB/s)"),
    # --- consumer (GeForce: no PCIe P2P on stock drivers) ---
    GpuSpec("rtx-5090", "NVIDIA GeForce RTX 5090", r"\brtx 5090\b", 1792.0, 32.0,
            "consumer", False, _GF + "50-series/rtx-5090/ (32 GB GDDR7, 512-bit, 28 Gbps: 1,792 GB/s, derived)"),
    GpuSpec("rtx-5080", "NVIDIA GeForce RTX 5080", r"\brtx 5080\b", 960.0, 16.0,
            "consumer", False, _GF + "50-series/rtx-5080/ (16 GB GDDR7, 256-bit, 30 Gbps: 960 GB/s, derived)"),
    GpuSpec("rtx-4090", "NVIDIA GeForce RTX 4090", r"\brtx 4090\b", 1008.0, 24.0,
            "consumer", False, _GF + "40-series/rtx-4090/ (24 GB GDDR6X, 384-bit, 21 Gbps: 1,008 GB/s, derived)"),
    GpuSpec("rtx-4080", "NVIDIA GeForce RTX 4080", r"\brtx 4080\b", 717.0, 16.0,
            "consumer", False, _GF + "40-series/rtx-4080-family/ (16 GB GDDR6X, 256-bit, 22.4 Gbps: 716.8 GB/s, derived)"),
    GpuSpec("rtx-3090-ti", "NVIDIA GeForce RTX 3090 Ti", r"\brtx 3090 ti\b", 1008.0, 24.0,
            "consumer", False, _GF + "30-series/rtx-3090-3090ti/ (384-bit, 21 Gbps: 1,008 GB/s, derived)"),
    GpuSpec("rtx-3090", "NVIDIA GeForce RTX 3090", r"\brtx 3090\b", 936.0, 24.0,
            "consumer", False, _GF + "30-series/rtx-3090-3090ti/ (384-bit, 19.5 Gbps: 936 GB/s, derived)"),
)

_DROP_WORDS = ("nvidia", "geforce", "tesla", "quadro")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise_gpu_name(name: str) -> str:
    """Lower case, vendor and brand words dropped, punctuation to single spaces: one spelling per board.

    nvidia-smi, NVML, cloud consoles and people write the same board differently ("NVIDIA A100-SXM4-80GB",
    "A100 80GB SXM", "Tesla T4", "NVIDIA GeForce RTX 4090"); the table matches the common core.
    """
    text = _NON_ALNUM.sub(" ", (name or "").lower())
    words = [w for w in text.split() if w not in _DROP_WORDS]
    return " ".join(words)


def find_gpu(name: str) -> Optional[GpuSpec]:
    """The table row for a GPU name, or None when no row matches."""
    norm = normalise_gpu_name(name)
    if not norm:
        return None
    for spec in GPU_SPECS:
        if re.search(spec.pattern, norm):
            return spec
    return None


def gpu_table() -> List[Dict[str, Any]]:
    """The table as plain dicts (for documentation, reports and tests)."""
    return [spec._asdict() for spec in GPU_SPECS]


# ---------------------------------------------------------------------------------------------------------
# Interconnect
# ---------------------------------------------------------------------------------------------------------

# Link classes of ``nvidia-smi topo -m`` (gpu_topology.LINK_CLASSES) grouped by what they cost an all-reduce.
LINK_KINDS = {
    "PIX": "pcie_switch",
    "PXB": "pcie_switch",
    "PHB": "pcie_host_bridge",
    "NODE": "pcie_host_bridge",
    "SYS": "pcie_cross_socket",
}
_NV_RE = re.compile(r"^NV\d+$")

# Latency of one small all-reduce (a decode step's hidden state: 2 bytes x hidden_size, a few KB to tens of KB)
# inside a CUDA graph, in microseconds. Orders of magnitude from published measurements:
# - NVLink, 6 us: 2x H100 all-reduce of 128 B - 64 KB with CUDA graphs, about 6 us
#   (https://github.com/NVIDIA/nccl/issues/1259).
# - PCIe with P2P and a one-shot kernel (SGLang's custom all-reduce, which it keeps on at TP 2 over PCIe,
#   docs/reference/sglang.md#custom-all-reduce), 8 us: one-shot push over PCIe P2P measured 5.0 us at 8 KB and 7.2 us at 16 KB
#   inside a CUDA graph (https://github.com/haohervchb/sglang-V100/pull/2); FlashInfer's PCIe-IPC kernels on
#   switch-free hosts need about 4 us for each of the reduce-scatter and all-gather halves at one row
#   (https://github.com/flashinfer-ai/flashinfer/pull/5023).
# - PCIe through NCCL (what SGLang uses at TP > 2 without NVLink, or when custom all-reduce is off), 20 us:
#   NCCL inside a CUDA graph over PCIe measured 19.4 us at 4 KB and 20.3 us at 8 KB (same sglang-V100 PR #2);
#   8x RTX 4090 NCCL all-reduce of 8 B: 40-42 us without graphs (https://github.com/NVIDIA/nccl/issues/1530).
# - Across sockets (SYS) everything is slower: the socket link carries ~10 GB/s against ~21-26 GB/s inside one
#   (docs/reference/nccl-over-pcie.md#expected-bandwidth, flashinfer PR #4870); modelled as 1.5x the PCIe figures.
ALLREDUCE_LATENCY_US = {
    ("nvlink", "custom"): 6.0,
    ("nvlink", "nccl"): 6.0,
    ("pcie", "custom"): 8.0,
    ("pcie", "nccl"): 20.0,
}
CROSS_SOCKET_FACTOR = 1.5
ALLREDUCE_SOURCES = {
    "nvlink": "https://github.com/NVIDIA/nccl/issues/1259",
    "pcie": "https://github.com/haohervchb/sglang-V100/pull/2; https://github.com/flashinfer-ai/flashinfer/pull/5023",
}

# Bus bandwidth of an all-reduce, GB/s, for the (small) size-dependent part of its time.
# PCIe Gen4 x16: ~26 GB/s one hop, ~21 GB/s ring, ~10 GB/s across sockets; Gen5 about twice
# (docs/reference/nccl-over-pcie.md#expected-bandwidth, from flashinfer PR #4870). NVLink: a conservative 200 GB/s
# (nccl-tests on A100/H100 NVLink report 230-480 GB/s bus bandwidth).
PCIE_GEN4_X16_GBS = {"pcie_switch": 26.0, "pcie_host_bridge": 21.0, "pcie_cross_socket": 10.0}
PCIE_GEN_FACTOR = {1: 0.125, 2: 0.25, 3: 0.5, 4: 1.0, 5: 2.0, 6: 4.0}
NVLINK_BUS_GBS = 200.0
NETWORK_BUS_GBS = 25.0  # one 200 Gb/s NIC per GPU


def link_kind(link: Optional[str]) -> Optional[str]:
    """``nvlink``, ``pcie_switch``, ``pcie_host_bridge``, ``pcie_cross_socket``, ``network``; None when unknown.

    Accepts topo letters (``NV4``, ``PHB``...), and the plain words ``nvlink``, ``nvswitch`` and ``pcie``
    (``pcie`` alone is taken as through the host bridge, the common switchless two-GPU board); ``network`` (also
    ``ib``, ``roce``, ``nvlink+network``) is a TP group that spans nodes.
    """
    if link is None:
        return None
    text = str(link).strip()
    upper = text.upper()
    if _NV_RE.match(upper) or upper in ("NVLINK", "NVSWITCH", "NVL"):
        return "nvlink"
    if upper in ("NETWORK", "NVLINK+NETWORK", "IB", "INFINIBAND", "ROCE"):
        return "network"
    if upper in LINK_KINDS:
        return LINK_KINDS[upper]
    lower = text.lower()
    if lower in ("pcie_switch", "pcie_host_bridge", "pcie_cross_socket", "nvlink", "network"):
        return lower
    if lower in ("pcie", "pci", "pci-e"):
        return "pcie_host_bridge"
    return None


def allreduce_bus_gbs(kind: str, pcie_gen: Optional[int], pcie_width: Optional[int]) -> float:
    """All-reduce bus bandwidth in GB/s for a link kind and PCIe generation/width (Gen4 x16 when unknown)."""
    if kind == "nvlink":
        return NVLINK_BUS_GBS
    if kind == "network":
        return NETWORK_BUS_GBS
    base = PCIE_GEN4_X16_GBS.get(kind, PCIE_GEN4_X16_GBS["pcie_host_bridge"])
    factor = PCIE_GEN_FACTOR.get(int(pcie_gen), 1.0) if pcie_gen else 1.0
    width = float(pcie_width) / 16.0 if pcie_width else 1.0
    return base * factor * width


def allreduce_impl(kind: str, tp: int, p2p: bool) -> str:
    """Which all-reduce SGLang runs by default: ``custom`` (one-shot P2P kernel) or ``nccl``.

    SGLang 0.5.23 keeps its custom all-reduce at world sizes 2/4/6/8 with full NVLink, and over PCIe only at
    TP 2 with P2P (``can_use_custom_all_reduce_with_nvlink``, docs/reference/sglang.md#custom-all-reduce); otherwise NCCL.
    """
    if kind == "nvlink":
        return "custom" if tp in (2, 4, 6, 8) else "nccl"
    if kind == "network":
        return "nccl"
    return "custom" if tp == 2 and p2p else "nccl"


def allreduce_latency_us(kind: str, impl: str, cuda_graphs: bool = True) -> Tuple[float, str]:
    """Latency of one decode-sized all-reduce in microseconds, and the source of the figure.

    Without CUDA graphs every all-reduce is launched from the host: EAGER_ALLREDUCE_FACTOR times the in-graph figure.
    """
    family = "nvlink" if kind in ("nvlink", "network") else "pcie"
    value = ALLREDUCE_LATENCY_US[(family, impl)]
    source = ALLREDUCE_SOURCES[family]
    if kind == "pcie_cross_socket":
        value *= CROSS_SOCKET_FACTOR
    if kind == "network":
        value *= NETWORK_ALLREDUCE_FACTOR
        source += "; x%g across nodes (docs/ceiling.md)" % NETWORK_ALLREDUCE_FACTOR
    if not cuda_graphs:
        value *= EAGER_ALLREDUCE_FACTOR
        source += "; x%g without CUDA graphs (https://github.com/NVIDIA/nccl/issues/1530)" % EAGER_ALLREDUCE_FACTOR
    return value, source


# ---------------------------------------------------------------------------------------------------------
# What a decode step really costs: the expectation's constants (docs/ceiling.md has the calibration)
# ---------------------------------------------------------------------------------------------------------

# Sustained memory bandwidth in decode, as a share of the datasheet peak. HBM: inference-sim#415 measured 0.82
# on H100 (DRAM refresh, bank conflicts, ECC) and applies InferSim's 0.80 to A100, H800, H200 and GB200; the
# same 0.80 is used here for the other HBM boards. GDDR boards stream closer to their peak: an RTX 4090 copies at
# 918-923 GB/s of its 1,008 (CUDA p2pBandwidthLatencyTest, local diagonal, tinygrad/open-gpu-kernel-modules#6)
# and reads at 921 GB/s (clpeak, krrishnarraj/clpeak#106), 0.91 of peak; decode kernels, which also write and
# synchronise, are taken at 0.88 (the fit to the published batch-1 measurements, docs/ceiling.md).
SUSTAINED_SOURCES = {
    "hbm": "https://github.com/inference-sim/inference-sim/issues/415 (0.82 on H100; 0.80 for A100/H800/H200/GB200)",
    "gddr": ("https://github.com/tinygrad/open-gpu-kernel-modules/issues/6 and https://github.com/krrishnarraj/clpeak/issues/106 "
             "(RTX 4090 streams at 0.91 of peak; decode taken at 0.88, docs/ceiling.md)"),
}
SUSTAINED_FRACTION = {"hbm": 0.80, "gddr": 0.88}
SUSTAINED_BY_GPU = {"h100-sxm": 0.82, "h100-pcie": 0.82, "h100-nvl": 0.82}
HBM_GPUS = frozenset(("b300", "gb200", "b200", "gh200-144", "gh200", "h200", "h100-nvl", "h100-pcie", "h100-sxm",
                      "a100-80-pcie", "a100-80-sxm", "a100-40", "a30", "v100s", "v100"))

# Fixed cost of one forward pass at batch 1 beyond reading the weights, in microseconds. With CUDA graphs: one
# graph replay plus the scheduler, sampling and output path per step (STEP), and a kernel floor per decoder layer
# (LAYER: each small GEMV, norm and attention kernel has a tail that bytes alone do not explain). Without CUDA
# graphs the host launches every kernel itself: about 45 us more per layer in SGLang, the middle of its own
# pair (sgl-project/sglang#1401: Llama 3 8B, 7.06 -> 9.28 ms with triton attention, 7.35 -> 8.23 ms with
# FlashInfer, i.e. +69 and +27 us per layer). MoE layers add their routing, permutation and grouped-GEMM floor
# (MOE_LAYER: about 100 us at batch 1, the fit to TensorRT-LLM's DeepSeek-R1 on 8 B200 and vLLM's Llama 4 Scout
# on one B200; SGLang's own 2024 figures for DeepSeek-V2-Lite imply 140-250 us). torch.compile fuses the small
# kernels between the GEMMs: sgl-project/sglang#1008 (Llama 3 8B, bs 1: 7.37 -> 6.42 ms) and #1497
# (DeepSeek-V2-Lite: 9.21 -> 6.82 ms) remove about half of the per-layer floor.
STEP_OVERHEAD_US = 400.0
LAYER_OVERHEAD_US = {"graphs": 20.0, "eager": 65.0}
MOE_LAYER_US = {"graphs": 100.0, "eager": 250.0}
TORCH_COMPILE_LAYER_FACTOR = 0.5
OVERHEAD_SOURCES = ("docs/ceiling.md (fit to tests/data/decode_measurements.json); https://github.com/sgl-project/sglang/pull/1401; "
                    "https://github.com/sgl-project/sglang/issues/1008; https://github.com/sgl-project/sglang/pull/1497")

# Speculative decoding: what one draft pass costs besides its bytes (sampling, top-k and the tree update that
# run once per draft step), and how many draft passes one verify cycle takes: ``num_steps`` draft decodes plus
# the draft extend over the accepted tokens that SGLang's EAGLE worker runs after each verify.
DRAFT_PASS_US = 60.0
DRAFT_EXTEND_PASSES = 1

# All-reduce latency without CUDA graphs: NCCL launched from the host costs about twice its in-graph latency
# (8x RTX 4090, 8 B: 40-42 us without graphs, NVIDIA/nccl#1530, against 19-20 us in a graph, sglang-V100 PR #2).
EAGER_ALLREDUCE_FACTOR = 2.0
# Across nodes (link "network": InfiniBand or RoCE between the TP ranks), a small all-reduce is a network round
# trip or two on top of the NVLink part: modelled as 5x the NVLink latency, an order of magnitude (docs/ceiling.md).
NETWORK_ALLREDUCE_FACTOR = 5.0
# Between the nodes of a serving group (--nnodes > 1), when the ceiling's inputs do not say: NCCL over TCP
# sockets on 100 GbE (12.5 GB/s line rate, about 10 GB/s of all-reduce bus bandwidth) and about 50 us for one
# decode-sized all-reduce across the nodes (two socket round trips of 20-25 us). The GPU facts cannot tell which
# NIC the ranks use, so internode_bus_gbs and internode_latency_us give the real link (docs/ceiling.md#across-nodes).
INTERNODE_BUS_GBS = 10.0
INTERNODE_LATENCY_US = 50.0

# Bands of the expectation: measured / expected of published batch-1 figures lies inside them, per class
# (docs/ceiling.md#bands, checked by benchmarks/ceiling_validation.py): dense on one or two GPUs, dense over more
# than two (all-reduce costs grow with the group in ways a per-link latency does not follow), MoE, speculative,
# and without CUDA graphs (from SGLang's own with/without pair; other engines' launch overhead is their own).
EXPECTATION_BANDS = {
    "dense": (0.68, 1.15),
    "dense_tp": (0.55, 1.10),
    "moe": (0.55, 1.30),
    "speculative": (0.60, 1.35),
    "eager": (0.50, 1.20),
}


def memory_kind(spec_key: Optional[str]) -> str:
    """``hbm`` for the boards with stacked memory, ``gddr`` for the rest (workstation, consumer, L4/L40/A10...)."""
    return "hbm" if spec_key in HBM_GPUS else "gddr"


def sustained_fraction(spec_key: Optional[str]) -> Tuple[float, str]:
    """Share of the datasheet bandwidth a decode step sustains on this board, and the source of the figure."""
    kind = memory_kind(spec_key)
    value = SUSTAINED_BY_GPU.get(spec_key or "", SUSTAINED_FRACTION[kind])
    return value, SUSTAINED_SOURCES[kind]
