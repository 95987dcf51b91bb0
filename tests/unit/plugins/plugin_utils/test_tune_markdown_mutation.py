# -*- coding: utf-8 -*-
"""tune_markdown written out whole, from report dicts built by hand: every line, cell and separator, with and
without a ceiling, kept flags and notes (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_markdown import ceiling_text, render_markdown

DASH = "\u2014"
RULE = ("A flag is kept when its gain over the base config beats both the noise (the larger run spread, max - min over mean, "
        "of base and candidate) and the %s floor.")


def measured_row(name, args, verdict, mean, n, gain, noise, eff, reason):
    return {"name": name, "args": args, "verdict": verdict, "mean": mean, "stats": {"n": n}, "gain_pct": gain,
            "noise_pct": noise, "efficiency": eff, "reason": reason}


def failed_row(name, args, verdict, reason):
    return {"name": name, "args": args, "verdict": verdict, "mean": None, "stats": None, "gain_pct": None, "noise_pct": None,
            "efficiency": None, "reason": reason}


def test_a_report_with_a_ceiling_a_kept_flag_a_crash_and_a_note():
    report = {
        "metric": "decode tok/s, batch 1", "min_gain_pct": 2.0,
        "ceiling": {"tokens_per_s": 61.2, "bound": "memory bandwidth"},
        "baseline": {"n": 3, "mean": 50.25, "min": 50.0, "max": 50.5, "spread_pct": 1.0, "efficiency": 0.821},
        "rows": [
            measured_row("a", {"a": True}, "keep", 54.0, 1, 7.46, 1.0, 0.8823, "+7.5% beats it"),
            failed_row("b", {"x": 8, "y": "t"}, "crashed", "cause oom | x\n  y"),
            measured_row("c", {}, "no gain", 50.5, 2, 0.5, 1.04, None, "+0.5% is within"),
            measured_row("d", {"d": False}, "slower", 40.0, 2, -20.4, 0.0, 0.654, "-20.4%: slower"),
        ],
        "kept": ["a"], "notes": ["n1", "n2"], "winning_args": {"tp_size": 2, "a": True},
    }
    assert render_markdown(report) == "\n".join([
        "## SGLang flag tuning: decode tok/s, batch 1",
        "",
        "Decode ceiling of this box: **61.20 tok/s** (bound by memory bandwidth).",
        "",
        RULE % "2.0%",
        "",
        "| flag | verdict | decode tok/s, batch 1: mean (runs) | gain | noise | vs ceiling | why |",
        "|---|---|---:|---:|---:|---:|---|",
        "| base config | base | 50.25 (3 runs) | %s | 1.0%% | 82.1%% | the reference: 3 runs, 50.00-50.50 tok/s |" % DASH,
        "| `a` | **keep** | 54.00 (1 run) | +7.5% | 1.0% | 88.2% | +7.5% beats it |",
        "| `b` (`x=8, y=t`) | crashed | {0} | {0} | {0} | {0} | cause oom \\| x y |".format(DASH),
        "| `c` | no gain | 50.50 (2 runs) | +0.5%% | 1.0%% | %s | +0.5%% is within |" % DASH,
        "| `d` (`d=false`) | slower | 40.00 (2 runs) | -20.4% | 0.0% | 65.4% | -20.4%: slower |",
        "",
        "Kept (best gain first): `a`.",
        "",
        "Each kept flag was measured alone against the base config; their combination below was not measured unless the "
        "tuner measured it separately. Probe it before trusting the gains to add up.",
        "",
        "Note: n1.",
        "",
        "Note: n2.",
        "",
        "Winning args, for the inventory:",
        "",
        "```yaml",
        "sglang_server_args:",
        "  tp_size: 2",
        "  a: true",
        "```",
        "",
    ])


def test_a_report_without_ceiling_or_kept_flags():
    report = {
        "metric": "tok|s", "min_gain_pct": 0.5, "ceiling": None,
        "baseline": {"n": 1, "mean": 50.0, "min": 50.0, "max": 50.0, "spread_pct": 0.0, "efficiency": None},
        "rows": [], "kept": [], "notes": [], "winning_args": {},
    }
    assert render_markdown(report) == "\n".join([
        "## SGLang flag tuning: tok|s",
        "",
        "Decode ceiling: no ceiling given, so the vs-ceiling column is empty.",
        "",
        RULE % "0.5%",
        "",
        "| flag | verdict | tok\\|s: mean (runs) | gain | noise | vs ceiling | why |",
        "|---|---|---:|---:|---:|---:|---|",
        "| base config | base | 50.00 (1 run) | %s | 0.0%% | %s | the reference: 1 run, 50.00-50.00 tok/s |" % (DASH, DASH),
        "",
        "No flag beat the noise and the floor: the base config stays as it is.",
        "",
        "Winning args, for the inventory:",
        "",
        "```yaml",
        "sglang_server_args: {}",
        "```",
        "",
    ])


def test_a_ceiling_without_a_bound_and_an_empty_one():
    assert ceiling_text({"tokens_per_s": 29.0, "bound": None}) == "Decode ceiling of this box: **29.00 tok/s**."
    assert ceiling_text({"tokens_per_s": 29.0}) == "Decode ceiling of this box: **29.00 tok/s**."
    assert ceiling_text({}) == "Decode ceiling: no ceiling given, so the vs-ceiling column is empty."


def test_the_winning_args_keep_their_last_character():
    report = {"metric": "m", "min_gain_pct": 2.0, "ceiling": None,
              "baseline": {"n": 1, "mean": 50.0, "min": 50.0, "max": 50.0, "spread_pct": 0.0, "efficiency": None},
              "rows": [], "kept": [], "notes": [], "winning_args": {"served_model_name": "MIX"}}
    assert render_markdown(report).endswith("```yaml\nsglang_server_args:\n  served_model_name: MIX\n```\n")
