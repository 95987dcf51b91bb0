# -*- coding: utf-8 -*-
"""The gpufleet.sglang.nccl_policy filter: the pure policy behind Jinja, the environment file it renders, the
transport the verification all-reduce must log, input errors as filter errors, and its documentation sidecar.

Facts are built from the nvidia-smi stand-in's machine profiles (tools/standins/nvidia_smi/profiles), the same
machines the Molecule scenario boots, so a profile change shows up here first.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter import nccl_policy as plugin
from ansible_collections.gpufleet.sglang.plugins.filter.nccl_policy import FilterModule, nccl_policy
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import decide_nccl_policy

ROOT = Path(__file__).resolve().parents[4]
PROFILES = ROOT / "tools" / "standins" / "nvidia_smi" / "profiles"
PT = {"mode": "passthrough", "explicit": True, "active": True, "units": ["dmar0"], "cmdline_args": ["iommu=pt"]}
ACS_OFF = {"checked": 4, "redirecting": [], "enabled": False}


def profile_facts(name, **extra):
    """gpu_facts-shaped facts of a stand-in profile (what the module returns on a lab host with that profile)."""
    prof = json.loads((PROFILES / ("%s.json" % name)).read_text(encoding="utf-8"))
    count = len(prof["gpus"])
    pairs = ["%d-%d" % p for p in itertools.combinations(range(count), 2)]
    facts = {
        "gpu_count": count,
        "gpus": [{"index": i, "name": g["name"], "memory_total_mib": g["memory_total_mib"], "bar1_total_mib": g["bar1_total_mib"],
                  "numa_node": int(g["numa_affinity"]) if g.get("numa_affinity", "N/A").isdigit() else None}
                 for i, g in enumerate(prof["gpus"])],
        "links": {k: prof["links"].get(k, "SYS") for k in pairs},
        "p2p_read": {k: prof["p2p"]["r"].get(k, "NS") for k in pairs},
        "driver_version": prof["driver_version"], "cuda_version": prof["cuda_version"],
        "nvswitch": bool(prof.get("hints", {}).get("nvswitch")), "nvlink_full_mesh": False,
        "iommu": PT, "acs": ACS_OFF, "cpu_vendor": "intel", "source": "nvidia-smi", "notes": [],
    }
    facts.update(extra)
    return facts


def env_lines(text):
    return [line for line in text.splitlines() if not line.startswith("#")]


def test_filter_is_registered_and_returns_the_pure_policy_plus_file_and_transport():
    assert FilterModule().filters()["nccl_policy"] is nccl_policy
    facts = profile_facts("a6000x2-pcie-phb")
    result = nccl_policy(facts, tp_gpus=[0, 1])
    pure = decide_nccl_policy(facts, [0, 1])
    assert {k: v for k, v in result.items() if k not in ("env_file", "expected_transport")} == pure


def test_two_a6000_behind_the_host_bridge_get_p2p_level_phb_in_the_file():
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"))
    assert result["env"] == {"NCCL_P2P_LEVEL": "PHB"} and result["server_args"] == {}
    assert result["expected_transport"] == "P2P"
    text = result["env_file"]
    assert text.endswith("\nNCCL_P2P_LEVEL=PHB\n")
    assert "# Rules that fired: R4, R7, R8\n" in text
    assert any(line.startswith("# R4: pairs ['0-1'] are PHB/NODE") for line in text.splitlines())
    assert "/etc/nccl.conf is never used (R8)" in text


def test_two_geforce_4090_without_p2p_disable_p2p_and_custom_all_reduce():
    result = nccl_policy(profile_facts("rtx4090x2-pcie-nop2p"))
    assert result["env"] == {"NCCL_P2P_DISABLE": "1"}
    assert result["server_args"] == {"disable_custom_all_reduce": True}
    assert result["expected_transport"] == "SHM"
    assert env_lines(result["env_file"]) == ["NCCL_P2P_DISABLE=1"]
    assert "# Rules that fired: R2, R7, R8" in result["env_file"]


def test_nvswitch_board_needs_no_p2p_variable_but_a_fabric_manager():
    result = nccl_policy(profile_facts("h100x8-nvswitch"))
    assert result["env"] == {} and env_lines(result["env_file"]) == []
    assert result["requirements"] == ["nvidia-fabricmanager 580.105.08 running"]
    assert result["expected_transport"] == "P2P"


def test_group_across_sockets_is_tagged_r5_and_expects_shm():
    result = nccl_policy(profile_facts("l40sx4-pcie-sys"), tp_gpus=["1", 2])
    assert result["tp_gpus"] == [1, 2]
    assert result["suggested_cuda_visible_devices"] == "0,1"
    assert result["tagged_warnings"] and all(w.startswith("R5: ") for w in result["tagged_warnings"])
    assert [w[len("R5: "):] for w in result["tagged_warnings"]] == result["warnings"]
    assert result["expected_transport"] == "SHM"  # SYS is beyond NCCL's default PXB cutoff


def test_four_l40s_across_sockets_expect_shm_but_one_socket_expects_p2p():
    facts = profile_facts("l40sx4-pcie-sys")
    assert nccl_policy(facts)["expected_transport"] == "SHM"
    same_socket = nccl_policy(facts, tp_gpus=[2, 3])
    assert same_socket["env"] == {"NCCL_P2P_LEVEL": "PHB"} and same_socket["expected_transport"] == "P2P"


def test_strict_acs_turns_the_warning_into_a_tagged_error():
    acs_on = {"checked": 4, "enabled": True, "redirecting": [{"device": "0000:00:01.1", "name": "bridge", "flags": {"ReqRedir": True}}]}
    loose = nccl_policy(profile_facts("a6000x2-pcie-phb", acs=acs_on))
    strict = nccl_policy(profile_facts("a6000x2-pcie-phb", acs=acs_on), strict_acs=True)
    assert loose["tagged_warnings"] == ["R4: " + loose["warnings"][0]] and loose["errors"] == []
    assert strict["tagged_errors"] == ["R4: " + strict["errors"][0]] and strict["warnings"] == []
    assert strict["expected_transport"] is None


def test_passthrough_is_stringified_quoted_for_systemd_and_tagged_r7():
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"),
                         passthrough_env={"NCCL_P2P_LEVEL": "LOC", "NCCL_DEBUG": "INFO", "NCCL_IB_DISABLE": True,
                                          "NCCL_DEBUG_FILE": '/var/log/nccl "%h".log'})
    assert result["env"]["NCCL_IB_DISABLE"] == "1"
    assert result["tagged_warnings"] == ["R7: pass-through NCCL_P2P_LEVEL=LOC overrides the rules' NCCL_P2P_LEVEL=PHB"]
    assert env_lines(result["env_file"]) == [
        "NCCL_DEBUG=INFO",
        'NCCL_DEBUG_FILE="/var/log/nccl \\"%h\\".log"',
        "NCCL_IB_DISABLE=1",
        "NCCL_P2P_LEVEL=LOC",
    ]
    assert result["expected_transport"] == "SHM"  # LOC is no P2P at all


def test_the_file_is_byte_identical_for_the_same_decision():
    facts = profile_facts("l40sx4-pcie-sys")
    first = nccl_policy(facts, passthrough_env={"NCCL_B": "2", "NCCL_A": "1"})["env_file"]
    second = nccl_policy(json.loads(json.dumps(facts)), passthrough_env={"NCCL_A": "1", "NCCL_B": "2"})["env_file"]
    assert first == second
    assert env_lines(first) == ["NCCL_A=1", "NCCL_B=2", "NCCL_P2P_LEVEL=PHB"]


def test_host_without_gpu_gets_a_header_only_file_and_no_transport():
    result = nccl_policy({"gpu_count": 0, "gpus": [], "links": {}, "source": "none"})
    assert result["env"] == {} and env_lines(result["env_file"]) == []
    assert result["expected_transport"] is None


def test_unknown_tp_gpu_is_a_tagged_error():
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"), tp_gpus=[0, 5])
    assert result["tagged_errors"] == ["facts: tp_gpus [5] not present on this host (it has GPUs 0-1)"]


@pytest.mark.parametrize("facts,kwargs,match", [
    ("nope", {}, "must be the gpufleet.sglang.gpu_facts result"),
    ({"gpus": []}, {}, "must be the gpufleet.sglang.gpu_facts result"),
    (None, {"tp_gpus": "0,1"}, "tp_gpus must be a list"),
    (None, {"tp_gpus": ["first"]}, "must hold GPU indexes"),
    (None, {"passthrough_env": ["NCCL_DEBUG=INFO"]}, "must be a dict"),
    (None, {"passthrough_env": {"NCCL DEBUG": "INFO"}}, "not environment variables: NCCL DEBUG"),
    (None, {"passthrough_env": {"NCCL_DEBUG": "INFO\nEVIL=1"}}, "contains a line break"),
])
def test_bad_input_is_a_filter_error(facts, kwargs, match):
    with pytest.raises(AnsibleFilterError, match=match):
        nccl_policy(profile_facts("a6000x2-pcie-phb") if facts is None else facts, **kwargs)


def test_documentation_sidecar_lists_every_argument():
    doc = yaml.safe_load((ROOT / "plugins" / "filter" / "nccl_policy.yml").read_text(encoding="utf-8"))
    options = set(doc["DOCUMENTATION"]["options"]) - {"_input"}
    assert options == {"tp_gpus", "tp_size", "strict_acs", "passthrough_env"}
    assert doc["DOCUMENTATION"]["name"] == "nccl_policy"
    returned = set(doc["RETURN"]["_value"]["contains"])
    assert returned == set(nccl_policy(profile_facts("a6000x2-pcie-phb")))
    assert plugin.HEADER[0].startswith("# Managed by Ansible")
