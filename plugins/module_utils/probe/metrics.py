# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Aggregate figures of one concurrency level, defined as SGLang's benchmark defines them.

Why the same definitions: an operator compares the probe with ``python -m sglang.benchmark.serving`` and with
numbers posted in SGLang issues; a different percentile rule or throughput window would make equal servers look
different. So (docs/reference/sglang.md#benchmark-metrics):

- percentiles interpolate linearly between order statistics, numpy's default (the benchmark uses numpy);
- ITL percentiles pool every gap of every request; TTFT, TPOT, E2E and decode tokens/s are per request;
- throughputs divide by the wall time from the first request's send to the last request's end;
- ``connect_ms``: the TCP (and TLS) handshakes: one per request in ``per-request`` mode, where TTFT includes them
  as the bench's does; one per connection, before the level, in ``keep-alive`` mode, where TTFT does not.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import RequestTiming

PERCENTILES = (50, 90, 99)
MAX_ERRORS_KEPT = 5


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation (numpy.percentile's default ``linear`` method).

    For sorted values x[0..n-1] the rank is (n-1) * pct / 100; the result interpolates between the two order
    statistics around it.
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= pct <= 100:
        raise ValueError("percentile must be within [0, 100]")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = int(math.floor(rank))
    high = int(math.ceil(rank))
    if low == high:
        return float(ordered[low])
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(values: Iterable[Optional[float]], scale: float = 1.0, digits: int = 3) -> Optional[Dict[str, float]]:
    """``{"mean", "p50", "p90", "p99"}`` of the values times ``scale`` (None values dropped; None when empty)."""
    data = [float(v) * scale for v in values if v is not None]
    if not data:
        return None
    out = {"mean": round(sum(data) / len(data), digits)}
    for pct in PERCENTILES:
        out["p%d" % pct] = round(percentile(data, pct), digits)
    return out


def run_accept_length(timings: Sequence[RequestTiming]) -> Optional[float]:
    """Speculative accept length of these requests: sum of output tokens / sum of verify steps.

    The same weighting as the server's ``completion_tokens / spec_verify_ct`` per request, pooled; falls back to
    the mean of per-request ``spec_accept_length`` when verify counts are missing. None without speculation.
    """
    counted = [t for t in timings if t.ok and t.spec_verify_ct]
    if counted:
        return round(sum(t.output_tokens for t in counted) / float(sum(t.spec_verify_ct or 0 for t in counted)), 4)
    lengths = [t.spec_accept_length for t in timings if t.ok and t.spec_accept_length]
    if lengths:
        return round(sum(lengths) / len(lengths), 4)
    return None


def level_metrics(timings: Sequence[RequestTiming], duration_s: float, concurrency: int) -> Dict[str, Any]:
    """Figures of one concurrency level: counts, throughputs, and mean/p50/p90/p99 of each latency.

    ``duration_s`` is the level's wall time (first send to last end). Latencies are reported in ms.
    """
    done = [t for t in timings if t.ok]
    failed = [t for t in timings if not t.ok]
    duration = max(float(duration_s), 1e-9)
    out_tokens = sum(t.output_tokens for t in done)
    in_tokens = sum(t.prompt_tokens or 0 for t in done)
    sources = sorted(set(t.tokens_source for t in done))
    errors: List[str] = []
    for t in failed:
        if t.error and t.error not in errors and len(errors) < MAX_ERRORS_KEPT:
            errors.append(t.error)
    itl: List[float] = []
    for t in done:
        itl.extend(t.itl)
    return {
        "concurrency": int(concurrency),
        "requests": len(timings),
        "completed": len(done),
        "failed": len(failed),
        "duration_s": round(duration, 4),
        "input_tokens": in_tokens,
        "output_tokens": out_tokens,
        "request_throughput": round(len(done) / duration, 4),
        "output_throughput": round(out_tokens / duration, 3),
        "input_throughput": round(in_tokens / duration, 3),
        "total_throughput": round((in_tokens + out_tokens) / duration, 3),
        "concurrency_achieved": round(sum(t.latency for t in done) / duration, 3),
        "ttft_ms": summarize((t.ttft for t in done), 1e3),
        "connect_ms": summarize((t.connect for t in timings), 1e3),
        "itl_ms": summarize(itl, 1e3),
        "tpot_ms": summarize((t.tpot for t in done), 1e3),
        "e2e_ms": summarize((t.latency for t in done), 1e3),
        "decode_tps": summarize(t.decode_tps for t in done),
        "tokens_source": sources[0] if len(sources) == 1 else ("mixed" if sources else None),
        "accept_length": run_accept_length(done),
        "errors": errors,
    }


def request_rows(timings: Sequence[RequestTiming]) -> List[Dict[str, Any]]:
    """Per-request figures (for ``include_requests``): TTFT, TPOT and E2E in ms, decode tokens/s, token counts."""
    rows = []
    for t in timings:
        row: Dict[str, Any] = {"ok": t.ok}
        if t.ok:
            row.update({
                "ttft_ms": round(t.ttft * 1e3, 3), "e2e_ms": round(t.latency * 1e3, 3),
                "tpot_ms": round(t.tpot * 1e3, 3) if t.tpot else None,
                "decode_tps": round(t.decode_tps, 3) if t.decode_tps else None,
                "output_tokens": t.output_tokens, "prompt_tokens": t.prompt_tokens,
                "connect_ms": round(t.connect * 1e3, 3) if t.connect is not None else None,
            })
            if t.spec_verify_ct:
                row["spec_verify_ct"] = t.spec_verify_ct
        else:
            row["error"] = t.error
        rows.append(row)
    return rows
