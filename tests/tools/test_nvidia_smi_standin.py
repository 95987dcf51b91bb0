# -*- coding: utf-8 -*-
"""Tests of the nvidia-smi stand-in: real formats, exit codes, and that the collection's parsers read it.

The strongest checks render a profile copied from a real L40S capture (driver 595.80) and compare the
output line by line with that capture (tests/unit/plugins/module_utils/data/gpu/).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import (
    LINK_CLASSES,
    P2P_STATUSES,
    is_nvlink,
    parse_memory_query,
    parse_p2p_matrix,
    parse_query_gpu_csv,
    parse_topo_matrix,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "standins" / "nvidia_smi" / "nvidia_smi_standin.py"
PROFILES = ROOT / "tools" / "standins" / "nvidia_smi" / "profiles"
DATA = ROOT / "tests" / "unit" / "plugins" / "module_utils" / "data" / "gpu"

_spec = importlib.util.spec_from_file_location("nvidia_smi_standin", SCRIPT)
standin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(standin)

ALL_PROFILES = sorted(p.stem for p in PROFILES.glob("*.json"))
GPU_PROFILES = [p for p in ALL_PROFILES if json.loads((PROFILES / (p + ".json")).read_text())["gpus"]]


def smi(args, profile="a6000x2-pcie-phb", tmp_path=None, **extra):
    env = {"NVIDIA_SMI_STANDIN_PROFILE": profile}
    if tmp_path is not None:
        env["NVIDIA_SMI_STANDIN_STATE"] = str(tmp_path / "state.json")
    env.update(extra)
    return standin.run(list(args), env)


# A profile made from the L40S capture (utkuozdemir/nvidia_gpu_exporter, driver 595.80), to compare formats.
L40S_595 = {
    "schema": 1, "name": "l40s-capture", "driver_version": "595.80", "cuda_version": "13.2",
    "gpus": [{
        "name": "NVIDIA L40S", "uuid": "GPU-00000000-0000-0000-0000-000000000000", "pci_bus_id": "00000000:01:00.0",
        "memory_total_mib": 46068, "memory_reserved_mib": 609, "memory_used_mib": 0, "memory_free_mib": 45460,
        "bar1_total_mib": 65536, "bar1_used_mib": 0, "pcie_gen_current": 4, "pcie_gen_max": 4,
        "pcie_width_current": 16, "pcie_width_max": 16, "persistence_mode": "Disabled", "power_limit_w": 350.0,
        "power_draw_w": 242.0, "compute_cap": "8.9", "cpu_affinity": "0-7", "numa_affinity": "0", "gpu_numa_id": "N/A",
        "temperature_c": 64, "fan_speed": "N/A", "pstate": "P0", "ecc": "0", "mig_mode": "N/A", "display_active": "Off",
        "compute_mode": "Default", "utilization_gpu": 100,
    }],
    "links": {}, "p2p": {}, "nics": [],
}


@pytest.fixture
def l40s_profile(tmp_path):
    path = tmp_path / "l40s.json"
    path.write_text(json.dumps(L40S_595))
    return str(path)


def test_summary_table_matches_real_capture_line_by_line(l40s_profile):
    out, rc = smi([], profile=l40s_profile)
    real = (DATA / "smi_l40s_595.txt").read_text().split("\n")
    mine = out.split("\n")
    assert rc == 0
    # The first line is the clock; everything after it must be identical.
    assert mine[1:] == real[1:]
    assert len(mine[0]) == len(real[0]) and mine[0].endswith("       ")


def test_topo_matrix_matches_real_capture_byte_for_byte(l40s_profile):
    out, rc = smi(["topo", "-m"], profile=l40s_profile)
    assert rc == 0
    assert out.rstrip("\n") == (DATA / "topo_1gpu_ansi_l40s_595.txt").read_text().rstrip("\n")


def test_memory_blocks_match_real_capture(l40s_profile):
    out, rc = smi(["-q", "-d", "MEMORY"], profile=l40s_profile)
    real = (DATA / "q_l40s_595.txt").read_text()
    block = real[real.index("    FB Memory Usage"):real.index("    Compute Mode")]
    assert rc == 0
    assert block in out
    # 55-column key layout of drivers 590+, as in the capture's header lines.
    assert "Driver Version                                         : 595.80\n" in out
    assert "Driver Version                                         : 595.80\n" in real


def test_version_matches_real_capture(l40s_profile):
    out, rc = smi(["--version"], profile=l40s_profile)
    assert (rc, out) == (0, (DATA / "version_l40s_595.txt").read_text())


def test_query_gpu_matches_real_capture_for_shared_fields(l40s_profile):
    real_fields = (DATA / "query_gpu_l40s_595.cmd").read_text().split("--query-gpu=")[1].split(" ")[0].split(",")
    real_header, real_row = (DATA / "query_gpu_l40s_595.csv").read_text().strip().split("\n")
    real_cells = dict(zip(real_fields, real_row.split(", ")))
    real_heads = dict(zip(real_fields, real_header.split(", ")))
    skipped = ("timestamp", "serial", "vbios_version", "pci.domain", "utilization.memory", "power.draw", "temperature.gpu",
               "fan.speed", "display_active", "enforced.power.limit", "power.default_limit", "power.min_limit", "power.max_limit")
    shared = [f for f in real_fields if f in standin._field_table() and f not in skipped]
    assert len(shared) >= 15
    out, rc = smi(["--query-gpu=" + ",".join(shared), "--format=csv"], profile=l40s_profile)
    header, row = out.strip().split("\n")
    assert rc == 0
    assert header.split(", ") == [real_heads[f] for f in shared]
    assert row.split(", ") == [real_cells[f] for f in shared]


def test_plain_table_lines_all_91_wide():
    out, rc = smi([], profile="h100x8-nvswitch")
    lines = out.rstrip("\n").split("\n")
    assert rc == 0
    assert all(len(line) == 91 for line in lines[1:] if line), [line for line in lines[1:] if line and len(line) != 91]
    assert "| NVIDIA-SMI 580.105.08             Driver Version: 580.105.08     CUDA Version: 13.0     |" in lines
    assert sum("NVIDIA H100 80GB HBM3" in line for line in lines) == 8


def test_q_keys_are_42_columns_before_driver_590():
    out, rc = smi(["-q", "-d", "MEMORY"])
    assert rc == 0
    assert "\nDriver Version                            : 580.105.08\n" in out
    assert "        Total                             : 65536 MiB\n" in out


@pytest.mark.parametrize("profile", GPU_PROFILES)
def test_collection_parsers_read_every_profile(profile):
    data = json.loads((PROFILES / (profile + ".json")).read_text())
    n = len(data["gpus"])
    topo = parse_topo_matrix(smi(["topo", "-m"], profile=profile)[0])
    assert topo["gpu_count"] == n
    assert topo["links"] == {"%d-%d" % (i, j): data["links"].get("%d-%d" % (i, j), "SYS") for i in range(n) for j in range(i + 1, n)}
    assert topo["nics"] == [nic["name"] for nic in data["nics"]]
    assert [topo["affinity"][str(i)]["cpu_affinity"] for i in range(n)] == [g["cpu_affinity"] for g in data["gpus"]]
    p2p = parse_p2p_matrix(smi(["topo", "-p2p", "r"], profile=profile)[0])
    assert p2p == {k: data["p2p"]["r"].get(k, "NS") for k in topo["links"]}
    mem = parse_memory_query(smi(["-q", "-d", "MEMORY"], profile=profile)[0])
    assert [g["bar1_total_mib"] for g in mem["gpus"]] == [g["bar1_total_mib"] for g in data["gpus"]]
    assert (mem["driver_version"], mem["cuda_version"]) == (data["driver_version"], data["cuda_version"])
    fields = ["index", "name", "memory.total", "pci.bus_id", "pcie.link.width.current", "power.limit", "compute_cap"]
    rows = parse_query_gpu_csv(smi(["--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"], profile=profile)[0], fields)
    assert [(r["name"], int(r["memory.total"]), r["pci.bus_id"], int(r["pcie.link.width.current"])) for r in rows] == \
        [(g["name"], g["memory_total_mib"], g["pci_bus_id"], g["pcie_width_current"]) for g in data["gpus"]]


@pytest.mark.parametrize("profile", ALL_PROFILES)
def test_profiles_are_consistent(profile):
    data = json.loads((PROFILES / (profile + ".json")).read_text())
    assert data["schema"] == 1 and data["name"] == profile
    n = len(data["gpus"])
    for key, value in data["links"].items():
        i, j = (int(x) for x in key.split("-"))
        assert 0 <= i < j < n
        assert value in LINK_CLASSES or is_nvlink(value)
    for table in data["p2p"].values():
        assert all(v in P2P_STATUSES for v in table.values())
    for gpu in data["gpus"]:
        for key in ("name", "uuid", "pci_bus_id", "memory_total_mib", "bar1_total_mib", "pcie_gen_current", "pcie_gen_max",
                    "pcie_width_current", "pcie_width_max", "power_limit_w"):
            assert key in gpu, key
    assert len({g["uuid"] for g in data["gpus"]}) == n
    for nic in data["nics"]:
        assert len(nic["gpu_links"]) == n


def test_required_profiles_exist():
    story = json.loads((PROFILES / "a6000x2-pcie-phb.json").read_text())
    assert [g["name"] for g in story["gpus"]] == ["NVIDIA RTX A6000"] * 2
    assert story["links"] == {"0-1": "PHB"} and story["p2p"]["r"] == {"0-1": "OK"}
    assert story["driver_version"].startswith("580.") and story["cuda_version"] == "13.0"
    assert all(g["bar1_total_mib"] == 65536 and (g["pcie_gen_max"], g["pcie_width_max"]) == (4, 16) for g in story["gpus"])
    geforce = json.loads((PROFILES / "rtx4090x2-pcie-nop2p.json").read_text())
    assert geforce["p2p"]["r"] == {"0-1": "NS"} and all(g["bar1_total_mib"] == 256 for g in geforce["gpus"])
    assert "SYS" in json.loads((PROFILES / "l40sx4-pcie-sys.json").read_text())["links"].values()
    assert all(is_nvlink(v) for v in json.loads((PROFILES / "h100x8-nvswitch.json").read_text())["links"].values())


def test_query_gpu_units_and_flags():
    fields = "index,memory.total,power.limit,fan.speed,persistence_mode"
    out, rc = smi(["--query-gpu=" + fields, "--format=csv"])
    assert (rc, out) == (0, "index, memory.total [MiB], power.limit [W], fan.speed [%], persistence_mode\n"
                            "0, 49140 MiB, 300.00 W, 30 %, Disabled\n1, 49140 MiB, 300.00 W, 30 %, Disabled\n")
    out, rc = smi(["--query-gpu=" + fields, "--format=csv,noheader,nounits", "-i", "1"])
    assert (rc, out) == (0, "1, 49140, 300.00, 30, Disabled\n")
    out, rc = smi(["--query-gpu=index,fan.speed", "--format=csv,noheader"], profile="h100x8-nvswitch", **{})
    assert out.split("\n")[0] == "0, [N/A]"


def test_errors_like_the_real_tool():
    assert smi(["--query-gpu=index,cuda_version", "--format=csv"]) == ('Field "cuda_version" is not a valid field to query.\n\n', 2)
    assert smi(["--format=csv,noheader"]) == ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", 2)
    assert smi(["--query-gpu=index"]) == ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", 2)
    assert smi(["--frobnicate"]) == ("ERROR: Option --frobnicate is not recognized. Please run 'nvidia-smi -h' for help.\n", 2)
    assert smi(["-i", "7", "-L"]) == ("No devices were found\n", 6)
    assert smi(["nvlink", "-s"])[1] == 3
    assert smi([], profile="nodevices") == ("No devices were found\n", 6)


def test_no_driver_without_profile(tmp_path):
    out, rc = smi([], profile=str(tmp_path / "missing.json"))
    assert rc == 9
    assert out.startswith("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")


def test_persistence_mode_is_kept_until_state_is_gone(tmp_path):
    first = smi(["-pm", "1"], tmp_path=tmp_path, NVIDIA_SMI_STANDIN_ROOT="1")
    assert first == ("Enabled persistence mode for GPU 00000000:01:00.0.\nEnabled persistence mode for GPU 00000000:21:00.0.\nAll done.\n", 0)
    again = smi(["-i", "0", "-pm", "1"], tmp_path=tmp_path, NVIDIA_SMI_STANDIN_ROOT="1")
    assert again == ("Persistence mode is already Enabled for GPU 00000000:01:00.0.\nAll done.\n", 0)
    assert smi(["--query-gpu=persistence_mode", "--format=csv,noheader"], tmp_path=tmp_path)[0] == "Enabled\nEnabled\n"
    assert "| NVIDIA RTX A6000               On  |" in smi([], tmp_path=tmp_path)[0].replace("|   0  ", "| ")
    (tmp_path / "state.json").unlink()
    assert smi(["--query-gpu=persistence_mode", "--format=csv,noheader"], tmp_path=tmp_path)[0] == "Disabled\nDisabled\n"


def test_persistence_mode_needs_root(tmp_path):
    out, rc = smi(["-pm", "1"], tmp_path=tmp_path, NVIDIA_SMI_STANDIN_ROOT="0")
    assert rc == 4
    assert out == ("Unable to set persistence mode for GPU 00000000:01:00.0: Insufficient Permissions\n"
                   "Terminating early due to previous errors.\n")
    assert not (tmp_path / "state.json").exists()


def test_executable_entry_point(tmp_path):
    """Run it the way lab hosts do: as a program, profile by path, output and exit code on the process."""
    env = dict(os.environ, NVIDIA_SMI_STANDIN_PROFILE=str(PROFILES / "rtx4090x2-pcie-nop2p.json"),
               NVIDIA_SMI_STANDIN_STATE=str(tmp_path / "s.json"))
    done = subprocess.run([sys.executable, str(SCRIPT), "topo", "-p2p", "r"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith(" \tGPU0\tGPU1\t\n GPU0\tX\tNS\t\n GPU1\tNS\tX\t\n\nLegend:\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "--bogus"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    # `env python` passes ansible-test's shebang check; the lab tool rewrites it to the host's /usr/bin/python3
    assert SCRIPT.read_text().startswith("#!/usr/bin/env python\n")
    assert os.access(SCRIPT, os.X_OK)


def test_installed_through_a_symlink_still_finds_named_profiles(tmp_path):
    link = tmp_path / "nvidia-smi"
    link.symlink_to(SCRIPT)
    env = dict(os.environ, NVIDIA_SMI_STANDIN_PROFILE="h100x8-nvswitch", NVIDIA_SMI_STANDIN_STATE=str(tmp_path / "s.json"))
    done = subprocess.run([sys.executable, str(link), "-L"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.count("NVIDIA H100 80GB HBM3") == 8


def test_topo_legends_are_the_real_ones():
    real = (DATA / "topo_2gpu_phb_tabs_numaid.txt").read_text()
    out = smi(["topo", "-m"])[0]
    assert real[real.index("Legend:"):] in out
    real_p2p = (DATA / "p2p_rw_2gpu_gns_tabs.txt").read_text()
    assert real_p2p[real_p2p.index("Legend:"):] in smi(["topo", "-p2p", "w"])[0]
