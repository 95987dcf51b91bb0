# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""startup/watch in exact words and at its cut-offs: each phase's stall hint, the verdicts' texts and keys, the
soak's and the settle's boundaries, and the fields a unit's state may leave out. Times are exact binary fractions."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import JournalLine
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.watch import StartWatch, phase_timings, stopped_stall

OLD = "0a1d5e0c2b7f4c3e9d8a6b5c4d3e2f10"
NEW = "9f8e7d6c5b4a49388271605f4e3d2c1b"
T0 = 1764493312.0


def watch_(**kwargs):
    args = dict(started_at=T0, timeout=1800.0, stall_timeout=600.0, old_invocation=OLD)
    args.update(kwargs)
    return StartWatch(**args)


def following(**kwargs):
    watch = watch_(**kwargs)
    watch.on_unit({"ActiveState": "activating", "SubState": "start", "MainPID": "4300", "NRestarts": "0", "InvocationID": NEW}, T0)
    return watch


@pytest.mark.parametrize("phase, hint", [
    ("weights_loading", "weights are still loading: a cold download inside the start looks like this (use the model_cache role), "
                        "or raise sglang_server_stall_timeouts.weights_loading for a very large model on slow disks"),
    ("cuda_graph_capture", "CUDA graph capture hangs: try cuda_graph_max_bs_decode lower, or disable the graph backends to confirm"),
    ("parallel_init", "NCCL/distributed init hangs: a P2P path that the platform does not allow (ACS/IOMMU) is a known cause; "
                      "try NCCL_P2P_DISABLE=1 through gpu_tuning_passthrough_env to confirm"),
    ("http_up", "the HTTP server is up but the warmup never finished (/ready keeps answering 503): a hung scheduler or a warmup "
                "request that never returns; read the last log lines"),
    ("warmup", "the HTTP server is up but the warmup never finished (/ready keeps answering 503): a hung scheduler or a warmup "
               "request that never returns; read the last log lines"),
    ("process_started", "raise sglang_server_stall_timeout if this phase is slow but healthy on this host; otherwise read the last log lines"),
])
def test_each_phase_s_stall_hint(phase, hint):
    watch = following(stall_timeout=100.0)
    watch.scanner.current_phase = lambda: phase  # the phase the scanner read from the log
    assert watch.verdict(T0 + 1.0) is None
    verdict = watch.verdict(T0 + 102.0)
    assert (verdict["cause"], verdict["hint"]) == ("stalled", hint)
    assert verdict["reason"] == "stalled in %s for 101 s (no new log line, no phase change)" % phase


def test_a_stopped_process_s_stall_in_these_words():
    failure = {"cause": "stalled", "reason": "stalled in weights_loading for 601 s (no new log line, no phase change)"}
    assert stopped_stall(failure, [4300, 4301]) == {
        "cause": "stalled",
        "reason": "stalled in weights_loading for 601 s (no new log line, no phase change); the process is stopped (state T: PID "
                  "4300, 4301), not loading",
        "hint": "the server's process is stopped (SIGSTOP, a debugger or a frozen cgroup), not loading: find who stopped it; "
                "`kill -CONT 4300, 4301` resumes it",
        "stopped_pids": [4300, 4301]}


def test_a_failure_with_nothing_from_the_log_has_every_key_and_the_defaults():
    watch = following(stall_timeout=1e9, timeout=100.0)
    verdict = watch.verdict(T0 + 100.5)
    assert sorted(verdict) == sorted(["outcome", "reason", "cause", "hint", "phase", "phases", "traceback", "error_message", "fatal_line",
                                      "systemd_line", "tracebacks", "last_lines", "elapsed_s", "joined", "verdict_at", "failure_seen_at",
                                      "exit_seen_at", "unit"])
    assert verdict["reason"] == "not ready after 100 s (overall timeout), last phase none"
    assert (verdict["phases"], verdict["tracebacks"], verdict["last_lines"]) == ([], [], [])
    assert verdict["elapsed_s"] == 100.5


def test_the_overall_timeout_is_past_the_timeout_not_at_it():
    watch = following(stall_timeout=1e9, timeout=100.0)
    assert watch.verdict(T0 + 100.0) is None
    assert watch.verdict(T0 + 100.25)["cause"] == "timeout"


