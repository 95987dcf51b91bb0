# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a start failed: the cause labels, the rules that pick one from the evidence, and a hint for each.

Why a module of its own: the labels are a contract with operators (docs/startup-failure-causes.md explains
each one) and the rules change with every SGLang release that words an error differently; the scanner only
collects the evidence (the fatal traceback, the fatal lines, notable context lines) and asks here what it
means. Every rule and hint is tested on real logs (``tests/unit/plugins/module_utils/data/startup_logs``).

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Optional

# Cause labels (docs/startup-failure-causes.md explains each one for operators).
CAUSES = (
    "invalid_arguments",
    "incompatible_arguments",
    "parallelism_mismatch",
    "gpu_out_of_memory",
    "cuda_graph_capture_failed",
    "nccl_error",
    "p2p_unsupported",
    "distributed_init_failed",
    "model_unavailable",
    "unsupported_model_architecture",
    "kernel_compile_failed",
    "driver_mismatch",
    "unsupported_gpu",
    "speculative_decoding_error",
    "port_in_use",
    "warmup_failed",
    "unknown",
)


# Cause rules, most specific first; the first that matches the evidence wins.
_CAUSE_RULES = (
    ("port_in_use", re.compile(r"address already in use|\[Errno 98\]|EADDRINUSE|port \d+ is (?:already )?in use|Address in use", re.I)),
    ("driver_mismatch", re.compile(
        r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|cudaErrorInsufficientDriver"
        r"|driver/library version mismatch|Found no NVIDIA driver|forward compatibility was attempted"
        r"|CUDA_ERROR_COMPAT_NOT_SUPPORTED|unsupported display driver / cuda driver combination", re.I)),
    ("unsupported_gpu", re.compile(
        r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice"
        r"|is not compatible with the current PyTorch installation|\bsm_?\d{2,3}a?\b[^\n]{0,40}\bnot (?:compatible|supported)"
        r"|not supported on (?:this GPU|this device|compute capability|sm_?\d+)"
        r"|requires (?:compute capability|sm_?\d{2,3}|SM ?\d{2,3}|Hopper|Blackwell|Ampere)"
        r"|(?:compute|device) capability \S+ (?:is )?not supported|Unsupported (?:GPU|CUDA arch\w*|compute capability)"
        r"|only supported on (?:sm|SM|Hopper|Blackwell|Ampere)", re.I)),
    ("p2p_unsupported", re.compile(
        r"peer access is not supported between these two devices|cudaErrorPeerAccessUnsupported"
        r"|P2P (?:access )?is not supported|Can't enable access between nodes", re.I)),
    ("kernel_compile_failed", re.compile(
        r"ninja: build stopped|Error building extension|CompilationError|nvcc fatal|fatal error: \S+: No such file or directory"
        r"|collect2: error|ld returned \d+ exit status|CalledProcessError: Command '\[?'(?:ninja|nvcc|gcc|g\+\+|cc|c\+\+)'"
        r"|Command '\['\S*(?:gcc|g\+\+|nvcc|clang)'[^\n]*returned non-zero exit status|Ninja build failed"
        r"|(?:JIT|jit) (?:compil\w*|build) (?:failed|error)|Failed to compile|triton\.compiler\.errors|cannot find -lcuda")),
    ("parallelism_mismatch", re.compile(
        r"\b\d+ is not divisible by \d+|(?:tp_size|tensor[_ -]parallel(?:[_ ]size)?|pp_size|pipeline[_ ]parallel(?:[_ ]size)?"
        r"|dp_size|attn_dp_size|moe_dp_size|ep_size|attn_cp_size|world[_ ]size|number of nodes|nnodes)"
        r"[^\n]{0,80}(?:divisible|must be (?:equal|a multiple|less|greater)|does not match|mismatch)"
        r"|divisible by (?:the )?(?:tensor parallel|tp|world)", re.I)),
    ("nccl_error", re.compile(
        r"NCCL error|nccl(?:System|Internal|InvalidUsage|UnhandledCuda|Remote)Error|DistBackendError|NCCL WARN"
        r"|ProcessGroupNCCL[^\n]{0,80}(?:error|Watchdog caught|timed out)")),
    ("distributed_init_failed", re.compile(
        r"DistStoreError|DistNetworkError|TCPStore|Timed out initializing process group|store_based_barrier"
        r"|Rendezvous\w*Error|\[c10d\][^\n]{0,200}(?:timed out|timeout|Connection refused)|socketStartConnect"
        r"|init_process_group[^\n]{0,200}(?:timed out|timeout|refused)|Gloo connectFullMesh failed", re.I)),
    ("cuda_graph_capture_failed", re.compile(
        r"Capture (?:cuda|CUDA) graph failed|cuda_graph_runner\.py|CudaGraphRunner|cudaStreamCaptureStatus"
        r"|operation not permitted when stream is capturing|during CUDA graph capture", re.I)),
    ("gpu_out_of_memory", re.compile(
        r"CUDA out of memory|OutOfMemoryError|Not enough memory\. Please try to increase --mem-fraction-static"
        r"|Not enough memory to allocate KV cache|CUDA error: out of memory|cudaErrorMemoryAllocation"
        r"|CUBLAS_STATUS_ALLOC_FAILED|larger than the profiled value -\d+", re.I)),
    ("unsupported_model_architecture", re.compile(
        r"Model architectures? \[[^\]]*\] (?:are|is) not supported|does not recognize this architecture"
        r"|Unsupported (?:model )?architecture|No model architectures? (?:are )?specified", re.I)),
    ("model_unavailable", re.compile(
        r"is not a local folder and is not a valid model identifier|RepositoryNotFoundError|GatedRepoError"
        r"|RevisionNotFoundError|EntryNotFoundError|HFValidationError|Repository Not Found for url|Cannot access gated repo"
        r"|\b(?:401|403|404) Client Error|does not appear to have a file named|Can't load (?:the )?(?:config|tokenizer|configuration)"
        r"|OfflineModeIsEnabled|couldn't connect to 'https://huggingface\.co'"
        r"|(?:No such file or directory|FileNotFoundError)[^\n]{0,160}(?:config\.json|\.safetensors|tokenizer)")),
    ("speculative_decoding_error", re.compile(
        r"speculative|eagle_worker|EAGLEWorker|draft_worker|DraftWorker|draft_model|draft model|multi_layer_eagle"
        r"|ngram_worker|eagle_utils|\bMTP\b|\bNextN\b", re.I)),
)
_ARGS_FRAME_RE = re.compile(
    r'File "[^"]*(?:server_args\.py|/arg_groups/[^"]*|server_args_config_parser\.py)"'
    r"|in (?:check_server_args|prepare_server_args|resolve_once|run_resolution_pipeline)\b"
)
_ARGS_EXC_RE = re.compile(r"^(?:ValueError|AssertionError|NotImplementedError|TypeError)\b")
_ARGS_MSG_RE = re.compile(
    r"Cannot set --|cannot be combined with|is incompatible with|requires (?:at least one|--)|--[\w-]+ requires"
    r"|must differ from|is not supported (?:with|when|together)|only supported (?:with|when)|mutually exclusive"
)
_WARMUP_RE = re.compile(r"warmup error|_wait_and_warmup|_execute_server_warmup", re.I)

