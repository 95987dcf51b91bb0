# -*- coding: utf-8 -*-
"""The gpufleet.sglang.failure_summary filter: the summary behind Jinja, a wrong input as a filter error, and its
documentation sidecar parses and lists every key of the summary."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule, failure_summary

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"
GATE = {"failed": True, "msg": "gate", "rolled_back": True, "rollback_ready": True,
        "failure": {"cause": "probe_gate_failed", "hint": "decode below 50 tok/s", "traceback": None, "unit": {}}}


def test_filter_is_registered():
    assert FilterModule().filters()["failure_summary"] is failure_summary


def test_a_gate_failure_through_the_filter():
    summary = failure_summary(GATE)
    assert summary["status"] == "gate_failed" and summary["diagnosis"] == {"cause": "probe_gate_failed", "hint": "decode below 50 tok/s",
                                                                           "traceback": None}
    assert summary["rolled_back"] is True and summary["rollback_ready"] is True


@pytest.mark.parametrize("value,kind", [(None, "NoneType"), ("failed", "str"), ([GATE], "list")])
def test_something_other_than_a_result_is_a_filter_error(value, kind):
    with pytest.raises(AnsibleFilterError, match=r"^failure_summary: the input is ansible_failed_result \(a dict\), not %s$" % kind):
        failure_summary(value)


def test_documentation_sidecar_lists_every_key():
    doc = yaml.safe_load((FILTERS / "failure_summary.yml").read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == "failure_summary" and list(doc["DOCUMENTATION"]["options"]) == ["_input"]
    assert list(doc["RETURN"]["_value"]["contains"]) == list(failure_summary(GATE))
