# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scanner on the verbatim corpus of real SGLang startup logs (tests/data/startup_corpus, SOURCES.md there).

The development split is where the rules were written, and the opened splits (``opened`` to ``opened28``: the test
splits in the order they were collected, each measured once while held out, then opened for development; each one's
measurement is in docs/startup-failure-causes.md): every log of them gets exactly its
label, read as a pasted text and read as journal entries (journald drops empty lines). The only exceptions are logs
whose excerpt holds no evidence of their cause (the label comes from the thread): for those the scanner must say
"unknown" rather than guess; and the logs still listed in the ``OPENEDn_NOT_YET`` lists below (each with what it
still gets), for which only the launch's promise is checked. The next held-out split is ``test`` (681 and later): it is measured
by benchmarks/diagnosis_accuracy.py --split test and never tuned on, so here only its bookkeeping and the launch's
promise (a failed start is failed) are checked.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import CAUSES
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import PasteMargin
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner, scan_startup_log

CORPUS = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "tests", "data", "startup_corpus")
SUCCESS = ("ready", "ready_runtime_error", "ready_shutdown")

with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as _handle:
    ROWS = json.load(_handle)
SPLITS = ("dev", "opened", "opened2", "opened3", "opened4", "opened5", "opened6", "opened7", "opened8", "opened9", "opened10",
          "opened11", "opened12", "opened13", "opened14", "opened15", "opened16", "opened17", "opened18", "opened19", "opened20", "opened21", "opened22",
          "opened23", "opened24", "opened25", "opened26", "opened27", "opened28", "test",
          "constructed")
DEV = [row for row in ROWS if row["split"] in ("dev", "constructed")]
OPENED = [row for row in ROWS if row["split"].startswith("opened")]
# The held-out split of the day: rows of "split": "test" (numbered after every developed log).
HELD_OUT = [row for row in ROWS if row["split"] == "test"]
DEVELOPED = DEV + OPENED
# Failed starts whose excerpt does not hold the evidence of their label, and why (docs/startup-failure-causes.md).
NO_EVIDENCE = {
    "125_port_in_use_dynamo_kv_events_zmq_publisher_tp2_tracing_relay.log":
        "the excerpt ends at a cut 'ERROR scheduler.run_sch' line; the 'Address already in use' is in the issue's title only",
    "212_unknown_mixtral_8x7b_l4_tp8_dies_after_warmup_prefill_no_traceback.log":
        "the process dies after the warmup's prefill with no traceback and no error line: nothing to show but the exit",
    "258_speculative_decoding_error_kimi_k26_eagle3_mla_draft_config_keyerror_docker_compose_prefix.log":
        "four lines cut inside transformers' config lookup, before its exception; nothing names the draft model (the label "
        "comes from the thread)",
    "435_host_resource_error_deepseek_r1_meituan_int8_642gb_377gb_ram_oom_killer_scheduler_dead_exit_9.log":
        "only 'Rank 0 scheduler is dead.' and 'Exit code: -9'; the OOM killer comes from the author's notes (243 has the "
        "same two lines, labelled unknown)",
}

# Third test split (opened3) logs the scanner does not read right, and what they get (docs/startup-failure-causes.md,
# "Serving, or starting"): excerpts that hold only a traceback raised in code the warmup runs too (the scheduler's
# event loop, the model's forward, the draft worker), with nothing that only a client's request produces (179, a PD
# prefill server whose bootstrap server answered a decode server's GET /route, is read as serving now, and so is 177,
# whose Mooncake transfer engine reported KV bytes moved). Read alone
# they look like a failed start; through the launch module the ready line comes first. For these only the launch's
# promise is checked: a failed start is failed.
OPENED3_NOT_YET = {
    "181_ready_runtime_error_pd_decode_deepgemm_tensor_map_700_chained.log": "called failed",
    "184_ready_runtime_error_hiradix_cache_dec_lock_ref_keyerror_scheduler.log": "called failed",
    "185_ready_runtime_error_llama4_scout_400k_request_oom_sigquit_first.log": "called failed",
    "186_ready_runtime_error_bench_speculative_nextn_expanded_size_mismatch.log": "called failed",
    "187_ready_runtime_error_eagle_high_concurrency_illegal_instruction.log": "called failed",
    "194_ready_runtime_error_mixtral_8x22b_2node_rmsnorm_invalid_configuration_mmlu.log": "called failed",
}

