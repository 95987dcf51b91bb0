# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One log line as the scanner reads it: who wrote it, SGLang's record prefix, and whether it is systemd's exit.

Why a module of its own: a line reaches the scanner two ways. The launch module follows the journal, whose
entries are structured already (message, PID, identifier, time): :func:`from_journal` takes them as they are,
without a text round trip. Logs pasted from elsewhere are text, and real ones arrive through relays that each
add their own prefix: ``journalctl`` in any ``short`` format (with or without the host), docker compose and
docker's json-file driver, Kubernetes and Google Cloud Logging exports (a time, sometimes a severity), Ray actors
(``(Actor pid=N)`` and Ray's ``[repeated Nx across cluster]`` suffix), and launchers that relay a child's
stderr as ``date | LEVEL | stderr | line`` (FastChat, Transformer Lab), Rust ``tracing`` formatters that re-emit
a Python logger's records (NVIDIA Dynamo), torch.distributed's ``[rank0]: `` before each line a rank writes, a CI
console's bracketed UTC time (Jenkins' Timestamper). :func:`parse_line` strips whatever the
transport added, relay inside relay. Both give the same :class:`LogLine`, so everything after this module reads
one shape. What a page or a UI did to a pasted line before anyone read it (HTML entities, a traceback flattened into
one line) is undone by :func:`restore_pasted` first.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import html
import json
import re
import time
from typing import List, NamedTuple, Optional

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# journalctl -o short / short-precise / short-iso / short-full, then ``host ident[pid]: message``.
_JOURNAL_RE = re.compile(
    r"^(?P<time>[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|(?:[A-Z][a-z]{2} )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [A-Z]{2,5})?)"
    r" (?P<host>[^\s\[\]:]+) (?P<ident>[^\s\[\]:]+)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)$"
)
# ... and syslog's time with the host left out by the paste: ``Mar 18 11:23:46 unit[931930]: message`` (PID required).
_JOURNAL_NO_HOST_RE = re.compile(
    r"^(?P<time>[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?) (?P<ident>[^\s\[\]:]+)\[(?P<pid>\d+)\]: ?(?P<msg>.*)$"
)
# docker compose: ``svc-1  | message`` (at least one space before the bar, at most one after it is eaten).
_COMPOSE_RE = re.compile(r"^(?P<svc>[A-Za-z0-9][\w.-]*) +\| ?(?P<msg>.*)$")
# Ray actors: ``(SGLangEngine pid=23902) message``, ``(pid=23902, ip=10.0.0.2) message``.
_RAY_RE = re.compile(r"^\((?:(?P<actor>[\w:.-]+) )?pid=(?P<pid>\d+)(?:, ip=[\w.:]+)?\) ?(?P<msg>.*)$")
# Ray's de-duplication suffix: ``message [repeated 7x across cluster]``.
_RAY_REPEATED_RE = re.compile(r" \[repeated \d+x across cluster\]$")
# Relays that put a time (and a level) before the program's own line, stripped in any combination (bounded): Rust's
# ``tracing`` formatter re-emitting a Python logger's records (NVIDIA Dynamo: ``2025-11-05T01:56:54.243403Z  INFO
# module.function: message``, the level padded to five characters),
# Kubernetes CRI (``2025-04-05T00:01:19.209237575Z stderr F ``), ``kubectl logs --timestamps`` and Google Cloud
# Logging exports (``ERROR 2025-04-05T00:01:19.209Z ``), and launchers relaying a child's stderr as
# ``2025-07-02 16:41:32 | ERROR | stderr | `` (one space after the last bar is the relay's, the rest is the line's).
_RELAY_RE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z {1,2}(?:TRACE|DEBUG|INFO|WARN|ERROR) [\w.:<>-]+: "
    r"|^(?:(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY) )?"
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d) (?:(?:stdout|stderr) [FP] )?"
    r"|^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \| [A-Z]+ +\| [\w.-]+ \| ?"
)
# A CI console's timestamp in brackets before each line (Jenkins' Timestamper: ``[2025-11-06T02:10:00.702Z] ``): ISO 8601
# in UTC with its ``Z``, which SGLang's own record time never carries; one space after the bracket is the prefix's.
_CI_TIME_RE = re.compile(r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\] ?")
# torch.distributed's per-rank prefix on what a rank writes to stderr (torchrun, elastic, bench_one_batch's ranks):
# ``[rank0]: Traceback (most recent call last):``; one space after the colon is the prefix's, the rest is the line's.
_TORCH_RANK_RE = re.compile(r"^\[rank\d+\]: ?")
# docker's json-file driver: ``{"log":"message\n","stream":"stderr","time":"..."}``.
_DOCKER_JSON_PREFIX = '{"log":'
# SGLang's record prefix: ``[2025-06-23 15:37:01 DP0 TP1 EP1] body`` or ``[23:17:01 TP7] body``.
_RECORD_RE = re.compile(
    r"^\[(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?|\d\d:\d\d:\d\d(?:[.,]\d+)?)"
    r"(?P<tags>(?: [A-Z][A-Z_]*\d+)*)\] ?(?P<body>.*)$"
)

