# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure, and of serving, worked on from the sixth test split's misses (corpus split ``opened6``).

Each kind is a rule in causes.py, scanner.py or lines.py with its hint; the lines are small ones built from the
corpus logs' own wording (273 the scheduler's watchdog dumping the warmup's stuck batch; 278 a traceback relayed line
by line as records; 280 a backend a layer does not take; 283 an accelerator's torch extension used without its import;
284 CUDA's error 802; 285 Triton's ptxas run as a shell command that failed; 286 ptxas refusing a feature for the
target; 288 Triton's knobs of another version; 291 a CI console's timestamps; 292 a kernel table without the GPU's
major; 293 DeepEP's IPC handle that does not open, then an illegal memory access; 295 the transformers fallback class;
267 an RL trainer's finished steps as serving; and, from opened3, 177 a PD transfer engine's bytes moved as serving),
and every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import parse_line
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 273: what the scheduler's watchdog prints when a batch's forward does not finish in time
WATCHDOG = ("[2025-11-05 10:18:51] self.cur_batch.batch_size()=1\n"
            "[2025-11-05 10:18:51] Pyspy dump for PID 499:\n"
            "Process 499: sglang::scheduler\n"
            "    replay (npu_graph_runner.py:82)\n")
# 280: a layer that does not take the attention backend chosen
LAYER_BACKEND = "ValueError: Attention backend 'sage_attn' is not supported by this attention layer;"
# 283 and 155: an undefined name in SGLang's own code: an accelerator's extension, or a name of an optional dependency
DEVICE_NAME = ('  File "/venv/lib/python3.11/site-packages/sglang/srt/hardware_backend/npu/utils.py", line 129, in npu_format_cast\n'
               "    tmp = torch_npu.npu_format_cast(tensor, acl_format.value)\n"
               "NameError: name 'torch_npu' is not defined\n")
OPTIONAL_NAME = ('  File "/venv/lib/python3.10/site-packages/sglang/srt/layers/quantization/gptq.py", line 90, in get_quant_method\n'
                 "    if check_marlin_supported(quant_type, group_size):\n"
                 "NameError: name 'check_marlin_supported' is not defined\n")
# 284: CUDA's device count on a driver stack that is not ready
ERROR_802 = "cudaGetDeviceCount() ... Error 802: system not yet initialized"
# 285: Triton runs its bundled ptxas as one shell string
PTXAS_RUN = ("subprocess.CalledProcessError: Command '/venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo "
             "-v --gpu-name=sm_120 /tmp/x.ptx -o /tmp/x.ptx.o 2> /tmp/y.log' returned non-zero exit status 255.")
# 286: ptxas refuses an instruction feature for the GPU's target (the target cut off by the paste)
PTXAS_FEATURE = ("ptxas /tmp/tmpkz2cup6g.ptx, line 606; error   : Feature '.tile::gather4 with destination state space as "
                 ".shared::cluster' not supported on .t")
# 292: a kernel's table of builds without the GPU's major, inside the graph capture
NO_ARCH = "Exception: Capture cuda graph failed: No supported CUDA architectures found for major versions [10]."
# 288: SGLang installs a hook Triton's knobs of that version lack
KNOBS = ('  File "/sglang-checkout/python/sglang/srt/utils/triton_load_watch.py", line 50, in install\n'
         "    knobs.runtime.kernel_load_start_hook.add(_on_kernel_load)\n"
         "AttributeError: 'runtime_knobs' object has no attribute 'kernel_load_start_hook'\n")
# 293: DeepEP's first CUDA error, then what the abort printed after it
DEEPEP_IPC = ("RuntimeError: Failed: CUDA error /build/DeepEP/csrc/deep_ep.cpp:112 'invalid resource handle'\n"
              "terminate called after throwing an instance of 'EPException'\n"
              "  what():  Failed: CUDA error /build/DeepEP/csrc/deep_ep.cpp:278 'an illegal memory access was encountered'\n")
# 295: SGLang's transformers fallback class
FALLBACK = "AttributeError: 'TransformersForCasualLM' object has no attribute 'tp_size'"


