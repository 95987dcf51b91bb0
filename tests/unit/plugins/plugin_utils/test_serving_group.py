# -*- coding: utf-8 -*-
"""A serving group's launch settings: nnodes, stable ranks with overrides, rank 0's rendezvous address, the socket
interface each node uses, and every bad input refused with the variable named."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import (
    ServingGroupError, interfaces_from_facts, natural_key, serving_group, serving_group_mismatches)


def facts(*interfaces, default=None):
    """ansible_facts with the given (device, address, netmask) interfaces; default_ipv4 = the first one's."""
    result = {"interfaces": ["lo"] + [name for name, _, _ in interfaces],
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
