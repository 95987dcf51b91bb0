# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small client of the smg gateway's worker API (``/workers``), on ``urllib`` only.

Why: modules run with the target's Python and the standard library. The calls are few and short
(list, add, remove); every error names the gateway URL and the HTTP status, and never the API key.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional

from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway.pool import metrics_in_flight, normalize_url, workers_of
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import redact

ERROR_BODY_LIMIT = 400


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
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.api_key:
            request.add_header("Authorization", "Bearer " + self.api_key)
        secrets = [self.api_key] if self.api_key else []
        secrets += [str(body.get("api_key"))] if body and body.get("api_key") else []
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # nosec B310: http(s) only
                text = answer.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as err:
            detail = err.read().decode("utf-8", "replace")[:ERROR_BODY_LIMIT]
            if conflict_ok and err.code == 409:
                return {"conflict": True, "text": redact(detail.strip(), secrets)}
            raise GatewayError("gateway %s: %s %s answered %d: %s"
                               % (self.base_url, method, path, err.code, redact(detail.strip(), secrets))) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            message = redact(str(reason), secrets)
            raise GatewayError("gateway %s: %s %s failed: %s" % (self.base_url, method, path, message)) from None
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
        """``DELETE /workers/{id}``: the gateway stops routing to it, waits for its in-flight requests, drops it."""
        return self._call("DELETE", "/workers/" + urllib.request.quote(str(worker_id), safe=""))


def worker_in_flight(url: str, timeout: float = 5.0) -> Optional[int]:
    """Requests running or queued on an SGLang worker, from its ``/metrics`` (open without a key); None when it
    serves no metrics (started without ``--enable-metrics``) or cannot be reached."""
    try:
        with urllib.request.urlopen(normalize_url(url) + "/metrics", timeout=timeout) as answer:  # nosec B310
            return metrics_in_flight(answer.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, OSError, ValueError):
        return None
