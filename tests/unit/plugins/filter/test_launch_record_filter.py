# -*- coding: utf-8 -*-
"""The gpufleet.sglang.launch_record filter: the record behind Jinja, wrong inputs as filter errors, and its
documentation sidecar parses, matches the signature and lists every key of the record."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule, launch_record
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import launch_record as plain_record

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"
LAUNCH = {"restarted": True, "changed_files": ["(files that this run would write)"]}
WRITTEN = {"/etc/sglang/main.yaml": True, "/etc/sglang/main.env": True}


def test_filter_is_registered_and_matches_the_plain_function():
    assert FilterModule().filters()["launch_record"] is launch_record
    assert launch_record(LAUNCH, "sglang-main.service", 30000, "0.5.23", check_mode=True, written=WRITTEN) == plain_record(
        LAUNCH, "sglang-main.service", 30000, "0.5.23", check_mode=True, written=WRITTEN)
    assert launch_record(LAUNCH, "sglang-main.service", 30000, "0.5.23", check_mode=True, written=WRITTEN)["changed_files"] == list(WRITTEN)


@pytest.mark.parametrize("launch,kwargs,match", [
    ("ok", {}, r"^launch_record: the launch result must be the registered result of sglang_launch, not str$"),
    (LAUNCH, {"written": ["/etc/sglang/main.yaml"]}, r"^launch_record: written is a dict of path: changed, not list$"),
])
def test_wrong_inputs_are_filter_errors(launch, kwargs, match):
    with pytest.raises(AnsibleFilterError, match=match):
        launch_record(launch, "sglang-main.service", 30000, "0.5.23", **kwargs)


def test_documentation_sidecar_matches_the_signature_and_the_record():
    doc = yaml.safe_load((FILTERS / "launch_record.yml").read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == "launch_record"
    assert list(doc["DOCUMENTATION"]["options"]) == ["_input"] + list(inspect.signature(launch_record).parameters)[1:]
    record = launch_record(LAUNCH, "sglang-main.service", 30000, "0.5.23")
    assert list(doc["RETURN"]["_value"]["contains"]) == list(record)
