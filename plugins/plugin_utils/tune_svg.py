# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tuning report as an SVG bar chart: one bar per measured flag with min-max whiskers, the ceiling dashed.

Rendered here (not in a template) so the content is unit-tested and byte-identical for identical inputs.
Controller-side only.
"""

from __future__ import annotations

import math
from typing import Any, Dict
from xml.sax.saxutils import escape as _xml_escape

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import pct, signed_pct

# Bar colours by verdict (Tableau 10: distinguishable, and readable in grey print).
COLOURS = {"base": "#4c78a8", "keep": "#54a24b", "no gain": "#9d9d9d", "slower": "#f58518"}
FAILED_TEXT_COLOURS = {"refused": "#6b6b6b", "crashed": "#c0392b", "gate failed": "#c0392b"}


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
            text = "%.2f (%s)" % (row["mean"], signed_pct(row["gain_pct"]))
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
               "bars: mean of the runs; whiskers: min to max (the noise); keep = gain beats the noise and the %s floor" % pct(report["min_gain_pct"])))]
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
