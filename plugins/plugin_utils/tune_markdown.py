# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tuning report as Markdown: the table beside the decode ceiling, what was kept, the winning args to paste.

Rendered here (not in a template) so the content is unit-tested and byte-identical for identical inputs.
Controller-side only.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import pct, signed_pct
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.yaml_dump import args_yaml, flow_yaml

DASH = "\u2014"


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _args_text(args: Dict[str, Any]) -> str:
    """A candidate's args on one line, ``option=value`` (YAML flow values, as an inventory would spell them)."""
    return ", ".join("%s=%s" % (name, flow_yaml(value)) for name, value in args.items())


def _flag_cell(row: Dict[str, Any]) -> str:
    """The flag column: the candidate's name, and its args when they say more than ``name=true``."""
    text = "`%s`" % _cell(row["name"])
    if row["args"] and row["args"] != {row["name"]: True}:
        text += " (`%s`)" % _cell(_args_text(row["args"]))
    return text


def _mean_cell(mean: Optional[float], n: int) -> str:
    """``52.31 (5 runs)``: the mean and how many runs it stands for."""
    if mean is None:
        return DASH
    return "%.2f (%d run%s)" % (mean, n, "" if n == 1 else "s")


def _share(value: Optional[float]) -> str:
    """A share of the ceiling as a percentage, or a dash."""
    return DASH if value is None else "%.1f%%" % (value * 100.0)


def ceiling_text(ceiling: Optional[Dict[str, Any]]) -> str:
    """One sentence about the ceiling the efficiencies are measured against."""
    if not ceiling:
        return "Decode ceiling: no ceiling given, so the vs-ceiling column is empty."
    bound = " (bound by %s)" % ceiling["bound"] if ceiling.get("bound") else ""
    return "Decode ceiling of this box: **%.2f tok/s**%s." % (ceiling["tokens_per_s"], bound)


def render_markdown(report: Dict[str, Any]) -> str:
    """The tuning report as Markdown: ceiling, the rule, one row per flag (base first), what was kept, the args."""
    base = report["baseline"]
    lines = ["## SGLang flag tuning: %s" % report["metric"], "", ceiling_text(report["ceiling"]), "",
             "A flag is kept when its gain over the base config beats both the noise (the larger run spread, max - min "
             "over mean, of base and candidate) and the %s floor." % pct(report["min_gain_pct"]), "",
             "| flag | verdict | %s: mean (runs) | gain | noise | vs ceiling | why |" % _cell(report["metric"]),
             "|---|---|---:|---:|---:|---:|---|"]
    base_why = "the reference: %d run%s, %.2f-%.2f tok/s" % (base["n"], "" if base["n"] == 1 else "s", base["min"], base["max"])
    lines.append("| base config | base | %s | %s | %s | %s | %s |" % (
        _mean_cell(base["mean"], base["n"]), DASH, pct(base["spread_pct"]), _share(base["efficiency"]), _cell(base_why)))
    for row in report["rows"]:
        measured = row["stats"] is not None
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            _flag_cell(row), "**keep**" if row["verdict"] == "keep" else row["verdict"],
            _mean_cell(row["mean"], row["stats"]["n"] if measured else 0),
            signed_pct(row["gain_pct"]) if measured else DASH, pct(row["noise_pct"]) if measured else DASH,
            _share(row["efficiency"]), _cell(row["reason"])))
    lines.append("")
    if report["kept"]:
        lines.append("Kept (best gain first): %s." % ", ".join("`%s`" % name for name in report["kept"]))
        lines.append("")
        lines.append("Each kept flag was measured alone against the base config; their combination below was not measured "
                     "unless the tuner measured it separately. Probe it before trusting the gains to add up.")
    else:
        lines.append("No flag beat the noise and the floor: the base config stays as it is.")
    for note in report["notes"]:
        lines.append("")
        lines.append("Note: %s." % note)
    lines += ["", "Winning args, for the inventory:", "", "```yaml", args_yaml(report["winning_args"]).rstrip("\n"), "```", ""]
    return "\n".join(lines)
