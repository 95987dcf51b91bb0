# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Startup-log scanner for SGLang: follow the phases of a start and decide ready / failed / starting.

Why a pure scanner: the launch module follows the unit's journal and must give a verdict within about a
second of the fatal line, with the whole traceback, a cause label and a concrete hint
(docs/reference/sglang.md#launch-contract). The state machine that reads a start lives here, away from systemd and
HTTP, so it is tested on real SGLang logs copied from public issues (``tests/unit/plugins/module_utils/data/startup_logs``). What a
line is made of lives in :mod:`.lines`, what a failure means (labels, rules, hints) in :mod:`.causes`.

What it knows about SGLang logs (docs/reference/sglang.md#startup-log-lines, #fatal-markers-and-exit):

* records look like ``[2026-11-30 09:01:58 TP1] message`` (older: ``[09:01:58 TP1]``); scheduler ranks add
  ``DP<n> PP<n> TP<n> EP<n>`` tags, only for dimensions > 1; continuation lines (tracebacks, multi-line
  messages) carry no prefix;
* phases are recognised by stable prefixes that survive version drift (``Init torch distributed`` /
  ``Init parallel``, ``Load weight``, ``KV Cache is allocated`` / ``Memory pool end``, ``Capture ... graph``,
  ``Uvicorn running on``, warmup requests, ``The server is fired up and ready to roll!``);
* a traceback alone is not fatal (a retried hub download, a failed request after ready, shutdown noise);
  fatal are: an argparse error, ``Scheduler hit an exception``, ``Initialization failed. warmup error``,
  ``Received sigquit from a child process``, an uncaught top-level exception, and a few unmistakable
  lines (``Failed: Cuda error ...``, uvicorn's bind error, systemd's ``Main process exited``);
* ``Received sigquit`` often arrives *before* the scheduler's traceback (two processes race on one pipe),
  so a generic fatal marker waits, boundedly, for the traceback that explains it (``pending``).

Two inputs, one state machine: :meth:`StartupLogScanner.feed_entry` takes the journal's structured entries
as the launch module follows them; :meth:`StartupLogScanner.feed` (and :func:`scan_startup_log`) takes pasted
text, with or without a journal, docker compose or Ray prefix. Tracebacks of different ranks are kept apart
by rank tag and journal PID. Every text field of the result passes through :func:`redact.redact`.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import collections
import re
from typing import Any, Deque, Dict, Iterable, List, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import find_secrets, may_contain_secret, redact
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import cause_for, hint_for
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import (
    LogLine, from_journal, is_systemd_exit, is_systemd_line, parse_line)

# Startup phases in the order SGLang goes through them (docs/reference/sglang.md#startup-phases).
PHASES = (
    "process_started",
    "parallel_init",
    "weights_loading",
    "kv_cache_allocated",
    "cuda_graph_capture",
    "http_up",
    "warmup",
    "ready",
)
_PHASE_ORDER = {name: index for index, name in enumerate(PHASES)}

# Bounds that keep feed() O(1) amortised and the wait for a late traceback finite.
AWAIT_TRACEBACK_LINES = 200  # after a generic fatal marker, lines to wait for the traceback that explains it
STALE_TRACEBACK_LINES = 200  # an open traceback that got no line for this long is closed
CANDIDATE_WINDOW_LINES = 50  # a plain traceback closed this close to a fatal marker is taken as its cause
TRACEBACK_HEAD_LINES = 1000  # very long tracebacks keep their head and tail, with a count of what was left out
TRACEBACK_TAIL_LINES = 1000
TAIL_BUFFER_LINES = 40  # lines held while deciding whether text after a blank line still belongs to an exception
LAST_LINES = 20  # last log lines returned for the failure report
CONTEXT_LINES = 20
MAX_LEARNED_SECRETS = 64  # values learned from secret-looking fields of the log, masked in everything returned

_TB_START_RE = re.compile(r"^(?P<pre>.*?)Traceback \(most recent call last\):\s*$")
# Headers SGLang prints before a traceback on its fatal paths (scheduler, detokenizer, DP controller, warmup; 0.3-era
# ``Exception in run_tp_server:``). Not uvicorn's per-request ``Exception in ASGI application`` nor asyncio's callbacks.
_FATAL_HEADER_RE = re.compile(
    r"hit an exception|warmup error|Initialization failed"
    r"|Exception in (?:run_tp_server|ControllerSingle|ControllerMulti|ModelRpcClient|ModelTpServer|run_\w+_process)",
    re.IGNORECASE,
)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]*)", line \d+(?:, in (?P<func>.+))?')
_CHAIN_RE = re.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)\s*$"
)
# Used only to tell an unindented exception line from an unindented code line (pasted logs lose indentation).
_EXC_LIKE_RE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Timeout)\b(?::|$)"
    r"|^(?:[A-Za-z_]\w*\.)*[A-Z]\w*: "
)
# Lines that are log records of some program, hence never part of a Python exception message.
_LOGLIKE_RE = re.compile(
    r"^(?:\[(?:\d|Gloo\]|rank\d)|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b[: ]|[IWEF]\d{4} \d\d:\d\d:\d\d"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\S+:\d+:\d+ \[\d+\] NCCL |Killed\b|Loading (?:safetensors|pt) checkpoint"
    r"|Capturing (?:batches|CUDA graph)|usage: |[\w./-]+(?: serve)?: error: |[\w@.\\-]+\.(?:service|scope): )"
)
# An uncaught exception at the top of a process: the interpreter is exiting.
_TOPLEVEL_FUNCS = frozenset(("<module>", "_run_module_as_main", "_run_code"))
# Exceptions SGLang only raises while starting, and always fatally.
_FATAL_EXCEPTION_RE = re.compile(
    r"Capture cuda graph failed|Not enough memory\. Please try to increase --mem-fraction-static"
    r"|Not enough memory to allocate KV cache",
    re.IGNORECASE,
)

