# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""startup/systemd at its edges: the exact journalctl command lines, fields systemd left out, each signal's name,
the cgroup layouts, /proc read for real, and journald's rate-limit lines that look alike."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup import systemd as systemd_unit
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import (
    JournalFollower, exit_description, journal_cursor, parse_journal_json_line, unit_exited)

FIELDS = "--output-fields=MESSAGE,_PID,SYSLOG_IDENTIFIER,_COMM,_SYSTEMD_INVOCATION_ID,INVOCATION_ID"


# ------------------------------------------------------------------------------------------------ parsing
def test_an_entry_without_a_message_has_an_empty_one():
    assert parse_journal_json_line(json.dumps({"_PID": "7", "__REALTIME_TIMESTAMP": "2000000"}).encode()).message == ""


BASE = {"ActiveState": "activating", "SubState": "start", "MainPID": "4242", "NRestarts": "0", "InvocationID": "new"}


@pytest.mark.parametrize("active, words", [("failed", "the unit failed"), ("inactive", "the unit stopped")])
def test_a_result_systemd_did_not_give_is_a_question_mark(active, words):
    props = {"ActiveState": active, "SubState": "dead", "MainPID": "0", "InvocationID": "new", "ExecMainCode": "1",
             "ExecMainStatus": "3"}
    assert unit_exited(props, BASE) == "%s (Result=?, exit status 3)" % words


def test_restarts_count_from_the_baseline_s_counter():
    assert unit_exited(dict(BASE, NRestarts="2"), dict(BASE, NRestarts="2")) is None  # restarted before this start
    assert unit_exited(dict(BASE, NRestarts="3"), dict(BASE, NRestarts="2")) == "systemd restarted the unit (NRestarts 2 -> 3)"


def test_a_baseline_without_a_restart_counter_counts_from_zero():
    baseline = {k: v for k, v in BASE.items() if k != "NRestarts"}
    assert unit_exited(dict(BASE, NRestarts="1"), baseline) == "systemd restarted the unit (NRestarts 0 -> 1)"
    assert unit_exited(dict(BASE, NRestarts="1"), dict(BASE, NRestarts="")) == "systemd restarted the unit (NRestarts 0 -> 1)"


@pytest.mark.parametrize("base_pid", [None, ""], ids=["missing", "empty"])
def test_a_baseline_without_a_main_pid_follows_no_pid(base_pid):
    baseline = {k: v for k, v in BASE.items() if k != "MainPID"}
    if base_pid is not None:
        baseline["MainPID"] = base_pid
    assert unit_exited(dict(BASE, MainPID="4300"), baseline) is None


@pytest.mark.parametrize("status, name", [("1", "HUP"), ("2", "INT"), ("3", "QUIT"), ("6", "ABRT"), ("9", "KILL"), ("11", "SEGV"),
                                          ("15", "TERM")])
def test_each_signal_by_its_name(status, name):
    assert exit_description({"ExecMainCode": "2", "ExecMainStatus": status}) == "killed by signal %s/%s" % (status, name)


def test_a_status_systemd_did_not_give_is_said_so():
    assert exit_description({"ExecMainCode": "1"}) == "exited, status not given"
    assert exit_description({"ExecMainCode": "1", "ExecMainStatus": ""}) == "exited, status not given"
    assert exit_description({"ExecMainCode": "3"}) == "killed by a signal not given"
    assert exit_description({"ExecMainCode": "2", "ExecMainStatus": ""}) == "killed by a signal not given"
    assert exit_description({"ExecMainCode": "1", "ExecMainStatus": "0"}) == "exit status 0"


def test_journal_cursor_s_exact_command():
    calls = []

    def run(args):
        calls.append(args)
        return 0, "-- cursor: s=abc;i=5\n", ""
    assert journal_cursor(run) == "s=abc;i=5"
    assert calls == [["journalctl", "--no-pager", "-q", "-n", "0", "--show-cursor"]]


# ------------------------------------------------------------------------------------------------ cgroups and /proc
def _show(group, main="0"):
    text = ("ControlGroup=%s\n" % group if group is not None else "") + "MainPID=%s\n" % main
    return lambda args: (0, text, "")


def _procs(root, hierarchy, group, pids):
    folder = os.path.join(str(root), hierarchy, group.lstrip("/"))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "cgroup.procs"), "w", encoding="ascii") as handle:
        handle.write("".join("%d\n" % pid for pid in pids))


def test_a_unit_with_no_group_and_no_main_pid_has_no_processes(tmp_path):
    assert systemd_unit.unit_pids(_show(None, "0"), "u.service", cgroup_root=str(tmp_path)) == []
    assert systemd_unit.unit_pids(_show("/system.slice/u.service", "0"), "u.service", cgroup_root=str(tmp_path)) == []


def test_cgroup_v1_s_systemd_hierarchy(tmp_path):
    _procs(tmp_path, "systemd", "/system.slice/u.service", [4300, 4303])
    assert systemd_unit.unit_pids(_show("/system.slice/u.service", "4300"), "u.service", cgroup_root=str(tmp_path)) == [4300, 4303]


def test_the_first_hierarchy_that_lists_processes_wins(tmp_path):
    _procs(tmp_path, "", "/system.slice/u.service", [4300, 4301])
    _procs(tmp_path, "unified", "/system.slice/u.service", [4300])
    _procs(tmp_path, "systemd", "/system.slice/u.service", [4309])
    assert systemd_unit.unit_pids(_show("/system.slice/u.service", "4300"), "u.service", cgroup_root=str(tmp_path)) == [4300, 4301]


def test_a_slice_whose_name_starts_with_x(tmp_path):
    _procs(tmp_path, "", "/Xla.slice/u.service", [4300, 4301])
    assert systemd_unit.unit_pids(_show("/Xla.slice/u.service", "4300"), "u.service", cgroup_root=str(tmp_path)) == [4300, 4301]


