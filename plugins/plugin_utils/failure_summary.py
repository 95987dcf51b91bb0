# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What went wrong, from a failed task's result (``ansible_failed_result``), read the same way by every play.

Why one function: ``rollout.yml`` (a host's report) and ``tune.yml`` (a candidate's verdict) each picked the
launch's diagnosis out of the failed result in Jinja, with different keys and different fallbacks, so the same
crash could read differently in the two reports. Both now take this summary and keep only what they write.

A failed result is one of three things:

- ``refused``: the preflight refused the arguments (the result has ``findings``); nothing reached the host;
- ``gate_failed``: the server came up but missed the probe gate (the launch's cause ``probe_gate_failed``);
- ``crashed``: anything else - a launch that did not reach ready, or a task that failed without a diagnosis
  (then the cause is ``unknown`` and the task's message is the hint).

Runs on the controller (filter ``gpufleet.sglang.failure_summary``); standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List

# The parts of sglang_launch's ``failure`` an operator reads (not the unit state, phases or fatal line).
DIAGNOSIS_KEYS = ("cause", "reason", "hint", "phase", "error_message", "traceback", "last_lines")
GATE_CAUSE = "probe_gate_failed"
UNKNOWN_CAUSE = "unknown"


def diagnosis(result: Mapping) -> Dict[str, Any]:
    """The launch's own diagnosis, the DIAGNOSIS_KEYS it gave, as it gave them; {} when the task had none."""
    failure = result.get("failure")
    if not isinstance(failure, Mapping):
        return {}
    return {key: failure[key] for key in DIAGNOSIS_KEYS if key in failure}


def error_findings(result: Mapping) -> List[Any]:
    """The preflight findings that refused the arguments (severity ``error``); its message when it listed none."""
    findings = result.get("findings")
    errors = [item for item in findings if isinstance(item, Mapping) and item.get("severity") == "error"] if isinstance(findings, list) else []
    return errors or [result["msg"] if "msg" in result else "refused"]


def failure_status(result: Mapping) -> str:
    """``refused``, ``gate_failed`` or ``crashed`` (see the module's docstring)."""
    if "findings" in result:
        return "refused"
    return "gate_failed" if diagnosis(result).get("cause") == GATE_CAUSE else "crashed"


def failure_summary(result: Any) -> Dict[str, Any]:
    """The summary of a failed task's result.

    Keys: ``status``; ``message`` (the task's msg, None when it gave none); ``findings`` (refused only, else []);
    ``cause``, ``reason``, ``hint``, ``phase``, ``error_message``, ``traceback``, ``last_lines`` (the diagnosis,
    None where it says nothing; without a diagnosis the cause is ``unknown`` and the hint is the message);
    ``diagnosis`` (those keys as the launch gave them, {} without one); ``rolled_back`` (bool) and
    ``rollback_ready`` (whether the rolled-back server is ready again; None when nothing was rolled back).
    """
    result = result if isinstance(result, Mapping) else {}
    status = failure_status(result)
    message = result.get("msg")
    found = diagnosis(result)
    summary: Dict[str, Any] = {"status": status, "message": message,
                               "findings": error_findings(result) if status == "refused" else []}
    for key in DIAGNOSIS_KEYS:
        summary[key] = found.get(key)
    if not found:
        summary.update(cause=UNKNOWN_CAUSE, hint=message)
    elif summary["cause"] is None:
        summary["cause"] = UNKNOWN_CAUSE
    summary.update(diagnosis=found, rolled_back=bool(result.get("rolled_back", False)), rollback_ready=result.get("rollback_ready"))
    return summary
