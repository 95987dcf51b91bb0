# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure, and of serving, worked on from the fourth test split's misses (corpus split ``opened4``).

Each kind is a rule in causes.py, scanner.py or lines.py (a relay's prefix) with its hint; the lines are small ones
built from the corpus logs' own wording (202 torch.distributed's ``[rank0]:`` prefix; 208 a setting against the
checkpoint's quantization; 214 an attention kernel's head-size assertion; 215 NCCL's own allocation; 216 a layer
without a method for the quantization; 218 a package a library needs; 198, 199 and 179 tracebacks raised while
serving), and every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import parse_line
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 214: Triton's extend attention takes a fixed set of head sizes (a bare assertion, Python 3.11 carets or not)
HEAD_ASSERT = (
    '  File "/x/site-packages/sglang/srt/layers/extend_attention.py", line 267, in extend_attention_fwd\n'
    "    assert Lq in {16, 32, 64, 128, 256, 576}\n"
    "AssertionError"
)
HEAD_ASSERT_CARETS = (
    '  File "/x/site-packages/sglang/srt/layers/attention/triton_ops/decode_attention.py", line 40, in decode_attention_fwd\n'
    "    assert head_dim in [64, 128, 256]\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "AssertionError"
)
# an assertion on a head count with its own message is a parallelism or model check, not a kernel's size list
HEAD_ASSERT_MESSAGE = (
    '  File "/x/site-packages/sglang/srt/layers/extend_attention.py", line 267, in extend_attention_fwd\n'
    "    assert Lq in {16, 32, 64, 128, 256, 576}, Lq\n"
    "AssertionError: 96"
)
# 216: vLLM's FusedMoE finds no quantization method for a GPTQ checkpoint
NO_QUANT_METHOD = (
    '  File "/x/site-packages/vllm/model_executor/layers/fused_moe/layer.py", line 216, in __init__\n'
    "    assert self.quant_method is not None\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "AssertionError"
)
# 208: the checkpoint says awq, the setting says awq_marlin (vLLM's and SGLang's ModelConfig word it the same)
QUANT_CONFIG = ("ValueError: Quantization method specified in the model config (awq) does not match the quantization method "
                "specified in the `quantization` argument (awq_marlin).")
# 215: NCCL's lone lines: its own allocation failed
NCCL_CALLOC = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:76, unhandled "
               "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
               "ncclUnhandledCudaError: Call to CUDA function failed.\n"
               "Last error:\n"
               "Failed to CUDA calloc 67108864 bytes")
NCCL_OTHER = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:76, unhandled "
              "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
              "ncclUnhandledCudaError: Call to CUDA function failed.\n"
              "Last error:\n"
              "Cuda failure 'unspecified launch failure'")
# 218: FastAPI's form routes need python-multipart
MULTIPART = 'RuntimeError: Form data requires "python-multipart" to be installed.'


