# -*- coding: utf-8 -*-
"""A rollout's batches counted in units: a host on its own, or a serving group with all its hosts; the canary,
N and N% count units, a group is never split (a batch may hold more hosts than N), a --limit that cuts a group is
refused naming the group and the hosts left out, and the failure budget and the summary count units."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import (
    RolloutPlanError, failed_units, plan_problem, rollout_plan, rollout_units, unit_summary)

# Inventory order: a single host, a two-node group, two singles, a four-node group, a single.
HOSTS = ["s1", "pa", "pb", "s2", "s3", "q1", "q2", "q3", "q4", "s4"]
GROUPS = {"all": HOSTS, "pair": ["pa", "pb"], "quad": ["q1", "q2", "q3", "q4"], "ungrouped": ["s1", "s2", "s3", "s4"]}
SERVING = {"pa": "pair", "pb": "pair", "q1": "quad", "q2": "quad", "q3": "quad", "q4": "quad"}


def plan(hosts=None, canary=1, batch="25%", groups=None, serving=None):
    return rollout_plan(HOSTS if hosts is None else hosts, GROUPS if groups is None else groups,
                        SERVING if serving is None else serving, canary, batch)


def test_hosts_alone_are_batched_as_ansible_would():
    got = rollout_plan(["a", "b", "c", "d", "e"], {}, {}, 1, 2)
    assert got["serial"] == [1, 2, 2]
    assert got["hosts"] == ["a", "b", "c", "d", "e"]
    assert got["batches"] == [["a"], ["b", "c"], ["d", "e"]]
    assert got["unit_of"] == {h: h for h in "abcde"}


def test_units_keep_the_first_hosts_order_and_a_group_is_one_unit():
    units = rollout_units(HOSTS, GROUPS, SERVING)
    assert [u["name"] for u in units] == ["s1", "pair", "s2", "s3", "quad", "s4"]
    assert units[1] == {"name": "pair", "group": True, "hosts": ["pa", "pb"]}
    assert units[0] == {"name": "s1", "group": False, "hosts": ["s1"]}


def test_a_group_scattered_in_the_inventory_is_put_together_at_its_first_host():
    hosts = ["pa", "s1", "s2", "pb"]
    got = rollout_plan(hosts, {"pair": ["pa", "pb"]}, {"pa": "pair", "pb": "pair"}, 1, 1)
    assert got["hosts"] == ["pa", "pb", "s1", "s2"]
    assert got["serial"] == [2, 1, 1]
    assert got["batches"] == [["pair"], ["s1"], ["s2"]]


def test_batch_of_one_unit_holds_a_whole_group():
    got = plan(canary=1, batch=1)
    assert got["batches"] == [["s1"], ["pair"], ["s2"], ["s3"], ["quad"], ["s4"]]
    assert got["serial"] == [1, 2, 1, 1, 4, 1]
    assert sum(got["serial"]) == len(HOSTS)


def test_a_group_larger_than_the_batch_is_never_split():
    got = plan(canary=0, batch=2)
    assert got["batches"] == [["s1", "pair"], ["s2", "s3"], ["quad", "s4"]]
    assert got["serial"] == [3, 2, 5]  # a batch counts units: 5 hosts in a batch of 2


def test_the_canary_is_the_first_unit_even_a_group():
    got = plan(hosts=["pa", "pb", "s1", "s2"], canary=1, batch=3)
    assert got["batches"] == [["pair"], ["s1", "s2"]]
    assert got["serial"] == [2, 2]


def test_canary_of_several_units_and_no_canary():
    assert plan(canary=2, batch=10)["batches"] == [["s1", "pair"], ["s2", "s3", "quad", "s4"]]
    assert plan(canary=0, batch=10)["serial"] == [10]
    assert plan(canary="0", batch="100%")["batches"] == [["s1", "pair", "s2", "s3", "quad", "s4"]]


@pytest.mark.parametrize("batch, expected", [
    ("25%", [1, 1, 1, 1, 1, 1]),   # 25% of 6 units, rounded down, is 1 (and never 0)
    ("50%", [1, 3, 2]),            # 3 units per batch: [pair, s2, s3] is 4 hosts
    ("34%", [1, 2, 2, 1]),         # 2 units
    ("1%", [1, 1, 1, 1, 1, 1]),    # at least 1
])
def test_percentages_count_units(batch, expected):
    got = plan(canary=1, batch=batch)
    assert [len(b) for b in got["batches"]] == expected


def test_percentage_hosts_of_each_batch():
    got = plan(canary=1, batch="50%")
    assert got["batches"] == [["s1"], ["pair", "s2", "s3"], ["quad", "s4"]]
    assert got["serial"] == [1, 4, 5]


def test_canary_larger_than_the_fleet_takes_it_all():
    got = rollout_plan(["pa", "pb"], {"pair": ["pa", "pb"]}, {"pa": "pair", "pb": "pair"}, 5, 1)
    assert got["serial"] == [2]
    assert got["batches"] == [["pair"]]


def test_no_hosts_no_batches():
    assert rollout_plan([], GROUPS, SERVING, 1, "25%") == {
        "hosts": [], "serial": [], "batches": [], "units": [], "unit_of": {}, "described": [], "labels": {}, "batch_of": {}}


def test_a_limit_that_cuts_a_group_is_refused_naming_group_and_left_out_hosts():
    with pytest.raises(RolloutPlanError) as caught:
        plan(hosts=["s1", "q1", "q3"])
    text = str(caught.value)
    assert "serving group quad" in text
    assert "q2, q4 are left out" in text
    assert "--limit s1,q1,q3,q2,q4" in text
    assert "all:!quad" in text
    assert "never half updated" in text


def test_a_limit_that_keeps_or_drops_whole_groups_is_fine():
    assert plan(hosts=["s1", "s2"])["batches"] == [["s1"], ["s2"]]
    assert plan(hosts=["pb", "pa"], batch=1)["hosts"] == ["pb", "pa"]


def test_a_host_that_names_a_group_it_is_not_in():
    with pytest.raises(RolloutPlanError, match="host s1 names serving group pair, but s1 is not one of its hosts"):
        rollout_plan(["s1", "pa", "pb"], GROUPS, dict(SERVING, s1="pair"))
    with pytest.raises(RolloutPlanError, match="no such group"):
        rollout_plan(["s1"], GROUPS, {"s1": "nowhere"})


def test_hosts_of_one_inventory_group_naming_different_groups():
    with pytest.raises(RolloutPlanError, match="name different serving groups"):
        rollout_plan(["pa", "pb"], {"pair": ["pa", "pb"], "other": ["pb"]}, {"pa": "pair", "pb": "other"})


def test_an_empty_group_name_is_a_host_alone():
    got = rollout_plan(["a", "b"], {}, {"a": "", "b": None}, 0, 1)
    assert got["batches"] == [["a"], ["b"]]


@pytest.mark.parametrize("canary, batch, message", [
    ("x", 1, "rollout_canary is 'x'"),
    (-1, 1, "rollout_canary is -1"),
    (True, 1, "rollout_canary is True"),
    (1, 0, "rollout_batch is 0"),
    (1, "0%", "rollout_batch is '0%': a percentage"),
    (1, "101%", "rollout_batch is '101%'"),
    (1, "2.5", "rollout_batch is '2.5'"),
])
def test_bad_settings_name_the_variable(canary, batch, message):
    with pytest.raises(RolloutPlanError, match=message.replace("(", r"\(").replace("?", r"\?")):
        plan(canary=canary, batch=batch)


def test_failed_units_count_a_group_once():
    unit_of = plan()["unit_of"]
    assert failed_units(["pb", "pa"], unit_of) == ["pair"]
    assert failed_units(["q1", "s3", "q2", "q3", "q4"], unit_of) == ["quad", "s3"]
    assert failed_units([], unit_of) == []
    assert failed_units(["zz"], unit_of) == ["zz"]  # a host the plan does not know counts as itself


def test_unit_summary():
    units = plan()["units"]
    got = unit_summary(units, {"s1": "updated", "pa": "failed", "pb": "failed", "s2": "unchanged", "q1": "updated", "q2": "unchanged",
                               "q3": "unchanged", "q4": "unchanged", "s3": None})
    assert [(u["unit"], u["status"]) for u in got] == [("s1", "updated"), ("pair", "failed"), ("s2", "unchanged"),
                                                       ("s3", "untouched"), ("quad", "updated"), ("s4", "untouched")]
    assert got[1] == {"unit": "pair", "group": True, "hosts": ["pa", "pb"], "status": "failed"}
    partly = unit_summary(units, {"q1": "unchanged"})
    assert partly[4]["status"] == "partly reached"


def test_the_plan_describes_its_batches_and_numbers_them():
    got = plan(canary=1, batch="50%")
    assert got["described"] == ["s1", "pair (pa, pb); s2; s3", "quad (q1, q2, q3, q4); s4"]
    assert got["labels"]["pair"] == "pair (pa, pb)" and got["labels"]["s4"] == "s4"
    assert got["batch_of"] == {"s1": 1, "pa": 2, "pb": 2, "s2": 2, "s3": 2, "q1": 3, "q2": 3, "q3": 3, "q4": 3, "s4": 3}


def test_plan_problem_is_the_refusal_as_text():
    assert plan_problem(HOSTS, GROUPS, SERVING, 1, 1) == ""
    assert "pb is left out" in plan_problem(["s1", "pa"], GROUPS, SERVING, 1, 1)
    assert "rollout_batch is 0" in plan_problem(HOSTS, GROUPS, SERVING, 1, 0)
