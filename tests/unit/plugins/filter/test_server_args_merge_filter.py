# -*- coding: utf-8 -*-
"""The gpufleet.sglang.server_args_merge filter: the documented precedence behind Jinja, a bad level as a filter
error, and its documentation sidecar parses and matches the signature."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule, server_args_merge

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"


def test_filter_is_registered():
    assert FilterModule().filters()["server_args_merge"] is server_args_merge


def test_the_precedence_through_the_filter():
    assert server_args_merge({"host": "127.0.0.1", "port": 30000}, tuning_args={"disable_custom_all_reduce": True},
                             instance_args={"port": 30001, "served_model_name": "mine"}, extra_args={"port": 30002},
                             model_path="/cache/m", served_model_name="org/m") == {
        "host": "127.0.0.1", "port": 30002, "disable_custom_all_reduce": True, "served_model_name": "mine", "model_path": "/cache/m"}


def test_a_level_that_is_not_a_mapping_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match=r"^server_args_merge: the extra arguments must be a mapping of SGLang options, not list$"):
        server_args_merge({}, extra_args=["enable_torch_compile"])


def test_documentation_sidecar_matches_the_signature():
    doc = yaml.safe_load((FILTERS / "server_args_merge.yml").read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == "server_args_merge"
    assert list(doc["DOCUMENTATION"]["options"]) == ["_input"] + list(inspect.signature(server_args_merge).parameters)[1:]
    assert doc["RETURN"]["_value"]["type"] == "dict"


def test_split_secret_args_moves_every_secret_named_option_and_nothing_else():
    from ansible_collections.gpufleet.sglang.plugins.filter.server import split_secret_args  # pylint: disable=import-outside-toplevel
    args = {"tp_size": 2, "api_key": "k1", "admin_api_key": "k2", "ssl_keyfile_password": "pw", "ssl_keyfile": "/etc/k.pem",
            "bucket_time_to_first_token": [0.1]}
    assert split_secret_args(args) == {
        "plain": {"tp_size": 2, "ssl_keyfile": "/etc/k.pem", "bucket_time_to_first_token": [0.1]},
        "secret": {"api_key": "k1", "admin_api_key": "k2", "ssl_keyfile_password": "pw"}}


def test_split_secret_args_refuses_a_non_mapping():
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel
    from ansible_collections.gpufleet.sglang.plugins.filter.server import split_secret_args  # pylint: disable=import-outside-toplevel
    with pytest.raises(AnsibleFilterError, match=r"^split_secret_args: the input is a dict of SGLang options, not list$"):
        split_secret_args(["api_key"])
