# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu/topology: the tables it states, each cut-off at its boundary, and the layouts the parsers promise to take.

test_gpu_topology.py holds the real outputs; these are small texts made to try one rule each (make mutation).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu import topology as topo

EMPTY = {"gpu_count": 0, "links": {}, "affinity": {}, "nics": []}


def test_the_tables_are_nvidia_smi_and_nvml_h_spellings():
    """Link classes nearest first, the driver's P2P letters, nvml.h's enums mapped to those letters, 18 NVLinks."""
    assert topo.LINK_CLASSES == ("PIX", "PXB", "PHB", "NODE", "SYS")
    assert topo.P2P_STATUSES == ("OK", "CNS", "GNS", "TNS", "NS", "DR", "U")
    assert topo.NVML_TOPOLOGY_LEVELS == {0: "PIX", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
    assert topo.NVML_P2P_STATUS == {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}
    assert topo.MAX_NVLINKS_PER_GPU == 18


@pytest.mark.parametrize("token, expected", [
    ("PIX", "PIX"), ("PXB", "PXB"), ("PHB", "PHB"), ("NODE", "NODE"), ("SYS", "SYS"), ("SOC", "SYS"),
    (" X ", "X"), ("NV1", "NV1"), ("NV18", "NV18"), ("NV", None), ("nv4", None), ("OK", None), ("", None),
])
def test_normalize_link(token, expected):
    """Every class, the legacy SOC, the diagonal and NV#; anything else is not a link class."""
    assert topo.normalize_link(token) == expected


def test_small_helpers():
    """strip_ansi takes None; nvlink_count reads NV#; pair keys lower index first."""
    assert topo.strip_ansi(None) == ""
    assert topo.strip_ansi("\x1b[4mGPU0\x1b[0m\x1b]0;title\x07") == "GPU0"
    assert [topo.nvlink_count(v) for v in ("NV12", "PHB", None, "")] == [12, 0, 0, 0]
    assert (topo.pair_key(3, 1), topo.pair_key(1, 3), topo.pair_key(2, 2)) == ("1-3", "1-3", "2-2")
    assert topo.split_pair("10-11") == (10, 11)


def test_a_lone_gpu0_header():
    """A one-GPU matrix with no affinity columns and no final newline is still a matrix."""
    expected = {"gpu_count": 1, "links": {}, "affinity": {"0": {}}, "nics": []}
    assert topo.parse_topo_matrix("\tGPU0\nGPU0\t X ") == expected


def test_a_matrix_at_the_very_end_of_the_text():
    """The last row may end the text without a newline."""
    text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-7\nGPU1\tPHB\t X \t8-15"
    assert topo.parse_topo_matrix(text) == {"gpu_count": 2, "links": {"0-1": "PHB"},
                                            "affinity": {"0": {"cpu_affinity": "0-7"}, "1": {"cpu_affinity": "8-15"}},
                                            "nics": []}


def test_crlf_lines_leave_no_trace_in_the_last_column():
    """Windows line ends (a copy from a ticket) do not stick to the affinity values."""
    text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\r\nGPU0\t X \tNODE\t0-9\t0\r\nGPU1\tNODE\t X \t10-19\t1\r\n"
    assert topo.parse_topo_matrix(text)["affinity"] == {"0": {"cpu_affinity": "0-9", "numa_affinity": "0"},
                                                        "1": {"cpu_affinity": "10-19", "numa_affinity": "1"}}


def test_legend_right_after_the_rows():
    """A line that is not a row ends the matrix even without a blank line before it."""
    text = "\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\t X \nLegend:\n  X    = Self\n"
    assert topo.parse_topo_matrix(text)["links"] == {"0-1": "SYS"}


@pytest.mark.parametrize("header, affinity", [
    ("\tGPU0\tGPU1\tNUMA Affinity", {"numa_affinity": "0"}),
    ("\tGPU0\tGPU1\tGPU NUMA ID", {"gpu_numa_id": "0"}),
    ("\tGPU0\tGPU1\tAffinity", {}),
])
def test_columns_stop_at_any_affinity_header(header, affinity):
    """NUMA Affinity or GPU NUMA ID alone (no CPU Affinity), or a cut 'Affinity', ends the device columns."""
    text = header + "\nGPU0\t X \tPIX\t0\nGPU1\tPIX\t X \t0\n"
    assert topo.parse_topo_matrix(text) == {"gpu_count": 2, "links": {"0-1": "PIX"},
                                            "affinity": {"0": affinity, "1": affinity}, "nics": []}


def test_nic_rows_and_columns_are_read_past():
    """NIC columns are skipped in GPU rows and NIC rows do not end the block; names come from the legend."""
    text = ("\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \tPXB\tPIX\t0-3\nGPU1\tPXB\t X \tPXB\t0-3\n"
            "NIC0\tPIX\tPXB\t X \n\nNIC Legend:\n\n  NIC0: mlx5_0\n")
    assert topo.parse_topo_matrix(text) == {"gpu_count": 2, "links": {"0-1": "PXB"},
                                            "affinity": {"0": {"cpu_affinity": "0-3"}, "1": {"cpu_affinity": "0-3"}},
                                            "nics": ["mlx5_0"]}


def test_a_line_that_is_no_row_ends_a_matrix_so_the_next_one_is_found():
    """A note printed right after a broken matrix ends it; the matrix after the note is read."""
    text = ("\tGPU0\tGPU1\nGPU0\t X \tPHB\nnote: GPU1 fell off the bus\n"
            "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n")
    assert topo.parse_topo_matrix(text)["links"] == {"0-1": "NV4"}


def test_a_broken_matrix_does_not_hide_the_next_one():
    """A header with too few rows is skipped, and the next matrix in the text is read."""
    text = "\tGPU0\tGPU1\nGPU0\t X \tPHB\n\n\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n"
    assert topo.parse_topo_matrix(text)["links"] == {"0-1": "NV4"}


@pytest.mark.parametrize("rows", [
    "GPU0\t X \tPHB\nGPU2\tPHB\t X \n",  # a row numbered past the matrix
    "GPU0\t X \tPHB\nGPU1\tPHB\n",  # a row one cell short
    "GPU0\t X \tPHB\nGPU1\tPHB\tPHB\n",  # no diagonal
    "GPU0\t X \tPHB\nGPU1\tFOO\t X \n",  # a cell that is no link class
])
def test_rows_that_do_not_square_are_not_a_matrix(rows):
    """Every GPU row must have n cells, an X on the diagonal and link classes elsewhere."""
    assert topo.parse_topo_matrix("\tGPU0\tGPU1\n" + rows) == EMPTY


@pytest.mark.parametrize("ij, ji, kept", [("OK", "NS", "NS"), ("NS", "OK", "NS"), ("CNS", "CNS", "CNS"),
                                          ("TNS", "DR", "DR"), ("U", "OK", "U"), ("OK", "OK", "OK")])
def test_p2p_keeps_the_worse_direction_either_way(ij, ji, kept):
    """Whichever direction is not OK wins; every driver letter is accepted."""
    text = "\tGPU0\tGPU1\nGPU0\tX\t%s\nGPU1\t%s\tX\n" % (ij, ji)
    assert topo.parse_p2p_matrix(text) == {"0-1": kept}


def test_p2p_without_a_matrix():
    """No matrix: no pairs."""
    assert topo.parse_p2p_matrix("nvidia-smi: command not found\n") == {}


@pytest.mark.parametrize("cell, value", [
    ("", None), ("N/A", None), ("Not Supported", None), ("[N/A]", None), ("[Not Supported]", None),
    ("[Unknown Error]", None), ("[GPU requires reset]", None), ("[partial", "[partial"), ("partial]", "partial]"),
    ("49140 MiB", "49140"), ("300.00 W", "300.00"), ("35 %", "35"), ("-5 C", "-5"), ("1 x", "1"),
    ("NVIDIA L40S", "NVIDIA L40S"),
])
def test_query_csv_cells(cell, value):
    """Not-available spellings (and any [bracketed] note) become None; units are cut; text stays."""
    assert topo.parse_query_gpu_csv("0, %s\n" % cell, ["index", "v"]) == [{"index": "0", "v": value}]


def test_query_csv_rows_blank_lines_ragged_rows_and_quotes():
    """Blank and empty-cell lines and rows of the wrong width are skipped, not an end; quoted cells keep commas."""
    text = '0, "a, b"\n\n , \n1, x, extra\n2, y\n'
    assert topo.parse_query_gpu_csv(text, ["index", "name"]) == [{"index": "0", "name": "a, b"},
                                                                 {"index": "2", "name": "y"}]


Q = """
Driver Version                            : 595.45.04
CUDA Version                              : N/A

GPU 00000000:01:00.0
    FB Memory Usage
        Total                             : 46068 MiB
        Reserved                          : 512 MiB
     Odd                                  : 1
        Used                              : 3 MiB
    Product Brand                         : NVIDIA
        Total                             : 99 MiB
    BAR1 Memory Usage
        Total                             : 65536 MiB
        Used                              : 1 MiB
"""


def test_memory_query_sections_end_at_keys_of_their_own_level():
    """A key at section level ends the section; deeper keys do not; CUDA N/A is None."""
    assert topo.parse_memory_query(Q) == {
        "driver_version": "595.45.04", "cuda_version": None,
        "gpus": [{"pci_bus_id": "00000000:01:00.0", "fb_total_mib": 46068, "fb_reserved_mib": 512, "fb_used_mib": 3,
                  "bar1_total_mib": 65536, "bar1_used_mib": 1}]}


def test_memory_query_crlf():
    """Windows line ends do not stick to the values."""
    text = Q.replace("\n", "\r\n").replace("N/A", "13.0")
    out = topo.parse_memory_query(text)
    assert (out["driver_version"], out["cuda_version"], out["gpus"][0]["bar1_used_mib"]) == ("595.45.04", "13.0", 1)


def test_full_mesh_checks_every_pair():
    """Every pair, not just neighbours: one PCIe pair among three GPUs breaks the mesh."""
    links = {"0-1": "NV4", "1-2": "NV4", "0-2": "PHB"}
    assert topo.nvlink_full_mesh(links, 3) is False
    assert topo.nvlink_full_mesh({"0-1": "PHB", "1-2": "NV4", "0-2": "NV4"}, 3) is False
    assert topo.nvlink_full_mesh(dict(links, **{"0-2": "NV4"}), 3) is True
    assert topo.nvlink_full_mesh(links, 3, gpus=[1, 0]) is True


def test_nvswitch_at_the_nvlink_count_boundary():
    """18 links per GPU can be point to point; 19 cannot."""
    links18 = {"0-1": "NV9", "0-2": "NV9", "1-2": "NV9"}
    assert topo.detect_nvswitch(links18, 3) is False
    assert topo.detect_nvswitch(dict(links18, **{"0-1": "NV10"}), 3) is True


@pytest.mark.parametrize("cmdline, units, mode, explicit", [
    ("amd_iommu=off", None, "off", True),
    ("iommu=off", None, "off", True),
    ("iommu=force,pt", None, "passthrough", True),
    ("iommu.passthrough=0", None, "translated", True),
    ("iommu=nopt", None, "translated", True),
    ("intel_iommu=off", ["dmar0"], "translated", False),
    ("amd_iommu=off", ["ivhd0"], "translated", False),
    ("quiet", [], "off", False),
])
def test_iommu_each_argument(cmdline, units, mode, explicit):
    """Each argument that sets the mode, and a listing that contradicts an 'off'."""
    out = topo.parse_iommu(cmdline, units)
    assert (out["mode"], out["explicit"]) == (mode, explicit)


def test_iommu_lists_every_argument_it_read():
    """All five arguments are reported, others are not."""
    cmdline = "ro iommu=pt intel_iommu=on amd_iommu=on iommu.passthrough=1 iommu.strict=0 quiet"
    assert topo.parse_iommu(cmdline, ["dmar1", "dmar0"]) == {
        "mode": "passthrough", "explicit": True, "active": True, "units": ["dmar0", "dmar1"],
        "cmdline_args": ["iommu=pt", "intel_iommu=on", "amd_iommu=on", "iommu.passthrough=1", "iommu.strict=0"]}


def test_acs_exact_with_crlf_and_without_a_device_line():
    """Either redirect flag alone counts; names carry no line ends; a bare ACSCtl line has no device."""
    text = ("02:08.0 PCI bridge: PLX Technology, Inc. PEX 8747\r\n"
            "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir+ UpstreamFwd- EgressCtrl- DirectTrans-\r\n"
            "0000:03:00.0 PCI bridge: Broadcom PEX 88096\r\n"
            "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\r\n"
            "\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\r\n"
            "ACSCtl: ReqRedir+\r\n")
    flags = dict.fromkeys(("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl",
                           "DirectTrans"), False)
    assert topo.parse_acs(text) == {"checked": 4, "enabled": True, "redirecting": [
        {"device": "0000:02:08.0", "name": "PCI bridge: PLX Technology, Inc. PEX 8747",
         "flags": dict(flags, SrcValid=True, CmpltRedir=True)},
        {"device": "0000:03:00.0", "name": "PCI bridge: Broadcom PEX 88096",
         "flags": dict(flags, SrcValid=True, ReqRedir=True)},
        {"device": None, "name": None, "flags": {"ReqRedir": True}}]}


def test_acs_line_before_any_device():
    """ACSCtl lines alone (a grep of lspci) have no device and no name."""
    assert topo.parse_acs("\t\tACSCtl:\tSrcValid- ReqRedir+ CmpltRedir-\n") == {
        "checked": 1, "enabled": True,
        "redirecting": [{"device": None, "name": None,
                         "flags": {"SrcValid": False, "ReqRedir": True, "CmpltRedir": False}}]}


@pytest.mark.parametrize("cpuinfo, vendor", [
    ("vendor_id\t: HygonGenuine\n", "amd"), ("vendor_id\t: CentaurHauls\n", "centaurhauls"),
    ("vendor_id\t:\n", "unknown"), (None, "unknown"), ("", "unknown"),
])
def test_cpu_vendor_edges(cpuinfo, vendor):
    """Hygon is AMD; other vendors are named in lower case; an empty vendor is unknown."""
    assert topo.parse_cpu_vendor(cpuinfo) == vendor
