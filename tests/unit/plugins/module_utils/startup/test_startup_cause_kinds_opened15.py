# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the fifteenth test split's misses (corpus split ``opened15``).

Each kind is a rule in causes.py with its hint (or, for a shape, a reading in lines.py); the lines are small ones built
from the wording of the corpus logs and of other phrasings of the same family: 531 a quantized kernel's check that a
rank's share of a layer is a whole number of scale groups; 535 a harness that stamps each relayed line with an untagged
time, and code walking the layers that finds one without attention; 537 a TMA descriptor the driver refuses as not
supported. Every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import parse_line
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

SCALE_GROUPS = ("RuntimeError: Runtime check failed at sglang/jit_kernel/csrc/gemm/marlin_moe/moe_wna16_marlin.cuh:963: "
                "size_k = 704, is not divisible by b_scales.size(1) = 5")
NO_ATTENTION = "ValueError: No attention attribute in layer type <class 'mlx_lm.models.qwen3_next.Qwen3NextDecoderLayer'>"
NO_TMA = "Error: Failed to initialize the TMA descriptor 801"


@pytest.mark.parametrize("evidence,cause", [
    (SCALE_GROUPS, "parallelism_mismatch"),
    # the same kernel's other checks, without the comma, and a group size named as such
    ("RuntimeError: size_k = 2752 is not divisible by group_size = 128", "parallelism_mismatch"),
    ("RuntimeError: size_n = 2816 is not divisible by tile_n_size = 64", "parallelism_mismatch"),
    # a divisibility without numbers states nothing that can be checked
    ("size_k is not divisible by b_scales on this layer", "unknown"),
    (NO_ATTENTION, "unsupported_model_architecture"),
    ("ValueError: No self_attn attribute in layer type <class 'Qwen3NextDecoderLayer'>", "unsupported_model_architecture"),
    # the words without the layer's class are not this kind
    ("INFO: No attention attribute in layer type list; using defaults", "unknown"),
    (NO_TMA, "unsupported_gpu"),
    ("RuntimeError: cuTensorMapEncodeTiled failed: CUDA_ERROR_NOT_SUPPORTED", "unsupported_gpu"),
    # the same descriptor refused for its arguments is a shape (536: a long-context request on a B200), not the GPU
    ("Error: Failed to initialize the TMA descriptor due to invalid argument", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    groups = hint_for("parallelism_mismatch", SCALE_GROUPS, None, SCALE_GROUPS)
    assert groups.startswith("A quantized layer's share on each rank is not a whole number of its quantization groups "
                             "(704 is not divisible by 5): ")
    assert "ep_size equal to tp_size" in groups and "smaller group size" in groups
    # a divisibility outside a quantized kernel keeps the layout hint
    heads = "AssertionError: 28 is not divisible by 8"
    assert hint_for("parallelism_mismatch", heads, None, heads).startswith(
        "The parallel layout does not fit the model (28 is not divisible by 8): ")
    layer = hint_for("unsupported_model_architecture", NO_ATTENTION, None, NO_ATTENTION)
    assert layer.startswith("Code that walks the model's layers (a cache or runner feature) expects an attention attribute in "
                            "each, and this model's Qwen3NextDecoderLayer has none")
    tma = hint_for("unsupported_gpu", NO_TMA, None, NO_TMA)
    assert tma.startswith("A kernel in use builds a TMA descriptor (the Tensor Memory Accelerator of Hopper, sm_90, and newer)")
    assert "attention_backend" in tma and "flashinfer" in tma


@pytest.mark.parametrize("line,record,body", [
    # a harness's own time before an indented line it relays: the relayed line, indentation kept
    ("[06:31:47]   ValueError: No attention attribute", False, "  ValueError: No attention attribute"),
    ("[06:31:47] \traise ValueError(msg)", False, "\traise ValueError(msg)"),
    # SGLang's own untagged and tagged records stay records (one space after the bracket is the prefix's)
    ("[01:38:47] Attention backend not specified. Use aiter backend by default.", True,
     "Attention backend not specified. Use aiter backend by default."),
    ("[2025-06-23 15:37:01 TP1]   Load weight begin", True, "  Load weight begin"),
])
def test_an_untagged_time_before_an_indented_line_is_a_relay(line, record, body):
    info = parse_line(line)
    assert (info.record, info.body) == (record, body)


def test_a_harness_relayed_tail_gives_its_exception():
    log = ("[06:21:44] Launching server...\n"
           "[06:31:47] ERROR: Server did not start\n"
           '[06:31:47]       raise ValueError(f"No attention attribute in layer type {type(sample)}")\n'
           "[06:31:47]   " + NO_ATTENTION + "\n"
           "[06:31:47] Killing all sglang/bench processes...\n")
    result = scan_startup_log(log, ended=True)
    assert (result["outcome"], result["cause"], result["error_message"]) == ("failed", "unsupported_model_architecture", NO_ATTENTION)


def test_a_dump_of_fields_after_an_error_leaves_the_error_as_the_message():
    """536's shape: FlashInfer's error line, then the descriptor's fields, each of which reads like ``Name: text``."""
    dump = ("Error: Failed to initialize the TMA descriptor due to invalid argument\n"
            "tmaFormat: 9 dim: 4 gmem: 0x7b4cc0000000\n"
            "Shape: 192 131072 128 1 48\n"
            "Stride: 49152 384 2305843007066210304 2497\n")
    assert scan_startup_log(dump, ended=True)["error_message"] == "Error: Failed to initialize the TMA descriptor due to invalid argument"
    # a later exception named as one is newer evidence, and replaces it
    later = dump + "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    result = scan_startup_log(later, ended=True)
    assert (result["error_message"], result["cause"]) == ("RuntimeError: CUDA error: an illegal memory access was encountered",
                                                          "illegal_memory_access")
    # without an error before them, such a line is still the last word
    assert scan_startup_log("Stride: 49152 384\n", ended=True)["error_message"] == "Stride: 49152 384"
