#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""converged_state: would the deploy chain change anything on this host? One module call instead of the chain."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: converged_state
short_description: Record the state a good deploy left on a host, and tell in one call whether it still holds
version_added: 0.1.0
description:
  - With O(action=record) (after a deploy chain that ended well), observes O(items) (files, folders, package
    listings, read-only commands, systemd units and their files, readiness URLs) and writes them with
    O(fingerprint) (the run's inputs, computed on the controller) and O(outputs) (the facts the chain set) to
    O(path), readable by root only.
  - With O(action=check), observes the items of that record again. RV(converged) is true only when the record's
    fingerprint equals O(fingerprint), every item looks as recorded, every unit is active (no daemon-reload
    pending) and every readiness URL answers 200 now. Otherwise RV(drift) says why, and with O(invalidate) the
    record is removed (not in check mode), so a chain that then fails half-way cannot leave a stale record.
  - With O(host_fingerprint), the check also tells whether the host phases of the chain (driver, tuning, SGLang
    install, weights) would change anything - RV(host_converged) - from the part of the record that says which
    items those phases left (O(host_items) when it was written). A run that changes only the server's launch
    arguments then runs only the server phase.
  - Why this exists, on a converged host each task of the chain is one SSH round trip that confirms one thing
    is still right; this confirms all of them at once, and the chain runs in full when anything differs.
  - The record is a cache of the controller's own knowledge, not configuration of the host - writing or removing
    it is never reported as a change.
author:
  - gpufleet maintainers (@gpufleet)
options:
  action:
    description: V(check) compares the host with its record; V(record) writes the record.
    type: str
    choices: [check, record]
    default: check
  path:
    description: The record's file on the host.
    type: path
    default: /var/lib/gpufleet-sglang/converged.json
  fingerprint:
    description: Digest of the run's inputs (variables and the collection's code), made on the controller.
    type: str
    required: true
  items:
    description:
      - What to observe (O(action=record) only), a list of dicts of lists (one per role, merged without repeats);
        the check observes the record's own items.
      - C(paths) (type, mode, owner, group, a file's sha256), C(trees) (every file below a folder with its size,
        mode and owner), C(listings) (glob patterns of folders whose entry names count, such as a venv's
        site-packages), C(commands) (argv lists of read-only commands whose exit status and output count; a
        first word C(sorted) sorts the output's lines), C(units) (systemd units - their state and the files they run
        with), C(http) (dicts with C(url), or C(unit) and C(port) and C(path), and C(timeout) - it must answer 200; with
        C(unit), the host is the one the unit's C(--config) file names, loopback for a wildcard or none).
    type: list
    elements: dict
    default: []
  outputs:
    description: The facts the chain set (O(action=record) only), handed back by a check that finds the host converged.
    type: dict
    default: {}
  host_fingerprint:
    description:
      - Digest of the inputs of the host phases only (filter C(gpufleet.sglang.converged_fingerprint) with
        C(part=host)). Empty - the record has no host part, and a check does not look at one.
    type: str
    default: ""
  host_items:
    description:
      - With O(action=record), which of O(items) the host phases left (the same form as O(items)); only paths, trees,
        listings and commands count, the server's units and readiness URLs never do.
    type: list
    elements: dict
    default: []
  invalidate:
    description: With O(action=check), remove the record when the host is not converged (never in check mode).
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: O(action=check) reads only and removes nothing; O(action=record) writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
notes:
  - Read-only for the host's configuration; the only file it writes or removes is its own record.
seealso:
  - module: gpufleet.sglang.sglang_launch
    description: What a converged run's launch would confirm (the unit active and ready on unchanged files).
"""

EXAMPLES = r"""
- name: Would the chain change anything here?
  gpufleet.sglang.converged_state:
    fingerprint: "{{ hostvars[inventory_hostname] | gpufleet.sglang.converged_fingerprint }}"
  register: converged

- name: Remember the state after a good run
  gpufleet.sglang.converged_state:
    action: record
    fingerprint: "{{ fingerprint }}"
    items:
      - paths: [/etc/sglang/gpu-tuning.env]
        commands: [[sorted, dpkg-query, -W, "-f=${db:Status-Abbrev} ${Package} ${Version}\n"]]
      - units: [sglang-main.service]
        http: [{unit: sglang-main.service, port: 30000, path: /ready, timeout: 2}]
    outputs:
      gpu_tuning_env: "{{ gpu_tuning_env }}"
"""

RETURN = r"""
converged:
  description: Whether the record's inputs and every recorded item still hold (O(action=check)).
  returned: always
  type: bool
drift:
  description: Why not converged, one line per reason (new inputs, an item that changed, a unit not active).
  returned: always
  type: list
  elements: str
outputs:
  description: The recorded outputs when converged or RV(host_converged), else an empty dict.
  returned: always
  type: dict
host_converged:
  description:
    - Whether the host phases' inputs (O(host_fingerprint)) and every item they left still hold (O(action=check)).
      True whenever RV(converged) is.
  returned: always
  type: bool
host_drift:
  description: Why the host phases are not converged, one line per reason; empty when they are.
  returned: always
  type: list
  elements: str
items_checked:
  description: How many items were observed.
  returned: always
  type: int
written:
  description: Whether the record was written (O(action=record); not in check mode, not while a unit is down).
  returned: always
  type: bool
"""

import os
import urllib.error
import urllib.request
from typing import Optional

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.converged.state import (
    KINDS, compare, compare_host, item_keys, load_record, make_record, merge_items, observe, problems_now, save_record)


def http_status(url: str, timeout: float) -> Optional[int]:
    """The HTTP status of a GET, None when nothing answers (no proxy: the URL is the host's own)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code
    except (OSError, ValueError):
        return None


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "action": {"type": "str", "choices": ["check", "record"], "default": "check"},
            "path": {"type": "path", "default": "/var/lib/gpufleet-sglang/converged.json"},
            "fingerprint": {"type": "str", "required": True},
            "items": {"type": "list", "elements": "dict", "default": []},
            "outputs": {"type": "dict", "default": {}},
            "invalidate": {"type": "bool", "default": True},
            "host_fingerprint": {"type": "str", "default": ""},
            "host_items": {"type": "list", "elements": "dict", "default": []},
        },
        supports_check_mode=True,
    )
    params = module.params

    def run(argv):
        return module.run_command(argv, environ_update={"LC_ALL": "C"})

    result = {"changed": False, "converged": False, "drift": [], "outputs": {}, "items_checked": 0, "written": False,
              "host_converged": False, "host_drift": []}
    if params["action"] == "record":
        items = merge_items(*params["items"])
        unknown = sorted(set(k for group in params["items"] + params["host_items"] for k in group) - set(KINDS))
        if unknown:
            module.fail_json(msg="converged_state: unknown item kinds %s (known: %s)" % (", ".join(unknown), ", ".join(KINDS)))
        stray = sorted(set(item_keys(merge_items(*params["host_items"]))) - set(item_keys(items)))
        if stray:
            module.fail_json(msg="converged_state: host_items must be among items; not there: %s" % ", ".join(stray))
        seen = observe(items, run, http_status)
        result["items_checked"] = sum(len(v) for v in seen.values())
        result["drift"] = problems_now(seen)
        if not result["drift"] and not module.check_mode:
            save_record(params["path"], make_record(params["fingerprint"], items, seen, params["outputs"],
                                                    params["host_fingerprint"], merge_items(*params["host_items"])))
            result["written"] = True
        module.exit_json(**result)

    record = load_record(params["path"])
    items = merge_items((record or {}).get("items"))
    seen = observe(items, run, http_status)
    result["items_checked"] = sum(len(v) for v in seen.values())
    result["drift"] = compare(record, params["fingerprint"], seen)
    result["converged"] = not result["drift"]
    if params["host_fingerprint"] and not result["converged"]:
        result["host_drift"] = compare_host(record, params["host_fingerprint"], seen)
    result["host_converged"] = result["converged"] or (bool(params["host_fingerprint"]) and not result["host_drift"])
    if result["host_converged"]:
        result["outputs"] = record.get("outputs") or {}
    if not result["converged"] and record is not None and params["invalidate"] and not module.check_mode:
        try:
            os.unlink(params["path"])
        except FileNotFoundError:
            pass
    module.exit_json(**result)


if __name__ == "__main__":
    main()
