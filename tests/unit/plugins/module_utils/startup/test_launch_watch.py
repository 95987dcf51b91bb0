# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for StartWatch, the launch's pure decision logic, fed with real SGLang log lines and explicit fake times."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import PHASES
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import JournalLine
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.watch import (
    EXIT_DRAIN_MAX_S, EXIT_VERDICT_S, LINES_QUIET_S, TRACEBACK_GRACE_S, StartWatch, is_access_line, phase_timings, stopped_stall)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "startup_logs")
OLD = "0a1d5e0c2b7f4c3e9d8a6b5c4d3e2f10"
NEW = "9f8e7d6c5b4a49388271605f4e3d2c1b"
T0 = 1764493315.0  # the restart was requested (seconds since the epoch, as the module passes them)
SECRET = "sk-gpufleet-9d8c7b6a5f4e3d2c1b0a"


def _log(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return handle.read().splitlines()


def unit(invocation=NEW, active="active", sub="running", pid="4300", restarts="0", result="success", code="0", status="0"):
    return {"ActiveState": active, "SubState": sub, "MainPID": pid, "NRestarts": restarts, "Result": result,
            "ExecMainCode": code, "ExecMainStatus": status, "InvocationID": invocation}


def make_watch(started_at=T0, timeout=1800.0, stall_timeout=600.0, stall_timeouts=None, secrets=(SECRET,)):
    return StartWatch(started_at=started_at, timeout=timeout, stall_timeout=stall_timeout, stall_timeouts=stall_timeouts,
                      old_invocation=OLD, secrets=secrets)


def following(started_at=T0, **kwargs):
    """A watch that already follows the new invocation (activating, main PID 4300)."""
    watch = make_watch(started_at=started_at, **kwargs)
    watch.on_unit(unit(active="activating", sub="start"), started_at + 0.2)
    assert watch.following_new_process
    return watch


def feed(watch, lines, start, step=0.01):
    """Feed lines as the module does (one verdict per tick); returns the time of the last line."""
    now = start
    for index, line in enumerate(lines):
        now = start + index * step
        watch.on_line(line, now)
        assert watch.verdict(now) is None or index == len(lines) - 1
    return now


# ------------------------------------------------------------------------------------------------ ready
def test_ready_when_the_new_invocation_answers_200():
    watch = following()
    lines = _log("constructed_ready_0_5_23_journal.log")
    for index, line in enumerate(lines):
        watch.on_line(line, T0 + 1 + index, timestamp=T0 + 1 + index)
        assert watch.verdict(T0 + 1 + index) is None  # the log says ready, but only HTTP decides
    watch.on_unit(unit(), T0 + 80.0)
    watch.on_http(None, T0 + 80.1)
    watch.on_http(503, T0 + 80.2)
    assert watch.verdict(T0 + 80.2) is None
    watch.on_http(200, T0 + 90.0)
    watch.on_http(200, T0 + 91.0)  # a later 200 does not move the moment of readiness
    verdict = watch.verdict(T0 + 90.05)
    assert verdict["outcome"] == "ready" and verdict["reason"] == "the readiness endpoint answered 200"
    assert verdict["elapsed_s"] == 90.05 and verdict["ready_noticed_at"] == T0 + 90.0
    assert (verdict["main_pid"], verdict["restarts"]) == (4300, 0)
    assert verdict["phase"] == "ready" and "fired up and ready to roll" in verdict["ready_line"]
    assert [p["phase"] for p in verdict["phases"]] == list(PHASES)
    assert verdict["phases"][:2] == [{"phase": "process_started", "at_s": 1.0}, {"phase": "parallel_init", "at_s": 4.0}]


def test_an_http_200_of_the_old_invocation_never_counts():
    watch = make_watch()
    watch.on_http(200, T0 + 0.1)  # nothing observed yet
    watch.on_unit(unit(invocation=OLD), T0 + 0.2)  # the old process still runs and answers while it drains
    watch.on_http(200, T0 + 0.3)
    watch.on_unit(unit(invocation=OLD, active="deactivating", sub="stop-sigterm"), T0 + 0.5)
    watch.on_unit(unit(invocation=OLD, active="inactive", sub="dead", pid="0"), T0 + 0.7)  # the old one is gone: no failure
    watch.on_http(200, T0 + 0.8)
    assert not watch.following_new_process and watch.exit_reason is None
    assert watch.verdict(T0 + 0.9) is None
    watch.on_unit(unit(active="activating", sub="start"), T0 + 1.0)
    assert watch.following_new_process and watch.verdict(T0 + 1.0) is None
    watch.on_http(200, T0 + 42.0)
    assert watch.verdict(T0 + 42.0)["ready_noticed_at"] == T0 + 42.0


def test_an_http_200_after_the_unit_exited_does_not_count():
    watch = following()
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="exit-code", code="1", status="1"), T0 + 5.0)
    watch.on_http(200, T0 + 5.1)  # something else answers on the port
    verdict = watch.verdict(T0 + 6.0)
    assert verdict["outcome"] == "failed" and verdict["reason"] == "the unit failed (Result=exit-code, exit status 1)"


