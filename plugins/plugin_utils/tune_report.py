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

The Markdown and the SVG are rendered here (not in templates) so their content is unit-tested and byte-identical
for identical inputs: no timestamps, no randomness, no dict-order dependence beyond the inputs' own order.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple
from xml.sax.saxutils import escape as _xml_escape

DEFAULT_METRIC = "decode tok/s, batch 1"
DEFAULT_MIN_GAIN_PCT = 2.0
STATUSES = ("measured", "refused", "crashed", "gate_failed")
FAILED_VERDICTS = {"refused": "refused", "crashed": "crashed", "gate_failed": "gate failed"}
SERVER_ARGS_KEY = "sglang_server_args"

# Bar colours by verdict (Tableau 10: distinguishable, and readable in grey print).
COLOURS = {"base": "#4c78a8", "keep": "#54a24b", "no gain": "#9d9d9d", "slower": "#f58518"}
FAILED_TEXT_COLOURS = {"refused": "#6b6b6b", "crashed": "#c0392b", "gate failed": "#c0392b"}

_PLAIN_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# Words YAML 1.1 (PyYAML, so Ansible) reads as booleans or null: never left plain as keys.
_YAML_RESERVED = frozenset(("y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"))
_DASH = "\u2014"


class TuneReportError(ValueError):
    """Bad input to tune_report; the message names the field."""


# ---------------------------------------------------------------------------------------------------- figures


def _number(value: Any) -> bool:
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
        if not _number(value) or not math.isfinite(value):
            raise TuneReportError("%s[%d] must be a number, got %r" % (field, index, value))
        if value <= 0:
            raise TuneReportError("%s[%d] must be positive (a throughput), got %r" % (field, index, value))
        values.append(float(value))
    mean = sum(values) / len(values)
    spread = (max(values) - min(values)) / mean * 100.0 if len(values) > 1 else 0.0
    return {"n": len(values), "mean": round(mean, 2), "min": round(min(values), 2), "max": round(max(values), 2),
            "spread_pct": round(spread, 1), "runs": [round(v, 2) for v in values], "raw_mean": mean}


def _pct(value: float) -> str:
    """A percentage with one decimal, e.g. ``1.2%``."""
    return "%.1f%%" % value


def _signed_pct(value: float) -> str:
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
    limits = "the noise (%s) and the %s floor" % (_pct(noise), _pct(floor))
    if noise >= floor:
        within = "the noise (%s; floor %s)" % (_pct(noise), _pct(floor))
    else:
        within = "the %s floor (noise %s)" % (_pct(floor), _pct(noise))
    if gain > threshold:
        verdict, reason = "keep", "%s beats %s" % (_signed_pct(gain), limits)
    elif gain < -threshold:
        verdict, reason = "slower", "%s: slower by more than %s" % (_signed_pct(gain), limits)
    else:
        verdict, reason = "no gain", "%s is within %s" % (_signed_pct(gain), within)
    reason += _once_note(base["n"], cand["n"])
    return {"verdict": verdict, "gain_pct": gain, "noise_pct": round(noise, 1), "threshold_pct": round(threshold, 1), "reason": reason}


# ---------------------------------------------------------------------------------------------------- failures


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


# ---------------------------------------------------------------------------------------------------- rows


def _efficiency(mean: float, ceiling_tps: Optional[float]) -> Optional[float]:
    """Share of the decode ceiling reached: how much headroom any further flag could still find."""
    return round(mean / ceiling_tps, 3) if ceiling_tps else None


def _ceiling(ceiling: Any) -> Optional[Dict[str, Any]]:
    """The ceiling's speed and bound, or None; an empty dict counts as none (an unset inventory default)."""
    if ceiling is None or ceiling == {}:
        return None
    if not isinstance(ceiling, dict):
        raise TuneReportError("ceiling must be a dict with tokens_per_s (the decode_ceiling result) or None, got %r" % (ceiling,))
    tps = ceiling.get("tokens_per_s")
    if not _number(tps) or not math.isfinite(tps) or tps <= 0:
        raise TuneReportError("ceiling.tokens_per_s must be a positive number, got %r" % (tps,))
    bound = ceiling.get("bound")
    return {"tokens_per_s": round(float(tps), 2), "bound": str(bound).replace("_", " ") if bound else None}


