# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the seventh test split's misses (corpus split ``opened7``).

Each kind is a rule in causes.py or scanner.py with its hint; the lines are small ones built from the wording of the
corpus logs and of other logs of the same family (308 a rank's shard beyond a checkpoint tensor: torch's narrow in a
weight loader; 309 the transformers fallback finding no class; 310 a kernel package's own device assertion; 313 the
driver refusing the GPU memory sharing DeepEP sets up; 316 a JIT build tool that is missing, in the shell's words and
its exit status 127, with the build's output carried in the exception's message; 323 SGLang's own file importing a
name another SGLang module no longer has; 326 a Triton kernel handed None in the speculative draft's path; 329 a MoE
runner handed another all-to-all backend's output; and, from opened6, 287 SGLang's own helper called with the model's
``self`` and another signature), and every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 308: the MoE layer's loader takes rank 1's shard of a w2 weight whose dimension holds one shard only
NARROW = ('  File "/venv/lib/python3.12/site-packages/sglang/srt/layers/moe/fused_moe_triton/layer.py", line 501, in _load_w2\n'
          "    loaded_weight = loaded_weight.narrow(\n"
          "                    ^^^^^^^^^^^^^^^^^^^^^\n"
          "RuntimeError: start (8) + length (8) exceeds dimension size (8).\n")
# the same from a linear layer's loader, without the code line (a paste that kept the frames only)
NARROW_LOADER = ('  File "/x/sglang/srt/layers/linear.py", line 1201, in weight_loader\n'
                 "RuntimeError: start (1024) + length (1024) exceeds dimension size (1536).\n")
# 309 and vLLM's wording of the same fallback
UNREGISTERED = ("ValueError: Cannot find model module. 'DeepseekV4ForCausalLM' is not a registered model in the Transformers "
                "library (only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present in the "
                "model config's 'auto_map' (relevant if the model is custom).")
NOT_COMPATIBLE = "ValueError: The Transformers implementation of 'Qwen3NextForCausalLM' is not compatible with vLLM."
# 310: DeepGEMM's own device assertion, and CUDA's form of one in FlashInfer's headers
DEEP_GEMM_ASSERT = ("Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & 0x807fffffu) == 0\n"
                    "tvm.error.InternalError: CUDA driver error (jit_kernels/impls/smxx_layout.hpp:72): 719 (CUDA_ERROR_LAUNCH_FAILED)\n")
FLASHINFER_ASSERT = ("/venv/lib/python3.12/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh:1432: void "
                     "flashinfer::BatchPrefillKernel(): block: [0,0,0], thread: [0,0,0] Assertion `num_kv_chunks > 0` failed.")
# 313: the driver refuses DeepEP's shared-memory setup
DEEPEP_SHM = ("RuntimeError: CUDA driver exception (/data/workspace/DeepEP-main/csrc/legacy/../utils/shared_memory.hpp:69): 800 "
              "(CUDA_ERROR_NOT_PERMITTED, operation not permitted)")
# 316: tvm_ffi's build error carries ninja's output: its progress line, the failed step, the shell's words
NINJA_127 = ('  File "/venv/lib/python3.11/site-packages/tvm_ffi/cpp/extension.py", line 542, in build_ninja\n'
             '    raise RuntimeError("\\n".join(msg))\n'
             "RuntimeError: ninja exited with status 127\n"
             "stdout:\n"
             "[1/2] /opt/rocm/bin/hipcc -std=c++17 -O2 -fPIC -c /root/.cache/tvm-ffi/cuda.cu -o cuda_0.o\n"
             "FAILED: [code=127] cuda_0.o \n"
             "/bin/sh: line 1: /opt/rocm/bin/hipcc: No such file or directory\n"
             "ninja: build stopped: subcommand failed.\n")
# 323: SGLang's own file imports a name its own module no longer has
OWN_IMPORT = ('  File "python/sglang/srt/layers/cp/utils.py", line 91, in get_glm_dsa_layer_split_effective_num_layers\n'
              "    from sglang.srt.layers.dp_attention import get_attention_cp_size\n"
              "ImportError: cannot import name 'get_attention_cp_size' from 'sglang.srt.layers.dp_attention'\n")
# a framework that runs SGLang importing from it (an RL trainer's rollout): the two packages of other versions
FOREIGN_IMPORT = ('  File "/venv/lib/python3.10/site-packages/verl/workers/rollout/sglang_rollout/sglang_rollout.py", line 40, in <module>\n'
                  "    from sglang.srt.utils import get_ip\n"
                  "ImportError: cannot import name 'get_ip' from 'sglang.srt.utils'\n")
# 326: Triton's error for a None argument, in the multi-layer EAGLE draft's graph capture
DRAFT_NONE = ('  File ".../speculative/multi_layer_eagle_worker_v2.py", line 213, in init_cuda_graphs\n'
              "    MultiLayerEagleMultiStepDraftExtendCudaGraphRunner(self)\n"
              '  File ".../layers/attention/triton_ops/extend_attention.py", line 617, in extend_attention_fwd\n'
              "    _fwd_kernel[grid](\n"
              "triton.compiler.errors.CompilationError: at 142:16:\n"
              "            offs_kv_loc = tl.load(\n"
              "                kv_indices + cur_seq_kv_start_idx + start_n + offs_n,\n"
              "                ^\n"
              "AttributeError(\"'NoneType' object has no attribute 'type'\")\n")
