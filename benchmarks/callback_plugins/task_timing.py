# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-task timings of one ansible-playbook run, written as JSON for benchmarks/converged_run.py.

A notification callback (the stdout callback keeps printing as usual). It records, for every task the play
starts, its wall time (from its start to the start of the next task, so the slowest host of a parallel batch is
what counts), its role, and how each host's result ended (ok, changed, skipped, failed). A task that reaches a
host at all is one module run there: for a converged run the count of non-skipped host results is the count of
SSH round trips the run paid. The file goes to $GPUFLEET_TASK_TIMING_FILE when the playbook ends.
"""
from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_timing
type: aggregate
short_description: per-task wall times and results as JSON (benchmarks only)
description:
  - Writes the tasks of a run with their wall time, role and per-host results to $GPUFLEET_TASK_TIMING_FILE.
"""


class CallbackModule(CallbackBase):
    """Collects task starts and host results; writes them all once at the end of the playbook."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_timing"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self._tasks: list = []
        self._open: dict | None = None
        self._started = time.monotonic()
        self._seen_uuids: set = set()
        self._batch = 0

    def _close(self) -> None:
        if self._open is not None:
            self._open["wall_s"] = round(time.monotonic() - self._open.pop("_t0"), 3)
            self._tasks.append(self._open)
            self._open = None

    def _start(self, task, handler: bool) -> None:
        self._close()
        uuid = getattr(task, "_uuid", None)
        # serial: each batch runs the play's tasks again; a task seen before starts the next batch
        if uuid in self._seen_uuids and not handler:
            self._batch += 1
            self._seen_uuids = set()
        self._seen_uuids.add(uuid)
        role = getattr(task, "_role", None)
        self._open = {"name": task.get_name().strip(), "role": role.get_name() if role else "",
                      "action": task.action, "batch": self._batch, "handler": handler,
                      "at_s": round(time.monotonic() - self._started, 3), "_t0": time.monotonic(),
                      "hosts": {}}

    def v2_playbook_on_play_start(self, play) -> None:
        self._close()

    def v2_playbook_on_task_start(self, task, is_conditional) -> None:
        self._start(task, handler=False)

    def v2_playbook_on_handler_task_start(self, task) -> None:
        self._start(task, handler=True)

    def _record(self, result, status: str) -> None:
        if self._open is None:
            return
        if status == "ok" and result._result.get("changed", False):
            status = "changed"
        self._open["hosts"][result._host.get_name()] = status

    def v2_runner_on_ok(self, result) -> None:
        self._record(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False) -> None:
        self._record(result, "failed")

    def v2_runner_on_skipped(self, result) -> None:
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result) -> None:
        self._record(result, "unreachable")

    def v2_playbook_on_stats(self, stats) -> None:
        self._close()
        path = os.environ.get("GPUFLEET_TASK_TIMING_FILE")
        if not path:
            return
        hosts = sorted(stats.processed.keys())
        summary = {host: stats.summarize(host) for host in hosts}
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"wall_s": round(time.monotonic() - self._started, 3), "tasks": self._tasks,
                       "stats": summary}, handle, indent=1)
