# -*- coding: utf-8 -*-
"""gpu.specs row by row and rule by rule: each board's published figures, each spelling of a link, each
all-reduce latency of docs/ceiling.md, and the model constants that page documents (make mutation:
tests/mutation/modules.yml).

The figures are NVIDIA's (product pages and datasheets) and docs/ceiling.md's; they are written out here, not
read from the table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu import specs
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.specs import (
    allreduce_bus_gbs,
    allreduce_impl,
    allreduce_latency_us,
    find_gpu,
    gpu_table,
    link_kind,
    memory_kind,
    normalise_gpu_name,
    sustained_fraction,
)

CEILING_DOC = (Path(__file__).resolve().parents[5] / "docs" / "ceiling.md").read_text(encoding="utf-8")

# key: (a name as nvidia-smi or a person writes it, peak GB/s, memory GB, segment); P2P on stock drivers is
# every board but GeForce.
BOARDS = {
    "b300": ("NVIDIA B300 SXM6 AC", 8000, 288, "data-centre"),
    "gb200": ("NVIDIA GB200", 8000, 186, "data-centre"),
    "b200": ("NVIDIA B200", 8000, 180, "data-centre"),
    "gh200-144": ("NVIDIA GH200 144G HBM3e 144GB", 4900, 144, "data-centre"),
    "gh200": ("NVIDIA GH200 480GB", 4000, 96, "data-centre"),
    "h200": ("NVIDIA H200", 4800, 141, "data-centre"),
    "h100-nvl": ("NVIDIA H100 NVL", 3900, 94, "data-centre"),
    "h100-pcie": ("NVIDIA H100 PCIe", 2000, 80, "data-centre"),
    "h100-sxm": ("NVIDIA H100 80GB HBM3", 3350, 80, "data-centre"),
    "a100-80-pcie": ("NVIDIA A100 80GB PCIe", 1935, 80, "data-centre"),
    "a100-80-sxm": ("NVIDIA A100-SXM4-80GB", 2039, 80, "data-centre"),
    "a100-40": ("NVIDIA A100-PCIE-40GB", 1555, 40, "data-centre"),
    "a30": ("NVIDIA A30", 933, 24, "data-centre"),
    "a40": ("NVIDIA A40", 696, 48, "data-centre"),
    "a10": ("NVIDIA A10", 600, 24, "data-centre"),
    "l40s": ("NVIDIA L40S", 864, 48, "data-centre"),
    "l40": ("NVIDIA L40", 864, 48, "data-centre"),
    "l4": ("NVIDIA L4", 300, 24, "data-centre"),
    "v100s": ("Tesla V100S-PCIE-32GB", 1134, 32, "data-centre"),
    "v100": ("Tesla V100-SXM2-32GB", 900, 32, "data-centre"),
    "t4": ("Tesla T4", 320, 16, "data-centre"),
    "rtx-pro-6000-server": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 1597, 96, "workstation"),
    "rtx-pro-6000": ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 1792, 96, "workstation"),
    "rtx-pro-5000": ("NVIDIA RTX PRO 5000 Blackwell", 1344, 48, "workstation"),
    "rtx-6000-ada": ("NVIDIA RTX 6000 Ada Generation", 960, 48, "workstation"),
    "rtx-5000-ada": ("NVIDIA RTX 5000 Ada Generation", 576, 32, "workstation"),
    "rtx-4000-ada": ("NVIDIA RTX 4000 Ada Generation", 360, 20, "workstation"),
    "rtx-a6000": ("NVIDIA RTX A6000", 768, 48, "workstation"),
    "rtx-a5500": ("NVIDIA RTX A5500", 768, 24, "workstation"),
    "rtx-a5000": ("NVIDIA RTX A5000", 768, 24, "workstation"),
    "rtx-a4000": ("NVIDIA RTX A4000", 448, 16, "workstation"),
    "quadro-rtx-8000": ("Quadro RTX 6000", 672, 48, "workstation"),
    "rtx-5090": ("NVIDIA GeForce RTX 5090", 1792, 32, "consumer"),
    "rtx-5080": ("NVIDIA GeForce RTX 5080", 960, 16, "consumer"),
    "rtx-4090": ("NVIDIA GeForce RTX 4090", 1008, 24, "consumer"),
    "rtx-4080": ("NVIDIA GeForce RTX 4080 SUPER", 717, 16, "consumer"),
    "rtx-3090-ti": ("NVIDIA GeForce RTX 3090 Ti", 1008, 24, "consumer"),
    "rtx-3090": ("NVIDIA GeForce RTX 3090", 936, 24, "consumer"),
}
HBM = {"b300", "gb200", "b200", "gh200-144", "gh200", "h200", "h100-nvl", "h100-pcie", "h100-sxm", "a100-80-pcie",
       "a100-80-sxm", "a100-40", "a30", "v100s", "v100"}


def test_the_table_has_exactly_these_boards_in_this_order_of_precedence():
    assert [row["key"] for row in gpu_table()] == list(BOARDS)


@pytest.mark.parametrize("key", list(BOARDS))
def test_each_board_is_found_by_its_name_with_its_published_figures(key):
    name, gbs, memory, segment = BOARDS[key]
    spec = find_gpu(name)
    assert spec is not None
    assert (spec.key, spec.bandwidth_gbs, spec.memory_gb, spec.segment, spec.p2p) == (key, gbs, memory, segment,
                                                                                      segment != "consumer")


@pytest.mark.parametrize("key", list(BOARDS))
def test_each_row_as_a_dict_names_its_board_and_a_source_page_that_prints_the_figure(key):
    row = next(r for r in gpu_table() if r["key"] == key)
    assert sorted(row) == ["bandwidth_gbs", "key", "memory_gb", "name", "p2p", "pattern", "segment", "source"]
    assert row["name"].startswith("NVIDIA ")
    page, note = row["source"].split(" (", 1)
    assert re.match(r"^https://www\.nvidia\.com/en-us/[a-z0-9/-]+/$", page), row["source"]
    assert note.endswith(")") and not note.endswith("))")
    figures = [float(n.replace(",", "")) * (1000 if unit == "TB/s" else 1)
               for n, unit in re.findall(r"([\d.,]+)\+? (TB/s|GB/s)", note)]
    assert round(row["bandwidth_gbs"]) in [round(f) for f in figures], row["source"]


@pytest.mark.parametrize("name, key", [
    ("NVIDIA H100 NVL 94GB", "h100-nvl"), ("H100 PCIe 80GB", "h100-pcie"), ("NVIDIA H100 SXM5 80GB", "h100-sxm"),
    ("NVIDIA A100 PCIe 80GB", "a100-80-pcie"), ("NVIDIA A100-SXM4-40GB", "a100-40"), ("NVIDIA A100 80 GB", "a100-80-sxm"),
    ("NVIDIA GH200 141GB HBM3e", "gh200-144"), ("NVIDIA GH200 96GB HBM3", "gh200"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx-pro-6000"), ("Quadro RTX 8000", "quadro-rtx-8000"),
    ("NVIDIA RTX 6000", "quadro-rtx-8000"), ("NVIDIA RTX 5000 Ada Generation", "rtx-5000-ada"),
])
def test_the_more_specific_row_wins(name, key):
    assert find_gpu(name).key == key


@pytest.mark.parametrize("name", ["NVIDIA A1000", "NVIDIA H1000", "NVIDIA RTX 60000", "NVIDIA RTX 8000 Ada", "NVIDIA T40",
                                  "NVIDIA L400", "NVIDIA RTX A600", "NVIDIA V1000", "NVIDIA GeForce", "nvidia tesla quadro"])
def test_near_misses_match_no_row(name):
    assert find_gpu(name) is None


@pytest.mark.parametrize("name, text", [
    ("NVIDIA GeForce RTX 4090", "rtx 4090"), ("Tesla  T4", "t4"), ("Quadro RTX 8000", "rtx 8000"),
    ("NVIDIA A100-SXM4-80GB", "a100 sxm4 80gb"), ("  h100_pcie  ", "h100 pcie"), (None, ""), ("NVIDIA", ""),
    ("nvidiaX A10", "nvidiax a10"),
])
def test_normalised_names(name, text):
    assert normalise_gpu_name(name) == text


@pytest.mark.parametrize("link, kind", [
    ("NV1", "nvlink"), ("nv12", "nvlink"), (" NV4 ", "nvlink"), ("NVLINK", "nvlink"), ("nvlink", "nvlink"),
    ("NVSwitch", "nvlink"), ("NVL", "nvlink"), ("NV", None), ("NVX", None), ("xNV4", None),
    ("NETWORK", "network"), ("nvlink+network", "network"), ("ib", "network"), ("InfiniBand", "network"), ("RoCE", "network"),
    ("PIX", "pcie_switch"), ("pxb", "pcie_switch"), ("PHB", "pcie_host_bridge"), ("node", "pcie_host_bridge"),
    ("SYS", "pcie_cross_socket"), ("pcie_switch", "pcie_switch"), ("PCIe_Host_Bridge", "pcie_host_bridge"),
    ("pcie_cross_socket", "pcie_cross_socket"), ("PCIe", "pcie_host_bridge"), ("pci", "pcie_host_bridge"),
    ("PCI-E", "pcie_host_bridge"), ("", None), ("X", None), (4, None),
])
def test_each_spelling_of_a_link(link, kind):
    assert link_kind(link) == kind


@pytest.mark.parametrize("kind, gen, width, gbs", [
    ("nvlink", 4, 8, 200.0), ("network", 5, 16, 25.0),
    ("pcie_switch", None, None, 26.0), ("pcie_host_bridge", 4, 16, 21.0), ("pcie_cross_socket", 4, 16, 10.0),
    ("unknown", None, None, 21.0),
    ("pcie_switch", 1, 16, 3.25), ("pcie_switch", 2, 16, 6.5), ("pcie_switch", 3, 16, 13.0), ("pcie_switch", 5, 16, 52.0),
    ("pcie_switch", 6, 16, 104.0), ("pcie_switch", 7, 16, 26.0), ("pcie_switch", "3", 16, 13.0),
    ("pcie_switch", 4, 4, 6.5), ("pcie_switch", 4, 32, 52.0), ("pcie_switch", 0, 0, 26.0),
])
def test_bus_bandwidth_by_link_generation_and_width(kind, gen, width, gbs):
    assert allreduce_bus_gbs(kind, gen, width) == gbs


@pytest.mark.parametrize("tp, nvlink, pcie_p2p", [
    (1, "nccl", "nccl"), (2, "custom", "custom"), (3, "nccl", "nccl"), (4, "custom", "nccl"), (5, "nccl", "nccl"),
    (6, "custom", "nccl"), (7, "nccl", "nccl"), (8, "custom", "nccl"), (16, "nccl", "nccl"),
])
def test_custom_all_reduce_at_the_world_sizes_sglang_keeps_it(tp, nvlink, pcie_p2p):
    assert allreduce_impl("nvlink", tp, False) == nvlink
    assert allreduce_impl("pcie_switch", tp, True) == pcie_p2p
    assert allreduce_impl("pcie_cross_socket", tp, False) == "nccl"
    assert allreduce_impl("network", tp, True) == "nccl"


NVLINK_SOURCE = "https://github.com/NVIDIA/nccl/issues/1259"
PCIE_SOURCE = "https://github.com/haohervchb/sglang-V100/pull/2; https://github.com/flashinfer-ai/flashinfer/pull/5023"
EAGER = "; x2 without CUDA graphs (https://github.com/NVIDIA/nccl/issues/1530)"
NODES = "; x5 across nodes (docs/ceiling.md)"


@pytest.mark.parametrize("kind, impl, graphs, latency, source", [
    # docs/ceiling.md: NVLink 6 us, PCIe one-shot 8 us, PCIe NCCL 20 us, across sockets x1.5, across nodes x5,
    # twice that without CUDA graphs
    ("nvlink", "custom", True, 6.0, NVLINK_SOURCE), ("nvlink", "nccl", True, 6.0, NVLINK_SOURCE),
    ("pcie_switch", "custom", True, 8.0, PCIE_SOURCE), ("pcie_host_bridge", "nccl", True, 20.0, PCIE_SOURCE),
    ("pcie_cross_socket", "custom", True, 12.0, PCIE_SOURCE), ("pcie_cross_socket", "nccl", True, 30.0, PCIE_SOURCE),
    ("network", "nccl", True, 30.0, NVLINK_SOURCE + NODES), ("network", "nccl", False, 60.0, NVLINK_SOURCE + NODES + EAGER),
    ("nvlink", "custom", False, 12.0, NVLINK_SOURCE + EAGER), ("pcie_cross_socket", "nccl", False, 60.0, PCIE_SOURCE + EAGER),
])
def test_each_all_reduce_latency_and_its_source(kind, impl, graphs, latency, source):
    assert allreduce_latency_us(kind, impl, graphs) == (latency, source)


def test_all_reduce_latency_defaults_to_cuda_graphs():
    assert allreduce_latency_us("pcie_host_bridge", "nccl") == (20.0, PCIE_SOURCE)


@pytest.mark.parametrize("key", sorted(BOARDS))
def test_memory_kind_and_sustained_fraction_of_each_board(key):
    # docs/ceiling.md: 0.82 on H100, 0.80 on the other HBM boards, 0.88 on GDDR boards
    kind = "hbm" if key in HBM else "gddr"
    assert memory_kind(key) == kind
    fraction = 0.82 if key.startswith("h100") else (0.80 if kind == "hbm" else 0.88)
    value, source = sustained_fraction(key)
    assert value == fraction
    if kind == "hbm":
        assert source == "https://github.com/inference-sim/inference-sim/issues/415 (0.82 on H100; 0.80 for A100/H800/H200/GB200)"
    else:
        assert source == ("https://github.com/tinygrad/open-gpu-kernel-modules/issues/6 and "
                          "https://github.com/krrishnarraj/clpeak/issues/106 (RTX 4090 streams at 0.91 of peak; decode taken"
                          " at 0.88, docs/ceiling.md)")


def test_an_unknown_board_is_taken_as_gddr():
    assert memory_kind(None) == "gddr" and memory_kind("mi300x") == "gddr"
    assert sustained_fraction(None)[0] == 0.88 and sustained_fraction("")[0] == 0.88


def test_the_model_constants_are_the_ones_docs_ceiling_md_documents():
    """The ceiling's fixed costs and bands live in specs; docs/ceiling.md states them, and both must agree."""
    assert "400 us a step (graph replay, scheduler, sampling) + 20 us a layer with CUDA graphs, 65 us a layer without" in CEILING_DOC
    assert (specs.STEP_OVERHEAD_US, specs.LAYER_OVERHEAD_US) == (400.0, {"graphs": 20.0, "eager": 65.0})
    assert "100 us each at batch 1 (routing, permutation, grouped-GEMM floor); 250 us without graphs" in CEILING_DOC
    assert specs.MOE_LAYER_US == {"graphs": 100.0, "eager": 250.0}
    assert "halves the per-layer overhead" in CEILING_DOC and specs.TORCH_COMPILE_LAYER_FACTOR == 0.5
    assert "plus 60 us and its all-reduces; the `+ 1` is the draft extend" in CEILING_DOC
    assert (specs.DRAFT_PASS_US, specs.DRAFT_EXTEND_PASSES) == (60.0, 1)
    for text, band in (("0.68-1.15 (`dense`)", "dense"), ("0.55-1.10 (`dense_tp`)", "dense_tp"), ("0.55-1.30 (`moe`)", "moe"),
                       ("0.60-1.35 (`speculative`)", "speculative"), ("The `eager` band (0.50-1.20)", "eager")):
        assert text in CEILING_DOC
        low, high = re.search(r"(\d\.\d\d)-(\d\.\d\d)", text).groups()
        assert specs.EXPECTATION_BANDS[band] == (float(low), float(high))
    assert sorted(specs.EXPECTATION_BANDS) == ["dense", "dense_tp", "eager", "moe", "speculative"]
    assert specs.OVERHEAD_SOURCES == (
        "docs/ceiling.md (fit to tests/data/decode_measurements.json); https://github.com/sgl-project/sglang/pull/1401; "
        "https://github.com/sgl-project/sglang/issues/1008; https://github.com/sgl-project/sglang/pull/1497")
