# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the eleventh test split's misses (corpus split ``opened11``).

Each kind is a rule in causes.py or scanner.py with its hint; the lines are small ones built from the wording of the
corpus logs and of other phrasings of the same family: 438 and 451 a device without a kernel for an op or format
(an Ascend SoC's op binaries, "not available on your device"); 441 DeepEP's ranks timing out at a dispatch; 442 a
CUDA IPC handle that cannot be opened (WSL2); 447 transformers not knowing the model type, seen from SGLang's config
read; 450 a crash in NCCL's shared-memory transport setup; 455 a batch line with requests queued, which only clients
make. Every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

ASCEND_OP = ("RuntimeError: call aclnnDispatchLayout failed, detail: AclNN_Parameter_Error(EZ1001): Get regInfo failed, "
             "The bin of socVersion [ascend910b] does not support opType [DispatchLayout].")
NOT_ON_DEVICE = "AssertionError: MXFP4 is not available on your device"
DEEPEP_TIMEOUT = "RuntimeError: DeepEP error: CPU recv timeout"
CUDA_IPC = "Failed to deserialize from cached pooled CUDA IPC handle (CUDA error: invalid resource handle"
GET_CONFIG_KEYERROR = ('File ".../sglang/srt/configs/model_config.py", line 127, in __init__\n'
                       "    self.hf_config = get_config(\n"
                       "KeyError: 'gemma4'\n")
NCCL_SHM = ("[VM-32-28:10362:0:10362] Caught signal 7 (Bus error: object-specific hardware error)\n"
            "- ncclAtomicRefCountDecrement<int>()\n"
            "- shmSendConnect() in /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/transport/shm.cc:144\n"
            "- ncclTransportP2pSetup()\n")


@pytest.mark.parametrize("evidence,cause", [
    (ASCEND_OP, "unsupported_gpu"),
    (NOT_ON_DEVICE, "unsupported_gpu"),
    ("ValueError: FP8 block quantization is not supported on this GPU", "unsupported_gpu"),
    # a model or a setting that is not available is not the device's
    ("ValueError: the chat template is not available on your model", "unknown"),
    (DEEPEP_TIMEOUT, "distributed_init_failed"),
    ("DeepEP timeout check failed: rank = 1, thread = 0, value = 1024", "distributed_init_failed"),
    ("INFO: DeepEP buffer ready (timeout 100 s)", "unknown"),
    (CUDA_IPC, "p2p_unsupported"),
    ("INFO: using CUDA IPC handle pool for multimodal features", "unknown"),
    (GET_CONFIG_KEYERROR, "unsupported_model_architecture"),
    # a KeyError elsewhere is no model type
    ('File ".../sglang/srt/managers/scheduler.py", line 10, in process\n    x = table[key]\nKeyError: \'gemma4\'\n', "unknown"),
    (NCCL_SHM, "nccl_error"),
    ("[VM-32-28:10362] Caught signal 7 (Bus error: object-specific hardware error)", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    ipc = hint_for("p2p_unsupported", CUDA_IPC, None, CUDA_IPC)
    assert "mm_feature_transport: cpu" in ipc and "WSL2" in ipc
    shm = hint_for("nccl_error", NCCL_SHM.splitlines()[2], None, NCCL_SHM)
    assert "NCCL_SHM_DISABLE=1" in shm and "/dev/shm" in shm
    gemma = hint_for("unsupported_model_architecture", "KeyError: 'gemma4'", None, GET_CONFIG_KEYERROR)
    assert "'gemma4'" in gemma and "transformers" in gemma
    deepep = hint_for("distributed_init_failed", DEEPEP_TIMEOUT, None, DEEPEP_TIMEOUT)
    assert "DeepEP" in deepep and "moe_a2a_backend" in deepep


def test_a_batch_with_requests_queued_is_serving_and_its_traceback_a_runtime_error():
    """The warmup is one request, taken out of the queue by the batch that runs it: a batch line with requests still
    queued shows clients, so a traceback after it is a runtime error, even with no ready line in the excerpt."""
    text = ("[2026-09-03 23:03:16 TP0] Prefill batch, #new-seq: 1, #new-token: 4352, #cached-token: 0, #queue-req: 2\n"
            "[2026-09-03 23:03:18 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File ".../triton/language/semantic.py", line 1500, in dot\n'
            "AssertionError: Unsupported rhs dtype fp8e4nv\n")
    assert scan_startup_log(text)["outcome"] != "failed"
    # the same batch with nothing queued is the warmup's: the traceback fails the start
    warmup = text.replace("#queue-req: 2", "#queue-req: 0")
    assert scan_startup_log(warmup, ended=True)["outcome"] == "failed"