# ------------------------------------------------------------------------------------------------ fatal lines
def test_a_fatal_line_waits_a_bounded_grace_for_its_traceback():
    watch = following()
    lines = _log("constructed_weights_oom_torch_0_5_23.log")[:16]  # up to the exception line: the traceback is still open
    fatal_at = T0 + 60.0 + 4 * 0.01  # line 4: "Received sigquit from a child process", before the scheduler's traceback
    last = feed(watch, lines, T0 + 60.0)
    assert watch.failure_seen_at == pytest.approx(fatal_at)
    assert watch.verdict(last) is None
    assert watch.verdict(fatal_at + TRACEBACK_GRACE_S - 0.01) is None
    verdict = watch.verdict(fatal_at + TRACEBACK_GRACE_S + 0.01)
    assert verdict["outcome"] == "failed" and verdict["reason"] == "SGLang logged a fatal error"
    assert verdict["cause"] == "gpu_out_of_memory" and verdict["phase"] == "weights_loading"
    assert verdict["traceback"].startswith('Traceback (most recent call last):\n  File "/opt/sglang/venv/lib/python3.12/site-packages/'
                                           'sglang/srt/managers/scheduler.py"')
    assert verdict["fatal_line"] == "[2026-11-30 11:20:44] Received sigquit from a child process. It usually means the child failed."
    assert verdict["traceback"].rstrip().endswith("expandable_segments:True to avoid fragmentation.  See documentation for Memory "
                                                  "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    assert verdict["error_message"].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert verdict["failure_seen_at"] == pytest.approx(fatal_at) and verdict["verdict_at"] == fatal_at + TRACEBACK_GRACE_S + 0.01
    assert verdict["unit"]["ActiveState"] == "activating"


def test_the_waits_are_parameters():
    """A caller (the module's tests) shortens the grace and the exit's deadline without touching the module's constants."""
    def short():
        watch = StartWatch(started_at=T0, timeout=1800.0, stall_timeout=600.0, old_invocation=OLD, traceback_grace_s=0.05,
                           exit_drain_max_s=0.5, lines_quiet_s=0.01, exit_verdict_s=0.2)
        watch.on_unit(unit(active="activating", sub="start"), T0 + 0.2)
        return watch

    watch = short()
    fatal_at = feed(watch, _log("constructed_weights_oom_torch_0_5_23.log")[:5], T0 + 60.0)  # line 4: a bare sigquit
    assert watch.failure_seen_at == fatal_at and not watch.scanner.is_final
    assert watch.verdict(fatal_at + 0.04) is None
    assert watch.verdict(fatal_at + 0.06)["reason"] == "SGLang logged a fatal error"
    exited = short()
    feed(exited, _log("constructed_weights_oom_torch_0_5_23.log")[:2], T0 + 29.0)
    exited.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    assert exited.verdict(T0 + 30.19) is None  # no evidence and no systemd exit line: the exit's deadline
    assert exited.verdict(T0 + 30.21)["reason"] == "the unit failed (Result=signal, killed by signal 9/KILL)"
    assert (TRACEBACK_GRACE_S, EXIT_VERDICT_S, LINES_QUIET_S, EXIT_DRAIN_MAX_S) == (0.6, 0.35, 0.05, 5.0)  # the module's defaults


def test_a_complete_fatal_traceback_ends_the_wait_at_once():
    watch = following()
    lines = _log("constructed_weights_oom_torch_0_5_23.log")[:16]
    last = feed(watch, lines, T0 + 60.0)
    assert watch.verdict(last) is None
    watch.on_line("[2026-11-30 11:20:45] Killing child processes", last + 0.01)  # a record line closes the traceback
    verdict = watch.verdict(last + 0.01)
    assert verdict["outcome"] == "failed" and verdict["cause"] == "gpu_out_of_memory"
    assert verdict["verdict_at"] - watch.failure_seen_at < TRACEBACK_GRACE_S


def test_an_argparse_error_fails_on_its_line():
    watch = following()
    lines = _log("constructed_argparse_removed_flag_0_5_23.log")[:-1]  # up to the parser's error line, before systemd's exit
    last = feed(watch, lines, T0 + 3.0)
    verdict = watch.verdict(last)
    assert verdict["outcome"] == "failed" and verdict["cause"] == "invalid_arguments"
    assert verdict["error_message"] == "sglang serve: error: unrecognized arguments: --enforce-piecewise-cuda-graph"


def test_a_traceback_alone_is_not_fatal():
    watch = following()
    lines = _log("constructed_hub_retry_then_ready.log")
    ready_at = next(i for i, line in enumerate(lines) if "fired up" in line)
    feed(watch, lines[:ready_at], T0 + 1.0, step=0.5)
    assert watch.failure_seen_at is None and watch.verdict(T0 + 1.0 + ready_at * 0.5) is None


# ------------------------------------------------------------------------------------------------ the unit's exit
EXIT_LINE = "sglang-main.service: Main process exited, code=killed, status=9/KILL"


def test_a_unit_exit_without_a_log_fails_as_soon_as_the_journal_is_quiet():
    """systemd's exit line comes after the dead process's last line: once it came and nothing followed, the verdict."""
    watch = following()
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    watch.on_line("2026-11-30T11:20:44.000000+00:00 lab1 systemd[1]: " + EXIT_LINE, T0 + 30.0)
    assert watch.verdict(T0 + 30.0) is None
    assert watch.verdict(T0 + 30.0 + LINES_QUIET_S - 0.01) is None
    verdict = watch.verdict(T0 + 30.0 + LINES_QUIET_S + 0.01)
    assert verdict["reason"] == "the unit failed (Result=signal, killed by signal 9/KILL)"
    assert verdict["cause"] == "unknown" and "ended before reaching ready" in verdict["hint"]
    assert verdict["failure_seen_at"] == T0 + 30.0 and verdict["exit_seen_at"] == T0 + 30.0
    assert verdict["fatal_line"] == EXIT_LINE and verdict["systemd_line"] == EXIT_LINE  # systemd's words only: SGLang said none
    assert verdict["unit"] == {"ActiveState": "failed", "SubState": "failed", "Result": "signal", "NRestarts": "0", "ExecMainStatus": "9"}


def test_a_unit_exit_at_time_zero_still_ends():
    """Explicit times may start at 0.0 (a fake clock): an exit seen at 0.0 must not wait forever."""
    watch = following(started_at=0.0)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="exit-code", code="1", status="1"), 0.0)
    watch.on_entry(JournalLine(0.0, 1, "systemd", "sglang-main.service: Main process exited, code=exited, status=1/FAILURE"), 0.0)
    verdict = watch.verdict(EXIT_VERDICT_S)
    assert verdict is not None and verdict["outcome"] == "failed" and verdict["elapsed_s"] == EXIT_VERDICT_S


