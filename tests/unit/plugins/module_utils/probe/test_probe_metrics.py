# -*- coding: utf-8 -*-
"""probe_metrics: numpy's linear percentiles and the benchmark's aggregate definitions."""

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


# Values numpy.percentile(x, p) (method "linear", its default) gives for these inputs.
@pytest.mark.parametrize("values,pct,expected", [
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50, 5.5),
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9.1),
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99, 9.91),
    ([15, 20, 35, 40, 50], 90, 46.0),
    ([50, 15, 40, 20, 35], 99, 49.6),
    ([15, 20, 35, 40, 50], 0, 15.0),
    ([15, 20, 35, 40, 50], 100, 50.0),
    ([7.0], 99, 7.0),
    ([1.0, 2.0], 50, 1.5),
])
def test_percentile_is_numpy_linear(values, pct, expected):
    assert percentile(values, pct) == pytest.approx(expected)


def test_percentile_rejects_empty_and_out_of_range():
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_summarize_scales_drops_none_and_is_none_when_empty():
    assert summarize([0.001, None, 0.003], scale=1e3) == {"mean": 2.0, "p50": 2.0, "p90": 2.8, "p99": 2.98}
    assert summarize([None]) is None


def timing(ttft, latency, tokens, itl=None, prompt=10, verify=None, ok=True, error=None):
    return RequestTiming(ok=ok, ttft=ttft, latency=latency, itl=itl or [], output_tokens=tokens, prompt_tokens=prompt,
                         tokens_source="server", spec_verify_ct=verify, error=error)


def test_level_metrics_follow_the_benchmark_definitions():
    timings = [
        timing(0.10, 1.10, 101, itl=[0.01] * 100),
        timing(0.20, 2.20, 101, itl=[0.02] * 100),
        timing(0, 0, 0, ok=False, error="HTTP 500 from /v1/completions: boom"),
    ]
    level = level_metrics(timings, duration_s=2.5, concurrency=2)
    assert (level["requests"], level["completed"], level["failed"]) == (3, 2, 1)
    assert level["output_tokens"] == 202 and level["input_tokens"] == 20
    assert level["output_throughput"] == pytest.approx(202 / 2.5)
    assert level["request_throughput"] == pytest.approx(2 / 2.5)
    assert level["total_throughput"] == pytest.approx(222 / 2.5)
    assert level["concurrency_achieved"] == pytest.approx(3.3 / 2.5)
    assert level["ttft_ms"]["mean"] == pytest.approx(150.0)
    assert level["tpot_ms"]["p50"] == pytest.approx(15.0)          # (1.0/100, 2.0/100) in ms
    assert level["decode_tps"]["mean"] == pytest.approx(75.0)      # mean of 100 and 50 tok/s
    assert level["itl_ms"]["p50"] == pytest.approx(15.0)           # pooled: 100 x 10 ms and 100 x 20 ms
    assert level["e2e_ms"]["p99"] == pytest.approx(1100 + 0.99 * 1100)
    assert level["errors"] == ["HTTP 500 from /v1/completions: boom"]
    assert level["accept_length"] is None and level["tokens_source"] == "server"


def test_accept_length_pools_tokens_over_verify_steps():
    timings = [timing(0.1, 1.0, 100, verify=40), timing(0.1, 1.0, 50, verify=30)]
    assert run_accept_length(timings) == pytest.approx(150 / 70, abs=1e-4)
    only_lengths = [RequestTiming(ok=True, output_tokens=10, spec_accept_length=2.0), RequestTiming(ok=True, output_tokens=10, spec_accept_length=3.0)]
    assert run_accept_length(only_lengths) == 2.5
    assert run_accept_length([timing(0.1, 1.0, 10)]) is None


def test_request_rows_round_and_report_errors():
    rows = request_rows([timing(0.1, 1.1, 11), timing(0, 0, 0, ok=False, error="x")])
    assert rows[0] == {"ok": True, "ttft_ms": 100.0, "e2e_ms": 1100.0, "tpot_ms": 100.0, "decode_tps": 10.0, "output_tokens": 11, "prompt_tokens": 10,
                       "connect_ms": None}
    assert rows[1] == {"ok": False, "error": "x"}
