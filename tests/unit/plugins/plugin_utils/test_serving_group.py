# -*- coding: utf-8 -*-
"""A serving group's launch settings: nnodes, stable ranks with overrides, rank 0's rendezvous address, the socket
interface each node uses, and every bad input refused with the variable named."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import (
    ServingGroupError, interfaces_from_facts, interfaces_from_ip, members_from_hostvars, natural_key, serving_group, serving_group_mismatches,
    serving_group_verdict)


def facts(*interfaces, default=None):
    """ansible_facts with the given (device, address, netmask) interfaces; default_ipv4 = the first one's."""
    result = {"interfaces": ["lo"] + [interface[0] for interface in interfaces],
              "lo": {"device": "lo", "ipv4": {"address": "127.0.0.1", "netmask": "255.0.0.0"}}}
    for name, address, netmask in interfaces:
        result[name.replace("-", "_")] = {"device": name, "ipv4": {"address": address, "netmask": netmask}}
    if interfaces:
        result["default_ipv4"] = {"address": default or interfaces[0][1]}
    return result


def members(**hosts):
    return {name: {"facts": value} for name, value in hosts.items()}


TWO = members(lab2=facts(("host0", "10.88.5.12", "255.255.255.0")),
              lab1=facts(("host0", "10.88.5.11", "255.255.255.0")))
ARGS = {"tp_size": 4, "model_path": "/m"}


def test_two_hosts_form_one_group_ranked_in_stable_order():
    result = serving_group("tp4", TWO, 20000, ARGS)
    assert set(result) == {"lab1", "lab2"}
    assert result["lab1"]["node_rank"] == 0 and result["lab2"]["node_rank"] == 1
    for host in result.values():
        assert host["nnodes"] == 2
        assert host["dist_init_addr"] == "10.88.5.11:20000"
        assert host["leader"] == "lab1"
        assert host["members"] == ["lab1", "lab2"]
        assert host["env"] == {"NCCL_SOCKET_IFNAME": "host0", "GLOO_SOCKET_IFNAME": "host0"}
    assert result["lab2"]["args"] == {"nnodes": 2, "node_rank": 1, "dist_init_addr": "10.88.5.11:20000"}


def test_the_order_is_natural_not_alphabetic():
    group = members(**{name: facts(("eth0", "10.0.0.%d" % i, "255.255.255.0")) for i, name in
                       enumerate(["node10", "node2", "node1"], start=1)})
    result = serving_group("g", group, "20000", {"tp_size": 3})
    assert result["node1"]["members"] == ["node1", "node2", "node10"]
    assert natural_key("lab2") < natural_key("lab10")


def test_an_override_takes_its_rank_and_the_others_fill_the_rest():
    group = members(a=facts(("eth0", "10.0.0.1", "255.255.255.0")), b=facts(("eth0", "10.0.0.2", "255.255.255.0")),
                    c=facts(("eth0", "10.0.0.3", "255.255.255.0")), d=facts(("eth0", "10.0.0.4", "255.255.255.0")))
    group["c"]["node_rank"] = 0
    group["a"]["node_rank"] = "3"
    result = serving_group("g", group, 20000, {"tp_size": 8})
    assert {h: r["node_rank"] for h, r in result.items()} == {"c": 0, "b": 1, "d": 2, "a": 3}
    assert result["a"]["dist_init_addr"] == "10.0.0.3:20000"
    assert result["a"]["leader"] == "c"


def test_each_node_names_its_own_device_on_rank_0s_subnet():
    group = members(lab1=facts(("mgmt0", "192.168.1.1", "255.255.255.0"), ("ens5f0", "10.10.0.1", "255.255.0.0")),
                    lab2=facts(("mgmt0", "192.168.1.2", "255.255.255.0"), ("enp65s0", "10.10.3.7", "255.255.0.0")))
    group["lab1"]["address"] = "10.10.0.1"
    result = serving_group("g", group, 20000, {"tp_size": 2})
    assert result["lab1"]["env"]["NCCL_SOCKET_IFNAME"] == "ens5f0"
    assert result["lab2"]["env"] == {"NCCL_SOCKET_IFNAME": "enp65s0", "GLOO_SOCKET_IFNAME": "enp65s0"}
    assert result["lab2"]["dist_init_addr"] == "10.10.0.1:20000"
    assert result["lab2"]["subnet"] == "10.10.0.0/16"


