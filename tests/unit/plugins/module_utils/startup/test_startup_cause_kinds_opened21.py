# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-first test split's misses (corpus split ``opened21``).

615: torch's own words when ROCm's HIP runtime sees no GPU (``RuntimeError: No HIP GPUs are available``, after torch's
``Can't initialize amdsmi`` warning): the CUDA wording's twin, driver_mismatch, with a hint for AMD's driver and devices.
616: SGLang's check after loading, ``load_weights failed because some weights are missing``: a checkpoint directory
short of shards on that host (model_unavailable), with a hint to fetch it again.
620: Mooncake's transfer engine failing to open its TCP transport's socket, ``RuntimeError: open: Address family not
supported by protocol`` (MC_FORCE_TCP binds IPv6, switched off on the nodes): distributed_init_failed, with the bind
address as the hint (the operator's fix, MC_TCP_BIND_ADDRESS).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

NO_HIP_GPU = (
    '  File "/opt/venv/lib/python3.10/site-packages/torch/cuda/__init__.py", line 410, in _lazy_init\n'
    "    torch._C._cuda_init()\n"
    "RuntimeError: No HIP GPUs are available")
SHORT_CHECKPOINT = (
    '  File "/sgl-workspace/sglang/python/sglang/srt/models/grok.py", line 1006, in load_weights\n'
    "    raise ValueError(\n"
    "ValueError: load_weights failed because some weights are missing: missing_exclude_scales={'model.layers.58.self_attn."
    "qkv_proj.weight', 'model.layers.9.post_attn_norm.weight'}")
MOONCAKE_FAMILY = (
    '  File "/app/sglang/sglang-latest/lib64/python3.12/site-packages/sglang/srt/disaggregation/mooncake/transfer_engine.py", '
    "line 181, in initialize\n"
    "    ret_value = self.engine.initialize(\n"
    "                ^^^^^^^^^^^^^^^^^^^^^^^\n"
    "RuntimeError: open: Address family not supported by protocol")


def _scan(evidence):
    return scan_startup_log("Traceback (most recent call last):\n" + evidence, ended=True)


@pytest.mark.parametrize("evidence, cause, hint_start", [
    (NO_HIP_GPU, "driver_mismatch", "torch, through ROCm's HIP runtime, sees no GPU at all"),
    (SHORT_CHECKPOINT, "model_unavailable", "The model's loader found the checkpoint short of weights it needs"),
    (MOONCAKE_FAMILY, "distributed_init_failed", "Mooncake's transfer engine (the KV transfer of PD disaggregation) could not "
                                                 "open its TCP transport's socket"),
])
def test_each_kind_gets_its_cause_and_its_hint(evidence, cause, hint_start):
    result = _scan(evidence)
    assert (result["outcome"], result["cause"]) == ("failed", cause)
    assert result["error_message"] == evidence.splitlines()[-1]
    assert result["hint"].startswith(hint_start)


@pytest.mark.parametrize("line, cause", [
    ("RuntimeError: No HIP GPUs are available", "driver_mismatch"),
    ("RuntimeError: No CUDA GPUs are available", "driver_mismatch"),
    ("ValueError: load_weights failed because some weights are missing: {'lm_head.weight'}", "model_unavailable"),
])
def test_the_decisive_lines_alone(line, cause):
    assert classify(line) == cause
    assert is_notable(line)


def test_the_cuda_wording_keeps_its_nvidia_hint():
    hint = hint_for("driver_mismatch", "RuntimeError: No CUDA GPUs are available", None, "RuntimeError: No CUDA GPUs are available")
    assert hint.startswith("torch, through the CUDA runtime, sees no GPU at all")


@pytest.mark.parametrize("text", [
    # the same words from another socket (the HTTP server on an IPv6 address): not the transfer engine's
    "OSError: [Errno 97] Address family not supported by protocol",
    # a weight SGLang skips on purpose is no missing weight
    "Skipping weight model.layers.0.mlp.experts.e_score_correction_bias: not in the checkpoint",
])
def test_what_these_kinds_must_not_take(text):
    assert classify(text) not in ("distributed_init_failed", "model_unavailable")
