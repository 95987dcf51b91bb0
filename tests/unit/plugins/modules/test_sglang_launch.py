# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_launch: Launcher driven by a fake host (systemctl show / journalctl --show-cursor / systemctl restart through
run_command), a fake journal follower fed with real SGLang log lines, a fake readiness endpoint and a fake probe, each
handed to the Launcher (or to main()) as the real ones are."""

from __future__ import annotations

import json
import os
import platform
import re
import stat
import time
from pathlib import Path

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import parse_line
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import file_digest, load_manifest, save_snapshot
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import UNIT_PROPERTIES, JournalLine
from ansible_collections.gpufleet.sglang.plugins.modules import sglang_launch
from ansible_collections.gpufleet.sglang.plugins.modules.sglang_launch import Launcher, LaunchTimings

DATA = Path(__file__).resolve().parents[1] / "module_utils" / "data" / "startup_logs"
UNIT = "sglang-main.service"
SECRET = "sk-gpufleet-9d8c7b6a5f4e3d2c1b0a"
GOOD = b"model_path: /srv/models/Qwen3-8B\nport: 30000\nmem_fraction_static: 0.85\n"
BAD = b"model_path: /srv/models/Qwen3-8B\nport: 30000\nmem_fraction_static: 0.99\n"


def _unit(invocation, active="active", sub="running", pid="4242", restarts="0", result="success", code="0", status="0"):
    return {"ActiveState": active, "SubState": sub, "MainPID": pid, "NRestarts": restarts, "Result": result,
            "ExecMainCode": code, "ExecMainStatus": status, "InvocationID": invocation}


def _lines(name, pid):
    """A log file as the journal entries of process ``pid`` (what a journalctl prefix in the file says is kept)."""
    lines = (parse_line(text) for text in (DATA / name).read_text().splitlines())
    return [JournalLine(0.0, pid if line.ident != "systemd" else 1, line.ident or "sglang", line.msg) for line in lines]


# A host where the unit never ran (a first deploy): nothing to protect, so no way back is needed.
NEVER_STARTED = _unit("inv-old", "inactive", "dead", "0")

# Right after ``systemctl restart --no-block`` the old process is still there: running, then stopping.
STOPPING = [_unit("inv-old"), _unit("inv-old", "deactivating", "stop-sigterm")]


def ready_launch(invocation="inv-ready", pid="4300", previous=None):
    previous = previous or STOPPING
    return {"invocation": invocation, "lines": _lines("constructed_ready_0_5_23_journal.log", int(pid))[1:], "http": 200, "old": len(previous),
            "states": previous + [_unit(invocation, "activating", "start", pid), _unit(invocation, pid=pid)]}


def failing_launch(invocation="inv-fail", pid="4300", previous=None):
    """SGLang's warmup fails (the traceback carries the API key), the main process exits with status 1."""
    lines = _lines("constructed_warmup_401_secret_in_traceback.log", int(pid))
    lines.append(JournalLine(0.0, 1, "systemd", "%s: Main process exited, code=exited, status=1/FAILURE" % UNIT))
    previous = previous or STOPPING
    return {"invocation": invocation, "lines": lines, "http": None, "old": len(previous),
            "states": previous + [_unit(invocation, "activating", "start", pid),
                                  _unit(invocation, "failed", "failed", "0", result="exit-code", code="1", status="1")]}


def after_failure(invocation="inv-fail"):
    """What a rollback's restart sees first: the failed start, reset by ``systemctl reset-failed``."""
    return [_unit(invocation, "inactive", "dead", "0", result="exit-code", code="1", status="1")]


class Host:
    """systemd, the journal and the server as the module sees them; records every command."""

    def __init__(self, launches=(), before=None, http_before=200, restart_rc=0, restart_err="", port=30000):
        self.port = port  # where the server really listens
        self.probed = []
        self.probed_by_restart = {}  # restart number -> the ports probed while following it
        self.launches = list(launches)
        self.before = before or _unit("inv-old")
        self.http_before = http_before
        self.restart_rc, self.restart_err = restart_rc, restart_err
        self.restarts = 0
        self.shows = 0
        self.polls = 0
        self.shown = self.before
        self.calls = []
        self.followers = []
        self.journald = ""  # journald's own driver messages (its "Suppressed N messages" lines)
        self.started_monotonic = 1  # ExecMainStartTimestampMonotonic (microseconds): the running process started at boot

    def launch(self):
        return self.launches[self.restarts - 1] if self.restarts else None

    def run_command(self, args, **kwargs):  # pylint: disable=unused-argument
        args = list(args)
        self.calls.append(args)
        if args[:2] == ["systemctl", "show"] and args[3] != ",".join(UNIT_PROPERTIES):
            # the launch's other questions (the way back, a stall's processes): about the unit as last shown
            assert args[2] == "-p" and args[4:] == [UNIT]
            props = dict(self.shown, ControlGroup="", ExecMainStartTimestampMonotonic=str(self.started_monotonic))
            return 0, "".join("%s=%s\n" % (key, props.get(key, "")) for key in args[3].split(",")), ""
        if args[:2] == ["systemctl", "show"]:
            assert args[2:] == ["-p", ",".join(UNIT_PROPERTIES), UNIT]
            launch = self.launch()
            if launch is None:
                props = self.before
            else:
                index = min(self.shows, len(launch["states"]) - 1)
                if index >= launch["old"] and not self.polls and self.shows < 10:
                    index = launch["old"] - 1  # the old process lingers a while, or until someone probed it
                props = launch["states"][index]
                self.shows += 1
                if launch.get("crash") and launch.get("answered", 0) >= 2:
                    props = launch["crash"]  # it served, then died
            self.shown = props
            return 0, "".join("%s=%s\n" % item for item in props.items()), ""
        if args[0] == "journalctl" and "_TRANSPORT=driver" in args:
            return 0, self.journald, ""
        if args[0] == "journalctl":
            assert "--show-cursor" in args
            return 0, "-- cursor: s=c%d;i=1\n" % self.restarts, ""
        if args[:3] == ["systemctl", "restart", "--no-block"]:
            assert args[3] == UNIT
            if self.restart_rc:
                return self.restart_rc, "", self.restart_err
            self.restarts += 1
            self.shows = self.polls = 0
            return 0, "", ""
        if args in (["systemctl", "daemon-reload"], ["systemctl", "reset-failed", UNIT], ["systemctl", "stop", UNIT]):
            return 0, "", ""
        raise AssertionError("unexpected command %r" % (args,))

    def http(self, host, port, path, timeout=0.5, headers=None):  # pylint: disable=unused-argument
        self.probed.append(port)
        self.probed_by_restart.setdefault(self.restarts, []).append(port)
        if port != self.port:
            return None  # nothing of ours listens there
        assert host == "127.0.0.1" and path in ("/ready", "/health")  # /health: the settle time after ready
        launch = self.launch()
        if launch is None:
            return self.http_before
        self.polls += 1
        if self.shown.get("InvocationID") != launch["invocation"]:
            # The old process still answers while it drains; the new one does not listen yet.
            return 200 if self.shown.get("ActiveState") in ("active", "deactivating") else None
        if launch["http"] == 200:
            launch["answered"] = launch.get("answered", 0) + 1
        return launch["http"]

    def follower(self, unit, cursor, since_epoch, journalctl="journalctl"):  # pylint: disable=unused-argument
        follower = FakeFollower(self, unit, cursor)
        self.followers.append(follower)
        return follower

    def commands(self, verb):
        return [call for call in self.calls if call[:2] == ["systemctl", verb]]