# What `ip -o -4 addr show` prints in a lab host (a systemd-nspawn container whose /sys/class/net is its host's, so
# Ansible's interface facts list the wrong namespace and only default_ipv4 is right).
IP_LAB1 = ("1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
           "2: host0    inet 10.213.82.10/24 scope global host0\\       valid_lft forever preferred_lft forever\n")
IP_LAB2 = "5: host0@if12    inet 10.213.82.11/24 brd 10.213.82.255 scope global host0\\       valid_lft forever\n"


def test_addresses_from_ip_when_the_facts_list_another_namespace():
    found = interfaces_from_ip(IP_LAB1 + "garbage\n3: bad    inet 999.1.1.1/24 x\n")
    assert [(i["device"], str(i["address"]), str(i["network"])) for i in found] == [
        ("lo", "127.0.0.1", "127.0.0.0/8"), ("host0", "10.213.82.10", "10.213.82.0/24")]
    wrong_namespace = {"interfaces": ["eth0", "gflab0"], "eth0": {"device": "eth0"}, "default_ipv4": {"address": "10.213.82.10"}}
    group = {"mn1": {"facts": wrong_namespace, "ip_addr": IP_LAB1},
             "mn2": {"facts": dict(wrong_namespace, default_ipv4={"address": "10.213.82.11"}), "ip_addr": IP_LAB2}}
    result = serving_group("tp4", group, 20000, {"tp_size": 4})
    assert result["mn1"]["dist_init_addr"] == "10.213.82.10:20000"
    assert result["mn2"]["env"] == {"NCCL_SOCKET_IFNAME": "host0", "GLOO_SOCKET_IFNAME": "host0"}  # the @if12 peer suffix is not the name


def test_the_hosts_own_ip_list_wins_over_facts_that_disagree_with_it():
    # rank 0's facts name the other node's address on host0; its own `ip` list says host0 is 10.213.82.10
    stale = {"interfaces": ["eth0"], "eth0": {"device": "eth0"}, "default_ipv4": {"address": "10.213.82.11", "interface": "host0"}}
    group = {"mn1": {"facts": stale, "ip_addr": IP_LAB1},
             "mn2": {"facts": dict(stale, default_ipv4={"address": "10.213.82.11", "interface": "host0"}), "ip_addr": IP_LAB2}}
    result = serving_group("tp4", group, 20000, {"tp_size": 4})
    assert result["mn1"]["dist_init_addr"] == "10.213.82.10:20000"
    # facts that agree with the list, or no list at all: the facts' address
    assert serving_group("g", TWO, 20000, ARGS)["lab1"]["dist_init_addr"] == "10.88.5.11:20000"
    no_device = {"mn1": {"facts": dict(stale, default_ipv4={"address": "10.213.82.11", "interface": "eth9"}), "ip_addr": IP_LAB1},
                 "mn2": group["mn2"]}
    with pytest.raises(ServingGroupError, match=r"rank 0 \(mn1\) has no interface with the address 10\.213\.82\.11"):
        serving_group("tp4", no_device, 20000, {"tp_size": 4})


def test_secondary_addresses_and_dashed_names_are_read():
    host = facts(("bond-0", "10.0.0.9", "255.255.255.0"))
    host["bond_0"]["ipv4_secondaries"] = [{"address": "172.16.0.9", "netmask": "255.255.0.0"}]
    found = interfaces_from_facts(host)
    assert [(i["device"], str(i["address"])) for i in found] == [
        ("lo", "127.0.0.1"), ("bond-0", "10.0.0.9"), ("bond-0", "172.16.0.9")]


@pytest.mark.parametrize("tp, pp, size", [(4, 1, 3), (2, 1, 4), (3, 1, 2)])
def test_a_group_size_that_does_not_divide_tp_times_pp_is_refused(tp, pp, size):
    group = members(**{"h%d" % i: facts(("eth0", "10.0.0.%d" % (i + 1), "255.255.255.0")) for i in range(size)})
    with pytest.raises(ServingGroupError, match=r"sglang_server_args\.tp_size \* pp_size is %d.*%d hosts" % (tp * pp, size)):
        serving_group("g", group, 20000, {"tp_size": tp, "pp_size": pp})