# Fourth test split (opened4) logs the scanner does not read right yet, and what they get
# (docs/startup-failure-causes.md): 201, a NameError in SGLang's own code (a missing import, outside the taxonomy),
# which the optional-dependency sign reads as a package of another version (the log does not tell the two apart);
# 211, 0.2's device-side assert in the logits processor while a client's run_batch asked for logprobs, with nothing in
# the excerpt that only a request produces. For these only the launch's promise is checked (a failed start is failed).
OPENED4_NOT_YET = {
    "201_unknown_phi4_lora_tp2_tensor_model_parallel_all_reduce_undefined_warmup.log": "package_mismatch",
    "211_ready_runtime_error_run_batch_choices_index_kernel_device_assert.log": "called failed",
}
# Fifth test split (opened5) logs the scanner does not read right yet, and what they get (docs/startup-failure-causes.md,
# "The fifth test split"). Its one measurement missed ten (238, 240, 246, 247, 250, 251, 258, 264; successes 256 and
# 261 called failed); each was worked on as a kind (test_startup_cause_kinds_opened5.py) and reads right now, but 258,
# whose excerpt holds no evidence of its label (NO_EVIDENCE).
OPENED5_NOT_YET = {}
# Sixth test split (opened6) logs the scanner does not read right yet, and what they get (docs/startup-failure-causes.md,
# "The sixth test split"). Its one measurement, as split test with the scanner of 8fda500, missed 16 (13 failed starts,
# 3 successes called failed); each was worked on as a kind (test_startup_cause_kinds_opened6.py; 287, SGLang's own
# helper handed the model's self with another signature, in the opened7 round: test_startup_cause_kinds_opened7.py,
# unknown now). Left: 266 and 268,
# verl rollouts whose excerpt is cut inside the scheduler's traceback with nothing that only a request produces (their
# frames, the event loop's next batch and its result, the warmup runs too; 267's trainer steps are such evidence).
# For these only the launch's promise is checked (a failed start is failed).
OPENED6_NOT_YET = {
    "266_ready_runtime_error_verl_multiturn_scheduler_event_loop_overlap_after_30_steps_ray_prefix_cut.log": "called failed",
    "268_ready_runtime_error_verl_async_rollout_process_batch_result_quoted_ray_prefix_two_nodes_cut.log": "called failed",
}
# Seventh test split (opened7) logs the scanner does not read right yet, and what they get (docs/startup-failure-causes.md,
# "The seventh test split"). Its one measurement, as split test with the scanner of c097fbd, missed 9 failed starts (no
# success called failed); each was worked on as a kind (test_startup_cause_kinds_opened7.py). Left: 317, a weight-loading
# shape assertion (the loaded weight's rows against the parameter's) that reads the same for a TP split that does not
# fit the fused layer (its label) as for a checkpoint of another layout: nothing in the excerpt names the TP size. For
# it only the launch's promise is checked (a failed start is failed).
OPENED7_NOT_YET = {
    "317_parallelism_mismatch_mimo_v25_pro_tp16_over_8_kv_heads_fused_qkv_shard_size_assert_flattened.log": "unknown",
}
# Eighth test split (opened8) logs the scanner does not read right yet, and what they get (docs/startup-failure-causes.md,
# "The eighth test split"). Its one measurement, as split test with the scanner of 41f9081, missed 7 failed starts (no
# success called failed); each was worked on as a kind (test_startup_cause_kinds_opened8.py). Left: 339, SGLang's own
# assertion that a MoE path it removed is deprecated, reached in CUDA graph capture by two-batch overlap with DeepEP on
# a BF16 checkpoint (labelled incompatible_arguments, a label in doubt): nothing in the excerpt names the options that
# lead there, so it stays where it surfaced. For it only the launch's promise is checked (a failed start is failed).
OPENED8_NOT_YET = {
    "339_incompatible_arguments_tbo_deepep_bf16_qwen3_30b_moe_forward_deepgemm_masked_deprecated_capture_h20.log": "cuda_graph_capture_failed",
}
# Ninth test split (opened9) logs the scanner does not read right yet, and what they get (docs/startup-failure-causes.md,
# "The ninth test split"). Its one measurement, as split test with the scanner of 67b3bb6, missed 13 failed starts (no
# success called failed); each was worked on as a kind (test_startup_cause_kinds_opened9.py). Left: 400, whose line
# ("No supported CUDA architectures found for major versions [10]" in the capture) is word for word 292's, labelled
# unsupported_gpu by another collector; it is labelled kernel_compile_failed (in doubt), so one of the two must stay
# wrong until a thread settles it. For it only the launch's promise is checked (a failed start is failed).
OPENED9_NOT_YET = {
    "400_kernel_compile_failed_neurips_moe_guide_capture_no_cuda_arch_major_10.log": "unsupported_gpu",
}
# Tenth test split (opened10) logs the scanner does not read right yet, and what they get (docs/startup-failure-causes.md,
# "The tenth test split"). Its one measurement, as split test with the scanner of 8112a97, missed 7 failed starts (no
# success called failed); each was worked on as a kind (test_startup_cause_kinds_opened10.py). Left: 411, SGLang's
# "The memory capacity is unbalanced" on GPUs of unequal memory in one TP group, labelled parallelism_mismatch (in
# doubt): the same words mean another process holding memory on some GPUs, so it stays gpu_out_of_memory, whose hint
# now names both. For it only the launch's promise is checked (a failed start is failed).
OPENED10_NOT_YET = {
    "411_parallelism_mismatch_qwen36_27b_fp8_tp3_3080_5090_3080_memory_unbalanced_wrapped.log": "gpu_out_of_memory",
}
# Eleventh test split (opened11) logs the scanner does not read right yet, and what they get
# (docs/startup-failure-causes.md, "The eleventh test split"). Its one measurement, as split test with the scanner of
# 28f223a, missed 12 failed starts and called 1 success failed; each was worked on as a kind
# (test_startup_cause_kinds_opened11.py). Left, labels in doubt whose excerpt does not decide them: 436, a Marlin MoE
# kernel refusing its thread config at the warmup's first request (labelled warmup_failed; a rule that calls every
# unexplained failure in the warmup a warmup failure would mislabel the bugs that surface there, 327 among them); 440,
# a NameError in SGLang's own code (labelled unknown; the NameError sign reads a missing optional dependency); 448,
# transformers not knowing glm_moe_dsa (labelled package_mismatch, read as the architecture); 452, Mooncake refusing
# to register a buffer (error code -1, no reason); 453, an unpack TypeError in the capture (two labels possible).
OPENED11_NOT_YET = {
    "436_warmup_failed_gpt_oss_20b_gptq_int8_g64_marlin_moe_invalid_thread_config_first_request_after_model_info.log": "unknown",
    "440_unknown_deepseek_r1_channel_fp8_dcu_pd_decode_deepep_dp_attention_w8a8_fp8_nameerror_is_moe_prefill.log": "package_mismatch",
    "448_package_mismatch_glm5_fp8_rocm_sgl_dev_20260218_transformers_4571_glm_moe_dsa_unrecognized.log": "unsupported_model_architecture",
    "452_incompatible_arguments_qwen35_397b_fp8_eagle_hicache_mooncake_l3_draft_pool_register_buffer_minus1_elided.log": "unknown",
    "453_incompatible_arguments_glm5_fp8_rocm_triton_backend_fused_mla_rope_capture_typeerror_forwardmetadata_rank_cut.log":
        "cuda_graph_capture_failed",
}
# Twelfth test split (opened12) logs the scanner does not read right yet, and what they get
# (docs/startup-failure-causes.md, "The twelfth test split"). Its one measurement, as split test with the scanner of
# b568385, missed 6 failed starts (no success called failed); each was worked on as a kind
# (test_startup_cause_kinds_opened12.py). Left: 463, a weight loader's KeyError on a layer of another pipeline stage
# (a bug in SGLang's loader under PP, labelled unknown), which reads as a checkpoint the model cannot load.
OPENED12_NOT_YET = {
    "463_unknown_qwen35_397b_nvfp4_pp4_dgx_spark_load_weights_keyerror_other_stage_layer_elided.log": "unsupported_model_architecture",
}
# Thirteenth test split (opened13) logs the scanner does not read right yet, and what they get
# (docs/startup-failure-causes.md, "The thirteenth test split"). Its one measurement, as split test with the scanner of
# b213c03, missed 9 failed starts and called 2 successes failed; each was worked on as a kind
# (test_startup_cause_kinds_opened13.py). Left: 504, a weight loader's bare shape assertion in an EAGLE run (labelled
# unknown); 508, a capture crash through the EAGLE draft's attention set-up (labelled cuda_graph_capture_failed; the
# capture is refined to the draft's failure by design); 509, argparse's "unrecognized arguments:" with nothing after
# it (labelled systemd_unit_error, its fix a unit passing an empty variable; the hint now says so); 498 and 499, runtime
# errors after hours of serving whose excerpts hold no line that only a client's request produces.
OPENED13_NOT_YET = {
    "504_unknown_glm52_fp8_two_h200_nodes_tp8_eagle_nsa_deepseek_weight_loader_linear_shape_assertion_abbreviated.log": "speculative_decoding_error",
    "508_cuda_graph_capture_failed_qwen35_4b_mtp_sglang_05101_a6000_flashinfer_eagle_capture_generate_attn_arg_prefill"
    "_triton_jit_sigsegv_faulthandler_elided.log": "speculative_decoding_error",
    "509_systemd_unit_error_qwen36_35b_h200_systemd_unit_execstart_blank_sg_extra_args_empty_argument_unrecognized_arguments_nothing_after_colon_lone_line.log":
        "invalid_arguments",
    "498_ready_runtime_error_deepseek_v4_pro_b200_tp8_ep8_eagle_long_context_swa_radix_cache_dec_lock_ref_assertion_after_hours_elided.log":
        "called failed",
    "499_ready_runtime_error_qwen35_27b_nvfp4_dflash2_hybrid_mamba_pool_leak_watchdog_timeout_after_17h_serving_pyspy_failed.log": "called failed",
}
# Fourteenth test split (opened14): its one measurement, as split test with the scanner of dff595d, missed 3 failed
# starts (515, 516, 518; no success called failed); each was worked on as a kind (test_startup_cause_kinds_opened14.py),
# and none is left.
OPENED14_NOT_YET = {}
# Fifteenth test split (opened15): its one measurement, as split test with the scanner of ee48d11, missed 3 failed
# starts (531, 535, 537), each worked on as a kind (test_startup_cause_kinds_opened15.py), and called one success
# failed: 536, a runtime crash on a long-context request whose excerpt (cut by the retrieval window) holds no sign of
# serving, only FlashInfer's TMA dumps and the scheduler's traceback header; left as it reads.
OPENED15_NOT_YET = {
    ("536_ready_runtime_error_deepseek_r1_b200_dp_attention_long_context_flashinfer_tma_descriptor_invalid_argument"
     "_scheduler_dp4_tp4_cut_by_retrieval_window.log"): "called failed",
}
# Sixteenth test split (opened16): its one measurement, as split test with the scanner of faccf05, detected 15 of 20
# failed starts and named 11 causes right; each miss was worked on as a kind (test_startup_cause_kinds_opened16.py).
# Left: 566, a runtime OOM of a long prefill on a server that was serving, whose poster put the prefill lines (the
# serving evidence: half the KV pool in use, 119,295 tokens pending) after the crash they explain; read in order it is
# a failed start.
OPENED16_NOT_YET = {
    "566_ready_runtime_error_deepseek_v4_flash_8x_2080ti_pp0_torch_oom_56mib_during_long_prefill_chunk_512_poster_excerpt_with_chinese_header.log":
        "called failed",
}
# Seventeenth test split (opened17): its one measurement, as split test with the scanner of 5492fe0, detected 12 of 12
# failed starts and named 9 causes right (no success called failed); 579 and 582 were worked on as kinds
# (test_startup_cause_kinds_opened17.py). Left: 573, transformers not knowing the checkpoint's model type (labelled
# package_mismatch, in doubt, as 448): read as the architecture, whose hint installs the release that supports the
# model with the transformers it pins.
OPENED17_NOT_YET = {
    "573_package_mismatch_gemma4_12b_unified_transformers_keyerror_ngc_sglang_2605_driver_compat_error_banner_dgx_spark.log":
        "unsupported_model_architecture",
}
# Eighteenth test split (opened18): its one measurement, as split test with the scanner of 7ee3bd4, detected 1 of 2
# failed starts and named 1 cause right (no success called failed); 585 is read right since.
OPENED18_NOT_YET: dict = {}
# Nineteenth test split (opened19): its one measurement, as split test with the scanner of b296cfc, detected 6 of 6
# failed starts and named 5 causes right (no success called failed); 588 is read right since.
OPENED19_NOT_YET: dict = {}
# Twentieth test split (opened20): its one measurement, as split test with the scanner of 71c146a, detected 12 of 12
# failed starts and named 9 causes right (no success called failed); 607 and 613 are read right since. 614's label is in
# doubt (SOURCES.md): an OOM of the Transformers backend's fallback for an architecture the build has no class for.
OPENED20_NOT_YET = {
    "614_unsupported_model_architecture_glm5_fp8_lmsys_rocm_v058_mi35x_transformers_backend_fallback_glm_moe_dsa_naive_moe_hip_oom_all_ranks.log":
        "gpu_out_of_memory",
}
# Twenty-first test split (opened21): its one measurement, as split test with the scanner of c932568, detected 7 of 7
# failed starts and named 4 causes right (no success called failed); 615, 616 and 620 are read right since.
OPENED21_NOT_YET: dict = {}
# Twenty-second test split (opened22): its one measurement, as split test with the scanner of 164412d, detected 5 of 5
# failed starts and named 4 causes right (no success called failed); 625 is read right since.
OPENED22_NOT_YET: dict = {}
# Twenty-third test split (opened23): its one measurement, as split test with the scanner of 3a5b4c0, detected 8 of 8
# failed starts and named 2 causes right (no success called failed).
OPENED23_NOT_YET: dict = {}
# Twenty-fourth test split (opened24): its one measurement, as split test with the scanner of 98cba12, detected 3 of 3
# failed starts and named 2 causes right (no success called failed); 645 is read right since.
OPENED24_NOT_YET: dict = {}
# Twenty-fifth test split (opened25): its one whole measurement, as split test with the scanner of 0679fda, detected 9
# of 9 failed starts and named 8 causes right (no success called failed); 656 is read right since.
OPENED25_NOT_YET: dict = {}
# Twenty-sixth test split (opened26): its one measurement, as split test with the scanner of 8770e25, detected 3 of 3
# failed starts and named 3 causes right (no success called failed).
OPENED26_NOT_YET: dict = {}
# Twenty-seventh test split (opened27): its one whole measurement, as split test with the scanner of 80524f7, detected
# 9 of 9 failed starts and named 7 causes right; 667 and 668 are read right since.
OPENED27_NOT_YET: dict = {}
# Twenty-eighth test split (opened28): its one measurement, as split test with the scanner of 10c222f, detected 5 of 5
# failed starts and named 4 causes right (no success called failed); 679 is read right since.
OPENED28_NOT_YET: dict = {}
NOT_YET = dict(OPENED3_NOT_YET, **OPENED4_NOT_YET, **OPENED5_NOT_YET, **OPENED6_NOT_YET, **OPENED7_NOT_YET, **OPENED8_NOT_YET,
               **OPENED9_NOT_YET, **OPENED10_NOT_YET, **OPENED11_NOT_YET, **OPENED12_NOT_YET, **OPENED13_NOT_YET,
               **OPENED14_NOT_YET, **OPENED15_NOT_YET, **OPENED16_NOT_YET, **OPENED17_NOT_YET, **OPENED18_NOT_YET, **OPENED19_NOT_YET,
               **OPENED20_NOT_YET, **OPENED21_NOT_YET, **OPENED22_NOT_YET, **OPENED23_NOT_YET, **OPENED24_NOT_YET, **OPENED25_NOT_YET,
               **OPENED26_NOT_YET, **OPENED27_NOT_YET, **OPENED28_NOT_YET)