class FakeFollower:
    """Hands out the lines of the launch that started after it was opened, as journalctl --after-cursor would."""

    def __init__(self, host, unit, cursor):
        self.host, self.unit, self.cursor = host, unit, cursor
        self.launch_index = host.restarts  # the restart that follows belongs to this follower
        self.sent = False
        self.closed = False

    def read(self, timeout):
        launch = self.host.launches[self.launch_index] if self.host.restarts > self.launch_index else None
        if launch is not None and not self.sent and self.host.shown.get("InvocationID") == launch["invocation"]:
            self.sent = True  # the new process logs once it exists
            now = time.time()
            return [entry._replace(timestamp=now) for entry in launch["lines"]]
        time.sleep(min(timeout, 0.005))  # pace the module's loop like a quiet journal
        return []

    def close(self):
        self.closed = True


class Failed(Exception):
    """fail_json was called."""


class FakeModule:
    """What Launcher uses of AnsibleModule."""

    def __init__(self, host, params, check_mode=False, diff=False):
        self._diff = diff
        self.params = params
        self.check_mode = check_mode
        self.run_command = host.run_command
        self.warnings = []

    def fail_json(self, **kwargs):
        raise Failed(kwargs)

    def warn(self, text):
        self.warnings.append(text)


@pytest.fixture
def files(tmp_path):
    """The launch's files: a config, an env file and a tuning env file that does not exist; the state folder."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "main.yaml").write_bytes(GOOD)
    (etc / "main.env").write_bytes(b"SGLANG_API_KEY=%s\n" % SECRET.encode())
    return [str(etc / "main.yaml"), str(etc / "main.env"), str(etc / "gpu-tuning.env")], str(tmp_path / "state")


def params_for(files, **changes):
    paths, state_dir = files
    params = {"unit": UNIT, "files": paths, "files_changed": False, "staged": [], "state_dir": state_dir, "state": "started", "host": "0.0.0.0",
              "port": 30000, "sglang_version": "0.5.23", "readiness_path": None, "timeout": 60.0, "stall_timeout": 60.0,
              "stall_timeouts": {}, "rollback": True, "soak_time": 0.0, "soak_checks": 3, "lock_timeout": 5.0,
              "holder": "pytest", "probe": {}, "probe_against_last_good": False, "probe_api_key": None,
              "secrets": [SECRET]}
    params.update(changes)
    return params


def no_probe(params):
    raise AssertionError("the probe ran without a probe option: %r" % (params,))


def probe_returning(results, missed=None, seen=None):
    """A probe that records the options it was given and answers with these results and this missed gate."""
    def probe(params):
        if seen is not None:
            seen.append(params)
        return results, missed
    return probe


def run(host, params, check_mode=False, probe=no_probe, timings=LaunchTimings(), diff=False):
    launcher = Launcher(FakeModule(host, params, check_mode, diff), follow_journal=host.follower, http_check=host.http, probe=probe,
                        timings=timings)
    return launcher.run()


def snapshot(files):
    """An earlier launch of these files reached ready."""
    paths, state_dir = files
    return save_snapshot(os.path.join(state_dir, "last-good"), paths, {"ready_at": 1764493405.0, "unit": UNIT})


def break_config(files):
    with open(files[0][0], "wb") as handle:
        handle.write(BAD)


# ------------------------------------------------------------------------------------------------ no change
def test_no_change_and_ready_restarts_nothing(files):
    snapshot(files)
    host = Host()
    result = run(host, params_for(files))
    assert result["changed"] is False and result["restarted"] is False and result["ready"] is True
    assert result["changed_files"] == [] and result["rolled_back"] is False
    assert result["readiness_url"] == "http://127.0.0.1:30000/ready"
    assert host.calls == [["systemctl", "show", "-p", ",".join(UNIT_PROPERTIES), UNIT]] and not host.followers


@pytest.mark.parametrize("before, http_before", [(_unit("inv-old", "inactive", "dead", "0"), None), (_unit("inv-old"), 503)],
                         ids=["inactive", "not-ready"])
def test_no_change_but_not_ready_restarts(files, before, http_before):
    snapshot(files)
    host = Host([ready_launch()], before=before, http_before=http_before)
    result = run(host, params_for(files))
    assert result["restarted"] is True and result["ready"] is True and result["changed_files"] == []
    assert len(host.commands("restart")) == 1


def test_state_restarted_restarts_without_a_change(files):
    snapshot(files)
    host = Host([ready_launch()])
    result = run(host, params_for(files, state="restarted"))
    assert result["restarted"] is True and result["ready"] is True and result["changed_files"] == []
    assert host.commands("restart") == [["systemctl", "restart", "--no-block", UNIT]]


# ------------------------------------------------------------------------------------------------ changed -> ready
def test_changed_files_restart_follow_to_ready_and_save_the_snapshot(files):
    snapshot(files)
    break_config(files)  # a new config (here: one that works)
    host = Host([ready_launch()])
    result = run(host, params_for(files))
    assert result["changed"] is True and result["restarted"] is True and result["ready"] is True
    assert result["changed_files"] == [files[0][0]] and "failure" not in result and result["rolled_back"] is False
    assert result["main_pid"] == 4300 and result["restarts"] == 0 and "fired up and ready to roll" in result["ready_line"]
    assert isinstance(result["time_to_ready_s"], float) and result["ready_noticed_at"] > 0
    assert [p["phase"] for p in result["phases"]][-1] == "ready"
    verbs = [call[:2] for call in host.calls if call[0] != "systemctl" or call[1] != "show"]
    assert verbs == [["journalctl", "--no-pager"], ["systemctl", "daemon-reload"], ["systemctl", "reset-failed"], ["systemctl", "restart"]]
    follower = host.followers[0]
    assert (follower.unit, follower.cursor, follower.closed) == (UNIT, "s=c0;i=1", True)
    manifest = load_manifest(os.path.join(files[1], "last-good"))
    assert manifest["files"][files[0][0]]["sha256"] == file_digest(files[0][0]) and manifest["unit"] == UNIT
    assert manifest["files"][files[0][2]] is None

    again = Host()  # the second run: nothing changed, the server is ready
    assert run(again, params_for(files))["restarted"] is False and not again.commands("restart")


def test_first_launch_without_a_snapshot_restarts_and_records_it(files):
    host = Host([ready_launch()], before=NEVER_STARTED)
    result = run(host, params_for(files))
    assert result["ready"] is True and result["changed_files"] == sorted(files[0])
    assert load_manifest(os.path.join(files[1], "last-good")) is not None


# ------------------------------------------------------------------------------------------------ failure
def test_a_snapshot_an_interrupted_replacement_left_as_old_is_the_way_back(files):
    good = snapshot(files)
    last_good = os.path.join(files[1], "last-good")
    os.rename(last_good, last_good + ".old")  # a crash between the two renames of a replacement
    break_config(files)
    host = Host([failing_launch(), ready_launch(invocation="inv-rollback", pid="4400", previous=after_failure())])
    module = FakeModule(host, params_for(files))
    result = Launcher(module, follow_journal=host.follower, http_check=host.http, probe=no_probe, timings=LaunchTimings()).run()
    assert result["rolled_back"] is True and result["restored_files"] == [files[0][0]] and result["rollback_ready"] is True
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD
    assert load_manifest(last_good)["files"] == good["files"] and not os.path.exists(last_good + ".old")
    assert module.warnings == ["sglang_launch: the last good snapshot was only in %s.old (a replacement of it was "
                               "interrupted); it is back in place" % last_good]


def test_failure_rolls_back_the_files_and_reports_rollback_ready(files):
    good = snapshot(files)
    break_config(files)
    host = Host([failing_launch(), ready_launch(invocation="inv-rollback", pid="4400", previous=after_failure())])
    result = run(host, params_for(files))
    failure = result["failure"]
    assert failure["outcome"] == "failed" and failure["cause"] == "warmup_failed" and failure["phase"] == "warmup"
    assert failure["traceback"].startswith("Traceback (most recent call last):") and failure["last_lines"]
    assert result["rolled_back"] is True and result["restored_files"] == [files[0][0]]
    assert result["rollback_ready"] is True and result["ready"] is True and result["rollback"]["main_pid"] == 4400
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD
    assert len(host.commands("restart")) == 2 and not host.commands("stop")
    assert load_manifest(os.path.join(files[1], "last-good"))["files"] == good["files"]  # the bad config was never recorded
    assert "Rolled back to the last good config: ready again" in result["msg"] and "cause warmup_failed" in result["msg"]
    assert [f.cursor for f in host.followers] == ["s=c0;i=1", "s=c1;i=1"] and all(f.closed for f in host.followers)


def test_the_last_lines_read_as_journalctl_shows_them(files):
    """failure.last_lines: each followed entry as one journal line - UTC time with microseconds, host, identifier[pid]."""
    host = Host([failing_launch()], before=NEVER_STARTED)
    last = run(host, params_for(files))["failure"]["last_lines"]
    prefix = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00 %s " % re.escape(platform.node() or "localhost")
    assert re.match(prefix + r"systemd\[1\]: %s: Main process exited, code=exited, status=1/FAILURE$" % UNIT, last[-1])
    assert re.match(prefix + r"sglang\[4300\]: \[2026-11-30 20:00:41\] Received sigquit from a child process\. It usually", last[-2])
    assert re.match(prefix + r"sglang\[4300\]: AssertionError: res=<Response \[401\]>, res\.text=", last[-3])
    assert len(last) == len(failing_launch()["lines"])  # fewer than the 20 kept


def test_rollback_follows_the_last_good_configs_own_port(files):
    """A change that moved the port and failed: the rolled-back server listens on the old port again."""
    paths, state_dir = files
    save_snapshot(os.path.join(state_dir, "last-good"), paths, {"endpoint": {"host": "127.0.0.1", "port": 30000, "path": "/ready"}})
    break_config(files)
    host = Host([failing_launch(), ready_launch(invocation="inv-rollback", pid="4400", previous=after_failure())])
    result = run(host, params_for(files, port=30123, timeout=5.0))
    assert result["rolled_back"] is True and result["rollback_ready"] is True  # probing 30123 would never see it ready
    assert set(host.probed_by_restart[2]) == {30000}  # the rollback's start (the failing one may have probed 30123)


def test_a_rollback_that_fails_too_is_reported(files):
    snapshot(files)
    break_config(files)
    host = Host([failing_launch(), failing_launch(invocation="inv-rollback", pid="4400", previous=after_failure())])
    result = run(host, params_for(files))
    assert result["rolled_back"] is True and result["rollback_ready"] is False and result["ready"] is False
    assert result["rollback"]["outcome"] == "failed"
    assert "did not reach ready either" in result["msg"]


def test_a_crash_right_after_ready_is_a_failed_launch_and_rolled_back(files):
    snapshot(files)
    break_config(files)
    crashing = ready_launch()
    crashing["crash"] = _unit("inv-ready", "failed", "failed", "0", result="signal", code="2", status="11")
    host = Host([crashing, ready_launch(invocation="inv-rollback", pid="4400", previous=after_failure("inv-ready"))])
    short = LaunchTimings(traceback_grace_s=0.05)  # keeps the test short; the grace itself is tested in test_launch_watch
    result = run(host, params_for(files, soak_time=1.5, soak_checks=1), timings=short)
    assert result["failure"]["cause"] == "crashed_after_ready"
    assert result["failure"]["reason"].startswith("the unit failed (Result=signal, killed by signal 11/SEGV) ")
    assert result["rolled_back"] is True and result["rollback_ready"] is True
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD


def test_failure_without_a_last_good_snapshot_stops_the_unit(files):
    host = Host([failing_launch()], before=NEVER_STARTED)
    result = run(host, params_for(files))
    assert result["failure"]["cause"] == "warmup_failed" and result["ready"] is False
    assert result["stopped"] is True and result["rolled_back"] is False and "rollback_ready" not in result
    assert host.commands("stop") == [["systemctl", "stop", UNIT]] and host.calls[-1] == ["systemctl", "stop", UNIT]
    assert load_manifest(os.path.join(files[1], "last-good")) is None
    assert "nothing to roll back to; the unit was stopped" in result["msg"]


def test_failure_with_rollback_off_leaves_the_files(files):
    snapshot(files)
    break_config(files)
    host = Host([failing_launch()])
    result = run(host, params_for(files, rollback=False))
    assert result["rolled_back"] is False and "stopped" not in result and len(host.commands("restart")) == 1
    with open(files[0][0], "rb") as handle:
        assert handle.read() == BAD
    assert "Nothing was rolled back" in result["msg"]


def test_secrets_never_appear_in_the_result(files):
    own = "0ther-s3cret-value"
    snapshot(files)
    break_config(files)
    failing = failing_launch()
    failing["lines"].insert(1, JournalLine(0.0, 4300, "sglang", "[2026-11-30 20:00:02] checking token %s" % own))
    host = Host([failing, failing_launch(invocation="inv-rollback", pid="4400", previous=after_failure())])
    result = run(host, params_for(files, secrets=[SECRET, own, ""]))
    assert result["failure"]["cause"] == "warmup_failed"
    text = json.dumps(result)
    assert SECRET not in text and own not in text


def test_a_refused_restart_fails_with_redacted_stderr_and_closes_the_follower(files):
    host = Host(before=NEVER_STARTED, restart_rc=1, restart_err="Failed to restart %s: token %s refused\n" % (UNIT, SECRET))
    with pytest.raises(Failed) as caught:
        run(host, params_for(files))
    failure = caught.value.args[0]
    assert failure["rc"] == 1 and failure["msg"].startswith("systemctl restart --no-block %s failed: " % UNIT)
    assert SECRET not in failure["msg"]
    assert host.followers[0].closed


# ------------------------------------------------------------------------------------------------ check mode
def test_check_mode_reports_the_changed_files_and_touches_nothing(files):
    good = snapshot(files)
    break_config(files)
    host = Host()
    result = run(host, params_for(files), check_mode=True)
    assert result["changed"] is True and result["restarted"] is True and result["ready"] is False
    assert result["changed_files"] == [files[0][0]] and result["msg"] == "would restart %s (%s)" % (UNIT, files[0][0])
    assert all(call[:2] == ["systemctl", "show"] for call in host.calls) and not host.followers
    assert load_manifest(os.path.join(files[1], "last-good")) == json.loads(json.dumps(good))
    with open(files[0][0], "rb") as handle:
        assert handle.read() == BAD


def test_check_mode_with_files_changed_would_restart(files):
    snapshot(files)  # nothing differs on disk: in check mode the writing tasks did not write
    host = Host()
    result = run(host, params_for(files, files_changed=True), check_mode=True)
    assert result["changed"] is True and result["restarted"] is True
    assert result["changed_files"] == ["(files that this run would write)"]
    assert result["msg"].startswith("would restart %s (" % UNIT) and not host.calls


@pytest.mark.parametrize("state, before, msg", [
    ("restarted", _unit("inv-old"), "restart requested"),
    ("started", _unit("inv-old", "failed", "failed", "0"), "not active and ready"),
])
def test_check_mode_says_why_it_would_restart(files, state, before, msg):
    snapshot(files)
    host = Host(before=before)
    result = run(host, params_for(files, state=state), check_mode=True)
    assert result["restarted"] is True and result["msg"] == "would restart %s (%s)" % (UNIT, msg)
    assert not host.commands("restart") and not host.followers


def test_check_mode_without_a_change_reports_nothing_to_do(files):
    snapshot(files)
    result = run(Host(), params_for(files), check_mode=True)
    assert result["changed"] is False and result["restarted"] is False and result["ready"] is True


# ------------------------------------------------------------------------------------------------ main()
def test_main_fails_the_task_with_the_diagnosis(monkeypatch, files, capsys):
    host = Host([failing_launch()], before=NEVER_STARTED)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", host.run_command)
    args = {"unit": UNIT, "files": files[0], "state_dir": files[1], "sglang_version": "0.5.23", "secrets": [SECRET]}
    with patch_module_args(args):
        with pytest.raises(SystemExit) as caught:
            sglang_launch.main(follow_journal=host.follower, http_check=host.http, probe=no_probe)
    result = json.loads(capsys.readouterr().out)
    assert caught.value.code == 1 and result["failed"] is True
    assert result["failure"]["cause"] == "warmup_failed" and result["stopped"] is True
    assert result["msg"].startswith("SGLang (%s) failed to start: the unit failed (Result=exit-code, exit status 1); "
                                    "cause warmup_failed in phase warmup. Error: AssertionError: res=<Response [401]>" % UNIT)


def test_main_in_check_mode_exits_with_would_restart(monkeypatch, files, capsys):
    host = Host(before=NEVER_STARTED)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", host.run_command)
    args = {"unit": UNIT, "files": files[0], "state_dir": files[1], "sglang_version": "0.5.23", "_ansible_check_mode": True}
    with patch_module_args(args):
        with pytest.raises(SystemExit) as caught:
            sglang_launch.main(follow_journal=host.follower, http_check=host.http, probe=no_probe)
    result = json.loads(capsys.readouterr().out)
    assert caught.value.code == 0 and result["changed"] is True and result["restarted"] is True
    assert result["changed_files"] == sorted(files[0]) and all(call[:2] == ["systemctl", "show"] for call in host.calls)


# ------------------------------------------------------------------------------------------------ probe gate
def test_a_probe_gate_that_passes_keeps_the_launch_and_returns_the_figures(files):
    snapshot(files)
    break_config(files)
    seen = []
    probe = probe_returning({"gates": {"passed": True}}, seen=seen)
    host = Host([ready_launch()])
    result = run(host, params_for(files, probe={"concurrency": [1], "min_decode_tps": 20}, probe_api_key=SECRET), probe=probe)
    assert result["ready"] is True and result["probe"] == {"gates": {"passed": True}} and "failure" not in result
    assert seen[0]["base_url"] == "http://127.0.0.1:30000" and seen[0]["api_key"] == SECRET and seen[0]["output_tokens"] == 256


def test_a_missed_probe_gate_fails_the_launch_and_rolls_back(files):
    snapshot(files)
    break_config(files)
    probe = probe_returning({"gates": {"passed": False}}, "decode 27.9 tok/s < min_decode_tps 40")
    host = Host([ready_launch(), ready_launch(invocation="inv-rollback", pid="4400", previous=after_failure("inv-ready"))])
    result = run(host, params_for(files, probe={"min_decode_tps": 40}), probe=probe)
    assert result["failure"]["cause"] == "probe_gate_failed" and "27.9" in result["failure"]["hint"]
    assert result["rolled_back"] is True and result["rollback_ready"] is True
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD


def test_bad_probe_options_fail_before_anything_restarts(files):
    snapshot(files)
    break_config(files)
    host = Host([ready_launch()])
    with pytest.raises(Failed) as failed:
        run(host, params_for(files, probe={"concurrency": "lots", "no_such_option": 1}))
    assert "probe options" in failed.value.args[0]["msg"] and not host.commands("restart")


# ------------------------------------------------------------------------------------------------ own previous figures
PROBED = {"started_at": "2026-11-30T10:00:00+00:00", "accept_length": 2.1, "efficiency": 0.88, "markdown": "# long report",
          "levels": [{"concurrency": 1, "decode_tps": {"mean": 54.0}, "request_details": [{"ttft_ms": 80}]}]}


def test_figures_of_a_probed_launch_are_kept_with_its_snapshot_and_reported_when_nothing_restarts(files):
    snapshot(files)
    break_config(files)
    probe = probe_returning(dict(PROBED, gates={"passed": True}))
    run(Host([ready_launch()]), params_for(files, probe={"concurrency": [1]}), probe=probe)
    saved = load_manifest(os.path.join(files[1], "last-good"))["probe"]
    assert saved["levels"] == [{"concurrency": 1, "decode_tps": {"mean": 54.0}}] and saved["accept_length"] == 2.1
    assert "markdown" not in saved and "gates" not in saved
    again = run(Host(), params_for(files, probe={"concurrency": [1]}), probe=probe)
    assert again["restarted"] is False and again["last_good_probe"] == saved


def test_a_launch_without_a_probe_keeps_no_figures(files):
    snapshot(files)
    break_config(files)
    run(Host([ready_launch()]), params_for(files))
    assert "probe" not in load_manifest(os.path.join(files[1], "last-good"))
    assert "last_good_probe" not in run(Host(), params_for(files))


def test_probe_against_last_good_gates_on_the_saved_figures(files):
    paths, state_dir = files
    save_snapshot(os.path.join(state_dir, "last-good"), paths, {"ready_at": 1.0, "unit": UNIT, "probe": sglang_launch.probe_figures(PROBED)})
    break_config(files)
    seen = []
    probe = probe_returning({"levels": [], "gates": {"passed": True}}, seen=seen)
    result = run(Host([ready_launch()]), params_for(files, probe={"concurrency": [1]}, probe_against_last_good=True), probe=probe)
    assert seen[0]["baseline"] == {"levels": [{"concurrency": 1, "decode_tps": {"mean": 54.0}}]}
    assert result["probe_baseline"] == "last_good (measured 2026-11-30T10:00:00+00:00)"


def test_an_explicit_baseline_wins_over_the_last_good_figures(files):
    paths, state_dir = files
    save_snapshot(os.path.join(state_dir, "last-good"), paths, {"ready_at": 1.0, "unit": UNIT, "probe": sglang_launch.probe_figures(PROBED)})
    break_config(files)
    seen = []
    probe = probe_returning({"levels": [], "gates": {"passed": True}}, seen=seen)
    own = [{"concurrency": 1, "decode_tps": {"mean": 10.0}}]
    result = run(Host([ready_launch()]), params_for(files, probe={"baseline": own}, probe_against_last_good=True), probe=probe)
    assert seen[0]["baseline"] == own and result["probe_baseline"] == "option"


def test_without_saved_figures_the_regression_gate_has_no_baseline(files):
    snapshot(files)
    break_config(files)
    seen = []
    probe = probe_returning({"levels": [], "gates": {"passed": True}}, seen=seen)
    result = run(Host([ready_launch()]), params_for(files, probe={"concurrency": [1]}, probe_against_last_good=True), probe=probe)
    assert seen[0].get("baseline") is None and result["probe_baseline"] == "none"


def test_sglangs_own_message_wins_over_systemds_exit_line_that_came_first(files):
    """journald can deliver systemd's exit line before the dead process's last lines: the error message and the fatal
    line are SGLang's, systemd's line goes beside them (failure.systemd_line, and in the message)."""
    failing = failing_launch()
    exit_line = failing["lines"].pop()
    failing["lines"].insert(1, exit_line)
    host = Host([failing], before=NEVER_STARTED)
    result = run(host, params_for(files))
    failure = result["failure"]
    assert failure["cause"] == "warmup_failed"
    assert failure["error_message"].startswith("AssertionError: res=<Response [401]>")
    assert failure["fatal_line"].startswith("[2026-11-30 20:00:41] Initialization failed. warmup error:")
    assert failure["systemd_line"] == exit_line.message
    assert " systemd: %s." % exit_line.message.rstrip(".") in result["msg"]
    assert failure["tracebacks"] == [failure["traceback"]]


class LateFollower(FakeFollower):
    """journald's --follow delivers the dead process's lines late: read() holds them back, catch_up() has them."""

    caught = 0

    def read(self, timeout):
        entries = super().read(timeout)
        self.held = getattr(self, "held", []) + entries[1:]
        return entries[:1]

    def catch_up(self):
        """A one-shot read of the journal file: whatever of this start the stream has not handed out yet."""
        LateFollower.caught += 1
        held, self.held = getattr(self, "held", []), []
        launch = self.host.launches[self.launch_index]
        if not self.sent:
            self.sent = True
            held = [entry._replace(timestamp=time.time()) for entry in launch["lines"]]
        return held


def test_the_exit_reads_the_journal_at_once_instead_of_waiting_for_the_follower(files):
    host = Host([failing_launch()], before=NEVER_STARTED)
    host.follower = lambda unit, cursor, since_epoch, journalctl="journalctl": host.followers.append(LateFollower(host, unit, cursor)) \
        or host.followers[-1]
    LateFollower.caught = 0
    result = run(host, params_for(files))
    assert result["failure"]["cause"] == "warmup_failed" and LateFollower.caught == 1
    assert result["failure"]["error_message"].startswith("AssertionError: res=<Response [401]>")


class SplitFollower(FakeFollower):
    """journald took in systemd's exit line before the dead process's last output: the first read of the journal
    ends at that line, the next one brings the rest of the traceback."""

    reads = 0

    def read(self, timeout):
        time.sleep(min(timeout, 0.005))
        return []

    def catch_up(self):
        SplitFollower.reads += 1
        launch = self.host.launches[self.launch_index]
        lines = [entry._replace(timestamp=time.time()) for entry in launch["lines"]]
        exit_at = next(i for i, entry in enumerate(lines) if entry.identifier == "systemd")
        if SplitFollower.reads == 1:
            return lines[:4] + [lines[exit_at]]
        if SplitFollower.reads == 2:
            return lines[4:exit_at]
        return []


def test_the_journal_is_read_again_before_the_verdict_until_nothing_new_comes(files):
    host = Host([failing_launch()], before=NEVER_STARTED)
    host.follower = lambda unit, cursor, since_epoch, journalctl="journalctl": host.followers.append(SplitFollower(host, unit, cursor)) \
        or host.followers[-1]
    SplitFollower.reads = 0
    failure = run(host, params_for(files))["failure"]
    assert failure["cause"] == "warmup_failed" and SplitFollower.reads == 3
    assert failure["error_message"].startswith("AssertionError: res=<Response [401]>")
    assert failure["traceback"].splitlines()[-1].startswith("AssertionError: res=<Response [401]>")


# ------------------------------------------------------------------------------------------------ the soak
def test_a_launch_is_good_only_after_its_soak_window_of_healthy_checks(files):
    snapshot(files)
    break_config(files)
    host = Host([ready_launch()])
    fast = LaunchTimings(probe_interval_s=0.02)
    result = run(host, params_for(files, soak_time=0.3, soak_checks=4), timings=fast)
    assert result["ready"] is True and result["soak"]["healthy_checks"] >= 4 and result["soak"]["seconds"] >= 0.3
    assert load_manifest(os.path.join(files[1], "last-good"))["files"][files[0][0]]["sha256"] == file_digest(files[0][0])


# ------------------------------------------------------------------------------------------------ a verified way back
def _damage_snapshot(files):
    manifest = load_manifest(os.path.join(files[1], "last-good"))
    stored = os.path.join(files[1], "last-good", manifest["files"][files[0][0]]["stored"])
    with open(stored, "ab") as handle:
        handle.write(b"# damaged\n")


def test_a_damaged_snapshot_stops_the_launch_before_any_restart_when_the_disk_is_not_what_runs(files):
    snapshot(files)
    _damage_snapshot(files)
    break_config(files)  # this run's change is on disk already, so the running config is not
    host = Host([ready_launch()])
    with pytest.raises(Failed) as failed:
        run(host, params_for(files, files_changed=True))
    message = failed.value.args[0]["msg"]
    assert "has no verified way back: the stored copy of %s differs from its checksum" % files[0][0] in message
    assert "files were written after the running server started" in message and "Nothing was restarted" in message
    assert not host.commands("restart") and not host.commands("stop")


def test_a_missing_snapshot_is_rebuilt_from_a_healthy_server_whose_files_are_those_it_started_with(files):
    host = Host()  # the server runs, healthy; its snapshot folder was deleted
    host.started_monotonic = int(time.monotonic() * 1e6) + 5_000_000  # it started after its files were written
    result = run(host, params_for(files))
    assert result["snapshot_rebuilt"].startswith("no last good snapshot exists") and result["restarted"] is False
    assert result["changed"] is True and not host.commands("restart")
    manifest = load_manifest(os.path.join(files[1], "last-good"))
    assert manifest["rebuilt"] is True and manifest["files"][files[0][0]]["sha256"] == file_digest(files[0][0])


def test_a_missing_snapshot_with_an_unhealthy_server_stops_before_any_restart(files):
    host = Host(http_before=503)
    with pytest.raises(Failed) as failed:
        run(host, params_for(files))
    assert "the running server is not healthy now" in failed.value.args[0]["msg"] and not host.commands("restart")


def test_a_snapshot_damaged_after_the_check_is_not_restored(files, monkeypatch):
    snapshot(files)
    break_config(files)
    host = Host([failing_launch()])
    real = sglang_launch.Launcher.launch_and_follow

    def damage_then_launch(self):
        _damage_snapshot(files)
        return real(self)
    monkeypatch.setattr(sglang_launch.Launcher, "launch_and_follow", damage_then_launch)
    result = run(host, params_for(files))
    assert result["rolled_back"] is False and result["stopped"] is True and "differs from its checksum" in result["rollback_error"]
    with open(files[0][0], "rb") as handle:
        assert handle.read() == BAD  # nothing half-restored


# ------------------------------------------------------------------------------------------------ one deploy at a time
def test_a_second_deploy_waits_for_the_lock_then_fails_with_who_holds_it_since_when(files):
    import fcntl  # pylint: disable=import-outside-toplevel
    snapshot(files)
    os.makedirs(files[1], exist_ok=True)
    with open(os.path.join(files[1], "launch.lock"), "w", encoding="utf-8") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        held.write(json.dumps({"pid": 777, "since": 1764493315.0, "holder": "deploy.yml by alice", "unit": UNIT}))
        held.flush()
        host = Host()
        started = time.monotonic()
        with pytest.raises(Failed) as failed:
            run(host, params_for(files, lock_timeout=0.3))
        assert time.monotonic() - started >= 0.3
    message = failed.value.args[0]["msg"]
    assert "another deploy holds the launch lock of %s: deploy.yml by alice (PID 777 on this host) since " % UNIT in message
    assert failed.value.args[0]["lock_holder"]["pid"] == 777 and not host.calls  # it touched nothing while it waited
    assert run(Host(), params_for(files))["restarted"] is False  # released: the next one gets it


# ------------------------------------------------------------------------------------------------ the verdict on the host
def test_the_verdict_is_written_on_the_host_and_a_status_call_reports_it(files):
    snapshot(files)
    break_config(files)
    host = Host([failing_launch(), ready_launch(invocation="inv-rollback", pid="4400", previous=after_failure())])
    run(host, params_for(files))
    path = os.path.join(files[1], "last-launch.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    record = json.loads(text)
    assert record["state"] == "done" and record["outcome"] == "failed" and record["failure"]["cause"] == "warmup_failed"
    assert record["rolled_back"] is True and record["rollback_ready"] is True and SECRET not in text
    assert record["swapped"] == [] and record["snapshot_rebuilt"] is None
    status = run(Host(), params_for(files, state="status"))
    assert status["last_launch"] == record and status["changed"] is False and status["snapshot_problems"] == []
    again = run(Host(), params_for(files))
    assert again["previous_launch"]["failure"]["cause"] == "warmup_failed"


def test_a_launch_that_never_wrote_its_verdict_reads_as_interrupted(files):
    snapshot(files)
    os.makedirs(files[1], exist_ok=True)
    with open(os.path.join(files[1], "last-launch.json"), "w", encoding="utf-8") as handle:
        json.dump({"state": "in_progress", "pid": 2 ** 22 + 17, "started_at": 1764493315.0, "unit": UNIT}, handle)
    status = run(Host(), params_for(files, state="status"))
    assert status["last_launch"]["state"] == "interrupted" and "without a verdict" in status["last_launch"]["note"]


# ------------------------------------------------------------------------------------------------ drift
def test_files_written_back_after_a_hand_edit_restart_a_process_started_outside_a_launch(files):
    paths, state_dir = files
    save_snapshot(os.path.join(state_dir, "last-good"), paths, {"unit": UNIT, "invocation": "inv-good"})
    host = Host([ready_launch()], before=_unit("inv-by-hand"))  # someone edited the unit and restarted it by hand
    result = run(host, params_for(files, files_changed=True))
    assert result["restarted"] is True and len(host.commands("restart")) == 1
    same = Host(before=_unit("inv-ready"))  # the process is the one that reached ready: it never read the hand edit
    assert run(same, params_for(files, files_changed=True))["restarted"] is False


# ------------------------------------------------------------------------------------------------ journald's rate limit
def test_a_diagnosis_says_when_journald_dropped_lines(files):
    host = Host([failing_launch()], before=NEVER_STARTED)
    host.journald = "Suppressed 1180 messages from /system.slice/%s\n" % UNIT
    failure = run(host, params_for(files))["failure"]
    assert failure["journal_suppressed"] == 1180
    assert "journald dropped 1180 of the server's log lines" in failure["hint"] and "sglang_server_log_rate_limit_burst" in failure["hint"]


def test_files_changed_by_another_writer_during_the_launch_are_not_kept_as_last_good(files, monkeypatch):
    good = snapshot(files)
    break_config(files)
    host = Host([ready_launch()])
    real = sglang_launch.Launcher.launch_and_follow

    def another_writer(self):
        launched = real(self)
        with open(files[0][1], "ab") as handle:
            handle.write(b"OTHER=1\n")
        return launched
    monkeypatch.setattr(sglang_launch.Launcher, "launch_and_follow", another_writer)
    result = run(host, params_for(files))
    assert result["failure"]["cause"] == "files_changed_during_launch" and result["rolled_back"] is False
    assert load_manifest(os.path.join(files[1], "last-good"))["files"] == good["files"] and len(host.commands("restart")) == 1


# ------------------------------------------------------------------------------------------------ staged, swapped together
def stage(files, content):
    """The role's staged copy of the config (and of the env file, unchanged): returns the staged option."""
    paths, state_dir = files
    folder = os.path.join(os.path.dirname(state_dir), "staged")
    os.makedirs(folder, exist_ok=True)
    pairs = []
    for live, data in ((paths[0], content), (paths[1], None)):
        src = os.path.join(folder, os.path.basename(live))
        with open(src, "wb") as handle:
            handle.write(data if data is not None else open(live, "rb").read())  # pylint: disable=consider-using-with
        os.chmod(src, os.stat(live).st_mode & 0o7777)
        pairs.append({"src": src, "dest": live})
    return pairs