# Pasted text that a page or a UI changed before it reached a reader (docs/startup-failure-causes.md, "Shapes"): HTML
# entities of a page that escaped the log (``File &quot;...&quot;``, ``KeyError: &apos;qwen3&apos;``), and a traceback
# flattened into one line (a UI or a log formatter that joined its lines with spaces: a frame, its code, carets and
# the exception one after another). Only these entities, only a line with two frames (or a header and a frame) run
# together: a real log line never has either.
_HTML_ENTITY_RE = re.compile(r"&(?:quot|apos|lt|gt|amp|#39|#x27);")
_FLATTENED_RE = re.compile(r'(?:most recent call last\):|, line \d+, in [\w<>.]+)\s{2,}File "')
# where a flattened traceback's lines began: a frame, a chain's separator or a new header after a blank line
_FLAT_BREAK_RE = re.compile(r'\s{2,}(?=File "[^"\n]*", line \d+)|\s+(?=During handling of the above exception|The above exception was '
                            r'the direct cause)|\s{2,}(?=Traceback \(most recent call last\):)')
# one flattened frame: the frame, then its code, Python 3.11's carets and the exception raised there, each optional
_FLAT_FRAME_RE = re.compile(r'^(?P<frame>File "[^"\n]*", line \d+, in [\w<>.]+)(?:\s+(?P<code>.*?))??'
                            r'(?:\s{2,}(?P<carets>[~^][~^ ]*?))?(?:\s+(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?))?\s*$')


def restore_pasted(line: str) -> List[str]:
    """A pasted line as the program wrote it: HTML entities a page added decoded, a flattened traceback split into its
    lines again (frames indented by two, code by four). Every other line comes back as it is, alone."""
    if "&" in line and _HTML_ENTITY_RE.search(line):
        line = html.unescape(line)
    if 'File "' not in line or not _FLATTENED_RE.search(line):
        return [line]
    lines: List[str] = []
    for piece in _FLAT_BREAK_RE.split(line):
        match = _FLAT_FRAME_RE.match(piece)
        if not match:
            lines.append(piece)
            continue
        lines.append("  " + match.group("frame"))
        lines.extend(indent + match.group(part) for indent, part in (("    ", "code"), ("    ", "carets"), ("", "exc"))
                     if match.group(part))
    return lines


# systemd's own lines about the unit: from the ``systemd`` identifier, or (pasted ``-o cat`` text) ``x.service: ``.
_SYSTEMD_LINE_RE = re.compile(r"^[\w@.\\-]+\.(?:service|scope): ")
# ... and those that say the unit's process is gone. The only place that knows these words.
_SYSTEMD_EXIT_RE = re.compile(
    r"(?:^|\.service: )(?:Main process exited, code=|Failed with result '|Control process exited, code=)"
    r"|^Unit \S+ entered failed state"  # systemd before v232
)
# ... and those that say a (new) process of the unit is starting: what the journal showed before belongs to the old one.
_SYSTEMD_START_RE = re.compile(r"^(?:Started|Starting) ")


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
    """Split SGLang's ``[time tags]`` record prefix off a message whose transport prefix is gone.

    An untagged time before an indented line is a relay's, not SGLang's: a harness that stamps each line of the
    server's output (``[06:31:47]   ValueError: ...``, the indentation of a traceback's last lines kept). SGLang's
    own records never start their text with indentation; the line is read as the relayed one, indentation kept."""
    if msg[:1] == "[":
        match = _RECORD_RE.match(msg)
        if match and not match.group("tags") and match.group("body").startswith(("  ", "\t")):
            body = match.group("body")
            return LogLine(raw, body, pid, ident, journal_time, None, None, body, False)
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
    msg, pid, ident, journal_time = _strip_relays(raw, None, None, None)
    return _split_record(raw, msg, pid, ident, journal_time)


def _strip_relays(msg: str, pid: Optional[str], ident: Optional[str],
                  journal_time: Optional[str]) -> "tuple[str, Optional[str], Optional[str], Optional[str]]":
    """Every transport prefix off ``msg``, relay inside relay (a Ray actor under docker compose ...; bounded), with
    the PID, identifier and time the prefixes carried (each overrides what an outer prefix or the journal said)."""
    if msg.startswith(_DOCKER_JSON_PREFIX):
        msg = _docker_json_message(msg)
    for _relay in range(3):
        stripped, pid_found, ident_found, time_found = _strip_prefix(msg)
        if stripped is msg:
            break
        msg = stripped
        pid = pid_found or pid
        ident = ident_found or ident
        journal_time = time_found or journal_time
    if msg.endswith("across cluster]"):
        msg = _RAY_REPEATED_RE.sub("", msg)
    return msg, pid, ident, journal_time


