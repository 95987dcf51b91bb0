# -*- coding: utf-8 -*-
"""The rules of docs/reference/nccl-over-pcie.md as decide_nccl_policy applies them, one or more tests per rule, and the
merge of several tensor-parallel groups into the one environment file a host has."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import BASIS, RULES, decide_nccl_policy, expected_transport

REFERENCE = Path(__file__).resolve().parents[5] / "docs" / "reference" / "nccl-over-pcie.md"

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
        assert entry["basis"].startswith("docs/reference/nccl-over-pcie.md#%s: " % entry["rule"])


def test_rules_are_named_as_the_reference_headings_in_its_order():
    assert RULES == ("nvlink-uses-p2p", "disable-p2p-when-unusable", "pcie-switch-within-cutoff", "host-bridge-needs-p2p-level",
                     "keep-tp-on-one-socket", "iommu-acs-opt-in", "debug-knobs-opt-in", "env-in-unit-file")
    headings = [line[4:].strip() for line in REFERENCE.read_text(encoding="utf-8").splitlines() if line.startswith("### ")]
    assert [h for h in headings if h in RULES] == list(RULES)


# --- acceptance cases of the brief --------------------------------------------------------------------

def test_host_bridge_two_a6000_over_the_host_bridge_get_p2p_level_phb_and_keep_custom_all_reduce():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"))
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert policy["server_args"] == {}
    assert policy["warnings"] == [] and policy["errors"] == []
    assert fired(policy) == ["host-bridge-needs-p2p-level", "debug-knobs-opt-in", "env-in-unit-file"]
    assert "custom all-reduce stays on at TP=2" in policy["rules"][0]["why"]


def test_disable_p2p_geforce_pair_without_p2p_disables_p2p_and_custom_all_reduce():
    policy = decide_nccl_policy(facts(RTX4090, 2, "PHB", p2p="NS"))
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"}
    assert policy["server_args"] == {"disable_custom_all_reduce": True}
    assert fired(policy) == ["disable-p2p-when-unusable", "debug-knobs-opt-in", "env-in-unit-file"]
    why = policy["rules"][0]["why"]
    assert "0-1=NS" in why and "GPU0 BAR1 256 MiB < VRAM/2" in why


def test_nvlink_nvlink_pair_gets_no_p2p_variables():
    policy = decide_nccl_policy(facts(H100, 2, "NV18"))
    assert policy["env"] == {} and policy["server_args"] == {}
    assert fired(policy) == ["nvlink-uses-p2p", "debug-knobs-opt-in", "env-in-unit-file"]
    assert policy["requirements"] == []


def test_nvlink_nvswitch_board_requires_fabric_manager_at_driver_version():
    policy = decide_nccl_policy(facts(H100, 8, "NV18", nvswitch=True), tp_size=8)
    assert policy["env"] == {}
    assert policy["requirements"] == ["nvidia-fabricmanager 580.105.08 running"]
    assert any("fabricmanager" in n for n in policy["notes"])
    assert policy["tp_gpus"] == list(range(8))


def test_debug_knobs_debugging_knobs_only_by_explicit_pass_through():
    default = decide_nccl_policy(facts(A6000, 2, "PHB"))
    knobs = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_NCHANNELS", "NCCL_BUFFSIZE", "NCCL_SHM_DISABLE", "NCCL_DEBUG")
    assert not any(k in default["env"] for k in knobs)
    assert default["rules"][-2] == {"rule": "debug-knobs-opt-in", "why": "no debugging knobs requested, none set",
                                    "basis": BASIS["debug-knobs-opt-in"]}
    asked = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_DEBUG": "INFO", "NCCL_ALGO": "Ring"})
    assert asked["env"] == {"NCCL_P2P_LEVEL": "PHB", "NCCL_DEBUG": "INFO", "NCCL_ALGO": "Ring"}
    assert "NCCL_ALGO, NCCL_DEBUG" in asked["rules"][-2]["why"]
    assert any("remove them" in n for n in asked["notes"])


def test_debug_knobs_pass_through_wins_and_says_so():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_P2P_DISABLE": 1, "NCCL_P2P_LEVEL": "LOC"})
    assert policy["env"] == {"NCCL_P2P_LEVEL": "LOC", "NCCL_P2P_DISABLE": "1"}
    assert policy["warnings"] == ["pass-through NCCL_P2P_LEVEL=LOC overrides the rules' NCCL_P2P_LEVEL=PHB"]


def test_debug_knobs_warns_about_shm_disable_on_one_host():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), passthrough_env={"NCCL_SHM_DISABLE": "1"})
    assert policy["env"]["NCCL_SHM_DISABLE"] == "1"
    assert any("NCCL_SHM_DISABLE=1" in w for w in policy["warnings"])


def test_one_socket_group_across_sockets_warns_and_suggests_one_numa_node():
    links = {"0-1": "NODE", "2-3": "NODE", "0-2": "SYS", "0-3": "SYS", "1-2": "SYS", "1-3": "SYS"}
    policy = decide_nccl_policy(facts(L40S, 4, links, numa=[0, 0, 1, 1]), tp_gpus=[1, 2])
    assert policy["suggested_cuda_visible_devices"] == "0,1"
    assert "CUDA_VISIBLE_DEVICES" not in policy["env"]
    assert policy["env"] == {}  # SYS is past the PHB level: no P2P variable for this pair
    assert fired(policy) == ["keep-tp-on-one-socket", "debug-knobs-opt-in", "env-in-unit-file"]
    assert policy["warnings"] == ["TP group [1, 2] spans sockets (SYS pairs ['1-2']; NUMA 0: [1], NUMA 1: [2]): "
                                  "set CUDA_VISIBLE_DEVICES=0,1 to keep it on one NUMA node"]


def test_one_socket_warns_when_no_socket_holds_the_whole_group():
    links = {"0-1": "NODE", "2-3": "NODE", "0-2": "SYS", "0-3": "SYS", "1-2": "SYS", "1-3": "SYS"}
    policy = decide_nccl_policy(facts(L40S, 4, links, numa=[0, 0, 1, 1]))
    assert policy["suggested_cuda_visible_devices"] is None
    assert any("no 4 GPUs share one socket" in w for w in policy["warnings"])
    # The NODE pairs still get P2P over the host bridge, and TP=4 leaves custom all-reduce to SGLang.
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert fired(policy) == ["host-bridge-needs-p2p-level", "keep-tp-on-one-socket", "debug-knobs-opt-in", "env-in-unit-file"]
    assert any("TP=4 over PCIe" in n for n in policy["notes"])


def test_no_gpus_gives_empty_env_and_a_note():
    policy = decide_nccl_policy({"gpu_count": 0, "gpus": [], "links": {}, "p2p_read": {}, "source": "none"})
    assert policy["env"] == {} and policy["server_args"] == {}
    assert policy["notes"] == ["no NVIDIA GPU found (source: none): no NCCL environment needed"]
    assert fired(policy) == ["debug-knobs-opt-in", "env-in-unit-file"]


# --- the other branches of each rule --------------------------------------------------------------------

def test_disable_p2p_small_bar1_alone_disables_p2p():
    small = dict(A6000, bar1_total_mib=256)
    policy = decide_nccl_policy(facts(small, 2, "PHB", p2p="OK"))
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"}
    assert "NCCL_P2P_LEVEL" not in policy["env"]


def test_disable_p2p_mixed_models_disable_p2p():
    f = facts(A6000, 2, "PHB")
    f["gpus"][1] = dict(RTX4090, bar1_total_mib=32768, index=1, numa_node=0)
    policy = decide_nccl_policy(f)
    assert policy["server_args"] == {"disable_custom_all_reduce": True}
    assert "different GPU models" in policy["rules"][0]["why"]


def test_disable_p2p_geforce_without_any_p2p_status_is_treated_as_no_p2p():
    policy = decide_nccl_policy(facts(dict(RTX4090, bar1_total_mib=32768), 2, "PHB", p2p={}))
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"}


def test_disable_p2p_only_looks_at_the_tp_group():
    p2p = {"0-1": "OK", "0-2": "CNS", "1-2": "CNS"}
    policy = decide_nccl_policy(facts(A6000, 3, "PHB", p2p=p2p), tp_gpus=[0, 1])
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert decide_nccl_policy(facts(A6000, 3, "PHB", p2p=p2p))["env"] == {"NCCL_P2P_DISABLE": "1"}


def test_pcie_switch_switch_pairs_need_no_variable():
    policy = decide_nccl_policy(facts(L40S, 2, "PIX"))
    assert policy["env"] == {} and fired(policy) == ["pcie-switch-within-cutoff", "debug-knobs-opt-in", "env-in-unit-file"]


def test_pcie_switch_acs_redirect_warns_or_fails_when_strict():
    loose = decide_nccl_policy(facts(L40S, 2, "PXB", acs=ACS_ON))
    assert loose["errors"] == [] and len(loose["warnings"]) == 1
    assert "ACS redirect on 1 PCIe bridge(s) 0000:00:01.1" in loose["warnings"][0]
    assert fired(loose) == ["pcie-switch-within-cutoff", "iommu-acs-opt-in", "debug-knobs-opt-in", "env-in-unit-file"]
    strict = decide_nccl_policy(facts(L40S, 2, "PXB", acs=ACS_ON), strict_acs=True)
    assert strict["warnings"] == [] and strict["errors"] == loose["warnings"]
    assert strict["env"] == {}  # the policy never disables ACS or P2P by itself (iommu-acs-opt-in)


def test_host_bridge_node_pairs_and_translated_iommu_warning():
    translated = {"mode": "translated", "explicit": False, "active": True, "units": ["ivhd0"], "cmdline_args": []}
    policy = decide_nccl_policy(facts(A6000, 2, "NODE", iommu=translated, cpu_vendor="amd"))
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert any("IOMMU in translated DMA mode" in w for w in policy["warnings"])
    assert "already do so on this AMD host" in [r for r in policy["rules"] if r["rule"] == "host-bridge-needs-p2p-level"][0]["why"]


def test_host_bridge_unknown_acs_is_a_note_not_a_warning():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB", acs=None))
    assert policy["warnings"] == []
    assert policy["notes"] == ["ACS state unknown (lspci missing or not run as root): not checked"]


def test_mixed_nvlink_pairs_and_host_bridge():
    links = {"0-1": "PHB", "0-2": "NV4", "0-3": "NODE", "1-2": "NODE", "1-3": "NV4", "2-3": "PHB"}
    policy = decide_nccl_policy(facts(dict(RTX4090, bar1_total_mib=32768), 4, links, p2p="OK"))
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    nv_pair = decide_nccl_policy(facts(dict(RTX4090, bar1_total_mib=32768), 4, links, p2p="OK"), tp_gpus=[0, 2])
    assert nv_pair["env"] == {} and fired(nv_pair)[0] == "nvlink-uses-p2p"


def test_single_gpu_group_and_unknown_gpus():
    one = decide_nccl_policy(facts(A6000, 2, "PHB"), tp_gpus=[1])
    assert one["env"] == {} and "one GPU" in one["notes"][0]
    bad = decide_nccl_policy(facts(A6000, 2, "PHB"), tp_gpus=[0, 5])
    assert bad["errors"] == ["tp_gpus [5] not present on this host (it has GPUs 0-1)"]
    assert decide_nccl_policy(facts(A6000, 2, "PHB"), tp_size=1)["tp_gpus"] == [0]


def test_env_in_unit_file_always_last_and_env_is_strings():
    policy = decide_nccl_policy(facts(RTX4090, 2, "PHB", p2p="NS"), passthrough_env={"NCCL_NCHANNELS": 4})
    assert policy["rules"][-1]["rule"] == "env-in-unit-file"
    assert all(isinstance(v, str) for v in policy["env"].values())


@pytest.mark.parametrize("link", ["PIX", "PXB", "PHB", "NODE", "SYS", "NV2"])
def test_no_p2p_status_ok_never_sets_p2p_level(link):
    policy = decide_nccl_policy(facts(A6000, 2, link, p2p="CNS"))
    assert "NCCL_P2P_LEVEL" not in policy["env"] and policy["env"]["NCCL_P2P_DISABLE"] == "1"


# --- the TP group is the server's, not the host's -------------------------------------------------------------

FOUR_L40S = {"0-1": "NODE", "2-3": "NODE", "0-2": "SYS", "0-3": "SYS", "1-2": "SYS", "1-3": "SYS"}


def test_tp_1_on_one_of_four_gpus_needs_no_nccl_environment():
    policy = decide_nccl_policy(facts(L40S, 4, FOUR_L40S, numa=[0, 0, 1, 1]), groups={"main": [0]})
    assert policy["env"] == {} and policy["server_args"] == {}
    assert policy["warnings"] == [] and policy["errors"] == [] and policy["suggested_cuda_visible_devices"] is None
    assert policy["notes"] == ["tensor-parallel group [0] has one GPU: no inter-GPU traffic, no NCCL environment needed"]
    assert fired(policy) == ["debug-knobs-opt-in", "env-in-unit-file"]
    assert policy["tp_gpus"] == [0] and policy["expected_transport"] is None
    assert policy["groups"] == [{"name": "main", "tp_gpus": [0], "env": {}, "server_args": {}, "expected_transport": None,
                                 "suggested_cuda_visible_devices": None}]


def test_tp_2_on_gpus_0_and_1_of_four_stays_on_its_socket():
    policy = decide_nccl_policy(facts(L40S, 4, FOUR_L40S, numa=[0, 0, 1, 1]), groups={"main": [1, 0]})
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"} and policy["warnings"] == []
    assert fired(policy) == ["host-bridge-needs-p2p-level", "debug-knobs-opt-in", "env-in-unit-file"]
    assert policy["rules"][0]["why"] == ("pairs ['0-1'] are PHB/NODE with driver P2P OK: NCCL_P2P_LEVEL=PHB enables P2P over "
                                         "the host bridge; custom all-reduce stays on at TP=2")
    assert policy["tp_gpus"] == [0, 1] and policy["expected_transport"] == "P2P"
    assert policy["groups"][0]["env"] == {"NCCL_P2P_LEVEL": "PHB"}


def test_one_group_is_the_same_decision_as_tp_gpus_under_its_own_name():
    host = facts(A6000, 2, "PHB")
    named = decide_nccl_policy(host, groups={"main": [0, 1]})
    plain = decide_nccl_policy(host, [0, 1])
    assert plain["groups"][0]["name"] == "tp_gpus" and named["groups"][0]["name"] == "main"
    assert dict(named, groups=None) == dict(plain, groups=None)
    assert decide_nccl_policy(host)["groups"][0]["name"] == "all GPUs"
    assert decide_nccl_policy(host, tp_size=1)["groups"][0]["name"] == "tp_size"


def test_two_groups_one_per_socket_share_the_file_without_a_socket_warning():
    policy = decide_nccl_policy(facts(L40S, 4, FOUR_L40S, numa=[0, 0, 1, 1]), groups={"a": [0, 1], "b": [2, 3]})
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"} and policy["errors"] == [] and policy["warnings"] == []
    assert fired(policy) == ["host-bridge-needs-p2p-level", "host-bridge-needs-p2p-level", "debug-knobs-opt-in", "env-in-unit-file"]
    assert [r["why"].split(":")[0] for r in policy["rules"][:2]] == ["a", "b"]
    assert policy["rules"][1]["why"].startswith("b: pairs ['2-3'] are PHB/NODE")
    assert policy["tp_gpus"] == [0, 1, 2, 3] and policy["expected_transport"] == "P2P"
    assert [(g["name"], g["tp_gpus"], g["expected_transport"]) for g in policy["groups"]] == [("a", [0, 1], "P2P"), ("b", [2, 3], "P2P")]
    # Deciding for the four GPUs together would warn about the socket link no server crosses.
    assert decide_nccl_policy(facts(L40S, 4, FOUR_L40S, numa=[0, 0, 1, 1]))["tagged_warnings"][0].startswith("keep-tp-on-one-socket: ")


def test_a_one_gpu_instance_fits_beside_a_tp_2_one():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), groups={"main": [0, 1], "small": [1]})
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"} and policy["errors"] == []
    assert policy["notes"] == ["small: tensor-parallel group [1] has one GPU: no inter-GPU traffic, no NCCL environment needed"]
    assert [g["expected_transport"] for g in policy["groups"]] == ["P2P", None]
    assert policy["expected_transport"] == "P2P"


def test_groups_whose_variables_only_widen_the_cutoff_are_merged():
    links = dict(FOUR_L40S, **{"0-1": "PIX"})
    policy = decide_nccl_policy(facts(L40S, 4, links, numa=[0, 0, 1, 1]), groups={"a": [0, 1], "b": [2, 3]})
    assert [g["env"] for g in policy["groups"]] == [{}, {"NCCL_P2P_LEVEL": "PHB"}]
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"} and policy["errors"] == []
    assert [g["expected_transport"] for g in policy["groups"]] == ["P2P", "P2P"]


def test_groups_that_need_different_transports_cannot_share_the_file():
    p2p = {k: ("NS" if k == "2-3" else "OK") for k in FOUR_L40S}
    policy = decide_nccl_policy(facts(L40S, 4, FOUR_L40S, p2p=p2p, numa=[0, 0, 1, 1]), groups={"a": [0, 1], "b": [2, 3]})
    assert policy["tagged_errors"] == [
        "tp-group: a (GPUs [0, 1]) needs NCCL_P2P_LEVEL=PHB, but b adds NCCL_P2P_DISABLE=1 to the environment file all "
        "instances share: NCCL would use SHM instead of P2P in a, and SGLang flags disable_custom_all_reduce: true would "
        "reach it too. Run these instances on separate hosts, or set gpu_tuning_tp_gpus to decide once for the GPUs of "
        "all of them (docs/gpu-host.md#several-instances-on-one-host)"]
    assert policy["expected_transport"] is None and [g["expected_transport"] for g in policy["groups"]] == [None, None]
    assert [g["env"] for g in policy["groups"]] == [{"NCCL_P2P_LEVEL": "PHB"}, {"NCCL_P2P_DISABLE": "1"}]


def test_pass_through_applies_once_to_the_shared_file():
    policy = decide_nccl_policy(facts(L40S, 4, FOUR_L40S, numa=[0, 0, 1, 1]), groups={"a": [0, 1], "b": [2, 3]},
                                passthrough_env={"NCCL_DEBUG": "INFO"})
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB", "NCCL_DEBUG": "INFO"}
    assert [r["why"] for r in policy["rules"] if r["rule"] == "debug-knobs-opt-in"] == ["explicit pass-through of NCCL_DEBUG"]
    assert policy["rules"][-1]["rule"] == "env-in-unit-file"


def test_an_unknown_gpu_in_one_group_is_an_error_named_by_its_group():
    policy = decide_nccl_policy(facts(A6000, 2, "PHB"), groups={"a": [0, 1], "b": [5]})
    assert policy["tagged_errors"] == ["facts: b: tp_gpus [5] not present on this host (it has GPUs 0-1)"]
    assert policy["env"] == {"NCCL_P2P_LEVEL": "PHB"} and policy["expected_transport"] is None


@pytest.mark.parametrize("link,env,want", [
    ("PHB", {"NCCL_P2P_LEVEL": "PHB"}, "P2P"),
    ("PHB", {}, "SHM"),  # past NCCL's default PXB cutoff
    ("PXB", {}, "P2P"),
    ("NODE", {"NCCL_P2P_LEVEL": "phb"}, "P2P"),
    ("SYS", {"NCCL_P2P_LEVEL": "PHB"}, "SHM"),
    ("NV4", {"NCCL_P2P_DISABLE": "1"}, "SHM"),
    ("NV4", {}, "P2P"),
    ("NV4", {"NCCL_P2P_LEVEL": "LOC"}, "SHM"),  # LOC: never P2P, not even over NVLink
    ("PIX", {"NCCL_P2P_LEVEL": "LOC"}, "SHM"),
])
def test_expected_transport_follows_nccls_p2p_cutoff(link, env, want):
    assert expected_transport(facts(A6000, 2, link), [0, 1], env) == want


def test_expected_transport_without_traffic_or_topology():
    assert expected_transport(facts(A6000, 2, "PHB"), [1], {}) is None
    assert expected_transport(facts(A6000, 2, {}), [0, 1], {"NCCL_P2P_LEVEL": "SYS"}) == "SHM"