def test_pipeline_stages_count_in_the_division():
    group = members(**{"h%d" % i: facts(("eth0", "10.0.0.%d" % (i + 1), "255.255.255.0")) for i in range(4)})
    assert serving_group("g", group, 20000, {"tp_size": 2, "pp_size": 2})["h3"]["node_rank"] == 3


def test_data_parallel_replicas_across_nodes_are_refused():
    with pytest.raises(ServingGroupError, match=r"sglang_server_args\.dp_size is 2.*attn_dp_size"):
        serving_group("g", TWO, 20000, {"tp_size": 4, "dp_size": 2})


def test_a_rank_twice_is_refused_naming_both_hosts():
    group = {h: dict(v) for h, v in TWO.items()}
    group["lab1"]["node_rank"] = 1
    group["lab2"]["node_rank"] = 1
    with pytest.raises(ServingGroupError, match=r"sglang_server_serving_group_node_rank: rank 1 is set on both lab1 and lab2"):
        serving_group("g", group, 20000, ARGS)


@pytest.mark.parametrize("rank", [2, -1, "one", True])
def test_a_rank_outside_the_group_is_refused(rank):
    group = {h: dict(v) for h, v in TWO.items()}
    group["lab2"]["node_rank"] = rank
    with pytest.raises(ServingGroupError, match=r"sglang_server_serving_group_node_rank on host lab2 .*0 to 1"):
        serving_group("g", group, 20000, ARGS)


@pytest.mark.parametrize("port", [None, "", 0, 70000, "abc", True])
def test_a_missing_or_bad_port_is_refused(port):
    with pytest.raises(ServingGroupError, match=r"^sglang_server_serving_group_port is"):
        serving_group("g", TWO, port, ARGS)


def test_an_empty_group_is_refused():
    with pytest.raises(ServingGroupError, match=r"sglang_server_serving_group is 'tp4', a group with no hosts"):
        serving_group("tp4", {}, 20000, ARGS)
    with pytest.raises(ServingGroupError, match=r"^sglang_server_serving_group is ''"):
        serving_group("", TWO, 20000, ARGS)


@pytest.mark.parametrize("key", ["nnodes", "node_rank", "dist_init_addr", "nccl_init_addr"])
def test_group_options_set_by_hand_are_refused(key):
    with pytest.raises(ServingGroupError, match=r"sglang_server_args sets %s: .*remove them" % key):
        serving_group("g", TWO, 20000, dict(ARGS, **{key: 1}))


def test_a_follower_off_rank_0s_subnet_is_refused():
    group = members(lab1=facts(("eth0", "10.0.0.1", "255.255.255.0")), lab2=facts(("eth0", "10.0.1.2", "255.255.255.0")))
    with pytest.raises(ServingGroupError, match=r"host lab2 has no interface on 10\.0\.0\.0/24"):
        serving_group("g", group, 20000, {"tp_size": 2})


def test_rank_0_without_an_address_is_refused():
    group = {"lab1": {"facts": {}}, "lab2": {"facts": {}}}
    with pytest.raises(ServingGroupError, match=r"sglang_server_serving_group_address: host lab1 has no address"):
        serving_group("g", group, 20000, {"tp_size": 2})


def test_a_given_address_not_on_rank_0_is_refused():
    group = {h: dict(v) for h, v in TWO.items()}
    group["lab1"]["address"] = "10.88.5.99"
    with pytest.raises(ServingGroupError, match=r"rank 0 \(lab1\) has no interface with the address 10\.88\.5\.99"):
        serving_group("g", group, 20000, ARGS)
    group["lab1"]["address"] = "lab1.example"
    with pytest.raises(ServingGroupError, match=r"an IPv4 address"):
        serving_group("g", group, 20000, ARGS)


# ---------------------------------------------------------------------------------------------------------------------
# Same release, same flags


def test_nodes_alike_apart_from_rank_have_no_mismatch():
    base = {"tp_size": 4, "nnodes": 2, "dist_init_addr": "10.0.0.1:20000"}
    assert serving_group_mismatches({"lab1": {"release": "0.5.23", "args": dict(base, node_rank=0)},
                                     "lab2": {"release": "0.5.23", "args": dict(base, node_rank=1)}}) == []


