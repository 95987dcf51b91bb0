# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small client of the smg gateway's worker API (``/workers``), on ``http.client`` only.

Why: modules run with the target's Python and the standard library. The calls are few and short
(list, add, remove); every error names the gateway URL and the HTTP status, and never the API key.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import http.client
import json
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import quote, urlsplit

from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway.pool import metrics_in_flight, normalize_url, workers_of
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import redact

ERROR_BODY_LIMIT = 400


def _request(base_url: str, method: str, path: str, data: Optional[bytes], headers: Dict[str, str],
             timeout: float) -> Tuple[int, str]:
    """One HTTP exchange: (status, body text). Connection errors raise OSError or HTTPException."""
    parts = urlsplit(base_url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = connection_class(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, path, body=data, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read().decode("utf-8", "replace")
    finally:
        conn.close()


class GatewayError(Exception):
    """The gateway could not be reached or answered with an error status."""


class GatewayClient:
    """Calls to one gateway; ``api_key`` goes in ``Authorization: Bearer`` when given."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, timeout: float = 10.0):
        self.base_url = normalize_url(base_url)
        self.api_key = api_key or None
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None, conflict_ok: bool = False) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        secrets = [self.api_key] if self.api_key else []
        secrets += [str(body.get("api_key"))] if body and body.get("api_key") else []
        try:
            status, text = _request(self.base_url, method, path, data, headers, self.timeout)
        except (OSError, http.client.HTTPException) as err:
            raise GatewayError("gateway %s: %s %s failed: %s"
                               % (self.base_url, method, path, redact(str(err) or type(err).__name__, secrets))) from None
        if status == 409 and conflict_ok:
            return {"conflict": True, "text": redact(text[:ERROR_BODY_LIMIT].strip(), secrets)}
        if status >= 400:
            raise GatewayError("gateway %s: %s %s answered %d: %s"
                               % (self.base_url, method, path, status, redact(text[:ERROR_BODY_LIMIT].strip(), secrets)))
        try:
            return json.loads(text) if text.strip() else {}
        except ValueError:
            return {"text": text[:ERROR_BODY_LIMIT]}

    def health(self) -> bool:
        """Whether ``GET /health`` answers 200 (the gateway process serves)."""
        try:
            self._call("GET", "/health")
        except GatewayError:
            return False
        return True

    def workers(self) -> List[Dict[str, Any]]:
        """The pool as ``GET /workers`` lists it."""
        return workers_of(self._call("GET", "/workers"))

    def add(self, url: str, worker_api_key: Optional[str] = None, priority: Optional[int] = None) -> Dict[str, Any]:
        """``POST /workers``: the gateway probes the worker in the background (202) and routes to it once ready.

        409 (the URL is already registered, possibly still pending and so not in ``GET /workers``) is an answer,
        ``{"conflict": True}``, not an error: a re-run registration finds what the first one made.
        """
        body: Dict[str, Any] = {"url": normalize_url(url)}
        if worker_api_key:
            body["api_key"] = worker_api_key
        if priority is not None:
            body["priority"] = int(priority)
        return self._call("POST", "/workers", body, conflict_ok=True)

    def remove(self, worker_id: str) -> Dict[str, Any]:
        """``DELETE /workers/{id}``: the gateway stops routing to it at once and drops it after a settle time (5 s)."""
        return self._call("DELETE", "/workers/" + quote(str(worker_id), safe=""))


def worker_in_flight(url: str, timeout: float = 5.0) -> Optional[int]:
    """Requests running or queued on an SGLang worker, from its ``/metrics`` (open without a key); None when it
    serves no metrics (started without ``--enable-metrics``) or cannot be reached."""
    try:
        status, text = _request(normalize_url(url), "GET", "/metrics", None, {}, timeout)
    except (OSError, http.client.HTTPException, ValueError):
        return None
    return metrics_in_flight(text) if status == 200 else None
