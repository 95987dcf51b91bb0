# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One line per SGLang instance for the end of a deploy or a rollout.

Why a function and not a Jinja template: the summary is the first thing an operator reads after a play, and it
must say the same thing the same way in ``deploy.yml``, ``rollout.yml`` and ``tune.yml``: what runs, whether it
was restarted and why, how fast it reached ready, what the probe measured and how that compares with the ceiling
the hardware allows: the expected figure with its band, the bound no server beats, and the efficiency against the
expectation. Missing pieces (no probe configured, a check-mode run) are said, not left blank.

Runs on the controller (filter ``gpufleet.sglang.server_summary``); standard library only.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional


def _num(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def gate_level(probe: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The level the efficiency was computed at, else the lowest concurrency measured."""
    levels = [lv for lv in probe.get("levels") or [] if isinstance(lv, dict)]
    if not levels:
        return None
    wanted = probe.get("efficiency_concurrency")
    for level in levels:
        if wanted is not None and level.get("concurrency") == wanted:
            return level
    return min(levels, key=lambda lv: int(lv.get("concurrency") or 0))


def probe_text(probe: Optional[Dict[str, Any]], measured: Optional[str] = None) -> str:
    """Decode speed, TTFT and accept length of the gate level, then the ceiling and the efficiency."""
    if not isinstance(probe, dict) or not probe.get("levels"):
        return "not probed (set sglang_server_probe for figures and a gate)"
    level = gate_level(probe) or {}
    parts = []
    decode = _num((level.get("decode_tps") or {}).get("mean"))
    if decode is not None:
        parts.append("decode %.1f tok/s at concurrency %s" % (decode, level.get("concurrency", "?")))
    ttft = _num((level.get("ttft_ms") or {}).get("p50"))
    if ttft is not None:
        parts.append("TTFT p50 %.0f ms" % ttft)
    accept = _num(probe.get("accept_length"))
    if accept is not None:
        parts.append("accept length %.2f" % accept)
    text = ", ".join(parts) or "probed, no decode figure"
    if measured and measured != "this run":
        text += " (measured %s)" % measured
    ceiling = probe.get("ceiling") if isinstance(probe.get("ceiling"), dict) else None
    efficiency = _num(probe.get("efficiency"))
    if ceiling and _num(ceiling.get("tokens_per_s")) is not None:
        bound = str(ceiling.get("bound") or "").replace("_", " ")
        expected = ceiling.get("expected") if isinstance(ceiling.get("expected"), dict) else {}
        if _num(expected.get("tokens_per_s")) is not None:
            text += "; expected %.1f tok/s (band %.1f-%.1f)" % (
                float(expected["tokens_per_s"]), float(expected.get("low") or 0.0), float(expected.get("high") or 0.0))
        text += "; bound %.1f tok/s%s" % (float(ceiling["tokens_per_s"]), " (%s)" % bound if bound else "")
        if efficiency is not None:
            text += ", efficiency %.0f%% of expected" % (efficiency * 100.0)
        elif _num(probe.get("efficiency_of_bound")) is not None:
            text += ", %.0f%% of the bound (no expectation without an accept length)" % (float(probe["efficiency_of_bound"]) * 100.0)
    else:
        text += "; no ceiling (give the probe a ceiling: gpu, link, model)"
    return text


def instance_line(name: str, run: Dict[str, Any]) -> str:
    """What one instance runs and how its launch went, in one line."""
    head = "%s: SGLang %s on port %s" % (name, run.get("sglang_version") or "?", run.get("port", "?"))
    if run.get("restarted"):
        changed = [os.path.basename(str(path)) for path in run.get("changed_files") or []]
        why = "changed %s" % ", ".join(changed) if changed else "restart requested or not ready before"
        if run.get("check_mode"):
            return "%s, would restart (%s); nothing was touched (check mode)" % (head, why)
        ready = _num(run.get("time_to_ready_s"))
        launch = "restarted (%s)%s" % (why, ", ready in %.1f s" % ready if ready is not None else "")
    else:
        launch = "unchanged, not restarted"
    return "%s, %s; %s" % (head, launch, probe_text(run.get("probe"), run.get("probe_measured")))


def server_summary(results: Optional[Dict[str, Any]], nccl_env: Optional[Dict[str, Any]] = None) -> List[str]:
    """The summary lines of one host: each instance, then the NCCL environment the tuning chose."""
    lines = [instance_line(str(name), run) for name, run in sorted((results or {}).items()) if isinstance(run, dict)]
    if not lines:
        lines.append("no SGLang instance was configured in this run")
    if nccl_env is not None:
        lines.append("NCCL: %s" % (", ".join("%s=%s" % (k, v) for k, v in sorted(nccl_env.items())) or "library defaults (nothing set)"))
    return lines


def gateway_line(gateway: Optional[Dict[str, Any]]) -> str:
    """One line for the gateway in front of the fleet: its URL, workers in the pool, how many serve, drained.

    ``gateway`` holds ``url``, ``summary`` (the pool's counts from ``sglang_gateway_worker``: workers, healthy,
    draining) and optionally ``drained`` (workers this run took out and did not put back: they are named, since a
    worker left out is a server that takes no traffic).
    """
    if not isinstance(gateway, dict) or not isinstance(gateway.get("summary"), dict):
        return "gateway: no pool read (no gateway group, or a check-mode run)"
    counts = gateway["summary"]
    drained = [str(u) for u in gateway.get("drained") or []]
    text = "gateway %s: %d worker(s) in the pool, %d healthy, %d draining" % (
        gateway.get("url") or "?", int(counts.get("workers") or 0), int(counts.get("healthy") or 0),
        int(counts.get("draining") or 0))
    text += "; drained and left out: %s" % ", ".join(drained) if drained else "; none left out"
    return text