def test_an_exit_s_verdict_is_due_at_its_deadline():
    watch = following(exit_verdict_s=0.25)
    watch.on_unit({"ActiveState": "failed", "SubState": "failed", "MainPID": "0", "NRestarts": "0", "InvocationID": NEW,
                   "Result": "exit-code", "ExecMainCode": "1", "ExecMainStatus": "1"}, T0 + 5.0)
    assert watch.verdict_due(T0 + 5.0) is False
    assert watch.verdict_due(T0 + 5.25) is True
    assert watch.verdict(T0 + 5.25)["reason"] == "the unit failed (Result=exit-code, exit status 1)"


def test_verdict_due_only_after_an_exit_and_never_once_ready():
    watch = following(exit_verdict_s=0.25)
    assert watch.verdict_due(T0 + 50.0) is False
    watch.on_http(200, T0 + 6.0)
    watch.on_unit({"ActiveState": "failed", "MainPID": "0", "InvocationID": NEW, "Result": "signal"}, T0 + 7.0)
    assert watch.verdict_due(T0 + 60.0) is False


def test_elapsed_and_phase_times_are_rounded_to_the_millisecond():
    watch = following()
    watch.on_http(200, T0 + 1.0)
    assert watch.verdict(T0 + 1.2345678)["elapsed_s"] == 1.235
    assert phase_timings([{"phase": "weights_loading", "first_seen": T0 + 2.0001220703125}], T0) == [
        {"phase": "weights_loading", "at_s": 2.0}]


def test_a_ready_verdict_without_main_pid_or_restart_counter():
    watch = watch_()
    watch.on_unit({"ActiveState": "activating", "InvocationID": NEW}, T0)
    watch.on_http(200, T0 + 1.0)
    verdict = watch.verdict(T0 + 1.0)
    assert (verdict["main_pid"], verdict["restarts"]) == (0, 0)
    watch.on_unit({"ActiveState": "active", "InvocationID": NEW, "MainPID": "", "NRestarts": ""}, T0 + 2.0)
    verdict = watch.verdict(T0 + 2.0)
    assert (verdict["main_pid"], verdict["restarts"]) == (0, 0)
    watch.on_unit({"ActiveState": "active", "InvocationID": NEW, "MainPID": "4300", "NRestarts": "2"}, T0 + 3.0)
    assert watch.verdict(T0 + 3.0)["restarts"] == 2


def test_a_follower_s_ready_reason():
    watch = following(ready_from_journal=True)
    watch.on_line("[2026-11-30 09:03:10] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)", T0 + 3.0)
    assert watch.verdict(T0 + 3.0)["reason"] == "its journal says its schedulers are up (a serving group's follower: no API, no HTTP readiness)"


def test_a_state_without_an_invocation_is_not_the_new_process():
    watch = watch_()
    watch.on_unit({"ActiveState": "activating", "SubState": "start", "MainPID": "4300"}, T0)
    assert watch.following_new_process is False


# ------------------------------------------------------------------------------------------------ journal timestamps
LINE = "[2026-11-30 09:01:58] Dispatch override enabled: --model-type=llm (skip auto detection)"


def test_an_entry_s_own_timestamp_dates_its_phase():
    watch = following()
    watch.on_entry(JournalLine(T0 + 1.0, 4300, "sglang", LINE, None, NEW), T0 + 5.0)
    watch.on_http(200, T0 + 6.0)
    assert watch.verdict(T0 + 6.0)["phases"][0] == {"phase": "process_started", "at_s": 1.0}


def test_a_line_s_given_timestamp_dates_its_phase():
    watch = following()
    watch.on_line(LINE, T0 + 5.0, timestamp=T0 + 1.0)
    watch.on_http(200, T0 + 6.0)
    assert watch.verdict(T0 + 6.0)["phases"][0] == {"phase": "process_started", "at_s": 1.0}


