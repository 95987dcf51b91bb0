# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the thirteenth test split's misses (corpus split ``opened13``).

Each kind is a rule in causes.py with its hint; the lines are small ones built from the wording of the corpus logs and
of other phrasings of the same family: 492 a page size one component needs and another changed; 493 an Intel GPU's
out of device memory; 494 a non-CUDA device's own forward path refusing what the model needs; 502 Gloo told to use an
interface without an address on this node; 506 a feature that says it does not work with a setting it names; 507 a
value SGLang's own lookup does not know; 509 an empty argument handed to the parser. Every kind has a line it must not
take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for

PAGE_SIZE = "AssertionError: Page size must be 1 for MambaRadixCache v1, got 128"
XPU_OOM = "RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)"
XPU_PATH = ('File "sglang/srt/layers/quantization/unquant.py", line 576, in forward_xpu\n'
            "    assert moe_runner_config.activation in [\n"
            "AssertionError: activation = relu2 is not supported.\n")
GLOO_IFACE = "RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr.\nUnable to find address for: manage0\n"
NOT_COMPATIBLE = ("ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache when "
                  "using --mamba-scheduler-strategy no_buffer.")
UNKNOWN_ALGORITHM = "ValueError: Unknown speculative algorithm name: MTP"


@pytest.mark.parametrize("evidence,cause", [
    (PAGE_SIZE, "incompatible_arguments"),
    ("INFO: page size must be a power of two", "unknown"),
    (XPU_OOM, "gpu_out_of_memory"),
    ("ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "gpu_out_of_memory"),
    (XPU_PATH, "unsupported_gpu"),
    # the same assertion in the CUDA path is no other device's gap
    (XPU_PATH.replace("forward_xpu", "forward_cuda"), "unknown"),
    (GLOO_IFACE, "distributed_init_failed"),
    ("INFO: using address 10.0.0.5 for interface manage0", "unknown"),
    (NOT_COMPATIBLE, "incompatible_arguments"),
    # a "not compatible" that names no setting is not two settings
    ("WARNING: this tokenizer is not compatible with fast mode; using the slow one", "unknown"),
    (UNKNOWN_ALGORITHM, "invalid_arguments"),
    ("ValueError: Unknown attention backend: fa9", "invalid_arguments"),
    ("WARNING: unknown field in config.json: rope_theta2", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    gloo = hint_for("distributed_init_failed", GLOO_IFACE.splitlines()[0], None, GLOO_IFACE)
    assert "GLOO_SOCKET_IFNAME" in gloo and "ip -br addr" in gloo
    compatible = hint_for("incompatible_arguments", NOT_COMPATIBLE, None, NOT_COMPATIBLE)
    assert "mamba_scheduler_strategy" in compatible
    algorithm = hint_for("invalid_arguments", UNKNOWN_ALGORITHM, None, UNKNOWN_ALGORITHM)
    assert algorithm.startswith("MTP is not a speculative algorithm the installed SGLang knows") and "NEXTN" in algorithm
    empty = "sglang serve: error: unrecognized arguments: "
    assert "empty argument" in hint_for("invalid_arguments", empty, None, empty)
