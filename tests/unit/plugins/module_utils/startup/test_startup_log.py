# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# Apache License 2.0 (see galaxy.yml)
"""Tests for the SGLang startup-log scanner, on real logs from public issues (data/startup_logs/SOURCES.md)."""

from __future__ import annotations

import json
import os
import random

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import (
    CAUSES, classify, hint_for, is_notable, notable_by_rules, unwrap)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import parse_line
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import (
    AWAIT_TRACEBACK_LINES,
    MAX_TRACEBACKS,
    PHASES,
    StartupLogScanner,
    scan_startup_log,
)

HEADERLESS = "(the log holds no 'Traceback (most recent call last):' line above this)"

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "startup_logs")
CORPUS = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "tests", "data", "startup_corpus")

# file, ended (the process is known to have exited after the last line), outcome, cause, phase,
# is_final, whole (the file holds the fatal traceback from its header to its exception line), rank.
CASES = [
    # --- real logs from public issues, as posted (SOURCES.md) ----------------------------------------------
    ("nccl_unhandled_system_error_4289.log", False, "failed", "nccl_error", "process_started", True, True, None),
    ("nccl_unhandled_unindented_8974.log", False, "failed", "nccl_error", "process_started", True, True, None),
    ("cuda_graph_illegal_memory_access_1467.log", False, "failed", "illegal_memory_access", "process_started", False, True, None),
    ("cuda_graph_oom_deepep_5285.log", False, "failed", "gpu_out_of_memory", "process_started", False, True, None),
    ("cuda_graph_compose_dp_attention_11218.log", False, "failed", "cuda_graph_capture_failed", "process_started", True, True, None),
    ("warmup_502_2468.log", False, "failed", "warmup_failed", "http_up", True, True, None),
    # the stored excerpt stops inside the first frame: nothing in it says why, so the scanner does not guess
    ("arch_not_supported_qwen2_2356.log", True, "failed", "unknown", "process_started", True, False, "TP0"),
    ("arch_import_error_gcc_4253.log", True, "failed", "kernel_compile_failed", "process_started", True, False, "TP1"),
    ("tp6_not_divisible_two_ranks_4769.log", False, "failed", "parallelism_mismatch", "process_started", True, True, "TP3"),
    # only the usage banner survived: the parser's rejection, once the process is known to have exited
    ("argparse_unrecognized_enable_reasoning_4116.log", True, "failed", "invalid_arguments", "process_started", True, False, None),
    ("argparse_reasoning_parser_underscore_12818.log", False, "failed", "invalid_arguments", "process_started", True, False, None),
    ("p2p_custom_allreduce_cuh_552.log", False, "failed", "p2p_unsupported", "process_started", True, False, None),
    ("p2p_warning_only_9707.log", False, "starting", None, "parallel_init", False, False, None),
    ("p2p_warning_compose_12496.log", False, "starting", None, "parallel_init", False, False, None),
    ("kernel_compile_capture_6801.log", False, "failed", "kernel_compile_failed", "kv_cache_allocated", False, True, None),
    ("kernel_compile_flashinfer_dp_ep_2203.log", True, "failed", "kernel_compile_failed", "cuda_graph_capture", True, True, "DP0 TP0 EP0"),
    ("dist_init_timeout_ipv6_7478.log", True, "failed", "distributed_init_failed", "process_started", True, False, "TP1"),
    ("spec_eagle3_draft_worker_23490.log", True, "failed", "speculative_decoding_error", "process_started", True, False, "TP2"),
    ("unknown_cut_traceback_kt_1969.log", True, "failed", "unknown", "process_started", True, False, "TP2"),
    ("starting_capture_gemma3_4826.log", False, "starting", None, "cuda_graph_capture", False, False, None),
    ("starting_kv_tp4_runai_22537.log", False, "starting", None, "kv_cache_allocated", False, False, None),
    ("starting_weights_tp8_11716.log", False, "starting", None, "weights_loading", False, False, None),
    ("starting_weights_tp1_15426.log", False, "starting", None, "weights_loading", False, False, None),
    # --- built from SGLang's (and torch's, uvicorn's, transformers') own strings ---------------------------
    ("constructed_ready_0_5_23_journal.log", False, "ready", None, "ready", True, False, None),
    ("constructed_kv_not_enough_memory_0_5_23.log", False, "failed", "gpu_out_of_memory", "weights_loading", True, True, "TP0"),
    # ends with systemd's exit line: final only once the caller says the process is gone (lines of it may still follow)
    ("constructed_weights_oom_torch_0_5_23.log", False, "failed", "gpu_out_of_memory", "weights_loading", False, True, "TP1"),
    ("constructed_language_only_encoder_urls_0_5_10.log", False, "failed", "incompatible_arguments", "process_started", False, True, None),
    ("constructed_argparse_ambiguous_0_5_23.log", False, "failed", "invalid_arguments", "process_started", True, False, None),
    ("constructed_argparse_removed_flag_0_5_23.log", False, "failed", "invalid_arguments", "process_started", True, False, None),
    ("constructed_tp_nnodes_0_5_23.log", False, "failed", "parallelism_mismatch", "process_started", False, True, None),
    ("constructed_port_in_use_0_5_23.log", False, "failed", "port_in_use", "cuda_graph_capture", True, False, None),
    ("constructed_driver_too_old.log", False, "failed", "driver_mismatch", "process_started", True, True, None),
    ("constructed_unsupported_gpu_sm120.log", False, "failed", "unsupported_gpu", "weights_loading", True, True, None),
    ("constructed_model_not_found_hub_0_5_23.log", True, "failed", "model_unavailable", "process_started", True, True, None),
    ("constructed_spec_unknown_algorithm_0_5_23.log", False, "failed", "invalid_arguments", "process_started", False, True, None),
    ("constructed_hub_retry_then_ready.log", False, "ready", None, "ready", True, False, None),
    ("constructed_request_error_after_ready.log", False, "ready", None, "ready", True, False, None),
    ("constructed_shutdown_after_sigterm.log", False, "ready", None, "ready", True, False, None),
    ("constructed_interleaved_ranks_journal_pids.log", False, "failed", "gpu_out_of_memory", "weights_loading", True, True, "TP0"),
    ("constructed_warmup_401_secret_in_traceback.log", False, "failed", "warmup_failed", "warmup", True, True, None),
]
CASE_IDS = [case[0][:-4] for case in CASES]

SECRETS = ["sk-gpufleet-3f9a8c2e7b1d4a6f0c5e", "adm-77aa55cc99ee", "sk-gpufleet-9d8c7b6a5f4e3d2c1b0a"]


