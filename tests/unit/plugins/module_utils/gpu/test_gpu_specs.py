# -*- coding: utf-8 -*-
"""gpu_specs: nvidia-smi names match the right row, every row has a source, link and all-reduce rules."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.specs import (
    GPU_SPECS,
    allreduce_bus_gbs,
    allreduce_impl,
    allreduce_latency_us,
    find_gpu,
    memory_kind,
    sustained_fraction,
    gpu_table,
    link_kind,
    normalise_gpu_name,
)


# Names as nvidia-smi / NVML print them, and the bandwidth NVIDIA publishes for each.
@pytest.mark.parametrize("name,key,gbs", [
    ("NVIDIA RTX A6000", "rtx-a6000", 768),
    ("NVIDIA A100-SXM4-80GB", "a100-80-sxm", 2039),
    ("NVIDIA A100 80GB PCIe", "a100-80-pcie", 1935),
    ("NVIDIA A100-PCIE-40GB", "a100-40", 1555),
    ("NVIDIA A100-SXM4-40GB", "a100-40", 1555),
    ("NVIDIA H100 80GB HBM3", "h100-sxm", 3350),
    ("NVIDIA H100 PCIe", "h100-pcie", 2000),
    ("NVIDIA H100 NVL", "h100-nvl", 3900),
    ("NVIDIA H200", "h200", 4800),
    ("NVIDIA H200 NVL", "h200", 4800),
    ("NVIDIA GH200 480GB", "gh200", 4000),
    ("NVIDIA B200", "b200", 8000),
    ("NVIDIA L40S", "l40s", 864),
    ("NVIDIA L40", "l40", 864),
    ("NVIDIA L4", "l4", 300),
    ("NVIDIA A10", "a10", 600),
    ("NVIDIA A40", "a40", 696),
    ("Tesla T4", "t4", 320),
    ("Tesla V100-SXM2-32GB", "v100", 900),
    ("NVIDIA GeForce RTX 4090", "rtx-4090", 1008),
    ("NVIDIA GeForce RTX 5090", "rtx-5090", 1792),
    ("NVIDIA GeForce RTX 3090", "rtx-3090", 936),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada", 960),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000", 1792),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx-pro-6000", 1792),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server", 1597),
    ("Quadro RTX 8000", "quadro-rtx-8000", 672),
    ("NVIDIA RTX A5000", "rtx-a5000", 768),
])
def test_names_match_their_row(name, key, gbs):
    spec = find_gpu(name)
    assert spec is not None and (spec.key, spec.bandwidth_gbs) == (key, gbs)


def test_unknown_and_empty_names():
    assert find_gpu("Imaginary GPU 9000") is None
    assert find_gpu("") is None
    assert normalise_gpu_name("NVIDIA GeForce RTX-4090") == "rtx 4090"


def test_every_row_is_sourced_unique_and_plausible():
    keys = [spec.key for spec in GPU_SPECS]
    assert len(keys) == len(set(keys))
    for row in gpu_table():
        assert row["source"].startswith("https://www.nvidia.com/"), row["key"]
        assert 100 <= row["bandwidth_gbs"] <= 10000
        assert row["segment"] in ("data-centre", "workstation", "consumer")
        assert row["p2p"] == (row["segment"] != "consumer")


@pytest.mark.parametrize("link,kind", [("NV4", "nvlink"), ("NV18", "nvlink"), ("nvswitch", "nvlink"), ("PIX", "pcie_switch"),
                                       ("PXB", "pcie_switch"), ("PHB", "pcie_host_bridge"), ("NODE", "pcie_host_bridge"),
                                       ("SYS", "pcie_cross_socket"), ("pcie", "pcie_host_bridge"), ("network", "network"),
                                       ("nvlink+network", "network"), ("IB", "network"), ("X", None), (None, None)])
def test_link_kinds(link, kind):
    assert link_kind(link) == kind


def test_allreduce_rules_follow_sglang_defaults():
    assert allreduce_impl("pcie_host_bridge", 2, True) == "custom"   # custom AR kept at TP 2 over PCIe with P2P
    assert allreduce_impl("pcie_host_bridge", 2, False) == "nccl"    # GeForce / no P2P
    assert allreduce_impl("pcie_switch", 4, True) == "nccl"          # more than two PCIe-only GPUs
    assert allreduce_impl("nvlink", 8, True) == "custom"
    assert allreduce_latency_us("pcie_host_bridge", "custom")[0] < allreduce_latency_us("pcie_host_bridge", "nccl")[0]
    assert allreduce_latency_us("nvlink", "custom")[0] < allreduce_latency_us("pcie_switch", "custom")[0]
    assert allreduce_latency_us("pcie_cross_socket", "nccl")[0] > allreduce_latency_us("pcie_host_bridge", "nccl")[0]
    assert allreduce_latency_us("nvlink", "nccl")[1].startswith("https://github.com/NVIDIA/nccl")


def test_pcie_bus_bandwidth_scales_with_generation_and_width():
    assert allreduce_bus_gbs("pcie_switch", 4, 16) == 26.0
    assert allreduce_bus_gbs("pcie_switch", 5, 16) == 52.0
    assert allreduce_bus_gbs("pcie_host_bridge", 4, 8) == 10.5
    assert allreduce_bus_gbs("pcie_cross_socket", None, None) == 10.0


def test_eager_and_cross_node_allreduce_latencies():
    assert allreduce_latency_us("pcie_host_bridge", "nccl", cuda_graphs=False)[0] == 40.0   # NVIDIA/nccl#1530: 40-42 us
    assert allreduce_latency_us("pcie_host_bridge", "custom", cuda_graphs=False)[0] == 16.0
    latency, source = allreduce_latency_us("network", "nccl")
    assert latency == 30.0 and "across nodes" in source
    assert allreduce_impl("network", 16, True) == "nccl" and allreduce_bus_gbs("network", None, None) == 25.0


@pytest.mark.parametrize("key,kind,fraction", [("h100-sxm", "hbm", 0.82), ("h200", "hbm", 0.80), ("a100-40", "hbm", 0.80),
                                               ("rtx-a6000", "gddr", 0.88), ("l40s", "gddr", 0.88), ("rtx-4090", "gddr", 0.88),
                                               (None, "gddr", 0.88)])
def test_sustained_bandwidth_by_memory_kind(key, kind, fraction):
    assert memory_kind(key) == kind
    value, source = sustained_fraction(key)
    assert value == fraction
    assert source.startswith("https://github.com/inference-sim/inference-sim/issues/415" if kind == "hbm" else "https://github.com/tinygrad")
