# -*- coding: utf-8 -*-
"""The gpufleet.sglang.tune_report filter: the module_utils rule behind Jinja, errors as filter errors naming the
bad input, and its documentation sidecar parses."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.tune_report import FilterModule, tune_report
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_report import tune_report as model_report

BASELINE = {"args": {"tp_size": 2}, "runs": [50.0, 50.5, 50.25]}
CANDIDATES = [
    {"name": "enable_torch_compile", "args": {"enable_torch_compile": True}, "status": "measured", "runs": [54.0, 54.5, 54.2]},
    {"name": "enable_mixed_chunk", "args": {"enable_mixed_chunk": True}, "status": "crashed",
     "detail": {"cause": "oom_graph", "phase": "cuda_graph_capture", "hint": "lower cuda_graph_max_bs", "error_message": None,
                "rolled_back": True, "rollback_ready": True}},
]
CEILING = {"tokens_per_s": 61.2, "bound": "memory_bandwidth"}


def test_filter_is_registered_and_matches_the_model():
    assert FilterModule().filters()["tune_report"] is tune_report
    assert tune_report(CANDIDATES, BASELINE, ceiling=CEILING, min_gain_pct=3.0) == model_report(CANDIDATES, BASELINE, CEILING, 3.0)


def test_filter_result_has_every_documented_key():
    result = tune_report(CANDIDATES, baseline=BASELINE)
    assert result["kept"] == ["enable_torch_compile"]
    assert result["winning_args"] == {"tp_size": 2, "enable_torch_compile": True}
    assert result["rows"][1]["verdict"] == "crashed"
    doc = yaml.safe_load((Path(__file__).resolve().parents[4] / "plugins" / "filter" / "tune_report.yml").read_text(encoding="utf-8"))
    assert set(doc["RETURN"]["_value"]["contains"]) == set(result)


def test_min_gain_pct_may_be_text():
    strict = tune_report(CANDIDATES, BASELINE, min_gain_pct="10")
    assert strict["kept"] == [] and strict["rows"][0]["verdict"] == "no gain" and strict["min_gain_pct"] == 10.0


@pytest.mark.parametrize("candidates,kwargs,match", [
    (CANDIDATES, {}, "tune_report: baseline is required"),
    (CANDIDATES, {"baseline": {"args": {}}}, r"tune_report: baseline\.runs is missing"),
    ([{"name": "x", "status": "finished"}], {"baseline": BASELINE}, r"tune_report: candidates\[0\] \(x\)\.status must be one of"),
    ([{"status": "measured", "runs": [1.0]}], {"baseline": BASELINE}, r"tune_report: candidates\[0\]\.name is missing"),
    ([{"name": "x", "status": "measured"}], {"baseline": BASELINE}, r"tune_report: candidates\[0\] \(x\) is measured but has no runs"),
    ([{"name": "x", "status": "measured", "runs": ["54"]}], {"baseline": BASELINE}, r"candidates\[0\] \(x\)\.runs\[0\] must be a number"),
    (CANDIDATES, {"baseline": BASELINE, "min_gain_pct": "two"}, "tune_report: min_gain_pct must be a number of percent, not 'two'"),
    (CANDIDATES, {"baseline": BASELINE, "ceiling": {"tokens_per_s": 0}}, r"tune_report: ceiling\.tokens_per_s must be a positive number"),
])
def test_filter_errors_are_ansible_filter_errors(candidates, kwargs, match):
    with pytest.raises(AnsibleFilterError, match=match):
        tune_report(candidates, **kwargs)


def test_documentation_sidecar_lists_every_argument():
    doc_path = Path(__file__).resolve().parents[4] / "plugins" / "filter" / "tune_report.yml"
    doc = yaml.safe_load(doc_path.read_text(encoding="utf-8"))
    options = set(doc["DOCUMENTATION"]["options"]) - {"_input"}
    from ansible_collections.gpufleet.sglang.plugins.filter import tune_report as plugin  # pylint: disable=import-outside-toplevel
    assert options == set(plugin._KEYWORDS)  # pylint: disable=protected-access
    assert doc["DOCUMENTATION"]["name"] == "tune_report" and "markdown" in doc["RETURN"]["_value"]["contains"]


def test_tune_candidate_takes_the_bare_and_the_long_form():
    candidate = FilterModule().filters()["tune_candidate"]
    assert candidate({"enable_torch_compile": True}) == {"name": "enable_torch_compile", "args": {"enable_torch_compile": True}}
    assert candidate({"name": "graphs", "args": {"cuda_graph_max_bs": 16}}) == {"name": "graphs", "args": {"cuda_graph_max_bs": 16}}
    assert candidate({"args": {"b": 1, "a": 2}})["name"] == "a, b"
    for bad, words in (({}, "a candidate is"), ({"args": {}}, "non-empty"), ({"args": {"a": 1}, "flag": 2}, "unknown key")):
        with pytest.raises(AnsibleFilterError, match=words):
            candidate(bad)
