# -*- coding: utf-8 -*-
"""Rules R1-R8 of nccl-pcie.md as decide_nccl_policy applies them, one or more tests per rule."""

from __future__ import annotations

import itertools

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import BASIS, decide_nccl_policy

A6000 = {"name": "NVIDIA RTX A6000", "memory_total_mib": 49140, "bar1_total_mib": 65536}
RTX4090 = {"name": "NVIDIA GeForce RTX 4090", "memory_total_mib": 24564, "bar1_total_mib": 256}
H100 = {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "bar1_total_mib": 131072}
L40S = {"name": "NVIDIA L40S", "memory_total_mib": 46068, "bar1_total_mib": 65536}
PT = {"mode": "passthrough", "explicit": True, "active": True, "units": ["dmar0"], "cmdline_args": ["iommu=pt"]}
ACS_OFF = {"checked": 4, "redirecting": [], "enabled": False}
ACS_ON = {"checked": 4, "enabled": True,
          "redirecting": [{"device": "0000:00:01.1", "name": "PCI bridge: ...", "flags": {"ReqRedir": True, "CmpltRedir": True}}]}


def facts(model, count, link, p2p="OK", numa=None, **extra):
    """GPU facts in the shape gpu_facts returns; ``link``/``p2p`` may be one value or a pair -> value map."""
    pairs = ["%d-%d" % (i, j) for i, j in itertools.combinations(range(count), 2)]
    out = {
        "gpu_count": count,
        "gpus": [dict(model, index=i, numa_node=(numa[i] if numa else 0)) for i in range(count)],
        "links": link if isinstance(link, dict) else {k: link for k in pairs},
        "p2p_read": p2p if isinstance(p2p, dict) else {k: p2p for k in pairs},
        "driver_version": "580.105.08", "cuda_version": "13.0", "nvswitch": False,
        "iommu": PT, "acs": ACS_OFF, "cpu_vendor": "intel", "source": "nvml",
    }
    out.update(extra)
    return out


def fired(policy):
    return [r["rule"] for r in policy["rules"]]


def test_every_rule_entry_has_a_one_line_basis():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_DEBUG": "INFO"})
    for entry in policy["rules"]:
        assert set(entry) == {"rule", "why", "basis"}
        assert entry["basis"] == BASIS[entry["rule"]] and "\n" not in entry["basis"]
        assert entry["basis"].startswith("nccl-pcie.md " + entry["rule"])


# --- acceptance cases of the brief --------------------------------------------------------------------

def test_r4_two_a6000_over_the_host_bridge_get_p2p_level_phb_and_keep_custom_all_reduce():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"))
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert policy["server_args"] == {}
    assert policy["warnings"] == [] and policy["errors"] == []
    assert fired(policy) == ["R4", "R7", "R8"]
    assert "custom all-reduce stays on at TP=2" in policy["rules"][0]["why"]


def test_r2_geforce_pair_without_p2p_disables_p2p_and_custom_all_reduce():
    policy = decide_nccl_policy(facts(RTX4090, 2, "PHB", p2p="NS"))
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"}
    assert policy["server_args"] == {"disable_custom_all_reduce": True}
    assert fired(policy) == ["R2", "R7", "R8"]
    why = policy["rules"][0]["why"]
    assert "0-1=NS" in why and "GPU0 BAR1 256 MiB < VRAM/2" in why


def test_r1_nvlink_pair_gets_no_p2p_variables():
    policy = decide_nccl_policy(facts(H100, 2, "NV18"))
    assert policy["env"] == {} and policy["server_args"] == {}
    assert fired(policy) == ["R1", "R7", "R8"]
    assert policy["requirements"] == []


def test_r1_nvswitch_board_requires_fabric_manager_at_driver_version():
    policy = decide_nccl_policy(facts(H100, 8, "NV18", nvswitch=True), tp_size=8)
    assert policy["env"] == {}
    assert policy["requirements"] == ["nvidia-fabricmanager 580.105.08 running"]
    assert any("fabricmanager" in n for n in policy["notes"])
    assert policy["tp_gpus"] == list(range(8))


