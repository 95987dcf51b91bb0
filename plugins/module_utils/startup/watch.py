# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When is a start over? The launch module's decision logic, kept pure so it is tested with a fake clock.

The module feeds three kinds of observations as they happen: journal entries, the unit's state
(``systemctl show``) and the readiness endpoint's HTTP status. :class:`StartWatch` turns them into a verdict:
ready, failed (with the scanner's cause, a stall, a timeout or the unit's own exit) or, while none holds yet,
nothing. It never sleeps and never reads a clock itself.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import JournalLine, unit_exited

# The defaults of StartWatch's timing parameters (tests pass shorter ones).
# Without an exit: after a fatal line whose traceback is still arriving, lines keep coming for a moment (two
# processes share one pipe). This bounds the wait for them.
TRACEBACK_GRACE_S = 0.6
# After the process's exit (the unit's state, or systemd's "Main process exited" line in the journal): the verdict
# comes this soon, whatever the evidence says, so that it lands within 0.5 s of the exit with the module's loop
# (a tick of at most 0.1 s) on top. systemd logs its exit line after the dead process's own output, so once that
# line has arrived and no line came for LINES_QUIET_S, the evidence is complete and the verdict comes at once.
EXIT_VERDICT_S = 0.35
LINES_QUIET_S = 0.05
# journald reads a dead process's last output after the process is gone and, on a loaded host, can deliver it
# late: only while systemd's exit line has not arrived and the dead process's lines are still arriving does the
# verdict wait past EXIT_VERDICT_S, and never past this.
EXIT_DRAIN_MAX_S = 5.0

# An HTTP access-log line (uvicorn's, as SGLang configures it: ``127.0.0.1:52144 - "GET /ready HTTP/1.1" 503``).
# The launch's own readiness polling writes one per request, so such a line is no sign that the server makes
# progress: a warmup stuck behind a live HTTP server would otherwise never stall.
# A node of a serving group (docs/serving-groups.md) whose rank is not 0 serves no API: SGLang runs a dummy health
# server there (always 200) once its schedulers are up, so its readiness is read from its journal, not from HTTP.
# Uvicorn's startup line of that dummy server says the node's schedulers loaded; the end of the parallel init
# ("Init parallel ends" on 0.5.23, "Init torch distributed ends" before) says the node joined the rendezvous.
FOLLOWER_READY_LINE = re.compile(r"Uvicorn running on ")
JOINED_LINE = re.compile(r"\] Init (?:parallel|torch distributed) ends\b")
ACCESS_LINE = re.compile(r'- "(?:GET|POST|HEAD|PUT|DELETE|OPTIONS|PATCH) \S* HTTP/[0-9.]+" [0-9]{3}\b')

_STALL_HINT = {
    "weights_loading": "weights are still loading: a cold download inside the start looks like this (use the model_cache role), "
                       "or raise sglang_server_stall_timeouts.weights_loading for a very large model on slow disks",
    "cuda_graph_capture": "CUDA graph capture hangs: try cuda_graph_max_bs_decode lower, or disable the graph backends to confirm",
    "parallel_init": "NCCL/distributed init hangs: a P2P path that the platform does not allow (ACS/IOMMU) is a known cause; "
                     "try NCCL_P2P_DISABLE=1 through gpu_tuning_passthrough_env to confirm",
    "http_up": "the HTTP server is up but the warmup never finished (/ready keeps answering 503): a hung scheduler or a warmup "
               "request that never returns; read the last log lines",
    "warmup": "the HTTP server is up but the warmup never finished (/ready keeps answering 503): a hung scheduler or a warmup "
              "request that never returns; read the last log lines",
}


def is_access_line(message: str) -> bool:
    """Whether a log line is an HTTP access-log line (a request someone made, not the server's own progress)."""
    return ACCESS_LINE.search(message) is not None


