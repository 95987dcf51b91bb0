# -*- coding: utf-8 -*-
"""A serving group's promises held exactly (the mutation run's survivors, issue 22): every refusal's whole message,
the port's and the error line's cut-offs, interface names with ``:`` and ``-``, a bad entry before a good one, each
key of the results, and the verdict's message for each kind of node."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import (
    ServingGroupError, interfaces_from_facts, interfaces_from_ip, members_from_hostvars, serving_group, serving_group_mismatches,
    serving_group_verdict)


def host(address, device="eth0", netmask="255.255.255.0"):
    """ansible_facts of a host with one interface, its default IPv4 address on it."""
    return {"interfaces": [device], device.replace("-", "_").replace(":", "_"): {"device": device, "ipv4": {
        "address": address, "netmask": netmask}}, "default_ipv4": {"address": address, "interface": device}}


def pair():
    return {"lab1": {"facts": host("10.0.0.1")}, "lab2": {"facts": host("10.0.0.2")}}


def refusal(*args):
    with pytest.raises(ServingGroupError) as caught:
        serving_group(*args)
    return str(caught.value)


def listed(found):
    return [(i["device"], str(i["address"]), str(i["network"])) for i in found]


# ---------------------------------------------------------------------------------------------------------------------
# Interfaces

def test_an_alias_interface_is_found_under_its_key_with_colon_made_underscore_and_named_by_its_device():
    facts = {"interfaces": ["eth0:1", "br-lan"],
             "eth0_1": {"device": "eth0", "ipv4": {"address": "10.1.0.5", "netmask": "255.255.0.0"}},
             "br_lan": {"ipv4": {"address": "10.2.0.5", "netmask": "255.255.255.0"}}}
    assert listed(interfaces_from_facts(facts)) == [("eth0", "10.1.0.5", "10.1.0.0/16"), ("br-lan", "10.2.0.5", "10.2.0.0/24")]


def test_an_unusable_interface_or_address_does_not_hide_the_ones_after_it():
    facts = {"interfaces": ["gone", "eth0", "eth1", "eth2"],
             "gone": "not a mapping",
             "eth0": {"device": "eth0", "ipv4": None, "ipv4_secondaries": [{"address": "10.3.0.1", "netmask": "255.255.255.0"}]},
             "eth1": {"device": "eth1", "ipv4": {"address": "300.1.1.1", "netmask": "255.255.255.0"},
                      "ipv4_secondaries": [{"address": "10.4.0.1", "netmask": "255.255.255.0"}]},
             "eth2": {"device": "eth2", "ipv4": {"address": "10.5.0.1"}}}
    assert listed(interfaces_from_facts(facts)) == [
        ("eth0", "10.3.0.1", "10.3.0.0/24"), ("eth1", "10.4.0.1", "10.4.0.0/24"), ("eth2", "10.5.0.1", "10.5.0.1/32")]


def test_ip_lines_before_a_good_one_that_do_not_parse_are_skipped_and_no_prefix_is_a_single_address():
    text = ("garbage first\n"
            "3: bad    inet 999.1.1.1/24 scope global bad\n"
            "4: tun0    inet 10.9.9.9 peer 10.9.9.10 scope global tun0\n"
            "5: eth0    inet 10.6.0.2/24 brd 10.6.0.255 scope global eth0\n")
    assert listed(interfaces_from_ip(text)) == [("tun0", "10.9.9.9", "10.9.9.9/32"), ("eth0", "10.6.0.2", "10.6.0.0/24")]
    assert interfaces_from_ip(None) == [] and interfaces_from_ip("") == []


# ---------------------------------------------------------------------------------------------------------------------
# The settings, each key

def test_the_whole_result_of_a_two_node_group():
    result = serving_group("tp2", pair(), 20000, {"tp_size": 2})
    assert result["lab2"] == {
        "group": "tp2", "nnodes": 2, "node_rank": 1, "dist_init_addr": "10.0.0.1:20000", "leader": "lab1",
        "members": ["lab1", "lab2"], "subnet": "10.0.0.0/24",
        "args": {"nnodes": 2, "node_rank": 1, "dist_init_addr": "10.0.0.1:20000"},
        "env": {"NCCL_SOCKET_IFNAME": "eth0", "GLOO_SOCKET_IFNAME": "eth0"}}
    assert result["lab1"]["group"] == "tp2" and result["lab1"]["node_rank"] == 0


@pytest.mark.parametrize("port", [1, 65535, "65535"])
def test_the_ports_bounds_are_accepted(port):
    assert serving_group("g", pair(), port, {"tp_size": 2})["lab1"]["dist_init_addr"] == "10.0.0.1:%s" % port


@pytest.mark.parametrize("port", [0, 65536])
def test_a_port_just_outside_is_refused_with_the_whole_message(port):
    assert refusal("g", pair(), port, {"tp_size": 2}) == (
        "sglang_server_serving_group_port is %r: the TCP port rank 0 listens at for the rendezvous (1-65535, e.g. 20000), "
        "the same for every host of group g" % port)


def test_an_empty_rank_is_no_override():
    group = pair()
    group["lab1"]["node_rank"] = ""
    group["lab2"]["node_rank"] = None
    result = serving_group("g", group, 20000, {"tp_size": 2})
    assert (result["lab1"]["node_rank"], result["lab2"]["node_rank"]) == (0, 1)


# ---------------------------------------------------------------------------------------------------------------------
# Every refusal, whole

def test_no_hosts():
    assert refusal("tp4", {}, 20000, {}) == (
        "sglang_server_serving_group is 'tp4', a group with no hosts in this inventory: add its hosts or fix the name")


def test_args_not_a_mapping():
    assert refusal("g", pair(), 20000, ["tp_size"]) == "sglang_server_args is a list: a mapping of SGLang options"


def test_two_group_options_set_by_hand_are_both_named():
    assert refusal("g", pair(), 20000, {"tp_size": 2, "node_rank": 0, "nnodes": 2}) == (
        "sglang_server_args sets nnodes, node_rank: the serving group g sets them on every node; remove them")


@pytest.mark.parametrize("key, value", [("tp_size", 0), ("pp_size", "two"), ("dp_size", 0), ("tp_size", -2)])
def test_a_size_that_is_no_whole_number_of_at_least_1(key, value):
    assert refusal("g", pair(), 20000, {key: value}) == "sglang_server_args.%s is %r: a whole number of at least 1" % (key, value)


def test_tp_times_pp_not_divided_by_the_group():
    group = {"h%d" % i: {"facts": host("10.0.0.%d" % (i + 1))} for i in range(4)}
    assert refusal("g", group, 20000, {"tp_size": 3, "pp_size": 2}) == (
        "sglang_server_args.tp_size * pp_size is 6, which the serving group's 4 hosts do not divide (SGLang: tp_size must be "
        "divisible by number of nodes): make tp_size * pp_size a multiple of 4 or change the group")


def test_data_parallel_across_nodes():
    assert refusal("g", pair(), 20000, {"tp_size": 2, "dp_size": 2}) == (
        "sglang_server_args.dp_size is 2: SGLang does not run data-parallel replicas across nodes; use attn_dp_size, or one "
        "serving group per replica")


def test_a_rank_outside_and_a_rank_twice():
    group = pair()
    group["lab2"]["node_rank"] = 5
    assert refusal("g", group, 20000, {"tp_size": 2}) == (
        "sglang_server_serving_group_node_rank on host lab2 is 5: a whole number from 0 to 1 (the group has 2 hosts)")
    group["lab1"]["node_rank"] = "1"
    group["lab2"]["node_rank"] = 1
    assert refusal("g", group, 20000, {"tp_size": 2}) == (
        "sglang_server_serving_group_node_rank: rank 1 is set on both lab1 and lab2; every host of the group needs its own rank")


def test_rank_0_without_an_address():
    assert refusal("g", {"lab1": {"facts": {}}, "lab2": {"facts": {}}}, 20000, {"tp_size": 2}) == (
        "sglang_server_serving_group_address: host lab1 has no address for the serving group: set "
        "sglang_server_serving_group_address on it (the address the other nodes reach it at) or gather its network facts")


def test_an_address_that_is_no_ipv4_address_and_one_not_on_rank_0():
    group = pair()
    group["lab1"]["address"] = "lab1.example"
    assert refusal("g", group, 20000, {"tp_size": 2}) == (
        "sglang_server_serving_group_address on lab1 is 'lab1.example': an IPv4 address (the rendezvous address every node "
        "connects to)")
    group["lab1"]["address"] = "10.0.0.99"
    assert refusal("g", group, 20000, {"tp_size": 2}) == (
        "sglang_server_serving_group: rank 0 (lab1) has no interface with the address 10.0.0.99 in its facts: set "
        "sglang_server_serving_group_address on lab1 to one of its own addresses")


def test_a_follower_off_rank_0s_subnet():
    group = pair()
    group["lab2"]["facts"] = host("10.0.1.2")
    assert refusal("g", group, 20000, {"tp_size": 2}) == (
        "sglang_server_serving_group: host lab2 has no interface on 10.0.0.0/24, the subnet of rank 0's address; NCCL and "
        "Gloo would pick another one: connect it to that network or set sglang_server_serving_group_address on rank 0 to an "
        "address on a network every node shares")


# ---------------------------------------------------------------------------------------------------------------------
# Mismatches

@pytest.mark.parametrize("settings", [None, {}, ["lab1", "lab2"], "lab1"])
def test_no_mapping_of_nodes_has_no_mismatch(settings):
    assert serving_group_mismatches(settings) == []


def test_an_option_set_on_one_node_only_is_a_difference_whatever_its_value():
    messages = serving_group_mismatches({"lab1": {"release": "1", "args": {"mem_fraction_static": 0.8, "served_model_name": "<unset>"}},
                                         "lab2": {"release": "1", "args": {}}})
    assert messages == [
        "sglang_server_args.mem_fraction_static: lab2 has '<unset>' but lab1 has 0.8; every node of a serving group needs the "
        "same options apart from its rank",
        "sglang_server_args.served_model_name: lab2 has '<unset>' but lab1 has '<unset>'; every node of a serving group needs the "
        "same options apart from its rank"]


def test_a_differing_secret_does_not_stop_the_options_after_it_from_being_compared():
    messages = serving_group_mismatches({"a": {"release": "1", "args": {"api_key": "k1", "tp_size": 2}},
                                         "b": {"release": "1", "args": {"api_key": "k2", "tp_size": 4}}})
    assert messages == [
        "sglang_server_args.api_key differs between b and a (a secret: values not shown); every node of a serving group needs "
        "the same options apart from its rank",
        "sglang_server_args.tp_size: b has 4 but a has 2; every node of a serving group needs the same options apart from its rank"]


def test_an_ip_fact_that_is_no_registered_result_is_no_output():
    members = members_from_hostvars(["a"], {"a": {"__gpufleet_sglang_ip_addr": "2: eth0    inet 10.0.0.1/24"}})
    assert members["a"]["ip_addr"] == ""


# ---------------------------------------------------------------------------------------------------------------------
# The verdict

READY = {"changed": True, "ready": True, "joined": True, "rolled_back": False}


def test_a_ready_groups_whole_verdict():
    assert serving_group_verdict(["a", "b"], "g", {"a": READY, "b": READY}) == {
        "failed": False, "msg": "", "first": None, "cause": None, "never_joined": [], "group_restart": False,
        "nodes": {"a": {"node_rank": 0, "failed": False, "cause": None, "after": "not rolled back (its files were already the last good ones)",
                        "pending": False},
                  "b": {"node_rank": 1, "failed": False, "cause": None, "after": "not rolled back (its files were already the last good ones)",
                        "pending": False}}}


def test_a_node_that_never_launched_and_a_failed_task_without_a_diagnosis_whole():
    verdict = serving_group_verdict(["a", "b"], "g", {"a": {"failed": True, "msg": ""}})
    assert verdict["msg"] == (
        "serving group g: a (node_rank 0) failed: unknown (the launch task failed). Then: b (node_rank 1) failed: not_launched. "
        "Every node: a not rolled back (its files were already the last good ones); b not launched.")
    assert verdict["nodes"]["a"] == {"node_rank": 0, "failed": True, "cause": "unknown",
                                     "after": "not rolled back (its files were already the last good ones)", "pending": False}
    alone = serving_group_verdict(["a"], "g", {})
    assert alone["msg"] == ("serving group g: a (node_rank 0) failed: not_launched (this node never reached its launch (it failed "
                            "earlier in the play)). Every node: a not launched.")


def test_a_diagnosis_without_a_cause_is_unknown():
    verdict = serving_group_verdict(["a"], "g", {"a": {"failure": {"reason": "the unit failed"}}})
    assert verdict["msg"] == ("serving group g: a (node_rank 0) failed: unknown (the unit failed). Every node: a not rolled back "
                              "(its files were already the last good ones).")
    assert verdict["cause"] is None


def test_how_each_node_stands_afterwards():
    results = {"a": {"failure": {"cause": "gpu_out_of_memory"}, "rolled_back": True, "rollback_ready": False},
               "b": {"stopped": True, "failure": {"cause": "peer_rank_lost"}},
               "c": {"ready": True, "restarted": True, "changed_files": ["/etc/sglang/main.yaml"],
                     "failure": {"cause": "probe_gate_failed"}}}
    verdict = serving_group_verdict(["a", "b", "c"], "g", results)
    assert verdict["msg"].endswith(
        "Every node: a rolled back, NOT ready again; b stopped (nothing good to go back to); "
        "c not rolled back (its files were already the last good ones).")


def test_the_time_of_the_verdict_orders_failures_seen_without_a_time_of_their_own():
    results = {"a": {"failure": {"cause": "gpu_out_of_memory", "verdict_at": 9.0}},
               "b": {"failure": {"cause": "nccl_error", "verdict_at": 3.0}}}
    assert serving_group_verdict(["a", "b"], "g", results)["first"] == "b"


def test_only_a_rendezvous_on_rank_0_names_ranks_that_never_joined():
    # rank 0 failed on something else while its follower had not joined yet: no rendezvous story
    verdict = serving_group_verdict(["a", "b"], "g", {"a": {"failure": {"cause": "gpu_out_of_memory"}}, "b": {"ready": False}})
    assert verdict["never_joined"] == [] and "never joined" not in verdict["msg"]


def test_a_rendezvous_timeout_whole_message_with_rank_1_missing_and_a_follower_whose_diagnosis_says_it_joined():
    results = {"a": {"failure": {"cause": "distributed_init_failed", "failure_seen_at": 5.0, "phase": "distributed_init",
                                 "error_message": "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 2/3 clients joined."}},
               "b": {"ready": False},
               "c": {"failure": {"cause": "peer_rank_lost", "failure_seen_at": 6.0, "joined": True}}}
    verdict = serving_group_verdict(["a", "b", "c"], "tp8", results)
    assert verdict["never_joined"] == ["b"]
    assert verdict["msg"] == (
        "serving group tp8: a (node_rank 0) failed: distributed_init_failed in phase distributed_init: "
        "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 2/3 clients joined; "
        "the ranks that never joined: b (node_rank 1). Then: c (node_rank 2) lost its peer. Every node: "
        "a not rolled back (its files were already the last good ones); b not rolled back (its files were already the last "
        "good ones); c not rolled back (its files were already the last good ones).")


@pytest.mark.parametrize("length, shown", [(300, "y" * 300), (301, "y" * 294 + " [...]")])
def test_an_error_line_of_300_characters_is_shown_whole_and_one_longer_is_cut(length, shown):
    verdict = serving_group_verdict(["a"], "g", {"a": {"failure": {"cause": "unknown", "error_message": "y" * length}}})
    assert verdict["msg"].startswith("serving group g: a (node_rank 0) failed: unknown: %s. Every node:" % shown)


def test_a_message_and_a_hint_that_end_in_capital_x_keep_it():
    verdict = serving_group_verdict(["a"], "g", {"a": {"failure": {
        "cause": "unsupported_attention_backend", "error_message": "ValueError: unknown attention backend FLASHX",
        "hint": "set attention_backend to one your release knows, not FLASHX"}}})
    assert verdict["msg"].startswith(
        "serving group g: a (node_rank 0) failed: unsupported_attention_backend: ValueError: unknown attention backend FLASHX. "
        "Hint: set attention_backend to one your release knows, not FLASHX. Every node:")


def test_an_error_line_ending_in_capital_x_keeps_it_before_the_ranks_that_never_joined():
    verdict = serving_group_verdict(["a", "b"], "g", {"a": {"failure": {
        "cause": "distributed_init_failed", "error_message": "RuntimeError: no route to rank 0 over ETHX"}}, "b": None})
    assert verdict["msg"].startswith("serving group g: a (node_rank 0) failed: distributed_init_failed: RuntimeError: no route "
                                     "to rank 0 over ETHX; the ranks that never joined: b (node_rank 1). Then:")
