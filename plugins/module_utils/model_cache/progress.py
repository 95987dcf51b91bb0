# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How far a download is: the progress lines the hub helper writes, read back and put in words.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.space import human_bytes


# ---------------------------------------------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------------------------------------------

def parse_progress(text: str) -> Dict[str, Any]:
    """Fold a progress file (JSON lines: start, progress..., done or error) into its latest state.

    Lines that are not JSON (a crash's traceback, a half-written last line) are skipped, so a reader never
    fails on a file that is being written.
    """
    state: Dict[str, Any] = {"event": None, "started": False, "finished": False, "failed": False}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        event = record.get("event")
        if event == "start":
            state = {"event": "start", "started": True, "finished": False, "failed": False}
        state.update({k: v for k, v in record.items() if k != "event"})
        state["event"] = event
        if event in ("done", "error"):
            state["finished"] = True
            state["failed"] = event == "error"
    return state


def _duration(seconds: Optional[float]) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(seconds)
    if seconds < 90:
        return "%d s" % seconds
    if seconds < 5400:
        return "%d min" % round(seconds / 60.0)
    return "%.1f h" % (seconds / 3600.0)


def format_progress(state: Mapping[str, Any]) -> str:
    """The line a person reads every few seconds during a long download."""
    if not state.get("started"):
        return "waiting for the download to start"
    done, total = int(state.get("bytes_done") or 0), int(state.get("bytes_total") or 0)
    percent = (" (%d%%)" % int(done * 100 / total)) if total else ""
    files = "%s/%s files" % (state.get("files_done", 0), state.get("files_total", "?"))
    if state.get("event") == "error":
        return "download failed after %s, %s, %s of %s: %s" % (
            _duration(state.get("elapsed_s")), files, human_bytes(done), human_bytes(total),
            state.get("error", "see the job result"))
    if state.get("event") == "done":
        return "download complete: %s, %s in %s" % (files, human_bytes(done), _duration(state.get("elapsed_s")))
    rate = int(state.get("rate_bps") or 0)
    return "%s, %s of %s%s, %s/s, %s left" % (files, human_bytes(done), human_bytes(total), percent,
                                              human_bytes(rate), _duration(state.get("eta_s")))
