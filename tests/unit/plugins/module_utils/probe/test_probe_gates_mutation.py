# -*- coding: utf-8 -*-
"""probe.gates at each cut-off: a figure equal to its limit passes, one past it misses; every check's keys and
words, the defaults of the tolerance and the TTFT slack, and each way a figure or a level can be missing
(make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.gates import (
    baseline_levels,
    evaluate,
    failure_checks,
    gate_level,
    regression_checks,
    threshold_checks,
)


def level(conc, decode=28.0, ttft_p90=120.0, ttft_p50=90.0, out=27.0, failed=0, requests=4, errors=None):
    return {"concurrency": conc, "requests": requests, "failed": failed, "errors": errors or [],
            "decode_tps": {"mean": decode}, "ttft_ms": {"p50": ttft_p50, "p90": ttft_p90}, "output_throughput": out}


def check(gate, conc, metric, measured, limit, passed, text):
    return {"gate": gate, "concurrency": conc, "metric": metric, "measured": measured, "limit": limit, "passed": passed,
            "text": text}


def test_a_decode_speed_equal_to_the_minimum_passes_and_just_under_misses():
    assert threshold_checks([level(1, decode=25.0)], min_decode_tps=25) == [check(
        "min_decode_tps", 1, "decode_tps.mean", 25.0, 25.0, True, "decode 25.00 tok/s (mean, concurrency 1) >= min_decode_tps 25")]
    assert threshold_checks([level(1, decode=24.99)], min_decode_tps=25) == [check(
        "min_decode_tps", 1, "decode_tps.mean", 24.99, 25.0, False, "decode 24.99 tok/s (mean, concurrency 1) < min_decode_tps 25")]


def test_a_ttft_equal_to_the_maximum_passes_and_just_over_misses():
    assert threshold_checks([level(2, ttft_p90=200.0)], max_ttft_ms=200) == [check(
        "max_ttft_ms", 2, "ttft_ms.p90", 200.0, 200.0, True, "TTFT p90 200.0 ms (concurrency 2) <= max_ttft_ms 200")]
    assert threshold_checks([level(2, ttft_p90=200.04)], max_ttft_ms=200) == [check(
        "max_ttft_ms", 2, "ttft_ms.p90", 200.04, 200.0, False, "TTFT p90 200.0 ms (concurrency 2) > max_ttft_ms 200")]


def test_the_ttft_gate_reads_the_p90_not_the_p50():
    assert threshold_checks([level(1, ttft_p50=50.0, ttft_p90=150.0)], max_ttft_ms=100)[0]["passed"] is False
    assert threshold_checks([level(1, ttft_p50=150.0, ttft_p90=50.0)], max_ttft_ms=100)[0]["passed"] is True


def test_limits_are_rounded_to_three_digits_and_printed_short():
    result = threshold_checks([level(1, decode=30.0)], min_decode_tps=25.12346)
    assert result[0]["limit"] == 25.123
    assert result[0]["text"] == "decode 30.00 tok/s (mean, concurrency 1) >= min_decode_tps 25.1235"


def test_a_level_without_the_figure_misses_and_says_no():
    bare = {"concurrency": 1}
    assert threshold_checks([bare], min_decode_tps=10, max_ttft_ms=100) == [
        check("min_decode_tps", 1, "decode_tps.mean", None, 10.0, False, "decode no tok/s (mean, concurrency 1) < min_decode_tps 10"),
        check("max_ttft_ms", 1, "ttft_ms.p90", None, 100.0, False, "TTFT p90 no ms (concurrency 1) > max_ttft_ms 100"),
    ]


@pytest.mark.parametrize("figure", [True, "28", None, [28.0]])
def test_a_figure_that_is_not_a_number_counts_as_missing(figure):
    bad = {"concurrency": 1, "decode_tps": {"mean": figure}}
    assert threshold_checks([bad], min_decode_tps=1)[0]["measured"] is None
    assert threshold_checks([{"concurrency": 1, "decode_tps": figure}], min_decode_tps=1)[0]["measured"] is None


def test_an_int_figure_is_read_as_a_float():
    result = threshold_checks([{"concurrency": 1, "decode_tps": {"mean": 30}}], min_decode_tps=1)[0]
    assert result["measured"] == 30.0 and isinstance(result["measured"], float)


def test_without_any_level_each_set_gate_misses_with_where_it_looked():
    assert threshold_checks([], min_decode_tps=10, max_ttft_ms=100) == [
        check("min_decode_tps", None, "", None, 10.0, False, "min_decode_tps: no measurement at any concurrency"),
        check("max_ttft_ms", None, "", None, 100.0, False, "max_ttft_ms: no measurement at any concurrency"),
    ]
    assert threshold_checks([level(1)], max_ttft_ms=100, gate_concurrency=8) == [
        check("max_ttft_ms", 8, "", None, 100.0, False, "max_ttft_ms: no measurement at concurrency 8")]
    assert threshold_checks([level(1)], min_decode_tps=10, gate_concurrency=8) == [
        check("min_decode_tps", 8, "", None, 10.0, False, "min_decode_tps: no measurement at concurrency 8")]


def test_no_gate_set_no_threshold_check():
    assert threshold_checks([level(1)]) == []
    assert threshold_checks([]) == []


def test_the_gate_level_takes_a_concurrency_given_as_text_and_treats_a_missing_one_as_zero():
    levels = [level(4), level(2)]
    assert gate_level(levels, "4") is levels[0]
    unnamed = {"decode_tps": {"mean": 1.0}}
    assert gate_level([level(1), unnamed]) is unnamed
    assert gate_level([level(1)], 0) is None


def test_the_gates_read_the_named_level_not_the_lowest():
    checks = threshold_checks([level(1, decode=10.0), level(4, decode=30.0)], min_decode_tps=20, gate_concurrency=4)
    assert checks[0]["passed"] is True and checks[0]["concurrency"] == 4


def test_a_level_with_failed_requests_is_one_missed_check():
    assert failure_checks([level(1), level(4, failed=2, requests=5)]) == [
        check("requests", 4, "failed", 2.0, 0.0, False, "2 of 5 requests failed at concurrency 4 (first: no error text)")]
    assert failure_checks([{"concurrency": 2, "failed": 1, "errors": ["a", "b"]}]) == [
        check("requests", 2, "failed", 1.0, 0.0, False, "1 of 0 requests failed at concurrency 2 (first: a)")]
    assert failure_checks([{"concurrency": 2, "failed": None}]) == []


def test_a_baseline_is_a_result_or_a_list_of_levels():
    levels = [level(1)]
    assert baseline_levels({"levels": levels}) is levels
    assert baseline_levels(levels) is levels
    assert baseline_levels([]) == []
    for bad in ({"levels": None}, {"levels": [1]}, [level(1), "x"], "levels", None):
        with pytest.raises(ValueError, match="^a baseline is an earlier sglang_probe result"):
            baseline_levels(bad)


def test_each_regression_figure_at_its_limit_passes():
    now = [level(1, decode=95.0, out=190.0, ttft_p50=89.0)]
    old = [level(1, decode=100.0, out=200.0, ttft_p50=80.0)]
    assert regression_checks(now, old) == [
        check("baseline", 1, "decode_tps.mean", 95.0, 95.0, True,
              "decode tok/s (mean) at concurrency 1: 95.00 tok/s vs baseline 100.00 tok/s (-5.0%, limit 95.00)"),
        check("baseline", 1, "output_throughput", 190.0, 190.0, True,
              "output throughput at concurrency 1: 190.00 tok/s vs baseline 200.00 tok/s (-5.0%, limit 190.00)"),
        check("baseline", 1, "ttft_ms.p50", 89.0, 89.0, True,
              "TTFT p50 at concurrency 1: 89.00 ms vs baseline 80.00 ms (+11.2%, limit 89.00)"),
    ]


def test_each_regression_figure_just_past_its_limit_misses():
    now = [level(1, decode=94.99, out=189.99, ttft_p50=89.01)]
    old = [level(1, decode=100.0, out=200.0, ttft_p50=80.0)]
    assert [c["passed"] for c in regression_checks(now, old)] == [False, False, False]


def test_tolerance_and_slack_are_used_as_given():
    now = [level(1, decode=90.0, out=200.0, ttft_p50=100.0)]
    old = [level(1, decode=100.0, out=200.0, ttft_p50=80.0)]
    checks = regression_checks(now, old, tolerance_pct=10.0, ttft_slack_ms=12.0)
    assert [(c["limit"], c["passed"]) for c in checks] == [(90.0, True), (180.0, True), (100.0, True)]
    checks = regression_checks(now, old, tolerance_pct=9.0, ttft_slack_ms=12.0)
    assert [(c["limit"], c["passed"]) for c in checks] == [(91.0, False), (182.0, True), (99.2, False)]


def test_a_faster_run_passes_with_a_positive_change():
    checks = regression_checks([level(2, decode=110.0)], [level(2, decode=100.0)])
    assert checks[0]["text"] == "decode tok/s (mean) at concurrency 2: 110.00 tok/s vs baseline 100.00 tok/s (+10.0%, limit 95.00)"


def test_a_zero_baseline_figure_has_no_percentage():
    checks = regression_checks([level(1, decode=5.0, ttft_p50=3.0)], [level(1, decode=0.0, ttft_p50=0.0)])
    assert checks[0]["text"] == "decode tok/s (mean) at concurrency 1: 5.00 tok/s vs baseline 0.00 tok/s (+0.0%, limit 0.00)"
    assert checks[2]["text"] == "TTFT p50 at concurrency 1: 3.00 ms vs baseline 0.00 ms (+0.0%, limit 5.00)"


def test_measured_figures_are_rounded_to_three_digits():
    checks = regression_checks([level(1, decode=99.123456)], [level(1, decode=100.0)])
    assert checks[0]["measured"] == 99.123


def test_only_figures_present_on_both_sides_are_compared():
    now = [{"concurrency": 1, "decode_tps": {"mean": 50.0}}, {"concurrency": 3, "output_throughput": 9.0}]
    old = [{"concurrency": 1, "output_throughput": 10.0, "decode_tps": {"mean": 50.0}}, {"concurrency": 3}]
    assert [(c["concurrency"], c["metric"]) for c in regression_checks(now, old)] == [(1, "decode_tps.mean")]


def test_a_baseline_with_nothing_to_compare_is_one_missed_check():
    assert regression_checks([level(1), level(4)], {"levels": [{"concurrency": 1}]}) == [
        check("baseline", None, "", None, 0.0, False, "baseline has no level at the concurrencies probed (1, 4)")]
    assert regression_checks([level(1)], []) == [
        check("baseline", None, "", None, 0.0, False, "baseline has no level at the concurrencies probed (1)")]


def test_levels_without_a_concurrency_are_matched_with_each_other():
    now, old = [{"decode_tps": {"mean": 50.0}}], [{"decode_tps": {"mean": 50.0}}]
    assert regression_checks(now, old)[0]["text"].startswith("decode tok/s (mean) at concurrency -1: 50.00 tok/s")


def test_evaluate_orders_failures_thresholds_then_the_baseline_and_counts_the_missed():
    levels = [level(1, decode=20.0, failed=1, errors=["boom"])]
    result = evaluate(levels, min_decode_tps=25, baseline=[level(1, decode=20.0)])
    assert [c["gate"] for c in result["checks"]] == ["requests", "min_decode_tps", "baseline", "baseline", "baseline"]
    assert result["passed"] is False and [c["gate"] for c in result["missed"]] == ["requests", "min_decode_tps"]
    assert result["message"] == ("2 probe gates missed: 1 of 4 requests failed at concurrency 1 (first: boom); "
                                 "decode 20.00 tok/s (mean, concurrency 1) < min_decode_tps 25")


def test_evaluate_uses_five_percent_and_five_ms_by_default():
    old = [level(1, decode=100.0, out=200.0, ttft_p50=80.0)]
    assert evaluate([level(1, decode=95.0, out=190.0, ttft_p50=89.0)], baseline=old) == {
        "passed": True, "checks": regression_checks([level(1, decode=95.0, out=190.0, ttft_p50=89.0)], old, 5.0, 5.0),
        "missed": [], "message": "all 3 probe gates passed"}
    missed = evaluate([level(1, decode=100.0, out=200.0, ttft_p50=89.01)], baseline=old)
    assert missed["message"] == "1 probe gate missed: TTFT p50 at concurrency 1: 89.01 ms vs baseline 80.00 ms (+11.3%, limit 89.00)"


def test_evaluate_passes_the_tolerance_and_slack_on():
    old = [level(1, decode=100.0, out=200.0, ttft_p50=80.0)]
    result = evaluate([level(1, decode=90.0, out=180.0, ttft_p50=100.0)], baseline=old, tolerance_pct=10.0, ttft_slack_ms=12.0)
    assert result["passed"] is True and result["message"] == "all 3 probe gates passed"


def test_evaluate_passes_the_gate_concurrency_on():
    result = evaluate([level(1, decode=10.0), level(4, decode=30.0)], min_decode_tps=20, gate_concurrency=4)
    assert result["message"] == "all 1 probe gates passed"
    result = evaluate([level(1, decode=10.0)], max_ttft_ms=500)
    assert result == {"passed": True, "checks": threshold_checks([level(1, decode=10.0)], max_ttft_ms=500), "missed": [],
                      "message": "all 1 probe gates passed"}


def test_a_level_without_a_concurrency_is_never_a_named_one():
    unnamed = {"decode_tps": {"mean": 1.0}}
    assert gate_level([unnamed], 1) is None
    assert gate_level([unnamed], 0) is None
    assert gate_level([unnamed], -1) is unnamed  # the same -1 the regression checks match it by


def test_a_level_missing_from_the_baseline_does_not_end_the_comparison():
    now = [level(2, decode=10.0), level(1, decode=50.0)]
    assert [(c["concurrency"], c["metric"]) for c in regression_checks(now, [level(1)])] == [
        (1, "decode_tps.mean"), (1, "output_throughput"), (1, "ttft_ms.p50")]


def test_a_figure_missing_on_one_side_does_not_end_the_level():
    now = [{"concurrency": 1, "output_throughput": 27.0, "ttft_ms": {"p50": 90.0}}]
    assert [c["metric"] for c in regression_checks(now, [level(1)])] == ["output_throughput", "ttft_ms.p50"]