def test_staged_copies_are_swapped_in_before_the_restart(files):
    snapshot(files)
    host = Host([ready_launch()])
    result = run(host, params_for(files, staged=stage(files, BAD), files_changed=True))
    assert result["swapped"] == [files[0][0]] and result["restarted"] is True and result["changed_files"] == [files[0][0]]
    with open(files[0][0], "rb") as handle:
        assert handle.read() == BAD
    assert host.calls.index(["systemctl", "restart", "--no-block", UNIT]) > 0
    again = run(Host(), params_for(files, staged=stage(files, BAD)))
    assert again["swapped"] == [] and again["restarted"] is False and again["changed"] is False  # idempotent


def test_check_mode_with_staged_copies_names_the_files_and_touches_nothing(files):
    snapshot(files)
    host = Host()
    result = run(host, params_for(files, staged=stage(files, BAD)), check_mode=True, diff=True)
    assert result["restarted"] is True and result["changed_files"] == [files[0][0]] and result["swapped"] == []
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD
    (diff,) = result["diff"]
    assert diff["before_header"] == files[0][0] and "0.85" in diff["before"] and "0.99" in diff["after"]
    assert all(call[:2] == ["systemctl", "show"] for call in host.calls)


def test_check_mode_before_any_staged_copy_exists_says_would_restart_and_fails_nothing(files):
    """A first --check (fresh host, or the first run after upgrading): the staging tasks wrote nothing in check mode."""
    snapshot(files)
    staged = stage(files, BAD)
    for item in staged:
        os.remove(item["src"])
    host = Host()
    result = run(host, params_for(files, staged=staged, files_changed=True), check_mode=True)
    assert result["restarted"] is True and result["swapped"] == [] and result["changed"] is True
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD
    assert not host.commands("restart")
    with pytest.raises(Failed) as failed:  # outside check mode a missing copy is a failed write: nothing is put in place
        run(Host(), params_for(files, staged=staged, files_changed=True))
    assert "is missing; nothing was put in place" in failed.value.args[0]["msg"]