def _own_group():
    with open("/proc/self/cgroup", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


def test_unit_pids_reads_the_host_s_cgroup_tree_by_default():
    group = _own_group()
    readable = group is not None and any(
        os.path.isfile(os.path.join("/sys/fs/cgroup", h, group.lstrip("/"), "cgroup.procs")) for h in ("", "unified", "systemd"))
    if not readable:
        pytest.skip("this machine shows no cgroup tree for the test's own process")
    assert os.getpid() in systemd_unit.unit_pids(_show(group, "0"), "u.service")


@pytest.fixture
def stopped_child():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # pylint: disable=consider-using-with
    os.kill(child.pid, signal.SIGSTOP)
    for _attempt in range(500):  # the stop takes effect when the kernel next schedules the child
        with open("/proc/%d/stat" % child.pid, encoding="utf-8", errors="replace") as handle:
            if handle.read().rpartition(")")[2].split()[0] == "T":
                break
        time.sleep(0.01)
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def test_stopped_pids_reads_the_real_proc_by_default(stopped_child):
    assert systemd_unit.stopped_pids([os.getpid(), stopped_child]) == [stopped_child]


def test_a_process_gone_in_the_middle_is_skipped_and_the_rest_are_read(tmp_path):
    (tmp_path / "4302").mkdir()
    (tmp_path / "4302" / "stat").write_text("4302 (python3) T 1 1 1")
    assert systemd_unit.stopped_pids([4301, 4302], proc_root=str(tmp_path)) == [4302]


def test_a_command_name_that_is_not_utf8_is_read(tmp_path):
    (tmp_path / "4300").mkdir()
    (tmp_path / "4300" / "stat").write_bytes(b"4300 (py\xff\xfe) T 1 1 1")
    assert systemd_unit.stopped_pids([4300], proc_root=str(tmp_path)) == [4300]


# ------------------------------------------------------------------------------------------------ journald's rate limit
def test_only_suppressed_messages_lines_count():
    text = ("Suppressed 5 entries from sglang-main.service\n"  # not journald's wording
            "Dropped 5 messages from sglang-main.service\n"
            "Suppressed 5 messages to sglang-main.service\n"
            "Suppressed five messages from sglang-main.service\n"
            "Suppressed 2 messages from /system.slice/sglang-main.service.\n")
    assert systemd_unit.suppressed_count(text, "sglang-main.service") == 2


def test_the_main_process_start_half_a_second_after_boot():
    assert systemd_unit.main_started_at({"ExecMainStartTimestampMonotonic": "500000"}, now=1000.0, monotonic_now=65.0) == 935.5


# ------------------------------------------------------------------------------------------------ JournalFollower
FAKE = r'''
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
follow = "--follow" in sys.argv
calls = os.path.join(here, "calls.jsonl")
with open(calls, "a") as handle:
    handle.write(json.dumps(sys.argv[1:]) + "\n")
def entry(message, cursor=None):
    data = {"__REALTIME_TIMESTAMP": "1764493321000000", "_PID": "4242", "SYSLOG_IDENTIFIER": "sglang", "MESSAGE": message}
    if cursor:
        data["__CURSOR"] = cursor
    return json.dumps(data).encode() + b"\n"
out = sys.stdout.buffer
if not follow:
    out.write(entry("caught up", "s=1;i=9"))
    out.flush()
    sys.exit(1)  # a journal file it could not read: what it printed still counts
out.write(entry("first", "s=1;i=1") + b"{broken json\n" + entry("no cursor") + entry("after the broken line"))
out.flush()
time.sleep(60)
'''


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake ``journalctl`` on PATH (the follower's default command); returns a reader of its recorded calls."""
    script = tmp_path / "fake_journalctl.py"
    script.write_text(FAKE)
    wrapper = tmp_path / "journalctl"
    wrapper.write_text("#!/bin/sh\nexec '%s' '%s' \"$@\"\n" % (sys.executable, script))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", "%s%s%s" % (tmp_path, os.pathsep, os.environ.get("PATH", "")))

    def calls():
        with open(str(tmp_path / "calls.jsonl"), encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]
    return calls


def _read_until(follower, count):
    entries = []
    for _attempt in range(200):  # a bound against a hang only; nothing is timed
        entries.extend(follower.read(0.05))
        if len(entries) >= count:
            break
    return entries


def test_the_follower_s_commands_and_what_it_hands_out(fake):
    follower = JournalFollower("sglang-main.service", "s=0;i=0", since_epoch=0.0)
    try:
        entries = _read_until(follower, 3)
        # a broken line in the middle of a chunk is skipped, the entries after it are not
        assert [e.message for e in entries] == ["first", "no cursor", "after the broken line"]
        assert [e.message for e in follower.catch_up()] == ["caught up"]
        assert follower.catch_up() == []  # the same entry is never handed out twice
    finally:
        follower.close()
    stream, first, second = fake()
    assert stream == ["--follow", "--no-pager", "--quiet", "--all", "-o", "json", FIELDS, "-u", "sglang-main.service",
                      "--after-cursor", "s=0;i=0"]
    # the catch-up starts after the last entry with a cursor that the stream handed out (one without a cursor does not move it)
    assert first == ["--no-pager", "--quiet", "--all", "-o", "json", FIELDS, "-u", "sglang-main.service", "--after-cursor", "s=1;i=1"]
    assert second == ["--no-pager", "--quiet", "--all", "-o", "json", FIELDS, "-u", "sglang-main.service", "--after-cursor", "s=1;i=9"]
    assert follower._proc.stdout.closed  # pylint: disable=protected-access  # close() leaves no pipe open
