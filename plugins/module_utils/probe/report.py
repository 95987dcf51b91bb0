# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render probe results as a Markdown report: one table row per concurrency level, then the expected figure and
the bound, the verdict, the gates. The connection mode is named, and the accept length is in the table.

Why Markdown: the report is read in a terminal, pasted into an issue or a pull request, and diffed between runs;
a table with fixed columns does all three. The JSON results stay the machine-readable record.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

COLUMNS = (
    "concurrency", "ok/requests", "TTFT ms mean / p50 / p90 / p99", "connect ms p50", "ITL ms p50 / p90 / p99", "TPOT ms mean",
    "E2E ms p50 / p99", "decode tok/s mean / p50", "output tok/s", "req/s", "accept length",
)
CONNECTION_TEXT = {
    "keep-alive": "keep-alive (one connection per worker, opened before the level: TTFT leaves the connect out)",
    "per-request": ("per-request (a new connection for every request, as sglang.benchmark.serving opens them: TTFT "
                    "includes the connect)"),
}


def _fmt(value: Any, digits: int = 1) -> str:
    """A number with fixed decimals, or an em dash when absent."""
    if value is None or isinstance(value, bool):
        return "\u2014"
    if isinstance(value, (int, float)):
        return "%.*f" % (digits, value)
    return str(value)


def _stats(summary: Optional[Dict[str, Any]], keys: List[str], digits: int = 1) -> str:
    if not summary:
        return "\u2014"
    return " / ".join(_fmt(summary.get(k), digits) for k in keys)


def level_row(level: Dict[str, Any], run_accept: Optional[float] = None) -> str:
    """One table row for a level; a level without its own accept length shows the run's (marked ``run``)."""
    accept = _fmt(level.get("accept_length"), 2)
    if level.get("accept_length") is None and run_accept is not None:
        accept = "%s (run)" % _fmt(run_accept, 2)
    cells = [
        str(level.get("concurrency")),
        "%s/%s" % (level.get("completed"), level.get("requests")),
        _stats(level.get("ttft_ms"), ["mean", "p50", "p90", "p99"]),
        _stats(level.get("connect_ms"), ["p50"], 2),
        _stats(level.get("itl_ms"), ["p50", "p90", "p99"], 2),
        _stats(level.get("tpot_ms"), ["mean"], 2),
        _stats(level.get("e2e_ms"), ["p50", "p99"], 0),
        _stats(level.get("decode_tps"), ["mean", "p50"], 2),
        _fmt(level.get("output_throughput"), 1),
        _fmt(level.get("request_throughput"), 3),
        accept,
    ]
    return "| " + " | ".join(cells) + " |"


