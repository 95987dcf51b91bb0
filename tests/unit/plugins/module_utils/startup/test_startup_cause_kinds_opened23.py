# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-third test split's misses (corpus split ``opened23``).

630-632: a KV transfer engine of PD disaggregation that cannot register the KV cache's GPU memory with the NIC
(SGLang's ``Mooncake memory registration failed.``, NIXL's ``registerMem: registration failed`` and its GPUNetIO
backend's ``Can't register memory for unknown device``): the nodes' KV transfer cannot be set up
(distributed_init_failed), with a hint on GPUDirect RDMA, pinned memory and expandable segments. SGLang's own line
decides even when the traceback after it was cut (630).

634: an offline engine given ``device='cuda:7'``: SGLang's distributed set-up picks a backend for device types only and
meets the value with its variable unset (``UnboundLocalError: local variable 'backend' ...``): a value SGLang does not
take (invalid_arguments), with a hint to choose GPUs by CUDA_VISIBLE_DEVICES or base_gpu_id.

635: ``Prequant BitsAndBytes models with TP is not supported.``: a feature that does not run under a kind of
parallelism (incompatible_arguments), with a hint to split the model the way the message says.

640: ``The DSV4 SWA pool cap ... leaves no room for the full KV pool``: SGLang's refusal when the memory left holds no
KV pool, in a newer phrasing of the family (gpu_out_of_memory with the KV-room hint: raise mem_fraction_static).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# SGLang's line, then a traceback cut by the paste before its exception line (630's shape).
MOONCAKE_CUT = (
    "E0605 10:48:27.885119 10136 rdma_context.cpp:203] Failed to register memory 0x7b375b400000: Invalid argument [22]\n"
    "[2025-06-05 10:48:27 TP7] Mooncake memory registration failed.\n"
    "[2025-06-05 10:48:27 TP7] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2297, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, pp_rank, dp_rank)\n")

NIXL = (
    "E0000 00:00:1762238119.118504 2368741 gpunetio_backend.cpp:1105] Can't register memory for unknown device 3\n"
    "E1104 06:35:19.118512 2368741 nixl_agent.cpp:473] registerMem: registration failed for the specified or all "
    "potential backends\n")

DEVICE_WITH_INDEX = (
    "[2025-02-13 19:00:01] server_args=ServerArgs(model_path='Qwen/Qwen2-7B', device='cuda:7', tp_size=1)\n"
    "[2025-02-13 19:00:05] Init torch distributed begin.\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/site-packages/sglang/srt/model_executor/model_runner.py", line 274, in '
    "init_torch_distributed\n"
    "    init_distributed_environment(\n"
    "UnboundLocalError: local variable 'backend' referenced before assignment\n")

TP_UNSUPPORTED = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/site-packages/sglang/srt/model_loader/loader.py", line 1040, in _load_weights\n'
    '    raise ValueError("Prequant BitsAndBytes models with TP is not supported."\n'
    "ValueError: Prequant BitsAndBytes models with TP is not supported.Please try with PP.\n")

NO_ROOM = (
    "RuntimeError: The DSV4 SWA pool cap (10752 tokens, 0.23 GB) leaves no room for the full KV pool within the\n"
    "available 0.14 GB. Reduce --max-running-requests, lower --swa-prefix-tails or SGLANG_SWA_EVICTION_INTERVAL,\n"
    "or increase --mem-fraction-static.\n")


@pytest.mark.parametrize("text, message", [
    (MOONCAKE_CUT, "Mooncake memory registration failed."),
    (NIXL, "E0000 00:00:1762238119.118504 2368741 gpunetio_backend.cpp:1105] Can't register memory for unknown device 3"),
], ids=["mooncake-cut-traceback", "nixl-gpunetio"])
def test_a_kv_transfer_engine_that_cannot_register_gpu_memory_is_distributed_init_failed(text, message):
    result = scan_startup_log(text, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "distributed_init_failed")
    assert result["error_message"] == message
    assert result["hint"].startswith("The KV transfer engine of PD disaggregation (Mooncake or NIXL) could not register")
    assert "expandable_segments" in result["hint"] and "nvidia_peermem" in result["hint"]


def test_a_device_with_an_index_is_a_value_sglang_does_not_take():
    result = scan_startup_log(DEVICE_WITH_INDEX, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "invalid_arguments")
    assert result["error_message"] == "UnboundLocalError: local variable 'backend' referenced before assignment"
    assert result["hint"].startswith("SGLang's device takes a device type (cuda, xpu, npu, hpu, cpu), not one device")
    assert "base_gpu_id" in result["hint"]


def test_the_device_hint_names_the_value_when_the_evidence_holds_it():
    hint = hint_for("invalid_arguments", "UnboundLocalError: local variable 'backend' referenced before assignment",
                    "parallel_init", "ServerArgs(device='cuda:7')")
    assert hint.startswith("SGLang's device is cuda:7, but it takes a device type")


def test_a_feature_that_does_not_run_under_a_kind_of_parallelism_is_incompatible_arguments():
    result = scan_startup_log(TP_UNSUPPORTED, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "incompatible_arguments")
    assert result["hint"].startswith("The model or a setting (its quantization, a feature) does not run under the kind of "
                                     "parallelism")


def test_no_room_for_the_kv_pool_is_out_of_memory_with_the_kv_room_hint():
    result = scan_startup_log(NO_ROOM, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "gpu_out_of_memory")
    assert result["hint"].startswith("The weights fit but no GPU memory is left for the KV cache: raise mem_fraction_static")


@pytest.mark.parametrize("text, cause", [
    ("RuntimeError: Mooncake memory registration failed.", "distributed_init_failed"),
    ("E1104 06:35:19 nixl_agent.cpp:473] registerMem: registration failed for the specified or all potential backends",
     "distributed_init_failed"),
    # Mooncake's own glog line alone: a ready server can print hundreds of them (629), so it decides nothing
    ("E0226 15:46:14.976167 rdma_context.cpp:265] Failed to register memory 0x7f00: Bad address [14]", "unknown"),
    ("UnboundLocalError: cannot access local variable 'backend' where it is not associated with a value",
     "invalid_arguments"),
    ("UnboundLocalError: local variable 'model' referenced before assignment", "unknown"),
    ("ValueError: LoRA with tensor parallelism > 1 is not supported", "incompatible_arguments"),
    ("ValueError: Prequant BitsAndBytes models with PP are not supported", "incompatible_arguments"),
    ("ValueError: This model is not supported", "unknown"),
    ("RuntimeError: leaves no room for the KV cache", "gpu_out_of_memory"),
    ("RuntimeError: the SWA pool leaves no room for the prefix tails", "unknown"),
])
def test_what_each_kind_takes_and_what_it_leaves(text, cause):
    assert classify(text) == cause