def test_systemds_exit_line_alone_is_an_exit():
    """The journal can tell the exit before the unit's state does: the deadline runs from the exit line."""
    watch = following()
    feed(watch, _log("constructed_weights_oom_torch_0_5_23.log")[:2], T0 + 29.0)
    watch.on_entry(JournalLine(T0 + 30.0, 1, "systemd", EXIT_LINE), T0 + 30.0)
    assert watch.exit_reason is None and watch.exit_at == T0 + 30.0
    verdict = watch.verdict(T0 + 30.0 + LINES_QUIET_S + 0.01)
    assert verdict["reason"] == "systemd logged the end of the main process (%s)" % EXIT_LINE


def test_an_exit_seen_before_its_log_lines_waits_while_the_journal_delivers_them():
    """On a loaded host journald can deliver the dead process's traceback after systemd reported the exit: the verdict
    waits past its deadline only while those lines are still arriving and systemd's exit line has not come."""
    watch = following()
    lines = _log("constructed_weights_oom_torch_0_5_23.log")
    feed(watch, lines[:2], T0 + 29.0)  # it started logging
    watch.on_unit(unit(active="activating", sub="auto-restart", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    assert watch.verdict(T0 + 30.2) is None
    last = feed(watch, lines[2:-1], T0 + 30.3, step=0.05)  # the traceback, late and slowly
    assert last > T0 + 30.0 + EXIT_VERDICT_S and watch.verdict(last) is None  # past the deadline, the journal is still behind
    watch.on_line(lines[-1], last + 0.05)  # systemd's exit line: the dead process's lines are all there
    verdict = watch.verdict(last + 0.05)
    assert verdict is not None and verdict["cause"] == "gpu_out_of_memory"


def test_an_exit_whose_lines_never_come_ends_at_the_exit_deadline():
    watch = following()
    feed(watch, _log("constructed_weights_oom_torch_0_5_23.log")[:2], T0 + 29.0)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    assert watch.verdict(T0 + 30.0 + EXIT_VERDICT_S - 0.01) is None
    verdict = watch.verdict(T0 + 30.0 + EXIT_VERDICT_S + 0.01)
    assert verdict is not None and verdict["cause"] == "unknown"


def test_an_exit_after_an_open_traceback_waits_for_systemds_exit_line_then_ends():
    watch = following()
    lines = _log("constructed_weights_oom_torch_0_5_23.log")[:16]
    feed(watch, lines, T0 + 60.0)
    fatal_at = watch.failure_seen_at
    watch.on_unit(unit(active="activating", sub="auto-restart", pid="0", result="signal", code="2", status="9"), fatal_at + 0.5)
    assert watch.verdict(fatal_at + 0.55) is None  # the traceback is open and systemd's line has not come
    watch.on_entry(JournalLine(fatal_at + 0.7, 1, "systemd", "sglang.service: Main process exited, code=killed, status=9/KILL"), fatal_at + 0.7)
    # journald can take in systemd's exit line before the dead process's last output: the traceback stays open a moment
    assert watch.exit_logged and not watch.scanner.is_final and watch.verdict(fatal_at + 0.7) is None
    verdict = watch.verdict(fatal_at + 0.7 + LINES_QUIET_S + 0.001)
    assert verdict is not None and verdict["cause"] == "gpu_out_of_memory"
    assert verdict["reason"] == "the main process exited and systemd is restarting it (killed by signal 9/KILL)"
    assert verdict["failure_seen_at"] == fatal_at and verdict["verdict_at"] == fatal_at + 0.7 + LINES_QUIET_S + 0.001
    assert verdict["fatal_line"] == "[2026-11-30 11:20:44] Received sigquit from a child process. It usually means the child failed."
    assert verdict["systemd_line"] == "sglang.service: Main process exited, code=killed, status=9/KILL"


def test_lines_that_still_arrive_after_systemds_exit_line_are_waited_for_until_the_deadline():
    """Evidence still incomplete after systemd's exit line (a bare exit awaits its traceback): wait while lines come,
    never past the exit's deadline."""
    watch = following()
    feed(watch, _log("constructed_weights_oom_torch_0_5_23.log")[:2], T0 + 29.0)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    watch.on_entry(JournalLine(T0 + 30.1, 1, "systemd", EXIT_LINE), T0 + 30.1)
    assert watch.exit_logged and watch.failure_seen_at == T0 + 30.1 and not watch.scanner.is_final
    assert watch.verdict(T0 + 30.1 + LINES_QUIET_S - 0.01) is None
    watch.on_line("[2026-11-30 11:20:45] Killing child processes", T0 + 30.15)  # one more line of the dead process, late
    assert watch.verdict(T0 + 30.15 + LINES_QUIET_S - 0.01) is None  # lines are still arriving
    verdict = watch.verdict(T0 + 30.15 + LINES_QUIET_S + 0.01)
    assert verdict is not None and verdict["reason"] == "the unit failed (Result=signal, killed by signal 9/KILL)"
    assert verdict["verdict_at"] == T0 + 30.15 + LINES_QUIET_S + 0.01
    busy = following()
    busy.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    busy.on_entry(JournalLine(T0 + 30.0, 1, "systemd", EXIT_LINE), T0 + 30.0)
    now = T0 + 30.0
    while busy.verdict(now) is None:  # a line every 50 ms, for ever: the deadline still holds
        now += 0.05
        busy.on_line("[2026-11-30 11:20:45] still talking", now)
    assert now - (T0 + 30.0) <= EXIT_VERDICT_S + 0.05


def test_next_check_says_when_the_verdict_is_due():
    watch = following()
    assert watch.next_check(T0 + 1.0) is None  # nothing is pending: only a new observation can decide
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.0)
    assert watch.next_check(T0 + 30.1) == pytest.approx(EXIT_VERDICT_S - 0.1)
    watch.on_entry(JournalLine(T0 + 30.2, 1, "systemd", EXIT_LINE), T0 + 30.2)
    assert watch.next_check(T0 + 30.2) == pytest.approx(LINES_QUIET_S)
    assert watch.next_check(T0 + 31.0) == 0.0


def test_an_old_processs_lines_before_the_restart_are_not_this_start():
    """The journal follows from before the restart: the old invocation's lines (a shutdown traceback, systemd's exit
    lines about it) come first and do not count; the new invocation's lines do, even before systemd's "Started"."""
    watch = make_watch()
    old = [JournalLine(T0 + 0.1, 4200, "sglang", "Traceback (most recent call last):", None, OLD),
           JournalLine(T0 + 0.1, 4200, "sglang", '  File "/v/sglang/launch_server.py", line 14, in <module>', None, OLD),
           JournalLine(T0 + 0.1, 4200, "sglang", "KeyboardInterrupt", None, OLD),
           JournalLine(T0 + 0.1, 1, "systemd", "sglang-main.service: Main process exited, code=killed, status=9/KILL", None, OLD),
           JournalLine(T0 + 0.1, 1, "systemd", "sglang-main.service: Failed with result 'timeout'.", None, OLD)]
    for entry in old:
        watch.on_entry(entry, T0 + 0.1)
    assert watch.lines == 0 and watch.failure_seen_at is None and not watch.exit_logged
    watch.on_entry(JournalLine(T0 + 0.2, 4300, "sglang", "RuntimeError: Not enough memory. Please try to increase "
                               "--mem-fraction-static.", None, NEW), T0 + 0.2)  # journald put it before "Started"
    watch.on_entry(JournalLine(T0 + 0.2, 1, "systemd", "Started sglang-main.service - SGLang inference server.", None, NEW), T0 + 0.2)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 0.3)
    watch.on_entry(JournalLine(T0 + 0.3, 1, "systemd", EXIT_LINE, None, NEW), T0 + 0.3)
    verdict = watch.verdict(T0 + 0.3 + LINES_QUIET_S + 0.01)
    assert verdict["cause"] == "gpu_out_of_memory" and verdict["error_message"].startswith("RuntimeError: Not enough memory.")


