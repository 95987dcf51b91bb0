# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gate of words before the cause rules, word by word: each word of ``_NOTABLE_WORDS`` lets real evidence through.

Why: :func:`is_notable` asks the rules only about a line that holds one of these lower-case words, so a word missing
from the tuple (or misspelt) silently drops every line that only it lets through: a decisive line logged outside any
traceback is no longer kept, and the scanner's verdict falls back to "unknown". The tests that hold the gate equal to
the rules on whole logs cannot see one word go, since most lines hold several. So each line below, in the words of a
real message (SGLang's, PyTorch's, NCCL's, CUDA's, systemd's, pip's, huggingface_hub's, Triton's, ninja's, gcc's),
holds exactly one word of the tuple, passes the rules alone and is kept by the gate, with the cause it was written for.
Words for which no such line exists (every rule that can match them needs another listed word, or a multi-line
traceback) are listed with the reason; a word added to the tuple needs a line or a reason.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import (
    _NOTABLE_WORDS, decisive, is_notable, notable_by_rules)

# (the one notable word, a real line that holds it and no other, the cause its rule was written for)
LINES = (
    ("status=2", "Dec 01 08:20:01 gpu01 systemd[1]: sglang-main.service: Main process exited, code=exited, status=203/EXEC",
     "systemd_unit_error"),
    ("failed at step", "sglang.service: Failed at step EXEC spawning /opt/sglang/venv/bin/python3: Exec format error", "systemd_unit_error"),
    ("environment files", "sglang.service: Failed to load environment files: Is a directory", "systemd_unit_error"),
    ("task:", "sglang.service: Failed to run 'start' task: Operation not permitted", "systemd_unit_error"),
    ("failed to set up", "sglang.service: Failed to set up mount namespacing: /run/systemd/unit-root/var/lib/sglang: Read-only file system",
     "systemd_unit_error"),
    ("credentials", "sglang.service: Failed to determine user credentials: No such process", "systemd_unit_error"),
    ("locate executable", "sglang.service: Unable to locate executable '/opt/sglang/venv/bin/python3': Not a directory",
     "systemd_unit_error"),
    ("unit file", "Failed to start sglang.service: Unit sglang.service has a bad unit file setting.", "systemd_unit_error"),
    ("fatal error", "sglang.service: Unit configuration has fatal error, unit will not be started.", "systemd_unit_error"),
    ("memory access fault", "Memory access fault by GPU node-4 (Agent handle: 0x560adb1966e0) on address 0x7f9d7a3bb000. Reason: Unknown.",
     "illegal_memory_access"),
    ("gpus are available", "RuntimeError: No HIP GPUs are available", "driver_mismatch"),
    ("weights are missing", "ValueError: load_weights failed because some weights are missing: {'lm_head.weight'}", "model_unavailable"),
    ("'resources'", "Dec 01 08:30:05 gpu01 systemd[1]: sglang-main.service: Failed with result 'resources'.", "systemd_unit_error"),
    ("not absolute", "/etc/systemd/system/sglang.service:9: Executable path is not absolute, ignoring: python3 -m sglang.launch_server",
     "systemd_unit_error"),
    ("errno", "OSError: [Errno 12] Cannot allocate memory", "host_resource_error"),
    ("permission denied", "Error: Failed to bind to 0.0.0.0:80: Permission denied (os error 13)", "bind_permission_denied"),
    ("in use", "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30234')", "port_in_use"),
    ("not available", "ValueError: metrics_port at 40290 is not available in 30 seconds.", "port_in_use"),
    ("driver", "RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "driver_mismatch"),
    ("undefined symbol", "ImportError: /lib64/libldap.so.2: undefined symbol: EVP_md2, version OPENSSL_3.0.0", "package_mismatch"),
    ("ninja", "ninja: build stopped: subcommand failed.", "kernel_compile_failed"),
    ("no such file", "/bin/sh: line 1: /opt/rocm/bin/hipcc: No such file or directory", "jit_tool_missing"),
    ("not found", "/bin/sh: 1: gcc: not found", "jit_tool_missing"),
    ("cuda_home", "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "jit_tool_missing"),
    ("nvcc", "nvcc fatal   : Path to libdevice library not specified", "kernel_compile_failed"),
    ("illegal", "RuntimeError: CUDA error: an illegal memory access was encountered", "illegal_memory_access"),
    ("misaligned", "RuntimeError: CUDA error: misaligned address", "illegal_memory_access"),
    ("kernel image", "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device", "unsupported_gpu"),
    ("supported", "ValueError: The 'fa3' backend is not supported on Blackwell GPUs", "unsupported_gpu"),
    ("invalid device", "RuntimeError: HIP error: invalid device function", "unsupported_gpu"),
    ("invaliddevice", "Search for `cudaErrorInvalidDeviceFunction' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
     "for more information.", "unsupported_gpu"),
    ("require", "AssertionError: modelopt_fp4 quantization or bf16 is required for Flashinfer Cutlass MOE", "incompatible_arguments"),
    ("common_ops", "RuntimeError: Could not load any common_ops library", "package_mismatch"),
    ("no module named", "No module named 'vllm._version'", "package_mismatch"),
    ("cannot import name", "ImportError: cannot import name 'StructuralTag' from 'xgrammar' (/opt/venv/lib/python3.10/site-packages/xgrammar/__init__.py)",
     "package_mismatch"),
    ("error building extension", "RuntimeError: Error building extension 'batch_prefill'", "kernel_compile_failed"),
    ("out of memory", "torch.AcceleratorError: CUDA error: out of memory", "gpu_out_of_memory"),
    ("mem-fraction-static", "RuntimeError: Not enought memory. Please try to increase --mem-fraction-static.", "gpu_out_of_memory"),
    ("memoryallocation", "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
     "for more information.", "gpu_out_of_memory"),
    ("alloc_failed", "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "gpu_out_of_memory"),
    ("profiled value", "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. "
     "Use the profiled value instead.", "gpu_out_of_memory"),
    ("divisible", "AssertionError: 16 is not divisible by 6", "parallelism_mismatch"),
    ("must be", "AssertionError: ep_size * moe_dp_size must be less than or equal to tp_size", "parallelism_mismatch"),
    ("assert ", "assert self.total_num_heads % tp_size == 0", "parallelism_mismatch"),
    ("nccl", "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", "nccl_error"),
    ("diststore", "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/4 clients joined.",
     "distributed_init_failed"),
    ("distnetwork", "torch.distributed.DistNetworkError: failed to recv, got 0 bytes", "distributed_init_failed"),
    ("tcpstore", "return TCPStore(", "distributed_init_failed"),
    ("rendezvous", "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "distributed_init_failed"),
    ("c10d", "[rank1]:[W623 15:37:01.824139523 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=42) timed out after 1800000ms",
     "distributed_init_failed"),
    ("nvshmem", "tpgds-aihub0002:848534:848534 [2] NVSHMEM INFO nvshmemi_common_init failed, continuing", "distributed_init_failed"),
    ("bus error", "Fatal Python error: Bus error", "host_resource_error"),
    ("sigbus", "Signal 7 (SIGBUS) received by PID 12345", "host_resource_error"),
    ("135", "[2025-05-07 15:20:46] Child process unexpectedly failed with an exit code 135. pid=430190", "host_resource_error"),
    ("exit code: -", "[2025-05-07 15:47:06] Exit code: -7", "host_resource_error"),
    ("new thread", "RuntimeError: can't start new thread", "host_resource_error"),
    ("bad_alloc", "terminate called after throwing an instance of 'std::bad_alloc'", "host_resource_error"),
    ("graph", "Exception: Capture cuda graph failed: unspecified launch failure", "cuda_graph_capture_failed"),
    ("capturing", "RuntimeError: CUDA error: operation not permitted when stream is capturing", "cuda_graph_capture_failed"),
    ("dynamo", 'File "/usr/local/lib/python3.10/dist-packages/torch/_dynamo/eval_frame.py", line 465, in _fn', "cuda_graph_capture_failed"),
    ("inductor", 'File "/usr/local/lib/python3.12/dist-packages/torch/_inductor/codecache.py", line 3241, in result', "cuda_graph_capture_failed"),
    ("fall back to eager", "You can suppress this exception and fall back to eager by setting:", "cuda_graph_capture_failed"),
    ("object has no attribute", "AttributeError: 'Qwen2_5OmniConfig' object has no attribute 'hidden_size'", "unsupported_model_architecture"),
    ("notfounderror", "raise _format(RepositoryNotFoundError, message, response) from e", "model_unavailable"),
    ("gatedrepo", "raise _format(GatedRepoError, message, response) from e", "model_unavailable"),
    ("hfvalidation", "huggingface_hub.errors.HFValidationError: Repo id must use alphanumeric chars or '-', '_', '.'", "model_unavailable"),
    ("gated repo", "Cannot access gated repo for url https://hf-mirror.com/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.",
     "model_unavailable"),
    ("client error", "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://hf-mirror.com/api/models/meta-llama/Llama-3.1-8B",
     "model_unavailable"),
    ("does not appear to have", "OSError: CodeGoat24/UnifiedReward-7b-v1.5 does not appear to have a file named preprocessor_config.json.",
     "model_unavailable"),
    ("can't load", "OSError: Can't load tokenizer for '/models/qwen'. If you were trying to load it from 'https://hf.co/models', make sure you "
     "don't have a local directory with the same name.", "model_unavailable"),
    ("offlinemode", "huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://hf-mirror.com/api/models/Qwen/Qwen3-8B: offline mode is enabled.",
     "model_unavailable"),
    ("cannot set --", "ValueError: Cannot set --encoder-only and --language-only together", "incompatible_arguments"),
    ("cannot be combined", "ValueError: --language-model-only cannot be combined with --encoder-only", "incompatible_arguments"),
    ("must differ", "ValueError: --grpc-port (30000) must differ from --port (30000)", "incompatible_arguments"),
    ("mutually exclusive", "ValueError: prompts and prompts_file are mutually exclusive", "incompatible_arguments"),
    ("warmup", "[2025-03-07 11:56:43] Initialization failed. warmup error: ", "warmup_failed"),
    ("model_info", '[2025-08-13 11:01:03] http://172.16.37.200:3138 "GET http://0.0.0.0:25600/get_model_info HTTP/1.1" 403 3582', "warmup_failed"),
    ("/generate", '[2025-08-13 11:01:05] INFO:     127.0.0.1:53290 - "POST /generate HTTP/1.1" 500 Internal Server Error', "warmup_failed"),
    ("/v1/", '[2026-08-02 00:09:40] INFO:     127.0.0.1:43920 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request', "warmup_failed"),
    ("no space left", "OSError: No space left on device", "host_resource_error"),
    ("unable to mmap", "RuntimeError: unable to mmap 1073741824 bytes from file </torch_1234_5678_0>: Cannot allocate memory (12)",
     "host_resource_error"),
    ("unable to allocate shared memory", "RuntimeError: unable to allocate shared memory(shm) for file </torch_1234_5678_0>: "
     "Resource temporarily unavailable (11)", "host_resource_error"),
    ("no longer supports", "UserWarning: This version of PyTorch no longer supports this GPU", "unsupported_gpu"),
    ("does not exist", "RuntimeError: operator torchvision::nms does not exist", "package_mismatch"),
    ("pip install", "ImportError: Please install vllm to use the awq_marlin quantization: pip install vllm", "package_mismatch"),
    ("unbalanced", "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.", "gpu_out_of_memory"),
    ("during capture", "RuntimeError: CUDA error: operation failed due to a previous error during capture", "cuda_graph_capture_failed"),
    ("streamcapture", "Search for `cudaErrorStreamCaptureInvalidated' in the CUDA runtime API docs for more information.",
     "cuda_graph_capture_failed"),
    ("invalid value for '--log-level'", "Error: Invalid value for '--log-level': 'verbose' is not one of 'critical', 'error', 'warning', "
     "'info', 'debug', 'trace'.", "invalid_arguments"),
    ("does not support", "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.", "unsupported_gpu"),
    ("already used by", "ValueError: '<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' is already used by a Transformers model.",
     "package_mismatch"),
    ("deserializing header", "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer", "model_unavailable"),
    ("distbackenderror", "terminate called after throwing an instance of 'c10::DistBackendError'", "nccl_error"),
    ("cuda calloc", "Failed to CUDA calloc 67108864 bytes", "gpu_out_of_memory"),
    ("cuda malloc", "Failed to CUDA malloc 67108864 bytes", "gpu_out_of_memory"),
    ("cuda host alloc", "Failed to CUDA host alloc 4194304 bytes", "gpu_out_of_memory"),
    ("is not installed", "ImportError: DeepEP is not installed. Please install DeepEP package from https://github.com/deepseek-ai/deepep.",
     "package_mismatch"),
    ("model config", "ValueError: Quantization method specified in the model config (compressed-tensors)", "incompatible_arguments"),
    ("only support", "RuntimeError: SGLang only supports sm75 and above.", "unsupported_gpu"),
    ("finish loading", "ValueError: TP rank 2 could finish the model loading, but there are other ranks that didn't finish loading. It is likely",
     "peer_rank_lost"),
    ("become ready", "RuntimeError: HTTP server did not become ready at http://[::1]:10762/health", "warmup_failed"),
    ("custom_all_reduce.cu", "Failed: Cuda error /sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:223 'invalid argument'", "p2p_unsupported"),
    ("http_ready", "await _wait_until_http_ready(server_args)", "warmup_failed"),
    ("watchdog timeout", "[2025-03-07 11:56:43 TP2] Watchdog timeout (self.watchdog_timeout=300)", "warmup_failed"),
    ("pyspy dump", "[2025-11-05 10:18:51] Pyspy dump for PID 499:", "warmup_failed"),
    ("cur_batch", "[2025-11-05 10:18:51] self.cur_batch.batch_size()=1", "warmup_failed"),
    ("error 802", "cudaGetDeviceCount() ... Error 802: system not yet initialized", "driver_mismatch"),
    ("systemnotready", "Search for `cudaErrorSystemNotReady' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
     "for more information.", "driver_mismatch"),
    ("ptxas", "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error", "kernel_compile_failed"),
    ("which: no ", "which: no hipcc in (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin)", "jit_tool_missing"),
    ("code=127", "FAILED: [code=127] cuda_0.o", "jit_tool_missing"),
    ("condition: ", "Assertion failed: flashinfer/include/flashinfer/attention/scheduler.cuh:131, condition: num_kv_chunks > 0", "package_mismatch"),
    ("assertion `", "flashinfer/include/flashinfer/attention/prefill.cuh:2105: flashinfer::BatchPrefillKernel(): block: [0,0,0], "
     "thread: [0,0,0] Assertion `num_kv_chunks > 0` failed.", "package_mismatch"),
    ("kv cache", "ValueError: Loaded weights leave no GPU memory for the KV cache under", "gpu_out_of_memory"),
    ("one token", "ValueError: think_end_token '</think>' must encode to exactly one token for constrained reasoning.", "incompatible_arguments"),
    ("single token", "ValueError: think_start_token '<think>' is not a single token of the tokenizer", "incompatible_arguments"),
    ("valid json", "OSError: It looks like the config file at './out/full_sft_768.pth' is not a valid JSON file.", "model_unavailable"),
    ("available on", "ValueError: FP8 GEMM is only available on Hopper", "unsupported_gpu"),
    ("shim: ", "RuntimeError: ROCm shim: aiter.mha_batch_prefill_func was really called", "package_mismatch"),
    ("() got an", "TypeError: ServerArgs.__init__() got an unexpected keyword argument 'enable_memory_saver'", "package_mismatch"),
    ("() takes", "TypeError: run_scheduler_process() takes 7 positional arguments but 8 were given", "package_mismatch"),
    (": error: ", "/usr/local/lib/python3.12/dist-packages/flashinfer/data/include/flashinfer/utils.cuh:95:52: error: "
     "'cudaLaunchAttributeClusterDimension' was not declared in this scope", "kernel_compile_failed"),
    ("invalid configuration", "FlashInfer Internal Error: Invalid configuration :", "kernel_compile_failed"),
    ("_size=", "(moe_intermediate_size=XXX / moe_tp_size=8) % weight_block_size_n=128 == 0", "parallelism_mismatch"),
    ("cuda support", "RuntimeError: UCX is likely not configured with CUDA support", "package_mismatch"),
    ("rocm support", "RuntimeError: HIP error: not built with ROCm support enabled", "package_mismatch"),
    ("sglang implementation", "ValueError: Qwen3_5ForCausalLM has no SGlang implementation and the", "unsupported_model_architecture"),
    ("installed with version", "Exception: sgl-kernel is installed with version 0.3.20, which is less than", "package_mismatch"),
    ("expects", "AssertionError: KV4 MHA expects attention_backend to be one of ['triton', 'torch_native', 'flex_attention', 'trtllm_mha'], "
     "but got flashinfer", "incompatible_arguments"),
    ("deepep error", "RuntimeError: DeepEP error: CPU recv timeout", "distributed_init_failed"),
    ("deepep timeout", "DeepEP timeout check failed: rank = 1, thread = 0, value = 1024", "distributed_init_failed"),
    ("dtype support list", "EZ1001: [PID: 55172] tensor 0 not implemented for DT_UINT64, should be in dtype support list [DT_FLOAT,DT_INT32].",
     "unsupported_gpu"),
    ("transfer engine", "RuntimeError: Mooncake Transfer Engine initialization failed.", "distributed_init_failed"),
    ("gid index", "rdma_context.cpp:1132  GID is NULL, please check your GID index by specifying MC_GID_INDEX", "distributed_init_failed"),
    ("unknown ", "ValueError: Unknown speculative algorithm name: MTP", "invalid_arguments"),
    ("code=137", "FAILED: [code=137] ...fp4_gemm_cutlass...cuda.o", "host_resource_error"),
    ("killed signal", "Killed signal terminated program cicc", "host_resource_error"),
    ("kernel config", "EZ9999: [PID: 5625] 2025-09-19-14:34:08.166.059 Parse dynamic kernel config fail.", "package_mismatch"),
    ("aclopkernelinit", "AclOpKernelInit failed opType", "package_mismatch"),
    ("running arch", "[aiter] [module_quant] prebuilt .so targets ['gfx942'] but not the running arch gfx1201; rebuilding for gfx1201",
     "unsupported_gpu"),
    ("out_of_device_memory", "RuntimeError: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)", "gpu_out_of_memory"),
    ("ifa != nullptr", "RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr.", "distributed_init_failed"),
    ("no accelerator", "RuntimeError: No accelerator (CUDA, XPU, HPU) is available.", "driver_mismatch"),
    ("layer type", "ValueError: No attention attribute in layer type <class 'mlx_lm.models.qwen3_next.Qwen3NextDecoderLayer'>",
     "unsupported_model_architecture"),
    ("tma descriptor", "Error: Failed to initialize the TMA descriptor 801", "unsupported_gpu"),
    ("registration failed", "RuntimeError: Mooncake memory registration failed.", "distributed_init_failed"),
    ("variable 'backend'", "UnboundLocalError: local variable 'backend' referenced before assignment", "invalid_arguments"),
    ("kv pool", "RuntimeError: The DSV4 SWA pool cap (10752 tokens, 0.23 GB) leaves no room for the full KV pool within the", "gpu_out_of_memory"),
    ("nokernelimage", "Search for `cudaErrorNoKernelImageForDevice' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
     "for more information.", "unsupported_gpu"),
    ("thrown while requesting", "'ReadTimeout: The read operation timed out' thrown while requesting HEAD https://hf-mirror.example/"
     "Qwen/Qwen3-8B/resolve/main/model-00001-of-00005.safetensors", "model_unavailable"),
    ("no backend type", "RuntimeError: No backend type associated with device type cpu", "distributed_init_failed"),
)

# Words for which no line holds that word alone and passes the rules, each with the reason.
NO_SINGLE_WORD_LINE = (
    # every rule alternative that can match the word also needs another listed word (in the real messages at hand)
    "eacces",  # libuv's (torch's TCPStore) "name: EACCES, message: permission denied"
    "eaddrinuse",  # libuv's "name: EADDRINUSE, message: address already in use" ("in use")
    "used by a process",  # SGLang's wait_port_available opens the same sentence with "... is not available in N seconds."
    "compatib",  # "forward compatibility ... non supported HW" ("supported"), "not compatible", "incompatible", "binary incompatib"
    "find",  # "Could not find nvcc/ninja/CUDA_HOME", "cannot find -lcuda", "Failed to find C compiler": each names another word
    "libnvrtc",  # its rule is the dynamic loader's "libnvrtc...: cannot open shared object file" ("shared object")
    "shared object",  # the dynamic loader's message always goes on with the errno text (": No such file or directory")
    "binaryforgpu",  # ROCm's "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!" ("find", "current device")
    "capabilit",  # the compute-capability floors at hand also say "supported", "require" or "only support"
    "or newer", "or later", "or above",  # after an architecture: "FlashAttention only supports Ampere GPUs or newer", "requires an AMD MI300 or newer"
    "mismatch",  # "Driver/library version mismatch" ("driver"); no package or TP-size "... mismatch" message at hand
    "pair.cc", "likely closed", "by peer", "connect",  # Gloo's and c10d's "Connection closed by peer" / "Connection was likely closed"
    "peer access", "peeraccess", "p2p",  # "peer access is not supported", "cudaErrorPeerAccessUnsupported", "P2P is not supported"
    "enable access",  # the one message at hand comes as "DistBackendError: Can't enable access between nodes"
    "collect2", "ld returned",  # "collect2: error: ld returned 1 exit status" holds ": error: " and "exit status" too
    "calledprocesserror", "command '[", "exit status", "status 127", "status 137",  # "Command '[...]' returned non-zero exit status N"
    "build failed",  # "Ninja build failed" ("ninja"), "JIT build failed" ("jit")
    "compil", "jit",  # "JIT compilation failed" holds both; "Failed to compile" alone is in no log at hand
    "-lcuda",  # ld's "cannot find -lcuda" ("find")
    "deep_gemm",  # DeepGEMM's assertion says "condition: "; its dispatcher's assertion is a multi-line traceback
    "outofmemory",  # torch's OutOfMemoryError always says "out of memory"
    "not enough memory",  # SGLang's messages name --mem-fraction-static or the KV cache with it
    "does not match",  # "specified in the model config (...) does not match" ("model config")
    "process group", "store_based_barrier",  # "Timed out initializing process group ... key: store_based_barrier_key"
    "init_process_group",  # no one-line "init_process_group ... timed out" message at hand (its frames say c10d)
    "wait timeout",  # torch's "DistStoreError: wait timeout after Nms, keys: ..." ("diststore")
    "deep_ep",  # DeepEP's source lines come with "invalid resource handle" / CUDA_ERROR_NOT_* ; its buffer frame spans lines
    "result expired", "asyncresulttimeout",  # rpyc's timeout: "raise AsyncResultTimeout(\"result expired\")", decisive only under rpyc's frames
    "_opnamespace",  # torch.ops' "'_OpNamespace' 'pkg' object has no attribute" ("object has no attribute")
    "architecture",  # "... are not supported", "Unsupported architecture" ("supported"), "does not recognize this architecture"
    "local folder",  # transformers' sentence ends "listed on 'https://huggingface.co/models'"
    "huggingface.co",  # "We couldn't connect to 'https://huggingface.co'" ("connect")
    "authenticated",  # "You must be authenticated to access it" ("must be")
    "unable to write to file",  # torch's shm write fails with "No space left on device" ("no space left")
    "current gpu", "current device",  # "not supported for the current GPU" ("supported")
    "numpy 1.x",  # "compiled using NumPy 1.x" ("compil")
    "package metadata",  # importlib's "PackageNotFoundError: No package metadata was found" ("notfounderror")
    "stream_capture", "system_not_ready", "not_permitted",  # in the words of CUDA's driver API: "CUDA driver error: CUDA_ERROR_..." ("driver")
    "notpermitted",  # its rule wants a DeepEP source before it, whose error names it CUDA_ERROR_NOT_PERMITTED ("driver exception")
    "headertoolarge",  # safetensors' "Error while deserializing header: HeaderTooLarge" ("deserializing header")
    "to be installed",  # "requires \"pkg\" to be installed" ("require")
    "fallback pattern",  # sgl-kernel's loader: "Fallback pattern: .../sgl_kernel/common_ops.*" ("common_ops")
    "invalid resource handle", "ipc handle",  # with custom_all_reduce.cu, deep_ep or "CUDA IPC handle ... invalid resource handle"
    "cannot execute",  # gcc's "fatal error: cannot execute 'cc1plus': execvp: No such file or directory"
    "registered model",  # "Cannot find model module. '...' is not a registered model in the Transformers library" ("find")
    "transformers implementation",  # "The Transformers implementation of '...' is not compatible with SGLang" ("not compatible")
    "dispatchoutput", "dispatchinput", "combineoutput", "combineinput",  # "'...DispatchOutput' object has no attribute"
    "output' object",  # the same message ("object has no attribute"); its assertion form spans lines
    "exceeds dimension size",  # torch's narrow: decisive only under the loader's frame (multi-line); alone only a sign
    "kv_cache", "kv-cache", "1 token", "in the vocab", "in tokenizer",  # spellings of the rules no message at hand uses alone
    "in the tokenizer",  # "... not found in the tokenizer vocabulary" ("not found")
    "_dict_from_json_file", ".dtype",  # their rules span lines (transformers' JSON read; a bare dtype assertion)
    "native ",  # the shim's own sentence: "ROCm shim: ... was really called - needs a native ROCm build" ("shim: ")
    "'serverargs'",  # "'ServerArgs' object has no attribute" ("object has no attribute"); the class form is in no log at hand
    "() missing",  # "missing N required positional argument" ("require")
    "tensor core",  # "fp8 tensor core is not supported" ("supported")
    "cuda enabled",  # "Torch not compiled with CUDA enabled" ("compil")
    "nv_err_no_memory",  # NVRM's "Out of memory [NV_ERR_NO_MEMORY]" ("out of memory")
    "socversion",  # "The bin of socVersion [...] does not support opType" ("does not support")
    "on your device", "on this device",  # "is not available/supported on your device" ("not available", "available on", "supported")
    "page size", "page_size",  # "page size must be N for ..." ("must be")
    "cutensormapencode",  # "cuTensorMapEncodeTiled failed: CUDA_ERROR_NOT_SUPPORTED" ("not_supported")
    "register memory",  # GPUNetIO's "Can't register memory for unknown device N" ("unknown ")
    "no cuda gpus",  # torch's "No CUDA GPUs are available" ("gpus are available")
)


def _notable_words(line):
    return [word for word in _NOTABLE_WORDS if word in line.lower()]


@pytest.mark.parametrize("word, line, cause", LINES, ids=[entry[0] for entry in LINES])
def test_a_line_holds_its_one_notable_word_and_no_other(word, line, cause):
    assert _notable_words(line) == [word]


@pytest.mark.parametrize("word, line, cause", LINES, ids=[entry[0] for entry in LINES])
def test_the_gate_keeps_a_line_that_only_its_word_lets_through(word, line, cause):
    assert notable_by_rules(line)
    assert is_notable(line)
    assert decisive(line)[0] == cause


def test_every_notable_word_has_a_line_or_a_reason():
    covered = [entry[0] for entry in LINES]
    assert len(set(covered)) == len(covered)
    assert len(set(NO_SINGLE_WORD_LINE)) == len(NO_SINGLE_WORD_LINE)
    assert not set(covered) & set(NO_SINGLE_WORD_LINE)
    assert set(covered) | set(NO_SINGLE_WORD_LINE) == set(_NOTABLE_WORDS)


def test_no_word_of_the_gate_holds_another():
    """A word that holds a shorter listed word lets nothing more through: it would only be a second test of the same."""
    assert not [(longer, shorter) for longer in _NOTABLE_WORDS for shorter in _NOTABLE_WORDS
                if longer != shorter and shorter in longer]