_UNRECOGNIZED_RE = re.compile(r"unrecognized arguments: (?P<args>.+)$")
_AMBIGUOUS_RE = re.compile(r"ambiguous option: (?P<opt>\S+) could match (?P<choices>.+)$")
_DIVISIBLE_RE = re.compile(r"\b(?P<a>\d+) is not divisible by (?P<b>\d+)")
_PORT_RE = re.compile(r"\('?[\w.:\[\]-]*'?, (?P<port>\d+)\)|port (?P<port2>\d+)")
_ARCH_RE = re.compile(r"Model architectures? \[(?P<arch>[^\]]*)\]")

# Context lines that say an architecture "is not supported" only because its module failed to import (and build).
_IMPORT_ERROR_RE = re.compile(r"Ignore import error when loading (?P<module>[\w.]+)")


def classify(evidence: str) -> str:
    """Return the cause label whose rule first matches ``evidence`` (traceback and fatal lines), or "unknown".

    Why an ordered list: one failure often shows several symptoms (a capture failure *caused by* a JIT build
    error, an OOM *during* graph capture); the most specific, most actionable rule is listed first.
    """
    if not evidence:
        return "unknown"
    for cause, pattern in _CAUSE_RULES:
        if pattern.search(evidence):
            return cause
    if _ARGS_MSG_RE.search(evidence):
        return "incompatible_arguments"
    if _ARGS_FRAME_RE.search(evidence) and any(_ARGS_EXC_RE.match(line) for line in evidence.splitlines()):
        return "incompatible_arguments"
    if _WARMUP_RE.search(evidence):
        return "warmup_failed"
    return "unknown"


