# -*- coding: utf-8 -*-
"""tune_report's assembly: the candidate shapes tune.yml takes, the report's keys, the defaults, and each
note at its cut-off (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_report import normalise_candidate, tune_report
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import TuneReportError


def measured(name, runs, args=None):
    return {"name": name, "args": {name: True} if args is None else args, "status": "measured", "runs": runs}


def test_a_named_candidate_keeps_its_name_and_a_copy_of_its_args():
    args = {"cuda_graph_max_bs": 8}
    result = normalise_candidate({"name": "graphs", "args": args})
    assert result == {"name": "graphs", "args": {"cuda_graph_max_bs": 8}}
    assert result["args"] is not args


def test_an_unnamed_candidate_is_named_by_its_options_in_order():
    assert normalise_candidate({"args": {"b": 1, "a": 2}}) == {"name": "a, b", "args": {"b": 1, "a": 2}}
    assert normalise_candidate({"name": "", "args": {"x": 1}}) == {"name": "x", "args": {"x": 1}}
    assert normalise_candidate({"name": 7, "args": {"x": 1}}) == {"name": "7", "args": {"x": 1}}


def test_a_bare_candidate_is_named_by_its_options_as_typed():
    nested = {"rope_scaling": {"factor": 4.0}}
    result = normalise_candidate({"enable_torch_compile": True, "json_model_override_args": nested})
    assert result == {"name": "enable_torch_compile, json_model_override_args",
                      "args": {"enable_torch_compile": True, "json_model_override_args": {"rope_scaling": {"factor": 4.0}}}}
    assert result["args"]["json_model_override_args"] is not nested


@pytest.mark.parametrize("item, message", [
    ({}, "a candidate is {name: ..., args: {option: value}} or {option: value}, got {}"),
    (["x"], "a candidate is {name: ..., args: {option: value}} or {option: value}, got ['x']"),
    (None, "a candidate is {name: ..., args: {option: value}} or {option: value}, got None"),
    ({"name": "n", "args": {}}, "candidate 'n': args must be a non-empty dict of SGLang options"),
    ({"name": "n", "args": ["x"]}, "candidate 'n': args must be a non-empty dict of SGLang options"),
    ({"args": {"x": 1}, "runs": [1], "name": "n", "extra": 2},
     "candidate 'n': unknown key(s) extra, runs (a candidate has name and args)"),
])
def test_bad_candidates_word_for_word(item, message):
    with pytest.raises(TuneReportError) as caught:
        normalise_candidate(item)
    assert str(caught.value) == message


def test_the_report_keys_and_defaults():
    report = tune_report(None, {"runs": [50.0]})
    assert sorted(report) == ["baseline", "ceiling", "kept", "markdown", "metric", "min_gain_pct", "notes", "rows", "svg",
                              "winning_args"]
    assert (report["metric"], report["min_gain_pct"], report["ceiling"]) == ("decode tok/s, batch 1", 2.0, None)
    assert report["baseline"] == {"n": 1, "mean": 50.0, "min": 50.0, "max": 50.0, "spread_pct": 0.0, "runs": [50.0],
                                  "args": {}, "efficiency": None}
    assert (report["rows"], report["kept"], report["winning_args"], report["notes"]) == ([], [], {}, [])
    assert report["markdown"].startswith("## SGLang flag tuning: decode tok/s, batch 1\n")
    assert report["svg"].startswith("<svg ")


def test_the_floor_and_metric_are_passed_on():
    report = tune_report([measured("a", [101.0])], {"runs": [100.0]}, min_gain_pct=0, metric=7)
    assert report["metric"] == "7" and report["min_gain_pct"] == 0.0 and isinstance(report["min_gain_pct"], float)
    assert report["kept"] == ["a"]
    assert tune_report([measured("a", [101.0])], {"runs": [100.0]}, min_gain_pct=1.5)["kept"] == []


@pytest.mark.parametrize("floor", [float("inf"), float("nan"), True, None, -0.1])
def test_a_floor_that_is_not_a_finite_number_from_zero_is_refused(floor):
    with pytest.raises(TuneReportError) as caught:
        tune_report([], {"runs": [50.0]}, min_gain_pct=floor)
    assert str(caught.value) == "min_gain_pct must be a number >= 0, got %r" % (floor,)


def test_input_errors_word_for_word():
    with pytest.raises(TuneReportError) as caught:
        tune_report([], [50.0])
    assert str(caught.value) == "baseline must be a dict with args and runs, got [50.0]"
    with pytest.raises(TuneReportError) as caught:
        tune_report([], {"args": {}})
    assert str(caught.value) == "baseline.runs is missing or empty: the base config must be measured at least once"
    with pytest.raises(TuneReportError) as caught:
        tune_report("a", {"runs": [50.0]})
    assert str(caught.value) == "candidates must be a list of dicts, got 'a'"


def test_candidates_as_a_tuple_are_taken():
    assert tune_report((measured("a", [60.0]),), {"runs": [50.0]})["kept"] == ["a"]


def test_kept_flags_are_ordered_by_gain_not_by_order_tried():
    report = tune_report([measured("small", [55.0]), measured("big", [70.0]), measured("mid", [60.0])], {"runs": [50.0]})
    assert report["kept"] == ["big", "mid", "small"]


def test_exactly_at_the_ceiling_is_not_above_it():
    report = tune_report([measured("a", [61.2])], {"runs": [50.0]}, {"tokens_per_s": 61.2})
    assert report["rows"][0]["efficiency"] == 1.0
    assert report["notes"] == []


def test_a_base_config_above_the_ceiling_is_named_as_such():
    report = tune_report([], {"runs": [70.0]}, {"tokens_per_s": 61.2})
    assert report["notes"] == ["faster than the 61.20 tok/s ceiling: the base config (70.00); the ceiling's inputs (GPU, dtype,"
                               " accept length) are likely wrong"]


def test_an_option_that_only_contains_speculative_is_not_speculation():
    report = tune_report([measured("a", [55.0], {"disable_speculative_x": True})], {"runs": [50.0]}, {"tokens_per_s": 61.2})
    assert report["rows"][0]["efficiency"] == 0.899 and report["notes"] == []


def test_a_speculative_candidate_that_was_not_measured_gets_no_note():
    crashed = {"name": "eagle", "args": {"speculative_algorithm": "EAGLE"}, "status": "crashed", "detail": {"cause": "oom"}}
    assert tune_report([crashed], {"runs": [50.0]}, {"tokens_per_s": 61.2})["notes"] == []


def test_a_speculative_candidate_above_the_bound_is_not_listed_as_above_the_ceiling():
    report = tune_report([measured("eagle", [90.0], {"speculative_algorithm": "EAGLE"})], {"runs": [50.0]}, {"tokens_per_s": 61.2})
    assert report["notes"] == ["eagle changes speculative decoding, so the base config's 61.20 tok/s bound is not its bound;"
                               " its probe reports its own at its accept length"]


def test_a_named_candidate_shares_no_nested_value_with_the_input():
    nested = {"rope_scaling": {"factor": 4.0}}
    result = normalise_candidate({"name": "rope", "args": {"json_model_override_args": nested}})
    assert result["args"]["json_model_override_args"] == nested
    assert result["args"]["json_model_override_args"] is not nested
