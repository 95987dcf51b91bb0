# -*- coding: utf-8 -*-
"""The gpufleet.sglang.sglang_venv filter: the install's venv formula behind Jinja, and its documentation sidecar
parses and matches the signature."""

from __future__ import annotations

import inspect
from pathlib import Path

import yaml

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule, sglang_venv

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"


def test_filter_is_registered_and_gives_the_venv():
    assert FilterModule().filters()["sglang_venv"] is sglang_venv
    assert sglang_venv("/opt/sglang", "standin", "0.5.23") == "/opt/sglang/venvs/standin-0.5.23"
    assert sglang_venv("/opt/sglang", "pypi", "0.5.23") == "/opt/sglang/venvs/0.5.23"


def test_documentation_sidecar_matches_the_signature():
    doc = yaml.safe_load((FILTERS / "sglang_venv.yml").read_text(encoding="utf-8"))
    assert doc["DOCUMENTATION"]["name"] == "sglang_venv"
    assert list(doc["DOCUMENTATION"]["options"]) == ["_input"] + list(inspect.signature(sglang_venv).parameters)[1:]
    assert "/opt/sglang/venvs/standin-0.5.23" in doc["EXAMPLES"]
