# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Families of SGLang's own refusals, read from its source rather than from a log someone posted.

Every held-out split so far lost most of its misses to a failure worded in a way no earlier log had. SGLang's own
``raise`` and ``assert`` messages are where most of those words come from, so the families below were written from
the messages of a real SGLang release (its argument checks, its memory pools, its parallel layout checks), each with a
line it must leave to a more specific rule or to nobody:

- an argument check that names an option in the CLI's dashed form with a refusal ("--x does not support y", "z
  requires --w", "--v must be a JSON object"): incompatible_arguments, only as a sign (a HINT-strength rule), so that a
  warning with the same words is not kept as evidence and every specific rule still wins;
- a feature "supported only on" an architecture (the word order the earlier rule did not take): unsupported_gpu;
- a layout check against the attention (or MoE) TP size: parallelism_mismatch;
- no room for a hybrid model's state cache ("Not enough space for mamba cache"): gpu_out_of_memory with a hint that
  names the settings of that cache.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log


@pytest.mark.parametrize("text, cause", [
    ("ValueError: --enable-kv-cache-sharding does not support session radix cache yet.", "incompatible_arguments"),
    ("ValueError: DeepSeek V3.2 prefill CP does not support --cp-strategy zigzag; use interleave.", "incompatible_arguments"),
    ("AssertionError: --dsv4-attn-backend trtllm requires chunked prefill (--chunked-prefill-size > 0).",
     "incompatible_arguments"),
    ("ValueError: --unified-cache-external-linker-config must be a JSON object.", "incompatible_arguments"),
    ("AssertionError: --elastic-ep-initial-size cannot exceed the current EP size (initial=4, current=8).",
     "incompatible_arguments"),
    ("AssertionError: --enable-unified-memory is not yet compatible with --enable-lmcache", "incompatible_arguments"),
    # a suggestion to use an option is no refusal
    ("ValueError: Please use --disable-cuda-graph to debug this", "unknown"),
    # the specific rules come first: an OOM that suggests an option stays an OOM
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", "gpu_out_of_memory"),
    ("ValueError: --quantization nvfp4_online is supported only on NVIDIA Blackwell SM100/SM103 GPUs.", "unsupported_gpu"),
    ("ValueError: FP8 GEMM is only available on Hopper", "unsupported_gpu"),
    ("AssertionError: hidden_size 5120 not divisible by attn tp 3", "parallelism_mismatch"),
    ("AssertionError: Not enough space for mamba cache, try to increase --mamba-full-memory-ratio or "
     "--max-mamba-cache-size. mid=3", "gpu_out_of_memory"),
    ("AssertionError: Not enough space for the request queue", "unknown"),
])
def test_what_each_family_takes_and_what_it_leaves(text, cause):
    assert classify(text) == cause


def test_an_option_refusal_is_a_sign_not_evidence_outside_a_traceback():
    """A warning that says the same words (SGLang turns a feature off and goes on) is not kept as evidence."""
    warning = "[2026-01-01 00:00:00] WARNING server_args.py:1234: --enable-foo requires bar; disabling it"
    assert classify(warning) == "incompatible_arguments"
    assert not is_notable(warning)


def test_a_lone_option_refusal_fails_the_start_as_incompatible_arguments_naming_the_option():
    result = scan_startup_log("ValueError: --enable-kv-cache-sharding does not support session radix cache yet.\n",
                              ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "incompatible_arguments")
    assert result["hint"].startswith("These settings contradict each other: enable_kv_cache_sharding (error_message names")


def test_a_state_cache_without_room_gets_the_hint_that_names_its_settings():
    message = "AssertionError: Not enough space for mamba cache, try to increase --mamba-full-memory-ratio"
    hint = hint_for("gpu_out_of_memory", message, "kv_cache_allocated", message)
    assert hint.startswith("The state cache of this hybrid (linear-attention) model got too little")
    assert "mamba_full_memory_ratio" in hint and "max_mamba_cache_size" in hint