def test_a_unit_exit_with_a_finished_log_fails_once_the_journal_is_quiet():
    watch = following()
    lines = _log("constructed_weights_oom_torch_0_5_23.log")  # ends with systemd's "Main process exited"
    last = feed(watch, lines, T0 + 60.0)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), last)
    assert watch.verdict(last) is None  # the traceback could still grow: lines of the dead process may follow
    verdict = watch.verdict(last + LINES_QUIET_S + 0.001)
    assert verdict["cause"] == "gpu_out_of_memory" and verdict["reason"].startswith("the unit failed (Result=signal")


@pytest.mark.parametrize("props, reason", [
    (unit(active="activating", sub="auto-restart", pid="0", code="1", status="1"), "the main process exited and systemd is restarting it (exit status 1)"),
    (unit(invocation="another", active="activating", sub="start", pid="4400", restarts="1"), "systemd restarted the unit (NRestarts 0 -> 1)"),
    (unit(active="deactivating", sub="stop-sigterm", pid="0", code="3", status="11"), "the main process 4300 exited (killed by signal 11/SEGV)"),
    (unit(active="inactive", sub="dead", pid="0", code="1", status="0"), "the unit stopped (Result=success, exit status 0)"),
], ids=["auto-restart", "restarted", "pid-gone", "stopped"])
def test_every_kind_of_exit_is_seen(props, reason):
    watch = make_watch()
    watch.on_unit(unit(), T0 + 1.0)  # baseline: the new invocation runs as PID 4300
    watch.on_unit(props, T0 + 2.0)
    assert watch.exit_reason == reason and watch.exit_seen_at == T0 + 2.0
    assert watch.verdict(T0 + 3.0)["reason"] == reason


