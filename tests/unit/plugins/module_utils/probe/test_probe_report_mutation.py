# -*- coding: utf-8 -*-
"""probe.report written out whole: every cell of a level row, every line of the ceiling, the connection words,
the gates block, for a run with speculation over TP 2 and for a bare one (make mutation:
tests/mutation/modules.yml)."""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.report import ceiling_lines, level_row, render_markdown

LEVEL = {"concurrency": 2, "completed": 7, "requests": 8,
         "ttft_ms": {"mean": 91.25, "p50": 90.04, "p90": 120.06, "p99": 130.0},
         "connect_ms": {"p50": 1.234},
         "itl_ms": {"p50": 20.111, "p90": 25.556, "p99": 30.0},
         "tpot_ms": {"mean": 21.005},
         "e2e_ms": {"p50": 5400.4, "p99": 6100.6},
         "decode_tps": {"mean": 47.617, "p50": 47.0},
         "output_throughput": 88.44, "request_throughput": 0.3456, "accept_length": 2.345}

CEILING = {
    "tokens_per_s": 61.04, "accept_length": 2.5, "tokens_per_s_no_spec": 29.01, "bound": "allreduce_latency",
    "per_step_ms": {"weights": 37.911, "allreduce": 1.1, "total": 39.011},
    "inputs": {"gpu": "RTX A6000", "gpu_matched": "NVIDIA RTX A6000", "bandwidth_gbs": 768.2, "tp": 2, "link": "PHB",
               "allreduce_impl": "nccl", "allreduce_latency_us": 55.4, "weight_bytes_per_step": 29.1e9,
               "weight_format": "bf16"},
    "notes": ["first note"],
    "expected": {"tokens_per_s": 42.43, "low": 25.46, "high": 57.28, "band_class": "speculative", "accept_length": 2.345,
                 "tokens_per_s_no_spec": 24.56,
                 "per_step_ms": {"weights": 43.08, "overhead": 1.68, "moe": 0.0, "allreduce": 1.1, "total": 45.86},
                 "inputs": {"sustained_fraction": 0.88, "cuda_graphs": False},
                 "speculative": {"algorithm": "EAGLE", "num_steps": 3, "num_draft_tokens": 4, "verify_ms": 46.5,
                                 "draft_passes": 3, "draft_pass_ms": 2.25, "cycle_ms": 53.25,
                                 "break_even_accept_length": 1.16},
                 "notes": ["second note"]},
}


def test_a_level_row_cell_by_cell():
    assert level_row(LEVEL) == ("| 2 | 7/8 | 91.2 / 90.0 / 120.1 / 130.0 | 1.23 | 20.11 / 25.56 / 30.00 | 21.00 | 5400 / 6101"
                                " | 47.62 / 47.00 | 88.4 | 0.346 | 2.35 |")


def test_a_level_row_without_figures_shows_dashes_and_the_run_accept_length():
    dash = "\u2014"
    assert level_row({"concurrency": 1}, 2.0) == "| 1 | None/None | %s |" % " | ".join([dash] * 8 + ["2.00 (run)"])
    assert level_row({"concurrency": 1}) == "| 1 | None/None | %s |" % " | ".join([dash] * 9)
    assert level_row(dict(LEVEL, accept_length=3.0), 2.0).endswith("| 3.00 |")


def test_text_and_bools_in_a_cell():
    row = level_row({"concurrency": 1, "output_throughput": True, "request_throughput": "n/a",
                     "ttft_ms": {"mean": 1, "p50": None}})
    assert row.startswith("| 1 | None/None | 1.0 / \u2014 / \u2014 / \u2014 | ")
    assert row.endswith("| \u2014 | n/a | \u2014 |")


def test_the_ceiling_lines_with_speculation_over_tp_2():
    assert ceiling_lines(CEILING) == [
        "- Expected batch-1 decode: **42.4 tok/s** (band 25.5-57.3 tok/s, speculative) at accept length 2.35.",
        "- Per target forward, expected: weights at 0.88 of peak 43.08 ms + overhead 1.68 ms (no CUDA graphs) + MoE 0.00 ms"
        " + all-reduce 1.10 ms = 45.86 ms (24.6 tok/s without speculation).",
        "- Speculative cycle (EAGLE, 3 steps, 4 draft tokens): verify 46.50 ms + 3 draft passes x 2.25 ms = 53.25 ms;"
        " speculation pays above accept length 1.16.",
        "- Bound (no server beats it): **61.0 tok/s** at accept length 2.50 (29.0 tok/s without speculation), set by"
        " all-reduce latency.",
        "- Per target forward at peak: weights 37.91 ms + all-reduce 1.10 ms = 39.01 ms; NVIDIA RTX A6000 768 GB/s x TP 2"
        " over PHB (nccl all-reduce, 55 us each); 29.1 GB of weights per step (bf16).",
        "- Note: first note.",
        "- Note: second note.",
    ]


def test_the_ceiling_lines_of_one_gpu_without_an_expectation():
    ceiling = {"tokens_per_s": 116.0, "accept_length": 1.0, "tokens_per_s_no_spec": 116.0, "bound": "memory_bandwidth",
               "per_step_ms": {"weights": 8.6, "allreduce": 0.0, "total": 8.6},
               "inputs": {"gpu": "H100", "bandwidth_gbs": 3350, "tp": 1, "weight_bytes_per_step": 16e9, "weight_format": "fp8"}}
    assert ceiling_lines(ceiling) == [
        "- Bound (no server beats it): **116.0 tok/s** at accept length 1.00 (116.0 tok/s without speculation), set by"
        " memory bandwidth.",
        "- Per target forward at peak: weights 8.60 ms + all-reduce 0.00 ms = 8.60 ms; H100 3350 GB/s; 16.0 GB of weights"
        " per step (fp8).",
    ]


