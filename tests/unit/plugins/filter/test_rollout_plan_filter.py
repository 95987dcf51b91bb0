# -*- coding: utf-8 -*-
"""The rollout plan filters as Ansible calls them: hostvars read for each host's serving group, the pure code's
refusal as a filter error (or as text for an assert), and each filter's documentation sidecar matching its
signature."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.rollout_plan import (
    FilterModule, rollout_failed_units, rollout_plan, rollout_plan_problem, rollout_unit_summary)

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"
HOSTVARS = {"a": {}, "b": {"sglang_server_serving_group": "pair"}, "c": {"sglang_server_serving_group": "pair"}}
GROUPS = {"pair": ["b", "c"]}


def test_the_plan_reads_each_hosts_serving_group_from_hostvars():
    got = rollout_plan(["a", "b", "c"], GROUPS, HOSTVARS, 1, 1)
    assert got["serial"] == [1, 2] and got["batches"] == [["a"], ["pair"]]


def test_a_cut_group_is_a_filter_error_or_the_problem_text():
    with pytest.raises(AnsibleFilterError, match=r"^rollout_plan: serving group pair: c is left out"):
        rollout_plan(["a", "b"], GROUPS, HOSTVARS)
    assert rollout_plan_problem(["a", "b"], GROUPS, HOSTVARS).startswith("serving group pair: c is left out")
    assert rollout_plan_problem(["a", "b", "c"], GROUPS, HOSTVARS) == ""


def test_units_and_their_summary():
    unit_of = rollout_plan(["a", "b", "c"], GROUPS, HOSTVARS)["unit_of"]
    assert rollout_failed_units(["c", "b"], unit_of) == ["pair"]
    units = rollout_plan(["a", "b", "c"], GROUPS, HOSTVARS)["units"]
    assert [u["status"] for u in rollout_unit_summary(units, {"a": "unchanged", "b": "failed", "c": "failed"})] == ["unchanged", "failed"]
    assert sorted(FilterModule().filters()) == ["rollout_failed_units", "rollout_plan", "rollout_plan_problem", "rollout_unit_summary"]


@pytest.mark.parametrize("name,func", [("rollout_plan", rollout_plan), ("rollout_plan_problem", rollout_plan_problem),
                                       ("rollout_failed_units", rollout_failed_units), ("rollout_unit_summary", rollout_unit_summary)])
def test_documentation_sidecar_matches_the_signature(name, func):
    doc = yaml.safe_load((FILTERS / ("%s.yml" % name)).read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == name
    params = list(inspect.signature(func).parameters)
    assert list(doc["DOCUMENTATION"]["options"]) == ["_input"] + params[1:]
    assert doc["DOCUMENTATION"]["positional"] == ", ".join(["_input"] + params[1:])
    assert "gpufleet.sglang.%s" % name in doc["EXAMPLES"]