def test_a_refused_start_of_the_old_invocation_counts_as_failed():
    watch = make_watch()
    watch.on_unit(unit(invocation=OLD, active="failed", sub="failed", pid="0", result="start-limit-hit"), T0 + 0.3)
    assert watch.following_new_process
    assert watch.verdict(T0 + 1.0)["reason"].startswith("the unit failed (Result=start-limit-hit")


# ------------------------------------------------------------------------------------------------ stall and timeout
def test_a_stall_uses_the_phase_timeout():
    watch = following(timeout=7200.0, stall_timeout=300.0, stall_timeouts={"weights_loading": 1800.0})
    lines = _log("starting_weights_tp1_15426.log")
    last = feed(watch, lines, T0 + 1.0)
    assert watch.scanner.current_phase() == "weights_loading"
    assert watch.verdict(last + 1000.0) is None  # past the default, within the phase's own timeout
    assert watch.verdict(last + 1800.0) is None
    verdict = watch.verdict(last + 1801.0)
    assert verdict["outcome"] == "failed" and verdict["cause"] == "stalled" and verdict["phase"] == "weights_loading"
    assert verdict["reason"] == "stalled in weights_loading for 1801 s (no new log line, no phase change)"
    assert "model_cache" in verdict["hint"]
    assert verdict["last_lines"][-1] == lines[-1]


