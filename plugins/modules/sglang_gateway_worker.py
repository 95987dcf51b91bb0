#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_gateway_worker: register, drain, deregister or list SGLang servers in an smg gateway's pool."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: sglang_gateway_worker
short_description: Register, drain, deregister or list the workers of an smg (SGLang Model Gateway) pool
version_added: 0.1.0
description:
  - >-
    Talks to the worker API of the SGLang gateway smg (C(GET/POST /workers), C(DELETE /workers/{id})). smg finds
    workers by itself only on Kubernetes; on bare metal this module is what puts a server into the pool once it is
    ready and takes it out before it restarts.
  - >-
    O(state=present) registers O(url) and waits until the gateway lists it ready and healthy (the gateway probes it
    first), at most O(register_timeout) seconds; a worker it registered that does not get there is removed again
    and the module fails. O(state=drained) takes it out without dropping a request: the
    gateway stops sending it new requests at once (status C(draining)), its in-flight requests finish, then it
    leaves the list (smg 1.13 drops it after a fixed settle time of 5 s), then the module waits until the worker's
    own C(/metrics) count no running or queued request (when it serves metrics, C(--enable-metrics); otherwise
    SGLang's SIGTERM drain finishes what is left), all within O(drain_timeout) seconds, and reports the in-flight
    figures it saw (the gateway's own count and the worker's). O(state=absent) asks for the
    removal and returns without waiting. O(state=listed) only reads the pool.
  - >-
    Before a worker leaves, the module refuses (and changes nothing) when fewer than O(min_healthy) serving workers
    would remain once O(url) and the O(leaving) URLs are out.
  - Supports check mode (nothing is sent but reads; C(changed) says what would change).
author:
  - gpufleet maintainers (@gpufleet)
options:
  gateway_url:
    description: Base URL of the gateway, C(http://HOST:PORT).
    type: str
    required: true
  gateway_api_key:
    description: The gateway's API key (sent as C(Authorization Bearer)); needed when the gateway runs with one.
    type: str
  url:
    description: The worker (SGLang server) as the gateway reaches it, C(http://HOST:PORT). Required unless O(state=listed).
    type: str
  worker_api_key:
    description: The worker's own API key, handed to the gateway at registration so it can call the worker.
    type: str
  state:
    description: What should be true of O(url) afterwards.
    type: str
    choices: [present, drained, absent, listed]
    default: present
  leaving:
    description: Other worker URLs leaving the pool in the same batch; counted against O(min_healthy).
    type: list
    elements: str
    default: []
  min_healthy:
    description: >-
      Serving workers (ready and healthy) that must remain once O(url) and O(leaving) are out; a drain or removal
      that would leave fewer is refused before anything changes. With O(state=listed) it decides RV(refusal).
    type: int
    default: 1
  register_timeout:
    description: Seconds to wait for a registered worker to be listed ready and healthy.
    type: float
    default: 120
  drain_timeout:
    description: Seconds to wait for a drained worker's in-flight requests to finish and the worker to leave the list.
    type: float
    default: 300
  priority:
    description: Routing priority given at registration (smg's default is 50).
    type: int
  timeout:
    description: Seconds for each HTTP call to the gateway.
    type: float
    default: 10
attributes:
  check_mode:
    support: full
    details: In check mode only C(GET /workers) is sent; C(changed) says whether the worker would join or leave.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.sglang.http_client
notes:
  - Runs wherever the gateway's port is reachable (the controller with C(delegate_to), or the gateway host).
  - Secrets (O(gateway_api_key), O(worker_api_key)) are never returned; error texts are redacted.
seealso:
  - module: gpufleet.sglang.sglang_launch
"""

EXAMPLES = r"""
- name: Take the server out of the gateway's pool before its restart
  gpufleet.sglang.sglang_gateway_worker:
    gateway_url: http://gw1:30080
    gateway_api_key: "{{ sglang_gateway_api_key }}"
    url: http://10.0.0.11:30000
    state: drained
    drain_timeout: 600
  delegate_to: localhost

- name: Put it back once it is ready and passed its gates
  gpufleet.sglang.sglang_gateway_worker:
    gateway_url: http://gw1:30080
    url: http://10.0.0.11:30000
    worker_api_key: "{{ sglang_server_api_key }}"
    state: present

- name: Would this batch leave the pool without a serving worker?
  gpufleet.sglang.sglang_gateway_worker:
    gateway_url: http://gw1:30080
    state: listed
    leaving: [http://10.0.0.11:30000, http://10.0.0.12:30000]
  register: pool
  failed_when: pool.refusal | length > 0
"""

RETURN = r"""
worker:
  description: The entry of O(url) after the call (null when it is not in the pool).
  returned: when O(url) is given
  type: dict
  sample: {"url": "http://10.0.0.11:30000", "id": "01a2...", "status": "ready", "healthy": true, "in_flight": 0, "engine_in_flight": 0}
before:
  description: The entry of O(url) before the call (null when it was not in the pool).
  returned: when O(url) is given
  type: dict
pool:
  description: Every worker of the pool after the call, as in RV(worker).
  returned: always
  type: list
  elements: dict
summary:
  description: Counts of the pool after the call.
  returned: always
  type: dict
  sample: {"workers": 3, "healthy": 3, "draining": 0, "in_flight": 4}
healthy_after:
  description: URLs that would still serve once O(url) and O(leaving) are out.
  returned: always
  type: list
  elements: str
refusal:
  description: Why O(url) and O(leaving) may not leave now (O(min_healthy)); empty when they may.
  returned: always
  type: str
drain:
  description: >-
    For O(state=drained): seconds waited, the gateway's in-flight count when the drain began, the most the worker
    itself reported meanwhile and its count at the end (null when it serves no metrics).
  returned: when O(state=drained)
  type: dict
  sample: {"waited_s": 5.4, "in_flight_at_start": 2, "engine_in_flight_max": 2, "engine_in_flight_end": 0}
waited_s:
  description: Seconds spent waiting for the gateway (registration or drain).
  returned: always
  type: float
"""

import time
from typing import Any, Dict, List, Optional

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway.client import GatewayClient, GatewayError, worker_in_flight
from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway.pool import (
    DRAINING,
    PoolError,
    brief,
    drain_timeout_message,
    engine_in_flight,
    find,
    healthy_after,
    leave_refusal,
    normalize_url,
    serving,
    summary,
)

POLL_S = 0.25


def wait_for(client: GatewayClient, url: str, done: Any, timeout: float) -> Dict[str, Any]:
    """Poll the pool until ``done(entry)`` holds or ``timeout`` passes; the last entry, time waited and figures."""
    start = time.monotonic()
    engine_max = 0
    while True:
        entry = find(client.workers(), url)
        figure = engine_in_flight(entry) if entry else None
        engine_max = max(engine_max, figure or 0)
        waited = time.monotonic() - start
        if done(entry):
            return {"entry": entry, "ok": True, "waited_s": waited, "engine_max": engine_max}
        if waited >= timeout:
            return {"entry": entry, "ok": False, "waited_s": waited, "engine_max": engine_max}
        time.sleep(POLL_S)


def result(client: GatewayClient, url: Optional[str], before: Optional[Dict[str, Any]], leaving: List[str],
           min_healthy: int, **extra: Any) -> Dict[str, Any]:
    """The module's answer from a fresh read of the pool."""
    workers = client.workers()
    out = {"pool": [brief(w) for w in workers], "summary": summary(workers),
           "healthy_after": healthy_after(workers, leaving + ([url] if url else [])),
           "refusal": leave_refusal(workers, leaving + ([url] if url else []), min_healthy) or ""}
    if url:
        entry = find(workers, url)
        out.update(worker=brief(entry) if entry else None, before=brief(before) if before else None)
    out.update(extra)
    return out


def run(module: AnsibleModule, client: GatewayClient) -> None:
    """Do what ``state`` asks; every failure names the worker and the gateway."""
    params = module.params
    state = params["state"]
    leaving = [normalize_url(u) for u in params["leaving"]]
    url = normalize_url(params["url"]) if params["url"] else None
    workers = client.workers()
    before = find(workers, url) if url else None
    min_healthy = params["min_healthy"]
    if state == "listed":
        module.exit_json(changed=False, waited_s=0.0, **result(client, url, before, leaving, min_healthy))

    if state == "present":
        if before is not None and before.get("status") == DRAINING:
            # a drain of the same URL still running: it must end before the worker can be added again
            if module.check_mode:
                module.exit_json(changed=True, waited_s=0.0, **result(client, url, before, leaving, min_healthy))
            gone = wait_for(client, url, lambda e: e is None, params["drain_timeout"])
            if not gone["ok"]:
                module.fail_json(msg=drain_timeout_message(url, gone["entry"], gone["waited_s"]))
            before = None
        changed = before is None
        added_id = None
        if changed and not module.check_mode:
            answer = client.add(url, params["worker_api_key"], params["priority"])
            added_id = None if answer.get("conflict") else answer.get("worker_id")
        if module.check_mode:
            module.exit_json(changed=changed, waited_s=0.0, **result(client, url, before, leaving, min_healthy))
        ready = wait_for(client, url, lambda e: e is not None and serving(e), params["register_timeout"])
        if not ready["ok"]:
            entry = ready["entry"]
            stale = added_id or (entry.get("id") if changed and entry else None)
            if stale:
                client.remove(stale)  # a worker that does not serve is not left in the pool it never joined
            module.fail_json(msg="worker %s is not serving in the gateway's pool %.0f s after its registration: %s. "
                                 "Check that the gateway host reaches it and that its /health answers 200"
                             % (url, ready["waited_s"], "not listed" if entry is None else
                                "status %s, healthy %s" % (entry.get("status"), bool(entry.get("is_healthy")))),
                             changed=changed, **result(client, url, before, leaving, min_healthy))
        module.exit_json(changed=changed, waited_s=round(ready["waited_s"], 2),
                         **result(client, url, before, leaving, min_healthy))

    # drained / absent: the worker leaves the pool
    if before is None:
        module.exit_json(changed=False, waited_s=0.0,
                         **result(client, url, before, leaving, min_healthy,
                                  **({"drain": {"waited_s": 0.0, "in_flight_at_start": 0, "engine_in_flight_max": 0}}
                                     if state == "drained" else {})))
    if before.get("status") != DRAINING:
        refusal = leave_refusal(workers, leaving + [url], min_healthy)
        if refusal:
            module.fail_json(msg=refusal, changed=False, **result(client, url, before, leaving, min_healthy))
    if module.check_mode:
        module.exit_json(changed=True, waited_s=0.0, **result(client, url, before, leaving, min_healthy))
    in_flight_at_start = int(before.get("load") or 0)
    if before.get("status") != DRAINING:
        client.remove(before["id"])
    if state == "absent":
        module.exit_json(changed=True, waited_s=0.0, **result(client, url, before, leaving, min_healthy))
    gone = wait_for(client, url, lambda e: e is None, params["drain_timeout"])
    drain = {"waited_s": round(gone["waited_s"], 2), "in_flight_at_start": in_flight_at_start,
             "engine_in_flight_max": gone["engine_max"], "engine_in_flight_end": None}
    if not gone["ok"]:
        module.fail_json(msg=drain_timeout_message(url, gone["entry"], gone["waited_s"]), changed=True, drain=drain)
    # smg drops the worker after a fixed settle time; requests it had already sent may still run on the worker.
    # Its own figures (its /metrics) say when they are done; without metrics SGLang's SIGTERM drain finishes them.
    start = time.monotonic()
    left = worker_in_flight(url)
    while left and gone["waited_s"] + (time.monotonic() - start) < params["drain_timeout"]:
        drain["engine_in_flight_max"] = max(drain["engine_in_flight_max"], left)
        time.sleep(POLL_S)
        left = worker_in_flight(url)
    drain["engine_in_flight_end"] = left
    drain["waited_s"] = round(gone["waited_s"] + time.monotonic() - start, 2)
    if left:
        module.fail_json(msg="worker %s left the gateway's pool but still runs %d request(s) after %.0f s (its /metrics); "
                             "raise drain_timeout for longer requests" % (url, left, drain["waited_s"]),
                         changed=True, drain=drain)
    module.exit_json(changed=True, waited_s=drain["waited_s"],
                     **result(client, url, before, leaving, min_healthy, drain=drain))


def main() -> None:
    """Entry point."""
    module = AnsibleModule(
        argument_spec=dict(
            gateway_url=dict(type="str", required=True),
            gateway_api_key=dict(type="str", no_log=True),
            url=dict(type="str"),
            worker_api_key=dict(type="str", no_log=True),
            state=dict(type="str", default="present", choices=["present", "drained", "absent", "listed"]),
            leaving=dict(type="list", elements="str", default=[]),
            min_healthy=dict(type="int", default=1),
            register_timeout=dict(type="float", default=120),
            drain_timeout=dict(type="float", default=300),
            priority=dict(type="int"),
            timeout=dict(type="float", default=10),
        ),
        required_if=[("state", "present", ["url"]), ("state", "drained", ["url"]), ("state", "absent", ["url"])],
        supports_check_mode=True,
    )
    try:
        client = GatewayClient(module.params["gateway_url"], module.params["gateway_api_key"], module.params["timeout"])
        run(module, client)
    except PoolError as err:
        module.fail_json(msg="gateway_url/url/leaving: %s" % err)
    except GatewayError as err:
        module.fail_json(msg=str(err))


if __name__ == "__main__":
    main()
