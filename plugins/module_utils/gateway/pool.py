# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The worker pool of an smg gateway, read from its ``GET /workers``: pure functions, no I/O.

Why it exists: a rollout behind the gateway decides from the pool alone whether a worker may leave (a batch
that would leave no healthy worker is refused before it starts), when a drained worker is gone (the gateway's
own in-flight figure, ``load``, at 0 and the worker no longer listed) and what the summary says. The facts of
smg 1.13 that these rely on (docs/reference/gateway-smg.md):

- ``GET /workers`` -> ``{"workers": [{"id", "url", "status", "is_healthy", "load", "engine_load", ...}]}``;
  ``status`` is ``pending`` while the gateway's registration workflow probes a new worker, ``ready`` once it
  routes to it, ``draining`` after ``DELETE /workers/{id}`` (no new requests; it leaves the list after a fixed settle
  time of 5 s, requests still in flight or not: they are not cut, and the worker's own ``/metrics`` count them);
- ``load`` is the gateway's count of requests it has in flight on that worker; ``engine_load.loads[]`` holds
  the worker's own ``num_running_reqs`` / ``num_waiting_reqs`` as last polled.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional
from urllib.parse import urlsplit

READY = "ready"
DRAINING = "draining"


class PoolError(ValueError):
    """Input that cannot describe a worker or a pool (a bad URL, an answer that is not smg's)."""


def normalize_url(url: str) -> str:
    """``http://host:port`` as the gateway lists it: scheme and host in lower case, no path, no trailing slash.

    Why: the gateway keys workers by URL; ``http://10.0.0.5:30000/`` and ``http://10.0.0.5:30000`` are one
    worker, and a registration must find the entry it made before.
    """
    if not isinstance(url, str) or not url.strip():
        raise PoolError("a worker URL is empty: give http://HOST:PORT")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PoolError("worker URL %r is not http://HOST:PORT or https://HOST:PORT" % url)
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise PoolError("worker URL %r carries a path or query; the gateway wants only scheme, host and port" % url)
    host = parts.hostname.lower()
    if ":" in host:
        host = "[%s]" % host
    port = parts.port
    return "%s://%s%s" % (parts.scheme, host, ":%d" % port if port else "")


def workers_of(answer: Any) -> List[Dict[str, Any]]:
    """The worker entries of a ``GET /workers`` answer; a clear error when the answer is not smg's."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("workers"), list):
        raise PoolError("the gateway's /workers answer has no 'workers' list: is this an smg gateway?")
    return [dict(w) for w in answer["workers"] if isinstance(w, Mapping) and isinstance(w.get("url"), str)]


def find(workers: Iterable[Mapping[str, Any]], url: str) -> Optional[Dict[str, Any]]:
    """The entry of ``url`` in the pool (URLs compared normalized), or None."""
    wanted = normalize_url(url)
    for worker in workers:
        try:
            if normalize_url(worker["url"]) == wanted:
                return dict(worker)
        except PoolError:
            continue
    return None


def engine_in_flight(worker: Mapping[str, Any]) -> Optional[int]:
    """Running plus waiting requests the worker itself reported at the gateway's last poll (None: no figure)."""
    loads = (worker.get("engine_load") or {}).get("loads") if isinstance(worker.get("engine_load"), Mapping) else None
    if not isinstance(loads, list) or not loads:
        return None
    total = 0
    for rank in loads:
        if not isinstance(rank, Mapping):
            return None
        total += int(rank.get("num_running_reqs") or 0) + int(rank.get("num_waiting_reqs") or 0)
    return total


def metrics_in_flight(text: str) -> Optional[int]:
    """Running plus queued requests from an SGLang ``/metrics`` page (``sglang:num_running_reqs`` and
    ``sglang:num_queue_reqs``, summed over label sets); None when the page has neither.

    Why: smg drops a drained worker from its list after a fixed settle time (5 s), in-flight requests or not; from
    then on only the worker itself says whether requests are still running on it.
    """
    total, seen = 0.0, False
    for line in (text or "").splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in ("sglang:num_running_reqs", "sglang:num_queue_reqs"):
            try:
                total += float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                continue
            seen = True
    return int(total) if seen else None


def serving(worker: Mapping[str, Any]) -> bool:
    """Whether the gateway routes new requests to this worker: ready and healthy."""
    return worker.get("status") == READY and bool(worker.get("is_healthy"))


def brief(worker: Mapping[str, Any]) -> Dict[str, Any]:
    """What a play needs of one entry: URL, id, status, health and both in-flight figures."""
    return {"url": normalize_url(worker["url"]), "id": worker.get("id"), "status": worker.get("status"),
            "healthy": bool(worker.get("is_healthy")), "in_flight": int(worker.get("load") or 0),
            "engine_in_flight": engine_in_flight(worker)}


def summary(workers: Iterable[Mapping[str, Any]]) -> Dict[str, int]:
    """Counts for the summary line: workers listed, serving (ready and healthy), draining, in flight."""
    listed = list(workers)
    return {"workers": len(listed), "healthy": sum(1 for w in listed if serving(w)),
            "draining": sum(1 for w in listed if w.get("status") == DRAINING),
            "in_flight": sum(int(w.get("load") or 0) for w in listed)}


def healthy_after(workers: Iterable[Mapping[str, Any]], leaving: Iterable[str]) -> List[str]:
    """URLs that would still serve once every URL in ``leaving`` has left the pool."""
    gone = {normalize_url(u) for u in leaving}
    return sorted(normalize_url(w["url"]) for w in workers if serving(w) and normalize_url(w["url"]) not in gone)


def leave_refusal(workers: Iterable[Mapping[str, Any]], leaving: Iterable[str], min_healthy: int) -> Optional[str]:
    """Why ``leaving`` may not leave the pool now (fewer than ``min_healthy`` serving workers would remain), or None.

    Only a leave that takes serving workers away can be refused: workers that do not serve (unhealthy, pending,
    draining, or not listed at all, as on a first deploy) change nothing for clients when they go.

    Why before anything changes: a batch that drains the last healthy workers turns a rollout into an outage
    that no rollback undoes quickly; refusing it up front leaves every server as it was.
    """
    listed = list(workers)
    leaving = list(leaving)
    left = healthy_after(listed, leaving)
    gone = {normalize_url(u) for u in leaving}
    if len(left) >= min_healthy or not any(serving(w) and normalize_url(w["url"]) in gone for w in listed):
        return None  # enough remain, or none of those leaving serves now: their leaving changes nothing for clients
    now = [normalize_url(w["url"]) for w in listed if serving(w)]
    return ("taking %s out of the gateway's pool would leave %d serving worker(s) (%s), fewer than the %d required; "
            "serving now: %s. Make the batch smaller (serial) or bring more workers to ready first"
            % (", ".join(sorted(normalize_url(u) for u in leaving)) or "nothing", len(left),
               ", ".join(left) or "none", min_healthy, ", ".join(sorted(now)) or "none"))


def drain_state(worker: Optional[Mapping[str, Any]]) -> str:
    """Where a drain stands from the worker's entry: ``gone`` (not listed), ``draining`` or ``listed`` (other)."""
    if worker is None:
        return "gone"
    return DRAINING if worker.get("status") == DRAINING else "listed"


def drain_timeout_message(url: str, worker: Optional[Mapping[str, Any]], waited_s: float) -> str:
    """The failure of a drain that did not end within its bound: what is still in flight, and what to do."""
    entry = brief(worker) if worker else {"in_flight": 0, "engine_in_flight": None, "status": "gone"}
    return ("worker %s did not leave the gateway's pool within %.0f s: status %s, %d request(s) in flight through "
            "the gateway, %s reported by the worker. It receives no new requests; raise drain_timeout for longer "
            "requests, or check the worker" % (normalize_url(url), waited_s, entry["status"], entry["in_flight"],
                                               "none" if entry["engine_in_flight"] is None
                                               else entry["engine_in_flight"]))
