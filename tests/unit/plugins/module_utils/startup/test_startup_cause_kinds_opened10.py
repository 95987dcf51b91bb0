# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the tenth test split's misses (corpus split ``opened10``).

Each kind is a rule in causes.py with its hint; the lines are small ones built from the wording of the corpus logs
and of other phrasings of the same family: 408 a library built or configured without the GPU support asked of it
(UCX under NIXL, a CPU build of torch); 409 SGLang's own sentence for an architecture it has no class for; 413 SGLang's
version gate on a package it needs; 415 a kernel that takes only 16-bit data on the GPU's architecture; 416 a feature
that takes only some backends; 419 the NVIDIA kernel driver's out-of-memory. Every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

UCX_NO_CUDA = ("E0608 10:49:50.145396     474 ucx_utils.cpp:592] VRAM memory is detected as host by UCX. UCX is likely not "
               "configured with CUDA support. VRAM registration cannot proceed.")
TORCH_CPU = "AssertionError: Torch not compiled with CUDA enabled"
NO_SGLANG_CLASS = "ValueError: Qwen3_5ForCausalLM has no SGlang implementation and the"
VERSION_GATE = "Exception: sgl-kernel is installed with version 0.3.20, which is less than"
VERSION_GATE_NEXT_LINE = "the minimum required version 0.3.21. Please reinstall the latest version"
HALF_ONLY = "Exception: Capture cuda graph failed: FlashAttention on Ampere/Ada cards only\n    supports fp16 and bf16 data type\n"
BACKEND_LIST = "AssertionError: KV4 MHA expects attention_backend to be one of"
NVRM = "NVRM: Check failed: Out of memory [NV_ERR_NO_MEMORY] @ mem_desc.c:1359"


@pytest.mark.parametrize("evidence,cause", [
    (UCX_NO_CUDA, "package_mismatch"),
    (TORCH_CPU, "package_mismatch"),
    ("RuntimeError: HIP error: not built with ROCm support enabled", "package_mismatch"),
    ("WARNING: NCCL was not compiled with debug symbols", "unknown"),
    # a library that says what it was built with, and it is fine, is no refusal
    ("INFO: UCX configured with CUDA support (cuda_copy, cuda_ipc)", "unknown"),
    (NO_SGLANG_CLASS, "unsupported_model_architecture"),
    ("ValueError: MiniCPMSALAForCausalLM has no SGLang implementation", "unsupported_model_architecture"),
    ("INFO: Using the SGLang implementation of Qwen3ForCausalLM", "unknown"),
    (VERSION_GATE, "package_mismatch"),
    (VERSION_GATE + "\n" + VERSION_GATE_NEXT_LINE, "package_mismatch"),
    ("WARNING: the free disk space is less than the minimum required for the cache", "unknown"),
    ("INFO: flashinfer-python is installed with version 0.5.3", "unknown"),
    (HALF_ONLY, "unsupported_gpu"),
    ("ValueError: The fa3 backend on Hopper only", "unsupported_gpu"),
    # a dtype sentence without an architecture is not the GPU's: a setting handed the kernel another type (opened24)
    ("ValueError: this kernel only supports fp16 and bf16 data type", "incompatible_arguments"),
    (BACKEND_LIST, "incompatible_arguments"),
    ("ValueError: Hybrid attention expects --attention-backend to be one of ['fa3', 'flashinfer']", "incompatible_arguments"),
    ("INFO: the scheduler expects 8 ranks", "unknown"),
    (NVRM, "gpu_out_of_memory"),
    ("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    ucx = hint_for("package_mismatch", UCX_NO_CUDA, None, UCX_NO_CUDA)
    assert "UCX_MODULE_DIR" in ucx and "UCX_TLS" in ucx and "not configured with CUDA support" in ucx
    gate = hint_for("package_mismatch", VERSION_GATE, None, VERSION_GATE)
    assert "sgl-kernel is installed with version 0.3.20, which is less than" in gate and "sglang_install" in gate
    half = hint_for("unsupported_gpu", HALF_ONLY.splitlines()[0], "cuda_graph_capture", HALF_ONLY)
    assert "kv_cache_dtype: auto" in half and "Hopper" in half
    backends = hint_for("incompatible_arguments", BACKEND_LIST, None, BACKEND_LIST)
    assert "set attention_backend to one of them" in backends
    unbalanced = "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by"
    assert "different models" in hint_for("gpu_out_of_memory", unbalanced, "weights_loading", unbalanced)


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    cases = [(UCX_NO_CUDA, "package_mismatch"), (NO_SGLANG_CLASS, "unsupported_model_architecture"),
             (VERSION_GATE, "package_mismatch"), (BACKEND_LIST, "incompatible_arguments"), (NVRM, "gpu_out_of_memory")]
    for line, cause in cases:
        assert is_notable(line), line
        result = scan_startup_log(line + "\n", ended=True)
        assert (result["outcome"], result["cause"]) == ("failed", cause), line
