# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flag tuner's verdicts: which candidate flags are real decode gains over the base config, as data, a table and a chart.

Why a rule and not "the biggest number wins": decode speed measured on a live server moves by a few percent from
run to run, so a flag that reads 1% faster once is as likely noise as a gain. Keeping it costs a restart, memory
or a slower start-up for nothing. The tuner therefore probes the base config and every candidate several times,
and a flag is kept only when its gain is larger than the noise those very runs show and than a fixed floor.

The rule, for runs of decode tokens/s:

- stats of a set of runs: n, mean, min, max and spread_pct = (max - min) / mean x 100 (0 for a single run);
- noise_pct of a comparison = max(base spread_pct, candidate spread_pct);
- gain_pct = (candidate mean - base mean) / base mean x 100;
- threshold_pct = max(noise_pct, min_gain_pct);
- verdict "keep" when gain_pct > threshold_pct, "slower" when gain_pct < -threshold_pct, else "no gain".

gain_pct and noise_pct are rounded to 0.1 before they are compared, so every verdict can be checked from the
printed table (a gain shown as 2.0% against a 2.0% floor is "no gain", never "keep").

Candidates that were not measured keep their own verdict: "refused" (the preflight rejected the flag; the reason
is its findings), "crashed" (the server did not come up; the reason is the startup-log cause, phase, error, hint
and whether the rollback brought the base config back) and "gate failed" (it came up but failed a probe gate).

The winning args are the base args with every kept candidate's args on top. Each kept flag was measured alone,
so their combination is a forecast, not a measurement: the Markdown says so. When two kept candidates set the
same option, the one with the larger gain wins and a note says so.

This file holds the maths and the rows; tune_markdown.py and tune_svg.py render them, tune_report.py puts the
report together. Controller-side only (the tune_report filter).
"""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

DEFAULT_METRIC = "decode tok/s, batch 1"
DEFAULT_MIN_GAIN_PCT = 2.0
STATUSES = ("measured", "refused", "crashed", "gate_failed")
FAILED_VERDICTS = {"refused": "refused", "crashed": "crashed", "gate_failed": "gate failed"}


class TuneReportError(ValueError):
    """Bad input to tune_report; the message names the field."""


def number(value: Any) -> bool:
    """True for an int or float that is not a bool (True is an int to Python, never a throughput)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def run_stats(runs: Any, field: str = "runs") -> Dict[str, Any]:
    """n, mean, min, max and spread_pct of repeated measurements, after checking them.

    Why the spread (max - min over the mean) and not a standard deviation: with the 3-5 runs a tuner can afford
    it is the honest figure - it says how far apart runs of the same config actually landed - and it needs no
    assumption about a distribution. ``field`` names the runs in error messages.
    """
    if not isinstance(runs, (list, tuple)) or not runs:
        raise TuneReportError("%s must be a non-empty list of %s measurements, got %r" % (field, DEFAULT_METRIC, runs))
    values = []
    for index, value in enumerate(runs):
        if not number(value) or not math.isfinite(value):
            raise TuneReportError("%s[%d] must be a number, got %r" % (field, index, value))
        if value <= 0:
            raise TuneReportError("%s[%d] must be positive (a throughput), got %r" % (field, index, value))
        values.append(float(value))
    mean = sum(values) / len(values)
    spread = (max(values) - min(values)) / mean * 100.0 if len(values) > 1 else 0.0
    return {"n": len(values), "mean": round(mean, 2), "min": round(min(values), 2), "max": round(max(values), 2),
            "spread_pct": round(spread, 1), "runs": [round(v, 2) for v in values], "raw_mean": mean}


def pct(value: float) -> str:
    """A percentage with one decimal, e.g. ``1.2%``."""
    return "%.1f%%" % value


def signed_pct(value: float) -> str:
    """A signed percentage with one decimal, e.g. ``+8.1%`` (a gain reads differently from a noise)."""
    return "%+.1f%%" % value


def _once_note(base_n: int, cand_n: int) -> str:
    """Why a noise of 0 may be no reassurance: a side measured once has no spread to show."""
    once = [who for who, count in (("the base", base_n), ("the candidate", cand_n)) if count == 1]
    if not once:
        return ""
    return "; %s ran once, so %s noise is unknown" % (" and ".join(once), "their" if len(once) > 1 else "its")


