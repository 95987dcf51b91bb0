# -*- coding: utf-8 -*-
"""tune_verdicts at its edges: the exact words of each reason and error, the 200-character cut of an error
text, each rollback state, the finding shapes, and the defaults of the rule (make mutation:
tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import (
    TuneReportError,
    candidate_row,
    combine_args,
    compare,
    efficiency,
    failure_label,
    failure_reason,
    pct,
    public_stats,
    run_stats,
    server_args_of,
    signed_pct,
    top_ceiling,
)


def test_run_stats_whole():
    assert run_stats([50, 52.004, 51.0]) == {"n": 3, "mean": 51.0, "min": 50.0, "max": 52.0, "spread_pct": 3.9,
                                             "runs": [50.0, 52.0, 51.0], "raw_mean": pytest.approx(51.001333, abs=1e-6)}


def test_public_stats_drop_only_the_raw_mean():
    stats = run_stats([10.0, 12.0])
    assert public_stats(stats) == {"n": 2, "mean": 11.0, "min": 10.0, "max": 12.0, "spread_pct": 18.2, "runs": [10.0, 12.0]}


@pytest.mark.parametrize("runs, message", [
    ([], "runs must be a non-empty list of decode tok/s, batch 1 measurements, got []"),
    ((), "runs must be a non-empty list of decode tok/s, batch 1 measurements, got ()"),
    (None, "runs must be a non-empty list of decode tok/s, batch 1 measurements, got None"),
    ([1.0, float("inf")], "runs[1] must be a number, got inf"),
    ([False], "runs[0] must be a number, got False"),
    ([1.0, 2.0, -0.5], "runs[2] must be positive (a throughput), got -0.5"),
    ([0], "runs[0] must be positive (a throughput), got 0"),
])
def test_run_stats_errors_word_for_word(runs, message):
    with pytest.raises(TuneReportError) as caught:
        run_stats(runs)
    assert str(caught.value) == message


def test_a_tuple_of_runs_is_taken_and_a_tiny_positive_one_too():
    assert run_stats((1e-9, 2e-9))["n"] == 2


def test_percent_texts():
    assert (pct(1.25), pct(0), signed_pct(2.04), signed_pct(-3.0), signed_pct(0.0)) == ("1.2%", "0.0%", "+2.0%", "-3.0%", "+0.0%")


def test_the_default_floor_is_two_percent():
    base = run_stats([100.0, 100.0])
    assert compare(base, run_stats([102.0, 102.0]))["verdict"] == "no gain"
    assert compare(base, run_stats([102.1, 102.1]))["verdict"] == "keep"
    assert compare(base, run_stats([97.9, 97.9]))["verdict"] == "slower"


def test_a_noise_equal_to_the_floor_is_named_as_the_noise():
    result = compare(run_stats([99.0, 101.0]), run_stats([101.0, 101.0]), 2.0)
    assert result == {"verdict": "no gain", "gain_pct": 1.0, "noise_pct": 2.0, "threshold_pct": 2.0,
                      "reason": "+1.0% is within the noise (2.0%; floor 2.0%)"}


def test_a_slower_candidate_just_past_the_threshold():
    result = compare(run_stats([100.0, 100.0]), run_stats([97.9, 97.9]), 2.0)
    assert result == {"verdict": "slower", "gain_pct": -2.1, "noise_pct": 0.0, "threshold_pct": 2.0,
                      "reason": "-2.1%: slower by more than the noise (0.0%) and the 2.0% floor"}


def test_the_candidate_alone_ran_once():
    assert compare(run_stats([100.0, 100.0]), run_stats([110.0]), 2.0)["reason"].endswith(
        "; the candidate ran once, so its noise is unknown")


@pytest.mark.parametrize("length, expected", [(199, "e" * 199), (200, "e" * 200), (201, "e" * 199 + "\u2026")])
def test_an_error_message_is_cut_at_200_characters(length, expected):
    assert failure_reason("crashed", {"error_message": "e" * length}) == "cause unknown: " + expected


def test_a_cut_does_not_leave_a_trailing_space():
    text = failure_reason("crashed", {"error_message": "e" * 198 + " xyz"})
    assert text == "cause unknown: " + "e" * 198 + "\u2026"


def test_a_hint_is_one_line_without_its_final_full_stop():
    assert failure_reason("gate_failed", {"cause": "gate_ttft", "hint": "lower  the\nbatch. "}) == (
        "cause gate_ttft; hint: lower the batch")


@pytest.mark.parametrize("detail, tail", [
    ({"rolled_back": True}, "; rolled back"),
    ({"rolled_back": False, "rollback_ready": True}, "; not rolled back"),
    ({"rolled_back": True, "rollback_ready": True}, "; rolled back, serving again"),
    ({"rolled_back": True, "rollback_ready": None}, "; rolled back, NOT ready"),
    ({}, ""),
])
def test_each_rollback_state(detail, tail):
    assert failure_reason("crashed", dict(detail, cause="x")) == "cause x" + tail


def test_a_detail_given_as_text_is_the_reason():
    assert failure_reason("crashed", "server exited 1") == "server exited 1"
    assert failure_reason("refused", "bad flag") == "bad flag"


@pytest.mark.parametrize("findings, reason", [
    ("one finding", "one finding"),
    ({"flag": "tp_size", "message": "too big"}, "tp_size: too big"),
    ([{"code": "unknown_flag"}], "unknown_flag"),
    ([{"flag": "x", "code": "unknown_flag"}], "x: unknown_flag"),
    ([{"other": 1}], "{'other': 1}"),
    ([3, "b"], "3; b"),
    ([], "refused by the preflight (no findings recorded)"),
])
def test_each_finding_shape(findings, reason):
    assert failure_reason("refused", {"findings": findings}) == reason


def test_refused_without_detail():
    assert failure_reason("refused", None) == "refused by the preflight (no findings recorded)"


def test_a_refused_label_never_names_a_cause():
    assert failure_label("refused", {"cause": "x"}) == "refused"
    assert failure_label("gate_failed", "text detail") == "gate failed"
    assert failure_label("crashed", {"cause": ""}) == "crashed"


def test_efficiency_is_a_share_rounded_to_three_digits():
    assert efficiency(50.0, 61.2) == 0.817
    assert efficiency(50.0, None) is None
    assert efficiency(50.0, 0) is None


def test_top_ceiling_shapes():
    assert top_ceiling({"tokens_per_s": 61.234, "bound": "memory_bandwidth"}) == {"tokens_per_s": 61.23, "bound": "memory bandwidth"}
    assert top_ceiling({"tokens_per_s": 61}) == {"tokens_per_s": 61.0, "bound": None}
    assert top_ceiling(None) is None and top_ceiling({}) is None


@pytest.mark.parametrize("tps", [0, -1.0, True, "61", float("nan"), float("inf"), None])
def test_a_ceiling_speed_that_is_not_positive_is_refused(tps):
    with pytest.raises(TuneReportError) as caught:
        top_ceiling({"tokens_per_s": tps})
    assert str(caught.value) == "ceiling.tokens_per_s must be a positive number, got %r" % (tps,)


def test_a_ceiling_that_is_not_a_dict_is_refused_word_for_word():
    with pytest.raises(TuneReportError) as caught:
        top_ceiling([61.2])
    assert str(caught.value) == "ceiling must be a dict with tokens_per_s (the decode_ceiling result) or None, got [61.2]"


def test_server_args_are_copied_deeply():
    args = {"json_model_override_args": {"rope_scaling": {"factor": 4.0}}}
    copied = server_args_of(args, "x")
    copied["json_model_override_args"]["rope_scaling"]["factor"] = 8.0
    assert args["json_model_override_args"]["rope_scaling"]["factor"] == 4.0
    assert server_args_of(None, "x") == {}
    with pytest.raises(TuneReportError) as caught:
        server_args_of(["tp"], "baseline.args")
    assert str(caught.value) == "baseline.args must be a dict of SGLang options, got ['tp']"


def test_a_failed_candidate_row_whole():
    row = candidate_row({"name": "c", "args": {"c": True}, "status": "gate_failed", "detail": {"cause": "gate_ttft"}},
                        0, run_stats([50.0]), 61.2, 2.0)
    assert row == {"name": "c", "args": {"c": True}, "status": "gate_failed", "verdict": "gate failed",
                   "label": "gate failed: gate_ttft", "mean": None, "runs": [], "stats": None, "gain_pct": None,
                   "noise_pct": None, "threshold_pct": None, "efficiency": None, "reason": "cause gate_ttft"}


def test_a_measured_candidate_row_whole():
    row = candidate_row({"name": "c", "status": "measured", "runs": [55.0, 56.0]}, 3, run_stats([50.0, 50.0]), 61.2, 2.0)
    assert row == {"name": "c", "args": {}, "status": "measured", "verdict": "keep", "label": "keep", "mean": 55.5,
                   "runs": [55.0, 56.0], "stats": {"n": 2, "mean": 55.5, "min": 55.0, "max": 56.0, "spread_pct": 1.8,
                                                   "runs": [55.0, 56.0]},
                   "gain_pct": 11.0, "noise_pct": 1.8, "threshold_pct": 2.0, "efficiency": 0.907,
                   "reason": "+11.0% beats the noise (1.8%) and the 2.0% floor"}


@pytest.mark.parametrize("candidate, message", [
    ({"name": "c", "status": "crashed", "detail": 3}, "candidates[2] (c).detail must be a dict, got 3"),
    ({"name": "c", "status": None}, "candidates[2] (c).status must be one of measured, refused, crashed, gate_failed, got None"),
    ({"name": 7, "status": "measured"}, "candidates[2].name is missing or empty"),
    ({"name": "c", "status": "measured", "runs": [1.0, "x"]}, "candidates[2] (c).runs[1] must be a number, got 'x'"),
    ("c", "candidates[2] must be a dict, got 'c'"),
])
def test_candidate_errors_name_the_candidate_word_for_word(candidate, message):
    with pytest.raises(TuneReportError) as caught:
        candidate_row(candidate, 2, run_stats([50.0]), None, 2.0)
    assert str(caught.value) == message


def test_combining_equal_values_gives_no_note_and_three_kept_flags_the_best_value():
    rows = [{"name": "a", "args": {"x": 1, "y": 1}}, {"name": "b", "args": {"x": 1}}, {"name": "c", "args": {"y": 2, "z": 3}}]
    merged, notes = combine_args({"x": 0, "w": 9}, rows)
    assert merged == {"x": 1, "w": 9, "y": 1, "z": 3}
    assert notes == ["a and c both set y; a's value (the larger gain) is used"]


def test_combining_copies_the_values():
    rows = [{"name": "a", "args": {"x": {"deep": [1]}}}]
    merged, notes = combine_args({}, rows)
    merged["x"]["deep"].append(2)
    assert rows[0]["args"]["x"]["deep"] == [1] and notes == []


def test_min_and_max_are_rounded_to_two_digits_like_the_mean():
    stats = run_stats([50.004, 51.006])
    assert (stats["min"], stats["max"], stats["mean"]) == (50.0, 51.01, 50.5)


def test_the_threshold_is_the_floor_as_given_rounded_to_a_tenth():
    result = compare(run_stats([100.0, 100.0]), run_stats([110.0, 110.0]), 2.26)
    assert (result["threshold_pct"], result["reason"]) == (2.3, "+10.0% beats the noise (0.0%) and the 2.3% floor")


def test_a_hint_keeps_its_last_letter():
    assert failure_reason("crashed", {"cause": "x", "hint": "see journalctl -u sglang@X."}) == (
        "cause x; hint: see journalctl -u sglang@X")


def test_a_ceiling_below_one_token_per_second_is_still_a_ceiling():
    assert top_ceiling({"tokens_per_s": 0.5}) == {"tokens_per_s": 0.5, "bound": None}
    assert top_ceiling({"tokens_per_s": 1}) == {"tokens_per_s": 1.0, "bound": None}


def test_a_measured_candidate_without_runs_word_for_word():
    with pytest.raises(TuneReportError) as caught:
        candidate_row({"name": "c", "status": "measured", "runs": []}, 1, run_stats([50.0]), None, 2.0)
    assert str(caught.value) == "candidates[1] (c) is measured but has no runs"


def test_the_combined_args_share_nothing_with_the_base_args():
    base = {"json_model_override_args": {"rope_scaling": {"factor": 4.0}}}
    merged = combine_args(base, [{"name": "a", "args": {"x": 1}}])[0]
    merged["json_model_override_args"]["rope_scaling"]["factor"] = 8.0
    assert base == {"json_model_override_args": {"rope_scaling": {"factor": 4.0}}}