def test_a_stall_in_another_phase_uses_the_default_and_its_hint():
    watch = following(stall_timeout=300.0, stall_timeouts={"weights_loading": 1800.0})
    lines = _log("constructed_ready_0_5_23_journal.log")[:5]  # into parallel_init
    last = feed(watch, lines, T0 + 1.0)
    assert watch.verdict(last + 300.0) is None
    verdict = watch.verdict(last + 300.5)
    assert verdict["cause"] == "stalled" and verdict["phase"] == "parallel_init" and "NCCL_P2P_DISABLE=1" in verdict["hint"]


def test_each_new_line_restarts_the_stall_clock():
    watch = following(stall_timeout=300.0)
    watch.on_line("[2026-11-30 09:02:11 TP0] Load weight begin. avail mem=46.92 GB", T0 + 10.0)
    assert watch.verdict(T0 + 10.0) is None
    watch.on_line("Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:20<01:00,  20.0s/it]", T0 + 290.0)
    assert watch.verdict(T0 + 590.0) is None
    assert watch.verdict(T0 + 590.5)["reason"] == "stalled in weights_loading for 300 s (no new log line, no phase change)"


def test_a_stall_before_any_line_names_the_startup():
    watch = make_watch(stall_timeout=120.0)
    assert watch.verdict(T0 + 120.0) is None
    verdict = watch.verdict(T0 + 121.0)
    assert verdict["reason"] == "stalled in startup for 121 s (no new log line, no phase change)" and verdict["phase"] is None
    assert verdict["hint"].startswith("raise sglang_server_stall_timeout")