def test_first_check_after_an_upgrade_without_staged_copies_says_nothing_would_restart(files):
    """The first --check after upgrading from a release that wrote the live files itself: no staged copy exists, and
    the role compared what it would write with the live files (files_changed false: they would not change). Check
    mode must then say that nothing restarts, as the real run will, and touch nothing."""
    paths, state_dir = files
    save_snapshot(os.path.join(state_dir, "last-good"), paths, {"unit": UNIT, "invocation": "inv-good"})
    staged = stage(files, GOOD)
    for item in staged:
        os.remove(item["src"])
    host = Host(before=_unit("inv-good"))
    result = run(host, params_for(files, staged=staged, files_changed=False), check_mode=True)
    assert result["restarted"] is False and result["changed"] is False and result["swapped"] == []
    assert "msg" not in result and result["changed_files"] == []
    assert not host.commands("restart") and not os.path.exists(staged[0]["src"])
    # the same host where the role found a live file that would change: the check says it would restart
    changing = run(Host(before=_unit("inv-good")), params_for(files, staged=staged, files_changed=True), check_mode=True)
    assert changing["restarted"] is True and changing["msg"].startswith("would restart %s" % UNIT)


def test_a_failed_swap_leaves_the_old_set_whole_and_restarts_nothing(files, monkeypatch):
    snapshot(files)
    host = Host([ready_launch()])
    real = os.replace

    def read_only(src, dest):
        if str(dest) == files[0][0]:
            raise PermissionError(1, "Operation not permitted")
        return real(src, dest)
    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(Failed) as failed:
        run(host, params_for(files, staged=stage(files, BAD), files_changed=True))
    assert "cannot put %s in place" % files[0][0] in failed.value.args[0]["msg"] and "Nothing was restarted" in failed.value.args[0]["msg"]
    assert not host.commands("restart")
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD


def test_a_hand_edit_is_written_back_from_the_staged_copy_and_restarts_only_a_process_that_read_it(files):
    paths, state_dir = files
    save_snapshot(os.path.join(state_dir, "last-good"), paths, {"unit": UNIT, "invocation": "inv-good"})
    staged = stage(files, GOOD)
    break_config(files)  # by hand, after the last good launch
    same = Host(before=_unit("inv-good"))  # the process that reached ready never read the edit
    result = run(same, params_for(files, staged=staged), diff=True)
    assert result["swapped"] == [paths[0]] and result["restarted"] is False and result["changed"] is True
    assert "0.99" in result["diff"][0]["before"] and not same.commands("restart")
    break_config(files)
    restarted_by_hand = Host([ready_launch()], before=_unit("inv-by-hand"))
    assert run(restarted_by_hand, params_for(files, staged=staged))["restarted"] is True
    break_config(files)
    check = run(Host(before=_unit("inv-ready")), params_for(files, staged=staged), check_mode=True)
    assert check["restarted"] is False and check["changed"] is True  # check mode: it would write back, and not restart