_HINTS = {
    "invalid_arguments": "The command line was rejected by SGLang's argument parser: fix the flag named in error_message in "
                         "sglang_server_args.",
    "incompatible_arguments": "Two flags in sglang_server_args contradict each other (see error_message): change or drop one of the "
                              "flags it names; the preflight lint runs the same rules before a restart.",
    "cuda_graph_capture_failed": "CUDA graph capture failed: lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20), e.g. to 16, "
                                 "and/or mem_fraction_static (e.g. 0.8); drop enable_torch_compile; as a last resort set "
                                 "cuda_graph_backend_decode: disabled (disable_cuda_graph: true on older versions), at a large speed cost.",
    "nccl_error": "NCCL failed between the GPUs: get its reason with NCCL_DEBUG=INFO (NCCL WARN lines), check /dev/shm size in "
                  "containers and IOMMU/ACS on PCIe boxes; try NCCL_P2P_DISABLE=1, and pin NCCL_SOCKET_IFNAME on multi-NIC hosts "
                  "(all in the unit's environment file, which the gpu_tuning role manages).",
    "p2p_unsupported": "These GPUs cannot access each other's memory (no P2P: GeForce cards, or ACS/IOMMU on PCIe): set "
                       "disable_custom_all_reduce: true in sglang_server_args (or enable_p2p_check: true to let SGLang test P2P).",
    "distributed_init_failed": "The ranks could not meet: check that dist_init_addr points to node 0 and that its port is reachable "
                               "from every node (firewall), that all nodes use the same nnodes/tp_size and distinct node_rank values, "
                               "and pin GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME on multi-NIC hosts (IPv6 addresses go in [addr]:port form).",
    "model_unavailable": "The model could not be found or fetched: check model_path (a local directory with config.json, or the "
                         "exact hub id), HF_TOKEN for gated or private repos, and network access; or let the model_cache role fetch "
                         "it once and serve it offline (HF_HUB_OFFLINE=1). For speculative decoding also check "
                         "speculative_draft_model_path.",
    "kernel_compile_failed": "A JIT kernel build (FlashInfer, Triton, DeepGEMM or sgl-kernel) failed: install the CUDA toolkit "
                             "matching the torch build (nvcc and headers, CUDA_HOME), gcc and ninja, make the cache directory "
                             "writable (SGLANG_CACHE_DIR or HOME in the unit), or choose another attention_backend (e.g. triton).",
    "driver_mismatch": "The NVIDIA driver does not match the CUDA runtime of this SGLang/torch build: upgrade the driver "
                       "(nvidia_driver role; CUDA 13 wheels need R580 or newer) or pin an SGLang version built for the installed "
                       "driver; after a driver upgrade without reboot, reboot (driver/library version mismatch).",
    "unsupported_gpu": "The installed build or the chosen kernel does not support this GPU's compute capability: pick another "
                       "attention_backend or quantization (FP8/FP4 kernels need newer GPUs), or install a build for this architecture.",
    "speculative_decoding_error": "Speculative decoding failed to start: check that speculative_algorithm and "
                                  "speculative_draft_model_path fit the target model (EAGLE3 needs an EAGLE3 draft head; NEXTN/MTP uses "
                                  "the checkpoint's own draft layers), set speculative_num_steps, speculative_eagle_topk and "
                                  "speculative_num_draft_tokens together, or remove the speculative_* keys to confirm the base model starts.",
    "warmup_failed": "The server came up but its warmup request failed: read the traceback; an HTTP 502/503 usually means a proxy "
                     "(unset http_proxy or set no_proxy=127.0.0.1,localhost in the unit environment). skip_server_warmup: true "
                     "hides the check but does not fix the cause.",
    "unknown": "No known cause matched: read traceback and error_message (and last_lines); the process ended before reaching ready.",
}