@pytest.mark.parametrize("evidence, cause", [
    (WATCHDOG, "warmup_failed"),
    ("[2025-11-05 10:18:40] Setting watchdog_timeout to 600 seconds", "unknown"),
    (LAYER_BACKEND, "incompatible_arguments"),
    ("[2025-06-16 10:00:00] Attention backend not set. Use fa3 backend by default.", "unknown"),
    (DEVICE_NAME, "unknown"),
    (OPTIONAL_NAME, "package_mismatch"),  # a name of an optional dependency stays the sign of a package not installed
    (ERROR_802, "driver_mismatch"),
    # alone, SGLang's line says torch sees no GPU at all: read so since opened14 (518), with the hint of that case
    ("RuntimeError: No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) or platform plugin is available.", "driver_mismatch"),
    (PTXAS_RUN, "kernel_compile_failed"),
    ("subprocess.CalledProcessError: Command 'nvidia-smi -q' returned non-zero exit status 9.", "unknown"),
    (PTXAS_FEATURE, "unsupported_gpu"),
    ("ptxas info    : Used 128 registers, 0 bytes smem, 400 bytes cmem[0]", "unknown"),
    (NO_ARCH, "unsupported_gpu"),
    ("Exception: Capture cuda graph failed: operation not permitted when stream is capturing", "cuda_graph_capture_failed"),
    (KNOBS, "package_mismatch"),
    ("AttributeError: 'Scheduler' object has no attribute 'enable_overlap'", "unknown"),
    (DEEPEP_IPC, "p2p_unsupported"),  # the first CUDA error is the cause, the illegal access after it its consequence
    ("  what():  Failed: CUDA error /build/DeepEP/csrc/deep_ep.cpp:278 'an illegal memory access was encountered'",
     "illegal_memory_access"),
    ("RuntimeError: CUDA error: invalid resource handle", "unknown"),  # not at a source that shares buffers between GPUs
    (FALLBACK, "unsupported_model_architecture"),
    ("AttributeError: 'Qwen3ForCausalLM' object has no attribute 'packed_modules_mapping'", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    assert "watchdog" in hint_for("warmup_failed", "self.cur_batch.batch_size()=1", "warmup", WATCHDOG)
    assert "disabled" in hint_for("warmup_failed", "self.cur_batch.batch_size()=1", "warmup", WATCHDOG)
    assert "attention_backend" in hint_for("incompatible_arguments", LAYER_BACKEND, None, LAYER_BACKEND)
    device = hint_for("unknown", "NameError: name 'torch_npu' is not defined", None, DEVICE_NAME)
    assert "bug" in device and "sglang_install_version" in device
    assert "fabric manager" in hint_for("driver_mismatch", ERROR_802, None, ERROR_802)
    assert "TRITON_PTXAS_PATH" in hint_for("kernel_compile_failed", PTXAS_RUN, "cuda_graph_capture", PTXAS_RUN)
    assert "Triton" in hint_for("package_mismatch", KNOBS.splitlines()[-1], None, KNOBS)
    deepep = hint_for("p2p_unsupported", DEEPEP_IPC.splitlines()[0], None, DEEPEP_IPC)
    assert "--ipc=host" in deepep and "moe_a2a_backend" in deepep and "disable_custom_all_reduce" not in deepep
    assert "fallback" in hint_for("unsupported_model_architecture", FALLBACK, None, FALLBACK)
    model_type = ('  File "/x/transformers/models/auto/configuration_auto.py", line 1048, in __getitem__\n'
                  "    raise KeyError(key)\nKeyError: 'glm_moe_dsa'\n")
    assert "'glm_moe_dsa'" in hint_for("unsupported_model_architecture", "KeyError: 'glm_moe_dsa'", None, model_type)


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    for line in (ERROR_802, PTXAS_FEATURE, "[2025-11-05 10:18:51] Pyspy dump for PID 499:"):
        assert is_notable(line), line
    result = scan_startup_log(ERROR_802 + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "driver_mismatch")
    result = scan_startup_log(WATCHDOG, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "warmup_failed")


# 278: a logger that relays each line of a traceback as its own record, the level before each
RELAYED = "\n".join("[2026-02-26 15:56:59] ERROR: " + line for line in (
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 1360, in from_pretrained',
    '    config_class = CONFIG_MAPPING[config_dict["model_type"]]',
    "                   ~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/usr/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 1048, in __getitem__',
    "    raise KeyError(key)",
    "KeyError: 'glm_moe_dsa'",
    "",
)) + "\n"


def test_a_traceback_relayed_line_by_line_as_records_is_read_as_one_traceback():
    result = scan_startup_log(RELAYED, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "unsupported_model_architecture")
    assert result["error_message"] == "KeyError: 'glm_moe_dsa'"
    assert result["traceback"].splitlines()[-1] == "KeyError: 'glm_moe_dsa'"
    assert "    raise KeyError(key)" in result["traceback"]


def test_a_record_of_another_level_still_ends_a_relayed_traceback():
    text = "\n".join(RELAYED.splitlines()[:3] + ["[2026-02-26 15:57:00] INFO: KeyError: 'later'"]) + "\n"
    result = scan_startup_log(text, ended=True)
    assert "later" not in result["traceback"]
    assert result["tracebacks_seen"] == 1


def test_a_ci_consoles_timestamp_is_a_relay_prefix():
    line = parse_line("[2025-11-06T02:10:00.702Z]   File \"/x/sglang/srt/models/deepseek_vl2.py\", line 252, in load_weights")
    assert line.msg == '  File "/x/sglang/srt/models/deepseek_vl2.py", line 252, in load_weights' and not line.record
    inner = parse_line("[2025-11-06T02:10:00.703Z] [2025-11-06 02:10:00] Received sigquit from a child process.")
    assert inner.record and inner.body == "Received sigquit from a child process."
    own = parse_line("[2025-11-06T02:10:00] Load weight end.")  # SGLang's own record time has no Z: it stays a record
    assert own.record and own.body == "Load weight end."
    text = "\n>\n".join("> [2025-11-06T02:10:00.702Z] " + line for line in (
        '  File "/x/sglang/srt/models/deepseek_vl2.py", line 252, in load_weights',
        "    param = params_dict[name]",
        "KeyError: 'lm_head.weight'",
        "[2025-11-06 02:10:00] Received sigquit from a child process. It usually means the child failed.",
    )) + "\n"
    result = scan_startup_log(text, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "unsupported_model_architecture")
    assert result["error_message"] == "KeyError: 'lm_head.weight'"


SCHEDULER_CUT = ("(WorkerDict pid=89980) [2025-05-13 14:44:42 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
                 '(WorkerDict pid=89980)   File "/x/sglang/srt/managers/scheduler.py", line 2026, in run_scheduler_process\n'
                 "(WorkerDict pid=89980)     scheduler.event_loop_overlap()\n")


def test_an_rl_trainers_finished_steps_are_serving():
    bars = "Training Progress:  20%|\u2588\u2588        | 88/435 [1:54:01<6:51:05, 71.08s/it]\n(TaskRunner pid=87031) \n"
    result = scan_startup_log(bars + SCHEDULER_CUT)
    assert result["outcome"] == "ready" and result["cause"] is None


@pytest.mark.parametrize("before", [
    "Training Progress:   0%|          | 0/435 [00:00<?, ?it/s]\n",  # no step finished yet: no rollout served
    "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.10s/it]\n",
    "Capturing batches (bs=64 avail_mem=11.08 GB):  10%|\u2588         | 1/11 [00:00<00:05,  1.80it/s]\n",
])
def test_bars_that_are_no_finished_training_step_are_no_serving_evidence(before):
    result = scan_startup_log(before + SCHEDULER_CUT)
    assert result["outcome"] == "failed"


PD_CHECK = ("[2025-06-16 06:29:15 DP1 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/disaggregation/prefill.py", line 295, in event_loop_overlap_disagg_prefill\n'
            "    self.check_memory()\n"
            "ValueError: token_to_kv_pool_allocator memory leak detected! available_size=136192\n")


def test_kv_bytes_a_pd_transfer_engine_moved_are_serving():
    """(opened3's 177, worked on in this round) the warmup's PD request transfers nothing: bytes moved are requests."""
    moved = "I0616 06:29:14.501163 1115123 transfer_engine.cpp:387] [Metrics] Transfer Engine Throughput: 113.07 MB/s (over last 5s)\n"
    result = scan_startup_log(moved + PD_CHECK)
    assert result["outcome"] == "ready" and result["cause"] is None


def test_a_transfer_engine_that_moved_nothing_is_no_serving_evidence():
    idle = "I0616 06:29:09.501163 1115123 transfer_engine.cpp:387] [Metrics] Transfer Engine Throughput: 0.00 MB/s (over last 5s)\n"
    assert scan_startup_log(idle + PD_CHECK)["outcome"] == "failed"