def _args(value: Any, field: str) -> Dict[str, Any]:
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
    row: Dict[str, Any] = {"name": name, "args": _args(candidate.get("args"), field + ".args"), "status": status}
    if status != "measured":
        row.update(verdict=FAILED_VERDICTS[status], label=failure_label(status, detail), mean=None, runs=[], stats=None,
                   gain_pct=None, noise_pct=None, threshold_pct=None, efficiency=None, reason=failure_reason(status, detail))
        return row
    if not candidate.get("runs"):
        raise TuneReportError("%s is measured but has no runs" % field)
    stats = run_stats(candidate["runs"], field + ".runs")
    verdict = compare(base, stats, min_gain_pct)
    row.update(verdict=verdict["verdict"], label=verdict["verdict"], mean=stats["mean"], runs=stats["runs"], stats=_public(stats),
               gain_pct=verdict["gain_pct"], noise_pct=verdict["noise_pct"], threshold_pct=verdict["threshold_pct"],
               efficiency=_efficiency(stats["raw_mean"], ceiling_tps), reason=verdict["reason"])
    return row


def _public(stats: Dict[str, Any]) -> Dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------------- YAML


def _yaml_float(value: float) -> str:
    """A float YAML 1.1 reads back as a float: PyYAML wants a dot in ``1.0e-05`` and spells infinity ``.inf``."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = "%s.0e%s" % (mantissa, exponent if exponent[0] in "+-" else "+" + exponent)
    return text


def _yaml_string(text: str) -> str:
    """A double-quoted YAML string: ``"`` and ``\\`` escaped, control and non-printable characters as escapes."""
    out = []
    for char in text:
        code = ord(char)
        if char in "\"\\":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code <= 0x9F:
            out.append("\\x%02x" % code)
        elif 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            out.append("\\u%04x" % code)
        else:
            out.append(char)
    return '"%s"' % "".join(out)


def yaml_scalar(value: Any) -> str:
    """One value as YAML: booleans true/false, numbers as-is, strings double-quoted, lists and dicts in JSON flow style.

    Written by hand (no PyYAML on a target's Python): the values are SGLang options, which are scalars or at
    most small lists and dicts, and JSON flow style is valid YAML.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _yaml_float(float(value))
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (_yaml_string(str(key)), yaml_scalar(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return "[%s]" % ", ".join(yaml_scalar(item) for item in value)
    return _yaml_string(str(value))


def yaml_key(key: Any) -> str:
    """A mapping key: plain when it is an ordinary option name, double-quoted otherwise (``yes`` would read as a bool)."""
    text = str(key)
    if _PLAIN_KEY_RE.match(text) and text.lower() not in _YAML_RESERVED:
        return text
    return _yaml_string(text)


def args_yaml(args: Dict[str, Any], key: str = SERVER_ARGS_KEY) -> str:
    """``sglang_server_args:`` and one indented line per option, ready to paste into an inventory."""
    if not args:
        return "%s: {}\n" % key
    return "%s:\n%s\n" % (key, "\n".join("  %s: %s" % (yaml_key(name), yaml_scalar(value)) for name, value in args.items()))


# ---------------------------------------------------------------------------------------------------- Markdown


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _args_text(args: Dict[str, Any]) -> str:
    """A candidate's args on one line, ``option=value`` (YAML values, so strings show their quotes)."""
    return ", ".join("%s=%s" % (name, yaml_scalar(value)) for name, value in args.items())


def _flag_cell(row: Dict[str, Any]) -> str:
    """The flag column: the candidate's name, and its args when they say more than ``name=true``."""
    text = "`%s`" % _cell(row["name"])
    if row["args"] and row["args"] != {row["name"]: True}:
        text += " (`%s`)" % _cell(_args_text(row["args"]))
    return text


def _mean_cell(mean: Optional[float], n: int) -> str:
    """``52.31 (5 runs)``: the mean and how many runs it stands for."""
    if mean is None:
        return _DASH
    return "%.2f (%d run%s)" % (mean, n, "" if n == 1 else "s")


