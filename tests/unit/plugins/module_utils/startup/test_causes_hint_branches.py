# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hint branches that the corpus reaches rarely or never, each word for word.

startup/causes's mutation run left these unchecked: which CUDA tool a missing-tool hint sends to the CUDA toolkit,
the warmup's answers told apart (nothing listening, the server's own status, a proxy's status), an out-of-memory told
by its phase and its wording (weights, KV cache, capture, a hybrid model's state cache), and the wordings each branch
is chosen by. The hint is what the operator acts on, so a branch that picks the wrong advice is a wrong answer.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import hint_for

PATH_TAIL = (", then put its folder on PATH in sglang_server_env (under systemd PATH is only "
             "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin, without the venv's bin or /usr/local/cuda/bin), e.g. PATH: "
             "<venv>/bin:/usr/local/cuda/bin:/usr/bin:/bin, and CUDA_HOME.")


@pytest.mark.parametrize("tool", ["nvcc", "ptxas", "cicc", "fatbinary", "nvlink"])
def test_a_missing_cuda_tool_sends_the_operator_to_the_cuda_toolkit(tool):
    message = f"FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/{tool}'"
    assert hint_for("jit_tool_missing", message, "weights_loading", message) == (
        f"The JIT kernel build needs {tool}, which the unit cannot find: install the CUDA toolkit that matches torch's "
        "CUDA" + PATH_TAIL)


@pytest.mark.parametrize("tool", ["gcc", "g++", "cc", "clang", "ld"])
def test_a_missing_host_compiler_sends_the_operator_to_the_build_tools(tool):
    message = f"FileNotFoundError: [Errno 2] No such file or directory: '{tool}'"
    assert hint_for("jit_tool_missing", message, "weights_loading", message) == (
        f"The JIT kernel build needs {tool}, which the unit cannot find: install the build tools (apt-get install "
        "build-essential)" + PATH_TAIL)


def test_ninja_by_torchs_own_words_is_a_pip_install():
    message = "RuntimeError: Ninja is required to load C++ extensions"
    assert hint_for("jit_tool_missing", message, "weights_loading", message) == (
        "The JIT kernel build needs ninja, which the unit cannot find: pip install ninja into the SGLang venv" + PATH_TAIL)


NOTHING_LISTENING = ("The warmup request found nothing listening on SGLang's own address: the HTTP server did not come up "
                     "(a port in use or a bind refused earlier in the log) - read the lines before the traceback.")


@pytest.mark.parametrize("evidence", [
    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=30000): Max retries exceeded "
    "(Caused by NewConnectionError('<urllib3.connection.HTTPConnection object>: Failed to establish a new connection: "
    "[Errno 111] Connection refused'))",
    "ConnectionRefusedError: [Errno 111]",
])
def test_a_warmup_that_found_nothing_listening_says_so_in_either_wording(evidence):
    assert hint_for("warmup_failed", "Initialization failed. warmup error", "warmup", evidence) == NOTHING_LISTENING


def test_a_warmup_without_a_status_or_a_refusal_gets_the_causes_general_hint():
    hint = hint_for("warmup_failed", "Initialization failed. warmup error", "warmup", "warmup error: ReadTimeout")
    assert hint.startswith("The server came up but its warmup request failed. SGLang sends the warmup to its own bind "
                           "address (host), through any")
    assert NOTHING_LISTENING not in hint


@pytest.mark.parametrize("status", ["401", "404", "422"])
def test_a_status_of_the_server_itself_is_read_as_its_own(status):
    evidence = f"AssertionError: <Response [{status}]>"
    assert hint_for("warmup_failed", evidence, "warmup", evidence) == (
        f"The warmup request got HTTP {status} from the server itself (read the traceback and the lines before it: 401 "
        "means api_key is set and the request lacked it). skip_server_warmup: true only hides it.")


