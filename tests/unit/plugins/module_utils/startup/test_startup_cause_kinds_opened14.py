# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the fourteenth test split's misses (corpus split ``opened14``).

Each kind is a rule in causes.py with its hint; the lines are small ones built from the wording of the corpus logs and
of other phrasings of the same family: 515 a bare assertion on the GPU's architecture; 516 a LoRA target module that
reaches a layer LoRA has no wrapper for; 518 torch seeing no GPU at all. Every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for

ARCH_ASSERT = ('File "sglang/srt/layers/quantization/fp8.py", line 788, in __init__\n'
               "  assert is_sm100_supported() or is_sm90_supported()\n"
               "AssertionError\n")
LORA_LAYER = "Exception: No corresponding LoRA layer supported for <class 'sglang.srt.layers.linear.ReplicatedLinear'>."
NO_ACCELERATOR = "RuntimeError: No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) or platform plugin is available."


@pytest.mark.parametrize("evidence,cause", [
    (ARCH_ASSERT, "unsupported_gpu"),
    # the same check as a Python 3.11+ traceback prints it (a caret line under the assertion)
    (ARCH_ASSERT.replace("()\n", "()\n  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n", 1), "unsupported_gpu"),
    ("  assert get_device_capability()[0] >= 9\nAssertionError\n", "unsupported_gpu"),
    # an assertion with its own message is the message's to say, and a capability check outside an assertion is none
    ("  assert is_sm90_supported(), 'x'\nAssertionError: fp8 block scaling needs a newer torch\n", "unknown"),
    ("INFO: is_sm100_supported() returned False; using the Triton MoE kernels", "unknown"),
    (LORA_LAYER, "incompatible_arguments"),
    ("INFO: LoRA layer supported for <class 'QKVParallelLinear'>", "unknown"),
    (NO_ACCELERATOR, "driver_mismatch"),
    ("RuntimeError: No CUDA GPUs are available", "driver_mismatch"),
    # the same words about one device of several, or a warning that names what was found, are no missing GPU
    ("WARNING: No accelerator plugin for MUSA is installed; using CUDA", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    arch = hint_for("unsupported_gpu", "AssertionError", None, ARCH_ASSERT)
    assert arch.startswith("A code path asserts that the GPU is one of the architectures it names") and "SM120" in arch
    lora = hint_for("incompatible_arguments", LORA_LAYER, None, LORA_LAYER)
    assert lora.startswith("The LoRA target modules reach a layer SGLang has no LoRA wrapper for (ReplicatedLinear;")
    assert "lora_target_modules: [q_proj, k_proj, v_proj, o_proj]" in lora
    seen = hint_for("driver_mismatch", NO_ACCELERATOR, None, NO_ACCELERATOR)
    assert seen.startswith("torch, through the CUDA runtime, sees no GPU at all") and "CUDA_VISIBLE_DEVICES" in seen
    # error 802 keeps its own hint (the fabric manager), though SGLang's line about no accelerator follows it
    ready = "cudaGetDeviceCount() ... Error 802: system not yet initialized\n" + NO_ACCELERATOR
    assert "fabric manager" in hint_for("driver_mismatch", NO_ACCELERATOR, None, ready)
