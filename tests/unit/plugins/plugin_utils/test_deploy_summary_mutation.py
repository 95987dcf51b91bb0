# -*- coding: utf-8 -*-
"""deploy_summary, line by line: which level is shown, and the exact words for every missing piece.

Each expected line is written out whole, so a changed word, separator or default is seen (make mutation:
tests/mutation/modules.yml).
"""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.deploy_summary import gate_level, instance_line, probe_text, server_summary

LEVEL_1 = {"concurrency": 1, "decode_tps": {"mean": 54.12}, "ttft_ms": {"p50": 81.4}}
LEVEL_4 = {"concurrency": 4, "decode_tps": {"mean": 40.0}, "ttft_ms": {"p50": 120.0}}
LEVEL_8 = {"concurrency": 8, "decode_tps": {"mean": 30.0}, "ttft_ms": {"p50": 200.0}}
CEILING = {"tokens_per_s": 61.0, "bound": "memory_bandwidth", "expected": {"tokens_per_s": 42.43, "low": 25.46, "high": 57.28}}


def test_the_gate_level_is_the_one_the_efficiency_was_computed_at():
    probe = {"levels": [LEVEL_8, LEVEL_1, LEVEL_4], "efficiency_concurrency": 4}
    assert gate_level(probe) is LEVEL_4


def test_without_an_efficiency_level_the_lowest_concurrency_is_shown():
    assert gate_level({"levels": [LEVEL_8, LEVEL_4, LEVEL_1]}) is LEVEL_1
    assert gate_level({"levels": [LEVEL_4, LEVEL_8], "efficiency_concurrency": None}) is LEVEL_4


def test_an_efficiency_level_that_was_not_measured_falls_back_to_the_lowest():
    assert gate_level({"levels": [LEVEL_8, LEVEL_4], "efficiency_concurrency": 2}) is LEVEL_4


def test_a_level_without_its_concurrency_counts_as_the_lowest():
    unnamed = {"decode_tps": {"mean": 10.0}}
    assert gate_level({"levels": [LEVEL_1, unnamed]}) is unnamed
    assert probe_text({"levels": [LEVEL_1, unnamed]}).startswith("decode 10.0 tok/s at concurrency ?; ")


def test_no_levels_no_gate_level():
    assert gate_level({"levels": []}) is None
    assert gate_level({"levels": ["x", 3]}) is None


def test_the_whole_text_with_the_expectation():
    probe = {"levels": [LEVEL_4, LEVEL_1], "accept_length": 2.104, "ceiling": CEILING, "efficiency": 1.2755,
             "efficiency_concurrency": 4}
    assert probe_text(probe) == ("decode 40.0 tok/s at concurrency 4, TTFT p50 120 ms, accept length 2.10; expected 42.4 tok/s"
                                 " (band 25.5-57.3); bound 61.0 tok/s (memory bandwidth), efficiency 128% of expected")


def test_a_band_without_its_ends_reads_zero():
    probe = {"levels": [LEVEL_1], "ceiling": dict(CEILING, expected={"tokens_per_s": 42.43}), "efficiency": 0.5}
    assert probe_text(probe) == ("decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms; expected 42.4 tok/s (band 0.0-0.0);"
                                 " bound 61.0 tok/s (memory bandwidth), efficiency 50% of expected")


def test_a_bound_without_its_name_shows_the_figure_alone():
    probe = {"levels": [LEVEL_1], "ceiling": {"tokens_per_s": 61.0}}
    assert probe_text(probe) == "decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms; bound 61.0 tok/s"


def test_a_level_without_figures_says_so():
    assert probe_text({"levels": [{"concurrency": 1}]}) == (
        "probed, no decode figure; no ceiling (give the probe a ceiling: gpu, link, model)")


def test_the_text_says_when_the_figures_were_measured_unless_it_was_this_run():
    probe = {"levels": [LEVEL_1]}
    tail = "; no ceiling (give the probe a ceiling: gpu, link, model)"
    assert probe_text(probe, "this run") == "decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms" + tail
    assert probe_text(probe, None) == "decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms" + tail
    assert probe_text(probe, "") == "decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms" + tail
    assert probe_text(probe, "at the last launch") == (
        "decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms (measured at the last launch)" + tail)


def test_an_unchanged_instance_line_whole():
    run = {"sglang_version": "0.5.23", "port": 30000, "restarted": False, "probe": None}
    assert instance_line("main", run) == (
        "main: SGLang 0.5.23 on port 30000, unchanged, not restarted; not probed (set sglang_server_probe for figures and a gate)")


def test_an_instance_without_version_or_port_says_question_marks():
    assert instance_line("x", {}) == (
        "x: SGLang ? on port ?, unchanged, not restarted; not probed (set sglang_server_probe for figures and a gate)")
    assert instance_line("x", {"sglang_version": "", "port": None}).startswith("x: SGLang ? on port None, ")


def test_every_changed_file_is_named_by_its_base_name():
    run = {"sglang_version": "0.5.23", "port": 30000, "restarted": True, "time_to_ready_s": 12.25,
           "changed_files": ["/etc/sglang/main.yaml", "/etc/systemd/system/sglang@main.service"]}
    assert instance_line("main", run) == (
        "main: SGLang 0.5.23 on port 30000, restarted (changed main.yaml, sglang@main.service), ready in 12.2 s;"
        " not probed (set sglang_server_probe for figures and a gate)")


def test_the_nccl_line_lists_every_variable_in_order():
    lines = server_summary({}, {"NCCL_P2P_LEVEL": "PHB", "NCCL_IB_DISABLE": "1"})
    assert lines == ["no SGLang instance was configured in this run", "NCCL: NCCL_IB_DISABLE=1, NCCL_P2P_LEVEL=PHB"]
