# -*- coding: utf-8 -*-
"""job_progress in a play: it waits on a real async job, shows the newest log line, and ends with the job."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")
def test_a_loop_follows_an_async_job_to_its_end(ansible_env, tmp_path):
    log = tmp_path / "job.log"
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False,
        "tasks": [
            {"name": "Write two steps, a second apart",
             "ansible.builtin.shell": f"echo 'Collecting a' >> {log}; sleep 1; echo 'Downloading b (1 MB)' >> {log}; sleep 1",
             "async": 60, "poll": 0, "register": "job", "changed_when": False},
            {"name": "Follow it", "gpufleet.sglang.job_progress": {
                "results_file": "{{ job.results_file }}", "log": str(log), "wait": 0.6, "match": "(Collecting|Downloading)"},
             "register": "watch", "loop": "{{ range(0, 30) | list }}",
             "loop_control": {"label": "{{ watch.line | default('starting') }}", "break_when": "watch.finished | default(false)"}},
            {"name": "Collect", "ansible.builtin.async_status": {"jid": "{{ job.ansible_job_id }}"}, "register": "result",
             "until": "result.finished", "retries": 10, "delay": 1},
            {"name": "Show", "ansible.builtin.debug": {"msg": "turns={{ watch.results | length }} last={{ (watch.results | last).line }}"}},
        ],
    }]), encoding="utf-8")
    result = subprocess.run([PLAYBOOK, "-i", "localhost,", "-c", "local", str(play)], cwd=tmp_path, env=ansible_env,
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "s: Downloading b (1 MB))" in result.stdout  # a label while it ran: "<n> s: <step>"
    assert "last=done" in result.stdout
