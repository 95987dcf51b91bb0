# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe gates: minimum decode speed, maximum TTFT, no failed requests, and no regression against a baseline.

Why pure functions over the results dict: the same gates run in ``sglang_probe`` and as the last step of
``sglang_launch``, and a gate that misses must say which figure missed, by how much, and against what, so the
failure message alone tells the operator what happened. Every check is returned (passed or not), so a passing
run still shows its margins.

Gates read one concurrency level: ``gate_concurrency``, by default the lowest level of the sweep (normally 1,
the batch-1 figure that the hardware ceiling describes).

- ``min_decode_tps``: the mean per-request decode tokens/s (1 / TPOT).
- ``max_ttft_ms``: the p90 TTFT, so one slow first request does not fail a gate meant for the typical case and a
  tail that is consistently slow does.
- regression: for every level present in both runs, mean decode tokens/s and output throughput may fall, and p50
  TTFT may rise, by at most ``tolerance_pct`` percent (TTFT also gets ``ttft_slack_ms``: at tens of milliseconds
  a fixed jitter is larger than any sensible percentage).

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

# (name, key path, unit, higher is better)
REGRESSION_METRICS = (
    ("decode tok/s (mean)", ("decode_tps", "mean"), "tok/s", True),
    ("output throughput", ("output_throughput",), "tok/s", True),
    ("TTFT p50", ("ttft_ms", "p50"), "ms", False),
)


def _get(level: Dict[str, Any], path: Sequence[str]) -> Optional[float]:
    """A figure from a level dict by key path, None when absent."""
    value: Any = level
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def gate_level(levels: Sequence[Dict[str, Any]], concurrency: Optional[int] = None) -> Optional[Dict[str, Any]]:
    """The level the gates read: the one at ``concurrency``, else the lowest concurrency of the sweep."""
    if not levels:
        return None
    if concurrency is not None:
        for level in levels:
            if int(level.get("concurrency", -1)) == int(concurrency):
                return level
        return None
    return min(levels, key=lambda lv: int(lv.get("concurrency", 0)))


def _check(gate: str, concurrency: Any, metric: str, measured: Optional[float], limit: float, passed: bool, text: str) -> Dict[str, Any]:
    return {"gate": gate, "concurrency": concurrency, "metric": metric, "measured": measured, "limit": round(limit, 3),
            "passed": passed, "text": text}


def threshold_checks(levels: Sequence[Dict[str, Any]], min_decode_tps: Optional[float] = None, max_ttft_ms: Optional[float] = None,
                     gate_concurrency: Optional[int] = None) -> List[Dict[str, Any]]:
    """The ``min_decode_tps`` and ``max_ttft_ms`` checks at the gate level (empty when neither is set)."""
    checks: List[Dict[str, Any]] = []
    if min_decode_tps is None and max_ttft_ms is None:
        return checks
    level = gate_level(levels, gate_concurrency)
    if level is None:
        where = "concurrency %s" % gate_concurrency if gate_concurrency is not None else "any concurrency"
        for gate, limit in (("min_decode_tps", min_decode_tps), ("max_ttft_ms", max_ttft_ms)):
            if limit is not None:
                checks.append(_check(gate, gate_concurrency, "", None, float(limit), False, "%s: no measurement at %s" % (gate, where)))
        return checks
    conc = level.get("concurrency")
    if min_decode_tps is not None:
        value = _get(level, ("decode_tps", "mean"))
        ok = value is not None and value >= float(min_decode_tps)
        shown = "%.2f" % value if value is not None else "no"
        checks.append(_check("min_decode_tps", conc, "decode_tps.mean", value, float(min_decode_tps), ok,
                             "decode %s tok/s (mean, concurrency %s) %s min_decode_tps %g" % (shown, conc, ">=" if ok else "<", float(min_decode_tps))))
    if max_ttft_ms is not None:
        value = _get(level, ("ttft_ms", "p90"))
        ok = value is not None and value <= float(max_ttft_ms)
        shown = "%.1f" % value if value is not None else "no"
        checks.append(_check("max_ttft_ms", conc, "ttft_ms.p90", value, float(max_ttft_ms), ok,
                             "TTFT p90 %s ms (concurrency %s) %s max_ttft_ms %g" % (shown, conc, "<=" if ok else ">", float(max_ttft_ms))))
    return checks


