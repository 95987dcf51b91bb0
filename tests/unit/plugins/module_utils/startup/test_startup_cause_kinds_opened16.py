# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the sixteenth test split's misses (corpus split ``opened16``).

Each kind is a rule in causes.py with its hint, or a reading in scanner.py; the lines are small ones built from the
wording of the corpus logs and of other phrasings of the same family. Two were starts read as ready: a harness that
quotes SGLang's ready sentence in its own summary (558-563), and a multimodal warmup whose chat-completion request
looked like a client's (539). The others: a JIT build's compiler killed by the OOM killer (540); SGLang's older
"No accelerator" words (547); a quantization's list of the dtypes it takes (548); a bare assertion on a tensor's dtype
(555); SGLang adjusting a setting itself, and a missing generation_config.json, which are no evidence. Every kind has
a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

BUILD_KILLED = ("subprocess.CalledProcessError: Command ['ninja', '-v', '-C',\n"
                "'/root/.cache/flashinfer/0.6.12/121a/cached_ops/fp4_gemm_cutlass_sm120',\n"
                "'-f', '.../build.ninja'] returned non-zero exit status 137.\n"
                "FAILED: [code=137] ...fp4_gemm_cutlass...cuda.o\nKilled\nninja: build stopped: subcommand failed.\n")
QUANT_DTYPE = "ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"
DTYPE_ASSERT = ('  File "sglang/srt/layers/attention/nsa/nsa_indexer.py", line 76, in rotate_activation\n'
                "    assert x.dtype == torch.bfloat16\n"
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
                "AssertionError\n")


