# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twelfth test split's misses (corpus split ``opened12``).

Each kind is a rule in causes.py with its hint; the lines are small ones built from the wording of the corpus logs and
of other phrasings of the same family: 462 an Ascend operator without a kernel for a data type; 472 SGLang's own
argument checks refusing a value that names a missing file; 484 safetensors not knowing a checkpoint's dtype; 485
Mooncake's transfer engine failing to set up RDMA; 486 LoRA wrapping a layer that does not hold the weights it
reads. Every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for

ASCEND_DTYPE = ("EZ1001: [PID: 55172] tensor 0 not implemented for DT_UINT64, should be in dtype support list "
                "[DT_FLOAT,DT_INT32,DT_INT64,DT_FLOAT16,DT_BFLOAT16,DT_BOOL,].")
MASK_MISSING = ('  File "/sgl/python/sglang/srt/server_args.py", line 7198, in check_server_args\n'
                "    validate_double_sparsity(self)\n"
                '  File "/sgl/python/sglang/srt/layers/attention/double_sparsity/channel_mask.py", line 140, in load_channel_mask\n'
                "    raise DoubleSparsityChannelMaskMissing(\n"
                "sglang.srt.layers.attention.double_sparsity.channel_mask.DoubleSparsityChannelMaskMissing: channel mask file "
                "not found at '/models/mask.safetensors'. Set 'channel_mask_path' in --double-sparsity-config to a readable file.\n")
UNKNOWN_DTYPE = ('    File ".../safetensors/torch.py", line 456, in _getdtype\n'
                 "        return _TYPES[dtype_str]\n"
                 "    KeyError: 'F8_E8M0'\n")
MOONCAKE = "RuntimeError: Mooncake Transfer Engine initialization failed."
LORA_MOE = ('  File "/root/sglang/python/sglang/srt/lora/layers.py", line 613, in __init__\n'
            "    w13_weight=base_layer.w13_weight,\n"
            '  File "/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", line 1964, in __getattr__\n'
            "    raise AttributeError(\n"
            "AttributeError: 'FusedMoE' object has no attribute 'w13_weight'\n")


@pytest.mark.parametrize("evidence,cause", [
    (ASCEND_DTYPE, "unsupported_gpu"),
    ("INFO: dtype support list checked for aclnnCat", "unknown"),
    (MASK_MISSING, "invalid_arguments"),
    # the same missing file outside the argument checks names no setting
    (MASK_MISSING.replace("in check_server_args", "in load_model"), "unknown"),
    (UNKNOWN_DTYPE, "package_mismatch"),
    ("KeyError: 'F8_E8M0'", "unknown"),
    (MOONCAKE, "distributed_init_failed"),
    ("rdma_context.cpp:1132  GID is NULL, please check your GID index by specifying MC_GID_INDEX", "distributed_init_failed"),
    ("INFO: Mooncake Transfer Engine initialized on 4 devices", "unknown"),
    (LORA_MOE, "incompatible_arguments"),
    ("AttributeError: 'FusedMoE' object has no attribute 'w13_weight'", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    ascend = hint_for("unsupported_gpu", ASCEND_DTYPE, None, ASCEND_DTYPE)
    assert "CANN" in ascend and "torch_npu" in ascend
    mask_line = MASK_MISSING.splitlines()[-1]
    assert "Fix double_sparsity_config in sglang_server_args" in hint_for("invalid_arguments", mask_line, None, MASK_MISSING)
    dtype = hint_for("package_mismatch", "KeyError: 'F8_E8M0'", None, UNKNOWN_DTYPE)
    assert "(F8_E8M0)" in dtype and "safetensors" in dtype
    mooncake = hint_for("distributed_init_failed", MOONCAKE, None, MOONCAKE)
    assert "MC_GID_INDEX" in mooncake and "ibv_devinfo" in mooncake
    lora = hint_for("incompatible_arguments", LORA_MOE.splitlines()[-1], None, LORA_MOE)
    assert "moe_runner_backend" in lora and "lora_paths" in lora
