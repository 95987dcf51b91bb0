# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sglang_server role's watchdog program (roles/sglang_server/files/sglang_watchdog.py): when a zombie server is
restarted, and that it never touches a start that is still loading or a launch in progress."""

from __future__ import annotations

import fcntl
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "roles" / "sglang_server" / "files" / "sglang_watchdog.py"
SPEC = importlib.util.spec_from_file_location("sglang_watchdog", SCRIPT)
watchdog = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(watchdog)


def test_a_start_that_never_answered_healthy_is_never_counted():
    state, restart = {}, False
    for attempt in range(10):  # loading: /health refused or 503 the whole time
        state, restart = watchdog.decide(state, "inv-1", None if attempt % 2 else 503, failures=3)
        assert not restart
    assert state == {"invocation": "inv-1", "healthy": False, "failed": 0}


def test_a_server_that_was_healthy_and_then_fails_in_a_row_is_restarted():
    state, restart = watchdog.decide({}, "inv-1", 200, failures=3)
    assert not restart
    for expected in (1, 2):
        state, restart = watchdog.decide(state, "inv-1", 503, failures=3)
        assert not restart and state["failed"] == expected
    state, restart = watchdog.decide(state, "inv-1", None, failures=3)
    assert restart and state["failed"] == 3


def test_one_healthy_answer_clears_the_count_and_a_new_process_starts_over():
    state, restart = watchdog.decide({}, "inv-1", 200, failures=2)
    state, restart = watchdog.decide(state, "inv-1", 503, failures=2)
    assert not restart
    state, restart = watchdog.decide(state, "inv-1", 200, failures=2)
    assert not restart and state["failed"] == 0
    state, restart = watchdog.decide(state, "inv-1", 503, failures=2)
    state, restart = watchdog.decide(state, "inv-2", 503, failures=2)  # restarted meanwhile: not yet healthy
    assert not restart and state == {"invocation": "inv-2", "healthy": False, "failed": 0}


def _state_dir(tmp_path):
    (tmp_path / "last-good").mkdir()
    (tmp_path / "last-good" / "manifest.json").write_text(json.dumps(
        {"unit": "sglang-main.service", "endpoint": {"host": "127.0.0.1", "port": 30000, "path": "/ready"}, "files": {}}))
    return tmp_path


def test_a_zombie_is_restarted_with_the_reason_in_the_journal(tmp_path, monkeypatch, capsys):
    state_dir = _state_dir(tmp_path)
    (state_dir / "run").mkdir()
    (state_dir / "run" / "sglang-main.service.json").write_text(json.dumps({"invocation": "inv-1", "healthy": True, "failed": 1}))
    commands = []
    monkeypatch.setattr(watchdog, "unit_props", lambda unit: {"ActiveState": "active", "InvocationID": "inv-1", "MainPID": "4300"})
    monkeypatch.setattr(watchdog, "health", lambda host, port, timeout: 503)
    monkeypatch.setattr(watchdog.subprocess, "run", lambda args, check: commands.append(args))
    assert watchdog.main(["--state-dir", str(state_dir), "--failures", "2", "--run-dir", str(state_dir / "run")]) == 0
    assert commands == [["systemctl", "restart", "--no-block", "sglang-main.service"]]
    out = capsys.readouterr().out
    assert "answered /health with 503 2 times in a row" in out and "zombie" in out
    assert json.loads((state_dir / "run" / "sglang-main.service.json").read_text())["failed"] == 0


@pytest.mark.parametrize("situation", ["launch", "inactive", "no-manifest"])
def test_it_leaves_alone_a_launch_in_progress_a_stopped_unit_and_a_host_without_a_launch(tmp_path, monkeypatch, situation):
    state_dir = _state_dir(tmp_path)
    (state_dir / "run").mkdir()
    (state_dir / "run" / "sglang-main.service.json").write_text(json.dumps({"invocation": "inv-1", "healthy": True, "failed": 5}))
    command = ["--state-dir", str(state_dir), "--failures", "2", "--run-dir", str(state_dir / "run")]
    active = "inactive" if situation == "inactive" else "active"
    monkeypatch.setattr(watchdog, "unit_props", lambda unit: {"ActiveState": active, "InvocationID": "inv-1", "MainPID": "4300"})
    monkeypatch.setattr(watchdog, "health", lambda host, port, timeout: 503)
    monkeypatch.setattr(watchdog.subprocess, "run", lambda args, check: pytest.fail("restarted: %r" % (args,)))
    if situation == "no-manifest":
        (state_dir / "last-good" / "manifest.json").unlink()
    if situation == "launch":
        with open(state_dir / "launch.lock", "w", encoding="utf-8") as held:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX)
            assert watchdog.main(command) == 0
    else:
        assert watchdog.main(command) == 0
