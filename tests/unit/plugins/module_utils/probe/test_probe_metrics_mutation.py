# -*- coding: utf-8 -*-
"""probe.metrics, figure by figure: a whole level worked out by hand, and each edge of the definitions.

The expected values are computed here from the benchmark's definitions (numpy's linear percentiles, throughput
over the level's wall time), not read from the code (make mutation: tests/mutation/modules.yml).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.metrics import (
    level_metrics,
    percentile,
    request_rows,
    run_accept_length,
    summarize,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import RequestTiming


def ok(ttft, latency, tokens, prompt, itl, connect=None, source="server", verify=None, accept=None):
    return RequestTiming(ok=True, ttft=ttft, latency=latency, itl=itl, output_tokens=tokens, prompt_tokens=prompt,
                         tokens_source=source, spec_verify_ct=verify, spec_accept_length=accept, connect=connect)


def failed(error, connect=None):
    return RequestTiming(ok=False, error=error, connect=connect)


def test_a_whole_level_worked_out_by_hand():
    timings = [
        ok(0.1, 1.1, 11, 10, [0.1, 0.2], connect=0.005),  # TPOT 1.0 s / 10 = 100 ms, 10 tok/s
        ok(0.3, 2.3, 11, 20, [0.3], connect=0.007),       # TPOT 2.0 s / 10 = 200 ms, 5 tok/s
        failed("E1", connect=0.009),
        failed("E1"),
        failed(None),
    ]
    assert level_metrics(timings, duration_s=2.5, concurrency=2) == {
        "concurrency": 2, "requests": 5, "completed": 2, "failed": 3, "duration_s": 2.5,
        "input_tokens": 30, "output_tokens": 22,
        "request_throughput": 0.8, "output_throughput": 8.8, "input_throughput": 12.0, "total_throughput": 20.8,
        "concurrency_achieved": 1.36,  # (1.1 + 2.3) / 2.5
        "ttft_ms": {"mean": 200.0, "p50": 200.0, "p90": 280.0, "p99": 298.0},
        "connect_ms": {"mean": 7.0, "p50": 7.0, "p90": 8.6, "p99": 8.96},  # every request's handshake, failed too
        "itl_ms": {"mean": 200.0, "p50": 200.0, "p90": 280.0, "p99": 298.0},  # pooled: 100, 200, 300 ms
        "tpot_ms": {"mean": 150.0, "p50": 150.0, "p90": 190.0, "p99": 199.0},
        "e2e_ms": {"mean": 1700.0, "p50": 1700.0, "p90": 2180.0, "p99": 2288.0},
        "decode_tps": {"mean": 7.5, "p50": 7.5, "p90": 9.5, "p99": 9.95},
        "tokens_source": "server", "accept_length": None, "errors": ["E1"],
    }


def test_a_level_with_nothing_done_has_no_latencies_and_no_zero_division():
    level = level_metrics([failed("boom")], duration_s=0, concurrency="4")
    assert level["concurrency"] == 4 and level["duration_s"] == 0.0
    assert (level["request_throughput"], level["output_throughput"], level["input_throughput"]) == (0.0, 0.0, 0.0)
    assert [level[key] for key in ("ttft_ms", "connect_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tps")] == [None] * 6
    assert level["tokens_source"] is None and level["errors"] == ["boom"]


def test_a_zero_duration_is_a_nanosecond():
    level = level_metrics([ok(0.1, 1.1, 11, 10, [])], duration_s=0.0, concurrency=1)
    assert level["output_throughput"] == 11e9
    assert level["request_throughput"] == 1e9


def test_a_missing_prompt_count_adds_nothing():
    level = level_metrics([ok(0.1, 1.1, 11, None, []), ok(0.1, 1.1, 11, 5, [])], duration_s=1.0, concurrency=2)
    assert level["input_tokens"] == 5 and level["total_throughput"] == 27.0


def test_two_token_sources_read_mixed():
    level = level_metrics([ok(0.1, 1.1, 11, 10, [], source="server"), ok(0.1, 1.1, 11, 10, [], source="counted")],
                          duration_s=1.0, concurrency=2)
    assert level["tokens_source"] == "mixed"


def test_at_most_five_distinct_errors_are_kept_in_order():
    timings = [failed("E%d" % (i % 7)) for i in range(14)]
    assert level_metrics(timings, 1.0, 1)["errors"] == ["E0", "E1", "E2", "E3", "E4"]
    assert level_metrics([failed("E%d" % i) for i in range(4)], 1.0, 1)["errors"] == ["E0", "E1", "E2", "E3"]


def test_the_accept_length_of_the_level_counts_only_completed_requests():
    timings = [ok(0.1, 1.1, 100, 10, [], verify=40), failed("x")]
    assert level_metrics(timings, 1.0, 1)["accept_length"] == 2.5


@pytest.mark.parametrize("pct", [-0.001, 100.001, 150])
def test_a_percentile_outside_0_to_100_is_refused(pct):
    with pytest.raises(ValueError, match=r"^percentile must be within \[0, 100\]$"):
        percentile([1.0, 2.0], pct)


def test_no_values_has_no_percentile():
    with pytest.raises(ValueError, match="^percentile of no values$"):
        percentile([], 50)


@pytest.mark.parametrize("pct, expected", [(0, 10.0), (100, 40.0), (25, 17.5), (75, 32.5), (50, 25.0)])
def test_percentiles_at_and_between_the_order_statistics(pct, expected):
    assert percentile([40, 10, 30, 20], pct) == expected


def test_a_percentile_on_an_order_statistic_is_that_value_as_a_float():
    value = percentile([3, 1, 2], 50)
    assert value == 2.0 and isinstance(value, float)


def test_summarize_rounds_to_the_digits_asked():
    assert summarize([1.0, 2.0, 2.0], digits=1) == {"mean": 1.7, "p50": 2.0, "p90": 2.0, "p99": 2.0}
    assert summarize([1.0, 2.0, 2.0]) == {"mean": 1.667, "p50": 2.0, "p90": 2.0, "p99": 2.0}
    assert summarize([]) is None


def test_zero_values_are_kept_not_dropped():
    assert summarize([0.0, 4.0]) == {"mean": 2.0, "p50": 2.0, "p90": 3.6, "p99": 3.96}


def test_accept_length_ignores_failed_requests_and_those_without_verify_counts():
    timings = [ok(0.1, 1.0, 100, 10, [], verify=40), ok(0.1, 1.0, 999, 10, [], verify=None),
               RequestTiming(ok=False, output_tokens=50, spec_verify_ct=1)]
    assert run_accept_length(timings) == 2.5


def test_accept_length_falls_back_to_the_reported_lengths_of_completed_requests():
    timings = [ok(0.1, 1.0, 10, 10, [], accept=2.0), ok(0.1, 1.0, 10, 10, [], accept=None),
               RequestTiming(ok=False, spec_accept_length=9.0), ok(0.1, 1.0, 10, 10, [], accept=3.5)]
    assert run_accept_length(timings) == 2.75


def test_accept_length_is_rounded_to_four_digits():
    assert run_accept_length([ok(0.1, 1.0, 10, 10, [], verify=3)]) == 3.3333
    assert run_accept_length([ok(0.1, 1.0, 10, 10, [], accept=1.23456)]) == 1.2346


def test_request_rows_with_verify_counts_and_connect():
    rows = request_rows([ok(0.1, 1.1, 11, 10, [], connect=0.0123, verify=5)])
    assert rows == [{"ok": True, "ttft_ms": 100.0, "e2e_ms": 1100.0, "tpot_ms": 100.0, "decode_tps": 10.0,
                     "output_tokens": 11, "prompt_tokens": 10, "connect_ms": 12.3, "spec_verify_ct": 5}]


def test_request_rows_of_a_one_token_answer_have_no_tpot():
    rows = request_rows([ok(0.1, 0.1004, 1, 10, [], connect=0.0)])
    assert rows == [{"ok": True, "ttft_ms": 100.0, "e2e_ms": 100.4, "tpot_ms": None, "decode_tps": None,
                     "output_tokens": 1, "prompt_tokens": 10, "connect_ms": 0.0}]


def test_level_figures_are_rounded_to_their_digits():
    # 1 of 1 request over 3 s: 10 output and 1 prompt tokens; durations and rates with more digits than kept
    level = level_metrics([ok(0.1, 1.0, 10, 1, [])], duration_s=3.0, concurrency=1)
    assert (level["request_throughput"], level["output_throughput"], level["input_throughput"],
            level["total_throughput"], level["concurrency_achieved"]) == (0.3333, 3.333, 0.333, 3.667, 0.333)
    assert level_metrics([ok(0.1, 1.0, 10, 1, [])], duration_s=1.234567, concurrency=1)["duration_s"] == 1.2346


def test_request_rows_are_rounded_to_three_digits():
    rows = request_rows([ok(0.0123456, 0.7123456, 4, 10, [], connect=0.00123456)])
    assert rows == [{"ok": True, "ttft_ms": 12.346, "e2e_ms": 712.346, "tpot_ms": 233.333, "decode_tps": 4.286,
                     "output_tokens": 4, "prompt_tokens": 10, "connect_ms": 1.235}]
