# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure, and of serving, worked on from the fifth test split's misses (corpus split ``opened5``).

Each kind is a rule in causes.py, scanner.py or lines.py with its hint; the lines are small ones built from the
corpus logs' own wording (238 sgl-kernel's loader report; 240 a stated architecture floor; 246 a traceback flattened
into one line; 247 a page's HTML entities; 250 the diffusion server's warmup waiting for its own health check; 251
other ranks that did not finish loading; 264 the custom all-reduce refused at its C++ source; 256 and 261 tracebacks
raised while serving), and every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import restore_pasted
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner, scan_startup_log

# 238: sgl-kernel's own loader report, then the import errors it collected (a CUDA 12 wheel on a CUDA 13 host)
KERNEL_LOADER = (
    "1. Architecture-specific pattern: /venv/lib/python3.12/site-packages/sgl_kernel/sm100/common_ops.* - found files: "
    "['/venv/lib/python3.12/site-packages/sgl_kernel/sm100/common_ops.abi3.so']\n"
    "2. Fallback pattern: /venv/lib/python3.12/site-packages/sgl_kernel/common_ops.* - found files: []\n"
    "3. Standard Python import: common_ops - failed\n"
    "* ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
)
LONE_NVRTC = "ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory"
# 240: SGLang's own check of the GPU's architecture before it loads the model
FLOOR = "RuntimeError: SGLang only supports sm75 and above."
# 251: SGLang's check after loading, on a rank that loaded
OTHERS_NOT_LOADED = ("ValueError: TP rank 2 could finish the model loading, but there are other ranks that didn't finish loading. "
                     "It is likely due to unexpected failures (e.g., OOM) or a slow node.")
# 264: the exception, then the C++ source that raised it (two lone lines)
ALLREDUCE_IPC = "RuntimeError: invalid argument\n/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:350\n"
ALLREDUCE_ECC = ("RuntimeError: uncorrectable ECC error encountered\n/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:364\n")
# 250: the diffusion server (multimodal_gen) polls its own /health before its warmup
NOT_READY = ("[06-17 13:46:56] Server warmup failed; aborting startup: HTTP server did not become ready at http://[::1]:10454/health\n"
             "Traceback (most recent call last):\n"
             '  File "/x/sglang/multimodal_gen/runtime/entrypoints/http_server.py", line 105, in _run_server_warmup_after_http_ready\n'
             "    await _wait_until_http_ready(server_args)\n"
             '  File "/x/sglang/multimodal_gen/runtime/entrypoints/http_server.py", line 73, in _wait_until_http_ready\n'
             '    raise RuntimeError(f"HTTP server did not become ready at {health_url}")\n'
             "RuntimeError: HTTP server did not become ready at http://[::1]:10454/health\n")