def test_a_different_release_and_a_different_flag_are_each_named():
    messages = serving_group_mismatches({
        "lab1": {"release": "0.5.23", "args": {"tp_size": 4, "mem_fraction_static": 0.8}},
        "lab2": {"release": "0.5.22", "args": {"tp_size": 4, "mem_fraction_static": 0.9, "attention_backend": "triton"}}})
    assert messages == [
        "sglang_install_version: lab2 runs 0.5.22 but lab1 runs 0.5.23; every node of a serving group needs the same SGLang release",
        "sglang_server_args.attention_backend: lab2 has 'triton' but lab1 has '<unset>'; every node of a serving group needs "
        "the same options apart from its rank",
        "sglang_server_args.mem_fraction_static: lab2 has 0.9 but lab1 has 0.8; every node of a serving group needs the same "
        "options apart from its rank"]


def test_a_differing_secret_is_named_without_its_value():
    messages = serving_group_mismatches({"a": {"release": "1", "args": {"api_key": "sk-first-123456"}},
                                         "b": {"release": "1", "args": {"api_key": "sk-second-654321"}}})
    assert messages == ["sglang_server_args.api_key differs between b and a (a secret: values not shown); every node of a "
                        "serving group needs the same options apart from its rank"]
    assert "sk-" not in messages[0]


# ---------------------------------------------------------------------------------------------------------------------
# What the playbook hands over, and the group's verdict

def test_members_are_read_from_hostvars_with_the_extra_args_over_the_groups():
    hostvars = {"lab1": {"ansible_facts": {"x": 1}, "sglang_install_version": "0.5.23", "sglang_server_args": {"tp_size": 4},
                         "sglang_server_extra_args": {"mem_fraction_static": 0.8}, "sglang_server_serving_group_node_rank": 1},
                "lab2": {"sglang_server_serving_group_address": "10.0.0.2"}}
    members = members_from_hostvars(["lab1", "lab2"], hostvars)
    assert members["lab1"] == {"facts": {"x": 1}, "node_rank": 1, "address": None, "release": "0.5.23",
                               "args": {"tp_size": 4, "mem_fraction_static": 0.8}, "ip_addr": ""}
    assert members["lab2"] == {"facts": {}, "node_rank": None, "address": "10.0.0.2", "release": None, "args": {}, "ip_addr": ""}
    hostvars["lab2"]["__gpufleet_sglang_ip_addr"] = {"stdout": "2: host0    inet 10.0.0.2/24 scope global host0"}
    assert members_from_hostvars(["lab2"], hostvars)["lab2"]["ip_addr"] == "2: host0    inet 10.0.0.2/24 scope global host0"


READY = {"changed": True, "ready": True, "joined": True, "rolled_back": False}
ROLLED = {"rolled_back": True, "rollback_ready": True, "ready": True}


def failed(cause, at, **extra):
    return dict(ROLLED, failed=True, msg="launch failed", failure=dict({"cause": cause, "failure_seen_at": at, "joined": True}, **extra))


def test_every_node_ready_is_a_ready_group():
    verdict = serving_group_verdict(["lab1", "lab2"], "tp4", {"lab1": READY, "lab2": READY})
    assert verdict["failed"] is False and verdict["msg"] == "" and verdict["first"] is None


def test_a_followers_crash_fails_the_group_with_its_diagnosis_not_the_leaders_lost_peer():
    results = {"lab1": failed("peer_rank_lost", 100.2, phase="weights_loading"),
               "lab2": failed("gpu_out_of_memory", 100.5, phase="weights_loading", reason="the unit failed",
                              error_message="torch.OutOfMemoryError: CUDA out of memory.\nmore", hint="lower mem_fraction_static")}
    verdict = serving_group_verdict(["lab1", "lab2"], "tp4", results)
    assert verdict["failed"] is True and verdict["first"] == "lab2" and verdict["cause"] == "gpu_out_of_memory"
    assert verdict["msg"] == (
        "serving group tp4: lab2 (node_rank 1) failed: gpu_out_of_memory in phase weights_loading (the unit failed): "
        "torch.OutOfMemoryError: CUDA out of memory. Hint: lower mem_fraction_static. Then: lab1 (node_rank 0) lost its peer. "
        "Every node: lab1 rolled back, serving its last good config again; lab2 rolled back, serving its last good config again.")


def test_of_two_real_failures_the_earlier_is_named_first():
    results = {"a": failed("gpu_out_of_memory", 5.0), "b": failed("nccl_error", 4.0), "c": failed("peer_rank_lost", 3.0)}
    verdict = serving_group_verdict(["a", "b", "c"], "g", results)
    assert verdict["first"] == "b"
    assert "Then: a (node_rank 0) failed: gpu_out_of_memory; c (node_rank 2) lost its peer." in verdict["msg"]