def failure_checks(levels: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One check per level that had failed requests: a probe whose requests fail has no figures to trust."""
    checks = []
    for level in levels:
        failed = int(level.get("failed") or 0)
        if failed:
            first = (level.get("errors") or ["no error text"])[0]
            text = "%d of %d requests failed at concurrency %s (first: %s)" % (failed, level.get("requests", 0), level.get("concurrency"), first)
            checks.append(_check("requests", level.get("concurrency"), "failed", float(failed), 0.0, False, text))
    return checks


def baseline_levels(baseline: Any) -> List[Dict[str, Any]]:
    """The levels of a baseline: an earlier probe's results (``{"levels": [...]}``) or a bare list of levels."""
    if isinstance(baseline, dict):
        baseline = baseline.get("levels")
    if not isinstance(baseline, list) or not all(isinstance(lv, dict) for lv in baseline):
        raise ValueError("a baseline is an earlier sglang_probe result (a dict with 'levels') or a list of levels")
    return baseline


def regression_checks(levels: Sequence[Dict[str, Any]], baseline: Any, tolerance_pct: float = 5.0,
                      ttft_slack_ms: float = 5.0) -> List[Dict[str, Any]]:
    """Compare every level present in both runs; a figure worse than the baseline by more than the tolerance misses."""
    checks: List[Dict[str, Any]] = []
    by_conc = {int(lv.get("concurrency", -1)): lv for lv in baseline_levels(baseline)}
    tol = float(tolerance_pct) / 100.0
    compared = 0
    for level in levels:
        conc = int(level.get("concurrency", -1))
        old = by_conc.get(conc)
        if old is None:
            continue
        for name, path, unit, higher_better in REGRESSION_METRICS:
            now_v, old_v = _get(level, path), _get(old, path)
            if now_v is None or old_v is None:
                continue
            compared += 1
            if higher_better:
                limit = old_v * (1.0 - tol)
                ok = now_v >= limit
                change = (now_v - old_v) / old_v * 100.0 if old_v else 0.0
            else:
                limit = old_v * (1.0 + tol) + float(ttft_slack_ms)
                ok = now_v <= limit
                change = (now_v - old_v) / old_v * 100.0 if old_v else 0.0
            text = "%s at concurrency %d: %.2f %s vs baseline %.2f %s (%+.1f%%, limit %.2f)" % (name, conc, now_v, unit, old_v, unit, change, limit)
            checks.append(_check("baseline", conc, ".".join(path), round(now_v, 3), limit, ok, text))
    if not compared:
        checks.append(_check("baseline", None, "", None, 0.0, False,
                             "baseline has no level at the concurrencies probed (%s)" % ", ".join(str(lv.get("concurrency")) for lv in levels)))
    return checks


def evaluate(levels: Sequence[Dict[str, Any]], min_decode_tps: Optional[float] = None, max_ttft_ms: Optional[float] = None,
             gate_concurrency: Optional[int] = None, baseline: Any = None, tolerance_pct: float = 5.0,
             ttft_slack_ms: float = 5.0) -> Dict[str, Any]:
    """All checks, whether all passed, the missed ones, and a one-line message naming each missed figure."""
    checks = failure_checks(levels)
    checks += threshold_checks(levels, min_decode_tps, max_ttft_ms, gate_concurrency)
    if baseline is not None:
        checks += regression_checks(levels, baseline, tolerance_pct, ttft_slack_ms)
    missed = [c for c in checks if not c["passed"]]
    if missed:
        message = "%d probe gate%s missed: %s" % (len(missed), "" if len(missed) == 1 else "s", "; ".join(c["text"] for c in missed))
    else:
        message = "all %d probe gates passed" % len(checks) if checks else "no gates set"
    return {"passed": not missed, "checks": checks, "missed": missed, "message": message}