def test_r7_debugging_knobs_only_by_explicit_pass_through():
    default = decide_nccl_policy(facts(A6000, 2, "PHB"))
    knobs = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_NCHANNELS", "NCCL_BUFFSIZE", "NCCL_SHM_DISABLE", "NCCL_DEBUG")
    assert not any(k in default["env"] for k in knobs)
    assert default["rules"][-2] == {"rule": "R7", "why": "no debugging knobs requested, none set", "basis": BASIS["R7"]}
    asked = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_DEBUG": "INFO", "NCCL_ALGO": "Ring"})
    assert asked["env"] == {"NCCL_P2P_LEVEL": "PHB", "NCCL_DEBUG": "INFO", "NCCL_ALGO": "Ring"}
    assert "NCCL_ALGO, NCCL_DEBUG" in asked["rules"][-2]["why"]
    assert any("remove them" in n for n in asked["notes"])


def test_r7_pass_through_wins_and_says_so():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_P2P_DISABLE": 1, "NCCL_P2P_LEVEL": "LOC"})
    assert policy["env"] == {"NCCL_P2P_LEVEL": "LOC", "NCCL_P2P_DISABLE": "1"}
    assert policy["warnings"] == ["pass-through NCCL_P2P_LEVEL=LOC overrides the rules' NCCL_P2P_LEVEL=PHB"]


def test_r7_warns_about_shm_disable_on_one_host():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_SHM_DISABLE": "1"})
    assert policy["env"]["NCCL_SHM_DISABLE"] == "1"
    assert any("NCCL_SHM_DISABLE=1" in w for w in policy["warnings"])


def test_r5_group_across_sockets_warns_and_suggests_one_numa_node():
    links = {"0-1": "NODE", "2-3": "NODE", "0-2": "SYS", "0-3": "SYS", "1-2": "SYS", "1-3": "SYS"}
    policy = decide_nccl_policy(facts(L40S, 4, links, numa=[0, 0, 1, 1]), tp_gpus=[1, 2])
    assert policy["suggested_cuda_visible_devices"] == "0,1"
    assert "CUDA_VISIBLE_DEVICES" not in policy["env"]
    assert policy["env"] == {}  # SYS is past the PHB level: no P2P variable for this pair
    assert fired(policy) == ["R5", "R7", "R8"]
    assert policy["warnings"] == ["TP group [1, 2] spans sockets (SYS pairs ['1-2']; NUMA 0: [1], NUMA 1: [2]): "
                                  "set CUDA_VISIBLE_DEVICES=0,1 to keep it on one NUMA node"]


def test_r5_warns_when_no_socket_holds_the_whole_group():
    links = {"0-1": "NODE", "2-3": "NODE", "0-2": "SYS", "0-3": "SYS", "1-2": "SYS", "1-3": "SYS"}
    policy = decide_nccl_policy(facts(L40S, 4, links, numa=[0, 0, 1, 1]))
    assert policy["suggested_cuda_visible_devices"] is None
    assert any("no 4 GPUs share one socket" in w for w in policy["warnings"])
    # The NODE pairs still get P2P over the host bridge, and TP=4 leaves custom all-reduce to SGLang.
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert fired(policy) == ["R4", "R5", "R7", "R8"]
    assert any("TP=4 over PCIe" in n for n in policy["notes"])


def test_no_gpus_gives_empty_env_and_a_note():
    policy = decide_nccl_policy({"gpu_count": 0, "gpus": [], "links": {}, "p2p_read": {}, "source": "none"})
    assert policy["env"] == {} and policy["server_args"] == {}
    assert policy["notes"] == ["no NVIDIA GPU found (source: none): no NCCL environment needed"]
    assert fired(policy) == ["R7", "R8"]


# --- the other branches of each rule --------------------------------------------------------------------

def test_r2_small_bar1_alone_disables_p2p():
    small = dict(A6000, bar1_total_mib=256)
    policy = decide_nccl_policy(facts(small, 2, "PHB", p2p="OK"))
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"}
    assert "NCCL_P2P_LEVEL" not in policy["env"]


def test_r2_mixed_models_disable_p2p():
    f = facts(A6000, 2, "PHB")
    f["gpus"][1] = dict(RTX4090, bar1_total_mib=32768, index=1, numa_node=0)
    policy = decide_nccl_policy(f)
    assert policy["server_args"] == {"disable_custom_all_reduce": True}
    assert "different GPU models" in policy["rules"][0]["why"]