_USAGE_RE = re.compile(r"^usage: \S")
_ARGPARSE_RE = re.compile(
    r"^(?P<prog>(?:[\w.-]*/)*(?:sglang(?: serve)?|launch_server(?:\.py)?|__main__\.py|serve\.py)): error: (?P<msg>.+)$"
)
_ARGPARSE_ANY_RE = re.compile(r"^(?P<prog>[\w./-]+(?: [\w.-]+)?): error: (?P<msg>.+)$")

# Fatal markers outside tracebacks. ``intrinsic`` ones explain themselves (no traceback will follow).
_MARKERS = (
    (re.compile(r"Received sigquit from a child proces"), False),
    (re.compile(r"SIGQUIT received"), False),
    (re.compile(r"scheduler died during initialization"), False),
    (re.compile(r"Initialization failed\. Please see the error messages above"), False),
    (re.compile(r"Subprocess \S+ \(pid=\d+\) crashed with exit code"), False),
    (re.compile(r"Child process unexpectedly failed with an exit code"), False),
    (re.compile(r"^Killed$"), False),
    (re.compile(r"^Failed: Cuda error"), True),
    (re.compile(r"error while attempting to bind on address"), True),
)
# Notable lines outside tracebacks that explain a failure whose traceback does not (kept, bounded).
_CONTEXT_RE = re.compile(
    r"Ignore import error when loading|NCCL WARN|socketStartConnect|timed out after \d+ ?ms|\[c10d\][^\n]{0,200}time"
    r"|ninja: build stopped|nvcc fatal|fatal error: |collect2: error|no kernel image|not compatible with the current PyTorch"
    r"|NVIDIA driver on your system is too old|Found no NVIDIA driver|Failed: Cuda error|scheduler died during initialization"
    r"|error while attempting to bind",
    re.IGNORECASE,
)

# One search per line finds the phase a line announces; the first matching group wins.
_PHASE_RE = re.compile(
    r"(?P<parallel_init>Init (?:torch distributed|parallel) (?:begin|ends)|sglang is using nccl|\bNCCL INFO\b"
    r"|^\[Gloo\] Rank|Setup Custom allreduce|Custom ?allreduce is disabled)"
    r"|(?P<weights_loading>Load weight (?:begin|end)|Loading (?:safetensors|pt) checkpoint shards"
    r"|Using model weights format|Found local HF snapshot)"
    r"|(?P<kv_cache_allocated>KV Cache is allocated|Memory pool end|KV cache allocated|KV Cache VA upper bound)"
    r"|(?P<cuda_graph_capture>Capture (?:[\w-]+ )*(?:cuda|CUDA) graph (?:begin|end|bs)|Capturing batches"
    r"|Capture (?:piecewise|prefill|decode) )"
    r"|(?P<http_up>Uvicorn running on|Listening at: http|Listening on http)"
    r"|(?P<warmup>\"(?:GET /(?:get_)?model_info|POST /generate|POST /v1/chat/completions)|Prefill batch)"
    r"|(?P<ready>fired up and ready to roll)",
    re.IGNORECASE,
)


