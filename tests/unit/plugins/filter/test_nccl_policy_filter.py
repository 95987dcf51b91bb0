# -*- coding: utf-8 -*-
"""The gpufleet.sglang.nccl_policy filter: the pure policy behind Jinja, the TP groups it reads from the SGLang
servers' arguments (one instance, several, the explicit override), the environment file it renders, the transport
the verification all-reduce must log, input errors as filter errors, and its documentation sidecar.

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
        "gpus": [{"index": i, "name": g["name"], "uuid": g["uuid"], "memory_total_mib": g["memory_total_mib"], "bar1_total_mib": g["bar1_total_mib"],
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


def test_filter_is_registered_and_returns_the_pure_policy_plus_file_and_source():
    assert FilterModule().filters()["nccl_policy"] is nccl_policy
    facts = profile_facts("a6000x2-pcie-phb")
    result = nccl_policy(facts, tp_gpus=[0, 1])
    pure = decide_nccl_policy(facts, [0, 1])
    assert result["groups"][0].pop("source") == "tp_gpus: GPUs [0, 1], given explicitly"
    assert {k: v for k, v in result.items() if k != "env_file"} == pure


def test_two_a6000_behind_the_host_bridge_get_p2p_level_phb_in_the_file():
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"))
    assert result["env"] == {"NCCL_P2P_LEVEL": "PHB"} and result["server_args"] == {}
    assert result["expected_transport"] == "P2P"
    text = result["env_file"]
    assert text.endswith("\nNCCL_P2P_LEVEL=PHB\n")
    assert "# Rules that fired: host-bridge-needs-p2p-level, debug-knobs-opt-in, env-in-unit-file\n" in text
    assert any(line.startswith("# host-bridge-needs-p2p-level: pairs ['0-1'] are PHB/NODE") for line in text.splitlines())
    assert text.splitlines()[:3] == list(plugin.HEADER)
    assert plugin.HEADER[2] == "# rules of docs/reference/nccl-over-pcie.md. Host-wide /etc/nccl.conf is never used (env-in-unit-file)."


def test_two_geforce_4090_without_p2p_disable_p2p_and_custom_all_reduce():
    result = nccl_policy(profile_facts("rtx4090x2-pcie-nop2p"))
    assert result["env"] == {"NCCL_P2P_DISABLE": "1"}
    assert result["server_args"] == {"disable_custom_all_reduce": True}
    assert result["expected_transport"] == "SHM"
    assert env_lines(result["env_file"]) == ["NCCL_P2P_DISABLE=1"]
    assert "# Rules that fired: disable-p2p-when-unusable, debug-knobs-opt-in, env-in-unit-file" in result["env_file"]


def test_nvswitch_board_needs_no_p2p_variable_but_a_fabric_manager():
    result = nccl_policy(profile_facts("h100x8-nvswitch"))
    assert result["env"] == {} and env_lines(result["env_file"]) == []
    assert result["requirements"] == ["nvidia-fabricmanager 580.105.08 running"]
    assert result["expected_transport"] == "P2P"


def test_group_across_sockets_is_tagged_with_its_rule_and_expects_shm():
    result = nccl_policy(profile_facts("l40sx4-pcie-sys"), tp_gpus=["1", 2])
    assert result["tp_gpus"] == [1, 2]
    assert result["suggested_cuda_visible_devices"] == "0,1"
    tag = "keep-tp-on-one-socket: "
    assert result["tagged_warnings"] and all(w.startswith(tag) for w in result["tagged_warnings"])
    assert [w[len(tag):] for w in result["tagged_warnings"]] == result["warnings"]
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
    assert loose["tagged_warnings"] == ["host-bridge-needs-p2p-level: " + loose["warnings"][0]] and loose["errors"] == []
    assert strict["tagged_errors"] == ["host-bridge-needs-p2p-level: " + strict["errors"][0]] and strict["warnings"] == []
    assert strict["expected_transport"] is None


def test_passthrough_is_stringified_quoted_for_systemd_and_tagged_with_its_rule():
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"),
                         passthrough_env={"NCCL_P2P_LEVEL": "LOC", "NCCL_DEBUG": "INFO", "NCCL_IB_DISABLE": True,
                                          "NCCL_DEBUG_FILE": '/var/log/nccl "%h".log'})
    assert result["env"]["NCCL_IB_DISABLE"] == "1"
    assert result["tagged_warnings"] == ["debug-knobs-opt-in: pass-through NCCL_P2P_LEVEL=LOC overrides the rules' NCCL_P2P_LEVEL=PHB"]
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
    assert options == {"tp_gpus", "tp_size", "servers", "server_extra_args", "server_env", "strict_acs", "passthrough_env"}
    assert doc["DOCUMENTATION"]["name"] == "nccl_policy"
    returned = set(doc["RETURN"]["_value"]["contains"])
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"))
    assert returned == set(result)
    assert "{name, source, tp_gpus, env, server_args, expected_transport," in doc["RETURN"]["_value"]["contains"]["groups"]["description"][0]
    assert set(result["groups"][0]) == {"name", "source", "tp_gpus", "env", "server_args", "expected_transport", "suggested_cuda_visible_devices"}
    assert plugin.HEADER[0].startswith("# Managed by Ansible")


# --- the TP groups of the SGLang servers ------------------------------------------------------------------------

def one(args, env=None, name="main"):
    """The servers list decide.yml builds for a single instance."""
    return [{"name": name, "args": args, "env": env or {}}]


def test_lab_l40s_host_tp_1_on_one_of_four_gpus_gets_no_variable():
    # inventory/lab/group_vars/l40s_pcie.yml: tp_size 1, CUDA_VISIBLE_DEVICES "0" in sglang_server_env.
    result = nccl_policy(profile_facts("l40sx4-pcie-sys"), servers=one({"model_path": "Qwen/Qwen3-0.6B", "tp_size": 1}),
                         server_env={"CUDA_VISIBLE_DEVICES": "0", "SGLANG_STANDIN_PROFILE": "test-fast"})
    assert result["env"] == {} and env_lines(result["env_file"]) == []
    assert result["warnings"] == [] and result["errors"] == [] and result["tp_gpus"] == [0]
    assert result["notes"] == ["tensor-parallel group [0] has one GPU: no inter-GPU traffic, no NCCL environment needed"]
    assert result["groups"][0]["source"] == ("main: CUDA devices [0] = GPUs [0] (CUDA_VISIBLE_DEVICES=0) from tp_size 1, "
                                             "base_gpu_id 0, gpu_id_step 1")
    assert result["expected_transport"] is None
    # What the host got before the group came from the server: all four GPUs, a variable and a socket warning.
    everything = nccl_policy(profile_facts("l40sx4-pcie-sys"))
    assert everything["env"] == {"NCCL_P2P_LEVEL": "PHB"} and everything["tagged_warnings"][0].startswith("keep-tp-on-one-socket: ")


def test_tp_2_on_gpus_0_and_1_of_four_needs_the_host_bridge_level_and_no_warning():
    result = nccl_policy(profile_facts("l40sx4-pcie-sys"), servers=one({"tp_size": 2}))
    assert result["tp_gpus"] == [0, 1] and result["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert result["tagged_warnings"] == [] and result["expected_transport"] == "P2P"
    assert result["groups"][0]["source"] == "main: GPUs [0, 1] from tp_size 2, base_gpu_id 0, gpu_id_step 1"


def test_base_gpu_id_moves_the_group_and_gpu_id_step_spreads_it():
    facts = profile_facts("l40sx4-pcie-sys")
    moved = nccl_policy(facts, servers=one({"tp_size": 2, "base_gpu_id": 2}))
    assert moved["tp_gpus"] == [2, 3] and moved["env"] == {"NCCL_P2P_LEVEL": "PHB"} and moved["warnings"] == []
    spread = nccl_policy(facts, servers=one({"tp-size": 2, "gpu-id-step": 2}))
    assert spread["tp_gpus"] == [0, 2] and spread["suggested_cuda_visible_devices"] == "0,1"
    assert spread["tagged_warnings"] == ["keep-tp-on-one-socket: TP group [0, 2] spans sockets (SYS pairs ['0-2']; NUMA 0: [0], "
                                         "NUMA 1: [2]): set CUDA_VISIBLE_DEVICES=0,1 to keep it on one NUMA node"]
    offset_visible = nccl_policy(facts, servers=one({"base_gpu_id": 1}, {"CUDA_VISIBLE_DEVICES": "3,2"}))
    assert offset_visible["tp_gpus"] == [2]


def test_cuda_visible_devices_by_index_or_uuid_picks_the_host_gpus():
    facts = profile_facts("l40sx4-pcie-sys")
    by_index = nccl_policy(facts, servers=one({"tensor_parallel_size": 2}, {"CUDA_VISIBLE_DEVICES": "2,3"}))
    assert by_index["tp_gpus"] == [2, 3] and by_index["warnings"] == []
    uuids = ",".join(facts["gpus"][i]["uuid"] for i in (3, 2))
    by_uuid = nccl_policy(facts, servers=one({"tp_size": 2}, {"CUDA_VISIBLE_DEVICES": uuids}))
    assert by_uuid["tp_gpus"] == [2, 3]


def test_the_explicit_override_wins_over_the_servers():
    facts = profile_facts("l40sx4-pcie-sys")
    servers = one({"tp_size": 1}, {"CUDA_VISIBLE_DEVICES": "0"})
    result = nccl_policy(facts, tp_gpus=[2, 3], servers=servers)
    assert result["tp_gpus"] == [2, 3] and result["env"] == {"NCCL_P2P_LEVEL": "PHB"}
    assert [(g["name"], g["source"]) for g in result["groups"]] == [("tp_gpus", "tp_gpus: GPUs [2, 3], given explicitly")]
    assert nccl_policy(facts, tp_size=2, servers=servers)["tp_gpus"] == [0, 1]


def test_extra_args_are_merged_over_every_instance_last():
    result = nccl_policy(profile_facts("l40sx4-pcie-sys"), servers=one({"tp_size": 1}), server_extra_args={"tp_size": 2})
    assert result["tp_gpus"] == [0, 1] and result["env"] == {"NCCL_P2P_LEVEL": "PHB"}


def test_no_server_arguments_decide_for_every_gpu():
    facts = profile_facts("a6000x2-pcie-phb")
    for servers in (None, []):
        result = nccl_policy(facts, servers=servers)
        assert result["tp_gpus"] == [0, 1]
        assert result["groups"][0]["source"] == "all GPUs: every GPU of the host (no server arguments given)"
    # Server arguments without tp_size are SGLang's default, TP 1.
    assert nccl_policy(facts, servers=one({}))["tp_gpus"] == [0]


def test_molecule_default_two_instances_one_on_a_pair_one_on_a_single_gpu():
    # molecule/default/converge.yml: main TP 2 on CUDA_VISIBLE_DEVICES 0,1; small (TP 1) on GPU 1.
    servers = [{"name": "main", "args": {"tp_size": 2}, "env": {"CUDA_VISIBLE_DEVICES": "0,1"}},
               {"name": "small", "args": {"port": 30001}, "env": {"CUDA_VISIBLE_DEVICES": "1"}}]
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"), servers=servers, server_env={"SGLANG_STANDIN_PACE_SCALE": "1"})
    assert result["env"] == {"NCCL_P2P_LEVEL": "PHB"} and result["errors"] == [] and result["warnings"] == []
    assert env_lines(result["env_file"]) == ["NCCL_P2P_LEVEL=PHB"]
    assert [(g["name"], g["tp_gpus"], g["expected_transport"]) for g in result["groups"]] == [("main", [0, 1], "P2P"), ("small", [1], None)]
    assert result["notes"] == ["small: tensor-parallel group [1] has one GPU: no inter-GPU traffic, no NCCL environment needed"]
    assert "# host-bridge-needs-p2p-level: main: pairs ['0-1'] are PHB/NODE" in result["env_file"]
    assert result["expected_transport"] == "P2P"


def test_instances_on_the_same_gpus_are_one_group():
    servers = [{"name": "a", "args": {"tp_size": 2}}, {"name": "b", "args": {"tp_size": 2, "port": 30001}}]
    result = nccl_policy(profile_facts("a6000x2-pcie-phb"), servers=servers)
    assert [g["name"] for g in result["groups"]] == ["a, b"]
    assert result["groups"][0]["source"] == ("a: GPUs [0, 1] from tp_size 2, base_gpu_id 0, gpu_id_step 1; "
                                             "b: GPUs [0, 1] from tp_size 2, base_gpu_id 0, gpu_id_step 1")
    assert not any(r["why"].startswith("a, b: ") for r in result["rules"])  # one group: nothing to tell apart


def test_instances_needing_different_settings_fail_with_the_instances_named():
    facts = profile_facts("l40sx4-pcie-sys")
    facts["p2p_read"]["2-3"] = "NS"
    servers = [{"name": "big", "args": {"tp_size": 2}}, {"name": "other", "args": {"tp_size": 2, "base_gpu_id": 2}}]
    result = nccl_policy(facts, servers=servers)
    assert len(result["tagged_errors"]) == 1
    assert result["tagged_errors"][0].startswith(
        "tp-group: big (GPUs [0, 1]) needs NCCL_P2P_LEVEL=PHB, but other adds NCCL_P2P_DISABLE=1 to the environment file")
    assert result["expected_transport"] is None


def test_data_parallel_replicas_are_groups_of_their_own_and_pipeline_stages_one():
    facts = profile_facts("l40sx4-pcie-sys")
    dp = nccl_policy(facts, servers=one({"tp_size": 2, "dp_size": 2}))
    assert [(g["name"], g["tp_gpus"]) for g in dp["groups"]] == [("main dp0", [0, 1]), ("main dp1", [2, 3])]
    assert dp["env"] == {"NCCL_P2P_LEVEL": "PHB"} and dp["warnings"] == []
    attention = nccl_policy(facts, servers=one({"tp_size": 2, "dp_size": 2, "enable_dp_attention": True}))
    assert attention["tp_gpus"] == [0, 1] and len(attention["groups"]) == 1
    pp = nccl_policy(facts, servers=one({"tp_size": 2, "pp_size": 2}))
    assert pp["tp_gpus"] == [0, 1, 2, 3] and pp["tagged_warnings"][0].startswith("keep-tp-on-one-socket: ")
    assert nccl_policy(facts, servers=one({"tp_size": 4, "nnodes": 2}))["tp_gpus"] == [0, 1]


@pytest.mark.parametrize("args,env,message", [
    ({"tp_size": 8}, {}, "tp-group: main: tp_size 8, base_gpu_id 0, gpu_id_step 1 needs GPUs [0, 1, 2, 3, 4, 5, 6, 7], "
                         "but this host has GPUs 0-3"),
    ({"tp_size": 2}, {"CUDA_VISIBLE_DEVICES": "3"}, "tp-group: main: its TP ranks run on CUDA devices [0, 1], but "
                                                    "CUDA_VISIBLE_DEVICES=3 shows 1 GPU(s)"),
    ({}, {"CUDA_VISIBLE_DEVICES": "MIG-4f1c"}, "tp-group: main: CUDA_VISIBLE_DEVICES=MIG-4f1c: 'MIG-4f1c' is not a GPU index or "
                                               "the UUID of one GPU of this host (MIG instances cannot be placed on the "
                                               "topology): set gpu_tuning_tp_gpus"),
    ({}, {"CUDA_VISIBLE_DEVICES": "7"}, "tp-group: main: CUDA_VISIBLE_DEVICES=7 names GPU 7, which this host lacks (it has GPUs 0-3)"),
    ({}, {"CUDA_VISIBLE_DEVICES": " "}, "tp-group: main: CUDA_VISIBLE_DEVICES is empty: SGLang would see no GPU"),
    ({"tp_size": "two"}, {}, "tp-group: main: tp_size must be a whole number >= 1, not 'two'"),
    ({"gpu_id_step": 0}, {}, "tp-group: main: gpu_id_step must be a whole number >= 1, not 0"),
    ({"tp_size": 2, "dp_size": 2, "nnodes": 2}, {}, "tp-group: main: dp_size 2 across 2 nodes: SGLang refuses --dp-size > 1 across "
                                                    "nodes (docs/reference/sglang.md#multi-node-and-shutdown)"),
])
def test_a_group_that_cannot_be_found_is_a_tagged_error(args, env, message):
    result = nccl_policy(profile_facts("l40sx4-pcie-sys"), servers=one(args, env))
    assert result["tagged_errors"] == [message]
    assert result["expected_transport"] is None
    assert result["groups"][0]["source"] == "all GPUs: every GPU of the host (no instance's TP group could be found)"


def test_mixed_models_without_pci_bus_order_warn_that_cuda_may_count_differently():
    facts = profile_facts("l40sx4-pcie-sys")
    facts["gpus"][3]["name"] = "NVIDIA RTX A6000"
    warned = nccl_policy(facts, servers=one({"tp_size": 2}))
    assert warned["tagged_warnings"][0].startswith("tp-group: main: GPU models differ on this host and CUDA_DEVICE_ORDER is not "
                                                   "PCI_BUS_ID")
    ordered = nccl_policy(facts, servers=one({"tp_size": 2}, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}))
    assert ordered["tagged_warnings"] == []


def test_a_host_without_gpus_ignores_the_servers():
    result = nccl_policy({"gpu_count": 0, "gpus": [], "links": {}, "source": "none"}, servers=one({"tp_size": 2}))
    assert result["errors"] == [] and result["notes"] == ["no NVIDIA GPU found (source: none): no NCCL environment needed"]


@pytest.mark.parametrize("kwargs,match", [
    ({"servers": {"name": "main"}}, "servers must be a list"),
    ({"servers": ["main"]}, r"servers\[0\] must be a dict"),
    ({"servers": [{"name": "main", "args": [1]}]}, "the args of main must be a dict"),
    ({"servers": one({}), "server_env": "CUDA_VISIBLE_DEVICES=0"}, "server_env must be a dict"),
])
def test_bad_server_input_is_a_filter_error(kwargs, match):
    with pytest.raises(AnsibleFilterError, match=match):
        nccl_policy(profile_facts("a6000x2-pcie-phb"), **kwargs)