@pytest.mark.parametrize("evidence,cause", [
    (BUILD_KILLED, "host_resource_error"),
    ("ninja: build stopped\nKilled signal terminated program cicc", "host_resource_error"),
    # a build that failed on its own (exit status 1) is the build's, and 127 is a missing tool
    (BUILD_KILLED.replace("137", "1"), "kernel_compile_failed"),
    ("RuntimeError: No accelerator (CUDA, XPU, HPU) is available.", "driver_mismatch"),
    ("INFO: No accelerator plugin for HPU is installed; using CUDA", "unknown"),
    (QUANT_DTYPE, "incompatible_arguments"),
    ("ValueError: torch.float32 is not supported for quantization method gptq. Supported dtypes: [torch.float16, torch.bfloat16]",
     "incompatible_arguments"),
    (DTYPE_ASSERT, "incompatible_arguments"),
    ("    assert q.dtype in (torch.float16, torch.bfloat16)\nAssertionError\n", "incompatible_arguments"),
    # an assertion on a shape, or a dtype assertion with its own message, is not this kind
    ("    assert x.shape[-1] == 128\nAssertionError\n", "unknown"),
    ("    assert x.dtype == torch.bfloat16, 'x'\nAssertionError: kv cache must be bf16 here\n", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


@pytest.mark.parametrize("line", [
    # SGLang adjusting a setting itself, naming the flag that would avoid it: its own decision, no failure
    "Disabling overlap schedule since mamba no_buffer is not compatible with overlap schedule, try to use "
    "--disable-radix-cache if overlap schedule is necessary",
    # a checkpoint without the optional generation_config.json: SGLang warns and goes on
    "Failed to load generation config for /models/Qwen3.5-9B: /models/Qwen3.5-9B does not appear to have a file named "
    "generation_config.json.",
])
def test_what_sglang_says_and_goes_on_is_no_evidence(line):
    assert not is_notable(line)


def test_the_kinds_hints_say_what_to_do():
    killed = hint_for("host_resource_error", "ninja: build stopped: subcommand failed.", None, BUILD_KILLED)
    assert killed.startswith("A kernel's JIT build was killed (exit status 137") and "MAX_JOBS" in killed
    quant = hint_for("incompatible_arguments", QUANT_DTYPE, None, QUANT_DTYPE)
    assert quant.startswith("The quantization method awq takes only the dtypes [torch.float16], and the model runs in "
                            "torch.bfloat16")
    assert "dtype: float16" in quant and "awq_marlin" in quant
    dtype = hint_for("incompatible_arguments", "AssertionError", None, DTYPE_ASSERT)
    assert dtype.startswith("A code path of this model asserts that its tensors are bfloat16") and "dtype: bfloat16" in dtype
    warmup = 'AssertionError: {"object":"error","message":"Internal server error: NPU function error: call aclnnInplaceCopy failed"}'
    assert hint_for("warmup_failed", warmup, "warmup", warmup).startswith("The warmup request failed inside the server (HTTP 500")


HARNESS = ("== starting ==\n"
           "model   : /data/models/DeepSeek-V4-Flash\n"
           "ready   : grep 'fired up and ready to roll' /data/logs/serve.log\n"
           "pid     : 3992674\n"
           "SERVER DIED\n"
           "[2026-10-01 23:19:43] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-10-01 23:19:43 PP1 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           '  File "sglang/srt/mem_cache/kv_cache_configurator.py", line 2220, in _profile_available_bytes\n'
           "    raise ValueError(\n"
           "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.97.\n")


def test_a_harness_quoting_the_ready_sentence_is_not_ready():
    result = scan_startup_log(HARNESS, ended=True)
    assert (result["outcome"], result["cause"], result["ready_line"]) == ("failed", "gpu_out_of_memory", None)
    # SGLang's own sentence is ready, with or without its first words
    for line in ("[2026-10-01 23:30:00] The server is fired up and ready to roll!", "fired up and ready to roll!"):
        assert scan_startup_log(line + "\n")["outcome"] == "ready"


MULTIMODAL_WARMUP = (
    '[2026-06-09 03:35:22] INFO:     Uvicorn running on http://127.0.0.1:21000 (Press CTRL+C to quit)\n'
    '[2026-06-09 03:35:23] INFO:     127.0.0.1:54160 - "GET /model_info HTTP/1.1" 200 OK\n'
    "[2026-06-09 03:35:23] Error in request: NPU function error: call aclnnInplaceCopy failed, error code is 161002\n"
    "Traceback (most recent call last):\n"
    '  File "sglang/srt/entrypoints/openai/serving_base.py", line 107, in handle_request\n'
    "    return await self._handle_non_streaming_request(\n"
    "RuntimeError: NPU function error: call aclnnInplaceCopy failed, error code is 161002\n"
    '[2026-06-09 03:35:23] INFO:     127.0.0.1:54166 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
    "[2026-06-09 03:35:23] Initialization failed. warmup error: Traceback (most recent call last):\n"
    '  File "sglang/srt/entrypoints/http_server.py", line 2018, in _execute_server_warmup\n'
    '    assert res.status_code == 200, f"{res.text}"\n'
    'AssertionError: {"object":"error","message":"Internal server error: NPU function error"}\n')


def test_a_warmup_that_failed_after_traces_of_a_request_is_a_failed_start():
    """A multimodal model's warmup posts a chat completion: its error and the OpenAI handler's frames look like a
    client's, until SGLang says the warmup failed."""
    result = scan_startup_log(MULTIMODAL_WARMUP, ended=True)
    assert (result["outcome"], result["cause"], result["phase"], result["ready_line"]) == ("failed", "warmup_failed", "warmup", None)
    assert "ready" not in [entry["phase"] for entry in result["phases"]]
    # without SGLang's report of the warmup's failure, the same traces are a client's request on a serving server while
    # the process lives, and the warmup's once it has ended with no other sign of serving (opened18's 585)
    served = MULTIMODAL_WARMUP.split("[2026-06-09 03:35:23] Initialization failed.", maxsplit=1)[0]
    assert scan_startup_log(served)["outcome"] == "ready"
    assert scan_startup_log(served, ended=True)["outcome"] == "failed"
    # after SGLang's own ready line, nothing revokes it
    ready = MULTIMODAL_WARMUP.replace("[2026-06-09 03:35:23] Error in request",
                                      "[2026-06-09 03:35:23] The server is fired up and ready to roll!\n[2026-06-09 03:35:23] Error in request")
    assert scan_startup_log(ready, ended=True)["outcome"] == "ready"