def _share(value: Optional[float]) -> str:
    """A share of the ceiling as a percentage, or a dash."""
    return _DASH if value is None else "%.1f%%" % (value * 100.0)


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
             "over mean, of base and candidate) and the %s floor." % _pct(report["min_gain_pct"]), "",
             "| flag | verdict | %s: mean (runs) | gain | noise | vs ceiling | why |" % _cell(report["metric"]),
             "|---|---|---:|---:|---:|---:|---|"]
    base_why = "the reference: %d run%s, %.2f-%.2f tok/s" % (base["n"], "" if base["n"] == 1 else "s", base["min"], base["max"])
    lines.append("| base config | base | %s | %s | %s | %s | %s |" % (
        _mean_cell(base["mean"], base["n"]), _DASH, _pct(base["spread_pct"]), _share(base["efficiency"]), _cell(base_why)))
    for row in report["rows"]:
        measured = row["stats"] is not None
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            _flag_cell(row), "**keep**" if row["verdict"] == "keep" else row["verdict"],
            _mean_cell(row["mean"], row["stats"]["n"] if measured else 0),
            _signed_pct(row["gain_pct"]) if measured else _DASH, _pct(row["noise_pct"]) if measured else _DASH,
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


# ---------------------------------------------------------------------------------------------------- SVG


def _xml(text: Any) -> str:
    """Text or attribute content, XML-escaped (quotes too, so it is safe in either place)."""
    return _xml_escape(str(text), {'"': "&quot;", "'": "&#39;"})


def _fmt(value: float) -> str:
    """A coordinate with at most one decimal and no trailing zeros: deterministic and short."""
    text = "%.1f" % value
    return text[:-2] if text.endswith(".0") else text