def _docker_json_message(text: str) -> str:
    """The ``log`` field of one line of docker's json-file log, without its newline; the text itself when broken."""
    try:
        entry = json.loads(text)
    except ValueError:
        return text
    message = entry.get("log") if isinstance(entry, dict) else None
    return message.rstrip("\r\n") if isinstance(message, str) else text


def _strip_prefix(msg: str) -> "tuple[str, Optional[str], Optional[str], Optional[str]]":
    """One transport prefix off ``msg``: (the rest, PID, identifier, journal time); ``msg`` itself when it has none."""
    first = msg[:1]
    if first == "[" and msg.startswith("[rank"):
        match = _TORCH_RANK_RE.match(msg)
        if match:
            return msg[match.end():], None, None, None
    if first == "[" and msg[11:12] == "T":
        match = _CI_TIME_RE.match(msg)
        if match:
            return msg[match.end():], None, None, None
    if first in ("", " ", "\t", "["):
        return msg, None, None, None
    if first == "(":
        match = _RAY_RE.match(msg)
        if match:
            return match.group("msg"), match.group("pid"), None, None
        return msg, None, None, None
    match = _JOURNAL_RE.match(msg) or _JOURNAL_NO_HOST_RE.match(msg)
    if match:
        return match.group("msg"), match.group("pid"), match.group("ident"), match.group("time")
    match = _RELAY_RE.match(msg)
    if match and match.end():
        return msg[match.end():], None, None, None
    match = _COMPOSE_RE.match(msg)
    if match:
        return match.group("msg"), None, None, None
    return msg, None, None, None


# A line that starts something (a record, a relay's prefix, a frame, code, an exception): never the rest of a line that a
# terminal broke at its width, which starts mid-text (a single space at most: the break fell before a space).
_LINE_START_RE = re.compile(
    r"^(?:\s\s|\t|\[|\(|\{|\d{4}-\d\d-\d\d|[A-Z][a-z]{2} +\d+ \d\d:|Traceback |File \"|[\w.]*(?:Error|Exception|Warning)\b"
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|[IWEF]\d{4} |usage: |During handling|The above exception|\$ )"
)
WRAP_MIN_WIDTH = 80  # narrower terminals are not looked for
WRAP_MIN_LINES = 3  # lines of exactly the widest length before that length is taken as the terminal's width
WRAP_MAX_PIECES = 64  # a line is joined from at most this many pieces (bounds the work on any input)
_PREFIX = 16  # a line that starts like the held one is the next update of a progress bar, not the rest of it


class Rewrapper:
    """Joins again the lines of pasted text that a terminal broke at its width (``push`` a line, get the lines to read).

    Why here, before anything reads a line: a paste from a terminal (tmux, a web console) breaks every long line at
    the same width, even inside a word, so a traceback header, a frame or a decisive message arrives in pieces that no
    rule reads. The width shows itself: the widest length, shared by several lines, and no line wider. A piece of that
    width is held until the next line tells whether it goes on (it starts mid-text) or something new starts.
    Lines padded with spaces to a window's width are not breaks, nor is a line that starts as the held one did (a
    progress bar's next update, as wide as the terminal). Journal entries are whole and never pass here.
    """

    __slots__ = ("width", "_widest", "_count", "_held", "_pieces", "_fixed")

    def __init__(self, width: Optional[int] = None) -> None:
        self.width = width
        self._fixed = width is not None
        self._widest = 0
        self._count = 0
        self._held: Optional[str] = None
        self._pieces = 0

    def push(self, text: str) -> List[str]:
        """``text`` (one line, without its newline) in; the lines to read now out (none while a piece is held)."""
        if "\x1b" in text:
            text = _ANSI_RE.sub("", text)  # a terminal's width counts what it shows
        if not self._fixed:
            self._measure(text)
        width = self.width
        out: List[str] = []
        held = self._held
        pieces = 1
        if held is not None:
            self._held = None
            if width and not starts_line(text) and text[:_PREFIX] != held[:_PREFIX]:
                text = held + text
                pieces = self._pieces + 1
            else:
                out.append(held)
        if width and len(text) == width * pieces and not text.endswith("  ") and pieces < WRAP_MAX_PIECES:
            self._held, self._pieces = text, pieces
            return out
        out.append(text)
        return out

    def flush(self) -> List[str]:
        """The piece held back, if any (no more lines come now)."""
        held, self._held = self._held, None
        return [] if held is None else [held]

    def _measure(self, text: str) -> None:
        length = len(text)
        if length < WRAP_MIN_WIDTH or text.endswith("  "):
            return
        if length > self._widest:
            self._widest, self._count = length, 1
        elif length == self._widest:
            self._count += 1
        self.width = self._widest if self._count >= WRAP_MIN_LINES else None


