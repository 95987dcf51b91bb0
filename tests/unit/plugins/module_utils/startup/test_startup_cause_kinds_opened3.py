# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure, and of serving, worked on from the third test split's misses (corpus split ``opened3``).

Each kind is a rule in causes.py (or, for serving, in scanner.py) with its hint; the lines are verbatim from the corpus
logs (163 NVSHMEM's own lines; 164 and 169 a weight loader failing on a checkpoint, 164 pasted newest line first; 165
a broken checkpoint index; 168 transformers' registry; 172 a dtype the quantization kernel does not take; 157 a
signature error inside one code base; 188, 191, 192 tracebacks raised while serving) and every kind has a line it
must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 163: NVSHMEM's C-level lines, no Python traceback
NVSHMEM_STATUS = ("/sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:499: non-zero status: -3 "
                  "/sglang/sglang/3rdparty/nvshmem_src/src/host/topo/topo.cpp:526: non-zero status: -3 allgather of ipc "
                  "handles failed ")
NVSHMEM_BEFORE_INIT = ("/sglang/sglang/3rdparty/nvshmem_src/src/host/team/team.cu:nvshmem_team_split_strided:63: NVSHMEM API "
                       "called before NVSHMEM initialization has completed")
# 164, as pasted: newest line first
REVERSED_KEYERROR = (
    "KeyError: 'model.layers.78.mlp.gate_up_proj.input_scale'\n"
    "param = params_dict[name]\n"
    'File "/sgl-workspace/sglang/python/sglang/srt/models/llama.py", line 503, in load_weights\n'
    "model.load_weights(self._get_all_weights(model_config, model))\n"
    'File "/sgl-workspace/sglang/python/sglang/srt/model_loader/loader.py", line 371, in load_model\n'
)
# 169: the quantization method processing the loaded weights, through SGLang's quantization utils
SCALE_INDEX = (
    '  File "/home/jobuser/sglang/python/sglang/srt/layers/quantization/modelopt_quant.py", line 169, in process_weights_after_loading\n'
    "    max_w_scale = convert_to_channelwise(max_w_scale, layer.logical_widths)\n"
    '  File "/home/jobuser/sglang/python/sglang/srt/layers/quantization/utils.py", line 81, in convert_to_channelwise\n'
    "    weight_scale_channel[start:end, :] = weight_scale[idx]\n"
    "IndexError: invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a "
    "0-dim tensor to a number"
)
# 162 (label unknown): a vLLM weight loader that asks vLLM's TP group, which SGLang never set up: not the checkpoint
VLLM_TP_GROUP = (
    '  File "/home/a/sglang/python/sglang/srt/models/qwen3_moe.py", line 406, in load_weights\n'
    "    weight_loader(\n"
    '  File "/data2/a/miniconda3/envs/cap/lib/python3.11/site-packages/vllm/model_executor/layers/quantization/moe_wna16.py", '
    "line 396, in moe_wna16_weight_loader\n"
    "    tp_rank = get_tensor_model_parallel_rank()\n"
    '  File "/data2/a/miniconda3/envs/cap/lib/python3.11/site-packages/vllm/distributed/parallel_state.py", line 749, in get_tp_group\n'
    '    assert _TP is not None, ("tensor model parallel group is not initialized")\n'
    "AssertionError: tensor model parallel group is not initialized"
)
# 165: the checkpoint's index JSON is empty
BROKEN_INDEX = (
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_loader/weight_utils.py", line 322, in filter_duplicate_safetensors_files\n'
    '    weight_map = json.load(f)["weight_map"]\n'
    '  File "/usr/lib/python3.10/json/__init__.py", line 293, in load\n'
    "    return loads(fp.read(),\n"
    '  File "/usr/lib/python3.10/json/__init__.py", line 346, in loads\n'
    "    return _default_decoder.decode(s)\n"
    '  File "/usr/lib/python3.10/json/decoder.py", line 337, in decode\n'
    "    obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n"
    '  File "/usr/lib/python3.10/json/decoder.py", line 355, in raw_decode\n'
    '    raise JSONDecodeError("Expecting value", s, err.value) from None\n'
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
)
# 129 (warmup_failed): the warmup's get_model_info answer does not parse; not a checkpoint file
WARMUP_JSON = (
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/server.py", line 475, in _wait_and_warmup\n'
    "    model_info = res.json()\n"
    "requests.exceptions.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
)
# 168
TRANSFORMERS_REGISTRY = ("ValueError: '<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' is already used by a "
                         "Transformers model.")
