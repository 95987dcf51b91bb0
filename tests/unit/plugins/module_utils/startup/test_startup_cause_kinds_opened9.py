# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the ninth test split's misses (corpus split ``opened9``).

Each kind is a rule in causes.py or scanner.py with its hint; the lines are small ones built from the wording of the
corpus logs and of other phrasings of the same family: 378 a compiler's own diagnostic on a JIT kernel's source; 380
and 381 a framework that starts SGLang itself (verl, slime) written for another release; 382 FlashInfer's fa2 path
without fp8 tensor cores; 386 NCCL's bootstrap failing while the communicator is made; 387 and 388 a platform shim
in place of a native build; 393 FlashInfer's dispatch without a kernel for the configuration; 394 and 396 a kernel
backend or the checkpoint's own quantization against the chosen one; 395 a divisibility stated with the TP size in
the message; 401 argparse's refusal glued to the end of a flattened usage banner. Every kind has a line it must not
take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

COMPILER_LINES = (
    "/venv/lib/python3.12/site-packages/sglang/jit_kernel/csrc/elementwise/activation.cuh:95:52: error: type/value mismatch",
    "/root/.cache/flashinfer/generated/batch_prefill.cu(214): error: identifier \"__nv_fp8_e4m3\" is undefined",
    "/tmp/torch_extensions/sgl/rope.cpp:12:10: fatal error: ATen/cuda/CUDAContext.h: No such file or directory",
)
LAUNCHER_LINES = (
    "AttributeError: 'ServerArgs' object has no attribute 'encoder_only'",
    "TypeError: _launch_subprocesses() missing 3 required positional arguments: 'init_tokenizer_manager_func'",
    "TypeError: ServerArgs.__init__() got an unexpected keyword argument 'enable_memory_saver'",
    "TypeError: run_scheduler_process() takes 7 positional arguments but 8 were given",
)
SHIM_LINES = (
    "RuntimeError: ROCm shim: aiter.mha_batch_prefill_func was really called - needs a native ROCm build",
    "Exception: Capture cuda graph failed: ROCm shim: sgl_kernel.rotary_embedding was really called - needs a native ROCm build",
)
FLASHINFER_NO_CONFIG = ("RuntimeError: Error in function 'BatchPrefillWithPagedKVCacheDispatched' at "
                        "flashinfer/attention/prefill.cuh:2978: FlashInfer Internal Error: Invalid configuration : NUM_MMA_Q=1")
BACKEND_QUANT_LINES = (
    "AssertionError: modelopt_fp4 quantization or bf16 is required for Flashinfer Cutlass MOE",
    "ValueError: bf16 or fp8 dtype is required by the trtllm MoE runner backend",
)
QUANT_CONFIG_WRAPPED = ("ValueError: Quantization method specified in the model config (compressed-tensors)\n"
                        "does not match the quantization method specified in the `quantization` argument (fp8).\n")
BLOCK_DIVISIBILITY = "(moe_intermediate_size=1408 / moe_tp_size=8) % weight_block_size_n=128 == 0"
NCCL_INIT = ('  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl.py", line 113, in __init__\n'
             "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(\n"
             '  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 399, in '
             "ncclCommInitRank\n"
             "    self.NCCL_CHECK(\n"
             '  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 374, in '
             "NCCL_CHECK\n"
             '    raise RuntimeError(f"NCCL error: {error_str}")\n'
             "RuntimeError: NCCL error: remote process exited or there was a network error\n")
NCCL_RUNTIME = ('  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl.py", line 160, in all_reduce\n'
                "    self.nccl.ncclAllReduce(\n"
                "RuntimeError: NCCL error: remote process exited or there was a network error\n")