def compare(base: Dict[str, Any], cand: Dict[str, Any], min_gain_pct: float = DEFAULT_MIN_GAIN_PCT) -> Dict[str, Any]:
    """The verdict of one measured candidate against the base (both ``run_stats`` results), with its reason.

    Why both limits: the noise says what these runs cannot tell apart; the floor says what is not worth a flag
    even when the runs are steady (a 0.3% gain measured precisely is still not worth a restart).
    """
    gain = round((cand["raw_mean"] - base["raw_mean"]) / base["raw_mean"] * 100.0, 1)
    noise = max(base["spread_pct"], cand["spread_pct"])
    floor = float(min_gain_pct)
    threshold = max(noise, floor)
    limits = "the noise (%s) and the %s floor" % (pct(noise), pct(floor))
    if noise >= floor:
        within = "the noise (%s; floor %s)" % (pct(noise), pct(floor))
    else:
        within = "the %s floor (noise %s)" % (pct(floor), pct(noise))
    if gain > threshold:
        verdict, reason = "keep", "%s beats %s" % (signed_pct(gain), limits)
    elif gain < -threshold:
        verdict, reason = "slower", "%s: slower by more than %s" % (signed_pct(gain), limits)
    else:
        verdict, reason = "no gain", "%s is within %s" % (signed_pct(gain), within)
    reason += _once_note(base["n"], cand["n"])
    return {"verdict": verdict, "gain_pct": gain, "noise_pct": round(noise, 1), "threshold_pct": round(threshold, 1), "reason": reason}


def _finding_text(item: Any) -> str:
    """One preflight finding as text: strings as they are, finding dicts as ``flag: message``."""
    if isinstance(item, dict):
        message = str(item.get("message") or item.get("code") or item)
        return "%s: %s" % (item["flag"], message) if item.get("flag") else message
    return str(item)


def _rollback_text(detail: Dict[str, Any]) -> Optional[str]:
    """Whether the base config came back after the failure: the first thing an operator needs to know."""
    if "rolled_back" not in detail:
        return None
    if not detail.get("rolled_back"):
        return "not rolled back"
    if "rollback_ready" not in detail:
        return "rolled back"
    return "rolled back, serving again" if detail.get("rollback_ready") else "rolled back, NOT ready"


ERROR_TEXT_MAX = 200


def _shorten(text: str, limit: int) -> str:
    """The first ``limit`` characters (a table cell, not the log: the whole error is in the launch's result)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def failure_reason(status: str, detail: Any) -> str:
    """The ``reason`` of a candidate that was not measured, from the detail the tuner recorded.

    refused: the preflight findings joined. crashed / gate failed:
    ``cause <cause> in phase <phase>: <error_message>; hint: <hint>; <rollback state>``, leaving out what is absent.
    """
    if isinstance(detail, str):
        return detail
    detail = detail or {}
    if status == "refused":
        findings = detail.get("findings") or []
        if isinstance(findings, (str, dict)):
            findings = [findings]
        return "; ".join(_finding_text(item) for item in findings) or "refused by the preflight (no findings recorded)"
    head = "cause %s" % (detail.get("cause") or "unknown")
    if detail.get("phase"):
        head += " in phase %s" % detail["phase"]
    if detail.get("error_message"):
        head += ": %s" % _shorten(" ".join(str(detail["error_message"]).split()), ERROR_TEXT_MAX)
    parts = [head]
    if detail.get("hint"):
        parts.append("hint: %s" % " ".join(str(detail["hint"]).split()).rstrip(". "))
    rollback = _rollback_text(detail)
    if rollback:
        parts.append(rollback)
    return "; ".join(parts)


def failure_label(status: str, detail: Any) -> str:
    """The short text drawn in a chart row without measurements, e.g. ``crashed: oom_graph``."""
    verdict = FAILED_VERDICTS[status]
    cause = detail.get("cause") if isinstance(detail, dict) else None
    return "%s: %s" % (verdict, cause) if cause and status != "refused" else verdict


def efficiency(mean: float, ceiling_tps: Optional[float]) -> Optional[float]:
    """Share of the decode ceiling reached: how much headroom any further flag could still find."""
    return round(mean / ceiling_tps, 3) if ceiling_tps else None


def top_ceiling(ceiling: Any) -> Optional[Dict[str, Any]]:
    """The ceiling's speed and bound, or None; an empty dict counts as none (an unset inventory default)."""
    if ceiling is None or ceiling == {}:
        return None
    if not isinstance(ceiling, dict):
        raise TuneReportError("ceiling must be a dict with tokens_per_s (the decode_ceiling result) or None, got %r" % (ceiling,))
    tps = ceiling.get("tokens_per_s")
    if not number(tps) or not math.isfinite(tps) or tps <= 0:
        raise TuneReportError("ceiling.tokens_per_s must be a positive number, got %r" % (tps,))
    bound = ceiling.get("bound")
    return {"tokens_per_s": round(float(tps), 2), "bound": str(bound).replace("_", " ") if bound else None}