def starts_line(text: str) -> bool:
    """Whether ``text`` starts a line of its own (a record, a prefix, a frame, code, an exception), rather than being the
    rest of a line that a terminal broke; an empty line starts nothing but is no rest either."""
    return not text or bool(_LINE_START_RE.match(text))


class PasteMargin:
    """What a paste put before every line of a log (a Markdown quote ``> ``, code-block indentation of four spaces or a
    tab), learned from the first line and stripped from each line (``strip``) until a line comes without it.

    Why: a log posted in an issue or a chat as a quote or an indented block has every line shifted, so SGLang's records
    look like continuation lines and frames lose their place. Indentation counts as a margin only when the first line
    is a log line under it (a record, a prefix, a traceback's header): a tail that starts with a frame's indented code
    is not shifted. A line without the margin ends it for good. Journal entries never pass here.
    """

    __slots__ = ("margin", "_decided")

    def __init__(self, lines: Optional[List[str]] = None, margin: str = "") -> None:
        """``lines``: the whole text when the caller has it: a margin every line carries is the margin, whatever the
        first line is; ``margin``: the margin when the caller knows it already."""
        self.margin = margin or (_common_margin(lines) if lines else "")
        self._decided = bool(self.margin)

    def strip(self, line: str) -> str:
        """``line`` without the margin (a quote's one space after ``>`` goes too)."""
        if not self._decided:
            if not line.strip():
                return line
            self._decided = True
            if line.startswith(">"):
                self.margin = ">"
            else:
                for margin in ("\t", "    "):
                    rest = line[len(margin):]
                    if line.startswith(margin) and rest[:1] not in (" ", "\t") and starts_line(rest):
                        self.margin = margin
                        break
        margin = self.margin
        if not margin:
            return line
        if not line.startswith(margin):
            if line.strip():
                self.margin = ""  # not shifted after all (or no longer)
            return line
        rest = line[len(margin):]
        return rest[1:] if margin == ">" and rest.startswith(" ") else rest


def _common_margin(lines: List[str]) -> str:
    """The margin every non-blank line of ``lines`` starts with (at least five of them), or ""."""
    found = None
    seen = 0
    for line in lines:
        if not line.strip():
            continue
        margin = ">" if line.startswith(">") else "\t" if line.startswith("\t") else "    " if line.startswith("    ") else ""
        if not margin or (found is not None and margin != found):
            return ""
        found, seen = margin, seen + 1
    return found if found and seen >= 5 else ""


def wrap_width(lines: List[str]) -> Optional[int]:
    """The width a terminal broke ``lines`` at, or None: what :class:`Rewrapper` would learn from all of them."""
    probe = Rewrapper()
    for line in lines:
        probe._measure(_ANSI_RE.sub("", line) if "\x1b" in line else line)  # pylint: disable=protected-access
    return probe.width


def journal_time_text(timestamp: float) -> str:
    """A journal entry's time as ISO 8601 with microseconds, in UTC: how a followed line is shown."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(timestamp)) + (".%06d+00:00" % int((timestamp % 1) * 1e6))


def from_journal(message: str, pid: Optional[int], identifier: str, timestamp: float, hostname: str) -> List[LogLine]:
    """The lines of one structured journal entry, read as they are (the journal's fields need no parsing).

    Why a list: journald keeps a message with embedded newlines as one entry; each of its lines is a line of
    the log, and the lines after the first carry nothing of the entry, as in ``journalctl`` output. A relay's
    prefix inside the message (a unit that runs Ray, docker, a launcher) is stripped as :func:`parse_line` does. ``raw``
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
    msg, relay_pid, _ident, _time = _strip_relays(first, pid_text, ident, when)  # the unit may relay another's output
    lines = [_split_record(raw, msg, relay_pid, ident, when)]
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


def is_systemd_start(line: LogLine) -> bool:
    """Whether the line is systemd's word that it starts the unit (``Starting ...``, ``Started ...``).

    Why it matters: the launch follows the journal from a cursor taken before the restart, so the old process's
    last words (its stop, even systemd's own exit lines about it) can come first; they are not this start's.
    """
    return is_systemd_line(line) and bool(_SYSTEMD_START_RE.match(line.msg))
