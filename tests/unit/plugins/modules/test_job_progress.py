# -*- coding: utf-8 -*-
"""job_progress in a play: it waits on a real async job, shows the newest log line, and ends with the job.

The job writes its two steps, then waits until the test has seen a progress line naming the second step in the
play's output, so the play shows it whatever the machine's speed; then it ends and the loop ends with it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")
def test_a_loop_follows_an_async_job_to_its_end(ansible_env, tmp_path):
    log, go = tmp_path / "job.log", tmp_path / "go"
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False,
        "tasks": [
            {"name": "Write two steps, then wait for the test to have seen the second",
             "ansible.builtin.shell": (f"echo 'Collecting a' >> {log}; echo 'Downloading b (1 MB)' >> {log}; "
                                       f"while [ ! -e {go} ]; do sleep 0.2; done"),
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
    # unbuffered, or the labels this test waits for reach it only when the play ends
    proc = subprocess.Popen([PLAYBOOK, "-i", "localhost,", "-c", "local", str(play)], cwd=tmp_path, env=dict(ansible_env, PYTHONUNBUFFERED="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []

    def read():
        for line in proc.stdout:
            lines.append(line)
            if "s: Downloading b (1 MB))" in line:  # a label while the job ran: "(item=<n> s: <step>)"
                go.touch()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        returncode = proc.wait(timeout=120)
    finally:
        go.touch()
        reader.join(timeout=10)
    output = "".join(lines)
    assert returncode == 0, output
    assert any(line.startswith("ok: [localhost] => (item=") and "s: Downloading b (1 MB))" in line for line in lines), output
    assert "last=done" in output
