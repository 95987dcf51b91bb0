# -*- coding: utf-8 -*-
"""One summary of a failed task for rollout.yml and tune.yml: a crash, a missed probe gate, a refused flag and a
task that failed without a diagnosis; and the tuner's report reads the same reason from it as it did before."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.failure_summary import DIAGNOSIS_KEYS, failure_summary
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import failure_label, failure_reason

TRACEBACK = 'Traceback (most recent call last):\n  File "scheduler.py", line 3\ntorch.OutOfMemoryError: CUDA out of memory.'
CRASH_FAILURE = {
    "outcome": "failed", "reason": "the unit exited", "cause": "gpu_out_of_memory", "hint": "lower mem_fraction_static.",
    "phase": "cuda_graph_capture", "phases": [{"phase": "weights_loading", "at_s": 2.0}], "traceback": TRACEBACK,
    "error_message": "torch.OutOfMemoryError: CUDA out of memory.", "fatal_line": "torch.OutOfMemoryError: CUDA out of memory.",
    "last_lines": ["Capturing batches", "torch.OutOfMemoryError: CUDA out of memory."], "elapsed_s": 9.1,
    "unit": {"ActiveState": "failed"}}
CRASH = {"failed": True, "changed": True, "restarted": True, "changed_files": ["/etc/sglang/main.yaml"], "ready": True,
         "msg": "SGLang (sglang-main.service) failed to start: the unit exited; cause gpu_out_of_memory in phase cuda_graph_capture.",
         "failure": CRASH_FAILURE, "rolled_back": True, "rollback_ready": True, "rollback": {"outcome": "ready", "elapsed_s": 4.0}}
GATE_FAILURE = dict(CRASH_FAILURE, reason="the probe gate missed", cause="probe_gate_failed", phase="ready",
                    hint="decode tok/s (mean) at concurrency 1: 40.1 tok/s vs baseline 54.0 (-25.7%)", traceback=None,
                    error_message=None, last_lines=[])
GATE = dict(CRASH, failure=GATE_FAILURE, msg="SGLang (sglang-main.service) failed to start: the probe gate missed",
            probe={"levels": []})
REFUSED = {"failed": True, "changed": False, "msg": "1 error: --enforce-piecewise-cuda-graph was removed",
           "findings": [{"severity": "warning", "flag": "tp_size", "message": "deprecated"},
                        {"severity": "error", "flag": "enforce_piecewise_cuda_graph", "message": "removed in 0.5.20"}]}
PLAIN = {"failed": True, "changed": False, "msg": "Unable to start service sglang-main.service: Unit not found."}


def test_a_crash_with_its_diagnosis_and_the_rollback():
    assert failure_summary(CRASH) == {
        "status": "crashed", "message": CRASH["msg"], "findings": [],
        "cause": "gpu_out_of_memory", "reason": "the unit exited", "hint": "lower mem_fraction_static.", "phase": "cuda_graph_capture",
        "error_message": "torch.OutOfMemoryError: CUDA out of memory.", "traceback": TRACEBACK,
        "last_lines": ["Capturing batches", "torch.OutOfMemoryError: CUDA out of memory."],
        "diagnosis": {key: CRASH_FAILURE[key] for key in DIAGNOSIS_KEYS},
        "rolled_back": True, "rollback_ready": True}


def test_the_diagnosis_leaves_out_what_an_operator_does_not_read():
    assert set(failure_summary(CRASH)["diagnosis"]) == {"cause", "reason", "hint", "phase", "error_message", "traceback", "last_lines"}


def test_a_probe_gate_failure():
    summary = failure_summary(GATE)
    assert summary["status"] == "gate_failed" and summary["cause"] == "probe_gate_failed"
    assert summary["hint"] == "decode tok/s (mean) at concurrency 1: 40.1 tok/s vs baseline 54.0 (-25.7%)"
    assert summary["traceback"] is None and summary["last_lines"] == [] and summary["diagnosis"]["error_message"] is None
    assert summary["rolled_back"] is True and summary["rollback_ready"] is True and summary["findings"] == []


def test_a_module_failure_without_failure_is_a_crash_of_unknown_cause_hinted_by_its_message():
    assert failure_summary(PLAIN) == {
        "status": "crashed", "message": PLAIN["msg"], "findings": [], "cause": "unknown", "reason": None, "hint": PLAIN["msg"],
        "phase": None, "error_message": None, "traceback": None, "last_lines": None, "diagnosis": {}, "rolled_back": False,
        "rollback_ready": None}


def test_a_failed_launch_with_nothing_to_roll_back_to():
    summary = failure_summary(dict(CRASH, rolled_back=False, rollback_ready=None, stopped=True))
    assert summary["rolled_back"] is False and summary["rollback_ready"] is None


def test_a_rollback_that_did_not_reach_ready():
    summary = failure_summary(dict(CRASH, rollback_ready=False, ready=False))
    assert summary["rolled_back"] is True and summary["rollback_ready"] is False


def test_a_diagnosis_without_a_cause_reads_unknown_but_is_kept_as_given():
    summary = failure_summary({"msg": "m", "failure": {"reason": "timeout", "hint": None}})
    assert summary["status"] == "crashed" and summary["cause"] == "unknown" and summary["hint"] is None
    assert summary["diagnosis"] == {"reason": "timeout", "hint": None}


def test_a_refused_flag_keeps_only_the_error_findings():
    summary = failure_summary(REFUSED)
    assert summary["status"] == "refused"
    assert summary["findings"] == [{"severity": "error", "flag": "enforce_piecewise_cuda_graph", "message": "removed in 0.5.20"}]
    assert summary["diagnosis"] == {} and summary["rolled_back"] is False and summary["rollback_ready"] is None


@pytest.mark.parametrize("result,expected", [
    ({"msg": "2 warnings at fail_on=warning", "findings": [{"severity": "warning", "message": "w"}]}, ["2 warnings at fail_on=warning"]),
    ({"findings": []}, ["refused"]),
    ({"findings": None, "msg": "m"}, ["m"]),
])
def test_a_refusal_without_error_findings_gives_its_message(result, expected):
    assert failure_summary(result)["findings"] == expected


def test_a_result_without_a_message():
    summary = failure_summary({"failed": True})
    assert summary["message"] is None and summary["hint"] is None and summary["cause"] == "unknown"
    assert failure_summary("not a result")["status"] == "crashed"


# The tuner's report reads the summary as a candidate's detail: the same reasons and labels as before.

@pytest.mark.parametrize("result,status,reason,label", [
    (CRASH, "crashed", "cause gpu_out_of_memory in phase cuda_graph_capture: torch.OutOfMemoryError: CUDA out of memory.; "
                       "hint: lower mem_fraction_static; rolled back, serving again", "crashed: gpu_out_of_memory"),
    (GATE, "gate_failed", "cause probe_gate_failed in phase ready; hint: decode tok/s (mean) at concurrency 1: 40.1 tok/s vs "
                          "baseline 54.0 (-25.7%); rolled back, serving again", "gate failed: probe_gate_failed"),
    (dict(CRASH, rollback_ready=False), "crashed", "cause gpu_out_of_memory in phase cuda_graph_capture: torch.OutOfMemoryError: "
                                                   "CUDA out of memory.; hint: lower mem_fraction_static; rolled back, NOT ready",
     "crashed: gpu_out_of_memory"),
    (PLAIN, "crashed", "cause unknown; hint: Unable to start service sglang-main.service: Unit not found; not rolled back",
     "crashed: unknown"),
    (REFUSED, "refused", "enforce_piecewise_cuda_graph: removed in 0.5.20", "refused"),
])
def test_the_tune_report_reads_the_summary_as_the_candidate_detail(result, status, reason, label):
    summary = failure_summary(result)
    assert summary["status"] == status
    assert failure_reason(status, summary) == reason
    assert failure_label(status, summary) == label


def old_tune_detail(result):
    """The detail tune_candidate.yml built in Jinja before the summary, to show the report reads the same from both."""
    if "findings" in result:
        errors = [item for item in result["findings"] or [] if item.get("severity") == "error"]
        return {"findings": errors or [result.get("msg", "refused")]}
    failure = result["failure"] if "failure" in result else {"cause": "unknown", "hint": result.get("msg", "")}
    detail = {key: value for key, value in failure.items() if key in ["cause", "hint", "phase", "error_message", "reason"]}
    detail.update(rolled_back=result.get("rolled_back", False), rollback_ready=result.get("rollback_ready", False))
    return detail


@pytest.mark.parametrize("result", [CRASH, GATE, PLAIN, REFUSED, dict(CRASH, rollback_ready=False), dict(CRASH, rolled_back=False),
                                    {"failed": True, "failure": {"cause": "stalled", "phase": "weights_loading"}}])
def test_the_tune_report_reads_the_same_reason_as_from_the_old_detail(result):
    summary = failure_summary(result)
    old = old_tune_detail(result)
    assert failure_reason(summary["status"], summary) == failure_reason(summary["status"], old)
    assert failure_label(summary["status"], summary) == failure_label(summary["status"], old)
