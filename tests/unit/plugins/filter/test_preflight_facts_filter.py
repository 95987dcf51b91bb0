# -*- coding: utf-8 -*-
"""The gpufleet.sglang.preflight_facts filter: the host facts the preflight reads, a wrong input as a filter error,
and its documentation sidecar parses and matches the signature."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule, preflight_facts

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"


def test_filter_is_registered():
    assert FilterModule().filters()["preflight_facts"] is preflight_facts


def test_facts_through_the_filter():
    assert preflight_facts(None, "sglang") == {"service_user": "sglang"}
    assert preflight_facts({"p2p_read": {"0,1": "NS"}, "nvlink_full_mesh": False}, "svc") == {
        "service_user": "svc", "gpu_p2p": False, "nvlink": False}


def test_facts_that_are_not_a_dict_are_a_filter_error():
    with pytest.raises(AnsibleFilterError, match=r"^preflight_facts: the input is gpu_tuning_gpu_facts \(a dict\) or none, not list$"):
        preflight_facts([], "sglang")


def test_documentation_sidecar_matches_the_signature():
    doc = yaml.safe_load((FILTERS / "preflight_facts.yml").read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == "preflight_facts"
    assert list(doc["DOCUMENTATION"]["options"]) == ["_input"] + list(inspect.signature(preflight_facts).parameters)[1:]