def _text(row):
    with open(os.path.join(CORPUS, row["file"]), "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def _scan(row):
    """As the launch sees a start: a failed one once its exit is known, a successful one while it serves."""
    return scan_startup_log(_text(row), ended=row["outcome"] not in SUCCESS)


def _ids(rows):
    return [row["file"][:-4] for row in rows]


def test_the_corpus_is_whole_and_sourced():
    """Every file has a row (and a SOURCES.md line) and every row a file; labels are causes or success outcomes."""
    files = sorted(name for name in os.listdir(CORPUS) if name.endswith(".log"))
    assert files == sorted(row["file"] for row in ROWS)
    with open(os.path.join(CORPUS, "SOURCES.md"), encoding="utf-8") as handle:
        sources = handle.read()
    for name in files:
        assert name in sources, name
    table = {cells[0]: cells[1:3] for cells in (line.split(" | ") for line in sources.splitlines())
             if cells[0].startswith("| ") and cells[0].endswith(".log")}
    for row in ROWS:  # the Files table names each file's split and cause as corpus.json does
        assert table["| " + row["file"]] == [row["split"], row["cause"]], row["file"]
    for row in ROWS:
        assert row["cause"] in CAUSES + SUCCESS and row["split"] in SPLITS
        assert (row["outcome"] in SUCCESS) == (row["cause"] in SUCCESS)
        assert row["file"].startswith("constructed_") == (row["split"] == "constructed")
    assert len([row for row in ROWS if not row["file"].startswith("constructed_")]) >= 120


@pytest.mark.parametrize("row", DEVELOPED, ids=_ids(DEVELOPED))
def test_developed_splits_get_their_exact_cause(row):
    result = _scan(row)
    if row["file"] in NOT_YET:
        if row["outcome"] not in SUCCESS:
            assert result["outcome"] == "failed"
    elif row["outcome"] in SUCCESS:
        assert result["outcome"] != "failed" and result["cause"] is None
    elif row["file"] in NO_EVIDENCE:
        assert (result["outcome"], result["cause"]) == ("failed", "unknown")
    else:
        assert (result["outcome"], result["cause"]) == ("failed", row["cause"])
        assert result["hint"] and (result["error_message"] or result["fatal_line"] or result["traceback"])


@pytest.mark.parametrize("row", DEVELOPED, ids=_ids(DEVELOPED))
def test_developed_splits_read_through_the_journal_give_the_same_verdict(row):
    """The same logs as journal entries, one per line, without the empty lines journald drops: the same verdict,
    cause and message."""
    scanner = StartupLogScanner()
    lines = _text(row).splitlines()
    margin = PasteMargin(lines)  # a journal entry never carries the quote or indentation of a paste
    for index, line in enumerate(lines):
        if line.strip():
            scanner.feed_entry(margin.strip(line.rstrip("\r")), 4242, "sglang", 1764493315.0 + index * 0.001)
    if row["outcome"] not in SUCCESS:
        scanner.close(exited=True)
    by_entries, as_text = scanner.result(), _scan(row)
    for key in ("outcome", "cause", "error_message"):
        assert by_entries[key] == as_text[key], key


def test_logs_without_evidence_are_failed_starts_of_the_opened_split():
    opened_failed = {row["file"] for row in OPENED if row["outcome"] not in SUCCESS}
    assert set(NO_EVIDENCE) <= opened_failed


def test_logs_not_yet_read_right_are_logs_of_their_split():
    assert set(OPENED3_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened3"}
    assert set(OPENED4_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened4"}
    assert set(OPENED5_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened5"}
    assert set(OPENED6_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened6"}
    assert set(OPENED7_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened7"}
    assert set(OPENED8_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened8"}
    assert set(OPENED9_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened9"}
    assert set(OPENED10_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened10"}
    assert set(OPENED11_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened11"}
    assert set(OPENED12_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened12"}
    assert set(OPENED13_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened13"}
    assert set(OPENED14_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened14"}
    assert set(OPENED15_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened15"}
    assert set(OPENED16_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened16"}
    assert set(OPENED17_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened17"}
    assert set(OPENED18_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened18"}
    assert set(OPENED19_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened19"}
    assert set(OPENED20_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened20"}
    assert set(OPENED21_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened21"}
    assert set(OPENED22_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened22"}
    assert set(OPENED23_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened23"}
    assert set(OPENED24_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened24"}
    assert set(OPENED25_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened25"}
    assert set(OPENED26_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened26"}
    assert set(OPENED27_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened27"}
    assert set(OPENED28_NOT_YET) <= {row["file"] for row in OPENED if row["split"] == "opened28"}


@pytest.mark.parametrize("name", sorted(NOT_YET), ids=[name[:3] for name in sorted(NOT_YET)])
def test_not_yet_lists_say_what_the_scanner_gets_now(name):
    """A not-yet entry says what the log still gets ("called failed" for a success, else the cause): one that the
    scanner now reads right, or reads another wrong way, fails here, so the lists stay honest."""
    row = next(row for row in ROWS if row["file"] == name)
    result = _scan(row)
    got = ("called failed" if result["outcome"] == "failed" else result["outcome"]) if row["outcome"] in SUCCESS else result["cause"]
    assert got == NOT_YET[name]


def test_splits_are_ranges_in_the_order_they_were_collected():
    """A split is a block of collection numbers, each after the one before (SOURCES.md says what each split is): dev
    001-096, opened 097-126, opened2 127-156, opened3 157-195, opened4 196-229, opened5 230-265, opened6 266-296,
    opened7 297-329, opened8 330-362, opened9 363-406, opened10 407-433, opened11 434-460, opened12 461-489, opened13
    490-513, opened14 514-522, opened15 523-537, opened16 538-566, opened17 567-582, opened18 583-586, opened19 587-597, opened20 598-614, opened21 615-622,
    opened22 623-629, opened23 630-641, opened24 642-647, opened25 648-660, opened26 661-664, opened27 665-673,
    opened28 674-680 (each of the twenty-eight measured once while held out, then opened), test from 681. A log added later
    to a developed split, or a held-out number reused, fails here."""
    ranges = {"dev": (1, 96), "opened": (97, 126), "opened2": (127, 156), "opened3": (157, 195), "opened4": (196, 229),
              "opened5": (230, 265), "opened6": (266, 296), "opened7": (297, 329), "opened8": (330, 362),
              "opened9": (363, 406), "opened10": (407, 433),
              "opened11": (434, 460),
              "opened12": (461, 489),
              "opened13": (490, 513),
              "opened14": (514, 522),
              "opened15": (523, 537),
              "opened16": (538, 566),
              "opened17": (567, 582),
              "opened18": (583, 586),
              "opened19": (587, 597),
              "opened20": (598, 614),
              "opened21": (615, 622),
              "opened22": (623, 629),
              "opened23": (630, 641),
              "opened24": (642, 647),
              "opened25": (648, 660),
              "opened26": (661, 664),
              "opened27": (665, 673),
              "opened28": (674, 680)}
    for row in ROWS:
        if row["split"] == "constructed":
            continue
        number = int(row["file"].split("_", 1)[0])
        low, high = ranges.get(row["split"], (681, 10 ** 6))
        assert low <= number <= high, row["file"][:3]
    numbers = sorted(int(row["file"].split("_", 1)[0]) for row in ROWS if row["split"] != "constructed")
    assert numbers == list(range(1, len(numbers) + 1))


def test_held_out_split_bookkeeping():
    """The held-out split's rows (no verdict here): files of their own numbers, after every developed one, each with a
    label and a source. Messages say counts only, so a failure shows nothing of the held-out logs."""
    numbers = [int(row["file"].split("_", 1)[0]) for row in HELD_OUT]
    last_developed = max(int(row["file"].split("_", 1)[0]) for row in DEVELOPED if row["split"] != "constructed")
    duplicates = len(numbers) - len(set(numbers))
    assert duplicates == 0, "duplicate numbers in the held-out split"
    early = sum(1 for number in numbers if number <= last_developed)
    assert early == 0, "held-out numbers must follow the developed ones"
    missing = sum(1 for row in HELD_OUT if not os.path.isfile(os.path.join(CORPUS, row["file"])))
    assert missing == 0, "held-out rows without a file"
    unsourced = sum(1 for row in HELD_OUT if not row.get("source"))
    assert unsourced == 0, "held-out rows without a source"


HELD_OUT_FAILED = [row for row in HELD_OUT if row["outcome"] not in SUCCESS]


@pytest.mark.parametrize("row", HELD_OUT_FAILED, ids=_ids(HELD_OUT_FAILED))
def test_held_out_split_detects_every_failed_start(row):
    """What the launch's promise needs on logs never tuned on: a failed start is failed.

    Whether the cause is right, and whether a successful start is called failed, are figures of
    benchmarks/diagnosis_accuracy.py --split test (in docs/startup-failure-causes.md), not tests: pinning them per log
    would be tuning on the split. (The developed splits' successes are tested above.)
    """
    assert _scan(row)["outcome"] == "failed"