class _Traceback:  # pylint: disable=too-many-instance-attributes
    """A traceback being collected: its lines, whose it is (journal PID, rank tags) and where parsing stands.

    Plain state, no behaviour beyond storing lines: the scanner drives it (many small fields, one per fact).
    """

    __slots__ = ("head", "rest", "omitted", "pid", "tags", "header_line", "fatal", "state", "blanks", "tail",
                 "tail_lines", "last_kind", "exception_line", "part_frames", "last_line", "closed", "closed_at")

    def __init__(self, pid: Optional[str], tags: Optional[str], header_line: Optional[str], line_no: int) -> None:
        self.head: List[str] = ["Traceback (most recent call last):"]
        self.rest: Deque[str] = collections.deque(maxlen=TRACEBACK_TAIL_LINES)
        self.omitted = 0
        self.pid = pid
        self.tags = tags
        self.header_line = header_line
        self.fatal = False
        self.state = "frames"  # frames | exception | tail | chain
        self.blanks = 0
        self.tail: List[str] = []
        self.tail_lines: List[LogLine] = []
        self.last_kind = "header"
        self.exception_line: Optional[str] = None
        self.part_frames = 0  # frames of the current part of a chained traceback
        self.last_line = line_no
        self.closed = False
        self.closed_at = 0

    def append(self, text: str) -> None:
        """Add a line, first any blank lines held back; very long tracebacks keep head and tail."""
        for _blank in range(self.blanks):
            self._store("")
        self.blanks = 0
        self._store(text)

    def _store(self, text: str) -> None:
        text = text.rstrip()
        if len(self.head) < TRACEBACK_HEAD_LINES:
            self.head.append(text)
            return
        if len(self.rest) == self.rest.maxlen:
            self.omitted += 1
        self.rest.append(text)

    def text(self) -> str:
        """The traceback as one string, without trailing blank lines."""
        lines = list(self.head)
        if self.omitted:
            lines.append(f"... {self.omitted} traceback lines omitted ...")
        lines.extend(self.rest)
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines)

    def owns(self, line: LogLine) -> bool:
        """Whether a record line comes from the same process/rank (it then ends this traceback's message)."""
        same_tags = (self.tags or "") == (line.tags or "")
        same_pid = self.pid is None or line.pid is None or self.pid == line.pid
        return same_tags and same_pid


