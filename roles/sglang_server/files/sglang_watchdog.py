#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watchdog of one SGLang instance: a zombie server (HTTP up, generation dead) is restarted, with the reason
in the instance's journal.

Run by ``sglang-watchdog@<instance>.timer`` (the sglang_server role; ``sglang_server_watchdog: false`` turns it off).
SGLang can stay up with its scheduler dead (sgl-project/sglang#6624, #18421): ``/ready`` and the port answer,
``/health`` (one real generation) does not. systemd sees a live process and restarts nothing; this does.

Each run asks ``/health`` once. Failures count only for a process that answered healthy since it started (so a
start that is still loading is the launch's or systemd's business, never this one's), and not while a launch holds
the instance's lock. After ``--failures`` failed runs in a row the unit is restarted and the reason written to the
journal for the unit (``journalctl -u sglang-<instance>.service`` shows it). Standard library only.
"""
from __future__ import annotations

import argparse
import fcntl
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from typing import Any, Dict, Optional, Tuple

MANIFEST = "last-good/manifest.json"
LOCK = "launch.lock"
# Its own count lives in /run: runtime state only (a reboot starts every process over anyway), never among the
# launch's records.
RUN_DIR = "/run/gpufleet-sglang-watchdog"


def decide(state: Dict[str, Any], invocation: str, status: Optional[int], failures: int) -> Tuple[Dict[str, Any], bool]:
    """The next state and whether to restart, from the last state, the unit's invocation and /health's answer.

    A new invocation starts over (not yet healthy, no failures). A healthy answer marks it healthy and clears the
    count; a failure counts only once it was healthy, and ``failures`` in a row restart it.
    """
    if state.get("invocation") != invocation:
        state = {"invocation": invocation, "healthy": False, "failed": 0}
    state = dict(state)
    if status == 200:
        state.update(healthy=True, failed=0)
        return state, False
    if not state.get("healthy"):
        return state, False
    state["failed"] = int(state.get("failed", 0)) + 1
    return state, state["failed"] >= failures


def health(host: str, port: int, timeout: float) -> Optional[int]:
    """``/health``'s status, or None when nothing answers in time."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/health")
        response = conn.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def launch_running(state_dir: str) -> bool:
    """Whether a launch holds the instance's lock now (then the launch watches the server, not this)."""
    try:
        with open(os.path.join(state_dir, LOCK), "r", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def unit_props(unit: str) -> Dict[str, str]:
    """ActiveState, InvocationID and MainPID of the unit."""
    out = subprocess.run(["systemctl", "show", "-p", "ActiveState,InvocationID,MainPID", unit], capture_output=True,
                         text=True, check=False).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def journal(message: str, main_pid: str) -> None:
    """Write to the journal as being about the unit's main process (journald files it under the unit), and to stdout."""
    print(message, flush=True)
    fields = "MESSAGE=%s\nPRIORITY=4\nSYSLOG_IDENTIFIER=sglang-watchdog\n" % message.replace("\n", " ")
    if main_pid.isdigit() and main_pid != "0":
        fields += "OBJECT_PID=%s\n" % main_pid
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(fields.encode("utf-8"), "/run/systemd/journal/socket")
    except OSError:
        pass


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--state-dir", required=True, help="the instance's launch state folder")
    parser.add_argument("--failures", type=int, default=3, help="failed runs in a row that restart the unit")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds /health may take")
    parser.add_argument("--run-dir", default=RUN_DIR, help="where the count of failed runs is kept")
    args = parser.parse_args(argv)
    try:
        with open(os.path.join(args.state_dir, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return 0  # nothing ever launched here: nothing to watch
    unit = manifest.get("unit") or ""
    endpoint = manifest.get("endpoint") or {}
    if not unit or launch_running(args.state_dir):
        return 0
    props = unit_props(unit)
    if props.get("ActiveState") != "active":
        return 0  # stopped or failed: systemd's Restart= or the operator decides
    status = health(endpoint.get("host", "127.0.0.1"), int(endpoint.get("port", 30000)), args.timeout)
    os.makedirs(args.run_dir, mode=0o700, exist_ok=True)
    path = os.path.join(args.run_dir, "%s.json" % unit)
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        state = {}
    state, restart = decide(state if isinstance(state, dict) else {}, props.get("InvocationID", ""), status, args.failures)
    if restart:
        journal("sglang watchdog: %s answered /health with %s %d times in a row while its HTTP server is up (a zombie "
                "server: generation dead); restarting %s" % (unit, status if status else "nothing", state["failed"], unit),
                props.get("MainPID", ""))
        state = {"invocation": "", "healthy": False, "failed": 0, "restarted_at": time.time()}
        subprocess.run(["systemctl", "restart", "--no-block", unit], check=False)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
    os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
