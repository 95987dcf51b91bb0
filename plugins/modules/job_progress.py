#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_progress: one progress reading of a background (async) task, for a play to print."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: job_progress
short_description: Wait a few seconds on a background task and report the newest line of what it writes
version_added: 0.1.0
description:
  - >-
    Waits up to O(wait) seconds for the C(async) job whose C(results_file) is given to end, then returns one line
    (RV(line)) - the time since the job started and the newest line of its log file (O(log)) or of a systemd
    unit's journal (O(journal_unit)), such as C(2 min 10 s: Downloading torch-2.9.1-cp311-...whl (899.7 MB)).
  - Why this exists, a pip install of a release, the launch of a large model and a probe sweep each take minutes,
    and Ansible shows nothing while an C(async) job runs. Looping this module with C(loop_control.label) set to
    RV(line) and C(break_when) on RV(finished) prints one line per wait; C(ansible.builtin.async_status) then
    collects the job's result.
  - Read-only.
author:
  - gpufleet maintainers (@gpufleet)
options:
  results_file:
    description: The C(results_file) of the C(async) job (registered from the task started with C(poll=0)).
    type: path
    required: true
  wait:
    description: Seconds to wait for the job to end before reporting.
    type: float
    default: 10.0
  log:
    description: A file the job writes as it goes (for example pip's C(--log)); its newest matching line is shown.
    type: path
  journal_unit:
    description: A systemd unit whose newest matching journal line since the job started is shown (the server).
    type: str
  match:
    description: A regular expression; only lines it matches count, shown from where it matched. Empty takes any line.
    type: str
    default: ""
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.sglang.read_only
seealso:
  - module: ansible.builtin.async_status
  - module: gpufleet.sglang.model_cache_progress
"""

EXAMPLES = r"""
- name: Install in the background
  ansible.builtin.pip:
    name: sglang==0.5.23
    virtualenv: /opt/sglang/venvs/0.5.23
    extra_args: --log /opt/sglang/venvs/0.5.23.pip.log
  async: 3600
  poll: 0
  register: job

- name: Follow the install
  gpufleet.sglang.job_progress:
    results_file: "{{ job.results_file }}"
    log: /opt/sglang/venvs/0.5.23.pip.log
    match: (Collecting|Downloading|Installing|Successfully)
  register: watch
  loop: "{{ range(0, 400) | list }}"
  loop_control:
    label: "{{ watch.line | default('starting') }}"
    break_when: watch.finished | default(false)
"""

RETURN = r"""
line:
  description: One line for a person.
  returned: always
  type: str
  sample: "2 min 10 s: Downloading torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl (899.7 MB)"
finished:
  description: Whether the job ended (its result is in the results file).
  returned: always
  type: bool
failed_job:
  description: Whether it ended badly (C(ansible.builtin.async_status) has the details).
  returned: always
  type: bool
elapsed_s:
  description: Seconds since the job started (0 once it ended).
  returned: always
  type: float
"""

import os
import time
from typing import Any, Dict, Optional

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.jobs.progress import job_ended, newest_line, progress_line


def read(path: Optional[str]) -> str:
    """A file's text, or nothing while it does not exist."""
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def journal_text(module: AnsibleModule, unit: str, since: float) -> str:
    """The unit's journal lines since the job started (the last 50)."""
    journalctl = module.get_bin_path("journalctl")
    if not journalctl:
        return ""
    _rc, out, _err = module.run_command([journalctl, "-u", unit, "-o", "cat", "--no-pager", "-n", "50",
                                         "--since", "@%d" % int(since)])
    return out


def main() -> None:
    """Entry point."""
    module = AnsibleModule(
        argument_spec=dict(results_file=dict(type="path", required=True), wait=dict(type="float", default=10.0),
                           log=dict(type="path"), journal_unit=dict(type="str"), match=dict(type="str", default="")),
        supports_check_mode=True,
    )
    params = module.params
    start = time.time()
    ended: Optional[Dict[str, Any]] = job_ended(read(params["results_file"]))
    while ended is None and time.time() - start < max(0.0, params["wait"]):
        time.sleep(0.5)
        ended = job_ended(read(params["results_file"]))
    try:  # async_wrapper writes the file when the job starts and again when it ends
        started_at = os.stat(params["results_file"]).st_mtime if ended is None else start
    except OSError:
        started_at = start
    text = read(params["log"])
    if params["journal_unit"]:
        text = journal_text(module, params["journal_unit"], started_at)
    line = newest_line(text, params["match"])
    elapsed = max(0.0, time.time() - started_at) if ended is None else 0.0
    module.exit_json(changed=False, line=progress_line(elapsed, line, ended), finished=ended is not None,
                     failed_job=bool(ended and ended.get("failed")), elapsed_s=round(elapsed, 1))


if __name__ == "__main__":
    main()