def test_the_overall_timeout_ends_a_start_that_keeps_logging():
    watch = following(timeout=100.0, stall_timeout=60.0)
    watch.on_line("[2026-11-30 09:02:11 TP0] Load weight begin. avail mem=46.92 GB", T0 + 1.0)
    for second in range(11, 101, 10):
        watch.on_line("Loading safetensors checkpoint shards:  %d%% Completed" % second, T0 + second)
        assert watch.verdict(T0 + second) is None
    verdict = watch.verdict(T0 + 101.0)
    assert verdict["cause"] == "timeout" and verdict["phase"] == "weights_loading"
    assert verdict["reason"] == "not ready after 101 s (overall timeout), last phase weights_loading"
    assert verdict["hint"] == "raise sglang_server_start_timeout if this host is slow but healthy"


# ------------------------------------------------------------------------------------------------ secrets
def test_secrets_never_reach_the_verdict():
    own = "0ther-s3cret-value"
    watch = following(secrets=(SECRET, own))
    lines = _log("constructed_warmup_401_secret_in_traceback.log")
    lines.insert(1, "[2026-11-30 20:00:02] token %s will be checked" % own)
    last = feed(watch, lines, T0 + 40.0)
    verdict = watch.verdict(last)
    assert verdict["cause"] == "warmup_failed"
    text = json.dumps(verdict)
    assert SECRET in "\n".join(lines) and SECRET not in text and own not in text


# ------------------------------------------------------------------------------------------------ after ready (settle)
def _ready_watch():
    watch = following()
    watch.on_unit(unit(), T0 + 50.0)
    watch.on_http(200, T0 + 60.0)
    assert watch.verdict(T0 + 60.0)["outcome"] == "ready"
    return watch


def test_settle_stays_quiet_while_the_server_keeps_answering():
    watch = _ready_watch()
    watch.on_unit(unit(), T0 + 61.0)
    watch.on_http(200, T0 + 61.0)
    assert watch.settle_verdict(T0 + 65.0) is None


def test_settle_reports_a_crash_after_ready():
    watch = _ready_watch()
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="11"), T0 + 62.0)
    assert watch.settle_verdict(T0 + 62.1) is None
    verdict = watch.settle_verdict(T0 + 62.0 + EXIT_VERDICT_S + 0.01)
    assert verdict["outcome"] == "failed" and verdict["cause"] == "crashed_after_ready"
    assert verdict["reason"] == "the unit failed (Result=signal, killed by signal 11/SEGV) 2.0 s after it was ready"


def test_settle_reports_readiness_lost():
    watch = _ready_watch()
    watch.on_http(503, T0 + 63.0)
    verdict = watch.settle_verdict(T0 + 63.1)
    assert verdict["cause"] == "unhealthy_after_ready" and verdict["reason"] == "the readiness endpoint answered 503 3.0 s after it was ready"


# ------------------------------------------------------------------------------------------------ phase_timings
def test_phase_timings_are_seconds_from_the_restart():
    phases = [{"phase": "process_started", "first_seen": T0 + 2.5}, {"phase": "parallel_init", "first_seen": None},
              {"phase": "weights_loading", "first_seen": int(T0) + 9}]
    assert phase_timings(phases, T0) == [{"phase": "process_started", "at_s": 2.5}, {"phase": "parallel_init", "at_s": None},
                                         {"phase": "weights_loading", "at_s": 9.0}]
    assert not phase_timings([], T0)


# ------------------------------------------------------------------------------------------------ soak
def test_the_soak_needs_its_window_and_its_healthy_checks():
    watch = _ready_watch()  # ready at T0 + 60
    assert not watch.soaked(T0 + 60.5, soak_time=10.0, soak_checks=3)
    for moment in (T0 + 62.0, T0 + 64.0):
        watch.on_http(200, moment)
    assert not watch.soaked(T0 + 71.0, soak_time=10.0, soak_checks=3)  # the window passed, but only two checks
    watch.on_http(200, T0 + 71.5)
    assert watch.healthy_checks == 3 and watch.soaked(T0 + 71.5, soak_time=10.0, soak_checks=3)
    assert watch.soaked(T0 + 60.0, soak_time=0.0, soak_checks=3)  # no soak: good at the first ready answer