# 172
AWQ_DTYPE = (
    '  File "/mnt/Shared_h0/zjp/anaconda3/envs/deepseek/lib/python3.9/site-packages/vllm/_custom_ops.py", line 222, in awq_dequantize\n'
    "    return torch.ops._C.awq_dequantize(qweight, scales, zeros, split_k_iters,\n"
    "RuntimeError: expected scalar type Half but found BFloat16"
)
# 157 (label unknown): the fork's model calls its own rotary embedding's private method with another signature
PRIVATE_SIGNATURE = (
    '  File "sglang/python/sglang/srt/models/minicpm.py", line 145, in __init__\n'
    "    self.rotary_emb.cos_sin_cache = self.rotary_emb._compute_cos_sin_cache()\n"
    "TypeError: Phi3LongRoPEScaledRotaryEmbedding._compute_cos_sin_cache() missing 3 required positional arguments: "
    "'max_position_embeddings', 'rescale_factors', and 'mscale'"
)
# 130 (package_mismatch): SGLang calls FlashInfer's public method with another version's signature
PUBLIC_SIGNATURE = ("TypeError: BatchPrefillWithPagedKVCacheWrapper.begin_forward() missing 1 required positional argument: "
                    "'page_size'")


@pytest.mark.parametrize("evidence, cause", [
    (NVSHMEM_STATUS, "distributed_init_failed"),
    (NVSHMEM_BEFORE_INIT, "distributed_init_failed"),
    ("nvshmem_src/src/host/init/init.cu:1007: NVSHMEM version 3.2.5", "unknown"),
    (REVERSED_KEYERROR, "unsupported_model_architecture"),
    (SCALE_INDEX, "unsupported_model_architecture"),
    (VLLM_TP_GROUP, "unknown"),
    ("KeyError: 'model.layers.78.mlp.gate_up_proj.input_scale'", "unknown"),  # a KeyError alone says nothing
    (BROKEN_INDEX, "model_unavailable"),
    ("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge", "model_unavailable"),
    (WARMUP_JSON, "warmup_failed"),
    (TRANSFORMERS_REGISTRY, "package_mismatch"),
    (AWQ_DTYPE, "incompatible_arguments"),
    ("RuntimeError: expected scalar type Float but found Long", "unknown"),
    (PRIVATE_SIGNATURE, "unknown"),
    (PUBLIC_SIGNATURE, "package_mismatch"),
    ("TypeError: __init__() got an unexpected keyword argument 'prefix'", "package_mismatch"),  # 081: a dunder is public
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    assert "dtype: float16" in hint_for("incompatible_arguments", AWQ_DTYPE.rsplit("\n", 1)[1], "weights_loading", AWQ_DTYPE)
    assert "fetch them again" in hint_for("model_unavailable", "json.decoder.JSONDecodeError", "weights_loading", BROKEN_INDEX)
    assert "transformers version this SGLang release pins" in hint_for(
        "package_mismatch", TRANSFORMERS_REGISTRY, "process_started", TRANSFORMERS_REGISTRY)
    assert "weight name it has no parameter for" in hint_for(
        "unsupported_model_architecture", "KeyError: 'x'", "weights_loading", REVERSED_KEYERROR)
    assert "NVSHMEM" in hint_for("distributed_init_failed", "", "weights_loading", NVSHMEM_BEFORE_INIT)


def test_lone_nvshmem_lines_are_evidence_once_the_start_failed():
    assert is_notable(NVSHMEM_STATUS) and is_notable(NVSHMEM_BEFORE_INIT) and is_notable(TRANSFORMERS_REGISTRY)
    result = scan_startup_log(NVSHMEM_STATUS + "\n" + NVSHMEM_BEFORE_INIT + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "distributed_init_failed")


def test_a_traceback_pasted_newest_line_first_is_read():
    """164's shape: the exception on top, then its code, then the frames outermost last; SGLang's sigquit line before."""
    text = ("[2025-04-04 06:24:51] Received sigquit from a child process. It usually means the child failed.\n{}\n"
            + REVERSED_KEYERROR
            + "[2025-04-04 06:24:51 TP7] Scheduler hit an exception: Traceback (most recent call last):\n")
    result = scan_startup_log(text, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "unsupported_model_architecture")
    # an exception line far above a new traceback's first frame is not taken as its own
    far = "KeyError: 'a'\n" + "x = 1\n" * 5 + REVERSED_KEYERROR.split("\n", 2)[2]
    assert scan_startup_log(far, ended=True)["cause"] == "unknown"


# ------------------------------------------------------------------------------------------- serving, or starting
SCHEDULER_HIT = "[2025-02-20 15:22:31 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"


@pytest.mark.parametrize("text", [
    # 192: the scheduler's traceback goes through an update_weights_from_tensor call (an API call, never the warmup)
    SCHEDULER_HIT
    + '  File "/usr/local/lib/python3.9/site-packages/sglang/srt/managers/scheduler.py", line 580, in process_input_requests    \n'
    + "    output = self._request_dispatcher(recv_req)\n"
    + '  File "/usr/local/lib/python3.9/site-packages/sglang/srt/managers/scheduler.py", line 1670, in update_weights_from_tensor    \n'
    + "    success, message = self.tp_worker.update_weights_from_tensor(recv_req)\n"
    + "EOFError\n",
    # 188: a request's own error (an input longer than the context) before the scheduler's traceback
    "TypeError: '>' not supported between instances of 'NoneType' and 'int'\n"
    "[2025-03-03 06:49:28 TP5] Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). Use a shorter "
    "input or enable --allow-auto-truncate.\n"
    "[2025-03-03 06:49:28 TP5] Scheduler hit an exception: Traceback (most recent call last):\n",
    # 191: SGLang's benchmark client's traceback: a client of a serving server
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/bench_serving.py", line 342, in async_request_sglang_generate\n'
    "    async for chunk_bytes in response.content:\n"
    "aiohttp.client_exceptions.ClientPayloadError: Response payload is not completed\n",
    # an OpenAI-compatible handler (the warmup posts to /generate, never there)
    "[2025-07-16 14:47:06] Error in request: \n"
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/openai/serving_base.py", line 35, in handle_request\n'
    "    adapted_request, processed_request = self._convert_to_internal_request(\n"
    "NotImplementedError\n",
])
def test_a_traceback_raised_while_serving_is_no_failed_start(text):
    result = scan_startup_log(text, ended=False)
    assert result["outcome"] == "ready" and result["cause"] is None


@pytest.mark.parametrize("text", [
    # the scheduler's event loop and the model's forward: the warmup runs through them too (185's shape)
    "[2025-04-09 17:19:56] Received sigquit from a child process. It usually means the child failed.\n"
    "[2025-04-09 17:19:56 TP5] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 608, in event_loop_normal\n'
    "    result = self.run_batch(batch)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.43 GiB.\n",
    # a module-level import of the OpenAI adapter (170's IPython frame) is a start, not a request
    "Traceback (most recent call last):\n"
    '  File "/x/site-packages/sglang/srt/openai_api/adapter.py", line 30, in <module>\n'
    "    from outlines.fsm.json_schema import convert_json_schema_to_str\n"
    "ModuleNotFoundError: No module named 'outlines.fsm.json_schema'\n",
])
def test_what_the_warmup_also_runs_is_no_serving_evidence(text):
    assert scan_startup_log(text, ended=True)["outcome"] == "failed"