def test_only_lost_peers_name_the_first_of_them():
    verdict = serving_group_verdict(["a", "b"], "g", {"a": failed("peer_rank_lost", 2.0), "b": failed("peer_rank_lost", 1.0)})
    assert verdict["first"] == "b"


def test_a_rendezvous_timeout_names_the_ranks_that_never_joined():
    stuck = dict(failed("distributed_init_failed", 9.0), failure={"cause": "distributed_init_failed", "joined": False,
                                                                  "failure_seen_at": 9.0})
    results = {"a": failed("distributed_init_failed", 8.0, error_message="torch.distributed.DistStoreError: Timed out after 601 "
                           "seconds waiting for clients. 2/6 clients joined."), "b": READY, "c": stuck, "d": None}
    verdict = serving_group_verdict(["a", "b", "c", "d"], "g", results)
    assert verdict["first"] == "a" and verdict["never_joined"] == ["c", "d"]
    assert "the ranks that never joined: c (node_rank 2), d (node_rank 3)" in verdict["msg"]
    assert "d not launched" in verdict["msg"] and "b not rolled back (its files were already the last good ones)" in verdict["msg"]


def test_a_follower_that_passed_before_rank_0_failed_its_gate_says_it_runs_the_new_config():
    results = {"a": failed("probe_gate_failed", 5.0), "b": dict(READY, restarted=True, changed_files=["/etc/sglang/main.yaml"])}
    verdict = serving_group_verdict(["a", "b"], "g", results)
    assert verdict["failed"] is True and verdict["first"] == "a" and verdict["cause"] == "probe_gate_failed"
    assert "a rolled back, serving its last good config again; b ready with the NEW config, not rolled back" in verdict["msg"]
    assert verdict["nodes"]["b"]["failed"] is False
    # restarted with its own files unchanged (another node's changed): its config is the last good one
    same = serving_group_verdict(["a", "b"], "g", {"a": failed("probe_gate_failed", 5.0), "b": dict(READY, restarted=True, changed_files=[])})
    assert "b not rolled back (its files were already the last good ones)" in same["msg"]


def test_a_node_that_never_launched_fails_the_group():
    verdict = serving_group_verdict(["a", "b"], "g", {"a": READY})
    assert verdict["failed"] is True and verdict["first"] == "b" and verdict["cause"] == "not_launched"


def test_a_long_error_is_cut_and_no_sentence_ends_twice():
    results = {"a": failed("gpu_out_of_memory", 1.0, error_message="x" * 400, hint="free the GPUs.")}
    verdict = serving_group_verdict(["a"], "g", results)
    assert ": " + "x" * 294 + " [...]. Hint: free the GPUs. Every node:" in verdict["msg"]


def test_a_failed_task_without_a_diagnosis_still_fails_the_group():
    verdict = serving_group_verdict(["a", "b"], "g", {"a": READY, "b": {"failed": True, "msg": "job not found"}})
    assert verdict["first"] == "b" and "(job not found)" in verdict["msg"]


def test_a_node_that_passed_and_is_pending_makes_the_failed_group_restart_and_is_then_reported_rolled_back():
    passed = dict(READY, restarted=True, changed_files=["/etc/sglang/main.yaml"], pending=True)
    before = serving_group_verdict(["a", "b"], "g", {"a": failed("probe_gate_failed", 5.0), "b": passed})
    assert before["failed"] is True and before["group_restart"] is True and before["nodes"]["b"]["pending"] is True
    assert "b ready with the NEW config, kept pending until the group's verdict rolls it back" in before["msg"]
    after = dict(passed, pending=False, rolled_back=True, rollback_ready=True)  # sglang_launch group_failed's after_group laid over
    verdict = serving_group_verdict(["a", "b"], "g", {"a": failed("probe_gate_failed", 5.0), "b": after})
    assert "a rolled back, serving its last good config again; b rolled back, serving its last good config again" in verdict["msg"]
    assert "NEW config" not in verdict["msg"] and verdict["group_restart"] is False
    assert serving_group_verdict(["a", "b"], "g", {"a": READY, "b": passed})["group_restart"] is False  # a passed group: promoted
