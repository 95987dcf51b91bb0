# -*- coding: utf-8 -*-
"""The gpufleet.sglang.server_instances and server_instances_check filters: the plugin_utils rules behind Jinja, a
bad list as a filter error, and their documentation sidecars parse and match the signatures."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule, server_instances, server_instances_check

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"


def test_filters_are_registered():
    assert FilterModule().filters()["server_instances"] is server_instances and FilterModule().filters()["server_instances_check"] is server_instances_check


def test_the_single_instance_and_the_list():
    assert server_instances([], "main", {"tp_size": 2}, {}, "") == [{"name": "main", "args": {"tp_size": 2}, "env": {}, "api_key": ""}]
    assert server_instances([{"name": "a", "args": {}}], "main", {}, {}, "") == [{"name": "a", "args": {}}]


def test_the_check_returns_messages_not_errors():
    assert server_instances_check([], "main", {}, {}) == []
    assert server_instances_check([{"name": "a", "args": {}}, {"name": "a", "args": {"port": 1}}], "main", {}, {}) == [
        "sglang_server_instances[1].name: 'a' is already the name of sglang_server_instances[0]; give each instance its own name."]
    assert server_instances_check(None, "main", {}, {}) == ["sglang_server_instances must be a list of {name, args, env, api_key}, not NoneType."]


def test_a_list_that_is_not_a_list_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match=r"^server_instances: sglang_server_instances must be a list of \{name, args, env, api_key\}, not str$"):
        server_instances("main", "main", {}, {}, "")


@pytest.mark.parametrize("name,func", [("server_instances", server_instances), ("server_instances_check", server_instances_check)])
def test_documentation_sidecar_matches_the_signature(name, func):
    doc = yaml.safe_load((FILTERS / ("%s.yml" % name)).read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == name
    params = list(inspect.signature(func).parameters)
    assert list(doc["DOCUMENTATION"]["options"]) == ["_input"] + params[1:]
    assert doc["DOCUMENTATION"]["positional"] == ", ".join(["_input"] + params[1:])
    assert doc["RETURN"]["_value"]["type"] == "list" and "gpufleet.sglang.%s" % name in doc["EXAMPLES"]
