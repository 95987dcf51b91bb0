# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Structured journal entries into the scanner (lines.from_journal, StartupLogScanner.feed_entry), and systemd's exit
line, recognised in one place (lines.is_systemd_exit)."""

from __future__ import annotations

import os
import time

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import (
    LogLine, from_journal, is_systemd_exit, is_systemd_line, journal_time_text, parse_line)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "startup_logs")
T0 = 1764493315.25


def _entries(name):
    """A log file as journal entries: time, PID and identifier from the file's journal prefix where it has one."""
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        texts = handle.read().splitlines()
    entries = []
    for index, text in enumerate(texts):
        line = parse_line(text)
        pid = int(line.pid) if line.pid and line.pid.isdigit() else (None if line.ident == "systemd" else 4242)
        entries.append((line.msg, pid, line.ident or "sglang", T0 + index * 0.125))
    return entries


def _as_text(message, pid, identifier, timestamp, hostname):
    """What sglang_launch used to make of an entry before the scanner read entries: a journalctl-style line."""
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(timestamp)) + (".%06d+00:00" % int((timestamp % 1) * 1e6))
    return "%s %s %s%s: %s" % (when, hostname, identifier or "sglang", "[%d]" % pid if pid else "", message)


CASES = sorted(name for name in os.listdir(DATA) if name.endswith(".log"))


# ------------------------------------------------------------------------------------------------ from_journal
def test_from_journal_keeps_the_fields_and_shows_the_line_as_journalctl_does():
    line, = from_journal("[2026-11-30 09:02:11 TP1] Load weight begin. avail mem=46.92 GB", 4300, "sglang", T0, "lab1")
    assert line == LogLine(
        raw="2025-11-30T09:01:55.250000+00:00 lab1 sglang[4300]: [2026-11-30 09:02:11 TP1] Load weight begin. avail mem=46.92 GB",
        msg="[2026-11-30 09:02:11 TP1] Load weight begin. avail mem=46.92 GB", pid="4300", ident="sglang",
        journal_time="2025-11-30T09:01:55.250000+00:00", log_time="2026-11-30 09:02:11", tags="TP1",
        body="Load weight begin. avail mem=46.92 GB", record=True)


def test_from_journal_without_pid_or_identifier_and_with_colour_codes():
    line, = from_journal("\x1b[33m  File \"x.py\", line 1, in f\x1b[0m\r", None, "", T0, "lab1")
    assert (line.raw, line.msg, line.pid, line.ident, line.record) == (
        "2025-11-30T09:01:55.250000+00:00 lab1 sglang:   File \"x.py\", line 1, in f", "  File \"x.py\", line 1, in f", None, "sglang", False)


def test_a_multi_line_entry_is_one_line_per_line_and_only_the_first_carries_the_entry():
    first, second, third = from_journal("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nValueError: x", 7, "sglang", T0, "h")
    assert first.raw == "2025-11-30T09:01:55.250000+00:00 h sglang[7]: Traceback (most recent call last):" and first.pid == "7"
    assert (second.raw, second.msg, second.pid) == ("  File \"x.py\", line 1, in f", "  File \"x.py\", line 1, in f", None)
    assert (third.msg, third.pid, third.ident) == ("ValueError: x", None, None)


def test_journal_time_text_is_utc_with_microseconds():
    assert journal_time_text(0.0) == "1970-01-01T00:00:00.000000+00:00"
    assert journal_time_text(T0) == "2025-11-30T09:01:55.250000+00:00"


def test_an_empty_entry_is_still_a_line():
    """An empty message is a line of the process (its prefix is not empty): it starts the first phase as before."""
    scanner = StartupLogScanner()
    scanner.feed_entry("", 4300, "sglang", T0)
    assert scanner.current_phase() == "process_started" and scanner.result()["last_lines"] == [
        "2025-11-30T09:01:55.250000+00:00 localhost sglang[4300]: "]


# ------------------------------------------------------------------------------------------------ systemd's lines
@pytest.mark.parametrize("line, systemd, exit_line", [
    (from_journal("sglang-main.service: Main process exited, code=exited, status=1/FAILURE", 1, "systemd", T0, "h")[0], True, True),
    (from_journal("sglang-main.service: Failed with result 'exit-code'.", 1, "systemd", T0, "h")[0], True, True),
    (from_journal("sglang-main.service: Control process exited, code=killed, status=15/TERM", 1, "systemd", T0, "h")[0], True, True),
    (from_journal("Started sglang-main.service - SGLang server.", 1, "systemd", T0, "h")[0], True, False),
    (from_journal("sglang-main.service: Consumed 1min 2.345s CPU time.", 1, "systemd", T0, "h")[0], True, False),
    (from_journal("[2026-11-30 09:02:11] Main process exited, code=0 (a log line of SGLang's)", 4300, "sglang", T0, "h")[0], False, False),
    (parse_line("Nov 30 11:20:45 gpu01 systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL"), True, True),
    (parse_line("sglang.service: Main process exited, code=killed, status=9/KILL"), True, True),  # journalctl -o cat
    (parse_line("sglang.service: Failed with result 'signal'."), True, True),
    (parse_line("[2026-11-30 09:02:11] Failed with result 'x'"), False, False),
], ids=["main-exited", "failed-with-result", "control-exited", "started", "consumed", "sglang-own-line", "short", "cat", "cat-result",
        "record"])
def test_systemd_lines_and_exit_lines(line, systemd, exit_line):
    assert (is_systemd_line(line), is_systemd_exit(line)) == (systemd, exit_line)


def test_the_scanner_notes_systemds_exit_line_even_after_its_verdict_froze():
    scanner = StartupLogScanner()
    scanner.feed_entry("launch_server.py: error: unrecognized arguments: --enable-reasoning", 4300, "sglang", T0)
    assert scanner.is_final and not scanner.systemd_exit_seen
    scanner.feed_entry("[2026-11-30 09:02:11] Main process exited, code=1", 4300, "sglang", T0 + 0.1)  # not systemd's
    assert not scanner.systemd_exit_seen
    scanner.feed_entry("sglang-main.service: Main process exited, code=exited, status=2/INVALIDARGUMENT", 1, "systemd", T0 + 0.2)
    assert scanner.systemd_exit_seen and scanner.result()["cause"] == "invalid_arguments"


# ------------------------------------------------------------------------------------------------ entries == text
@pytest.mark.parametrize("name", CASES, ids=[name[:-4] for name in CASES])
def test_entries_give_exactly_the_verdict_their_journal_text_gave(name):
    """Fed as entries, every log gives the result it gave as the journalctl-style text the launch used to make of them:
    verdict, cause, hint, traceback, phases with their times, and last lines."""
    entries = _entries(name)
    by_entry, by_text = StartupLogScanner(hostname="lab1"), StartupLogScanner()
    for message, pid, identifier, timestamp in entries:
        by_entry.feed_entry(message, pid, identifier, timestamp)
        by_text.feed(_as_text(message, pid, identifier, timestamp, "lab1"), timestamp)
    assert by_entry.result() == by_text.result()
    assert by_entry.systemd_exit_seen == any(identifier == "systemd" and "Main process exited" in message
                                             for message, _pid, identifier, _ts in entries)
