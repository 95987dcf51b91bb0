# -*- coding: utf-8 -*-
"""playbooks/vars/output.yml: summaries read well under both result formats of Ansible's default callback, and the
report root never depends on the shell's folder.

A play reads the vars file as the playbooks do and prints two long lines the way deploy.yml prints its summary.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")
LINES = ["main: SGLang 0.5.23 on port 30000, restarted (changed gpu-tuning.env, main.env, main.yaml, "
         "sglang-main.service), ready in 1.4 s; decode 389.7 tok/s at concurrency 1",
         "| flag | verdict | decode tok/s, batch 1 | gain | noise | why |"]

pytestmark = pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")


def run_play(ansible_env, tmp_path, **env):
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False, "vars_files": [str(ROOT / "playbooks" / "vars" / "output.yml")],
        "tasks": [{"name": "Summary", "ansible.builtin.debug": {"msg": "{{ __gpufleet_sglang_display }}"},
                   "vars": {"__gpufleet_sglang_lines": LINES}},
                  {"name": "Root", "ansible.builtin.debug": {"msg": "root={{ __gpufleet_sglang_report_root }}"}}],
    }], width=1000), encoding="utf-8")
    result = subprocess.run([PLAYBOOK, "-i", "localhost,", "-c", "local", str(play)], cwd="/", env=dict(ansible_env, **env),
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_yaml_output_prints_the_lines_as_one_block(ansible_env, tmp_path):
    out = run_play(ansible_env, tmp_path, ANSIBLE_CALLBACK_RESULT_FORMAT="yaml")
    assert "    msg: |-\n        %s\n        %s\n" % tuple(LINES) in out


def test_json_output_prints_one_line_per_item(ansible_env, tmp_path):
    out = run_play(ansible_env, tmp_path, ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    assert '    "msg": [\n        "%s",\n        "%s"\n    ]' % tuple(LINES) in out


def test_the_report_root_is_in_the_ansible_home_whatever_the_folder(ansible_env, tmp_path):
    out = run_play(ansible_env, tmp_path, ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    assert '"msg": "root=%s/gpufleet-sglang/reports"' % ansible_env["ANSIBLE_HOME"] in out
