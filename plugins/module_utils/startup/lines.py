# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One log line as the scanner reads it: who wrote it, SGLang's record prefix, and whether it is systemd's exit.

Why a module of its own: a line reaches the scanner two ways. The launch module follows the journal, whose
entries are structured already (message, PID, identifier, time): :func:`from_journal` takes them as they are,
without a text round trip. Logs pasted from elsewhere (``journalctl`` in any ``short`` format, ``cat``,
docker compose, a Ray actor) are text: :func:`parse_line` strips whatever prefix the transport added. Both give
the same :class:`LogLine`, so everything after this module reads one shape.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import re
import time
from typing import List, NamedTuple, Optional

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# journalctl -o short / short-precise / short-iso / short-full, then ``host ident[pid]: message``.
_JOURNAL_RE = re.compile(
    r"^(?P<time>[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|(?:[A-Z][a-z]{2} )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [A-Z]{2,5})?)"
    r" (?P<host>\S+) (?P<ident>[^\s\[\]:]+)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)$"
)
# docker compose: ``svc-1  | message`` (at least one space before the bar, at most one after it is eaten).
_COMPOSE_RE = re.compile(r"^(?P<svc>[A-Za-z0-9][\w.-]*) +\| ?(?P<msg>.*)$")
# Ray actors: ``(SGLangEngine pid=23902) message``.
_RAY_RE = re.compile(r"^\((?P<actor>[\w:.-]+) pid=(?P<pid>\d+)(?:, ip=[\d.]+)?\) ?(?P<msg>.*)$")
# SGLang's record prefix: ``[2025-06-23 15:37:01 DP0 TP1 EP1] body`` or ``[23:17:01 TP7] body``.
_RECORD_RE = re.compile(
    r"^\[(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?|\d\d:\d\d:\d\d(?:[.,]\d+)?)"
    r"(?P<tags>(?: [A-Z][A-Z_]*\d+)*)\] ?(?P<body>.*)$"
)

# systemd's own lines about the unit: from the ``systemd`` identifier, or (pasted ``-o cat`` text) ``x.service: ``.
_SYSTEMD_LINE_RE = re.compile(r"^[\w@.\\-]+\.(?:service|scope): ")
# ... and those that say the unit's process is gone. The only place that knows these words.
_SYSTEMD_EXIT_RE = re.compile(
    r"(?:^|\.service: )(?:Main process exited, code=|Failed with result '|Control process exited, code=)"
)


class LogLine(NamedTuple):
    """One log line split into its parts, parsed once and read by several decisions."""

    raw: str  # the line as a log shows it, without colour codes and line ending (last_lines, learned secrets)
    msg: str  # the program's message, journal / compose / Ray prefix removed (indentation kept)
    pid: Optional[str]  # journal or Ray PID, when the transport gave one
    ident: Optional[str]  # journal identifier (``sglang``, ``systemd``)
    journal_time: Optional[str]
    log_time: Optional[str]  # SGLang's own ``[...]`` time
    tags: Optional[str]  # SGLang rank tags (``TP1``, ``DP0 TP0 EP0``); "" for an untagged record, None for no record
    body: str  # the message without SGLang's record prefix
    record: bool  # the message starts with SGLang's ``[time tags]`` prefix


def _split_record(raw: str, msg: str, pid: Optional[str], ident: Optional[str], journal_time: Optional[str]) -> LogLine:
    """Split SGLang's ``[time tags]`` record prefix off a message whose transport prefix is gone."""
    if msg[:1] == "[":
        match = _RECORD_RE.match(msg)
        if match:
            return LogLine(raw, msg, pid, ident, journal_time, match.group("time"), match.group("tags").strip(),
                           match.group("body"), True)
    return LogLine(raw, msg, pid, ident, journal_time, None, None, msg, False)


def parse_line(line: str) -> LogLine:
    """Strip colour codes and any journal / compose / Ray prefix, then split off SGLang's record prefix.

    Why: a pasted SGLang log reaches the scanner bare (``journalctl -o cat``), with a journal prefix
    (``Nov 30 09:01:55.123456 host sglang[123]: ...``), from docker compose or from a Ray actor; every later
    decision works on the message and its rank tags, whatever the transport added.
    """
    raw = line.rstrip("\r\n")
    if "\x1b" in raw:
        raw = _ANSI_RE.sub("", raw)
    msg = raw
    pid = ident = journal_time = None
    match = _JOURNAL_RE.match(msg)
    if match:
        msg, pid, ident, journal_time = match.group("msg"), match.group("pid"), match.group("ident"), match.group("time")
    if msg[:1] not in ("", " ", "\t", "[", "("):
        match = _COMPOSE_RE.match(msg)
        if match:
            msg = match.group("msg")
    if msg[:1] == "(":
        match = _RAY_RE.match(msg)
        if match:
            msg, pid = match.group("msg"), match.group("pid")
    return _split_record(raw, msg, pid, ident, journal_time)


def journal_time_text(timestamp: float) -> str:
    """A journal entry's time as ISO 8601 with microseconds, in UTC: how a followed line is shown."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(timestamp)) + (".%06d+00:00" % int((timestamp % 1) * 1e6))


def from_journal(message: str, pid: Optional[int], identifier: str, timestamp: float, hostname: str) -> List[LogLine]:
    """The lines of one structured journal entry, read as they are (no prefix to parse).

    Why a list: journald keeps a message with embedded newlines as one entry; each of its lines is a line of
    the log, and the lines after the first carry nothing of the entry, as in ``journalctl`` output. ``raw``
    is the line as ``journalctl -o short-iso`` would show it (with microseconds, in UTC): what the failure
    report's last lines show.
    """
    first, newline, rest = message.partition("\n")
    first = first.rstrip("\r\n")
    if "\x1b" in first:
        first = _ANSI_RE.sub("", first)
    ident = identifier or "sglang"
    pid_text = str(pid) if pid else None
    when = journal_time_text(timestamp)
    raw = "%s %s %s%s: %s" % (when, hostname, ident, "[%s]" % pid_text if pid_text else "", first)
    lines = [_split_record(raw, first, pid_text, ident, when)]
    if newline:
        lines.extend(parse_line(part) for part in rest.split("\n"))
    return lines


def is_systemd_line(line: LogLine) -> bool:
    """Whether systemd wrote the line (about the unit), rather than the unit's own processes."""
    return line.ident == "systemd" or bool(_SYSTEMD_LINE_RE.match(line.msg))


def is_systemd_exit(line: LogLine) -> bool:
    """Whether the line is systemd's word that the unit's process ended (``Main process exited, code=...``).

    Why it matters: systemd logs this after the process's own last output, so it both ends a start that did
    not reach ready and tells the launch that the dead process's lines have all arrived.
    """
    return is_systemd_line(line) and bool(_SYSTEMD_EXIT_RE.search(line.msg))