def nice_step(top: float, target_ticks: int = 6) -> float:
    """A round tick step (1, 2, 2.5 or 5 x 10^k) giving about ``target_ticks`` ticks up to ``top``."""
    raw = top / max(target_ticks, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10.0 * magnitude


def _tick_label(value: float, step: float) -> str:
    """A tick value with as many decimals as the step needs (0, 0.5, 1.0 for a step of 0.5; 0, 10, 20 for 10)."""
    decimals = next((digits for digits in range(6) if abs(round(step, digits) - step) < 1e-9), 6)
    return "%.*f" % (decimals, value)


def _short(text: str, limit: int = 30) -> str:
    """A row label cut to fit the label column."""
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def render_svg(report: Dict[str, Any]) -> str:
    """A horizontal bar chart of mean tok/s per row (base first), whiskers from min to max, the ceiling as a dashed line.

    Why whiskers: the verdict rests on the spread of the runs, so the chart shows it; a bar whose whisker overlaps
    the base's is visibly not a gain. Rows without measurements stay in the chart as labelled empty rows, so a
    crashed flag is not silently missing.
    """
    base = report["baseline"]
    ceiling = report["ceiling"]
    entries = [{"label": "base config", "verdict": "base", "stats": base, "text": "%.2f" % base["mean"], "reason": "base config"}]
    for row in report["rows"]:
        if row["stats"] is None:
            text = row["label"]
        else:
            text = "%.2f (%s)" % (row["mean"], _signed_pct(row["gain_pct"]))
        entries.append({"label": row["name"], "verdict": row["verdict"], "stats": row["stats"], "text": text, "reason": row["reason"]})
    width, left, right_pad, top, row_h, bar_h = 760, 260, 120, 80, 30, 16
    plot_w = width - left - right_pad
    plot_h = row_h * len(entries)
    axis_y = top + plot_h
    height = axis_y + 70
    peak = max([entry["stats"]["max"] for entry in entries if entry["stats"]] + [ceiling["tokens_per_s"] if ceiling else 0.0])
    step = nice_step(peak * 1.05, 8)
    axis_max = math.ceil(peak * 1.05 / step) * step

    def x_of(value: float) -> float:
        """The x coordinate of a tok/s figure."""
        return left + plot_w * value / axis_max

    title = "SGLang flag tuning: %s" % report["metric"]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" '
           'font-family="sans-serif" font-size="12">' % (width, height, width, height, _xml(title)),
           "<title>%s</title>" % _xml(title),
           '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (width, height),
           '<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>' % (16, _xml(title)),
           '<text x="%d" y="44" fill="#555555">%s</text>' % (16, _xml(
               "bars: mean of the runs; whiskers: min to max (the noise); keep = gain beats the noise and the %s floor" % _pct(report["min_gain_pct"])))]
    for tick in range(int(round(axis_max / step)) + 1):
        value = tick * step
        x = _fmt(x_of(value))
        out.append('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#e5e5e5"/>' % (x, top, x, axis_y))
        out.append('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333333"/>' % (x, axis_y, x, axis_y + 5))
        out.append('<text x="%s" y="%d" text-anchor="middle">%s</text>' % (x, axis_y + 18, _tick_label(value, step)))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>' % (left, top, left, axis_y))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>' % (left, axis_y, left + plot_w, axis_y))
    out.append('<text x="%s" y="%d" text-anchor="middle">%s</text>' % (_fmt(left + plot_w / 2.0), axis_y + 36, _xml(report["metric"])))
    for position, entry in enumerate(entries):
        y = top + position * row_h
        mid = y + row_h / 2.0
        out.append('<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>' % (left - 8, _fmt(mid), _xml(_short(entry["label"]))))
        stats = entry["stats"]
        if stats is None:
            colour = FAILED_TEXT_COLOURS.get(entry["verdict"], "#6b6b6b")
            out.append('<rect x="%d" y="%s" width="%d" height="%d" fill="none" stroke="%s" stroke-dasharray="3,3">'
                       '<title>%s</title></rect>' % (left, _fmt(mid - bar_h / 2.0), plot_w, bar_h, colour, _xml(entry["reason"])))
            out.append('<text x="%d" y="%s" dominant-baseline="middle" fill="%s" font-style="italic">%s</text>' % (
                left + 8, _fmt(mid), colour, _xml(entry["text"])))
            continue
        out.append('<rect x="%d" y="%s" width="%s" height="%d" fill="%s"><title>%s</title></rect>' % (
            left, _fmt(mid - bar_h / 2.0), _fmt(x_of(stats["mean"]) - left), bar_h, COLOURS[entry["verdict"]],
            _xml("%s: %s" % (entry["label"], entry["reason"]))))
        low, high = _fmt(x_of(stats["min"])), _fmt(x_of(stats["max"]))
        out.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222222" stroke-width="1.5"/>' % (low, _fmt(mid), high, _fmt(mid)))
        for cap in (low, high):
            out.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222222" stroke-width="1.5"/>' % (cap, _fmt(mid - 5), cap, _fmt(mid + 5)))
        text_x = max(x_of(stats["max"]), x_of(stats["mean"])) + 6
        out.append('<text x="%s" y="%s" dominant-baseline="middle" stroke="#ffffff" stroke-width="3" paint-order="stroke">%s</text>' % (
            _fmt(text_x), _fmt(mid), _xml(entry["text"])))
    if ceiling:
        x = _fmt(x_of(ceiling["tokens_per_s"]))
        label = "ceiling %.2f tok/s" % ceiling["tokens_per_s"] + (" (%s)" % ceiling["bound"] if ceiling.get("bound") else "")
        out.append('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#b22222" stroke-width="1.5" stroke-dasharray="6,4"/>' % (
            x, top - 6, x, axis_y))
        out.append('<text x="%s" y="%d" text-anchor="end" fill="#b22222">%s</text>' % (x, top - 10, _xml(label)))
    legend_x = 16
    for name in ("base", "keep", "no gain", "slower"):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (legend_x, height - 22, COLOURS[name]))
        out.append('<text x="%d" y="%d">%s</text>' % (legend_x + 16, height - 12, _xml(name)))
        legend_x += 90
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------- entry point


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
    if not _number(min_gain_pct) or not math.isfinite(min_gain_pct) or min_gain_pct < 0:
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
    base_args = _args(baseline.get("args"), "baseline.args")
    top = _ceiling(ceiling)
    ceiling_tps = top["tokens_per_s"] if top else None
    floor = float(min_gain_pct)
    rows = [candidate_row(candidate, index, base_stats, ceiling_tps, floor) for index, candidate in enumerate(candidates)]
    kept_rows = sorted((row for row in rows if row["verdict"] == "keep"), key=lambda row: -row["gain_pct"])
    winning, notes = combine_args(base_args, kept_rows)
    baseline_out = dict(_public(base_stats), args=base_args, efficiency=_efficiency(base_stats["raw_mean"], ceiling_tps))
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