class StartupLogScanner:  # pylint: disable=too-many-instance-attributes
    """Incremental scanner: feed journal entries (or pasted lines) as they arrive, ask for the verdict at any time.

    ``feed_entry`` and ``feed`` are O(1) amortised per line; ``result`` builds the report (cheap, call it when needed).
    ``is_final`` tells a verdict that can no longer change from "failed, but the traceback is still
    arriving" (``pending == "traceback_open"``) or "a fatal marker came first, its traceback may follow"
    (``pending == "awaiting_traceback"``): the caller waits a bounded time, then calls :meth:`close`.
    """

    def __init__(self, secrets: Iterable[str] = (), hostname: str = "localhost") -> None:
        self._secrets: List[str] = [s for s in secrets if isinstance(s, str) and s]
        self._hostname = hostname  # shown in the last lines of followed journal entries, as journalctl shows it
        self._systemd_exit = False
        self._line_no = 0
        self._phases: List[Dict[str, Any]] = []
        self._seen_phases: set = set()
        self._phase: Optional[str] = None
        self._ready = False
        self._ready_line: Optional[str] = None
        self._failed = False
        self._failed_at = 0
        self._fatal_line: Optional[str] = None
        self._fatal_tb: Optional[_Traceback] = None
        self._marker_intrinsic = False
        self._markers: List[str] = []
        self._argparse_line: Optional[str] = None
        self._usage_at = -1000
        self._pending_header: Optional[Tuple[int, LogLine]] = None
        self._open: List[_Traceback] = []
        self._last_closed: Optional[_Traceback] = None
        self._tracebacks = 0
        self._context: Deque[str] = collections.deque(maxlen=CONTEXT_LINES)
        self._last_lines: Deque[str] = collections.deque(maxlen=LAST_LINES)
        self._closed = False
        self._exited = False
        self._frozen = False
        self._weights_loaded = False  # "Load weight end" seen: an OOM from here on is not about the weights

    # ----------------------------------------------------------------------------------------------- input
    def feed(self, line: Any, timestamp: Any = None) -> None:
        """Take one line of pasted log text (bare or with any prefix); ``timestamp`` is recorded per phase.

        Tolerant on purpose: bytes are decoded, embedded newlines split, anything else is ignored rather than
        raised, because a scanner that throws would hide the very failure it is there to report.
        """
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode("utf-8", "replace")
        if not isinstance(line, str):
            return
        if "\n" in line:
            for part in line.split("\n"):
                self._feed_line(parse_line(part), timestamp)
            return
        self._feed_line(parse_line(line), timestamp)

    def feed_entry(self, message: str, pid: Optional[int], identifier: str, timestamp: float) -> None:
        """Take one journal entry as journald gives it (``journalctl -o json``): its fields are read as they are.

        ``timestamp`` (seconds since the epoch) is the entry's time: recorded per phase and shown in the
        last lines.
        """
        for info in from_journal(message, pid, identifier, timestamp, self._hostname):
            self._feed_line(info, timestamp)

    def close(self, exited: bool = True) -> None:
        """No more lines will come: finish open tracebacks and make the verdict final.

        ``exited`` says the process ended (the unit left ``active``, the main PID is gone): a start that did
        not reach ready then failed, with the best evidence seen. With ``exited=False`` (the caller only stops
        reading) a start without failure evidence stays "starting".
        """
        if self._closed:
            return
        for tb in list(self._open):
            self._close_traceback(tb)
        if exited and not self._ready and not self._failed:
            self._fail(None)
        self._exited = exited
        self._closed = True

    # ----------------------------------------------------------------------------------------------- verdict
    def result_outcome(self) -> str:
        """The outcome alone ("ready", "failed" or "starting"), cheap enough to ask after every line."""
        if self._ready:
            return "ready"
        return "failed" if self._failed else "starting"

    @property
    def systemd_exit_seen(self) -> bool:
        """Whether systemd logged the end of the unit's process: it logs that after the process's own last
        lines, so from here on the evidence is complete (counted even after the verdict froze)."""
        return self._systemd_exit

    def current_phase(self) -> Optional[str]:
        """The latest phase reached, without building the whole report."""
        return self._phase

    @property
    def is_final(self) -> bool:
        """Whether the verdict can no longer change."""
        return self._final_state()[0]

    def result(self) -> Dict[str, Any]:
        """Return the verdict with its evidence; every text field is redacted."""
        final, pending = self._final_state()
        tb = self._evidence_traceback()
        error_message = self._error_message(tb)
        evidence = self._evidence(tb)
        if self._ready:
            outcome, cause = "ready", None
        elif self._failed:
            outcome, cause = "failed", self._cause(evidence)
        else:
            outcome, cause = "starting", None
        phase = self._phase
        secrets = self._secrets
        hint_phase = "kv_cache_allocated" if (phase == "weights_loading" and self._weights_loaded) else phase

        def red(text: Optional[str]) -> Optional[str]:
            return redact(text, secrets) if text else text

        return {
            "outcome": outcome,
            "cause": cause,
            "hint": red(hint_for(cause, error_message, hint_phase, evidence)),
            "phase": phase,
            "phases": [dict(entry, line=red(entry["line"])) for entry in self._phases],
            "traceback": red(tb.text()) if (tb is not None and outcome == "failed") else None,
            "fatal_line": red(self._fatal_line) if outcome == "failed" else None,
            "error_message": red(error_message) if outcome == "failed" else None,
            "ready_line": red(self._ready_line),
            "rank": (tb.tags or None) if (tb is not None and outcome == "failed") else None,
            "is_final": final,
            "pending": pending,
            "tracebacks_seen": self._tracebacks,
            "lines_seen": self._line_no,
            "last_lines": [red(text) for text in self._last_lines],
        }

    # ----------------------------------------------------------------------------------------------- internals
    def _feed_line(self, info: LogLine, timestamp: Any) -> None:
        self._line_no += 1
        if info.raw:
            self._last_lines.append(info.raw)
        if may_contain_secret(info.raw):
            for value in find_secrets(info.raw):
                if len(value) >= 6 and value not in self._secrets and len(self._secrets) < MAX_LEARNED_SECRETS:
                    self._secrets.append(value)
        systemd = is_systemd_line(info)
        if systemd and not self._systemd_exit and is_systemd_exit(info):
            self._systemd_exit = True
        if self._closed or self._ready or self._frozen:
            return
        if self._failed and self._final_state()[0]:
            self._frozen = True
            return
        if self._phase is None and info.raw.strip():
            self._enter_phase("process_started", info, timestamp)
        for tb in list(self._open):
            if self._line_no - tb.last_line > STALE_TRACEBACK_LINES:
                self._close_traceback(tb)
        if systemd:
            self._systemd(info)
            return
        if self._open and self._route(info):
            return
        self._standalone(info, timestamp)

    def _systemd(self, info: LogLine) -> None:
        """systemd's own lines about the unit: an exit before ready is fatal; never part of a traceback."""
        if is_systemd_exit(info):
            for tb in list(self._open):  # the process is gone: whatever it printed is complete
                self._close_traceback(tb)
            self._marker(info.msg.strip(), False, info.msg.strip())

    def _route(self, info: LogLine) -> bool:
        """Give the line to the open traceback it continues; True if a traceback took it."""
        if info.record:
            for tb in list(self._open):
                if tb.state in ("exception", "tail") or tb.owns(info):
                    self._close_traceback(tb)
            return False
        tb = None
        if info.pid is not None:
            for candidate in reversed(self._open):
                if candidate.pid == info.pid:
                    tb = candidate
                    break
        if tb is None:
            tb = self._open[-1]
        taken = self._continue(tb, info)
        if taken:
            tb.last_line = self._line_no
        return taken

    def _continue(self, tb: _Traceback, info: LogLine) -> bool:  # pylint: disable=too-many-return-statements
        """Decide whether ``info`` continues ``tb`` (Python's traceback layout), closing ``tb`` when it ends.

        Returns True when ``tb`` took the line; False when the line is not part of it (and ``tb`` may have
        been closed), so the caller treats the line on its own.
        """
        if tb.state == "chain":
            return self._continue_chain(tb, info)
        if tb.state == "tail":
            return self._continue_tail(tb, info)
        msg = info.msg
        text = msg.strip()
        if not text:
            tb.blanks += 1
            return True
        if _CHAIN_RE.match(text):
            tb.append(text)
            tb.state, tb.last_kind = "chain", "sep"
            return True
        frame = _FRAME_RE.match(msg)
        if frame:
            if tb.state == "exception":  # an unindented paste fooled us: that "exception" was a code line
                tb.exception_line = None
            tb.append(msg)
            tb.state, tb.last_kind = "frames", "frame"
            tb.part_frames += 1
            if tb.part_frames == 1 and self._is_toplevel(frame):
                self._make_fatal(tb)
            return True
        if _TB_START_RE.match(msg):
            self._close_traceback(tb)
            return False
        if tb.state == "frames":
            return self._continue_frames(tb, msg, text)
        # state "exception": more lines of a multi-line message, or the end of the traceback
        if _LOGLIKE_RE.match(text):
            self._close_traceback(tb)
            return False
        if tb.blanks == 0:
            tb.append(msg)
            tb.last_kind = "message"
            return True
        tb.tail, tb.tail_lines = [""] * tb.blanks + [msg], [info]
        tb.blanks = 0
        tb.state = "tail"
        return True

    def _continue_frames(self, tb: _Traceback, msg: str, text: str) -> bool:
        """Between frames: a code line, the exception line, or another process's line that is not ours."""
        indented = msg[:1] in (" ", "\t")
        if not indented and _LOGLIKE_RE.match(text):
            return False  # another process's line in the middle of this traceback
        if indented or (tb.last_kind == "frame" and not _EXC_LIKE_RE.match(text)):
            tb.append(msg)
            tb.last_kind = "code"
            return True
        tb.append(msg)
        tb.state, tb.last_kind, tb.exception_line = "exception", "exception", text
        if _FATAL_EXCEPTION_RE.search(text):
            self._make_fatal(tb)
        return True

    def _continue_chain(self, tb: _Traceback, info: LogLine) -> bool:
        """After "During handling ..." / "The above exception ...": blank lines, then the next part's header."""
        start = _TB_START_RE.match(info.msg)
        if not info.msg.strip():
            tb.blanks += 1
            return True
        if start and not start.group("pre").strip():
            tb.append(info.msg.strip())
            tb.state, tb.last_kind, tb.part_frames = "frames", "header", 0
            return True
        self._close_traceback(tb)
        return False

    def _continue_tail(self, tb: _Traceback, info: LogLine) -> bool:
        """Text after a blank line that follows an exception: more of the message if a chain separator follows."""
        msg = info.msg
        text = msg.strip()
        if not text:
            tb.tail.append("")
            tb.tail_lines.append(info)
            return True
        if _CHAIN_RE.match(text):
            for held in tb.tail:
                tb.append(held)
            tb.tail, tb.tail_lines = [], []
            tb.append(text)
            tb.state, tb.last_kind = "chain", "sep"
            return True
        if (_LOGLIKE_RE.match(text) or _TB_START_RE.match(msg) or _FRAME_RE.match(msg) or msg[:1] in (" ", "\t")
                or len(tb.tail) >= TAIL_BUFFER_LINES):
            self._close_traceback(tb)
            return False
        tb.tail.append(msg)
        tb.tail_lines.append(info)
        return True

    @staticmethod
    def _is_toplevel(frame: "re.Match[str]") -> bool:
        func = (frame.group("func") or "").strip()
        if func in _TOPLEVEL_FUNCS:
            return True
        return func == "_bootstrap" and frame.group("file").endswith("multiprocessing/process.py")

    def _standalone(self, info: LogLine, timestamp: Any) -> None:
        """A line outside any traceback: a traceback start, an argparse error, a fatal marker or a phase line."""
        body = info.body
        text = body.strip()
        if not text:
            return
        start = _TB_START_RE.match(body)
        if start:
            self._start_traceback(info, start.group("pre").strip())
            return
        if info.record and text.endswith(":") and _FATAL_HEADER_RE.search(text):
            self._pending_header = (self._line_no, info)
        if _USAGE_RE.match(text):
            self._usage_at = self._line_no
            return
        argparse = _ARGPARSE_RE.match(text)
        if argparse is None and self._line_no - self._usage_at < 100:
            argparse = _ARGPARSE_ANY_RE.match(text)
        if argparse:
            if not self._failed:
                self._argparse_line = text
                self._fail(text)
            return
        for pattern, intrinsic in _MARKERS:
            if pattern.search(text):
                self._context.append(text)
                self._marker(info.msg.strip(), intrinsic, text)
                return
        if _CONTEXT_RE.search(text):
            self._context.append(text)
        if not self._failed:
            self._detect_phase(info, timestamp)

    def _start_traceback(self, info: LogLine, header: str) -> None:
        header_line: Optional[str] = info.msg.strip() if header else None
        fatal = bool(header) and bool(_FATAL_HEADER_RE.search(header))
        pid, tags = info.pid, info.tags
        pending = self._pending_header
        if not header and pending is not None and self._line_no - pending[0] <= 1:
            header_line = pending[1].msg.strip()
            tags = pending[1].tags
            pid = pid or pending[1].pid
            fatal = True
        self._pending_header = None
        tb = _Traceback(pid, tags, header_line, self._line_no)
        self._open.append(tb)
        self._tracebacks += 1
        if fatal:
            self._make_fatal(tb)

    def _make_fatal(self, tb: _Traceback) -> None:
        tb.fatal = True
        if self._ready:
            return
        if self._fatal_tb is None:
            self._fatal_tb = tb
        self._fail(tb.header_line or "Traceback (most recent call last):")

    def _close_traceback(self, tb: _Traceback) -> None:
        if tb.closed:
            return
        tb.closed = True
        tb.closed_at = self._line_no
        if tb in self._open:
            self._open.remove(tb)
        held = tb.tail_lines
        tb.tail, tb.tail_lines = [], []
        if not tb.fatal:
            self._last_closed = tb
        for info in held:  # lines held after a blank turned out not to belong to the exception
            if info.msg.strip():
                self._standalone(info, None)

    def _marker(self, line: str, intrinsic: bool, message: str) -> None:
        """A fatal line outside tracebacks: ``line`` as logged, ``message`` without SGLang's record prefix."""
        if self._ready:
            return
        self._markers.append(message)
        if intrinsic:
            self._marker_intrinsic = True
        self._fail(line)

    def _fail(self, line: Optional[str]) -> None:
        if self._failed:
            return
        self._failed = True
        self._failed_at = self._line_no
        self._fatal_line = line

    def _detect_phase(self, info: LogLine, timestamp: Any) -> None:
        match = _PHASE_RE.search(info.body)
        if not match:
            return
        name = match.lastgroup
        if name == "warmup" and "http_up" not in self._seen_phases:
            return
        self._enter_phase(name, info, timestamp)
        if name == "weights_loading" and "Load weight end" in info.body:
            self._weights_loaded = True
        if name == "ready":
            self._ready = True
            self._ready_line = info.msg.strip()

    def _enter_phase(self, name: str, info: LogLine, timestamp: Any) -> None:
        if name in self._seen_phases:
            return
        self._seen_phases.add(name)
        self._phases.append({
            "phase": name,
            "first_seen": timestamp,
            "log_time": info.log_time or info.journal_time,
            "line_no": self._line_no,
            "line": info.msg.strip(),
        })
        if self._phase is None or _PHASE_ORDER[name] > _PHASE_ORDER[self._phase]:
            self._phase = name

    def _final_state(self) -> Tuple[bool, Optional[str]]:
        """(final, pending): why a failed verdict may still change, or None."""
        if self._ready or self._closed or self._argparse_line is not None:
            return True, None
        if not self._failed:
            return False, None
        if self._fatal_tb is not None:
            return (True, None) if self._fatal_tb.closed else (False, "traceback_open")
        if self._open:
            return False, "traceback_open"
        explained = self._marker_intrinsic or self._candidate() is not None
        if explained or self._line_no - self._failed_at > AWAIT_TRACEBACK_LINES:
            return True, None
        return False, "awaiting_traceback"

    def _candidate(self) -> Optional[_Traceback]:
        """A plain traceback that closed just before (or after) the fatal marker: the likely explanation."""
        tb = self._last_closed
        if tb is None or not self._failed:
            return None
        if self._exited or tb.closed_at >= self._failed_at - CANDIDATE_WINDOW_LINES:
            return tb
        return None

    def _evidence_traceback(self) -> Optional[_Traceback]:
        if self._fatal_tb is not None:
            return self._fatal_tb
        if not self._failed or self._argparse_line is not None:
            return None
        if self._open:
            return self._open[0]
        return self._candidate()

    def _error_message(self, tb: Optional[_Traceback]) -> Optional[str]:
        if self._argparse_line is not None:
            return self._argparse_line
        if tb is not None and tb.exception_line:
            return tb.exception_line
        if self._markers:
            return self._markers[0]
        if self._context:
            return self._context[-1]
        return None

    def _evidence(self, tb: Optional[_Traceback]) -> str:
        parts = [tb.text()] if tb is not None else []
        if self._fatal_line:
            parts.append(self._fatal_line)
        parts.extend(self._markers)
        return "\n".join(parts)

    def _cause(self, evidence: str) -> str:
        return cause_for(evidence, "\n".join(self._context), argparse_error=self._argparse_line is not None)


def scan_startup_log(text: str, ended: bool = False, secrets: Iterable[str] = ()) -> Dict[str, Any]:
    """Scan a whole log text; ``ended=True`` when the process is known to have exited after the last line.

    A thin wrapper over :class:`StartupLogScanner`, so batch and incremental scanning cannot disagree.
    """
    scanner = StartupLogScanner(secrets=secrets)
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    for line in (text or "").splitlines():
        scanner.feed(line)
    if ended:
        scanner.close(exited=True)
    return scanner.result()