def _read(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return handle.read()


def _strings(value):
    """Every string inside a result, however nested."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _feed(lines, ended, with_timestamps=False):
    scanner = StartupLogScanner()
    for index, line in enumerate(lines):
        scanner.feed(line, timestamp=(1000.0 + index) if with_timestamps else None)
    if ended:
        scanner.close(exited=True)
    return scanner


def test_every_data_file_is_a_case_and_sourced():
    """Every data file has expectations here and a source row in SOURCES.md; at least 20 are real."""
    files = sorted(name for name in os.listdir(DATA) if name.endswith(".log"))
    assert files == sorted(case[0] for case in CASES)
    sources = _read("SOURCES.md")
    for name in files:
        assert f"`{name}`" in sources, f"{name} is not listed in SOURCES.md"
    real = [case for case in CASES if not case[0].startswith("constructed_")]
    assert len(real) >= 20


def test_every_label_has_a_case():
    """Each cause label (and unknown) is exercised by at least one log: here or in the corpus (tests/data/startup_corpus)."""
    with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as handle:
        corpus = {row["cause"] for row in json.load(handle)}
    covered = {case[3] for case in CASES} | corpus
    assert set(CAUSES) - covered == set()


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_case_verdict(case):
    """Outcome, cause, phase, finality and rank of every case; the fatal traceback is whole where the source is."""
    name, ended, outcome, cause, phase, final, whole, rank = case
    result = scan_startup_log(_read(name), ended=ended)
    assert result["outcome"] == outcome
    assert result["cause"] == cause
    assert result["phase"] == phase
    assert result["is_final"] is final
    assert result["rank"] == rank
    if outcome == "failed":
        assert result["cause"] in CAUSES
        assert result["hint"]
        assert result["fatal_line"] or ended
        assert result["error_message"] or not whole  # a log cut inside the traceback may show no exception line
    else:
        assert result["hint"] is None
        assert result["traceback"] is None
        assert result["fatal_line"] is None
    if outcome == "ready":
        assert "fired up and ready to roll" in result["ready_line"]
    if whole:
        lines = result["traceback"].splitlines()
        assert lines[0] in ("Traceback (most recent call last):", HEADERLESS)
        assert result["error_message"] in lines
        after = lines[lines.index(result["error_message"]):]
        assert not any(line.lstrip().startswith('File "') for line in after), "frames after the exception line"
        # nothing but the exception (and its multi-line message) after the last frame: the traceback ends there
        assert lines[-1] == result["error_message"] or lines.index(result["error_message"]) > len(lines) - 12
    elif result["traceback"] is not None:
        assert result["traceback"].splitlines()[0] in ("Traceback (most recent call last):", HEADERLESS)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_incremental_equals_batch(case):
    """Feeding line by line (with timestamps) gives exactly the batch result, phase timestamps aside."""
    name, ended = case[0], case[1]
    text = _read(name)
    batch = scan_startup_log(text, ended=ended)
    incremental = _feed(text.splitlines(), ended, with_timestamps=True).result()
    for entry in incremental["phases"]:
        assert entry["first_seen"] == 1000.0 + entry["line_no"] - 1
        entry["first_seen"] = None
    assert incremental == batch


def _with_journal_prefix(line, index):
    if parse_line(line).journal_time:  # already read through the journal
        return line
    return f"Nov 30 09:{index // 60 % 60:02d}:{index % 60:02d}.{index:06d} gpu01 sglang[4242]: {line}"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_journal_prefix_gives_the_same_verdict(case):
    """The same log read through ``journalctl -o short-precise`` instead of ``-o cat``."""
    name, ended = case[0], case[1]
    text = _read(name)
    bare = scan_startup_log(text, ended=ended)
    prefixed = scan_startup_log("\n".join(_with_journal_prefix(line, i) for i, line in enumerate(text.splitlines())), ended=ended)
    for key in ("outcome", "cause", "phase", "is_final", "traceback", "error_message", "rank", "hint"):
        assert prefixed[key] == bare[key], key


def test_phases_in_order_with_first_seen_timestamps():
    """A full 0.5.23 start passes every phase in order; the caller's timestamps are recorded per phase."""
    scanner = _feed(_read("constructed_ready_0_5_23_journal.log").splitlines(), False, with_timestamps=True)
    result = scanner.result()
    assert [entry["phase"] for entry in result["phases"]] == list(PHASES)
    assert [entry["first_seen"] for entry in result["phases"]] == [1000.0, 1003.0, 1007.0, 1011.0, 1013.0, 1022.0, 1023.0, 1026.0]
    assert result["phases"][1]["log_time"] == "2026-11-30 09:02:09"


def test_verdict_at_the_fatal_line():
    """The verdict must not wait for the end of the log: it is final at the line that completes it."""
    lines = _read("tp6_not_divisible_two_ranks_4769.log").splitlines()
    sigquit = next(i for i, line in enumerate(lines) if "Received sigquit" in line)
    scanner = StartupLogScanner()
    for index, line in enumerate(lines):
        scanner.feed(line)
        if index < sigquit:
            assert not scanner.is_final
        if index == sigquit:
            assert scanner.is_final
            assert scanner.result()["cause"] == "parallelism_mismatch"
    argparse = StartupLogScanner()
    argparse.feed("sglang serve: error: unrecognized arguments: --enforce-piecewise-cuda-graph")
    assert argparse.is_final and argparse.result()["outcome"] == "failed"


def test_fatal_traceback_open_then_closed():
    """A fatal header fails at once, but the verdict is final only once its traceback is complete."""
    lines = _read("constructed_kv_not_enough_memory_0_5_23.log").splitlines()
    scanner = StartupLogScanner()
    for line in lines[:-2]:  # up to the exception line
        scanner.feed(line)
    result = scanner.result()
    assert result["outcome"] == "failed" and result["pending"] == "traceback_open" and not result["is_final"]
    assert result["cause"] == "gpu_out_of_memory"
    scanner.feed(lines[-1])  # the parent's sigquit line ends the traceback
    assert scanner.is_final


def test_sigquit_before_traceback_waits_boundedly():
    """A bare sigquit waits for its traceback, but not forever: a line budget or close() ends the wait."""
    first = _read("unknown_cut_traceback_kt_1969.log").splitlines()[0]
    scanner = StartupLogScanner()
    scanner.feed(first)
    result = scanner.result()
    assert result["outcome"] == "failed" and result["pending"] == "awaiting_traceback" and not result["is_final"]
    for _line in range(AWAIT_TRACEBACK_LINES + 1):
        scanner.feed("[2026-05-01 15:16:15 TP0] Load weight end. type=X, avail mem=1.00 GB")
    assert scanner.is_final
    closing = StartupLogScanner()
    closing.feed(first)
    closing.close(exited=True)
    assert closing.is_final and closing.result()["cause"] == "unknown"


def test_harmless_traceback_before_ready_does_not_fail():
    """A retried hub download prints a traceback; the start goes on to ready."""
    lines = _read("constructed_hub_retry_then_ready.log").splitlines()
    cut = next(i for i, line in enumerate(lines) if "Init torch distributed begin" in line)
    scanner = _feed(lines[:cut + 1], False)
    result = scanner.result()
    assert result["outcome"] == "starting" and result["cause"] is None and not result["is_final"]
    assert result["tracebacks_seen"] == 1
    assert scan_startup_log("\n".join(lines))["outcome"] == "ready"


@pytest.mark.parametrize("name", ["constructed_request_error_after_ready.log", "constructed_shutdown_after_sigterm.log"])
def test_noise_after_ready_keeps_ready(name):
    """Request errors, late sigquit lines and shutdown noise after ready never turn the start into a failure."""
    result = scan_startup_log(_read(name), ended=True)
    assert result["outcome"] == "ready" and result["traceback"] is None and result["cause"] is None


def test_interleaved_ranks_do_not_mix():
    """Tracebacks of two ranks stay apart: by rank tag in sequence (real log) and by journal PID line by line."""
    real = scan_startup_log(_read("tp6_not_divisible_two_ranks_4769.log"))
    assert "line 564, in init_model_worker" not in real["traceback"]  # a frame of TP1's traceback, which follows
    assert real["traceback"].count("Traceback (most recent call last):") == 1
    by_pid = scan_startup_log(_read("constructed_interleaved_ranks_journal_pids.log"))
    assert by_pid["rank"] == "TP0"
    assert "NCCL" not in by_pid["traceback"] and "load_model" in by_pid["traceback"]
    assert by_pid["traceback"].count("File ") == 2


def test_chained_traceback_is_kept_whole():
    """Chained tracebacks keep every part, including multi-paragraph messages between them."""
    result = scan_startup_log(_read("constructed_model_not_found_hub_0_5_23.log"), ended=True)
    tb = result["traceback"]
    assert tb.count("Traceback (most recent call last):") == 3
    assert tb.count("The above exception was the direct cause of the following exception:") == 2
    assert "Invalid username or password." in tb  # a multi-paragraph exception message inside the chain
    assert tb.splitlines()[-1].startswith("If this is a private repository")
    with open(os.path.join(CORPUS, "055_jit_tool_missing_ninja_required_source_install_cuda_graph.log"), encoding="utf-8") as handle:
        chained = scan_startup_log(handle.read(), ended=True)["traceback"]
    assert "During handling of the above exception" in chained and chained.count("Traceback (most recent") == 2
    assert chained.splitlines()[-1] == "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose"


@pytest.mark.parametrize("name", [case[0] for case in CASES])
def test_secrets_never_returned(name):
    """No API key appears in any returned field, whether passed in or learned from the log."""
    text = _read(name)
    for result in (scan_startup_log(text, ended=True, secrets=SECRETS), scan_startup_log(text, ended=True)):
        for value in _strings(result):
            for secret in SECRETS:
                assert secret not in value


def test_secret_learned_from_server_args_is_masked_in_traceback():
    """The key printed in server_args= is learned and masked where it reappears (a request header)."""
    result = scan_startup_log(_read("constructed_warmup_401_secret_in_traceback.log"))
    assert "Bearer ********" in result["traceback"]
    assert "api_key='********'" in " ".join(result["last_lines"])


@pytest.mark.parametrize("name, fragment", [
    ("constructed_language_only_encoder_urls_0_5_10.log", "encoder_urls"),
    ("p2p_custom_allreduce_cuh_552.log", "disable_custom_all_reduce: true"),
    ("cuda_graph_illegal_memory_access_1467.log", "not a memory setting"),
    ("cuda_graph_oom_deepep_5285.log", "cuda_graph_max_bs_decode"),
    ("argparse_unrecognized_enable_reasoning_4116.log", "only its usage banner reached the log"),
    ("constructed_port_in_use_0_5_23.log", "30000"),
    ("constructed_argparse_removed_flag_0_5_23.log", "--enforce-piecewise-cuda-graph"),
    ("constructed_argparse_ambiguous_0_5_23.log", "cuda_graph_max_bs_decode"),
    ("constructed_kv_not_enough_memory_0_5_23.log", "raise mem_fraction_static"),
    ("constructed_weights_oom_torch_0_5_23.log", "increase tp_size"),
    ("tp6_not_divisible_two_ranks_4769.log", "16 is not divisible by 6"),
    ("constructed_model_not_found_hub_0_5_23.log", "HF_TOKEN"),
])
def test_hints_are_concrete(name, fragment):
    """Hints name the flag to change and how."""
    ended = dict((case[0], case[1]) for case in CASES)[name]
    assert fragment in scan_startup_log(_read(name), ended=ended)["hint"]


def test_hint_for_every_cause():
    """Every label has a hint; details change it where they matter."""
    for cause in CAUSES:
        assert hint_for(cause, None, None)
    assert hint_for(None, None, None) is None
    assert "dmesg" in hint_for("unknown", "x", "weights_loading", "Rank 0 scheduler died during initialization (exit code: -9)")
    assert "lower mem_fraction_static" in hint_for("gpu_out_of_memory", "torch.OutOfMemoryError: CUDA out of memory.", "cuda_graph_capture")


def test_oom_after_weights_points_at_mem_fraction_static():
    """An OOM between 'Load weight end' and the KV cache line is the KV pool, not the weights: the hint says so."""
    lines = ["[2026-11-30 10:14:02 TP0] Load weight begin. avail mem=47.06 GB",
             "[2026-11-30 10:14:49 TP0] Load weight end. elapsed=47.02 s, type=Qwen3ForCausalLM, avail mem=20.15 GB, mem usage=26.91 GB.",
             "[2026-11-30 10:14:49 TP0] Scheduler hit an exception: Traceback (most recent call last):",
             '  File "/v/sglang/srt/mem_cache/memory_pool.py", line 612, in _create_buffers',
             "    torch.zeros((size, head_num, head_dim), dtype=self.store_dtype, device=self.device)",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.08 GiB. GPU 0 has a total capacity of 47.40 GiB",
             "[2026-11-30 10:14:49] Received sigquit from a child process. It usually means the child failed."]
    result = scan_startup_log("\n".join(lines))
    assert result["cause"] == "gpu_out_of_memory" and result["phase"] == "weights_loading"
    assert "lower mem_fraction_static" in result["hint"]


def test_close_without_exit_keeps_starting():
    """close(exited=False) freezes a start without failure evidence as starting."""
    scanner = _feed(_read("starting_weights_tp1_15426.log").splitlines(), False)
    scanner.close(exited=False)
    result = scanner.result()
    assert result["outcome"] == "starting" and result["is_final"]
    scanner.feed("[2025-12-23 14:20:00] The server is fired up and ready to roll!")
    assert scanner.result()["outcome"] == "starting"


def test_exit_before_ready_without_evidence_fails_unknown():
    """A process that exits before ready without any error line fails with cause unknown."""
    result = scan_startup_log(_read("starting_weights_tp8_11716.log"), ended=True)
    assert result["outcome"] == "failed" and result["cause"] == "unknown" and result["fatal_line"] is None


def test_request_error_before_ready_is_not_fatal():
    """uvicorn's per-request 'Exception in ASGI application' traceback is not one of SGLang's fatal headers."""
    scanner = StartupLogScanner()
    for line in ("[2026-11-30 17:00:40] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
                 "[2026-11-30 17:00:40] ERROR:    Exception in ASGI application",
                 "Traceback (most recent call last):",
                 '  File "/v/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi',
                 "    result = await app(",
                 "ValueError: bad request",
                 "[2026-11-30 17:00:41] INFO:     127.0.0.1:40412 - \"GET /model_info HTTP/1.1\" 200 OK"):
        scanner.feed(line)
    result = scanner.result()
    assert result["outcome"] == "starting" and result["phase"] == "warmup" and result["tracebacks_seen"] == 1


def test_systemd_exit_line_is_fatal():
    """systemd's 'Main process exited' line in the unit journal ends the wait."""
    scanner = StartupLogScanner()
    scanner.feed("Nov 30 09:01:55.100211 gpu01 systemd[1]: Started sglang.service - SGLang server.")
    scanner.feed("Nov 30 09:01:58.412345 gpu01 sglang[4242]: [2026-11-30 09:01:58 TP0] Load weight begin. avail mem=46.92 GB")
    scanner.feed("Nov 30 09:02:05.000000 gpu01 systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL")
    assert scanner.result()["outcome"] == "failed"


@pytest.mark.parametrize("line, msg, pid, tags, body", [
    ("Nov 30 09:01:55.123456 host sglang[123]: [2026-11-30 09:01:55 TP1] Load weight begin.",
     "[2026-11-30 09:01:55 TP1] Load weight begin.", "123", "TP1", "Load weight begin."),
    ("2026-11-30T09:01:55+0000 host sglang[7]:   File \"x.py\", line 1, in f", "  File \"x.py\", line 1, in f", "7", None,
     "  File \"x.py\", line 1, in f"),
    ("Mon 2026-11-30 09:01:55 UTC host sglang[7]: [09:01:55 DP0 TP0 EP0] x", "[09:01:55 DP0 TP0 EP0] x", "7", "DP0 TP0 EP0", "x"),
    ("sglang-1  | [2025-11-01 16:50:36 TP0] sglang is using nccl==2.27.3", "[2025-11-01 16:50:36 TP0] sglang is using nccl==2.27.3",
     None, "TP0", "sglang is using nccl==2.27.3"),
    ("(SGLangEngine pid=23902) [2026-01-04 01:42:55 TP1] Scheduler hit", "[2026-01-04 01:42:55 TP1] Scheduler hit", "23902", "TP1",
     "Scheduler hit"),
    ("\x1b[33m[2026-11-30 09:01:55] warning text\x1b[0m", "[2026-11-30 09:01:55] warning text", None, "", "warning text"),
    ("    raise ValueError(", "    raise ValueError(", None, None, "    raise ValueError("),
    ("Capturing batches (bs=4 avail_mem=77.03 GB):   0%|          | 0/3", "Capturing batches (bs=4 avail_mem=77.03 GB):   0%|          | 0/3",
     None, None, "Capturing batches (bs=4 avail_mem=77.03 GB):   0%|          | 0/3"),
])
def test_parse_line(line, msg, pid, tags, body):
    """Journal, compose and Ray prefixes are stripped; SGLang's rank tags are read; indentation is kept."""
    parsed = parse_line(line)
    assert (parsed.msg, parsed.pid, parsed.tags, parsed.body) == (msg, pid, tags, body)


@pytest.mark.parametrize("evidence, cause", [
    ("Exception: Capture cuda graph failed: Error building extension 'batch_prefill'", "kernel_compile_failed"),
    ("Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB.", "gpu_out_of_memory"),
    ("Exception: Capture cuda graph failed: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer",
     "peer_rank_lost"),
    ("Exception: Capture cuda graph failed: Ninja is required to load C++ extensions", "jit_tool_missing"),
    ("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.", "kernel_compile_failed"),
    ("Exception: Capture cuda graph failed: Triton Error [CUDA]: an illegal memory access was encountered", "illegal_memory_access"),
    ("Exception: Capture cuda graph failed: BatchDecodeWithPagedKVCache failed", "cuda_graph_capture_failed"),
    ("ImportError: /v/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEa", "package_mismatch"),
    ("ImportError: /v/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy", "driver_mismatch"),
    ("ModuleNotFoundError: No module named 'sgl_kernel'", "package_mismatch"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'", "jit_tool_missing"),
    ("/bin/sh: 1: ninja: not found", "jit_tool_missing"),
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "unsupported_gpu"),
    ("RuntimeError: HIP error: invalid device function", "unsupported_gpu"),
    ('    assert self.total_num_heads % tp_size == 0\nAssertionError', "parallelism_mismatch"),
    ("RuntimeError: CUDA error: invalid device ordinal", "parallelism_mismatch"),
    ("Fatal Python error: Bus error", "host_resource_error"),
    ("OSError: [Errno 12] Cannot allocate memory", "host_resource_error"),
    ("ERROR:    [Errno 13] error while attempting to bind on address ('0.0.0.0', 80): permission denied", "bind_permission_denied"),
    ("ValueError: metrics_port at 40290 is not available in 30 seconds.", "port_in_use"),
    ("sglang-main.service: Main process exited, code=exited, status=203/EXEC", "systemd_unit_error"),
    ("sglang-main.service: Main process exited, code=killed, status=9/KILL", "unknown"),
    ("Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/resolve/main/config.json.",
     "model_unavailable"),
    ("KeyError: 'midlayer.self_attn.qkv_proj.weight'", "speculative_decoding_error"),
    ("AttributeError: 'Qwen2_5OmniConfig' object has no attribute 'hidden_size'", "unsupported_model_architecture"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error", "nccl_error"),
    ("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.", "distributed_init_failed"),
    ("RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "driver_mismatch"),
    ("OSError: [Errno 98] Address already in use", "port_in_use"),
    ("zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30001')", "port_in_use"),
    ("ValueError: The checkpoint you are trying to load has model type `kimi_k3` but Transformers does not recognize this architecture.",
     "unsupported_model_architecture"),
    # two options named in the CLI's dashed form and refused together: the argument checks' words, even without their frame
    ("ValueError: --dp-size 2 with --attn-dp-size 2: data-parallel replicas combined with attention data parallelism are not supported.",
     "incompatible_arguments"),
    ('File "/v/sglang/srt/arg_groups/pd_disaggregation_hook.py", line 9, in handle_encoder_disaggregation\n'
     "ValueError: Cannot set --encoder-only and --language-only together", "incompatible_arguments"),
    ("AssertionError: ep_size * moe_dp_size must be less than or equal to tp_size", "parallelism_mismatch"),
    ("", "unknown"),
])
def test_classify(evidence, cause):
    """The most specific rule wins (a build error inside a capture failure is a build error)."""
    assert classify(evidence) == cause


def test_empty_and_junk_input():
    """Empty text, binary junk, None and ints never raise."""
    empty = scan_startup_log("")
    assert empty["outcome"] == "starting" and empty["phase"] is None and empty["phases"] == []
    assert scan_startup_log("", ended=True)["outcome"] == "failed"
    rng = random.Random(7)
    junk = bytes(rng.randrange(256) for _byte in range(200000))
    result = scan_startup_log(junk.decode("latin-1"))
    assert result["outcome"] in ("starting", "failed")
    scanner = StartupLogScanner()
    scanner.feed(junk)
    scanner.feed(None)
    scanner.feed(12345)
    scanner.feed("a\nb\x00c\r\n")
    assert scanner.result()["lines_seen"] >= 3


def test_one_megabyte_of_progress_stays_starting():
    """1 MB of log lines without a verdict stays starting (the pace is measured by benchmarks/diagnosis_accuracy.py)."""
    line = "Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:20<01:00,  20.0s/it]"
    lines = [line] * (1024 * 1024 // len(line) + 1)
    lines[100:100] = _read("constructed_hub_retry_then_ready.log").splitlines()[:18]  # a harmless traceback in the middle
    result = scan_startup_log("\n".join(lines))
    assert result["outcome"] == "starting" and result["tracebacks_seen"] == 1 and result["phase"] == "weights_loading"


def test_huge_traceback_keeps_head_and_tail():
    """A traceback of thousands of frames is bounded but keeps its header and exception line."""
    lines = ["[2026-11-30 09:02:11 TP0] Scheduler hit an exception: Traceback (most recent call last):"]
    for index in range(3000):
        lines += [f'  File "/x/mod{index}.py", line {index}, in f{index}', f"    call_{index}()"]
    lines += ["RuntimeError: NCCL error: unhandled system error", "[2026-11-30 09:02:11] Received sigquit from a child process."]
    result = scan_startup_log("\n".join(lines))
    assert result["cause"] == "nccl_error" and result["is_final"]
    tb = result["traceback"].splitlines()
    assert "traceback lines omitted" in result["traceback"]
    assert tb[0] == "Traceback (most recent call last):" and tb[-1] == "RuntimeError: NCCL error: unhandled system error"
    assert len(tb) < 2100


# ------------------------------------------------------------------------------------------------ the shapes of real logs
@pytest.mark.parametrize("line, msg, pid, tags", [
    ("(SGLangEngine pid=23902) [2026-01-04 01:42:55 TP1] Scheduler hit an exception: Traceback (most recent call last): "
     "[repeated 2x across cluster]", "[2026-01-04 01:42:55 TP1] Scheduler hit an exception: Traceback (most recent call last):",
     "23902", "TP1"),
    ("(pid=4711, ip=10.0.0.2)   File \"/x/scheduler.py\", line 1, in f", "  File \"/x/scheduler.py\", line 1, in f", "4711", None),
    ('{"log":"[2026-11-30 09:02:11 TP0] Load weight begin.\\n","stream":"stderr","time":"2026-11-30T09:02:11.5Z"}',
     "[2026-11-30 09:02:11 TP0] Load weight begin.", None, "TP0"),
    ("2025-04-05T00:01:19.209237575Z stderr F [2025-04-05 00:01:19 TP1] Init torch distributed begin.",
     "[2025-04-05 00:01:19 TP1] Init torch distributed begin.", None, "TP1"),
    ("ERROR 2025-04-05T00:01:19.209104776Z torch.distributed.DistBackendError: NCCL error in: x",
     "torch.distributed.DistBackendError: NCCL error in: x", None, None),
    ("2024-02-08 09:56:23 | ERROR | stderr |   File \"/p/sglang/srt/server.py\", line 30, in <module>",
     "  File \"/p/sglang/srt/server.py\", line 30, in <module>", None, None),
    ("2025-07-02 16:41:31 | ERROR | sglang.srt.entrypoints.engine | Received sigquit from a child process.",
     "Received sigquit from a child process.", None, None),
    ("Mar 18 11:23:46 sgl-router-janus-pro-7b[931930]: TypeError: 'NoneType' object is not subscriptable",
     "TypeError: 'NoneType' object is not subscriptable", "931930", None),
    ("inference_engine  | (Worker pid=12) [2025-02-12 12:54:32 TP0] x", "[2025-02-12 12:54:32 TP0] x", "12", "TP0"),
], ids=["ray-repeated", "ray-ip", "docker-json", "kubernetes-cri", "gcloud-export", "relayed-stderr", "relayed-logger",
        "syslog-without-host", "compose-then-ray"])
def test_relay_prefixes_are_stripped(line, msg, pid, tags):
    """Ray, docker's json-file, Kubernetes, Google Cloud, launcher relays and journal text without the host, and relays of relays."""
    parsed = parse_line(line)
    assert (parsed.msg, parsed.pid, parsed.tags) == (msg, pid, tags)


def test_a_headerless_traceback_is_collected_from_its_first_frame():
    """A tail without 'Traceback (most recent call last):' (a cut paste): frames and exception are the evidence once the
    process is known to have exited, and the traceback says that its header is not in the log."""
    lines = ['  File "/v/sglang/srt/distributed/device_communicators/pynccl.py", line 110, in __init__',
             "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(",
             "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"]
    open_ended = scan_startup_log("\n".join(lines))
    assert open_ended["outcome"] == "starting"  # a traceback alone is not fatal
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["cause"] == "nccl_error" and result["error_message"] == lines[-1]
    assert result["traceback"].splitlines() == [HEADERLESS] + lines


def test_a_lone_decisive_line_explains_a_failed_start_but_does_not_fail_it():
    line = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.2"
    assert scan_startup_log(line)["outcome"] == "starting"
    result = scan_startup_log(line, ended=True)
    assert (result["cause"], result["error_message"], result["fatal_line"]) == ("gpu_out_of_memory", line, line)
    assert "raise mem_fraction_static" in result["hint"]


def test_a_usage_banner_alone_is_the_parsers_rejection_once_the_process_exited():
    lines = _read("argparse_unrecognized_enable_reasoning_4116.log").splitlines()
    assert scan_startup_log("\n".join(lines))["outcome"] == "starting"
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["cause"] == "invalid_arguments" and result["error_message"] == lines[1] and result["traceback"] is None
    started = "\n".join(lines + ["[2026-11-30 09:02:11 TP0] Load weight begin. avail mem=46.92 GB"])
    assert scan_startup_log(started, ended=True)["cause"] == "unknown"  # the start went on: the banner was not a rejection


def test_caret_lines_and_elided_frames_stay_inside_the_traceback():
    lines = ["[2026-11-30 09:02:11 TP0] Scheduler hit an exception: Traceback (most recent call last):",
             '  File "/v/sglang/srt/managers/scheduler.py", line 2546, in run_scheduler_process',
             "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, pp_rank, dp_rank)",
             "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",  # a caret line that lost its indentation (terminal wrap)
             "...",
             '  File "/v/sglang/srt/layers/linear.py", line 10, in __init__',
             "    assert self.total_num_heads % tp_size == 0",
             "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
             "AssertionError",
             "[2026-11-30 09:02:11] Received sigquit from a child process. It usually means the child failed."]
    result = scan_startup_log("\n".join(lines))
    assert result["cause"] == "parallelism_mismatch" and result["error_message"] == "AssertionError"
    assert result["traceback"].splitlines()[1:] == lines[1:9]
    assert "divides the model's attention heads" in result["hint"]


def test_a_message_ends_without_the_blank_line_journald_drops():
    """A journal has no empty lines: what starts something new is not glued onto the exception message."""
    lines = ['  File "/v/sglang/srt/connector/s3.py", line 72, in __init__',
             "    import boto3",
             "ModuleNotFoundError: No module named 'boto3'",
             "Exception ignored in: <function BaseConnector.__del__ at 0x7ab346b7f130>",
             "Traceback (most recent call last):",
             '  File "/v/sglang/srt/connector/s3.py", line 121, in close',
             "    self.client.close()",
             "AttributeError: 'S3Connector' object has no attribute 'client'"]
    scanner = StartupLogScanner()
    for index, line in enumerate(lines):
        scanner.feed_entry(line, 4300, "sglang", 1000.0 + index)
    scanner.close(exited=True)
    result = scanner.result()
    assert result["cause"] == "package_mismatch"
    assert [tb.splitlines()[-1] for tb in result["tracebacks"]] == [lines[2], lines[-1]]
    assert "boto3" in result["hint"]


def test_lines_of_another_process_end_an_exception_message():
    scanner = StartupLogScanner()
    scanner.feed_entry("Traceback (most recent call last):", 4300, "sglang", 1000.0)
    scanner.feed_entry('  File "/v/x.py", line 1, in f', 4300, "sglang", 1000.1)
    scanner.feed_entry("RuntimeError: NCCL error: unhandled system error", 4300, "sglang", 1000.2)
    scanner.feed_entry("Special text of another process", 4400, "sglang", 1000.3)
    assert scanner.result()["tracebacks"] == [] and scanner.result()["outcome"] == "starting"
    scanner.close(exited=True)
    assert scanner.result()["traceback"].splitlines()[-1] == "RuntimeError: NCCL error: unhandled system error"


def test_a_traceback_inside_an_exception_message_is_one_traceback():
    """0.2-era launchers raise RuntimeError('Initialization failed. controller_init_state: Traceback ...'): read on."""
    with open(os.path.join(CORPUS, "082_p2p_unsupported_p2p_access_check_unpickling_error_rtx3090_tp2.log"), encoding="utf-8") as handle:
        result = scan_startup_log(handle.read(), ended=True)
    assert result["cause"] == "p2p_unsupported" and result["error_message"] == "_pickle.UnpicklingError: invalid load key, 'W'."
    assert result["tracebacks_seen"] == 1 and "gpu_p2p_access_check" in result["traceback"]


def test_serving_is_ready_even_without_the_ready_line():
    """Decode batches with running requests, or generation requests answered 200 beyond the warmup, mean the server
    was up: a traceback after them is a runtime error after ready, not a failed start."""
    request = '[2025-02-12 12:54:32] INFO:     127.0.0.1:57952 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    crash = ["[2025-02-12 12:54:32 TP0] Scheduler hit an exception: Traceback (most recent call last):",
             '  File "/v/sglang/srt/managers/scheduler.py", line 1796, in run_scheduler_process',
             "    scheduler.event_loop_overlap()",
             "ModuleNotFoundError: No module named 'datasets'"]
    result = scan_startup_log("\n".join([request] + crash), ended=True)
    assert (result["outcome"], result["ready_line"], result["traceback"]) == ("ready", request, None)
    decode = "[2025-05-22 20:31:24] Decode batch. #running-req: 1, #token: 420, token usage: 0.02, gen throughput (token/s): 5.22"
    assert scan_startup_log("\n".join([decode] + crash), ended=True)["outcome"] == "ready"
    uvicorn = "[2025-02-12 12:54:30] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"
    warmup_only = scan_startup_log("\n".join([uvicorn, request] + crash), ended=True)  # one request after uvicorn: the warmup
    assert warmup_only["outcome"] == "failed" and warmup_only["phase"] == "warmup"
    assert scan_startup_log("\n".join([uvicorn, request, request] + crash), ended=True)["outcome"] == "ready"


def test_a_new_start_forgets_the_last_words_of_the_previous_one():
    """A previous server's exit lines before this start's server_args= line are not this start's failure."""
    with open(os.path.join(CORPUS, "020_ready_previous_server_exit_code_9_then_embedding_start.log"), encoding="utf-8") as handle:
        result = scan_startup_log(handle.read())
    assert result["outcome"] == "starting" and result["fatal_line"] is None  # the docs' excerpt ends before its ready line
    assert result["phases"][0]["line"].startswith("[2025-04-01 22:36:45] server_args=") and result["phase"] == "kv_cache_allocated"


def test_systemds_start_line_forgets_the_old_process_and_a_restart_does_not():
    """The launch follows the journal from before the restart: the old process's stop (even a fatal-looking shutdown
    traceback and systemd's exit lines about it) comes first and is not this start's. After this start's exit, systemd's
    next start (Restart=on-failure) does not wipe the evidence."""
    old = ["Traceback (most recent call last):", '  File "/v/sglang/launch_server.py", line 14, in <module>',
           "KeyboardInterrupt", "sglang-main.service: Main process exited, code=killed, status=9/KILL",
           "sglang-main.service: Failed with result 'timeout'."]
    scanner = StartupLogScanner()
    for index, line in enumerate(old):
        scanner.feed_entry(line, 1 if line.startswith("sglang-main") else 4200, "systemd" if line.startswith("sglang-main") else "sglang",
                           1000.0 + index)
    assert scanner.result_outcome() == "failed" and scanner.systemd_exit_seen
    scanner.feed_entry("Started sglang-main.service - SGLang inference server.", 1, "systemd", 1010.0)
    assert scanner.result_outcome() == "starting" and not scanner.systemd_exit_seen and scanner.result()["tracebacks_seen"] == 0
    scanner.feed_entry("RuntimeError: CUDA error: no kernel image is available for execution on the device", 4300, "sglang", 1011.0)
    scanner.feed_entry("sglang-main.service: Main process exited, code=exited, status=1/FAILURE", 1, "systemd", 1011.1)
    scanner.feed_entry("Started sglang-main.service - SGLang inference server.", 1, "systemd", 1016.0)
    scanner.close(exited=True)
    result = scanner.result()
    assert result["cause"] == "unsupported_gpu" and scanner.systemd_exit_seen


def test_sglangs_own_words_come_first_and_systemds_line_goes_beside_them():
    """systemd's exit line can reach the journal before SGLang's last lines; the message and the fatal line are SGLang's."""
    scanner = StartupLogScanner()
    scanner.feed_entry("sglang-main.service: Main process exited, code=killed, status=9/KILL", 1, "systemd", 1000.0)
    for index, line in enumerate(_read("constructed_kv_not_enough_memory_0_5_23.log").splitlines()):
        scanner.feed_entry(parse_line(line).msg, 4300, "sglang", 1000.1 + index * 0.01)
    scanner.close(exited=True)
    result = scanner.result()
    assert result["cause"] == "gpu_out_of_memory"
    assert result["error_message"].startswith("RuntimeError: Not enough memory.")
    assert result["fatal_line"].endswith("Scheduler hit an exception: Traceback (most recent call last):")
    assert result["systemd_line"] == "sglang-main.service: Main process exited, code=killed, status=9/KILL"


def test_systemds_own_failure_is_the_message_when_sglang_never_ran():
    with open(os.path.join(CORPUS, "constructed_systemd_unit_error_exec_missing_venv.log"), encoding="utf-8") as handle:
        result = scan_startup_log(handle.read(), ended=True)
    assert result["cause"] == "systemd_unit_error" and result["traceback"] is None
    assert result["error_message"] == ("sglang-main.service: Unable to locate executable '/opt/sglang/0.5.23/venv/bin/sglang': "
                                       "No such file or directory")
    assert result["systemd_line"].splitlines()[-1] == "sglang-main.service: Failed with result 'exit-code'."


def test_every_traceback_comes_back_whole_and_bounded():
    lines = []
    for index in range(MAX_TRACEBACKS + 4):
        lines += [f"[2026-11-30 09:02:11 TP{index}] Scheduler hit an exception: Traceback (most recent call last):",
                  f'  File "/v/rank{index}.py", line 1, in f', f"RuntimeError: NCCL error: rank {index}"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert len(result["tracebacks"]) == MAX_TRACEBACKS and result["tracebacks_omitted"] == 4
    assert result["tracebacks"][0].splitlines() == ["Traceback (most recent call last):"] + lines[1:3]
    assert result["traceback"] == result["tracebacks"][0] and result["rank"] == "TP0"


def test_a_terminal_wrapped_message_is_joined_when_nothing_else_matches():
    """A terminal breaks long lines at its width, even inside a word: the fragments that fill the width are joined."""
    first = "RuntimeError: TopKTopPSamplingFromProbs failed with error code no kernel image is available f"
    second = "or execution on the device (CUDA error at /sgl-kernel/csrc/sampling.cu:88 while sampling batc"
    assert len(first) == len(second) == 93
    lines = ["Traceback (most recent call last):", '  File "/v/sglang/srt/layers/sampler.py", line 9, in forward',
             "    return top_k_top_p_sampling_from_probs(probs)", first, second, "h 3)"]
    assert classify("\n".join(lines)) == "unknown"
    assert unwrap("\n".join(lines)).splitlines()[3] == first + second + "h 3)"
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["cause"] == "unsupported_gpu" and result["error_message"] == first + second + "h 3)"  # shown joined
    assert unwrap("short\nlines") == "short\nlines"


def test_harmless_warnings_are_no_evidence():
    """Lines that say themselves that they are harmless never explain a failure, whatever their words."""
    for line in ("[2025-09-07 16:25:32 TP1] Setup Custom allreduce failed with CUDART error: peer access is not supported between "
                 "these two devices. To silence this warning, specify --disable-custom-all-reduce explicitly.",
                 "[2025-04-20 14:03:03] Skipping import of cpp extensions: /v/torchao/_C.abi3.so: undefined symbol: _ZN3c105Error",
                 "[2026-11-30 09:01:58] server_args=ServerArgs(speculative_algorithm=None, disable_custom_all_reduce=False)",
                 "[2026-12-01 12:57:40] Breakable CUDA graph is incompatible with multimodal model; disabling prefill CUDA graph.",
                 "[2025-04-23 16:14:35 TP0] sgl-kernel is not available on Non-NV platforms. Fallback to other kernel libraries."):
        assert scan_startup_log(line, ended=True)["cause"] == "unknown", line


def test_a_setting_sglang_adjusts_itself_does_not_explain_a_later_failure():
    """SGLang 0.5.23 logs that it turns off prefill graphs for a multimodal model ("... is incompatible with ...;
    disabling ..."): the warmup that fails later is still the cause (Molecule faults, the warmup case)."""
    lines = ["[2026-12-01 12:57:40] Breakable CUDA graph is incompatible with multimodal model; disabling prefill CUDA graph.",
             "[2026-12-01 12:57:47] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
             "[2026-12-01 12:57:47] Initialization failed. warmup error: Traceback (most recent call last):",
             '  File "/v/sglang/srt/entrypoints/http_server.py", line 1592, in _execute_server_warmup',
             "    res = requests.post(",
             "RuntimeError: stand-in injected failure in phase warmup",
             "sglang-main.service: Main process exited, code=killed, status=9/KILL"]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["cause"] == "warmup_failed" and result["error_message"] == lines[5]


# ------------------------------------------------------------------------------------------------ where a failure surfaced
_CAPTURE_FRAME = '  File "/v/sglang/srt/model_executor/cuda_graph_runner.py", line 457, in capture_one_batch_size\n    run_once()\n'
_DRAFT_CAPTURE_FRAME = ('  File "/v/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py", line 80, in __init__\n'
                        '    self.capture()\n')
_LOADER_FRAME = ('  File "/v/sglang/srt/layers/linear.py", line 642, in weight_loader\n'
                 '    assert param_data.shape == loaded_weight.shape\n')


@pytest.mark.parametrize("evidence, cause", [
    (_CAPTURE_FRAME + "TypeError: moe_fused_gate() takes 5 positional arguments but 7 were given", "package_mismatch"),
    (_CAPTURE_FRAME + "AttributeError: '_OpNamespace' 'sgl_kernel' object has no attribute 'awq_dequantize'", "package_mismatch"),
    (_DRAFT_CAPTURE_FRAME + _CAPTURE_FRAME
     + "Exception: Capture cuda graph failed: mat1 and mat2 shapes cannot be multiplied (4x12288 and 8192x4096)",
     "speculative_decoding_error"),
    (_DRAFT_CAPTURE_FRAME + "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB.",
     "gpu_out_of_memory"),  # a root cause still wins over the draft's frames
    (_CAPTURE_FRAME + "Exception: Capture cuda graph failed: BatchDecodeWithPagedKVCache failed", "cuda_graph_capture_failed"),
    ('  File "/v/torch/_dynamo/variables/lists.py", line 106, in getitem_const\n'
     "    assert isinstance(index, (int, torch.SymInt))\nAssertionError:", "cuda_graph_capture_failed"),
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", "cuda_graph_capture_failed"),
    ("[2025-10-06 20:05:27 DP0 TP0] Registering 0 cuda graph addresses", "cuda_graph_capture_failed"),
    ("[2025-10-06 20:05:27 DP0 TP0] Registering 322 cuda graph addresses", "unknown"),
    (_LOADER_FRAME + "AssertionError", "unsupported_model_architecture"),
    ('  File "/v/sglang/srt/speculative/eagle_worker.py", line 99, in __init__\n    super().__init__(\n' + _LOADER_FRAME
     + "AssertionError", "speculative_decoding_error"),  # the draft model's checkpoint
    ('  File "/v/sglang/srt/models/llama.py", line 80, in load_weights\n    assert self.total_num_heads % tp_size == 0\n'
     "AssertionError", "parallelism_mismatch"),
    ("RuntimeError: Failed: Assertion error /x/DeepEP/csrc/kernels/runtime.cu:56 'nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, "
     "rank % NUM_MAX_NVL_PEERS, NUM_MAX_NVL_PEERS, num_ranks / NUM_MAX_NVL_PEERS, &cpu_rdma_team_config, 0, &cpu_rdma_team) == 0'",
     "distributed_init_failed"),
    ('  File "/v/deep_ep/buffer.py", line 89, in __init__\n    self.runtime.sync(device_ids, ipc_handles, root_unique_id)\n'
     "RuntimeError: Failed: Assertion error /x/csrc/deep_ep.cpp:32 'num_ranks > NUM_MAX_NVL_PEERS or low_latency_mode'",
     "distributed_init_failed"),
    ('  File "/v/rpyc/core/async_.py", line 55, in wait\n    raise AsyncResultTimeout("result expired")\n'
     "TimeoutError: result expired", "distributed_init_failed"),
    ("TimeoutError: result expired", "unknown"),  # without rpyc's frames it could be anything's timeout
])
def test_a_surface_gives_way_to_what_kind_of_failure_it_was(evidence, cause):
    """A capture that failed says where, a kernel signature, the draft's frames or a weight loader say what."""
    assert classify(evidence) == cause


@pytest.mark.parametrize("evidence, cause", [
    ("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 86.",
     "unsupported_gpu"),
    ("UserWarning: Found GPU0 Tesla K80 which is of cuda capability 3.7. PyTorch no longer supports this GPU because it is too old. "
     "The minimum cuda capability supported by this library is 5.0.", "unsupported_gpu"),
    ("RuntimeError: operator torchvision::nms does not exist", "package_mismatch"),
    ("ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from PyObject",
     "package_mismatch"),
    ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.2 as it may crash.", "package_mismatch"),
    ("importlib.metadata.PackageNotFoundError: No package metadata was found for flashinfer-python", "package_mismatch"),
    ("ImportError: Please install vllm to use the awq_marlin quantization: pip install vllm", "package_mismatch"),
    ("ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. min_per_gpu_memory=10.2",
     "gpu_out_of_memory"),
    ("RuntimeError: unable to write to file </torch_2211_3045912845_0>: No space left on device (28)", "host_resource_error"),
    ("OSError: No space left on device", "host_resource_error"),
    ("RuntimeError: CUDA error: operation failed due to a previous error during capture", "cuda_graph_capture_failed"),
    ('  File "/v/transformers/models/auto/configuration_auto.py", line 695, in __getitem__\n    raise KeyError(key)\n'
     "KeyError: 'qwen3_moe'", "unsupported_model_architecture"),
    ("KeyError: 'qwen3_moe'", "unknown"),  # a KeyError alone says nothing
])
def test_more_phrasings_of_the_same_causes(evidence, cause):
    """Other wordings real logs use for causes the rules know (other SGLang, torch, transformers and NumPy versions)."""
    assert classify(evidence) == cause


@pytest.mark.parametrize("cause, message, evidence, fragment", [
    ("package_mismatch", "TypeError: moe_fused_gate() takes 5 positional arguments but 7 were given", "", "sgl-kernel of the same commit"),
    ("package_mismatch", "AttributeError: '_OpNamespace' 'sgl_kernel' object has no attribute 'awq_dequantize'", "", "awq_dequantize"),
    ("speculative_decoding_error", "Exception: Capture cuda graph failed: mat1 and mat2 shapes cannot be multiplied", "",
     "draft checkpoint made for SGLang"),
    ("cuda_graph_capture_failed", "AssertionError:", '  File "/v/torch/_dynamo/eval_frame.py", line 1, in _fn',
     "drop enable_torch_compile"),
    ("cuda_graph_capture_failed", "Registering 0 cuda graph addresses", "Registering 0 cuda graph addresses",
     "disable_custom_all_reduce: true"),
    ("unsupported_model_architecture", "AssertionError", _LOADER_FRAME + "AssertionError", "bitsandbytes"),
    ("distributed_init_failed", "RuntimeError: Failed: Assertion error", "nvshmem_team_split_strided(x) == 0'", "NVSHMEM"),
    ("distributed_init_failed", "TimeoutError: result expired", "raise AsyncResultTimeout(\"result expired\")", "rpyc"),
    ("port_in_use", "zmq.error.ZMQError: Address already in use (addr='tcp://*:5557')", "", "port 5557"),
    ("gpu_out_of_memory", "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
     "ValueError: The memory capacity is unbalanced.", "nvidia-smi"),
])
def test_hints_follow_what_kind_of_failure_it_was(cause, message, evidence, fragment):
    assert fragment in hint_for(cause, message, "cuda_graph_capture", evidence)


def test_torch_compile_user_code_frames_stay_in_the_message():
    """Dynamo ends its message with the model's frames under "from user code:": they are the message, not a new
    traceback, with or without the blank lines journald drops."""
    lines = ["[2024-11-04 22:57:20 TP0] Scheduler hit an exception: Traceback (most recent call last):",
             '  File "/v/torch/_dynamo/variables/lists.py", line 106, in getitem_const',
             "    assert isinstance(index, (int, torch.SymInt))",
             "AssertionError:",
             "",
             "from user code:",
             '   File "/v/sglang/srt/layers/attention/flashinfer_backend.py", line 273, in forward_decode',
             "    decode_wrapper = self.forward_metadata[0][self._get_wrapper_idx(layer)]",
             "",
             'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information',
             "[2024-11-04 22:57:21] Received sigquit from a child process. It usually means the child failed."]
    for text in ("\n".join(lines), "\n".join(line for line in lines if line)):
        result = scan_startup_log(text, ended=True)
        assert result["cause"] == "cuda_graph_capture_failed" and result["error_message"] == "AssertionError:"
        assert len(result["tracebacks"]) == 1 and "flashinfer_backend.py" in result["traceback"]


def test_a_rust_tracing_relay_is_stripped():
    """NVIDIA Dynamo re-emits SGLang's records through Rust's tracing formatter (level padded to five characters)."""
    parsed = parse_line("2025-11-05T01:56:54.281615Z  INFO model_runner.init_device_graphs: Capture cuda graph end. Time elapsed: 12.80 s.")
    assert parsed.msg == "Capture cuda graph end. Time elapsed: 12.80 s."
    parsed = parse_line("2025-11-05T01:56:54.292138Z ERROR scheduler.run_scheduler_process: Traceback (most recent call last):")
    assert parsed.msg == "Traceback (most recent call last):"
    scanner = _feed(["2025-11-05T01:56:54.292138Z ERROR scheduler.run_scheduler_process: Scheduler hit an exception: "
                     "zmq.error.ZMQError: Address already in use (addr='tcp://*:5557')"], True)
    assert scanner.result()["cause"] == "port_in_use"


def test_the_notable_words_gate_lets_through_every_line_a_rule_reads():
    """is_notable first checks a few words (most lines say nothing): on every line of the developed corpus splits it
    says what the rules alone would say."""
    with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as handle:
        rows = [row for row in json.load(handle)
                if row["split"] != "test"]  # every developed split (dev, opened..., constructed), not the held-out one
    checked = 0
    for row in rows:
        with open(os.path.join(CORPUS, row["file"]), "rb") as handle:
            for line in handle.read().decode("utf-8", "replace").splitlines():
                text = parse_line(line).body.strip()
                if text:
                    assert is_notable(text) == notable_by_rules(text), text
                    checked += 1
    assert checked > 5000


# ------------------------------------------------------------------------------------------------ pastes that moved the lines
_WRAPPED_TRACEBACK = [
    "[2025-03-29 18:56:25 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1999, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/fp8_kernel.py", line 50, in per_token_group_quant',
    "    return sgl_per_token_group_quant_fp8(x, x_q, x_s, group_size, eps, fp8_min, fp8_max)",
    "ImportError: /opt/venv/lib/python3.10/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEa",
    "[2025-03-29 18:56:26] Received sigquit from a child process. It usually means the child failed.",
]


@pytest.mark.parametrize("width", [80, 100])
def test_a_log_broken_at_the_terminal_width_is_joined_again(width):
    """Every long line broken at the terminal's width, even inside a word: the width is learned (the widest length,
    shared by several lines) and the pieces are read as one line, header, frames and message. Fed line by line,
    the scanner learns the width only from the third broken line on: the lines before it stay in pieces."""
    pieces = [line[i:i + width] for line in _WRAPPED_TRACEBACK for i in range(0, len(line), width)]
    whole = scan_startup_log("\n".join(pieces), ended=True)
    assert whole["traceback"].startswith("Traceback (most recent call last):") and whole["rank"] == "TP0"
    for result in (whole, _feed(pieces, True).result()):
        assert result["cause"] == "package_mismatch"
        assert result["error_message"] == _WRAPPED_TRACEBACK[5]


def test_one_broken_line_is_joined_by_what_follows_it():
    """A lone decisive line broken once shows no width: the next line, which starts mid-text, joins it."""
    line = ("RuntimeError: GemmaRMSNorm failed with error code no kernel image is available for execution on the device")
    result = scan_startup_log(line[:100] + "\n" + line[100:], ended=True)
    assert result["cause"] == "unsupported_gpu" and result["error_message"] == line


def test_progress_bars_as_wide_as_the_terminal_are_not_joined():
    """tqdm draws its bar as wide as the terminal: each update starts as the last did, so it is its own line."""
    progress = "Capturing batches (bs=%d avail_mem=77.03 GB):  %2d%%|####      | %d/4 [00:01<00:03,  1.00it/s]"
    lines = [(progress % (4 - i, 25 * i, i)).ljust(100)[:100] for i in range(4)] * 3
    lines.append("[2026-11-30 09:02:11 TP0] Capture cuda graph end. Time elapsed: 12.80 s.")
    result = scan_startup_log("\n".join(lines))
    assert result["phase"] == "cuda_graph_capture" and result["lines_seen"] == len(lines)


@pytest.mark.parametrize("margin", ["    ", "> ", "\t"])
def test_a_quoted_or_indented_paste_is_read_as_the_log(margin):
    """A log posted as a Markdown quote or an indented block: every line shifted the same way, read unshifted."""
    lines = [margin + line for line in _WRAPPED_TRACEBACK]
    result = scan_startup_log("\n".join(lines), ended=True)
    assert result["cause"] == "package_mismatch" and result["error_message"] == _WRAPPED_TRACEBACK[5]
    assert result["rank"] == "TP0"


def test_frames_that_lost_their_indentation_still_name_where_it_was_raised():
    """A paste without indentation: the code line under a frame is not indented, the frame still says where."""
    evidence = ('File "/v/sglang/srt/layers/linear.py", line 642, in weight_loader\n'
                "assert param_data.shape == loaded_weight.shape\nAssertionError")
    assert classify(evidence) == "unsupported_model_architecture"
