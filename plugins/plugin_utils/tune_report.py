# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flag tuner's report: verdicts for every candidate (tune_verdicts.py), as Markdown (tune_markdown.py) and SVG
(tune_svg.py), with the winning args. The entry point of the tune_report filter. Controller-side only.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Dict

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_markdown import render_markdown
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_svg import render_svg
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import (
    DEFAULT_METRIC,
    DEFAULT_MIN_GAIN_PCT,
    TuneReportError,
    candidate_row,
    combine_args,
    efficiency,
    number,
    public_stats,
    run_stats,
    server_args_of,
    top_ceiling,
)


def normalise_candidate(item: Any) -> Dict[str, Any]:
    """A candidate as tune.yml takes it - ``{name, args}`` or a bare ``{option: value, ...}`` - as ``{name, args}``.

    The bare form is what an operator types; its name is the options it sets, so the report reads naturally.
    """
    if not isinstance(item, dict) or not item:
        raise TuneReportError("a candidate is {name: ..., args: {option: value}} or {option: value}, got %r" % (item,))
    if "args" in item:
        args = item["args"]
        if not isinstance(args, dict) or not args:
            raise TuneReportError("candidate %r: args must be a non-empty dict of SGLang options" % (item.get("name"),))
        unknown = sorted(set(item) - {"name", "args"})
        if unknown:
            raise TuneReportError("candidate %r: unknown key(s) %s (a candidate has name and args)" % (item.get("name"), ", ".join(unknown)))
        name = item.get("name") or ", ".join(sorted(args))
        return {"name": str(name), "args": copy.deepcopy(args)}
    return {"name": ", ".join(str(key) for key in item), "args": copy.deepcopy(item)}


def tune_report(candidates: Any, baseline: Any, ceiling: Any = None, min_gain_pct: Any = DEFAULT_MIN_GAIN_PCT,
                metric: str = DEFAULT_METRIC) -> Dict[str, Any]:
    """Verdicts for every candidate flag against the base config, the winning args, and the report as Markdown and SVG.

    Returns ``baseline`` (stats, args, efficiency), ``rows`` (one per candidate, in the order tried), ``kept``
    (names, best gain first), ``winning_args``, ``notes``, ``ceiling``, ``metric``, ``min_gain_pct``, ``markdown``
    and ``svg``. Raises TuneReportError naming the field for bad input.
    """
    if not number(min_gain_pct) or not math.isfinite(min_gain_pct) or min_gain_pct < 0:
        raise TuneReportError("min_gain_pct must be a number >= 0, got %r" % (min_gain_pct,))
    if not isinstance(baseline, dict):
        raise TuneReportError("baseline must be a dict with args and runs, got %r" % (baseline,))
    if not baseline.get("runs"):
        raise TuneReportError("baseline.runs is missing or empty: the base config must be measured at least once")
    if candidates is None:
        candidates = []
    if not isinstance(candidates, (list, tuple)):
        raise TuneReportError("candidates must be a list of dicts, got %r" % (candidates,))
    base_stats = run_stats(baseline["runs"], "baseline.runs")
    base_args = server_args_of(baseline.get("args"), "baseline.args")
    top = top_ceiling(ceiling)
    ceiling_tps = top["tokens_per_s"] if top else None
    floor = float(min_gain_pct)
    rows = [candidate_row(candidate, index, base_stats, ceiling_tps, floor) for index, candidate in enumerate(candidates)]
    kept_rows = sorted((row for row in rows if row["verdict"] == "keep"), key=lambda row: -row["gain_pct"])
    winning, notes = combine_args(base_args, kept_rows)
    for row in rows:
        # A candidate that turns speculation on or changes it has another bound (the accept length multiplies it):
        # a share of the base config's bound would read as "above the ceiling" for a real gain.
        if row["efficiency"] is not None and any(str(key).startswith("speculative_") for key in row["args"]):
            row["efficiency"] = None
            notes.append("%s changes speculative decoding, so the base config's %.2f tok/s bound is not its bound; its probe "
                         "reports its own at its accept length" % (row["name"], ceiling_tps))
    baseline_out = dict(public_stats(base_stats), args=base_args, efficiency=efficiency(base_stats["raw_mean"], ceiling_tps))
    above = ["%s (%.2f)" % (row.get("name", "the base config"), row["mean"]) for row in [baseline_out] + rows
             if row["efficiency"] is not None and row["efficiency"] > 1.0]
    if above:
        notes.append("faster than the %.2f tok/s ceiling: %s; the ceiling's inputs (GPU, dtype, accept length) are likely wrong"
                     % (ceiling_tps, ", ".join(above)))
    report = {"metric": str(metric), "min_gain_pct": floor, "ceiling": top, "baseline": baseline_out, "rows": rows,
              "kept": [row["name"] for row in kept_rows], "winning_args": winning, "notes": notes}
    report["markdown"] = render_markdown(report)
    report["svg"] = render_svg(report)
    return report
