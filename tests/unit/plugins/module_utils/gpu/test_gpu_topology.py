# -*- coding: utf-8 -*-
"""Parsers of gpu_topology on real outputs (sources in data/gpu/README.md) and on edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import (
    cpu_mask_to_list,
    detect_nvswitch,
    is_nvlink,
    normalize_link,
    numa_node_from_affinity,
    nvlink_count,
    nvlink_full_mesh,
    pair_key,
    parse_acs,
    parse_cpu_vendor,
    parse_iommu,
    parse_memory_query,
    parse_p2p_matrix,
    parse_query_gpu_csv,
    parse_topo_matrix,
    split_pair,
    strip_ansi,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu"


def read(name: str) -> str:
    return (DATA / name).read_text()


def all_pairs(n, value):
    return {"%d-%d" % (i, j): value for i in range(n) for j in range(i + 1, n)}


# --- topo -m on real outputs ---------------------------------------------------------------------

def test_topo_two_gpu_phb_tabs_with_gpu_numa_id():
    topo = parse_topo_matrix(read("topo_2gpu_phb_tabs_numaid.txt"))
    assert topo == {
        "gpu_count": 2,
        "links": {"0-1": "PHB"},
        "affinity": {"0": {"cpu_affinity": "0-63", "numa_affinity": "0", "gpu_numa_id": "N/A"},
                     "1": {"cpu_affinity": "0-63", "numa_affinity": "0", "gpu_numa_id": "N/A"}},
        "nics": [],
    }


def test_topo_ansi_underlined_header_single_gpu():
    text = read("topo_1gpu_ansi_l40s_595.txt")
    assert "\x1b[4m" in text
    topo = parse_topo_matrix(text)
    assert topo["gpu_count"] == 1 and topo["links"] == {}
    assert topo["affinity"] == {"0": {"cpu_affinity": "0-7", "numa_affinity": "0", "gpu_numa_id": "N/A"}}


def test_topo_spaces_and_trailing_shell_prompt():
    topo = parse_topo_matrix(read("topo_4gpu_phb_spaces_prompt_after.txt"))
    assert topo["gpu_count"] == 4
    assert topo["links"] == all_pairs(4, "PHB")
    assert topo["affinity"]["3"] == {"cpu_affinity": "0-15", "numa_affinity": "0", "gpu_numa_id": "N/A"}


def test_topo_prompt_line_before_and_nvlinked_pairs():
    topo = parse_topo_matrix(read("topo_4gpu_nv4_pairs_spaces_prompt.txt"))
    assert topo["links"] == {"0-1": "PHB", "0-2": "NV4", "0-3": "NODE", "1-2": "NODE", "1-3": "NV4", "2-3": "PHB"}
    assert not nvlink_full_mesh(topo["links"], 4)
    assert nvlink_full_mesh(topo["links"], 4, [0, 2]) and nvlink_full_mesh(topo["links"], 4, [1, 3])
    assert not detect_nvswitch(topo["links"], 4)


def test_topo_indented_copy_followed_by_p2p_matrix():
    text = read("topo_2gpu_node_indented_then_p2p_ns.txt")
    topo = parse_topo_matrix(text)
    assert topo["links"] == {"0-1": "NODE"}
    assert topo["affinity"]["1"]["cpu_affinity"] == "0-15"
    # The same text holds the p2p matrix: each parser takes its own.
    assert parse_p2p_matrix(text) == {"0-1": "NS"}


def test_topo_sys_with_na_numa_affinity_and_extra_tab():
    topo = parse_topo_matrix(read("topo_2gpu_sys_numa_na_tabs.txt"))
    assert topo["links"] == {"0-1": "SYS"}
    assert topo["affinity"]["0"] == {"cpu_affinity": "0-7,16-23", "numa_affinity": "N/A", "gpu_numa_id": "N/A"}
    assert topo["affinity"]["1"] == {"cpu_affinity": "8-15,24-31", "numa_affinity": "1", "gpu_numa_id": "N/A"}
    assert numa_node_from_affinity(topo["affinity"]["0"]["numa_affinity"]) is None
    assert numa_node_from_affinity(topo["affinity"]["1"]["numa_affinity"]) == 1


def test_topo_eight_gpus_with_nic_rows_and_columns():
    topo = parse_topo_matrix(read("topo_8gpu_sys_nics_tabs.txt"))
    assert topo["gpu_count"] == 8
    assert topo["links"] == all_pairs(8, "SYS")  # the PHB cells of GPU6 are NIC columns, not GPU pairs
    assert topo["nics"] == ["NIC0", "NIC1"]
    assert [topo["affinity"][str(i)]["numa_affinity"] for i in range(8)] == ["0"] * 4 + ["1"] * 4
    assert topo["affinity"]["7"]["cpu_affinity"] == "56-111,168-223"


def test_topo_nvlink_with_mlx5_columns_in_a_report():
    topo = parse_topo_matrix(read("topo_2gpu_nv12_mlx5_checkenv.txt"))
    assert topo["gpu_count"] == 2 and topo["links"] == {"0-1": "NV12"}
    assert topo["nics"] == ["mlx5_%d" % i for i in range(8)]
    assert topo["affinity"]["0"] == {"cpu_affinity": "48-95,144-191", "numa_affinity": "1"}
    assert nvlink_full_mesh(topo["links"], 2) and not detect_nvswitch(topo["links"], 2)


def test_topo_eight_gpu_nvswitch_board():
    topo = parse_topo_matrix(read("topo_8gpu_nv18_cutlass.txt"))
    assert topo["gpu_count"] == 8 and topo["links"] == all_pairs(8, "NV18")
    assert topo["affinity"] == {str(i): {} for i in range(8)}
    assert nvlink_full_mesh(topo["links"], 8)
    assert detect_nvswitch(topo["links"], 8)  # 7 peers x 18 links > 18 links a GPU has


def test_topo_nic_legend_names_columns():
    text = ("\tGPU0\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
            "GPU0\t X \tPHB\t0-251\t0\t\tN/A\nNIC0\tPHB\t X \n\nNIC Legend:\n\n  NIC0: mlx5_0\n")
    topo = parse_topo_matrix(text)
    assert topo["gpu_count"] == 1 and topo["nics"] == ["mlx5_0"]


@pytest.mark.parametrize("text", [
    "",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    "No devices were found\n",
    read("p2p_r_8gpu_ok_cutlass.txt"),  # a p2p matrix is not a topology
    "        GPU0    GPU1\nGPU0     X      PHB\n",  # GPU1's row missing
    "        GPU0    GPU1\nGPU0     PHB    PHB\nGPU1    PHB     X\n",  # no diagonal
])
def test_topo_rejects_non_matrices(text):
    assert parse_topo_matrix(text) == {"gpu_count": 0, "links": {}, "affinity": {}, "nics": []}


def test_topo_legacy_soc_spelling_and_crlf():
    text = "\tGPU0\tGPU1\tCPU Affinity\r\nGPU0\t X \tSOC\t0-9\r\nGPU1\tSOC\t X \t10-19\r\n"
    assert parse_topo_matrix(text)["links"] == {"0-1": "SYS"}


# --- topo -p2p on real outputs ---------------------------------------------------------------------

def test_p2p_geforce_gns_with_leading_spaces_and_trailing_tabs():
    assert parse_p2p_matrix(read("p2p_rw_2gpu_gns_tabs.txt")) == {"0-1": "GNS"}


def test_p2p_ok_two_gpus():
    assert parse_p2p_matrix(read("p2p_rw_2gpu_ok_tabs.txt")) == {"0-1": "OK"}


def test_p2p_eight_gpus_all_ok():
    assert parse_p2p_matrix(read("p2p_r_8gpu_ok_cutlass.txt")) == all_pairs(8, "OK")


def test_p2p_keeps_the_worse_direction_and_ignores_topology():
    text = " \tGPU0\tGPU1\t\n GPU0\tX\tOK\t\n GPU1\tCNS\tX\t\n"
    assert parse_p2p_matrix(text) == {"0-1": "CNS"}
    assert parse_p2p_matrix(read("topo_2gpu_phb_tabs_numaid.txt")) == {}


# --- csv, -q ---------------------------------------------------------------------------------------

def test_query_csv_real_capture_with_header_units_and_na():
    fields = read("query_gpu_l40s_595.cmd").split("--query-gpu=")[1].split(" ")[0].split(",")
    rows = parse_query_gpu_csv(read("query_gpu_l40s_595.csv"), fields)
    assert len(rows) == 1
    row = rows[0]
    assert (row["index"], row["name"], row["pci.bus_id"], row["memory.total"], row["power.limit"]) == \
        ("0", "NVIDIA L40S", "00000000:01:00.0", "46068", "350.00")
    assert (row["pcie.link.gen.max"], row["pcie.link.width.max"], row["compute_cap"], row["persistence_mode"]) == ("4", "16", "8.9", "Disabled")
    assert row["pcie.link.gen.hostmax"] is None and row["fan.speed"] is None
    assert row["utilization.gpu"] == "100"


def test_query_csv_names_only():
    rows = parse_query_gpu_csv(read("query_gpu_name_compute_cap_cutlass.csv"), ["name", "compute_cap"])
    assert rows == [{"name": "NVIDIA H100 80GB HBM3", "compute_cap": "9.0"}] * 8


def test_query_csv_noheader_nounits_and_ragged_rows():
    text = "0, NVIDIA RTX A6000, 49140, 300.00\n1, NVIDIA RTX A6000, 49140\n\n"
    assert parse_query_gpu_csv(text, ["index", "name", "memory.total", "power.limit"]) == \
        [{"index": "0", "name": "NVIDIA RTX A6000", "memory.total": "49140", "power.limit": "300.00"}]


def test_memory_query_real_l40s_and_h100():
    l40s = parse_memory_query(read("q_l40s_595.txt"))
    assert l40s == {"driver_version": "595.80", "cuda_version": "13.2", "gpus": [
        {"pci_bus_id": "00000000:01:00.0", "fb_total_mib": 46068, "fb_reserved_mib": 609, "fb_used_mib": 0,
         "bar1_total_mib": 65536, "bar1_used_mib": 0}]}
    h100 = parse_memory_query(read("q_h100_590.txt"))
    assert (h100["driver_version"], h100["cuda_version"]) == ("590.48.01", "13.1")
    assert [(g["fb_total_mib"], g["bar1_total_mib"]) for g in h100["gpus"]] == [(81559, 131072)]


def test_memory_query_ignores_conf_compute_totals():
    text = ("\n==============NVSMI LOG==============\n\nDriver Version                            : 580.105.08\n"
            "CUDA Version                              : Not Found\n\nAttached GPUs                             : 1\n"
            "GPU 00000000:41:00.0\n    FB Memory Usage\n        Total                             : 24564 MiB\n"
            "    BAR1 Memory Usage\n        Total                             : 256 MiB\n"
            "    Conf Compute Protected Memory Usage\n        Total                             : 0 MiB\n")
    out = parse_memory_query(text)
    assert out["cuda_version"] is None
    assert out["gpus"][0]["fb_total_mib"] == 24564 and out["gpus"][0]["bar1_total_mib"] == 256


# --- host facts ---------------------------------------------------------------------------------------

def test_acs_grep_output_counts_redirecting_bridges():
    acs = parse_acs(read("lspci_acsctl_grep_tabs.txt"))
    assert acs["checked"] == 15 and acs["enabled"] is True
    assert len(acs["redirecting"]) == 5
    assert all(r["device"] is None and r["flags"]["ReqRedir"] and r["flags"]["SrcValid"] for r in acs["redirecting"])


def test_acs_capable_but_disabled_bridge_is_not_flagged():
    acs = parse_acs(read("lspci_vv_bridge_acs_off.txt"))
    assert acs == {"checked": 1, "redirecting": [], "enabled": False}


def test_acs_enabled_on_a_switch_port_excerpt():
    acs = parse_acs(read("lspci_vvv_plx_acs_on_excerpt.txt"))
    assert acs["enabled"] and acs["redirecting"][0]["device"] is None
    assert acs["redirecting"][0]["flags"] == {"SrcValid": True, "TransBlk": False, "ReqRedir": True, "CmpltRedir": True,
                                              "UpstreamFwd": True, "EgressCtrl": False, "DirectTrans": False}


def test_acs_attributes_the_bridge_header():
    # The real disabled bridge, with its control register turned on, to check the device attribution.
    text = read("lspci_vv_bridge_acs_off.txt").replace("ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir-",
                                                       "ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+")
    acs = parse_acs(text)
    assert [(r["device"], r["name"].split(":")[0]) for r in acs["redirecting"]] == [("0000:00:00.0", "PCI bridge")]


@pytest.mark.parametrize("text", [None, "", "00:00.0 Host bridge: Intel Corporation Device 1234\n"])
def test_acs_unknown_without_acs_lines(text):
    assert parse_acs(text) is None


@pytest.mark.parametrize("cmdline, units, expected", [
    ("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet amd_iommu=on iommu=pt", ["ivhd0"], ("passthrough", True, True)),
    ("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet intel_iommu=on", ["dmar0", "dmar1"], ("translated", False, True)),
    ("BOOT_IMAGE=/vmlinuz ro quiet", ["ivhd0"], ("translated", False, True)),
    ("BOOT_IMAGE=/vmlinuz ro quiet", [], ("off", False, False)),
    ("BOOT_IMAGE=/vmlinuz ro intel_iommu=off", [], ("off", True, False)),
    ("ro iommu.passthrough=1", ["smmu3.0x0000000000000000"], ("passthrough", True, True)),
    ("ro iommu=nopt", ["dmar0"], ("translated", True, True)),
    ("ro quiet", None, ("unknown", False, None)),
])
def test_iommu_modes(cmdline, units, expected):
    out = parse_iommu(cmdline, units)
    assert (out["mode"], out["explicit"], out["active"]) == expected


def test_iommu_reports_args_and_units():
    out = parse_iommu("BOOT_IMAGE=/vmlinuz intel_iommu=on iommu=pt quiet\n", ["dmar1", "dmar0"])
    assert out == {"mode": "passthrough", "explicit": True, "active": True, "units": ["dmar0", "dmar1"],
                   "cmdline_args": ["intel_iommu=on", "iommu=pt"]}


@pytest.mark.parametrize("cpuinfo, vendor", [
    ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n", "amd"),
    ("processor\t: 0\nvendor_id\t: GenuineIntel\n", "intel"),
    ("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", "arm"),
    ("", "unknown"),
    (None, "unknown"),
])
def test_cpu_vendor(cpuinfo, vendor):
    assert parse_cpu_vendor(cpuinfo) == vendor


# --- helpers ------------------------------------------------------------------------------------------

def test_link_helpers():
    assert [normalize_link(t) for t in ("X", "NV18", "PIX", "SOC", "OK", "")] == ["X", "NV18", "PIX", "SYS", None, None]
    assert (nvlink_count("NV12"), nvlink_count("PHB"), nvlink_count(None)) == (12, 0, 0)
    assert is_nvlink("NV1") and not is_nvlink("NODE")
    assert pair_key(3, 1) == "1-3" and split_pair("1-3") == (1, 3)
    assert strip_ansi("\x1b[4mGPU0\x1b[0m") == "GPU0"


def test_nvswitch_signals():
    four_direct = all_pairs(4, "NV4")  # 4 x A100 HGX without switch: 3 peers x 4 links = 12
    assert not detect_nvswitch(four_direct, 4)
    assert detect_nvswitch(four_direct, 4, hint=True)
    assert detect_nvswitch({"0-1": "PHB"}, 2, nvswitch_devices=["/dev/nvidia-nvswitch0"])
    assert not detect_nvswitch(all_pairs(8, "NV18"), 8, hint=False)


def test_full_mesh_needs_two_gpus():
    assert not nvlink_full_mesh({}, 1)
    assert not nvlink_full_mesh({"0-1": "NV4", "0-2": "PHB", "1-2": "NV4"}, 3)


def test_cpu_mask_to_list():
    assert cpu_mask_to_list([0xFFFFFFFF, 0xFFFFFFFF]) == "0-31,64-95"
    assert cpu_mask_to_list([0b1011]) == "0-1,3"
    assert cpu_mask_to_list([0, 1 << 3], word_bits=32) == "35"
    assert cpu_mask_to_list([0]) == ""