# 287 (opened6): SGLang's model code hands its own helper the model object, with an argument too few
OWN_HELPER = ('File "/usr/local/python3.11.14/lib/python3.11/site-packages/sglang/srt/models/deepseek_v2.py", line 1453, in forward_core\n'
              "    return forward_dsa_core_npu(self, *inner_state)\n"
              "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
              "TypeError: forward_dsa_core_npu() missing 1 required positional argument: 'v'\n")
# another package's function (sgl-kernel's op), and a method of an object another package may provide: the sign stays
KERNEL_CALL = ('  File "/x/python/sglang/srt/layers/moe/topk.py", line 229, in biased_grouped_topk\n'
               "    return moe_fused_gate(\n"
               "TypeError: moe_fused_gate() takes 5 positional arguments but 7 were given\n")
METHOD_CALL = ('  File "/x/python/sglang/srt/layers/linear.py", line 420, in forward\n'
               "    output = self.quant_method.apply(self, input_, bias)\n"
               "TypeError: apply() missing 1 required positional argument: 'x'\n")
# 329: the flashinfer_mxfp4 runner reads what DeepEP's low-latency dispatch does not hand it
MOE_OUTPUT = "AttributeError: 'DeepEPLLDispatchOutput' object has no attribute 'topk_output'"


@pytest.mark.parametrize("evidence, cause", [
    (NARROW, "parallelism_mismatch"),
    (NARROW_LOADER, "parallelism_mismatch"),
    ("RuntimeError: start (8) + length (8) exceeds dimension size (8).", "parallelism_mismatch"),  # a sign in a traceback
    ("RuntimeError: shape '[-1, 8]' is invalid for input of size 12", "unknown"),
    (UNREGISTERED, "unsupported_model_architecture"),
    (NOT_COMPATIBLE, "unsupported_model_architecture"),
    ("[2026-06-01 10:00:00] Using the Transformers implementation of Qwen3ForCausalLM.", "unknown"),
    (DEEP_GEMM_ASSERT, "package_mismatch"),
    (FLASHINFER_ASSERT, "package_mismatch"),
    # torch's own device assertion (an index out of range) is no kernel package of another version
    ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [0,0,0], thread: [0,0,0] Assertion "
     "`-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.", "unknown"),
    # DeepGEMM's host-side check of a shape (a header of its JIT dispatcher, not a device kernel): not this kind
    ("Assertion failed: csrc/jit_kernels/impls/sm90_fp8_gemm_1d2d.hpp:45, condition: n % 64 == 0", "unknown"),
    (DEEPEP_SHM, "p2p_unsupported"),
    ("Exception: Capture cuda graph failed: operation not permitted when stream is capturing", "cuda_graph_capture_failed"),
    ("RuntimeError: CUDA driver error: 800 (CUDA_ERROR_NOT_PERMITTED)", "unknown"),  # at no source that shares GPU memory
    (NINJA_127, "jit_tool_missing"),
    ("/bin/sh: 1: nvcc: not found", "jit_tool_missing"),
    ("bash: line 1: nvcc: command not found", "jit_tool_missing"),
    ("which: no nvcc in (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin)", "jit_tool_missing"),
    ("c++: fatal error: cannot execute 'cc1plus': execvp: No such file or directory", "jit_tool_missing"),
    ("subprocess.CalledProcessError: Command 'nvcc --version' returned non-zero exit status 127.", "jit_tool_missing"),
    ("/usr/bin/env: \u2018ninja\u2019: No such file or directory", "jit_tool_missing"),  # env's quotes around the name
    ("torch._inductor.exc.InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')",
     "jit_tool_missing"),
    # a build that ran and failed, and a tool a log names as skipped, are no missing JIT tool
    ("FAILED: [code=1] cuda_0.o\nninja: build stopped: subcommand failed.", "kernel_compile_failed"),
    ("[2026-03-28 07:40:06] numactl command not found, skipping NUMA node configuration for GPU.", "unknown"),
    (OWN_IMPORT, "unknown"),
    (FOREIGN_IMPORT, "package_mismatch"),
    ("ImportError: cannot import name 'dynamic_per_tensor_quant' from 'aiter'", "package_mismatch"),
    (DRAFT_NONE, "speculative_decoding_error"),
    # a compile error of a kernel that is no None argument stays a kernel that did not compile, draft or not
    ('  File ".../speculative/eagle_worker.py", line 120, in init_cuda_graphs\n'
     "triton.compiler.errors.CompilationError: at 10:4: unsupported tensor index\n", "kernel_compile_failed"),
    (OWN_HELPER, "unknown"),
    (KERNEL_CALL, "package_mismatch"),
    (METHOD_CALL, "package_mismatch"),
    (MOE_OUTPUT, "incompatible_arguments"),
    ("AttributeError: 'DeepEPLLOutput' object has no attribute 'topk_ids'", "incompatible_arguments"),  # the older class name
    ('  File "/x/sglang/srt/layers/moe/moe_runner/triton.py", line 120, in run\n'
     "    assert DispatchOutputChecker.format_is_standard(dispatch_output)\n"
     "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "AssertionError\n", "incompatible_arguments"),
    ("AttributeError: 'DeepEPBuffer' object has no attribute 'low_latency_mode'", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_a_statement_of_no_cause_leaves_the_rest_of_the_evidence_to_the_rules():
    """SGLang's files disagreeing with each other name no cause, but another failure beside them in the same evidence
    (the other tracebacks of a tier are one text) still does."""
    assert classify(OWN_IMPORT + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n") == "gpu_out_of_memory"
    assert classify(OWN_HELPER + "RuntimeError: CUDA error: an illegal memory access was encountered\n") == "illegal_memory_access"


def test_the_kinds_hints_say_what_to_do():
    narrow = hint_for("parallelism_mismatch", NARROW.splitlines()[-1], "weights_loading", NARROW)
    assert "tp_size" in narrow and "ep_size" in narrow
    assert "DeepseekV4ForCausalLM" in hint_for("unsupported_model_architecture", UNREGISTERED, None, UNREGISTERED)
    deep_gemm = hint_for("package_mismatch", DEEP_GEMM_ASSERT.splitlines()[0], None, DEEP_GEMM_ASSERT)
    assert "deep_gemm" in deep_gemm and "pins" in deep_gemm
    shm = hint_for("p2p_unsupported", DEEPEP_SHM, None, DEEPEP_SHM)
    assert "--ipc=host" in shm and "moe_a2a_backend" in shm and "IMEX" in shm
    rocm = hint_for("jit_tool_missing", "RuntimeError: ninja exited with status 127", None, NINJA_127)
    assert "/opt/rocm" in rocm and "nvcc" in rocm
    nvcc = hint_for("jit_tool_missing", "bash: line 1: nvcc: command not found", None, "bash: line 1: nvcc: command not found")
    assert "needs nvcc" in nvcc and "PATH" in nvcc
    env = "/usr/bin/env: \u2018ninja\u2019: No such file or directory"
    assert "pip install ninja" in hint_for("jit_tool_missing", env, None, env)
    own = hint_for("unknown", OWN_IMPORT.splitlines()[-1], None, OWN_IMPORT)
    assert "SGLang's own files" in own and "sglang_install_version" in own
    draft = hint_for("speculative_decoding_error", "triton.compiler.errors.CompilationError: at 142:16:", None, DRAFT_NONE)
    assert "attention_backend" in draft and "speculative_*" in draft
    helper = hint_for("unknown", OWN_HELPER.splitlines()[-1], None, OWN_HELPER)
    assert "helper of its own" in helper and "sglang_install_version" in helper
    moe = hint_for("incompatible_arguments", MOE_OUTPUT, None, MOE_OUTPUT)
    assert "moe_runner_backend" in moe and "moe_a2a_backend" in moe and "DeepEPLLDispatchOutput" in moe


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    for line in (DEEPEP_SHM, UNREGISTERED, MOE_OUTPUT, DEEP_GEMM_ASSERT.splitlines()[0], "bash: line 1: nvcc: command not found"):
        assert is_notable(line), line
    # a bare narrow message outside a traceback is only a sign: no evidence alone
    assert not is_notable("start (8) + length (8) exceeds dimension size (8).")
    for text, cause in ((DEEPEP_SHM, "p2p_unsupported"), (MOE_OUTPUT, "incompatible_arguments"), (DEEP_GEMM_ASSERT, "package_mismatch")):
        result = scan_startup_log(text + "\n", ended=True)
        assert (result["outcome"], result["cause"]) == ("failed", cause), text


def test_a_build_tools_output_in_an_exceptions_message_stays_in_the_traceback():
    """ninja's "[1/2] ..." progress line is no log record: the build's output, with the shell's words about the missing
    tool, stays part of the exception's message (and the message shown is the exception's own line)."""
    text = "[2026-07-04 20:09:29] Scheduler hit an exception: Traceback (most recent call last):\n" + NINJA_127
    result = scan_startup_log(text, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "jit_tool_missing")
    assert result["error_message"] == "RuntimeError: ninja exited with status 127"
    assert "/bin/sh: line 1: /opt/rocm/bin/hipcc: No such file or directory" in result["traceback"]
    assert "ninja: build stopped: subcommand failed." in result["traceback"]


def test_a_bracketed_record_still_ends_an_exceptions_message():
    text = ('  File "/x/sglang/srt/managers/scheduler.py", line 10, in run_scheduler_process\n'
            "RuntimeError: boom\n"
            "[2026-07-04 20:09:29] Received sigquit from a child process. It usually means the child failed.\n")
    result = scan_startup_log(text, ended=True)
    assert "sigquit" not in result["traceback"]