def test_r2_geforce_without_any_p2p_status_is_treated_as_no_p2p():
    policy = decide_nccl_policy(facts(dict(RTX4090, bar1_total_mib=32768), 2, "PHB", p2p={}))
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"}


def test_r2_only_looks_at_the_tp_group():
    p2p = {"0-1": "OK", "0-2": "CNS", "1-2": "CNS"}
    policy = decide_nccl_policy(facts(A6000, 3, "PHB", p2p=p2p), tp_gpus=[0, 1])
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert decide_nccl_policy(facts(A6000, 3, "PHB", p2p=p2p))["env"] == {"NCCL_P2P_DISABLE": "1"}


def test_r3_switch_pairs_need_no_variable():
    policy = decide_nccl_policy(facts(L40S, 2, "PIX"))
    assert policy["env"] == {} and fired(policy) == ["R3", "R7", "R8"]


def test_r3_acs_redirect_warns_or_fails_when_strict():
    loose = decide_nccl_policy(facts(L40S, 2, "PXB", acs=ACS_ON))
    assert loose["errors"] == [] and len(loose["warnings"]) == 1
    assert "ACS redirect on 1 PCIe bridge(s) 0000:00:01.1" in loose["warnings"][0]
    assert fired(loose) == ["R3", "R6", "R7", "R8"]
    strict = decide_nccl_policy(facts(L40S, 2, "PXB", acs=ACS_ON), strict_acs=True)
    assert strict["warnings"] == [] and strict["errors"] == loose["warnings"]
    assert strict["env"] == {}  # the policy never disables ACS or P2P by itself (R6 is opt-in)


def test_r4_node_pairs_and_translated_iommu_warning():
    translated = {"mode": "translated", "explicit": False, "active": True, "units": ["ivhd0"], "cmdline_args": []}
    policy = decide_nccl_policy(facts(A6000, 2, "NODE", iommu=translated, cpu_vendor="amd"))
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert any("IOMMU in translated DMA mode" in w for w in policy["warnings"])
    assert "already do so on this AMD host" in [r for r in policy["rules"] if r["rule"] == "R4"][0]["why"]


def test_r4_unknown_acs_is_a_note_not_a_warning():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB", acs=None))
    assert policy["warnings"] == []
    assert policy["notes"] == ["ACS state unknown (lspci missing or not run as root): not checked"]


def test_mixed_nvlink_pairs_and_host_bridge():
    links = {"0-1": "PHB", "0-2": "NV4", "0-3": "NODE", "1-2": "NODE", "1-3": "NV4", "2-3": "PHB"}
    policy = decide_nccl_policy(facts(dict(RTX4090, bar1_total_mib=32768), 4, links, p2p="OK"))
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    nv_pair = decide_nccl_policy(facts(dict(RTX4090, bar1_total_mib=32768), 4, links, p2p="OK"), tp_gpus=[0, 2])
    assert nv_pair["env"] == {} and fired(nv_pair)[0] == "R1"


def test_single_gpu_group_and_unknown_gpus():
    one = decide_nccl_policy(facts(A6000, 2, "PHB"), tp_gpus=[1])
    assert one["env"] == {} and "one GPU" in one["notes"][0]
    bad = decide_nccl_policy(facts(A6000, 2, "PHB"), tp_gpus=[0, 5])
    assert bad["errors"] == ["tp_gpus [5] not present on this host (it has GPUs 0-1)"]
    assert decide_nccl_policy(facts(A6000, 2, "PHB"), tp_size=1)["tp_gpus"] == [0]


def test_r8_always_last_and_env_is_strings():
    policy = decide_nccl_policy(facts(RTX4090, 2, "PHB", p2p="NS"), passthrough_env={"NCCL_NCHANNELS": 4})
    assert policy["rules"][-1]["rule"] == "R8"
    assert all(isinstance(v, str) for v in policy["env"].values())


@pytest.mark.parametrize("link", ["PIX", "PXB", "PHB", "NODE", "SYS", "NV2"])
def test_no_p2p_status_ok_never_sets_p2p_level(link):
    policy = decide_nccl_policy(facts(A6000, 2, link, p2p="CNS"))
    assert "NCCL_P2P_LEVEL" not in policy["env"] and policy["env"]["NCCL_P2P_DISABLE"] == "1"