def stopped_stall(failure: Dict[str, Any], stopped: Sequence[int]) -> Dict[str, Any]:
    """A stall verdict, told apart when the unit's processes are stopped (state T: SIGSTOP, a debugger, a frozen
    cgroup): then nothing is loading at all, and raising a timeout would not help."""
    if failure.get("cause") != "stalled" or not stopped:
        return failure
    pids = ", ".join(str(pid) for pid in stopped)
    return dict(failure, reason="%s; the process is stopped (state T: PID %s), not loading" % (failure["reason"], pids),
                hint="the server's process is stopped (SIGSTOP, a debugger or a frozen cgroup), not loading: find who stopped it; "
                     "`kill -CONT %s` resumes it" % pids, stopped_pids=list(stopped))


class StartWatch:  # pylint: disable=too-many-instance-attributes
    """Follows one start: from the moment the restart was requested to ready or failure."""

    def __init__(self, *, started_at: float, timeout: float, stall_timeout: float,  # pylint: disable=too-many-arguments
                 stall_timeouts: Optional[Mapping[str, float]] = None, old_invocation: str = "",
                 secrets: Iterable[str] = (), hostname: str = "localhost", traceback_grace_s: float = TRACEBACK_GRACE_S,
                 exit_drain_max_s: float = EXIT_DRAIN_MAX_S, lines_quiet_s: float = LINES_QUIET_S,
                 exit_verdict_s: float = EXIT_VERDICT_S, ready_from_journal: bool = False) -> None:
        # The watch tells the old process's lines by their invocation (on_entry), not by systemd's "Started" line, which
        # journald can order after the new process's first lines.
        self.scanner = StartupLogScanner(secrets=secrets, hostname=hostname, forget_before_start=False)
        self.traceback_grace_s = traceback_grace_s
        self.exit_verdict_s = exit_verdict_s
        self.exit_drain_max_s = exit_drain_max_s
        self.lines_quiet_s = lines_quiet_s
        self.started_at = started_at
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self.stall_timeouts = dict(stall_timeouts or {})
        self.old_invocation = old_invocation
        self.baseline: Optional[Dict[str, str]] = None  # the new invocation's first observed state
        self.last_props: Dict[str, str] = {}
        self.last_activity = started_at
        self.last_phase: Optional[str] = None
        self.http_ready_at: Optional[float] = None
        self.readiness_lost_at: Optional[float] = None
        self.readiness_lost_status: Optional[int] = None
        self.healthy_checks = 0  # health answers of 200 after ready (the soak counts them)
        self.exit_reason: Optional[str] = None
        self.exit_seen_at: Optional[float] = None  # when the unit's state said the process is gone
        self.exit_logged_at: Optional[float] = None  # when systemd's exit line arrived through the journal
        self.last_line_at = started_at
        self.failure_seen_at: Optional[float] = None
        self.lines = 0
        # A follower of a serving group: ready when its journal says its schedulers are up (FOLLOWER_READY_LINE).
        self.ready_from_journal = ready_from_journal
        self.ready_line_at: Optional[float] = None
        self.joined_at: Optional[float] = None  # when the node's journal said it joined the rendezvous

    # --------------------------------------------------------------------------------------------- inputs
    def on_entry(self, entry: JournalLine, now: float) -> None:
        """A journal entry of the unit (SGLang's own output or systemd's words about the unit), as followed.

        The journal is followed from before the restart: the old process's last lines (its shutdown, even systemd's
        exit lines about it) come first. Entries of the old invocation are left out; entries without an invocation
        (an older systemd) are read.
        """
        if entry.invocation and self.old_invocation and entry.invocation == self.old_invocation:
            return
        self.scanner.feed_entry(entry.message, entry.pid, entry.identifier, entry.timestamp or now)
        self._note_group_line(entry.message, now)
        self._line_arrived(now, progress=not is_access_line(entry.message))

    def _note_group_line(self, text: str, now: float) -> None:
        """A serving group's node: when it joined the rendezvous, and (a follower) when its schedulers were up."""
        if self.joined_at is None and JOINED_LINE.search(text):
            self.joined_at = now
        if self.ready_from_journal and self.ready_line_at is None and FOLLOWER_READY_LINE.search(text):
            self.ready_line_at = now

    def on_line(self, text: str, now: float, timestamp: Optional[float] = None) -> None:
        """A line of log text (a pasted or replayed log, any prefix); the module follows entries (:meth:`on_entry`)."""
        self.scanner.feed(text, timestamp if timestamp is not None else now)
        self._note_group_line(text, now)
        self._line_arrived(now, progress=not is_access_line(text))

    @property
    def exit_logged(self) -> bool:
        """systemd's own line about the main process's end has arrived."""
        return self.scanner.systemd_exit_seen

    def _line_arrived(self, now: float, progress: bool = True) -> None:
        """A line came. Only the server's own lines are progress (they reset the stall clock); an access-log line
        (the launch's own readiness polling, or any client's request) is not."""
        self.lines += 1
        self.last_line_at = now
        if progress:
            self.last_activity = now
        self._note_exit_line(now)
        failed = self.scanner.result_outcome() == "failed"
        if self.failure_seen_at is None and failed:
            self.failure_seen_at = now
        elif not failed:
            self.failure_seen_at = None  # the scanner forgot a failure that was the old process's (a new start began)

    def _note_exit_line(self, now: float) -> None:
        """Record when systemd's exit line about the new process arrived (the old process's own exit lines, which
        come before the restart's "Started", are the scanner's to forget, and count only once the new one is followed)."""
        if self.exit_logged_at is None and self.baseline is not None and self.scanner.systemd_exit_seen:
            self.exit_logged_at = now
        elif self.exit_logged_at is not None and not self.scanner.systemd_exit_seen:
            self.exit_logged_at = None

    def on_unit(self, props: Mapping[str, str], now: float) -> None:
        """The unit's state. The first state of a new invocation becomes the baseline for exit detection."""
        self.last_props = dict(props)
        invocation = props.get("InvocationID", "")
        if self.baseline is None:
            new_invocation = invocation and invocation != self.old_invocation
            if new_invocation or props.get("ActiveState") == "failed":
                self.baseline = dict(props)
            else:
                return  # the old process is still stopping, or systemd has not forked yet
            self._note_exit_line(now)  # the new process may have ended before its first state was seen
        if self.exit_reason is None:
            reason = unit_exited(props, self.baseline)
            if reason is None and props.get("ActiveState") == "failed":
                reason = "the unit failed (Result=%s)" % props.get("Result", "?")
            if reason:
                self.exit_reason = reason
                self.exit_seen_at = now

    def on_http(self, status: Optional[int], now: float) -> None:
        """The readiness endpoint's answer (None: nothing listens yet, which is normal while loading).

        Pass each answer once: after ready, every 200 counts as one healthy check of the soak.
        """
        if status == 200 and self.baseline is not None and self.exit_reason is None and self.http_ready_at is None:
            self.http_ready_at = now
        elif status == 200 and self.http_ready_at is not None and now > self.http_ready_at and self.readiness_lost_at is None:
            self.healthy_checks += 1
        elif status != 200 and self.http_ready_at is not None and self.readiness_lost_at is None:
            self.readiness_lost_at = now
            self.readiness_lost_status = status

    def settle_verdict(self, now: float) -> Optional[Dict[str, Any]]:
        """After ready, during the settle time: a server that dies or stops answering ready has not launched.

        Real servers do this (a crash on the first batch, a scheduler that hangs after warmup); a launch that
        declared victory at the first 200 would leave the box down.
        """
        if self.exit_reason is not None:
            exit_at = now if self.exit_seen_at is None else self.exit_seen_at
            if now - exit_at < self.exit_verdict_s:
                return None
            ready_at = now if self.http_ready_at is None else self.http_ready_at
            return self._failed(now, reason="%s %.1f s after it was ready" % (self.exit_reason, exit_at - ready_at),
                                cause="crashed_after_ready", hint="it served, then died: read the traceback and the last log lines; "
                                "a crash on the first real batch often means memory headroom (mem_fraction_static) or a kernel problem",
                                prefer_own=True)
        if self.readiness_lost_at is not None:
            ready_at = now if self.http_ready_at is None else self.http_ready_at
            lost = (self.readiness_lost_status or "nothing", self.readiness_lost_at - ready_at)
            return self._failed(now, reason="the readiness endpoint answered %s %.1f s after it was ready" % lost,
                                cause="unhealthy_after_ready", hint="the server stopped answering ready (a hung scheduler shows as 503 from "
                                "/health after SGLANG_HEALTH_CHECK_TIMEOUT): read the last log lines", prefer_own=True)
        return None

    def soaked(self, now: float, soak_time: float, soak_checks: int) -> bool:
        """Whether the soak is over and passed: ``soak_time`` seconds since ready, at least ``soak_checks`` healthy
        answers in that time, the process alive and never unhealthy. Only then is the launch good (and its files
        the last good ones): a server that dies or turns 503 some seconds after ready has not launched."""
        if self.http_ready_at is None or self.exit_reason is not None or self.readiness_lost_at is not None:
            return False
        if soak_time <= 0:
            return True
        return now - self.http_ready_at >= soak_time and self.healthy_checks >= soak_checks

    @property
    def following_new_process(self) -> bool:
        """Only a new invocation's HTTP answers count: the old process may still answer while it drains."""
        return self.baseline is not None

    # --------------------------------------------------------------------------------------------- verdict
    def verdict(self, now: float) -> Optional[Dict[str, Any]]:
        """The decision at ``now``, or None to keep following."""
        phase = self.scanner.current_phase()
        if phase != self.last_phase:
            self.last_phase = phase
            self.last_activity = now
        if (self.ready_line_at is not None and self.http_ready_at is None and self.baseline is not None
                and self.exit_reason is None and self.failure_seen_at is None):
            self.http_ready_at = self.ready_line_at  # a follower: its journal, not HTTP, says it is up
        if self.http_ready_at is not None:
            return self._ready(now)
        exit_at = self.exit_at
        if exit_at is not None:
            if not self._evidence_complete(now, exit_at):
                return None
            self.scanner.close(exited=True)
            return self._failed(now, reason=self.exit_reason or self._logged_exit_reason())
        if self.failure_seen_at is not None:
            if not self.scanner.is_final and now - self.failure_seen_at < self.traceback_grace_s:
                return None
            self.scanner.close(exited=False)
            return self._failed(now, reason="SGLang logged a fatal error")
        stall_limit = self.stall_timeouts.get(phase or "", self.stall_timeout)
        if now - self.last_activity > stall_limit:
            self.scanner.close(exited=False)
            quiet = now - self.last_activity
            return self._failed(now, reason="stalled in %s for %.0f s (no new log line, no phase change)" % (phase or "startup", quiet),
                                cause="stalled", hint=_STALL_HINT.get(phase or "", "raise sglang_server_stall_timeout if this phase is slow but healthy "
                                                                      "on this host; otherwise read the last log lines"))
        if now - self.started_at > self.timeout:
            self.scanner.close(exited=False)
            return self._failed(now, reason="not ready after %.0f s (overall timeout), last phase %s" % (now - self.started_at, phase or "none"),
                                cause="timeout", hint="raise sglang_server_start_timeout if this host is slow but healthy")
        return None

    def verdict_due(self, now: float) -> bool:
        """Whether the process is gone and its verdict is due now (the module reads the journal once more first)."""
        exit_at = self.exit_at
        return exit_at is not None and self.http_ready_at is None and self._evidence_complete(now, exit_at)

    @property
    def exit_at(self) -> Optional[float]:
        """When the watch first learned that the process is gone: its unit's state or systemd's exit line."""
        seen = [at for at in (self.exit_seen_at, self.exit_logged_at) if at is not None]
        return min(seen) if seen else None

    def _evidence_complete(self, now: float, exit_at: float) -> bool:
        """After the exit: whether to give the verdict now (the evidence is whole, or the exit's deadline passed)."""
        if self.scanner.is_final:
            return True
        quiet = now - self.last_line_at >= self.lines_quiet_s
        if self.exit_logged_at is not None and quiet:
            return True  # systemd's exit line came after the dead process's last line, and nothing followed it
        if now - exit_at < self.exit_verdict_s:
            return False
        # Past the deadline: wait longer only while the journal is visibly behind (no exit line yet, lines arriving).
        behind = self.exit_logged_at is None and not quiet and self.lines > 0
        return not (behind and now - exit_at < self.exit_drain_max_s)

    def next_check(self, now: float) -> Optional[float]:
        """Seconds until the verdict may change without a new observation (None: only a new line or state can change
        it), so the module's loop does not sleep past the exit's deadline."""
        exit_at = self.exit_at
        if exit_at is None:
            if self.failure_seen_at is not None:
                return max(0.0, self.failure_seen_at + self.traceback_grace_s - now)
            return None
        waits = [exit_at + self.exit_verdict_s - now]
        if self.exit_logged_at is not None:
            waits.append(self.last_line_at + self.lines_quiet_s - now)
        return max(0.0, min(waits))

    def _logged_exit_reason(self) -> str:
        lines = self.scanner.systemd_lines
        line = lines[0] if lines else ""
        return "systemd logged the end of the main process (%s)" % line if line else "the main process exited"

    def _ready(self, now: float) -> Dict[str, Any]:
        report = self.scanner.result()
        return {
            "outcome": "ready",
            "reason": ("its journal says its schedulers are up (a serving group's follower: no API, no HTTP readiness)"
                       if self.ready_from_journal else "the readiness endpoint answered 200"),
            "joined": self.joined_at is not None,
            "elapsed_s": round(now - self.started_at, 3),
            "ready_noticed_at": self.http_ready_at,
            "phase": report.get("phase"),
            "phases": phase_timings(report.get("phases", []), self.started_at),
            "ready_line": report.get("ready_line"),
            "main_pid": int(self.last_props.get("MainPID", "0") or 0),
            "restarts": int(self.last_props.get("NRestarts", "0") or 0),
        }

    def _failed(self, now: float, reason: str, cause: Optional[str] = None, hint: Optional[str] = None, prefer_own: bool = False) -> Dict[str, Any]:
        report = self.scanner.result()
        scanner_failed = report.get("outcome") == "failed" and not prefer_own
        return {
            "outcome": "failed",
            "reason": reason,
            "cause": (report.get("cause") if scanner_failed else None) or cause or "unknown",
            "hint": (report.get("hint") if scanner_failed else None) or hint or "read the last log lines and the traceback",
            "phase": report.get("phase"),
            "phases": phase_timings(report.get("phases", []), self.started_at),
            "traceback": report.get("traceback"),
            "error_message": report.get("error_message"),
            "fatal_line": report.get("fatal_line"),
            "systemd_line": report.get("systemd_line"),
            "tracebacks": report.get("tracebacks", []),
            "last_lines": report.get("last_lines", []),
            "elapsed_s": round(now - self.started_at, 3),
            "joined": self.joined_at is not None,
            "verdict_at": now,
            "failure_seen_at": self.failure_seen_at if self.failure_seen_at is not None else self.exit_at,
            "exit_seen_at": self.exit_at,
            "unit": {k: self.last_props.get(k) for k in ("ActiveState", "SubState", "Result", "NRestarts", "ExecMainStatus")},
        }


def phase_timings(phases: List[Mapping[str, Any]], started_at: float) -> List[Dict[str, Any]]:
    """Seconds from the restart to the first line of each phase, for the report."""
    timings = []
    for entry in phases:
        seen = entry.get("first_seen")
        timings.append({"phase": entry.get("phase"),
                        "at_s": round(float(seen) - started_at, 3) if isinstance(seen, (int, float)) else None})
    return timings
