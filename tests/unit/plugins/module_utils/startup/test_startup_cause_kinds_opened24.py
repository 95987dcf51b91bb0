# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-fourth test split's misses (corpus split ``opened24``).

645: ``Exception: Capture cuda graph failed: FlashAttention only support fp16 and bf16 data type``: a kernel that takes
16-bit data only, met with an fp8 KV cache (``--kv-cache-dtype fp8_e5m2`` with a backend that has no fp8 path). The
capture is only where the kernel ran first, so the capture (a SURFACE rule) is refined to incompatible_arguments, with
a hint on kv_cache_dtype and the attention backend. Where the message names the GPU's architecture ("on Ampere/Ada
cards only supports fp16 and bf16", 382) it stays unsupported_gpu.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

CAPTURE = (
    "[2026-05-24 20:21:40] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/root/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 390, in __init__\n'
    "    self.capture()\n"
    '  File "/root/infllm_v2/flash_attn_interface.py", line 80, in varlen_fwd_stage1\n'
    "    out = _C.varlen_fwd_stage1(q, k, v)\n"
    "RuntimeError: FlashAttention only support fp16 and bf16 data type\n"
    "\n"
    "During handling of the above exception, another exception occurred:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "/root/sglang/python/sglang/srt/managers/scheduler.py", line 2900, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)\n"
    "Exception: Capture cuda graph failed: FlashAttention only support fp16 and bf16 data type\n")


def test_a_half_only_kernel_met_during_the_capture_is_incompatible_arguments():
    result = scan_startup_log(CAPTURE, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "incompatible_arguments")
    assert result["error_message"] == "Exception: Capture cuda graph failed: FlashAttention only support fp16 and bf16 data type"
    assert result["hint"].startswith("A kernel on this path takes 16-bit data only (error_message) and was handed another")
    assert "kv_cache_dtype: auto" in result["hint"]


@pytest.mark.parametrize("text, cause", [
    ("RuntimeError: FlashAttention only support fp16 and bf16 data type", "incompatible_arguments"),
    ("RuntimeError: this kernel only supports bfloat16 or float16 dtypes", "incompatible_arguments"),
    ("RuntimeError: FlashAttention on Ampere/Ada cards only supports fp16 and bf16 data type", "unsupported_gpu"),
    ("Exception: Capture cuda graph failed: CUDA error: operation not permitted when stream is capturing",
     "cuda_graph_capture_failed"),
    ("RuntimeError: only supports fp16 inputs", "unknown"),
])
def test_what_the_kind_takes_and_what_it_leaves(text, cause):
    assert classify(text) == cause