def server_args_of(value: Any, field: str) -> Dict[str, Any]:
    """A deep copy of an args dict, so nothing the report returns aliases (or later mutates) the caller's data."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TuneReportError("%s must be a dict of SGLang options, got %r" % (field, value))
    return copy.deepcopy(dict(value))


def candidate_row(candidate: Any, index: int, base: Dict[str, Any], ceiling_tps: Optional[float], min_gain_pct: float) -> Dict[str, Any]:
    """One report row for one candidate: its figures and verdict when measured, its failure otherwise."""
    field = "candidates[%d]" % index
    if not isinstance(candidate, dict):
        raise TuneReportError("%s must be a dict, got %r" % (field, candidate))
    name = candidate.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TuneReportError("%s.name is missing or empty" % field)
    field = "%s (%s)" % (field, name)
    status = candidate.get("status")
    if status not in STATUSES:
        raise TuneReportError("%s.status must be one of %s, got %r" % (field, ", ".join(STATUSES), status))
    detail = candidate.get("detail")
    if detail is not None and not isinstance(detail, (dict, str)):
        raise TuneReportError("%s.detail must be a dict, got %r" % (field, detail))
    row: Dict[str, Any] = {"name": name, "args": server_args_of(candidate.get("args"), field + ".args"), "status": status}
    if status != "measured":
        row.update(verdict=FAILED_VERDICTS[status], label=failure_label(status, detail), mean=None, runs=[], stats=None,
                   gain_pct=None, noise_pct=None, threshold_pct=None, efficiency=None, reason=failure_reason(status, detail))
        return row
    if not candidate.get("runs"):
        raise TuneReportError("%s is measured but has no runs" % field)
    stats = run_stats(candidate["runs"], field + ".runs")
    verdict = compare(base, stats, min_gain_pct)
    row.update(verdict=verdict["verdict"], label=verdict["verdict"], mean=stats["mean"], runs=stats["runs"], stats=public_stats(stats),
               gain_pct=verdict["gain_pct"], noise_pct=verdict["noise_pct"], threshold_pct=verdict["threshold_pct"],
               efficiency=efficiency(stats["raw_mean"], ceiling_tps), reason=verdict["reason"])
    return row


def public_stats(stats: Dict[str, Any]) -> Dict[str, Any]:
    """run_stats without the unrounded mean, which is only there so gains are not computed from rounded means."""
    return {key: value for key, value in stats.items() if key != "raw_mean"}


def combine_args(base_args: Dict[str, Any], kept_rows: Sequence[Dict[str, Any]]) -> Tuple[Dict[str, Any], List[str]]:
    """The base args with every kept candidate's args on top, and a note for each option two kept flags disagree on.

    ``kept_rows`` come best gain first; they are applied in reverse so that on a clash the best gain's value is
    the one left. Copies throughout: the inputs are never mutated.
    """
    merged = copy.deepcopy(base_args)
    setters: Dict[str, str] = {}
    notes = []
    for row in reversed(list(kept_rows)):
        for key, value in row["args"].items():
            if key in setters and merged[key] != value:
                notes.append("%s and %s both set %s; %s's value (the larger gain) is used" % (row["name"], setters[key], key, row["name"]))
            merged[key] = copy.deepcopy(value)
            setters[key] = row["name"]
    return merged, list(reversed(notes))