@pytest.mark.parametrize("evidence, cause", [
    (HEAD_ASSERT, "unsupported_model_architecture"),
    (HEAD_ASSERT_CARETS, "unsupported_model_architecture"),
    (HEAD_ASSERT_MESSAGE, "unknown"),
    ("    assert num_heads % tp_size == 0\nAssertionError", "parallelism_mismatch"),
    (NO_QUANT_METHOD, "unsupported_model_architecture"),
    ("    assert self.quant_method is not None, 'x'\nAssertionError: x", "unknown"),
    (QUANT_CONFIG, "incompatible_arguments"),
    ("ValueError: the model config does not match", "unknown"),
    (NCCL_CALLOC, "gpu_out_of_memory"),
    (NCCL_OTHER, "nccl_error"),
    (MULTIPART, "package_mismatch"),
    ("ImportError: flash_attn is not installed. Please install it with pip install flash-attn", "package_mismatch"),
    ("INFO: python-multipart is installed", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    assert "attention_backend" in hint_for("unsupported_model_architecture", "AssertionError", "warmup", HEAD_ASSERT)
    assert "no implementation for the checkpoint's quantization" in hint_for(
        "unsupported_model_architecture", "AssertionError", "weights_loading", NO_QUANT_METHOD)
    hint = hint_for("incompatible_arguments", QUANT_CONFIG, "process_started", QUANT_CONFIG)
    assert "quantized with awq" in hint and "quantization: awq_marlin" in hint
    assert "lower mem_fraction_static" in hint_for("gpu_out_of_memory", "Failed to CUDA calloc 67108864 bytes", None, NCCL_CALLOC)
    assert "python-multipart" in hint_for("package_mismatch", MULTIPART, "process_started", MULTIPART)


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    """215's shape: four lone lines, no traceback: NCCL's own allocation failure is GPU memory, not NCCL."""
    assert is_notable("Failed to CUDA calloc 67108864 bytes") and is_notable(MULTIPART) and is_notable(QUANT_CONFIG)
    result = scan_startup_log(NCCL_CALLOC + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "gpu_out_of_memory")


def test_torch_distributed_rank_prefix_is_a_relay():
    """202's shape: torch.distributed puts ``[rank0]: `` before every line a rank writes; the traceback is read through it,
    and SGLang's own bracketed records are not taken for it."""
    assert parse_line("[rank0]:   File \"/x/loader.py\", line 960, in _load_weights").msg == '  File "/x/loader.py", line 960, in _load_weights'
    assert parse_line("[rank3]: Traceback (most recent call last):").msg == "Traceback (most recent call last):"
    record = parse_line("[2025-01-17 01:52:03 TP0] Prefill batch. #new-seq: 1")
    assert record.tags == "TP0" and record.body == "Prefill batch. #new-seq: 1"
    text = "\n".join("[rank0]: " + line for line in (
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
        "    return _run_code(code, main_globals, None,",
        '  File "/root/sglang/python/sglang/srt/models/llama.py", line 442, in load_weights',
        "    param = params_dict[name]",
        "KeyError: 'model.layers.0.mlp.down_proj.qweight'",
    )) + "\n"
    result = scan_startup_log(text, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "unsupported_model_architecture")
    assert result["error_message"] == "KeyError: 'model.layers.0.mlp.down_proj.qweight'"


# ------------------------------------------------------------------------------------------- serving, or starting
OVERLAP_HIT = "[2025-01-28 17:58:17 TP0] TpModelWorkerClient hit an exception: Traceback (most recent call last):\n"
SCHEDULER_HIT = "[2025-01-24 04:52:54 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"


@pytest.mark.parametrize("text", [
    # 199: a request's grammar (constrained decoding) refuses a token; the warmup has no grammar
    SCHEDULER_HIT
    + '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1253, in process_batch_result_decode\n'
    + "    req.grammar.accept_token(next_token_id)\n"
    + '  File "/sgl-workspace/sglang/python/sglang/srt/constrained/xgrammar_backend.py", line 52, in accept_token\n'
    + "    assert self.matcher.accept_token(token)\n"
    + "RuntimeError: Token id 128255 is regarded as a special token, and cannot be accepted by the GrammarMatcher\n",
    # the grammar's frame alone (a paste that starts below the scheduler's frames)
    SCHEDULER_HIT
    + '  File "/x/site-packages/sglang/srt/constrained/outlines_backend.py", line 90, in fill_vocab_mask\n'
    + "    vocab_mask[idx].fill_(1)\n"
    + "RuntimeError: CUDA error: device-side assert triggered\n",
    # 198: min_p sampling runs only for a request that set min_p; the warmup is greedy
    OVERLAP_HIT
    + '  File "/sgl-workspace/sglang/python/sglang/srt/layers/sampler.py", line 86, in forward\n'
    + "    batch_next_token_ids, success = min_p_sampling_from_probs(\n"
    + "ValueError: not enough values to unpack (expected 2, got 1)\n",
    # 179: a PD prefill server's bootstrap server answered a decode server's route query for a request
    '[2025-05-27 23:56:41] 10.94.16.2 [27/May/2025:22:56:41 -0800] "GET /route?engine_rank=0&target_dp_group=0 HTTP/1.1" '
    '200 205 "-" "python-requests/2.32.3"\n'
    "[2025-05-27 23:56:41] Child process unexpectedly failed with an exit code 139. pid=1896790\n",
])
def test_a_traceback_raised_while_serving_is_no_failed_start(text):
    result = scan_startup_log(text, ended=False)
    assert result["outcome"] == "ready" and result["cause"] is None


@pytest.mark.parametrize("text", [
    # the greedy sampler the warmup runs (argmax), and the grammar backend being built when the scheduler starts
    OVERLAP_HIT
    + '  File "/sgl-workspace/sglang/python/sglang/srt/layers/sampler.py", line 70, in forward\n'
    + "    batch_next_token_ids = torch.argmax(logits, -1)\n"
    + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    SCHEDULER_HIT
    + '  File "/x/site-packages/sglang/srt/constrained/xgrammar_backend.py", line 120, in __init__\n'
    + "    tokenizer_info = TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)\n"
    + "TypeError: from_huggingface() got an unexpected keyword argument 'vocab_size'\n",
    # a prefill rank registering with its bootstrap server (PUT), and a route query that failed, happen at start
    '[2025-05-27 23:56:30] 10.94.16.2 "PUT /route HTTP/1.1" 200 152 "-" "python-requests/2.32.3"\n'
    '[2025-05-27 23:56:31] 10.94.16.2 "GET /route?engine_rank=-1&target_dp_group=-1 HTTP/1.1" 404 0 "-" "python-requests"\n'
    "[2025-05-27 23:56:41] Child process unexpectedly failed with an exit code 139. pid=1896790\n",
])
def test_what_the_warmup_or_the_start_also_runs_is_no_serving_evidence(text):
    assert scan_startup_log(text, ended=True)["outcome"] == "failed"