@pytest.mark.parametrize("evidence, cause", [
    (KERNEL_LOADER, "package_mismatch"),
    (LONE_NVRTC, "jit_tool_missing"),  # a lone missing libnvrtc stays a JIT's missing toolkit library (030, 242)
    (FLOOR, "unsupported_gpu"),
    ("[2025-02-12 02:56:48 TP0] Compute capability below sm80. Use float16 due to lack of bfloat16 support.", "unknown"),
    # not the GPU's floor: a setting handed the kernel another type (opened24)
    ("This kernel only supports bfloat16 and float16 inputs", "incompatible_arguments"),
    (OTHERS_NOT_LOADED, "peer_rank_lost"),
    ("[2026-01-05 10:00:00 TP0] Load weight end. type=Qwen3ForCausalLM, avail mem=20.00 GB", "unknown"),
    (ALLREDUCE_IPC, "p2p_unsupported"),
    (ALLREDUCE_ECC, "unknown"),  # another CUDA error at the same source (a GPU's ECC fault) is not IPC between GPUs
    ("RuntimeError: invalid argument", "unknown"),
    (NOT_READY, "warmup_failed"),
    ("[06-17 13:46:50] HTTP server is ready at http://[::1]:10454/health", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    hint = hint_for("package_mismatch", LONE_NVRTC, "process_started", KERNEL_LOADER)
    assert "built for another CUDA" in hint and "libnvrtc.so.12" in hint and "cu130" in hint
    assert "no setting makes it start" in hint_for("unsupported_gpu", FLOOR, "weights_loading", FLOOR)
    assert "that rank's own lines" in hint_for("peer_rank_lost", OTHERS_NOT_LOADED, "weights_loading", OTHERS_NOT_LOADED)
    hint = hint_for("warmup_failed", "RuntimeError: HTTP server did not become ready at http://[::1]:10454/health", "http_up",
                    NOT_READY)
    assert "http://[::1]:10454/health" in hint and "no_proxy" in hint and "{health_url}" not in hint
    assert "disable_custom_all_reduce: true" in hint_for("p2p_unsupported", "RuntimeError: invalid argument", None, ALLREDUCE_IPC)


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    """264's shape: the exception and its C++ source, two lines without a traceback; 240's and 251's messages alone."""
    assert is_notable(FLOOR) and is_notable(OTHERS_NOT_LOADED) and not is_notable("RuntimeError: invalid argument")
    result = scan_startup_log(ALLREDUCE_IPC, ended=True)
    assert (result["outcome"], result["cause"], result["error_message"]) == ("failed", "p2p_unsupported", "RuntimeError: invalid argument")
    # the source location counts only right after the exception: a lone one, or after another line, is not the error's
    result = scan_startup_log("RuntimeError: invalid argument\n[2026-01-05 10:00:00] Load weight begin.\n"
                              "/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:350\n", ended=True)
    assert result["cause"] == "unknown"
    result = scan_startup_log(KERNEL_LOADER, ended=True)
    assert (result["cause"], result["error_message"]) == ("package_mismatch", "* ImportError: " + LONE_NVRTC[len("ImportError: "):])


# ------------------------------------------------------------------------------------------------ shapes of a paste
FLAT = ('[2025-06-15 15:53:39] Scheduler hit an exception: Traceback (most recent call last):   File "/x/transformers/models/'
        'auto/configuration_auto.py", line 1170, in from_pretrained     config_class = CONFIG_MAPPING[config_dict["model_type"]]'
        '                    ~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^   File "/x/transformers/models/auto/configuration_auto.py", '
        'line 872, in __getitem__     raise KeyError(key) KeyError: \'mineru2_qwen\'  During handling of the above exception, '
        'another exception occurred:  Traceback (most recent call last):   File "/x/sglang/srt/managers/scheduler.py", line 260, '
        'in __init__     self.init_tokenizer()')
ESCAPED = [
    "[2025-05-03 00:23:09 TP1] Scheduler hit an exception: Traceback (most recent call last):",
    "  File &quot;/x/transformers/models/auto/configuration_auto.py&quot;, line 1113, in from_pretrained",
    "    config_class = CONFIG_MAPPING[config_dict[&quot;model_type&quot;]]",
    "  File &quot;/x/transformers/models/auto/configuration_auto.py&quot;, line 815, in __getitem__",
    "    raise KeyError(key)",
    "KeyError: &apos;qwen3&apos;",
]


def test_a_traceback_flattened_into_one_line_is_read_as_its_lines():
    """246's shape: a UI joined the traceback's lines with spaces; the frames, code, carets and exceptions come apart."""
    lines = restore_pasted(FLAT)
    assert lines[0].endswith("Scheduler hit an exception: Traceback (most recent call last):")
    assert lines[1] == '  File "/x/transformers/models/auto/configuration_auto.py", line 1170, in from_pretrained'
    assert lines[2] == '    config_class = CONFIG_MAPPING[config_dict["model_type"]]'
    assert lines[3].strip().startswith("~~~") and lines[5] == "    raise KeyError(key)" and lines[6] == "KeyError: 'mineru2_qwen'"
    assert lines[7].startswith("During handling of the above exception") and lines[8] == "Traceback (most recent call last):"
    result = scan_startup_log(FLAT + "\n", ended=True)
    assert (result["outcome"], result["cause"], result["error_message"]) == (
        "failed", "unsupported_model_architecture", "KeyError: 'mineru2_qwen'")


def test_html_entities_of_a_page_are_decoded():
    """247's shape: a page that escaped the log; the same verdict as the plain text, through both inputs."""
    assert restore_pasted(ESCAPED[5]) == ["KeyError: 'qwen3'"]
    result = scan_startup_log("\n".join(ESCAPED) + "\n", ended=True)
    assert (result["cause"], result["error_message"]) == ("unsupported_model_architecture", "KeyError: 'qwen3'")
    scanner = StartupLogScanner()
    for index, line in enumerate(ESCAPED):
        scanner.feed_entry(line, 4242, "sglang", 1764493315.0 + index * 0.001)
    scanner.close(exited=True)
    assert (scanner.result()["cause"], scanner.result()["error_message"]) == ("unsupported_model_architecture", "KeyError: 'qwen3'")


@pytest.mark.parametrize("line", [
    '[2025-05-27 23:56:41] 10.94.16.2 "GET /route?engine_rank=0&target_dp_group=0 HTTP/1.1" 200 205',  # a bare & is text
    "Tom &amp Jerry",  # no entity without its semicolon
    '  File "/x/sglang/srt/managers/scheduler.py", line 260, in __init__',  # one frame is a line of its own
    "[2025-06-15 15:53:39] Scheduler hit an exception: Traceback (most recent call last):",
    'RuntimeError: File "a.py" and File "b.py" differ',
])
def test_what_no_page_or_ui_did_comes_back_as_it_is(line):
    assert restore_pasted(line) == [line]


# ------------------------------------------------------------------------------------------- serving, or starting
SCHEDULER_HIT = "[2025-11-03 11:56:54] Scheduler hit an exception: Traceback (most recent call last):\n"
LOOP = ('  File "/x/sglang/srt/managers/scheduler.py", line 2612, in run_scheduler_process\n'
        "    scheduler.event_loop_normal()\n")


@pytest.mark.parametrize("text", [
    # 256: a prefill batch merged into a decode batch already running (two requests at once; the warmup is one)
    SCHEDULER_HIT + LOOP
    + '  File "/x/sglang/srt/managers/scheduler.py", line 1570, in get_next_batch_to_run\n'
    + "    self.running_batch.merge_batch(self.last_batch)\n"
    + '  File "/x/sglang/srt/managers/schedule_batch.py", line 1692, in merge_batch\n'
    + "    self.spec_info.merge_batch(other.spec_info)\n"
    + "RuntimeError: Sizes of tensors must match\n",
    # 261: the token-id logprobs a request asked for, converted for its answer (the warmup asks no logprobs)
    SCHEDULER_HIT + LOOP
    + '  File "/x/sglang/srt/managers/scheduler_output_processor_mixin.py", line 403, in process_batch_result_decode\n'
    + "    logits_output.next_token_token_ids_logprobs_val = [\n"
    + "AttributeError: 'list' object has no attribute 'tolist'\n",
    # the top logprobs a request asked for, in the logits processor
    SCHEDULER_HIT + LOOP
    + '  File "/x/sglang/srt/layers/logits_processor.py", line 400, in get_top_logprobs\n'
    + "    values, indices = all_logprobs.topk(max_k, dim=-1)\n"
    + "RuntimeError: CUDA error: device-side assert triggered\n",
])
def test_a_traceback_raised_while_serving_is_no_failed_start(text):
    result = scan_startup_log(text, ended=False)
    assert result["outcome"] == "ready" and result["cause"] is None


@pytest.mark.parametrize("text", [
    # the warmup's one request: its batch is filtered when it finishes, and its token ids are converted
    SCHEDULER_HIT + LOOP
    + '  File "/x/sglang/srt/managers/schedule_batch.py", line 1650, in filter_batch\n'
    + "    self.seq_lens = self.seq_lens[keep_indices_device]\n"
    + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    SCHEDULER_HIT + LOOP
    + '  File "/x/sglang/srt/managers/scheduler_output_processor_mixin.py", line 380, in process_batch_result_decode\n'
    + "    next_token_ids = next_token_ids.tolist()\n"
    + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    # a check of whether logprobs were asked is code the warmup runs too
    SCHEDULER_HIT + LOOP
    + '  File "/x/sglang/srt/layers/logits_processor.py", line 300, in forward\n'
    + "    if logits_metadata.extend_return_top_logprob:\n"
    + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
])
def test_what_the_warmup_also_runs_is_no_serving_evidence(text):
    assert scan_startup_log(text, ended=True)["outcome"] == "failed"