def _hint_invalid_arguments(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _UNRECOGNIZED_RE.search(message)
    if match:
        return (f"SGLang does not know {match.group('args').strip()}: remove it from sglang_server_args or fix its spelling "
                "(keys use SGLang's option names with underscores; flags removed in newer releases, such as "
                "enforce_piecewise_cuda_graph, must go); lint the flags against the installed version before restarting.")
    match = _AMBIGUOUS_RE.search(message)
    if match:
        return (f"{match.group('opt')} is only a prefix of {match.group('choices').strip()}: use the full option name, "
                "e.g. cuda_graph_max_bs_decode instead of cuda_graph_max_bs on SGLang 0.5.20 and later.")
    return None


def _hint_incompatible_arguments(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    if "encoder" in message and "url" in message.lower():
        return ("language_only: true needs encoder_urls on this SGLang version: set encoder_urls to the URL(s) of the encoder "
                "server(s), e.g. [\"http://10.0.0.5:30001\"], or remove language_only.")
    return None


def _hint_parallelism(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _DIVISIBLE_RE.search(message)
    detail = f" ({match.group('a')} is not divisible by {match.group('b')})" if match else ""
    return (f"The parallel layout does not fit{detail}: pick a tp_size that divides the model's attention heads "
            "(including vision heads of multimodal models) and experts, keep tp_size * pp_size divisible by nnodes, "
            "and keep attn_dp_size / ep_size within tp_size.")


def _hint_oom(message: str, phase: Optional[str], evidence: str) -> Optional[str]:
    if "Not enough memory" in message or "larger than the profiled value" in evidence:
        return ("The weights fit but no GPU memory is left for the KV cache: raise mem_fraction_static (e.g. by 0.05), "
                "lower context_length or max_running_requests, use more GPUs (tp_size) or a quantized model.")
    if phase in (None, "process_started", "parallel_init", "weights_loading"):
        return ("The model weights do not fit in GPU memory: increase tp_size, use a quantized checkpoint, or free the GPUs "
                "(another process may hold memory: nvidia-smi). mem_fraction_static does not help while loading weights.")
    return ("GPU memory ran out after the weights were loaded: lower mem_fraction_static (e.g. 0.8) to leave room for "
            "activations and CUDA graphs, and/or lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20) "
            "or chunked_prefill_size.")


def _hint_architecture(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _ARCH_RE.search(message)
    arch = match.group("arch") if match else "the model's architecture"
    return (f"This SGLang version has no implementation of {arch}: upgrade SGLang (sglang_version), try the transformers "
            "fallback (model_impl: transformers) where supported, or serve a supported model.")


def _hint_port(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _PORT_RE.search(message) or _PORT_RE.search(evidence)
    port = (match.group("port") or match.group("port2")) if match else None
    if port is None:
        return "The port is already in use: stop the process that holds it or set another port in sglang_server_args."
    return (f"Port {port} is already in use: stop the process that holds it (ss -ltnp 'sport = :{port}') "
            "or set another port in sglang_server_args.")


def _hint_unknown(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    if "exit code: -9" in evidence:
        return ("A scheduler was killed (exit code -9), most often by the Linux OOM killer (host RAM): check "
                "dmesg -T | grep -i oom and lower host memory use.")
    return None


# Hints that depend on details of the failure; None from one of these falls back to _HINTS.
_HINT_DETAILS: Dict[str, Callable[[str, Optional[str], str], Optional[str]]] = {
    "invalid_arguments": _hint_invalid_arguments,
    "incompatible_arguments": _hint_incompatible_arguments,
    "parallelism_mismatch": _hint_parallelism,
    "gpu_out_of_memory": _hint_oom,
    "unsupported_model_architecture": _hint_architecture,
    "port_in_use": _hint_port,
    "unknown": _hint_unknown,
}


def hint_for(cause: Optional[str], error_message: Optional[str], phase: Optional[str], evidence: str = "") -> Optional[str]:
    """Return a concrete next step for ``cause``: the flag to change and how (keys of ``sglang_server_args``).

    Why separate: hints depend on details (the unrecognised flag, the busy port, the phase an OOM hit) and
    are worth testing on their own.
    """
    if cause is None:
        return None
    detail = _HINT_DETAILS.get(cause)
    hint = detail(error_message or "", phase, evidence) if detail else None
    return hint or _HINTS.get(cause)


def cause_for(evidence: str, context: str, argparse_error: bool = False) -> str:
    """The cause label of a failure: from its evidence first, then from the notable lines logged before it.

    Why the context: some tracebacks do not say why (a scheduler killed mid-load, a generic "not supported"),
    while a line logged earlier does (an NCCL WARN, a failed kernel build). An argparse error is always
    ``invalid_arguments``, whatever its message resembles.
    """
    if argparse_error:
        return "invalid_arguments"
    cause = classify(evidence)
    if cause not in ("unknown", "unsupported_model_architecture"):
        return cause
    from_context = classify(context)
    if cause == "unknown":
        return from_context
    if from_context == "kernel_compile_failed" and _IMPORT_ERROR_RE.search(context):
        return from_context  # the architecture "is not supported" because its module failed to build
    return cause