def test_a_soak_never_passes_after_a_503_or_an_exit():
    lost = _ready_watch()
    lost.on_http(200, T0 + 61.0)
    lost.on_http(503, T0 + 62.0)
    lost.on_http(200, T0 + 63.0)
    assert not lost.soaked(T0 + 200.0, soak_time=5.0, soak_checks=1)
    assert lost.settle_verdict(T0 + 200.0)["cause"] == "unhealthy_after_ready"
    died = _ready_watch()
    died.on_http(200, T0 + 61.0)
    died.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 66.0)
    assert not died.soaked(T0 + 200.0, soak_time=5.0, soak_checks=1)


# ------------------------------------------------------------------------------------------------ own progress only
ACCESS = '[2026-11-30 20:01:07] INFO:     127.0.0.1:52144 - "GET /ready HTTP/1.1" 503 Service Unavailable'


@pytest.mark.parametrize("line, access", [
    (ACCESS, True),
    ('INFO:     127.0.0.1:40222 - "POST /generate HTTP/1.1" 200 OK', True),
    ('[2026-11-30 20:01:07] INFO:     10.0.0.7:5000 - "GET /health HTTP/1.1" 200', True),
    ("[2026-11-30 20:01:07 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=30.12 GB", False),
    ('[2026-11-30 20:01:07] The server is fired up and ready to roll!', False),
])
def test_access_lines_are_told_from_the_servers_own(line, access):
    assert is_access_line(line) is access


def test_the_launchs_own_polling_is_no_progress_and_a_hang_behind_live_http_stalls():
    watch = following(stall_timeout=30.0)
    watch.on_line("[2026-11-30 20:01:00] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)", T0 + 10.0)
    assert watch.verdict(T0 + 10.0) is None
    verdicts = []
    for second in range(11, 45):  # the readiness polling answers 503 the whole time, one access line per request
        watch.on_line(ACCESS, T0 + second)
        watch.on_http(503, T0 + second)
        verdicts.append((second, watch.verdict(T0 + second)))
    second, verdict = next((second, verdict) for second, verdict in verdicts if verdict is not None)
    assert second == 41 and verdict["cause"] == "stalled" and verdict["reason"].startswith("stalled in http_up for 31 s")
    assert "warmup never finished" in verdict["hint"]


def test_a_stall_of_a_stopped_process_says_it_is_stopped_not_loading():
    failure = {"outcome": "failed", "cause": "stalled", "reason": "stalled in weights_loading for 31 s (no new log line, no phase change)",
               "hint": "weights are still loading"}
    told = stopped_stall(failure, [4300, 4301])
    assert told["reason"].endswith("; the process is stopped (state T: PID 4300, 4301), not loading")
    assert "stopped" in told["hint"] and "kill -CONT 4300, 4301" in told["hint"] and "loading:" in told["hint"]
    assert told["stopped_pids"] == [4300, 4301] and failure["hint"] == "weights are still loading"
    assert stopped_stall(failure, []) is failure  # nothing stopped: a stall as before
    crash = dict(failure, cause="gpu_out_of_memory")
    assert stopped_stall(crash, [4300]) is crash  # only a stall is reworded


def test_stall_timeout_applies_to_every_phase_unless_one_is_set():
    loading = following(stall_timeout=30.0)
    loading.on_line("[2026-11-30 20:01:00 TP0] Load weight begin. avail mem=46.69 GB", T0 + 1.0)
    assert loading.verdict(T0 + 1.0) is None and loading.verdict(T0 + 30.0) is None
    assert loading.verdict(T0 + 31.5)["cause"] == "stalled"
    explicit = following(stall_timeout=30.0, stall_timeouts={"weights_loading": 120.0})
    explicit.on_line("[2026-11-30 20:01:00 TP0] Load weight begin. avail mem=46.69 GB", T0 + 1.0)
    assert explicit.verdict(T0 + 1.0) is None and explicit.verdict(T0 + 100.0) is None and explicit.verdict(T0 + 122.0)["cause"] == "stalled"