def test_entries_are_progress_that_restarts_the_stall_clock():
    watch = following(stall_timeout=100.0)
    shards = "Loading safetensors checkpoint shards:  %d%% Completed"
    watch.on_entry(JournalLine(T0 + 90.0, 4300, "sglang", shards % 25, None, NEW), T0 + 90.0)
    assert watch.verdict(T0 + 90.0) is None
    watch.on_entry(JournalLine(T0 + 140.0, 4300, "sglang", shards % 50, None, NEW), T0 + 140.0)  # same phase, a new line
    assert watch.verdict(T0 + 200.0) is None
    watch.on_entry(JournalLine(T0 + 141.0, 4300, "sglang", '127.0.0.1:52144 - "GET /ready HTTP/1.1" 503', None, NEW), T0 + 141.0)
    assert watch.verdict(T0 + 240.5)["cause"] == "stalled"  # an access line is no progress


# ------------------------------------------------------------------------------------------------ readiness and soak
def test_a_second_200_at_the_same_instant_is_no_healthy_check_and_no_loss():
    watch = following()
    watch.on_http(200, T0 + 1.0)
    watch.on_http(200, T0 + 1.0)
    assert watch.readiness_lost_at is None and watch.healthy_checks == 0
    watch.on_http(200, T0 + 1.5)
    assert watch.healthy_checks == 1


def test_a_503_before_ready_is_not_a_loss_of_readiness():
    watch = following()
    watch.on_http(503, T0 + 0.5)
    watch.on_http(200, T0 + 1.0)
    watch.on_http(200, T0 + 2.0)
    assert watch.settle_verdict(T0 + 2.0) is None
    assert watch.soaked(T0 + 2.0, 1.0, 1) is True


def test_the_soak_s_boundaries():
    watch = following()
    watch.on_http(200, T0 + 1.0)
    assert watch.soaked(T0 + 1.0, 0, 5) is True  # no soak: ready is enough
    assert watch.soaked(T0 + 1.25, 0.5, 0) is False
    assert watch.soaked(T0 + 1.5, 0.5, 0) is True  # exactly the soak time
    watch.on_http(200, T0 + 1.5)
    assert watch.soaked(T0 + 1.75, 0.5, 1) is True
    assert watch.soaked(T0 + 1.75, 0.5, 2) is False


def test_a_crash_after_ready_in_these_words_and_at_its_deadline():
    watch = following(exit_verdict_s=0.5)
    watch.scanner.result = lambda: {"outcome": "failed", "cause": "gpu_out_of_memory", "hint": "lower mem_fraction_static"}
    watch.on_http(200, T0 + 10.0)
    watch.on_unit({"ActiveState": "failed", "SubState": "failed", "MainPID": "0", "NRestarts": "0", "InvocationID": NEW,
                   "Result": "signal", "ExecMainCode": "2", "ExecMainStatus": "9"}, T0 + 12.5)
    assert watch.settle_verdict(T0 + 12.75) is None
    verdict = watch.settle_verdict(T0 + 13.0)
    assert verdict["reason"] == "the unit failed (Result=signal, killed by signal 9/KILL) 2.5 s after it was ready"
    assert (verdict["cause"], verdict["hint"]) == ("crashed_after_ready", "it served, then died: read the traceback and the last log lines; "
                                                   "a crash on the first real batch often means memory headroom (mem_fraction_static) or "
                                                   "a kernel problem")


@pytest.mark.parametrize("status, words", [(503, "503"), (None, "nothing")])
def test_readiness_lost_after_ready_in_these_words(status, words):
    watch = following()
    watch.scanner.result = lambda: {"outcome": "failed", "cause": "gpu_out_of_memory", "hint": "lower mem_fraction_static"}
    watch.on_http(200, T0 + 10.0)
    watch.on_http(status, T0 + 14.5)
    verdict = watch.settle_verdict(T0 + 15.0)
    assert verdict["reason"] == "the readiness endpoint answered %s 4.5 s after it was ready" % words
    assert (verdict["cause"], verdict["hint"]) == ("unhealthy_after_ready", "the server stopped answering ready (a hung scheduler shows as "
                                                   "503 from /health after SGLANG_HEALTH_CHECK_TIMEOUT): read the last log lines")


# ------------------------------------------------------------------------------------------------ next_check
def test_next_check_during_a_fatal_line_s_grace():
    watch = following(traceback_grace_s=0.5)
    watch.failure_seen_at = T0 + 1.0
    assert watch.next_check(T0 + 1.25) == 0.25
    assert watch.next_check(T0 + 2.0) == 0.0
