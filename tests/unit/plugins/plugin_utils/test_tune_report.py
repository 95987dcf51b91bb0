# -*- coding: utf-8 -*-
"""tune_report: a flag is kept only when its gain beats the noise and the floor; failures keep their cause; the
Markdown, its YAML snippet and the SVG say the same thing as the data."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_report import tune_report
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_svg import nice_step
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import (
    TuneReportError,
    compare,
    failure_label,
    failure_reason,
    run_stats,
)
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.yaml_dump import args_yaml, flow_yaml

SVG = "{http://www.w3.org/2000/svg}"
BASE = {"args": {"model_path": "/srv/models/m", "tp_size": 2, "mem_fraction_static": 0.85}, "runs": [50.0, 50.5, 50.25]}
CRASH = {"cause": "oom_graph", "hint": "lower cuda_graph_max_bs", "phase": "cuda_graph_capture", "error_message": "CUDA out of memory",
         "rolled_back": True, "rollback_ready": True}


def measured(name, runs, args=None):
    return {"name": name, "args": {name: True} if args is None else args, "status": "measured", "runs": runs}


CANDIDATES = [
    measured("enable_torch_compile", [54.0, 54.5, 54.2]),                              # +7.9%, noise 1.0 -> keep
    measured("cuda_graph_max_bs", [50.8, 51.0, 51.2], {"cuda_graph_max_bs": 8}),        # +1.0% < floor -> no gain
    measured("attention_backend", [45.0, 45.2, 45.1], {"attention_backend": "triton"}),  # -10.2% -> slower
    {"name": "disable_radix_cache", "args": {"disable_radix_cache": True}, "status": "refused",
     "detail": {"findings": ["ERROR disable_radix_cache: not in this release", "WARNING x"]}},
    {"name": "enable_mixed_chunk", "args": {"enable_mixed_chunk": True}, "status": "crashed", "runs": [], "detail": CRASH},
    {"name": "num_continuous_decode_steps", "args": {"num_continuous_decode_steps": 4}, "status": "gate_failed",
     "detail": {"cause": "gate_ttft", "rolled_back": True, "rollback_ready": False}},
    measured("speculative", [60.0, 60.6, 60.3], {"speculative_algorithm": "EAGLE", "mem_fraction_static": 0.8}),  # +20.0% -> keep
]
CEILING = {"tokens_per_s": 61.2, "bound": "memory_bandwidth", "notes": []}


@pytest.fixture(name="report")
def fixture_report():
    return tune_report(CANDIDATES, BASE, CEILING)


def rows_by_name(report):
    return {row["name"]: row for row in report["rows"]}


# ------------------------------------------------------------------------------------------------ the rule

def test_run_stats_gives_mean_range_and_spread():
    stats = run_stats([50.0, 52.0, 51.0])
    assert (stats["n"], stats["mean"], stats["min"], stats["max"], stats["spread_pct"]) == (3, 51.0, 50.0, 52.0, 3.9)
    assert stats["runs"] == [50.0, 52.0, 51.0]


def test_a_single_run_has_no_spread():
    stats = run_stats([42.123])
    assert stats["n"] == 1 and stats["spread_pct"] == 0.0 and stats["mean"] == 42.12


@pytest.mark.parametrize("base_runs,cand_runs,floor,verdict,gain,noise,threshold", [
    ([100.0, 100.0], [105.0, 105.0], 2.0, "keep", 5.0, 0.0, 2.0),          # steady runs: the floor decides
    ([100.0, 100.0], [101.5, 101.5], 2.0, "no gain", 1.5, 0.0, 2.0),       # steady but under the floor
    ([96.0, 104.0], [105.0, 105.0], 2.0, "no gain", 5.0, 8.0, 8.0),        # noisy base: +5% is inside its 8% spread
    ([100.0, 100.0], [101.0, 111.0], 2.0, "no gain", 6.0, 9.4, 9.4),       # noisy candidate
    ([100.0, 100.0], [110.0, 110.0], 2.0, "keep", 10.0, 0.0, 2.0),
    ([100.0, 100.0], [102.0, 102.0], 2.0, "no gain", 2.0, 0.0, 2.0),       # equal to the threshold is not a gain
    ([100.0, 100.0], [98.0, 98.0], 2.0, "no gain", -2.0, 0.0, 2.0),        # nor a loss
    ([100.0, 100.0], [97.0, 97.0], 2.0, "slower", -3.0, 0.0, 2.0),
    ([100.0, 100.0], [100.5, 100.5], 0.0, "keep", 0.5, 0.0, 0.0),          # floor 0: only the noise counts
])
def test_verdict_needs_to_beat_both_noise_and_floor(base_runs, cand_runs, floor, verdict, gain, noise, threshold):
    result = compare(run_stats(base_runs), run_stats(cand_runs), floor)
    assert (result["verdict"], result["gain_pct"], result["noise_pct"], result["threshold_pct"]) == (verdict, gain, noise, threshold)


def test_gain_is_compared_as_printed_so_the_table_can_be_checked():
    # +2.04% prints as +2.0%: against a 2.0% floor it must not read "keep"
    assert compare(run_stats([100.0]), run_stats([102.04]), 2.0)["verdict"] == "no gain"
    assert compare(run_stats([100.0]), run_stats([102.06]), 2.0)["verdict"] == "keep"


def test_gain_uses_unrounded_means():
    # means 10.004 and 10.206: rounded means would give +2.0%, the true gain is +2.02% -> prints +2.0
    result = compare(run_stats([10.003, 10.005]), run_stats([10.206, 10.206]), 0.0)
    assert result["gain_pct"] == 2.0
    result = compare(run_stats([10.0]), run_stats([10.0049]), 0.0)
    assert result["gain_pct"] == 0.0 and result["verdict"] == "no gain"


def test_reasons_say_what_was_beaten_or_not():
    keep = compare(run_stats([100.0, 101.2]), run_stats([108.5, 109.0]), 2.0)
    assert keep["reason"] == "+8.1% beats the noise (1.2%) and the 2.0% floor"
    slower = compare(run_stats([100.0, 100.0]), run_stats([90.0, 90.0]), 2.0)
    assert slower["reason"] == "-10.0%: slower by more than the noise (0.0%) and the 2.0% floor"
    by_noise = compare(run_stats([96.0, 104.0]), run_stats([103.0, 103.0]), 2.0)
    assert by_noise["reason"] == "+3.0% is within the noise (8.0%; floor 2.0%)"
    by_floor = compare(run_stats([100.0, 101.0]), run_stats([101.5, 101.6]), 2.0)
    assert by_floor["reason"] == "+1.0% is within the 2.0% floor (noise 1.0%)"


def test_a_side_measured_once_is_flagged_as_unknown_noise():
    assert compare(run_stats([100.0]), run_stats([110.0, 110.5]), 2.0)["reason"].endswith("; the base ran once, so its noise is unknown")
    both = compare(run_stats([100.0]), run_stats([110.0]), 2.0)["reason"]
    assert both.endswith("; the base and the candidate ran once, so their noise is unknown")
    assert "once" not in compare(run_stats([100.0, 100.0]), run_stats([110.0, 110.0]), 2.0)["reason"]


# ------------------------------------------------------------------------------------------------ failures

@pytest.mark.parametrize("detail,expected", [
    (CRASH, "cause oom_graph in phase cuda_graph_capture: CUDA out of memory; hint: lower cuda_graph_max_bs; rolled back, serving again"),
    (dict(CRASH, rollback_ready=False), "cause oom_graph in phase cuda_graph_capture: CUDA out of memory; hint: lower cuda_graph_max_bs; "
                                        "rolled back, NOT ready"),
    (dict(CRASH, rolled_back=False, error_message=None, hint=""), "cause oom_graph in phase cuda_graph_capture; not rolled back"),
    ({"cause": "unknown", "error_message": "line one\n  line two"}, "cause unknown: line one line two"),
    ({}, "cause unknown"),
    (None, "cause unknown"),
])
def test_crash_reason_tells_cause_phase_error_hint_and_rollback(detail, expected):
    assert failure_reason("crashed", detail) == expected


def test_refused_reason_is_the_findings():
    assert failure_reason("refused", {"findings": ["a bad", "b worse"]}) == "a bad; b worse"
    finding = {"severity": "error", "code": "unknown_flag", "flag": "foo", "message": "no such option"}
    assert failure_reason("refused", {"findings": [finding]}) == "foo: no such option"
    assert "no findings" in failure_reason("refused", {})


def test_failure_labels_are_short():
    assert failure_label("crashed", CRASH) == "crashed: oom_graph"
    assert failure_label("gate_failed", {"cause": "gate_ttft"}) == "gate failed: gate_ttft"
    assert failure_label("refused", {"findings": ["x"]}) == "refused"
    assert failure_label("crashed", None) == "crashed"


# ------------------------------------------------------------------------------------------------ the report

def test_rows_follow_the_order_tried_with_their_verdicts(report):
    assert [row["name"] for row in report["rows"]] == [c["name"] for c in CANDIDATES]
    assert [row["verdict"] for row in report["rows"]] == ["keep", "no gain", "slower", "refused", "crashed", "gate failed", "keep"]
    rows = rows_by_name(report)
    assert rows["enable_torch_compile"]["gain_pct"] == 7.9 and rows["enable_torch_compile"]["mean"] == 54.23
    assert rows["enable_mixed_chunk"]["reason"].startswith("cause oom_graph in phase cuda_graph_capture")
    for name in ("disable_radix_cache", "enable_mixed_chunk", "num_continuous_decode_steps"):
        assert rows[name]["gain_pct"] is None and rows[name]["noise_pct"] is None and rows[name]["mean"] is None
        assert rows[name]["efficiency"] is None and rows[name]["runs"] == []


def test_kept_is_best_gain_first_and_efficiency_is_against_the_ceiling(report):
    assert report["kept"] == ["speculative", "enable_torch_compile"]
    assert report["baseline"]["mean"] == 50.25 and report["baseline"]["efficiency"] == round(50.25 / 61.2, 3)
    assert rows_by_name(report)["enable_torch_compile"]["efficiency"] == round(54.233333 / 61.2, 3)
    assert rows_by_name(report)["speculative"]["efficiency"] is None   # its bound is not the base config's
    assert report["ceiling"] == {"tokens_per_s": 61.2, "bound": "memory bandwidth"}


def test_winning_args_combine_base_and_kept_without_mutating_inputs():
    candidates, base = copy.deepcopy(CANDIDATES), copy.deepcopy(BASE)
    report = tune_report(candidates, base)
    assert report["winning_args"] == {"model_path": "/srv/models/m", "tp_size": 2, "mem_fraction_static": 0.8,
                                      "enable_torch_compile": True, "speculative_algorithm": "EAGLE"}
    assert candidates == CANDIDATES and base == BASE
    report["winning_args"]["tp_size"] = 8
    report["rows"][0]["args"]["x"] = 1
    assert base["args"]["tp_size"] == 2 and "x" not in candidates[0]["args"]


def test_when_kept_flags_clash_the_larger_gain_wins_and_a_note_says_so():
    candidates = [measured("small", [110.0, 110.0], {"chunked_prefill_size": 4096}),
                  measured("big", [120.0, 120.0], {"chunked_prefill_size": 8192})]
    report = tune_report(candidates, {"args": {"chunked_prefill_size": 2048}, "runs": [100.0, 100.0]})
    assert report["winning_args"] == {"chunked_prefill_size": 8192}
    assert report["notes"] == ["big and small both set chunked_prefill_size; big's value (the larger gain) is used"]


def test_no_ceiling_means_no_efficiency():
    report = tune_report(CANDIDATES, BASE)
    assert report["ceiling"] is None and report["baseline"]["efficiency"] is None
    assert all(row["efficiency"] is None for row in report["rows"])
    assert "no ceiling given" in report["markdown"]
    assert tune_report(CANDIDATES, BASE, {})["ceiling"] is None


def test_rows_above_the_ceiling_are_noted_once():
    report = tune_report([measured("fast", [70.0]), measured("faster", [72.0])], {"args": {}, "runs": [50.0]}, {"tokens_per_s": 61.2})
    above = [note for note in report["notes"] if "ceiling" in note]
    assert above == ["faster than the 61.20 tok/s ceiling: fast (70.00), faster (72.00); the ceiling's inputs (GPU, dtype, accept length) "
                     "are likely wrong"]
    assert not [note for note in tune_report([measured("fast", [60.0])], {"args": {}, "runs": [50.0]}, {"tokens_per_s": 61.2})["notes"]
                if "ceiling" in note]


def test_a_speculative_candidate_is_not_measured_against_the_base_bound():
    nextn = measured("nextn", [56.3, 56.0, 55.1], {"speculative_algorithm": "NEXTN", "speculative_num_steps": 3})
    report = tune_report([nextn], {"args": {}, "runs": [24.5, 24.6, 24.5]}, {"tokens_per_s": 29.01})
    row = report["rows"][0]
    assert row["verdict"] == "keep" and row["efficiency"] is None
    assert report["notes"] == ["nextn changes speculative decoding, so the base config's 29.01 tok/s bound is not its bound; its probe "
                               "reports its own at its accept length"]


def test_no_candidates_keeps_the_base():
    report = tune_report([], BASE)
    assert report["rows"] == [] and report["kept"] == [] and report["winning_args"] == BASE["args"]
    assert "the base config stays as it is" in report["markdown"]


# ------------------------------------------------------------------------------------------------ Markdown and YAML

def test_markdown_table_has_the_base_first_and_a_row_per_candidate(report):
    lines = report["markdown"].splitlines()
    assert "Decode ceiling of this box: **61.20 tok/s** (bound by memory bandwidth)." in lines
    header = lines.index("| flag | verdict | decode tok/s, batch 1: mean (runs) | gain | noise | vs ceiling | why |")
    assert lines[header + 2] == "| base config | base | 50.25 (3 runs) | \u2014 | 1.0% | 82.1% | the reference: 3 runs, 50.00-50.50 tok/s |"
    assert lines[header + 3] == ("| `enable_torch_compile` | **keep** | 54.23 (3 runs) | +7.9% | 1.0% | 88.6% | "
                                 "+7.9% beats the noise (1.0%) and the 2.0% floor |")
    assert lines[header + 4].startswith("| `cuda_graph_max_bs` (`cuda_graph_max_bs=8`) | no gain |")
    assert lines[header + 7].startswith("| `enable_mixed_chunk` | crashed | \u2014 | \u2014 | \u2014 | \u2014 | cause oom_graph")
    assert lines[header + 9].startswith("| `speculative` (`speculative_algorithm=EAGLE, mem_fraction_static=0.8`) | **keep** |")
    assert "Kept (best gain first): `speculative`, `enable_torch_compile`." in lines
    assert any("measured alone" in line and "not measured" in line for line in lines)


def test_markdown_cells_cannot_break_the_table():
    candidate = {"name": "x", "args": {}, "status": "refused", "detail": {"findings": ["a | b", "multi\nline"]}}
    row = [line for line in tune_report([candidate], BASE)["markdown"].splitlines() if line.startswith("| `x`")][0]
    assert row.endswith("| a \\| b; multi line |")


def test_markdown_yaml_snippet_parses_back_to_the_winning_args(report):
    text = report["markdown"]
    snippet = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(snippet) == {"sglang_server_args": report["winning_args"]}


@pytest.mark.parametrize("value,text", [
    (True, "true"), (False, "false"), (None, "null"), (8, "8"), (0.85, "0.85"), (1e-05, "1.0e-05"), (1e16, "1.0e+16"),
    ("triton", "triton"), ('say "hi" \\ there', 'say "hi" \\ there'), ("a\nb", '"a\\nb"'), ("yes", "'yes'"),
    ([1, "a", True], "[1, a, true]"), ({"k": [1, 2]}, "{k: [1, 2]}"),
])
def test_yaml_scalars(value, text):
    assert flow_yaml(value) == text
    assert yaml.safe_load("v: %s" % text)["v"] == value


def test_args_yaml_round_trips_awkward_values():
    args = {"model_path": "C:\\models\\\"q\"", "yes": "no", "weird key": 1.5e-7, "tool_call_parser": "ünïcode \u2603",
            "ctrl": "bell\x07del\x7f", "json_model_override_args": {"rope_scaling": {"type": "yarn", "factor": 4.0}},
            "enable_p2p_check": False, "empty": "", "number_text": "0755"}
    assert yaml.safe_load(args_yaml(args)) == {"sglang_server_args": args}
    assert yaml.safe_load(args_yaml({})) == {"sglang_server_args": {}}
    assert args_yaml({"yes": True}) == "sglang_server_args:\n  'yes': true\n"


# ------------------------------------------------------------------------------------------------ SVG

def test_svg_parses_and_has_a_bar_per_measured_row_coloured_by_verdict(report):
    root = ET.fromstring(report["svg"])
    assert root.tag == SVG + "svg"
    bars = [rect for rect in root.iter(SVG + "rect") if rect.find(SVG + "title") is not None and rect.get("fill") != "none"]
    assert [rect.get("fill") for rect in bars] == ["#4c78a8", "#54a24b", "#9d9d9d", "#f58518", "#54a24b"]
    widths = [float(rect.get("width")) for rect in bars]
    assert widths[4] > widths[1] > widths[0] > widths[3]   # means 60.3 > 54.2 > 50.25 > 45.1
    empty = [rect for rect in root.iter(SVG + "rect") if rect.get("fill") == "none"]
    assert len(empty) == 3
    texts = [text.text for text in root.iter(SVG + "text")]
    assert "refused" in texts and "crashed: oom_graph" in texts and "gate failed: gate_ttft" in texts
    assert "ceiling 61.20 tok/s (memory bandwidth)" in texts
    assert any(line.get("stroke-dasharray") for line in root.iter(SVG + "line"))


def test_svg_whiskers_span_min_to_max():
    report = tune_report([measured("a", [40.0, 60.0])], {"args": {}, "runs": [50.0]})
    root = ET.fromstring(report["svg"])
    whiskers = [line for line in root.iter(SVG + "line") if line.get("stroke-width") == "1.5" and line.get("y1") == line.get("y2")]
    assert len(whiskers) == 2
    base_w, cand_w = [float(line.get("x2")) - float(line.get("x1")) for line in whiskers]
    assert base_w == 0.0 and cand_w > 0
    low, high, base_x = float(whiskers[1].get("x1")), float(whiskers[1].get("x2")), float(whiskers[0].get("x1"))
    assert base_x == pytest.approx((low + high) / 2, abs=0.1)   # 50 is halfway between 40 and 60


def test_svg_without_ceiling_has_no_dashed_line_and_is_deterministic():
    first = tune_report(CANDIDATES, BASE)["svg"]
    assert first == tune_report(copy.deepcopy(CANDIDATES), copy.deepcopy(BASE))["svg"]
    root = ET.fromstring(first)
    assert not [line for line in root.iter(SVG + "line") if line.get("stroke-dasharray")]
    assert not [text for text in root.iter(SVG + "text") if (text.text or "").startswith("ceiling")]


def test_svg_escapes_text():
    evil = '<script>"x" & y'
    report = tune_report([measured(evil, [51.0]), {"name": "r&d", "status": "refused", "detail": {"findings": ["<b>"]}}],
                         {"args": {}, "runs": [50.0]}, metric="tok/s <&>")
    assert "<script>" not in report["svg"]
    root = ET.fromstring(report["svg"])
    texts = [text.text for text in root.iter(SVG + "text")]
    assert evil in texts and "r&d" in texts and "tok/s <&>" in texts


def test_svg_cuts_long_names():
    root = ET.fromstring(tune_report([measured("x" * 80, [51.0])], {"args": {}, "runs": [50.0]})["svg"])
    assert "x" * 29 + "\u2026" in [text.text for text in root.iter(SVG + "text")]


@pytest.mark.parametrize("top,step", [(64.26, 10.0), (8.0, 1.0), (1.3, 0.2), (420.0, 100.0), (380.0, 50.0), (0.07, 0.01)])
def test_axis_steps_are_round(top, step):
    assert nice_step(top, 8) == pytest.approx(step)


# ------------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("candidates,baseline,kwargs,match", [
    ([], {"args": {}}, {}, r"baseline\.runs is missing"),
    ([], {"args": {}, "runs": []}, {}, r"baseline\.runs is missing"),
    ([], None, {}, r"baseline must be a dict"),
    ([], {"runs": [50.0, "fast"]}, {}, r"baseline\.runs\[1\] must be a number, got 'fast'"),
    ([], {"runs": [50.0, True]}, {}, r"baseline\.runs\[1\] must be a number"),
    ([], {"runs": [50.0, 0.0]}, {}, r"baseline\.runs\[1\] must be positive"),
    ([], {"runs": [-3]}, {}, r"baseline\.runs\[0\] must be positive"),
    ([], {"runs": [float("nan")]}, {}, r"baseline\.runs\[0\] must be a number"),
    ([], {"runs": "50"}, {}, r"baseline\.runs must be a non-empty list"),
    ([], {"runs": [50.0], "args": ["tp_size"]}, {}, r"baseline\.args must be a dict"),
    ([{"args": {}, "status": "measured", "runs": [1.0]}], BASE, {}, r"candidates\[0\]\.name is missing"),
    ([{"name": "  ", "status": "measured", "runs": [1.0]}], BASE, {}, r"candidates\[0\]\.name is missing"),
    ([measured("a", [1.0]), {"name": "b", "status": "done"}], BASE, {}, r"candidates\[1\] \(b\)\.status must be one of .*got 'done'"),
    ([{"name": "b", "status": "measured"}], BASE, {}, r"candidates\[0\] \(b\) is measured but has no runs"),
    ([{"name": "b", "status": "measured", "runs": []}], BASE, {}, r"candidates\[0\] \(b\) is measured but has no runs"),
    ([measured("b", [50.0, "x"])], BASE, {}, r"candidates\[0\] \(b\)\.runs\[1\] must be a number"),
    ([measured("b", [50.0, -1.0])], BASE, {}, r"candidates\[0\] \(b\)\.runs\[1\] must be positive"),
    ([measured("b", [50.0], args="x")], BASE, {}, r"candidates\[0\] \(b\)\.args must be a dict"),
    (["b"], BASE, {}, r"candidates\[0\] must be a dict"),
    ({"name": "b"}, BASE, {}, r"candidates must be a list"),
    ([], BASE, {"ceiling": {"bound": "x"}}, r"ceiling\.tokens_per_s must be a positive number"),
    ([], BASE, {"ceiling": 61.2}, r"ceiling must be a dict"),
    ([], BASE, {"min_gain_pct": -1}, r"min_gain_pct must be a number >= 0"),
    ([], BASE, {"min_gain_pct": "2"}, r"min_gain_pct must be a number >= 0"),
])
def test_bad_input_names_the_field(candidates, baseline, kwargs, match):
    with pytest.raises(TuneReportError, match=match):
        tune_report(candidates, baseline, **kwargs)


def test_error_is_a_value_error():
    assert issubclass(TuneReportError, ValueError)


PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")
def test_the_filter_takes_values_as_ansible_hands_them_over(ansible_env, tmp_path):
    """Values from -e JSON arrive as ansible-core's tagged float/str subclasses; the report's YAML must take them."""
    candidates = [{"name": "fraction", "args": {"mem_fraction_static": "{{ fraction }}"}, "status": "measured",
                   "runs": [60.0, 60.5]}]
    write = {"dest": str(tmp_path / "tune.md"), "mode": "0644",
             "content": "{{ (candidates | gpufleet.sglang.tune_report(baseline=base)).markdown }}"}
    play = [{"hosts": "localhost", "gather_facts": False,
             "vars": {"base": {"args": {"tp_size": 2}, "runs": [50.0, 50.5]}, "candidates": candidates},
             "tasks": [{"name": "Write the report", "ansible.builtin.copy": write}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play), encoding="utf-8")
    result = subprocess.run([PLAYBOOK, "-i", "localhost,", "-c", "local", str(tmp_path / "play.yml"), "-e", '{"fraction": 0.99}'],
                            cwd=tmp_path, env=ansible_env, capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sglang_server_args:\n  tp_size: 2\n  mem_fraction_static: 0.99\n" in (tmp_path / "tune.md").read_text(encoding="utf-8")
