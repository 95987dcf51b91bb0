# -*- coding: utf-8 -*-
"""A rollout plan's promises held exactly (the mutation run's survivors, issue 22): each refusal's whole message,
one host and several left out, the defaults (canary 1, batches of 25%)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import (
    RolloutPlanError, plan_problem, rollout_plan, rollout_units)


def refusal(*args):
    with pytest.raises(RolloutPlanError) as caught:
        rollout_plan(*args)
    return str(caught.value)


@pytest.mark.parametrize("canary, batch, message", [
    ("x", 1, "rollout_canary is 'x': a whole number >= 0 or a percentage 1-100% of the units, e.g. 25%"),
    (1, "1.5", "rollout_batch is '1.5': a whole number >= 1 or a percentage 1-100% of the units, e.g. 25%"),
    (1, True, "rollout_batch is True: a whole number >= 1 or a percentage 1-100% of the units, e.g. 25%"),
    ("0%", 1, "rollout_canary is '0%': a percentage from 1% to 100%"),
    (1, "101%", "rollout_batch is '101%': a percentage from 1% to 100%"),
    (1, 0, "rollout_batch is 0: a whole number >= 1"),
])
def test_each_bad_setting_whole(canary, batch, message):
    assert refusal(["a", "b"], {}, {}, canary, batch) == message


def test_a_negative_canary_is_no_whole_number_at_all():
    # "-1" is no N and no N%: the first refusal, with the canary's own lower bound
    assert refusal(["a"], {}, {}, -1, 1) == (
        "rollout_canary is -1: a whole number >= 0 or a percentage 1-100% of the units, e.g. 25%")


def test_the_defaults_are_a_canary_of_one_unit_then_a_quarter_of_the_units():
    hosts = ["h%d" % i for i in range(8)]
    assert rollout_plan(hosts, {}, {})["batches"] == [["h0"], ["h1", "h2"], ["h3", "h4"], ["h5", "h6"], ["h7"]]
    assert plan_problem(hosts, {}, {}) == ""
    assert plan_problem(["a"], {}, {}, batch=0) == "rollout_batch is 0: a whole number >= 1"


def test_a_host_naming_a_group_it_is_not_in_whole():
    assert refusal(["a"], {"pair": ["b", "c"]}, {"a": "pair"}) == (
        "sglang_server_serving_group: host a names serving group pair, but a is not one of its hosts in this inventory "
        "(b, c); put the host in that inventory group or fix the name")
    assert refusal(["a"], {}, {"a": "pair"}) == (
        "sglang_server_serving_group: host a names serving group pair, but a is not one of its hosts in this inventory "
        "(no such group); put the host in that inventory group or fix the name")


def test_the_hosts_of_a_group_naming_different_groups_whole():
    assert refusal(["a", "b", "c"], {"pair": ["a", "b", "c"]}, {"a": "pair", "b": "other", "c": None}) == (
        "sglang_server_serving_group: the hosts of inventory group pair name different serving groups (pair and none, other); "
        "every host of a serving group names the same group, and a host on its own is in no serving group's inventory group "
        "(set it in the group's group_vars)")


def test_one_host_and_two_hosts_left_out_whole():
    serving = {"a": "quad", "b": "quad", "c": "quad", "d": "quad"}
    groups = {"quad": ["a", "b", "c", "d"]}
    assert refusal(["a", "b", "c"], groups, serving) == (
        "serving group quad: d is left out of this rollout (--limit), but a serving group is ONE instance and is never half "
        "updated. Add it to --limit (e.g. --limit a,b,c,d), or leave the whole group out (e.g. --limit 'all:!quad')")
    assert refusal(["x", "a", "b"], groups, dict(serving, x=None)) == (
        "serving group quad: c, d are left out of this rollout (--limit), but a serving group is ONE instance and is never "
        "half updated. Add them to --limit (e.g. --limit x,a,b,c,d), or leave the whole group out (e.g. --limit 'all:!quad')")


def test_a_group_is_one_unit_however_many_of_its_hosts_follow():
    units = rollout_units(["a", "b", "c"], {"trio": ["a", "b", "c"]}, {"a": "trio", "b": "trio", "c": "trio"})
    assert units == [{"name": "trio", "group": True, "hosts": ["a", "b", "c"]}]