@pytest.mark.parametrize("evidence,cause", [
    *((line, "kernel_compile_failed") for line in COMPILER_LINES),
    # a compiler's warning, and a Python file's line number, are no failed build
    ("/venv/include/cutlass/numeric_types.h:41:3: warning: unused variable 'x'", "unknown"),
    ("sglang/srt/server_args.py:1203: error: nothing", "unknown"),
    *((line, "package_mismatch") for line in LAUNCHER_LINES),
    # another object's missing attribute is no launcher of another release
    ("AttributeError: 'Scheduler' object has no attribute 'foo'", "unknown"),
    *((line, "package_mismatch") for line in SHIM_LINES),
    ("Setup Custom allreduce failed with a native build missing", "unknown"),
    (FLASHINFER_NO_CONFIG, "kernel_compile_failed"),
    ("AssertionError: fp8 tensor core is not supported in fa2 backend", "unsupported_gpu"),
    ("Tensor cores are used for the fp8 KV cache", "unknown"),
    *((line, "incompatible_arguments") for line in BACKEND_QUANT_LINES),
    ("INFO: quantization is required for nothing here", "unknown"),
    (QUANT_CONFIG_WRAPPED, "incompatible_arguments"),
    (QUANT_CONFIG_WRAPPED.splitlines()[0], "incompatible_arguments"),
    (BLOCK_DIVISIBILITY, "parallelism_mismatch"),
    ("(hidden_size=4096 / num_layers=32) % 8 == 0", "unknown"),
    (NCCL_INIT, "distributed_init_failed"),
    # the same NCCL words at an all-reduce, after the ranks met, stay NCCL's
    (NCCL_RUNTIME, "nccl_error"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_an_argparse_refusal_glued_to_a_flattened_usage_banner_fails_the_start_with_its_own_words():
    line = ("[--decrypted-config-file DECRYPTED_CONFIG_FILE] [--forward-hooks FORWARD_HOOKS] launch_server.py: error: "
            "unrecognized arguments: --speculative-draft-sliding-window 40960")
    result = scan_startup_log(line + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "invalid_arguments")
    assert result["error_message"] == "launch_server.py: error: unrecognized arguments: --speculative-draft-sliding-window 40960"
    assert "speculative_draft_sliding_window" in result["hint"]
    # a usage banner alone, with no error, is no refusal
    assert scan_startup_log("[--forward-hooks FORWARD_HOOKS] launch_server.py is the entry point\n")["outcome"] != "failed"


def test_the_kinds_hints_say_what_to_do():
    shim = hint_for("package_mismatch", SHIM_LINES[0], None, SHIM_LINES[0])
    assert "ROCm" in shim and "aiter.mha_batch_prefill_func" in shim and "native" not in shim.split(":")[0]
    launcher = hint_for("package_mismatch", LAUNCHER_LINES[1], None, LAUNCHER_LINES[1])
    assert "verl" in launcher and "sglang_install_version" in launcher and "_launch_subprocesses" in launcher
    compiler = hint_for("kernel_compile_failed", COMPILER_LINES[0], None, COMPILER_LINES[0])
    assert "CUDA_HOME" in compiler and "compiler" in compiler
    no_config = hint_for("kernel_compile_failed", FLASHINFER_NO_CONFIG, None, FLASHINFER_NO_CONFIG)
    assert "attention_backend: triton" in no_config
    wrapped = hint_for("incompatible_arguments", QUANT_CONFIG_WRAPPED.splitlines()[0], None, QUANT_CONFIG_WRAPPED)
    assert "compressed-tensors" in wrapped and "quantization: fp8" in wrapped
    cut = QUANT_CONFIG_WRAPPED.splitlines()[0]
    assert "quantization to another method" in hint_for("incompatible_arguments", cut, None, cut)


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    cases = [(line, "kernel_compile_failed") for line in COMPILER_LINES[:1]] + [(line, "package_mismatch") for line in SHIM_LINES]
    cases += [(line, "incompatible_arguments") for line in BACKEND_QUANT_LINES] + [(BLOCK_DIVISIBILITY, "parallelism_mismatch")]
    for line, cause in cases:
        assert is_notable(line), line
        result = scan_startup_log(line + "\n", ended=True)
        assert (result["outcome"], result["cause"]) == ("failed", cause), line
