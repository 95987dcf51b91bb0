# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How far a background (async) task is: whether its job ended, and the newest line of what it writes.

Ansible shows nothing while an ``async`` task runs. The pip install of a release, the launch wait and the probe
can each take minutes, so the roles start them with ``async``/``poll: 0`` and loop a short wait that reports one
line per turn (module job_progress). Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

# pip's --log lines start with a timestamp; what follows is the step a person wants to see.
LOG_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[,.]\d+\s+")
MAX_LINE = 200


def job_ended(results_text: str) -> Optional[Dict[str, Any]]:
    """The job's final result, or None while it runs.

    async_wrapper first writes ``{"started": 1, "finished": 0, ...}`` and replaces it with the module's result when
    the module ends; a half-written or absent file means it still runs.
    """
    try:
        data = json.loads(results_text)
    except ValueError:
        return None
    if not isinstance(data, dict) or (data.get("started") and not data.get("finished")):
        return None
    return data


def newest_line(text: str, pattern: str = "") -> str:
    """The last non-empty line of ``text`` that matches ``pattern`` (any line when empty), timestamp removed.

    With a pattern, the line is shown from where the pattern matched, so a log's prefixes drop away.
    """
    matcher = re.compile(pattern) if pattern else None
    for line in reversed(text.splitlines()):
        line = LOG_STAMP.sub("", line.strip())
        if not line:
            continue
        if matcher is None:
            return line[:MAX_LINE]
        found = matcher.search(line)
        if found:
            return line[found.start():][:MAX_LINE]
    return ""


def progress_line(elapsed_s: float, line: str, ended: Optional[Dict[str, Any]]) -> str:
    """The one line a loop prints per turn: time so far and the newest step, or that the job ended.

    Once the job ended its start time is gone (async_wrapper rewrote the results file), so no time is shown then.
    """
    if ended is not None:
        return "failed (the task's result says why)" if ended.get("failed") else "done"
    seconds = int(elapsed_s)
    took = "%d s" % seconds if seconds < 120 else "%d min %02d s" % (seconds // 60, seconds % 60)
    return "%s: %s" % (took, line or "running")
