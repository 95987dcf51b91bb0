#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache_progress: one progress reading of a background model download, for a play to print."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: model_cache_progress
short_description: Wait a few seconds on a background model download and report how far it is
version_added: 0.1.0
description:
  - Reads the JSON-lines progress file that P(gpufleet.sglang.model_cache_hub#module) writes while it downloads
    (run with C(async) and C(poll=0)), waits up to O(wait) seconds for the download to end, and returns the
    latest state with a one-line summary (RV(line)) such as
    C(3/10 files, 12.1 GB of 55.0 GB (22%), 96.0 MB/s, 8 min left).
  - Why this exists, a 55 GB download takes many minutes, and Ansible shows nothing while an C(async) job runs. Looping this
    module with C(loop_control.label) set to RV(line) and C(break_when) on RV(finished) prints one line per wait.
  - Ends early when the download ends (C(done) or C(error) line) or when the process that wrote the C(start)
    line is gone without either (killed by the C(async) timeout, the host out of memory).
  - Read-only.
author:
  - gpufleet maintainers (@gpufleet)
options:
  path:
    description: The progress file.
    type: path
    required: true
  wait:
    description: Seconds to wait for the download to end before reporting.
    type: float
    default: 10.0
  run_id:
    description: Only lines with this run id count (an older file's lines are ignored). Empty accepts any.
    type: str
    default: ""
  results_file:
    description:
      - The C(results_file) of the C(async) job that runs the download. When the job has ended (the file holds its
        result) the download counts as finished even if it never wrote a progress line (bad arguments, a crash at
        start), so the loop never waits for nothing.
    type: path
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.sglang.read_only
seealso:
  - module: gpufleet.sglang.model_cache_hub
"""

EXAMPLES = r"""
- name: Follow the download
  gpufleet.sglang.model_cache_progress:
    path: /var/lib/sglang/models/.model_cache/progress/models--Qwen--Qwen3-0.6B.jsonl
    wait: 10
    results_file: "{{ job.results_file }}"
  register: watch
  # one pass per 10 s wait, for up to an hour, and out of the loop as soon as the job has ended
  loop: "{{ range(0, 3600 // 10 + 2) | list }}"
  loop_control:
    label: "Qwen/Qwen3-0.6B: {{ watch.line | default('starting') }}"
    break_when:
      - watch.finished | default(false)
"""

RETURN = r"""
line:
  description: The download's progress in one line for a person (files, bytes, rate, time left).
  returned: always
  type: str
  sample: "3/10 files, 12.1 GB of 55.0 GB (22%), 96.0 MB/s, 8 min left"
started:
  description: Whether this run's start line is in the file.
  returned: always
  type: bool
finished:
  description: Whether the download ended (done, error, or its process is gone).
  returned: always
  type: bool
failed_download:
  description: Whether it ended badly (the job result from async_status has the details).
  returned: always
  type: bool
bytes_done:
  description: Bytes on disk so far.
  returned: always
  type: int
bytes_total:
  description: Bytes of the whole revision.
  returned: always
  type: int
files_done:
  description: Files complete so far.
  returned: always
  type: int
files_total:
  description: Files of the revision.
  returned: always
  type: int
waited_s:
  description: Seconds this call waited.
  returned: always
  type: float
"""

import json
import os
import time
from typing import Any, Dict, Optional

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.progress import format_progress, parse_progress


def read_state(path: str, run_id: str) -> Dict[str, Any]:
    """The latest state of this run, from the file (an absent file, or another run's, reads as not started)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        text = ""
    state = parse_progress(text)
    if run_id and state.get("run_id") != run_id:
        return parse_progress("")
    return state


def process_alive(pid: Any) -> bool:
    """Whether a process with this id still exists (signal 0 probes without touching it)."""
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError, TypeError) as exc:
        return isinstance(exc, PermissionError)
    return True


def job_result(results_file: Optional[str]) -> Optional[Dict[str, Any]]:
    """The async job's final result, or None while it runs (async_wrapper first writes {"started": true, ...})."""
    if not results_file:
        return None
    try:
        with open(results_file, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or (data.get("started") and not data.get("finished")):
        return None
    return data


def watch(path: str, wait: float, run_id: str, results_file: Optional[str] = None, clock: Any = time) -> Dict[str, Any]:
    """Poll the file twice a second until the download ends or ``wait`` seconds pass; the state then."""
    start = clock.time()
    while True:
        state = read_state(path, run_id)
        if state["started"] and not state["finished"] and state.get("pid") and not process_alive(state["pid"]):
            state.update(finished=True, failed=True, event="error",
                         error="the download process (pid %s) ended without a result; see the async job's result"
                         % state["pid"])
        ended = job_result(results_file) if not state["finished"] else None
        if ended is not None:
            # Read the file once more: the job may have written its last line between the two reads.
            state = read_state(path, run_id)
            if not state["finished"]:
                state.update(started=True, finished=True, failed=bool(ended.get("failed")),
                             event="error" if ended.get("failed") else "done",
                             error=str(ended.get("msg", "the job ended without a progress line"))[:300])
        if state["finished"] or clock.time() - start >= wait:
            break
        clock.sleep(0.5)
    return {"line": format_progress(state), "started": bool(state["started"]), "finished": bool(state["finished"]),
            "failed_download": bool(state["failed"]), "bytes_done": int(state.get("bytes_done") or 0),
            "bytes_total": int(state.get("bytes_total") or 0), "files_done": int(state.get("files_done") or 0),
            "files_total": int(state.get("files_total") or 0), "waited_s": round(clock.time() - start, 1)}


def main() -> None:
    """Entry point."""
    module = AnsibleModule(
        argument_spec=dict(path=dict(type="path", required=True), wait=dict(type="float", default=10.0),
                           run_id=dict(type="str", default=""), results_file=dict(type="path")),
        supports_check_mode=True,
    )
    result = watch(module.params["path"], max(0.0, module.params["wait"]), module.params["run_id"],
                   module.params["results_file"])
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