def ceiling_lines(ceiling: Dict[str, Any]) -> List[str]:
    """The expected figure with its band and breakdown, then the bound and its breakdown."""
    inputs = ceiling.get("inputs") or {}
    step = ceiling.get("per_step_ms") or {}
    where = "%s %s GB/s" % (inputs.get("gpu_matched") or inputs.get("gpu") or "GPU", _fmt(inputs.get("bandwidth_gbs"), 0))
    if (inputs.get("tp") or 1) > 1:
        where += " x TP %s over %s (%s all-reduce, %s us each)" % (
            inputs.get("tp"), inputs.get("link") or inputs.get("link_kind"), inputs.get("allreduce_impl"), _fmt(inputs.get("allreduce_latency_us"), 0))
    lines = []
    expected = ceiling.get("expected") if isinstance(ceiling.get("expected"), dict) else None
    if expected:
        exp_step = expected.get("per_step_ms") or {}
        exp_inputs = expected.get("inputs") or {}
        spec = expected.get("speculative")
        if expected.get("tokens_per_s"):
            lines.append("- Expected batch-1 decode: **%s tok/s** (band %s-%s tok/s, %s)%s." % (
                _fmt(expected["tokens_per_s"], 1), _fmt(expected.get("low"), 1), _fmt(expected.get("high"), 1), expected.get("band_class"),
                " at accept length %s" % _fmt(expected.get("accept_length"), 2) if spec else ""))
        else:
            lines.append("- Expected batch-1 decode: none without a measured accept length (speculative decoding).")
        lines.append("- Per target forward, expected: weights at %s of peak %s ms + overhead %s ms (%s) + MoE %s ms + all-reduce %s ms = %s ms "
                     "(%s tok/s without speculation)." % (
                         _fmt(exp_inputs.get("sustained_fraction"), 2), _fmt(exp_step.get("weights"), 2), _fmt(exp_step.get("overhead"), 2),
                         "CUDA graphs" if exp_inputs.get("cuda_graphs", True) else "no CUDA graphs",
                         _fmt(exp_step.get("moe"), 2), _fmt(exp_step.get("allreduce"), 2), _fmt(exp_step.get("total"), 2),
                         _fmt(expected.get("tokens_per_s_no_spec"), 1)))
        if spec:
            lines.append("- Speculative cycle (%s, %s steps, %s draft tokens): verify %s ms + %s draft passes x %s ms = %s ms; speculation pays "
                         "above accept length %s." % (
                             spec.get("algorithm"), spec.get("num_steps"), spec.get("num_draft_tokens"), _fmt(spec.get("verify_ms"), 2),
                             spec.get("draft_passes"), _fmt(spec.get("draft_pass_ms"), 2), _fmt(spec.get("cycle_ms"), 2),
                             _fmt(spec.get("break_even_accept_length"), 2)))
    lines += [
        "- Bound (no server beats it): **%s tok/s** at accept length %s (%s tok/s without speculation), set by %s." % (
            _fmt(ceiling.get("tokens_per_s"), 1), _fmt(ceiling.get("accept_length"), 2), _fmt(ceiling.get("tokens_per_s_no_spec"), 1),
            "memory bandwidth" if ceiling.get("bound") == "memory_bandwidth" else "all-reduce latency"),
        "- Per target forward at peak: weights %s ms + all-reduce %s ms = %s ms; %s; %s GB of weights per step (%s)." % (
            _fmt(step.get("weights"), 2), _fmt(step.get("allreduce"), 2), _fmt(step.get("total"), 2), where,
            _fmt((inputs.get("weight_bytes_per_step") or 0) / 1e9, 1), inputs.get("weight_format")),
    ]
    for note in list(ceiling.get("notes") or []) + list((expected or {}).get("notes") or []):
        lines.append("- Note: %s." % note)
    return lines


def render_markdown(results: Dict[str, Any]) -> str:
    """The whole report for one probe run."""
    title = "## SGLang probe: %s" % (results.get("model") or "model")
    lines = [title, ""]
    meta = "Endpoint `%s` at %s, %s output tokens per request, %s warmup request(s) excluded, prompts: %s." % (
        results.get("endpoint"), results.get("base_url"), results.get("output_tokens"), results.get("warmup_requests"),
        results.get("prompt_source"))
    if results.get("server_version"):
        meta += " Server version %s." % results["server_version"]
    meta += " Connection: %s." % CONNECTION_TEXT.get(str(results.get("connection") or "keep-alive"), results.get("connection"))
    lines += [meta, ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "|".join(["---:"] * len(COLUMNS)) + "|")
    for level in results.get("levels") or []:
        lines.append(level_row(level, results.get("accept_length")))
    lines.append("")
    if results.get("accept_length_source"):
        lines.append("Accept length from %s." % results["accept_length_source"])
        lines.append("")
    ceiling = results.get("ceiling")
    if ceiling:
        lines += ceiling_lines(ceiling)
    elif results.get("ceiling_error"):
        lines.append("- Ceiling not computed: %s." % results["ceiling_error"])
    if results.get("verdict"):
        share = ("**%s** of the expected figure" % (_fmt(results["efficiency"] * 100, 0) + "%")) if results.get("efficiency") is not None \
            else "%s of the bound" % (_fmt((results.get("efficiency_of_bound") or 0) * 100, 0) + "%")
        lines.append("- Efficiency at concurrency %s: %s: %s." % (results.get("efficiency_concurrency"), share, results["verdict"]))
    gates = results.get("gates") or {}
    if gates.get("checks"):
        if lines[-1] != "":
            lines.append("")
        lines.append("Gates: %s" % ("passed" if gates.get("passed") else "**missed**"))
        lines.append("")
        for check in gates["checks"]:
            lines.append("- %s %s" % ("ok" if check.get("passed") else "MISSED", check.get("text")))
    return "\n".join(lines).rstrip() + "\n"