@pytest.mark.parametrize("status", ["403", "407", "502", "503", "504"])
def test_a_proxys_status_is_read_as_a_proxy_and_sends_to_no_proxy(status):
    evidence = f"AssertionError: <Response [{status}]>"
    assert hint_for("warmup_failed", evidence, "warmup", evidence) == (
        f"The warmup request got HTTP {status}, which is a proxy's answer (SGLang sends the warmup to its own bind address "
        "through http_proxy): set no_proxy and NO_PROXY in sglang_server_env to hold that address - "
        "127.0.0.1,localhost,0.0.0.0 when host is 0.0.0.0 - or unset the proxy for the unit. skip_server_warmup: true only "
        "hides it.")


OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
WEIGHTS_DO_NOT_FIT = ("The model weights do not fit in GPU memory: increase tp_size, use a quantized checkpoint, or free the GPUs "
                      "(another process may hold memory: nvidia-smi). mem_fraction_static does not help while loading weights.")
AFTER_WEIGHTS = ("GPU memory ran out after the weights were loaded: lower mem_fraction_static (e.g. 0.8) to leave room for "
                 "activations and CUDA graphs, and/or lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20) or "
                 "chunked_prefill_size.")
CAPTURE = ("GPU memory ran out while capturing CUDA graphs: lower mem_fraction_static (e.g. 0.8) to leave room for the "
           "graphs, and/or lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20), e.g. to 16.")
NO_ROOM_FOR_KV = ("The weights fit but no GPU memory is left for the KV cache: raise mem_fraction_static (e.g. by 0.05, or to the "
                  "value SGLang's message names when it names one; check that the value really reaches the server), lower "
                  "context_length or max_running_requests, use more GPUs (tp_size) or a quantized model.")


@pytest.mark.parametrize("phase, expected", [
    (None, WEIGHTS_DO_NOT_FIT), ("process_started", WEIGHTS_DO_NOT_FIT), ("parallel_init", WEIGHTS_DO_NOT_FIT),
    ("weights_loading", WEIGHTS_DO_NOT_FIT), ("kv_cache", AFTER_WEIGHTS), ("warmup", AFTER_WEIGHTS),
    ("cuda_graph_capture", CAPTURE),
])
def test_a_plain_out_of_memory_is_told_by_the_phase_it_came_in(phase, expected):
    assert hint_for("gpu_out_of_memory", OOM, phase, OOM) == expected


@pytest.mark.parametrize("evidence", [
    "Exception: Capture cuda graph failed: CUDA out of memory.",
    "Exception: Capture CUDA graph failed: CUDA out of memory.",
    '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 400, in capture',
])
def test_a_capture_is_read_from_the_evidence_when_the_phase_is_not_known(evidence):
    assert hint_for("gpu_out_of_memory", OOM, "kv_cache", evidence + "\n" + OOM) == CAPTURE


@pytest.mark.parametrize("message, evidence", [
    ("RuntimeError: Not enough memory. Please try to lower --max-running-requests.", ""),
    (OOM, "ValueError: The total memory 3.1 GB is larger than the profiled value 2.9 GB"),
    (OOM, "Please increase --mem-fraction-static or reduce --context-length"),
    ("RuntimeError: Not enough free memory for the KV cache", ""),
])
def test_no_room_for_the_kv_cache_is_told_in_each_wording(message, evidence):
    assert hint_for("gpu_out_of_memory", message, "kv_cache", evidence or message) == NO_ROOM_FOR_KV


def test_a_state_cache_too_small_names_the_hybrid_models_settings():
    message = "RuntimeError: Not enough space for mamba cache, try to increase --mamba-full-memory-ratio"
    assert hint_for("gpu_out_of_memory", message, "kv_cache", message) == (
        "The state cache of this hybrid (linear-attention) model got too little of the memory SGLang keeps for its pools: "
        "raise mamba_full_memory_ratio or max_mamba_cache_size as the message says, or mem_fraction_static, or lower "
        "max_running_requests (each running request holds a state slot).")
