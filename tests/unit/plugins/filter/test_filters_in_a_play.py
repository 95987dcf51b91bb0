# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The new filters as Ansible calls them: the sglang_server role fails on bad instance settings with one message
per line before any other task, a failed task's summary in a rescue, and the argument merge with the model_cache
variables undefined.

Runs ansible-playbook on localhost in check mode; the role stops at its settings check, so nothing on this
machine is touched (the results are written into the test's own folder).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")

PLAY = """
- name: The new filters as Ansible calls them
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: The role with instance settings that break three rules
      block:
        - name: Include the role
          ansible.builtin.include_role:
            name: gpufleet.sglang.sglang_server
          vars:
            sglang_server_instances:
              - {name: Main, args: {}}
              - {name: b, args: {port: 30000}}
              - {name: c, args: {}, env: {BAD-KEY: "1"}}
      rescue:
        - name: Keep what failed
          ansible.builtin.set_fact:
            role_failed_task: "{{ ansible_failed_task.name }}"
            role_message: "{{ ansible_failed_result.msg }}"

    - name: A task that fails without a diagnosis
      block:
        - name: Fail
          ansible.builtin.fail:
            msg: boom
      rescue:
        - name: Summarise it
          ansible.builtin.set_fact:
            plain_failure: "{{ ansible_failed_result | gpufleet.sglang.failure_summary }}"

    - name: Merge arguments without the model_cache and tuning facts
      ansible.builtin.set_fact:
        merged: >-
          {{ {'host': '127.0.0.1', 'port': 30000}
             | gpufleet.sglang.server_args_merge(tuning_args=gpu_tuning_server_args | default({}),
                                                 instance_args={'tp_size': 2}, extra_args={},
                                                 model_path=model_cache_model_path | default(none),
                                                 served_model_name=model_cache_served_model_name | default(none)) }}
        facts: "{{ gpu_tuning_gpu_facts | default(none) | gpufleet.sglang.preflight_facts('sglang') }}"
        venv: "{{ '/opt/sglang' | gpufleet.sglang.sglang_venv('standin', '0.5.23') }}"

    - name: Write what the play saw
      ansible.builtin.copy:
        content: "{{ {'role_failed_task': role_failed_task, 'role_message': role_message, 'plain_failure': plain_failure,
                      'merged': merged, 'facts': facts, 'venv': venv} | to_json }}"
        dest: "{{ out }}"
        mode: "0644"
      check_mode: false
"""


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")
def test_filters_in_a_play(tmp_path, ansible_env):
    play = tmp_path / "play.yml"
    play.write_text(textwrap.dedent(PLAY).lstrip(), encoding="utf-8")
    out = tmp_path / "out.json"
    run = subprocess.run([PLAYBOOK, "-i", "localhost,", str(play), "--check", "-e", "out=%s" % out], cwd=tmp_path, env=ansible_env,
                         capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen["role_failed_task"] == "Check the server settings before anything on the host changes"
    assert seen["role_message"].splitlines() == [
        "sglang_server_instances[0].name: 'Main' is not a usable instance name; use 1 to 32 of a-z, 0-9, '_' and '-', starting "
        "with a letter or a digit (it names the unit sglang-<name>.service and the instance's files).",
        "sglang_server_instances[1].args.port: 30000 is already the port of sglang_server_instances[0]; give each instance its own "
        "port in its args.",
        "sglang_server_instances[2].args.port: 30000 (not set, so the default 30000) is already the port of "
        "sglang_server_instances[0]; give each instance its own port in its args.",
        "sglang_server_instances[2].env: 'BAD-KEY' is not a shell-style variable name (letters, digits and '_', not starting "
        "with a digit); rename or remove it."]
    assert seen["plain_failure"] == {
        "status": "crashed", "message": "boom", "findings": [], "cause": "unknown", "reason": None, "hint": "boom", "phase": None,
        "error_message": None, "traceback": None, "last_lines": None, "diagnosis": {}, "rolled_back": False, "rollback_ready": None}
    assert seen["merged"] == {"host": "127.0.0.1", "port": 30000, "tp_size": 2}
    assert seen["facts"] == {"service_user": "sglang"}
    assert seen["venv"] == "/opt/sglang/venvs/standin-0.5.23"
