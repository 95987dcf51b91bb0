# -*- coding: utf-8 -*-
"""probe_gates and probe_report: a missed gate names its figure, limit and level; the report shows every level."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import decode_ceiling
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.gates import (
    baseline_levels,
    evaluate,
    gate_level,
    regression_checks,
    threshold_checks,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.report import render_markdown


def level(conc, decode=28.0, ttft_p90=120.0, ttft_p50=90.0, out=27.0, failed=0, errors=None):
    return {"concurrency": conc, "requests": 4, "completed": 4 - failed, "failed": failed, "errors": errors or [],
            "decode_tps": {"mean": decode, "p50": decode, "p90": decode, "p99": decode},
            "ttft_ms": {"mean": ttft_p50, "p50": ttft_p50, "p90": ttft_p90, "p99": ttft_p90},
            "output_throughput": out, "request_throughput": 0.1, "itl_ms": None, "tpot_ms": None, "e2e_ms": None, "accept_length": None}


LEVELS = [level(1), level(4, decode=25.0, out=95.0, ttft_p90=300.0), level(16, decode=18.0, out=260.0, ttft_p90=900.0)]


QWEN35_27B = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "tie_word_embeddings": False,
              "text_config": {"model_type": "qwen3_5_text", "dtype": "bfloat16", "hidden_size": 5120, "intermediate_size": 17408,
                              "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
                              "attn_output_gate": True, "vocab_size": 248320, "full_attention_interval": 4, "linear_num_key_heads": 16,
                              "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                              "linear_conv_kernel_dim": 4, "mtp_num_hidden_layers": 1}}


def test_gate_level_is_the_lowest_concurrency_or_the_named_one():
    assert gate_level(list(reversed(LEVELS)))["concurrency"] == 1
    assert gate_level(LEVELS, 4)["concurrency"] == 4
    assert gate_level(LEVELS, 8) is None
    assert gate_level([]) is None


def test_passing_thresholds_still_show_their_margin():
    checks = threshold_checks(LEVELS, min_decode_tps=25, max_ttft_ms=200)
    assert all(c["passed"] for c in checks)
    assert checks[0]["text"] == "decode 28.00 tok/s (mean, concurrency 1) >= min_decode_tps 25"
    assert checks[1]["text"] == "TTFT p90 120.0 ms (concurrency 1) <= max_ttft_ms 200"


def test_missed_gates_fail_with_the_figures_that_missed():
    result = evaluate(LEVELS, min_decode_tps=30, max_ttft_ms=100)
    assert not result["passed"]
    assert result["message"] == ("2 probe gates missed: decode 28.00 tok/s (mean, concurrency 1) < min_decode_tps 30; "
                                 "TTFT p90 120.0 ms (concurrency 1) > max_ttft_ms 100")
    assert [c["measured"] for c in result["missed"]] == [28.0, 120.0]


def test_gates_at_a_named_level_and_at_a_missing_one():
    assert evaluate(LEVELS, min_decode_tps=20, gate_concurrency=16)["missed"][0]["text"].startswith("decode 18.00 tok/s (mean, concurrency 16) <")
    missing = evaluate(LEVELS, max_ttft_ms=100, gate_concurrency=2)
    assert not missing["passed"] and "no measurement at concurrency 2" in missing["message"]


def test_failed_requests_fail_the_probe_even_without_gates():
    result = evaluate([level(1, failed=1, errors=["HTTP 503 from /v1/completions: busy"])])
    assert not result["passed"]
    assert result["message"] == "1 probe gate missed: 1 of 4 requests failed at concurrency 1 (first: HTTP 503 from /v1/completions: busy)"
    assert evaluate(LEVELS)["message"] == "no gates set"


def test_regression_against_a_baseline_per_level():
    baseline = {"levels": [level(1, decode=30.0, out=29.0, ttft_p50=80.0), level(4, decode=25.0, out=95.0)]}
    checks = regression_checks(LEVELS, baseline, tolerance_pct=5.0, ttft_slack_ms=5.0)
    by = {(c["concurrency"], c["metric"]): c for c in checks}
    assert not by[(1, "decode_tps.mean")]["passed"]           # 28 < 30 x 0.95 = 28.5
    assert by[(1, "decode_tps.mean")]["text"] == "decode tok/s (mean) at concurrency 1: 28.00 tok/s vs baseline 30.00 tok/s (-6.7%, limit 28.50)"
    assert not by[(1, "ttft_ms.p50")]["passed"]                # 90 > 80 x 1.05 + 5 = 89
    assert by[(4, "output_throughput")]["passed"]
    assert (16, "decode_tps.mean") not in by                   # not in the baseline: not compared
    assert all(c["passed"] for c in regression_checks(LEVELS, baseline, tolerance_pct=10.0, ttft_slack_ms=10.0))


def test_baseline_without_common_levels_or_in_a_bad_shape():
    checks = regression_checks(LEVELS, [level(64)])
    assert not checks[0]["passed"] and "no level at the concurrencies probed (1, 4, 16)" in checks[0]["text"]
    with pytest.raises(ValueError):
        baseline_levels({"figures": []})


def test_markdown_report_has_a_row_per_level_the_expectation_the_bound_and_gates():
    ceiling = decode_ceiling(QWEN35_27B, gpu="NVIDIA RTX A6000", tp=2, link="PHB", pcie_gen=4, pcie_width=16)
    results = {"model": "m", "endpoint": "completions", "base_url": "http://127.0.0.1:30000", "output_tokens": 256,
               "warmup_requests": 1, "prompt_source": "shipped", "levels": LEVELS, "server_version": "0.5.23", "connection": "per-request",
               "ceiling": ceiling, "efficiency": 0.966, "efficiency_of_bound": 0.81, "efficiency_concurrency": 1,
               "verdict": "as expected for this hardware", "accept_length": 2.12, "accept_length_source": "/server_info avg_spec_accept_length",
               "gates": evaluate(LEVELS, min_decode_tps=25)}
    text = render_markdown(results)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(LEVELS)
    assert rows[0].startswith("| concurrency | ok/requests | TTFT ms mean / p50 / p90 / p99 | connect ms p50 |")
    assert rows[1].startswith("| 1 | 4/4 | 90.0 / 90.0 / 120.0 / 120.0 | \u2014 |")
    assert rows[1].endswith("| 2.12 (run) |")   # the level had no accept length of its own: the run's, marked
    assert "Connection: per-request (a new connection for every request, as sglang.benchmark.serving opens them" in text
    assert "- Expected batch-1 decode: **24.6 tok/s** (band 16.7-28.3 tok/s, dense)." in text
    assert ("- Per target forward, expected: weights at 0.88 of peak 37.91 ms + overhead 1.68 ms (CUDA graphs) + MoE 0.00 ms + "
            "all-reduce 1.10 ms = 40.70 ms (24.6 tok/s without speculation).") in text
    assert "- Bound (no server beats it): **29.0 tok/s** at accept length 1.00" in text
    assert "NVIDIA RTX A6000 768 GB/s x TP 2 over PHB" in text
    assert "- Efficiency at concurrency 1: **97%** of the expected figure: as expected for this hardware." in text
    assert "- ok decode 28.00 tok/s (mean, concurrency 1) >= min_decode_tps 25" in text
