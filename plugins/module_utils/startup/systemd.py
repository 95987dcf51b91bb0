# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Following a systemd unit while it starts: its journal as a stream, its state, its HTTP readiness.

The launch module needs to see a crash within about a second and readiness within half a second, so nothing
here sleeps on a fixed schedule: the journal is one long-lived ``journalctl --follow`` pipe read with
``select``, and the unit's state is one cheap ``systemctl show`` per tick. The parsing is pure and tested
on its own; the process handling is kept small.
"""
from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import time
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

UNIT_PROPERTIES = ("ActiveState", "SubState", "MainPID", "NRestarts", "Result", "ExecMainCode", "ExecMainStatus", "InvocationID")


class JournalLine(NamedTuple):
    """One journal entry: when (seconds since the epoch), who, the message text, and its cursor (where it came from)."""

    timestamp: float
    pid: Optional[int]
    identifier: str
    message: str
    cursor: Optional[str] = None
    invocation: Optional[str] = None  # the unit's invocation the entry belongs to (its process's, or systemd's words about it)


def parse_unit_show(text: str) -> Dict[str, str]:
    """``systemctl show -p A,B unit`` output (KEY=VALUE lines) as a dict."""
    props: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            props[key.strip()] = value.strip()
    return props


def parse_journal_json_line(raw: bytes) -> Optional[JournalLine]:
    """One line of ``journalctl -o json``; None for blank or broken lines (never raises).

    journald stores a MESSAGE that is not valid UTF-8 as a list of byte values; that is decoded leniently
    so a binary log line cannot break the follower.
    """
    raw = raw.strip()
    if not raw:
        return None
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    message = entry.get("MESSAGE", "")
    if isinstance(message, list):
        message = bytes(b & 0xFF for b in message if isinstance(b, int)).decode("utf-8", "replace")
    elif not isinstance(message, str):
        message = "" if message is None else str(message)
    try:
        timestamp = int(entry.get("__REALTIME_TIMESTAMP", "0")) / 1e6
    except (TypeError, ValueError):
        timestamp = 0.0
    pid_text = entry.get("_PID")
    pid = int(pid_text) if isinstance(pid_text, str) and pid_text.isdigit() else None
    identifier = str(entry.get("SYSLOG_IDENTIFIER") or entry.get("_COMM") or "")
    cursor = entry.get("__CURSOR")
    invocation = entry.get("_SYSTEMD_INVOCATION_ID") or entry.get("INVOCATION_ID")
    return JournalLine(timestamp, pid, identifier, message, cursor if isinstance(cursor, str) else None,
                       invocation if isinstance(invocation, str) else None)


def parse_cursor(text: str) -> Optional[str]:
    """The cursor from ``journalctl --show-cursor`` output (``-- cursor: s=...``), if any."""
    for line in reversed(text.splitlines()):
        if line.startswith("-- cursor: "):
            return line[len("-- cursor: "):].strip()
    return None


class JournalFollower:
    """A unit's journal from a cursor on, streamed through one ``journalctl --follow -o json`` process.

    journald tells followers about new entries at most every 250 ms (it coalesces its change notifications), so a
    dead process's last lines can reach ``--follow`` a quarter of a second late; :meth:`catch_up` reads the journal
    file directly once (a one-shot ``journalctl --after-cursor``), which sees them at once.
    """

    # Only the fields we read: a small record per line reaches us sooner (systemd >= 236). ``--all``: without it the
    # JSON output shows a field of 4096 bytes or more as null, and SGLang's server_args= line (and a long fatal
    # message) is longer than that.
    # The invocation fields tell the new process's lines from the old one's: journald stamps a unit's output with
    # _SYSTEMD_INVOCATION_ID, systemd its own words about the unit with INVOCATION_ID.
    FIELDS = "--output-fields=MESSAGE,_PID,SYSLOG_IDENTIFIER,_COMM,_SYSTEMD_INVOCATION_ID,INVOCATION_ID"

    def __init__(self, unit: str, cursor: Optional[str], since_epoch: float, journalctl: str = "journalctl") -> None:
        self._journalctl = journalctl
        self._unit = unit
        self._start = ["--after-cursor", cursor] if cursor else ["--since", "@%.6f" % since_epoch]
        cmd = [journalctl, "--follow", "--no-pager", "--quiet", "--all", "-o", "json", self.FIELDS, "-u", unit]
        # The cursor is exact; without one (an empty journal) the restart's wall-clock time bounds it.
        cmd += self._start
        # A stream, not a one-shot command: run_command cannot hand out a pipe that stays open while we read it.
        self._proc = subprocess.Popen(  # pylint: disable=consider-using-with,ansible-bad-function
            cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self._buffer = b""
        self._eof = False
        self._last_cursor: Optional[str] = None
        self._caught_up: set = set()  # cursors that catch_up() handed out: the stream delivers them again, later

    def catch_up(self) -> List[JournalLine]:
        """The entries written since the last one handed out, read from the journal at once (bounded, never raises)."""
        start = ["--after-cursor", self._last_cursor] if self._last_cursor else self._start
        cmd = [self._journalctl, "--no-pager", "--quiet", "--all", "-o", "json", self.FIELDS, "-u", self._unit] + start
        try:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=2, check=False)  # pylint: disable=ansible-bad-function
        except (OSError, subprocess.SubprocessError):
            return []
        lines = []
        for raw in done.stdout.split(b"\n"):
            entry = parse_journal_json_line(raw)
            if entry is not None and entry.cursor not in self._caught_up:
                lines.append(entry)
                if entry.cursor:
                    self._caught_up.add(entry.cursor)
                    self._last_cursor = entry.cursor
        return lines

    def read(self, timeout: float) -> List[JournalLine]:
        """Every complete entry available within ``timeout`` seconds (possibly none)."""
        stdout = self._proc.stdout
        if stdout is None or self._eof:
            time.sleep(timeout)  # journalctl is gone: keep the caller's pace rather than spin on an ended pipe
            return []
        lines: List[JournalLine] = []
        readable = select.select([stdout], [], [], timeout)[0]
        while readable:
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                self._eof = True
                break
            self._buffer += chunk
            readable = select.select([stdout], [], [], 0)[0]
        parts = self._buffer.split(b"\n")
        self._buffer = parts.pop()
        for raw in parts:
            entry = parse_journal_json_line(raw)
            if entry is None:
                continue
            if entry.cursor and entry.cursor in self._caught_up:
                self._caught_up.discard(entry.cursor)  # handed out by catch_up() already
                continue
            if entry.cursor and not self._caught_up:
                self._last_cursor = entry.cursor
            lines.append(entry)
        return lines

    def close(self) -> None:
        """Stop journalctl; bounded, never raises."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=2)
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def http_status(host: str, port: int, path: str, timeout: float = 0.5, headers: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """The HTTP status of a GET, or None when nothing answers (connection refused while the model loads)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=dict(headers or {}))
        response = conn.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException, socket.timeout):
        return None
    finally:
        conn.close()


def readiness_path(sglang_version: str) -> str:
    """``/ready`` from SGLang 0.5.20 on (cheap, no generation), ``/health`` before (503 while starting)."""
    try:
        parts = tuple(int(p) for p in sglang_version.split(".")[:3])
    except ValueError:
        return "/health"
    return "/ready" if parts >= (0, 5, 20) else "/health"


def unit_exited(props: Mapping[str, str], baseline: Mapping[str, str]) -> Optional[str]:
    """Why the unit's start is over, judged from its state alone; None while it may still come up.

    ``baseline`` is the state read right after the start was requested: a move of the restart counter or
    a new main PID means the process we follow is gone, even if systemd already started another one.
    """
    active, sub = props.get("ActiveState", ""), props.get("SubState", "")
    if active == "failed":
        return "the unit failed (Result=%s, %s)" % (props.get("Result", "?"), exit_description(props))
    if active == "inactive" and props.get("InvocationID") == baseline.get("InvocationID"):
        return "the unit stopped (Result=%s, %s)" % (props.get("Result", "?"), exit_description(props))
    if sub == "auto-restart":
        return "the main process exited and systemd is restarting it (%s)" % exit_description(props)
    try:
        before, now = baseline.get("NRestarts") or "0", props.get("NRestarts") or "0"
        if int(now) > int(before):
            return "systemd restarted the unit (NRestarts %s -> %s)" % (before, now)
    except ValueError:
        pass
    main_pid, base_pid = props.get("MainPID", "0"), baseline.get("MainPID", "0")
    if base_pid not in ("", "0") and main_pid != base_pid:
        return "the main process %s exited (%s)" % (base_pid, exit_description(props))
    return None


def exit_description(props: Mapping[str, str]) -> str:
    """``status=9/KILL``-style text from ExecMainCode/ExecMainStatus, as systemctl status words it."""
    code, status = props.get("ExecMainCode", ""), props.get("ExecMainStatus", "")
    # ExecMainCode: 1 exited, 2 killed, 3 dumped (CLD_* values)
    if code == "1":
        return "exit status %s" % status if status else "exited, status not given"
    if code in ("2", "3"):
        names = {"1": "HUP", "2": "INT", "3": "QUIT", "6": "ABRT", "9": "KILL", "11": "SEGV", "15": "TERM"}
        return "killed by signal %s/%s" % (status, names.get(status, "?")) if status else "killed by a signal not given"
    return "no exit status yet"


Runner = Callable[[List[str]], Tuple[int, str, str]]
"""Runs a command and returns (rc, stdout, stderr): the module passes ``module.run_command``."""


def show_unit(run: Runner, unit: str) -> Dict[str, str]:
    """The few unit properties the launch follows."""
    return parse_unit_show(run(["systemctl", "show", "-p", ",".join(UNIT_PROPERTIES), unit])[1])


def journal_cursor(run: Runner) -> Optional[str]:
    """The journal's current end, so following starts exactly after it (None on an empty journal)."""
    return parse_cursor(run(["journalctl", "--no-pager", "-q", "-n", "0", "--show-cursor"])[1])


def unit_pids(run: Runner, unit: str, cgroup_root: str = "/sys/fs/cgroup") -> List[int]:
    """Every process of the unit (its cgroup's), the main PID alone when the cgroup cannot be read (a container may
    not show it)."""
    props = parse_unit_show(run(["systemctl", "show", "-p", "ControlGroup,MainPID", unit])[1])
    group = props.get("ControlGroup", "")
    pids: List[int] = []
    # cgroup v2 at the root; a hybrid layout has it under unified/ (and v1's systemd hierarchy keeps the same list)
    for hierarchy in ("", "unified", "systemd") if group else ():
        try:
            with open(os.path.join(cgroup_root, hierarchy, group.lstrip("/"), "cgroup.procs"), encoding="ascii") as handle:
                pids = [int(text) for text in handle.read().split() if text.isdigit()]
        except OSError:
            continue
        if pids:
            break
    main = props.get("MainPID", "0")
    if not pids and main.isdigit() and main != "0":
        pids = [int(main)]
    return pids


def process_state(stat_text: str) -> str:
    """The state letter of a ``/proc/<pid>/stat`` line (``R``, ``S``, ``D``, ``T`` stopped, ``t`` traced...); the
    command name in parentheses may itself hold spaces and parentheses, so the state is read after the last ``)``."""
    _head, sep, tail = stat_text.rpartition(")")
    fields = tail.split() if sep else []
    return fields[0] if fields else ""


def stopped_pids(pids: List[int], proc_root: str = "/proc") -> List[int]:
    """Those of ``pids`` that are stopped (state T or t: SIGSTOP, a debugger); processes gone meanwhile are left out."""
    stopped = []
    for pid in pids:
        try:
            with open(os.path.join(proc_root, str(pid), "stat"), encoding="utf-8", errors="replace") as handle:
                state = process_state(handle.read())
        except OSError:
            continue
        if state in ("T", "t"):
            stopped.append(pid)
    return stopped


def suppressed_count(text: str, unit: str) -> int:
    """How many of the unit's messages journald dropped, from its own ``Suppressed N messages from <unit>`` lines
    (``-o cat`` text; the unit may be named by its cgroup path, ``/system.slice/<unit>``)."""
    total = 0
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 5 and words[0] == "Suppressed" and words[2] == "messages" and words[3] == "from" and words[1].isdigit():
            if words[4].rstrip(".").rsplit("/", 1)[-1] == unit:
                total += int(words[1])
    return total


def journal_suppressed(run: Runner, unit: str, since_epoch: float) -> int:
    """Messages of the unit that journald's rate limit dropped since ``since_epoch`` (journald says so in its own
    driver messages, not in the unit's journal); 0 when it dropped none or cannot be asked."""
    rc, out, _err = run(["journalctl", "--no-pager", "-q", "-o", "cat", "_TRANSPORT=driver", "--since", "@%d" % int(since_epoch)])
    return suppressed_count(out, unit) if rc == 0 else 0


def main_started_at(props: Mapping[str, str], now: float, monotonic_now: float) -> Optional[float]:
    """When the unit's main process started, in seconds since the epoch, from ``ExecMainStartTimestampMonotonic``
    (microseconds on the monotonic clock); None when it never started."""
    try:
        started = int(props.get("ExecMainStartTimestampMonotonic", "0")) / 1e6
    except ValueError:
        return None
    return now - (monotonic_now - started) if started > 0 else None
