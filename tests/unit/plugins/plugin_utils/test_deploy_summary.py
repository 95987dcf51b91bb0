# -*- coding: utf-8 -*-
"""The end-of-play summary: every figure an operator needs, and a plain word for each missing one."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.server import FilterModule
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.deploy_summary import instance_line, probe_text, server_summary

PROBE = {"levels": [{"concurrency": 4, "decode_tps": {"mean": 40.0}, "ttft_ms": {"p50": 120.0}},
                    {"concurrency": 1, "decode_tps": {"mean": 54.12}, "ttft_ms": {"p50": 81.4}}],
         "accept_length": 2.104,
         "ceiling": {"tokens_per_s": 61.0, "bound": "memory_bandwidth",
                     "expected": {"tokens_per_s": 42.43, "low": 25.46, "high": 57.28}},
         "efficiency": 1.2755, "efficiency_of_bound": 0.887, "efficiency_concurrency": 1}
RUN = {"sglang_version": "0.5.23", "port": 30000, "restarted": True, "changed_files": ["/etc/sglang/main.yaml"],
       "time_to_ready_s": 4.234, "probe": PROBE, "probe_measured": "this run"}


def test_a_restarted_probed_instance_says_why_how_fast_and_how_it_compares_with_the_expectation():
    line = instance_line("main", RUN)
    assert line.startswith("main: SGLang 0.5.23 on port 30000, restarted (changed main.yaml), ready in 4.2 s; ")
    assert "decode 54.1 tok/s at concurrency 1, TTFT p50 81 ms, accept length 2.10" in line
    assert line.endswith("; expected 42.4 tok/s (band 25.5-57.3); bound 61.0 tok/s (memory bandwidth), efficiency 128% of expected")


def test_without_an_expectation_the_share_of_the_bound_is_said():
    probe = dict(PROBE, efficiency=None, ceiling={"tokens_per_s": 116.0, "bound": "memory_bandwidth", "expected": {"tokens_per_s": None}})
    assert probe_text(probe).endswith("; bound 116.0 tok/s (memory bandwidth), 89% of the bound (no expectation without an accept length)")


def test_an_unchanged_instance_shows_its_last_good_figures_as_such():
    line = instance_line("main", dict(RUN, restarted=False, probe_measured="at the last launch, 2026-11-30T10:00:00+00:00"))
    assert "unchanged, not restarted" in line and "(measured at the last launch, 2026-11-30T10:00:00+00:00)" in line


def test_missing_probe_and_ceiling_are_said():
    assert probe_text(None) == "not probed (set sglang_server_probe for figures and a gate)"
    assert probe_text(dict(PROBE, ceiling=None, efficiency=None)).endswith("; no ceiling (give the probe a ceiling: gpu, link, model)")


def test_a_restart_without_changed_files_says_so():
    line = instance_line("main", dict(RUN, changed_files=[], time_to_ready_s=None))
    assert "restarted (restart requested or not ready before);" in line


def test_host_summary_lists_instances_in_order_and_the_nccl_choice():
    lines = server_summary({"small": dict(RUN, port=30001), "main": RUN}, {"NCCL_P2P_LEVEL": "PHB"})
    assert [line.split(":")[0] for line in lines] == ["main", "small", "NCCL"] and lines[-1] == "NCCL: NCCL_P2P_LEVEL=PHB"
    assert server_summary({}, {})[-1] == "NCCL: library defaults (nothing set)"
    assert server_summary(None) == ["no SGLang instance was configured in this run"]


def test_the_filter_refuses_what_is_not_sglang_server_results():
    summary = FilterModule().filters()["server_summary"]
    assert summary({"main": RUN})[0].startswith("main: SGLang 0.5.23")
    with pytest.raises(AnsibleFilterError, match="sglang_server_results"):
        summary(["main"])


def test_check_mode_says_would_restart_and_shows_no_figures():
    line = instance_line("main", dict(RUN, check_mode=True, time_to_ready_s=None, probe=None))
    assert line == "main: SGLang 0.5.23 on port 30000, would restart (changed main.yaml); nothing was touched (check mode)"
