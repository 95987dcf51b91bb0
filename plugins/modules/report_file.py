#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report_file: the documentation of an action plugin that writes a report on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: report_file
short_description: Write a report file on the controller, as copy with content would, without a module run
version_added: 0.1.0
description:
  - Writes O(content) to O(dest) on the controller with O(mode) - changed only when the content or the mode
    differs, nothing written in check mode, the before and after content as the diff in diff mode, an atomic
    replace, and a folder that does not exist is an error - as M(ansible.builtin.copy) with O(content) does.
  - Why this exists, rollout.yml writes a report per host and a summary on the controller; through copy each
    is a module run on the local connection, seconds a batch on a loaded controller, while this action writes
    in its own process.
  - Always writes on the controller, whatever the task's host or C(delegate_to).
author:
  - gpufleet maintainers (@gpufleet)
options:
  content:
    description: The text to write (use C(to_nice_json) for data).
    type: str
    required: true
  dest:
    description: The file on the controller; its folder must exist.
    type: path
    required: true
  mode:
    description: The file's mode, in octal.
    type: str
    default: "0644"
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  action:
    description: Indicates this has a corresponding action plugin, so some parts of the work are done on the controller.
    support: full
    details: The whole work is done by the action plugin on the controller; no module runs anywhere.
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
seealso:
  - module: ansible.builtin.copy
"""

EXAMPLES = r"""
- name: Write the host's report
  gpufleet.sglang.report_file:
    content: "{{ result | to_nice_json(sort_keys=true) }}"
    dest: "{{ report_dir }}/{{ inventory_hostname }}.json"
"""

RETURN = r"""
dest:
  description: The file written (or that would be written).
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule


def main() -> None:
    """Only reached when the action plugin is bypassed: there is nothing a target could do for it."""
    module = AnsibleModule(argument_spec={"content": {"type": "str", "required": True},
                                          "dest": {"type": "path", "required": True},
                                          "mode": {"type": "str", "default": "0644"}},
                           supports_check_mode=True)
    module.fail_json(msg="gpufleet.sglang.report_file runs as an action plugin on the controller only")


if __name__ == "__main__":
    main()
