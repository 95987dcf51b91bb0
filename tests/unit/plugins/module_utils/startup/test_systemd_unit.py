# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for the systemd helpers of the launch: pure parsers, the unit's exit judgement, HTTP readiness against
a tiny server on 127.0.0.1, and the journal follower against a fake ``journalctl`` that prints JSON slowly."""

from __future__ import annotations

import http.server
import json
import os
import socket
import stat
import sys
import threading
import time

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup import systemd as systemd_unit
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import (
    UNIT_PROPERTIES,
    JournalFollower,
    JournalLine,
    exit_description,
    http_status,
    journal_cursor,
    parse_cursor,
    parse_journal_json_line,
    parse_unit_show,
    readiness_path,
    show_unit,
    unit_exited,
)

SHOW = (
    "ActiveState=active\n"
    "SubState=running\n"
    "MainPID=4242\n"
    "NRestarts=0\n"
    "Result=success\n"
    "ExecMainCode=0\n"
    "ExecMainStatus=0\n"
    "InvocationID=6c1f0b1e9e0c4f7d8a3b2c1d0e9f8a7b\n"
)


# ------------------------------------------------------------------------------------------------ parse_unit_show
def test_parse_unit_show_reads_every_property():
    props = parse_unit_show(SHOW)
    assert props == {"ActiveState": "active", "SubState": "running", "MainPID": "4242", "NRestarts": "0", "Result": "success",
                     "ExecMainCode": "0", "ExecMainStatus": "0", "InvocationID": "6c1f0b1e9e0c4f7d8a3b2c1d0e9f8a7b"}
    assert set(props) == set(UNIT_PROPERTIES)


def test_parse_unit_show_keeps_equals_in_values_and_skips_other_lines():
    text = "ExecStart={ path=/usr/bin/sglang ; argv[]=sglang serve --config=/etc/sglang/main.yaml }\nnot a property\n\nInvocationID=\n"
    assert parse_unit_show(text) == {"ExecStart": "{ path=/usr/bin/sglang ; argv[]=sglang serve --config=/etc/sglang/main.yaml }",
                                     "InvocationID": ""}
    assert parse_unit_show("") == {}


def test_show_unit_asks_for_the_followed_properties():
    calls = []

    def run(args):
        calls.append(args)
        return 0, SHOW, ""

    assert show_unit(run, "sglang-main.service")["MainPID"] == "4242"
    assert calls == [["systemctl", "show", "-p", ",".join(UNIT_PROPERTIES), "sglang-main.service"]]


# ------------------------------------------------------------------------------------------------ journal JSON
def _entry(**fields):
    base = {"__REALTIME_TIMESTAMP": "1764493321530117", "_PID": "4242", "SYSLOG_IDENTIFIER": "sglang", "_COMM": "python3",
            "MESSAGE": "[2026-11-30 09:02:09 TP0] Init parallel begin."}
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def test_parse_journal_json_line_reads_time_pid_identifier_and_message():
    entry = parse_journal_json_line(_entry() + b"\n")
    assert entry == JournalLine(1764493321.530117, 4242, "sglang", "[2026-11-30 09:02:09 TP0] Init parallel begin.")


def test_parse_journal_json_line_decodes_a_byte_array_message_leniently():
    raw = list("Load weight begin. ".encode()) + [0xFF, 0xFE] + list("caf\u00e9".encode())
    entry = parse_journal_json_line(_entry(MESSAGE=raw))
    assert entry.message == "Load weight begin. \ufffd\ufffdcaf\u00e9"
    assert parse_journal_json_line(_entry(MESSAGE=[72, "x", 105])).message == "Hi"


@pytest.mark.parametrize("message, expected", [(None, ""), (12, "12")], ids=["null", "number"])
def test_parse_journal_json_line_tolerates_odd_message_types(message, expected):
    assert parse_journal_json_line(_entry(MESSAGE=message)).message == expected


def test_parse_journal_json_line_falls_back_to_comm_and_tolerates_missing_fields():
    entry = parse_journal_json_line(_entry(SYSLOG_IDENTIFIER=..., _PID=..., __REALTIME_TIMESTAMP="soon"))
    assert entry == JournalLine(0.0, None, "python3", "[2026-11-30 09:02:09 TP0] Init parallel begin.")
    assert parse_journal_json_line(b'{"MESSAGE": "x", "_PID": "12a"}') == JournalLine(0.0, None, "", "x")


@pytest.mark.parametrize("raw", [
    b"",
    b"   \n",
    b'{"MESSAGE": "cut in the mid',
    b"not json at all",
    b'["a", "list"]',
    b'"a string"',
    b"\xff\xfe{garbage",
], ids=["empty", "blank", "truncated", "text", "list", "string", "binary"])
def test_parse_journal_json_line_returns_none_for_broken_lines(raw):
    assert parse_journal_json_line(raw) is None


# ------------------------------------------------------------------------------------------------ cursor
def test_parse_cursor_takes_the_last_cursor_line():
    text = "-- cursor: s=old;i=1\nsome line\n-- cursor: s=0f3c;i=2a9;b=77;m=1f;t=64;x=9e  \n"
    assert parse_cursor(text) == "s=0f3c;i=2a9;b=77;m=1f;t=64;x=9e"


@pytest.mark.parametrize("text", ["", "-- No entries --\n", "cursor: s=1\n"])
def test_parse_cursor_without_a_cursor_line_is_none(text):
    assert parse_cursor(text) is None


def test_journal_cursor_asks_journalctl_for_the_end_of_the_journal():
    calls = []

    def run(args):
        calls.append(args)
        return 0, "-- cursor: s=abc;i=5\n", ""

    assert journal_cursor(run) == "s=abc;i=5"
    assert calls[0][0] == "journalctl" and "--show-cursor" in calls[0] and calls[0][calls[0].index("-n") + 1] == "0"


# ------------------------------------------------------------------------------------------------ readiness_path
@pytest.mark.parametrize("version, path", [
    ("0.5.20", "/ready"),
    ("0.5.23", "/ready"),
    ("0.5.23.post1", "/ready"),
    ("0.6.0", "/ready"),
    ("1.0", "/ready"),
    ("0.5.19", "/health"),
    ("0.5.3", "/health"),  # numeric, not string, comparison: 3 < 20
    ("0.4.10", "/health"),
    ("0.5", "/health"),
    ("0.5.20rc1", "/health"),
    ("latest", "/health"),
    ("", "/health"),
])
def test_readiness_path_by_version(version, path):
    assert readiness_path(version) == path


# ------------------------------------------------------------------------------------------------ unit_exited
BASE = {"ActiveState": "activating", "SubState": "start", "MainPID": "4242", "NRestarts": "0", "Result": "success",
        "ExecMainCode": "0", "ExecMainStatus": "0", "InvocationID": "new"}


def _props(**changes):
    return dict(BASE, **changes)


@pytest.mark.parametrize("props, expected", [
    (_props(), None),
    (_props(ActiveState="active", SubState="running"), None),
    (_props(ActiveState="failed", SubState="failed", MainPID="0", Result="exit-code", ExecMainCode="1", ExecMainStatus="1"),
     "the unit failed (Result=exit-code, exit status 1)"),
    (_props(ActiveState="inactive", SubState="dead", MainPID="0", ExecMainCode="1", ExecMainStatus="0"),
     "the unit stopped (Result=success, exit status 0)"),
    (_props(ActiveState="activating", SubState="auto-restart", MainPID="0", Result="signal", ExecMainCode="2", ExecMainStatus="9"),
     "the main process exited and systemd is restarting it (killed by signal 9/KILL)"),
    (_props(ActiveState="activating", SubState="start", MainPID="4300", NRestarts="1"), "systemd restarted the unit (NRestarts 0 -> 1)"),
    (_props(ActiveState="deactivating", SubState="stop-sigterm", MainPID="0", ExecMainCode="3", ExecMainStatus="11"),
     "the main process 4242 exited (killed by signal 11/SEGV)"),
], ids=["unchanged", "running", "failed", "stopped", "auto-restart", "restarted", "pid-gone"])
def test_unit_exited(props, expected):
    assert unit_exited(props, BASE) == expected


def test_unit_exited_ignores_an_inactive_unit_of_another_invocation_and_a_pid_that_was_not_known():
    assert unit_exited(_props(ActiveState="inactive", SubState="dead", InvocationID="old"), BASE) is None
    assert unit_exited(_props(MainPID="4300"), dict(BASE, MainPID="0")) is None
    assert unit_exited(_props(NRestarts=""), BASE) is None  # an unreadable counter is not a restart


@pytest.mark.parametrize("code, status, text", [
    ("1", "0", "exit status 0"),
    ("1", "2", "exit status 2"),
    ("2", "9", "killed by signal 9/KILL"),
    ("2", "15", "killed by signal 15/TERM"),
    ("3", "6", "killed by signal 6/ABRT"),
    ("2", "42", "killed by signal 42/?"),
    ("0", "0", "no exit status yet"),
    ("", "", "no exit status yet"),
])
def test_exit_description(code, status, text):
    assert exit_description({"ExecMainCode": code, "ExecMainStatus": status}) == text


# ------------------------------------------------------------------------------------------------ http_status
class _Handler(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        _Handler.seen.append((self.path, self.headers.get("Authorization")))
        code = {"/ready": 200, "/health": 503}.get(self.path, 404)
        body = b"{}"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def server():
    _Handler.seen = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_http_status_returns_the_status_and_sends_the_headers(server):
    assert http_status("127.0.0.1", server, "/ready", headers={"Authorization": "Bearer k-1"}) == 200
    assert http_status("127.0.0.1", server, "/health") == 503
    assert http_status("127.0.0.1", server, "/nope") == 404
    assert _Handler.seen == [("/ready", "Bearer k-1"), ("/health", None), ("/nope", None)]


def test_http_status_is_none_when_nothing_listens():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused and the port stays ours
    try:
        assert http_status("127.0.0.1", holder.getsockname()[1], "/ready") is None
    finally:
        holder.close()


def test_http_status_is_none_when_the_server_never_answers():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepted by the kernel, never answered
    try:
        assert http_status("127.0.0.1", silent.getsockname()[1], "/health", timeout=0.2) is None
    finally:
        silent.close()


def test_http_status_is_none_on_a_broken_answer():
    broken = socket.socket()
    broken.bind(("127.0.0.1", 0))
    broken.listen(1)

    def answer():
        conn = broken.accept()[0]
        conn.recv(4096)
        conn.sendall(b"this is not HTTP\r\n\r\n")
        conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        assert http_status("127.0.0.1", broken.getsockname()[1], "/ready") is None
    finally:
        thread.join(timeout=5)
        broken.close()


# ------------------------------------------------------------------------------------------------ JournalFollower
FAKE_JOURNALCTL = r'''
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "args.json"), "w") as handle:
    json.dump({"argv": sys.argv[1:], "pid": os.getpid()}, handle)
out = sys.stdout.buffer
def entry(message, pid="4242", ident="sglang", usec=1764493321000000):
    return json.dumps({"__REALTIME_TIMESTAMP": str(usec), "_PID": pid, "SYSLOG_IDENTIFIER": ident, "MESSAGE": message}).encode() + b"\n"
def put(data):
    out.write(data)
    out.flush()
    time.sleep(0.02)
put(entry("[2026-11-30 09:02:09 TP0] Init parallel begin."))
half = entry("[2026-11-30 09:02:11 TP0] Load weight begin. avail mem=46.92 GB", usec=1764493331650000)
put(half[:25])
put(half[25:])
put(b"{broken json\n\n")
# journalctl's JSON shows a field of 4096 bytes or more as null unless it is asked for every field whole (--all)
long_line = "[2026-11-30 09:02:08] server_args=ServerArgs(" + "x" * 5000 + ")"
put(entry(long_line if "--all" in sys.argv else None))
put(entry(list(b"bytes \xff end")) + entry("sglang-main.service: Main process exited, code=killed, status=9/KILL", pid="1", ident="systemd"))
if os.environ.get("FAKE_JOURNALCTL_EXIT") != "1":
    time.sleep(60)  # journalctl --follow never ends on its own
'''


@pytest.fixture
def journalctl(tmp_path, monkeypatch):
    """A fake journalctl executable in tmp_path; returns (path, args file)."""
    script = tmp_path / "fake_journalctl.py"
    script.write_text(FAKE_JOURNALCTL)
    wrapper = tmp_path / "journalctl"
    wrapper.write_text("#!/bin/sh\nexec '%s' '%s' \"$@\"\n" % (sys.executable, script))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("FAKE_JOURNALCTL_EXIT", raising=False)
    return str(wrapper), tmp_path / "args.json"


def _read_until(follower, count):
    """Read until ``count`` entries came (a generous bound only guards against a hang; no timing is asserted)."""
    entries = []
    for _attempt in range(200):
        entries.extend(follower.read(0.05))
        if len(entries) >= count:
            break
    return entries


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_journal_follower_streams_whole_entries_and_stops_journalctl(journalctl):
    path, args_file = journalctl
    follower = JournalFollower("sglang-main.service", "s=abc;i=5", since_epoch=1764493320.0, journalctl=path)
    try:
        entries = _read_until(follower, 5)
    finally:
        follower.close()
    assert [e.message for e in entries] == [
        "[2026-11-30 09:02:09 TP0] Init parallel begin.",
        "[2026-11-30 09:02:11 TP0] Load weight begin. avail mem=46.92 GB",
        "[2026-11-30 09:02:08] server_args=ServerArgs(" + "x" * 5000 + ")",  # whole: journalctl was asked for --all
        "bytes \ufffd end",
        "sglang-main.service: Main process exited, code=killed, status=9/KILL",
    ]
    assert entries[1] == JournalLine(1764493331.65, 4242, "sglang", entries[1].message)
    assert entries[4].identifier == "systemd" and entries[4].pid == 1
    recorded = json.loads(args_file.read_text())
    argv = recorded["argv"]
    assert argv[:2] == ["--follow", "--no-pager"] and argv[argv.index("-o") + 1] == "json" and "--all" in argv
    assert argv[argv.index("-u") + 1] == "sglang-main.service"
    assert argv[argv.index("--after-cursor") + 1] == "s=abc;i=5" and "--since" not in argv
    assert not _alive(recorded["pid"])  # close() ended the still-following journalctl


def test_journal_follower_without_a_cursor_starts_at_the_restart_time(journalctl):
    path, args_file = journalctl
    follower = JournalFollower("sglang-main.service", None, since_epoch=1764493320.25, journalctl=path)
    try:
        _read_until(follower, 1)
    finally:
        follower.close()
    argv = json.loads(args_file.read_text())["argv"]
    assert argv[argv.index("--since") + 1] == "@1764493320.250000" and "--after-cursor" not in argv


def test_journal_follower_paces_the_caller_after_journalctl_ended(journalctl, monkeypatch):
    path, args_file = journalctl
    monkeypatch.setenv("FAKE_JOURNALCTL_EXIT", "1")
    follower = JournalFollower("sglang-main.service", "s=abc", since_epoch=0.0, journalctl=path)
    try:
        assert len(_read_until(follower, 5)) == 5
        naps = []
        monkeypatch.setattr(systemd_unit.time, "sleep", naps.append)
        for _attempt in range(200):  # until journalctl has exited and the follower saw the end of its pipe
            assert follower.read(0.05) == []
            if naps:
                break
        assert naps == [0.05], "an ended pipe must not turn the caller's loop into a busy spin"
        assert follower.read(0.1) == [] and follower.read(0.2) == []
        assert naps == [0.05, 0.1, 0.2]
    finally:
        follower.close()
    assert not _alive(json.loads(args_file.read_text())["pid"])


def test_journal_follower_close_is_safe_twice_and_after_exit(journalctl, monkeypatch):
    path, args_file = journalctl
    monkeypatch.setenv("FAKE_JOURNALCTL_EXIT", "1")
    follower = JournalFollower("u.service", None, since_epoch=time.time(), journalctl=path)
    _read_until(follower, 5)
    follower.close()
    follower.close()
    assert not _alive(json.loads(args_file.read_text())["pid"])


CATCH_UP_JOURNALCTL = r'''
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
follow = "--follow" in sys.argv
with open(os.path.join(here, "follow.json" if follow else "oneshot.json"), "w") as handle:
    json.dump(sys.argv[1:], handle)
def entry(message, cursor):
    return json.dumps({"__CURSOR": cursor, "__REALTIME_TIMESTAMP": "1764493321000000", "_PID": "4242",
                       "SYSLOG_IDENTIFIER": "sglang", "MESSAGE": message}).encode() + b"\n"
out = sys.stdout.buffer
if not follow:  # the one-shot read sees what the stream has not delivered yet
    out.write(entry("RuntimeError: CUDA out of memory.", "s=1;i=2") + entry("Received sigquit", "s=1;i=3"))
    sys.exit(0)
out.write(entry("Traceback (most recent call last):", "s=1;i=1"))
out.flush()
time.sleep(0.3)  # journald's coalesced notification: the rest comes late
out.write(entry("RuntimeError: CUDA out of memory.", "s=1;i=2") + entry("Received sigquit", "s=1;i=3") + entry("later", "s=1;i=4"))
out.flush()
time.sleep(60)
'''


def test_catch_up_reads_what_the_stream_has_not_delivered_yet_and_the_stream_skips_it(tmp_path):
    script = tmp_path / "fake_journalctl.py"
    script.write_text(CATCH_UP_JOURNALCTL)
    wrapper = tmp_path / "journalctl"
    wrapper.write_text("#!/bin/sh\nexec '%s' '%s' \"$@\"\n" % (sys.executable, script))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    follower = JournalFollower("sglang-main.service", "s=0;i=9", since_epoch=0.0, journalctl=str(wrapper))
    try:
        first = _read_until(follower, 1)
        assert [entry.message for entry in first] == ["Traceback (most recent call last):"] and first[0].cursor == "s=1;i=1"
        caught = follower.catch_up()
        assert [entry.message for entry in caught] == ["RuntimeError: CUDA out of memory.", "Received sigquit"]
        oneshot = json.loads((tmp_path / "oneshot.json").read_text())
        assert "--follow" not in oneshot and "--all" in oneshot and oneshot[oneshot.index("--after-cursor") + 1] == "s=1;i=1"
        rest = _read_until(follower, 1)
        assert [entry.message for entry in rest] == ["later"]  # the stream's late copies of the caught-up entries are skipped
    finally:
        follower.close()


def test_journal_entries_carry_their_cursor_and_invocation():
    raw = json.dumps({"__CURSOR": "s=1;i=2", "MESSAGE": "x", "_SYSTEMD_INVOCATION_ID": "9f8e", "_PID": "7"}).encode()
    assert parse_journal_json_line(raw) == JournalLine(0.0, 7, "", "x", "s=1;i=2", "9f8e")
    systemds = json.dumps({"MESSAGE": "u.service: Main process exited", "INVOCATION_ID": "0a1d", "SYSLOG_IDENTIFIER": "systemd"}).encode()
    assert parse_journal_json_line(systemds).invocation == "0a1d"


# ------------------------------------------------------------------------------------------------ stopped processes
@pytest.mark.parametrize("stat_line, state", [
    ("4300 (python3) S 1 4300 4300 0 -1 4194560", "S"),
    ("4300 (sglang::sched (TP0)) T 1 4300 4300 0 -1", "T"),  # a name with spaces and parentheses of its own
    ("4301 (python3) t 4300 4300", "t"),
    ("garbage", ""),
])
def test_the_state_letter_of_a_proc_stat_line(stat_line, state):
    assert systemd_unit.process_state(stat_line) == state


def test_stopped_pids_reads_each_process_state(tmp_path):
    for pid, state in ((4300, "T"), (4301, "S"), (4302, "t")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text("%d (python3) %s 1 1 1" % (pid, state))
    assert systemd_unit.stopped_pids([4300, 4301, 4302, 4303], proc_root=str(tmp_path)) == [4300, 4302]  # 4303: gone


def test_unit_pids_come_from_the_units_cgroup_or_its_main_pid(tmp_path):
    group = tmp_path / "system.slice" / "sglang-main.service"
    group.mkdir(parents=True)
    (group / "cgroup.procs").write_text("4300\n4301\n")

    def run(args):
        assert args == ["systemctl", "show", "-p", "ControlGroup,MainPID", "sglang-main.service"]
        return 0, "ControlGroup=/system.slice/sglang-main.service\nMainPID=4300\n", ""
    assert systemd_unit.unit_pids(run, "sglang-main.service", cgroup_root=str(tmp_path)) == [4300, 4301]
    assert systemd_unit.unit_pids(run, "sglang-main.service", cgroup_root=str(tmp_path / "none")) == [4300]
    hybrid = tmp_path / "hybrid" / "unified" / "system.slice" / "sglang-main.service"
    hybrid.mkdir(parents=True)
    (hybrid / "cgroup.procs").write_text("4300\n4302\n")
    assert systemd_unit.unit_pids(run, "sglang-main.service", cgroup_root=str(tmp_path / "hybrid")) == [4300, 4302]


# ------------------------------------------------------------------------------------------------ journald's rate limit
def test_suppressed_messages_are_counted_for_the_unit_only():
    text = ("Suppressed 1180 messages from /system.slice/sglang-main.service\n"
            "Suppressed 7 messages from /system.slice/other.service\n"
            "Suppressed 20 messages from sglang-main.service\n"
            "Time spent on flushing to /var/log/journal is 1.2ms for 900 entries.\n")
    assert systemd_unit.suppressed_count(text, "sglang-main.service") == 1200
    assert systemd_unit.suppressed_count("", "sglang-main.service") == 0


def test_journal_suppressed_asks_journald_for_its_own_driver_messages_since_the_start():
    seen = []

    def run(args):
        seen.append(args)
        return 0, "Suppressed 3 messages from /system.slice/sglang-main.service\n", ""
    assert systemd_unit.journal_suppressed(run, "sglang-main.service", 1764493315.7) == 3
    assert seen == [["journalctl", "--no-pager", "-q", "-o", "cat", "_TRANSPORT=driver", "--since", "@1764493315"]]
    assert systemd_unit.journal_suppressed(lambda args: (1, "", "no journal"), "sglang-main.service", 0) == 0


def test_the_main_process_start_in_wall_clock_time():
    props = {"ExecMainStartTimestampMonotonic": "5000000"}  # 5 s after boot
    assert systemd_unit.main_started_at(props, now=1000.0, monotonic_now=65.0) == 940.0
    assert systemd_unit.main_started_at({"ExecMainStartTimestampMonotonic": "0"}, 1000.0, 65.0) is None