def test_a_speculative_expectation_without_an_accept_length_says_none():
    ceiling = dict(CEILING, notes=None, expected={"tokens_per_s": None, "speculative": None, "per_step_ms": None, "inputs": None})
    lines = ceiling_lines(ceiling)
    assert lines[0] == "- Expected batch-1 decode: none without a measured accept length (speculative decoding)."
    assert lines[1] == ("- Per target forward, expected: weights at \u2014 of peak \u2014 ms + overhead \u2014 ms (CUDA graphs) + MoE"
                        " \u2014 ms + all-reduce \u2014 ms = \u2014 ms (\u2014 tok/s without speculation).")
    assert lines[2].startswith("- Bound (no server beats it): ")
    assert len(lines) == 4


def test_a_bare_ceiling_names_a_gpu_and_a_link_kind():
    ceiling = {"inputs": {"tp": 4, "link_kind": "nvlink"}}
    assert ceiling_lines(ceiling)[-1] == (
        "- Per target forward at peak: weights \u2014 ms + all-reduce \u2014 ms = \u2014 ms; GPU \u2014 GB/s x TP 4 over nvlink"
        " (None all-reduce, \u2014 us each); 0.0 GB of weights per step (None).")
    assert ceiling_lines({"inputs": {"gpu": "L4"}})[-1].split("; ")[1] == "L4 \u2014 GB/s"


def test_the_whole_report_of_a_speculative_run_with_gates():
    results = {"model": "Qwen/Qwen3-8B", "endpoint": "completions", "base_url": "http://127.0.0.1:30000", "output_tokens": 256,
               "warmup_requests": 1, "prompt_source": "shipped", "server_version": "0.5.23", "connection": "per-request",
               "levels": [LEVEL], "accept_length": 2.2, "accept_length_source": "/server_info avg_spec_accept_length",
               "ceiling": CEILING, "verdict": "as expected", "efficiency": 1.1223, "efficiency_concurrency": 2,
               "gates": {"passed": False, "checks": [{"passed": True, "text": "a ok"}, {"passed": False, "text": "b missed"}]}}
    assert render_markdown(results) == "\n".join([
        "## SGLang probe: Qwen/Qwen3-8B",
        "",
        "Endpoint `completions` at http://127.0.0.1:30000, 256 output tokens per request, 1 warmup request(s) excluded,"
        " prompts: shipped. Server version 0.5.23. Connection: per-request (a new connection for every request, as"
        " sglang.benchmark.serving opens them: TTFT includes the connect).",
        "",
        "| concurrency | ok/requests | TTFT ms mean / p50 / p90 / p99 | connect ms p50 | ITL ms p50 / p90 / p99 | TPOT ms mean"
        " | E2E ms p50 / p99 | decode tok/s mean / p50 | output tok/s | req/s | accept length |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        level_row(LEVEL),
        "",
        "Accept length from /server_info avg_spec_accept_length.",
        "",
    ] + ceiling_lines(CEILING) + [
        "- Efficiency at concurrency 2: **112%** of the expected figure: as expected.",
        "",
        "Gates: **missed**",
        "",
        "- ok a ok",
        "- MISSED b missed",
    ]) + "\n"


def test_the_whole_report_of_a_bare_run():
    results = {"levels": [{"concurrency": 1, "completed": 1, "requests": 1}], "ceiling_error": "unknown GPU 'X'",
               "verdict": "below", "efficiency": None, "efficiency_of_bound": 0.456, "efficiency_concurrency": 1,
               "gates": {"passed": True, "checks": [{"passed": True, "text": "all fine"}]}}
    text = render_markdown(results)
    assert text.startswith("## SGLang probe: model\n\nEndpoint `None` at None, None output tokens per request, None warmup"
                           " request(s) excluded, prompts: None. Connection: keep-alive (one connection per worker, opened"
                           " before the level: TTFT leaves the connect out).\n\n")
    assert text.endswith("\n\n- Ceiling not computed: unknown GPU 'X'.\n- Efficiency at concurrency 1: 46% of the bound: below.\n"
                         "\nGates: passed\n\n- ok all fine\n")


def test_an_unknown_connection_mode_is_named_as_given_and_no_gates_no_block():
    text = render_markdown({"connection": "pooled", "levels": [], "gates": {"checks": []}})
    assert "Connection: pooled." in text
    assert "Gates" not in text and text.endswith("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def test_gates_right_after_the_table_get_one_blank_line():
    text = render_markdown({"levels": [], "gates": {"passed": True, "checks": [{"passed": True, "text": "x"}]}})
    assert text.endswith("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n\nGates: passed\n\n- ok x\n")


def test_a_verdict_without_any_efficiency_reads_zero_of_the_bound():
    text = render_markdown({"levels": [], "verdict": "unknown", "efficiency_concurrency": 1})
    assert text.endswith("- Efficiency at concurrency 1: 0% of the bound: unknown.\n")


def test_the_share_of_the_bound_is_a_percentage_rounded_to_a_whole_number():
    text = render_markdown({"levels": [], "verdict": "v", "efficiency_of_bound": 0.6, "efficiency_concurrency": 1})
    assert text.endswith("- Efficiency at concurrency 1: 60% of the bound: v.\n")
