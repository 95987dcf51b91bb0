# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Startup-log scanner for SGLang: follow the phases of a start and decide ready / failed / starting.

Why a pure scanner over text: the launch module follows the unit's journal and must give a verdict within
about a second of the fatal line, with the whole traceback, a cause label and a concrete hint (design.md,
"The launch contract"). Everything that reads log text lives here, away from systemd and HTTP, so it is
tested on real SGLang logs copied from public issues (``tests/unit/plugins/module_utils/data/startup_logs``).

What it knows about SGLang logs (sglang-facts.md sections 1-4, 10):

* records look like ``[2026-11-30 09:01:58 TP1] message`` (older: ``[09:01:58 TP1]``); scheduler ranks add
  ``DP<n> PP<n> TP<n> EP<n>`` tags, only for dimensions > 1; continuation lines (tracebacks, multi-line
  messages) carry no prefix;
* phases are recognised by stable prefixes that survive version drift (``Init torch distributed`` /
  ``Init parallel``, ``Load weight``, ``KV Cache is allocated`` / ``Memory pool end``, ``Capture ... graph``,
  ``Uvicorn running on``, warmup requests, ``The server is fired up and ready to roll!``);
* a traceback alone is not fatal (a retried hub download, a failed request after ready, shutdown noise);
  fatal are: an argparse error, ``Scheduler hit an exception``, ``Initialization failed. warmup error``,
  ``Received sigquit from a child process``, an uncaught top-level exception, and a few unmistakable
  lines (``Failed: Cuda error ...``, uvicorn's bind error, systemd's ``Main process exited``);
* ``Received sigquit`` often arrives *before* the scheduler's traceback (two processes race on one pipe),
  so a generic fatal marker waits, boundedly, for the traceback that explains it (``pending``).

Lines may carry a journal prefix (``short``/``short-precise``/``short-iso``/``short-full``), a docker compose
prefix (``svc  | ``) or a Ray actor prefix, or none (``cat``). Tracebacks of different ranks are kept apart
by rank tag and journal PID. Every text field of the result passes through :func:`redact.redact`.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import collections
import re
from typing import Any, Callable, Deque, Dict, Iterable, List, NamedTuple, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import find_secrets, may_contain_secret, redact

# Startup phases in the order SGLang goes through them (sglang-facts.md section 4).
PHASES = (
    "process_started",
    "parallel_init",
    "weights_loading",
    "kv_cache_allocated",
    "cuda_graph_capture",
    "http_up",
    "warmup",
    "ready",
)
_PHASE_ORDER = {name: index for index, name in enumerate(PHASES)}

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

# Bounds that keep feed() O(1) amortised and the wait for a late traceback finite.
AWAIT_TRACEBACK_LINES = 200  # after a generic fatal marker, lines to wait for the traceback that explains it
STALE_TRACEBACK_LINES = 200  # an open traceback that got no line for this long is closed
CANDIDATE_WINDOW_LINES = 50  # a plain traceback closed this close to a fatal marker is taken as its cause
TRACEBACK_HEAD_LINES = 1000  # very long tracebacks keep their head and tail, with a count of what was left out
TRACEBACK_TAIL_LINES = 1000
TAIL_BUFFER_LINES = 40  # lines held while deciding whether text after a blank line still belongs to an exception
LAST_LINES = 20  # last log lines returned for the failure report
CONTEXT_LINES = 20
MAX_LEARNED_SECRETS = 64  # values learned from secret-looking fields of the log, masked in everything returned

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# journalctl -o short / short-precise / short-iso / short-full, then ``host ident[pid]: message``.
_JOURNAL_RE = re.compile(
    r"^(?P<time>[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|(?:[A-Z][a-z]{2} )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [A-Z]{2,5})?)"
    r" (?P<host>\S+) (?P<ident>[^\s\[\]:]+)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)$"
)
# docker compose: ``svc-1  | message`` (at least one space before the bar, at most one after it is eaten).
_COMPOSE_RE = re.compile(r"^(?P<svc>[A-Za-z0-9][\w.-]*) +\| ?(?P<msg>.*)$")
# Ray actors: ``(SGLangEngine pid=23902) message``.
_RAY_RE = re.compile(r"^\((?P<actor>[\w:.-]+) pid=(?P<pid>\d+)(?:, ip=[\d.]+)?\) ?(?P<msg>.*)$")
# SGLang's record prefix: ``[2025-06-23 15:37:01 DP0 TP1 EP1] body`` or ``[23:17:01 TP7] body``.
_RECORD_RE = re.compile(
    r"^\[(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?|\d\d:\d\d:\d\d(?:[.,]\d+)?)"
    r"(?P<tags>(?: [A-Z][A-Z_]*\d+)*)\] ?(?P<body>.*)$"
)

_TB_START_RE = re.compile(r"^(?P<pre>.*?)Traceback \(most recent call last\):\s*$")
# Headers SGLang prints before a traceback on its fatal paths (scheduler, detokenizer, DP controller, warmup; 0.3-era
# ``Exception in run_tp_server:``). Not uvicorn's per-request ``Exception in ASGI application`` nor asyncio's callbacks.
_FATAL_HEADER_RE = re.compile(
    r"hit an exception|warmup error|Initialization failed"
    r"|Exception in (?:run_tp_server|ControllerSingle|ControllerMulti|ModelRpcClient|ModelTpServer|run_\w+_process)",
    re.IGNORECASE,
)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]*)", line \d+(?:, in (?P<func>.+))?')
_CHAIN_RE = re.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)\s*$"
)
# Used only to tell an unindented exception line from an unindented code line (pasted logs lose indentation).
_EXC_LIKE_RE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Timeout)\b(?::|$)"
    r"|^(?:[A-Za-z_]\w*\.)*[A-Z]\w*: "
)
# Lines that are log records of some program, hence never part of a Python exception message.
_LOGLIKE_RE = re.compile(
    r"^(?:\[(?:\d|Gloo\]|rank\d)|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b[: ]|[IWEF]\d{4} \d\d:\d\d:\d\d"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\S+:\d+:\d+ \[\d+\] NCCL |Killed\b|Loading (?:safetensors|pt) checkpoint"
    r"|Capturing (?:batches|CUDA graph)|usage: |[\w./-]+(?: serve)?: error: |[\w@.\\-]+\.(?:service|scope): )"
)
# An uncaught exception at the top of a process: the interpreter is exiting.
_TOPLEVEL_FUNCS = frozenset(("<module>", "_run_module_as_main", "_run_code"))
# Exceptions SGLang only raises while starting, and always fatally.
_FATAL_EXCEPTION_RE = re.compile(
    r"Capture cuda graph failed|Not enough memory\. Please try to increase --mem-fraction-static"
    r"|Not enough memory to allocate KV cache",
    re.IGNORECASE,
)

_USAGE_RE = re.compile(r"^usage: \S")
_ARGPARSE_RE = re.compile(
    r"^(?P<prog>(?:[\w.-]*/)*(?:sglang(?: serve)?|launch_server(?:\.py)?|__main__\.py|serve\.py)): error: (?P<msg>.+)$"
)
_ARGPARSE_ANY_RE = re.compile(r"^(?P<prog>[\w./-]+(?: [\w.-]+)?): error: (?P<msg>.+)$")

# Fatal markers outside tracebacks. ``intrinsic`` ones explain themselves (no traceback will follow).
_MARKERS = (
    (re.compile(r"Received sigquit from a child proces"), False),
    (re.compile(r"SIGQUIT received"), False),
    (re.compile(r"scheduler died during initialization"), False),
    (re.compile(r"Initialization failed\. Please see the error messages above"), False),
    (re.compile(r"Subprocess \S+ \(pid=\d+\) crashed with exit code"), False),
    (re.compile(r"Child process unexpectedly failed with an exit code"), False),
    (re.compile(r"^Killed$"), False),
    (re.compile(r"^Failed: Cuda error"), True),
    (re.compile(r"error while attempting to bind on address"), True),
)
_SYSTEMD_EXIT_RE = re.compile(
    r"(?:^|\.service: )(?:Main process exited, code=|Failed with result '|Control process exited, code=)"
)
_SYSTEMD_LINE_RE = re.compile(r"^[\w@.\\-]+\.(?:service|scope): ")

# Notable lines outside tracebacks that explain a failure whose traceback does not (kept, bounded).
_CONTEXT_RE = re.compile(
    r"Ignore import error when loading|NCCL WARN|socketStartConnect|timed out after \d+ ?ms|\[c10d\][^\n]{0,200}time"
    r"|ninja: build stopped|nvcc fatal|fatal error: |collect2: error|no kernel image|not compatible with the current PyTorch"
    r"|NVIDIA driver on your system is too old|Found no NVIDIA driver|Failed: Cuda error|scheduler died during initialization"
    r"|error while attempting to bind",
    re.IGNORECASE,
)
_IMPORT_ERROR_RE = re.compile(r"Ignore import error when loading (?P<module>[\w.]+)")

# One search per line finds the phase a line announces; the first matching group wins.
_PHASE_RE = re.compile(
    r"(?P<parallel_init>Init (?:torch distributed|parallel) (?:begin|ends)|sglang is using nccl|\bNCCL INFO\b"
    r"|^\[Gloo\] Rank|Setup Custom allreduce|Custom ?allreduce is disabled)"
    r"|(?P<weights_loading>Load weight (?:begin|end)|Loading (?:safetensors|pt) checkpoint shards"
    r"|Using model weights format|Found local HF snapshot)"
    r"|(?P<kv_cache_allocated>KV Cache is allocated|Memory pool end|KV cache allocated|KV Cache VA upper bound)"
    r"|(?P<cuda_graph_capture>Capture (?:[\w-]+ )*(?:cuda|CUDA) graph (?:begin|end|bs)|Capturing batches"
    r"|Capture (?:piecewise|prefill|decode) )"
    r"|(?P<http_up>Uvicorn running on|Listening at: http|Listening on http)"
    r"|(?P<warmup>\"(?:GET /(?:get_)?model_info|POST /generate|POST /v1/chat/completions)|Prefill batch)"
    r"|(?P<ready>fired up and ready to roll)",
    re.IGNORECASE,
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


class LogLine(NamedTuple):
    """One log line split into its parts, parsed once and read by several decisions."""

    raw: str  # the line without colour codes and line ending
    msg: str  # the program's message, journal / compose / Ray prefix removed (indentation kept)
    pid: Optional[str]  # journal or Ray PID, when the transport gave one
    ident: Optional[str]  # journal identifier (``sglang``, ``systemd``)
    journal_time: Optional[str]
    log_time: Optional[str]  # SGLang's own ``[...]`` time
    tags: Optional[str]  # SGLang rank tags (``TP1``, ``DP0 TP0 EP0``); "" for an untagged record, None for no record
    body: str  # the message without SGLang's record prefix
    record: bool  # the message starts with SGLang's ``[time tags]`` prefix


def parse_line(line: str) -> LogLine:
    """Strip colour codes and any journal / compose / Ray prefix, then split off SGLang's record prefix.

    Why: the same SGLang line reaches the scanner bare (``journalctl -o cat``), with a journal prefix
    (``Nov 30 09:01:55.123456 host sglang[123]: ...``), from docker compose or from a Ray actor; every later
    decision works on the message and its rank tags, whatever the transport added.
    """
    raw = line.rstrip("\r\n")
    if "\x1b" in raw:
        raw = _ANSI_RE.sub("", raw)
    msg = raw
    pid = ident = journal_time = None
    match = _JOURNAL_RE.match(msg)
    if match:
        msg, pid, ident, journal_time = match.group("msg"), match.group("pid"), match.group("ident"), match.group("time")
    if msg[:1] not in ("", " ", "\t", "[", "("):
        match = _COMPOSE_RE.match(msg)
        if match:
            msg = match.group("msg")
    if msg[:1] == "(":
        match = _RAY_RE.match(msg)
        if match:
            msg, pid = match.group("msg"), match.group("pid")
    if msg[:1] == "[":
        match = _RECORD_RE.match(msg)
        if match:
            return LogLine(raw, msg, pid, ident, journal_time, match.group("time"), match.group("tags").strip(),
                           match.group("body"), True)
    return LogLine(raw, msg, pid, ident, journal_time, None, None, msg, False)


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


class _Traceback:  # pylint: disable=too-many-instance-attributes
    """A traceback being collected: its lines, whose it is (journal PID, rank tags) and where parsing stands.

    Plain state, no behaviour beyond storing lines: the scanner drives it (many small fields, one per fact).
    """

    __slots__ = ("head", "rest", "omitted", "pid", "tags", "header_line", "fatal", "state", "blanks", "tail",
                 "tail_lines", "last_kind", "exception_line", "part_frames", "last_line", "closed", "closed_at")

    def __init__(self, pid: Optional[str], tags: Optional[str], header_line: Optional[str], line_no: int) -> None:
        self.head: List[str] = ["Traceback (most recent call last):"]
        self.rest: Deque[str] = collections.deque(maxlen=TRACEBACK_TAIL_LINES)
        self.omitted = 0
        self.pid = pid
        self.tags = tags
        self.header_line = header_line
        self.fatal = False
        self.state = "frames"  # frames | exception | tail | chain
        self.blanks = 0
        self.tail: List[str] = []
        self.tail_lines: List[LogLine] = []
        self.last_kind = "header"
        self.exception_line: Optional[str] = None
        self.part_frames = 0  # frames of the current part of a chained traceback
        self.last_line = line_no
        self.closed = False
        self.closed_at = 0

    def append(self, text: str) -> None:
        """Add a line, first any blank lines held back; very long tracebacks keep head and tail."""
        for _blank in range(self.blanks):
            self._store("")
        self.blanks = 0
        self._store(text)

    def _store(self, text: str) -> None:
        text = text.rstrip()
        if len(self.head) < TRACEBACK_HEAD_LINES:
            self.head.append(text)
            return
        if len(self.rest) == self.rest.maxlen:
            self.omitted += 1
        self.rest.append(text)

    def text(self) -> str:
        """The traceback as one string, without trailing blank lines."""
        lines = list(self.head)
        if self.omitted:
            lines.append(f"... {self.omitted} traceback lines omitted ...")
        lines.extend(self.rest)
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines)

    def owns(self, line: LogLine) -> bool:
        """Whether a record line comes from the same process/rank (it then ends this traceback's message)."""
        same_tags = (self.tags or "") == (line.tags or "")
        same_pid = self.pid is None or line.pid is None or self.pid == line.pid
        return same_tags and same_pid


class StartupLogScanner:  # pylint: disable=too-many-instance-attributes
    """Incremental scanner: feed journal lines as they arrive, ask for the verdict at any time.

    ``feed`` is O(1) amortised per line; ``result`` builds the report (cheap, call it when needed).
    ``is_final`` tells a verdict that can no longer change from "failed, but the traceback is still
    arriving" (``pending == "traceback_open"``) or "a fatal marker came first, its traceback may follow"
    (``pending == "awaiting_traceback"``): the caller waits a bounded time, then calls :meth:`close`.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: List[str] = [s for s in secrets if isinstance(s, str) and s]
        self._line_no = 0
        self._phases: List[Dict[str, Any]] = []
        self._seen_phases: set = set()
        self._phase: Optional[str] = None
        self._ready = False
        self._ready_line: Optional[str] = None
        self._failed = False
        self._failed_at = 0
        self._fatal_line: Optional[str] = None
        self._fatal_tb: Optional[_Traceback] = None
        self._marker_intrinsic = False
        self._markers: List[str] = []
        self._argparse_line: Optional[str] = None
        self._usage_at = -1000
        self._pending_header: Optional[Tuple[int, LogLine]] = None
        self._open: List[_Traceback] = []
        self._last_closed: Optional[_Traceback] = None
        self._tracebacks = 0
        self._context: Deque[str] = collections.deque(maxlen=CONTEXT_LINES)
        self._last_lines: Deque[str] = collections.deque(maxlen=LAST_LINES)
        self._closed = False
        self._exited = False
        self._frozen = False
        self._weights_loaded = False  # "Load weight end" seen: an OOM from here on is not about the weights

    # ----------------------------------------------------------------------------------------------- input
    def feed(self, line: Any, timestamp: Any = None) -> None:
        """Take one journal line (bare or with a journal prefix); ``timestamp`` is recorded per phase.

        Tolerant on purpose: bytes are decoded, embedded newlines split, anything else is ignored rather than
        raised, because a scanner that throws would hide the very failure it is there to report.
        """
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode("utf-8", "replace")
        if not isinstance(line, str):
            return
        if "\n" in line:
            for part in line.split("\n"):
                self._feed_one(part, timestamp)
            return
        self._feed_one(line, timestamp)

    def close(self, exited: bool = True) -> None:
        """No more lines will come: finish open tracebacks and make the verdict final.

        ``exited`` says the process ended (the unit left ``active``, the main PID is gone): a start that did
        not reach ready then failed, with the best evidence seen. With ``exited=False`` (the caller only stops
        reading) a start without failure evidence stays "starting".
        """
        if self._closed:
            return
        for tb in list(self._open):
            self._close_traceback(tb)
        if exited and not self._ready and not self._failed:
            self._fail(None)
        self._exited = exited
        self._closed = True

    # ----------------------------------------------------------------------------------------------- verdict
    def result_outcome(self) -> str:
        """The outcome alone ("ready", "failed" or "starting"), cheap enough to ask after every line."""
        if self._ready:
            return "ready"
        return "failed" if self._failed else "starting"

    def current_phase(self) -> Optional[str]:
        """The latest phase reached, without building the whole report."""
        return self._phase

    @property
    def is_final(self) -> bool:
        """Whether the verdict can no longer change."""
        return self._final_state()[0]

    def result(self) -> Dict[str, Any]:
        """Return the verdict with its evidence; every text field is redacted."""
        final, pending = self._final_state()
        tb = self._evidence_traceback()
        error_message = self._error_message(tb)
        evidence = self._evidence(tb)
        if self._ready:
            outcome, cause = "ready", None
        elif self._failed:
            outcome, cause = "failed", self._cause(evidence)
        else:
            outcome, cause = "starting", None
        phase = self._phase
        secrets = self._secrets
        hint_phase = "kv_cache_allocated" if (phase == "weights_loading" and self._weights_loaded) else phase

        def red(text: Optional[str]) -> Optional[str]:
            return redact(text, secrets) if text else text

        return {
            "outcome": outcome,
            "cause": cause,
            "hint": red(hint_for(cause, error_message, hint_phase, evidence)),
            "phase": phase,
            "phases": [dict(entry, line=red(entry["line"])) for entry in self._phases],
            "traceback": red(tb.text()) if (tb is not None and outcome == "failed") else None,
            "fatal_line": red(self._fatal_line) if outcome == "failed" else None,
            "error_message": red(error_message) if outcome == "failed" else None,
            "ready_line": red(self._ready_line),
            "rank": (tb.tags or None) if (tb is not None and outcome == "failed") else None,
            "is_final": final,
            "pending": pending,
            "tracebacks_seen": self._tracebacks,
            "lines_seen": self._line_no,
            "last_lines": [red(text) for text in self._last_lines],
        }

    # ----------------------------------------------------------------------------------------------- internals
    def _feed_one(self, line: str, timestamp: Any) -> None:
        self._line_no += 1
        info = parse_line(line)
        if info.raw:
            self._last_lines.append(info.raw)
        if may_contain_secret(info.raw):
            for value in find_secrets(info.raw):
                if len(value) >= 6 and value not in self._secrets and len(self._secrets) < MAX_LEARNED_SECRETS:
                    self._secrets.append(value)
        if self._closed or self._ready or self._frozen:
            return
        if self._failed and self._final_state()[0]:
            self._frozen = True
            return
        if self._phase is None and info.raw.strip():
            self._enter_phase("process_started", info, timestamp)
        for tb in list(self._open):
            if self._line_no - tb.last_line > STALE_TRACEBACK_LINES:
                self._close_traceback(tb)
        if self._systemd(info):
            return
        if self._open and self._route(info):
            return
        self._standalone(info, timestamp)

    def _systemd(self, info: LogLine) -> bool:
        """systemd's own lines about the unit: an exit before ready is fatal; never part of a traceback."""
        if info.ident != "systemd" and not _SYSTEMD_LINE_RE.match(info.msg):
            return False
        if _SYSTEMD_EXIT_RE.search(info.msg):
            for tb in list(self._open):  # the process is gone: whatever it printed is complete
                self._close_traceback(tb)
            self._marker(info.msg.strip(), False, info.msg.strip())
        return True

    def _route(self, info: LogLine) -> bool:
        """Give the line to the open traceback it continues; True if a traceback took it."""
        if info.record:
            for tb in list(self._open):
                if tb.state in ("exception", "tail") or tb.owns(info):
                    self._close_traceback(tb)
            return False
        tb = None
        if info.pid is not None:
            for candidate in reversed(self._open):
                if candidate.pid == info.pid:
                    tb = candidate
                    break
        if tb is None:
            tb = self._open[-1]
        taken = self._continue(tb, info)
        if taken:
            tb.last_line = self._line_no
        return taken

    def _continue(self, tb: _Traceback, info: LogLine) -> bool:  # pylint: disable=too-many-return-statements
        """Decide whether ``info`` continues ``tb`` (Python's traceback layout), closing ``tb`` when it ends.

        Returns True when ``tb`` took the line; False when the line is not part of it (and ``tb`` may have
        been closed), so the caller treats the line on its own.
        """
        if tb.state == "chain":
            return self._continue_chain(tb, info)
        if tb.state == "tail":
            return self._continue_tail(tb, info)
        msg = info.msg
        text = msg.strip()
        if not text:
            tb.blanks += 1
            return True
        if _CHAIN_RE.match(text):
            tb.append(text)
            tb.state, tb.last_kind = "chain", "sep"
            return True
        frame = _FRAME_RE.match(msg)
        if frame:
            if tb.state == "exception":  # an unindented paste fooled us: that "exception" was a code line
                tb.exception_line = None
            tb.append(msg)
            tb.state, tb.last_kind = "frames", "frame"
            tb.part_frames += 1
            if tb.part_frames == 1 and self._is_toplevel(frame):
                self._make_fatal(tb)
            return True
        if _TB_START_RE.match(msg):
            self._close_traceback(tb)
            return False
        if tb.state == "frames":
            return self._continue_frames(tb, msg, text)
        # state "exception": more lines of a multi-line message, or the end of the traceback
        if _LOGLIKE_RE.match(text):
            self._close_traceback(tb)
            return False
        if tb.blanks == 0:
            tb.append(msg)
            tb.last_kind = "message"
            return True
        tb.tail, tb.tail_lines = [""] * tb.blanks + [msg], [info]
        tb.blanks = 0
        tb.state = "tail"
        return True

    def _continue_frames(self, tb: _Traceback, msg: str, text: str) -> bool:
        """Between frames: a code line, the exception line, or another process's line that is not ours."""
        indented = msg[:1] in (" ", "\t")
        if not indented and _LOGLIKE_RE.match(text):
            return False  # another process's line in the middle of this traceback
        if indented or (tb.last_kind == "frame" and not _EXC_LIKE_RE.match(text)):
            tb.append(msg)
            tb.last_kind = "code"
            return True
        tb.append(msg)
        tb.state, tb.last_kind, tb.exception_line = "exception", "exception", text
        if _FATAL_EXCEPTION_RE.search(text):
            self._make_fatal(tb)
        return True

    def _continue_chain(self, tb: _Traceback, info: LogLine) -> bool:
        """After "During handling ..." / "The above exception ...": blank lines, then the next part's header."""
        start = _TB_START_RE.match(info.msg)
        if not info.msg.strip():
            tb.blanks += 1
            return True
        if start and not start.group("pre").strip():
            tb.append(info.msg.strip())
            tb.state, tb.last_kind, tb.part_frames = "frames", "header", 0
            return True
        self._close_traceback(tb)
        return False

    def _continue_tail(self, tb: _Traceback, info: LogLine) -> bool:
        """Text after a blank line that follows an exception: more of the message if a chain separator follows."""
        msg = info.msg
        text = msg.strip()
        if not text:
            tb.tail.append("")
            tb.tail_lines.append(info)
            return True
        if _CHAIN_RE.match(text):
            for held in tb.tail:
                tb.append(held)
            tb.tail, tb.tail_lines = [], []
            tb.append(text)
            tb.state, tb.last_kind = "chain", "sep"
            return True
        if (_LOGLIKE_RE.match(text) or _TB_START_RE.match(msg) or _FRAME_RE.match(msg) or msg[:1] in (" ", "\t")
                or len(tb.tail) >= TAIL_BUFFER_LINES):
            self._close_traceback(tb)
            return False
        tb.tail.append(msg)
        tb.tail_lines.append(info)
        return True

    @staticmethod
    def _is_toplevel(frame: "re.Match[str]") -> bool:
        func = (frame.group("func") or "").strip()
        if func in _TOPLEVEL_FUNCS:
            return True
        return func == "_bootstrap" and frame.group("file").endswith("multiprocessing/process.py")

    def _standalone(self, info: LogLine, timestamp: Any) -> None:
        """A line outside any traceback: a traceback start, an argparse error, a fatal marker or a phase line."""
        body = info.body
        text = body.strip()
        if not text:
            return
        start = _TB_START_RE.match(body)
        if start:
            self._start_traceback(info, start.group("pre").strip())
            return
        if info.record and text.endswith(":") and _FATAL_HEADER_RE.search(text):
            self._pending_header = (self._line_no, info)
        if _USAGE_RE.match(text):
            self._usage_at = self._line_no
            return
        argparse = _ARGPARSE_RE.match(text)
        if argparse is None and self._line_no - self._usage_at < 100:
            argparse = _ARGPARSE_ANY_RE.match(text)
        if argparse:
            if not self._failed:
                self._argparse_line = text
                self._fail(text)
            return
        for pattern, intrinsic in _MARKERS:
            if pattern.search(text):
                self._context.append(text)
                self._marker(info.msg.strip(), intrinsic, text)
                return
        if _CONTEXT_RE.search(text):
            self._context.append(text)
        if not self._failed:
            self._detect_phase(info, timestamp)

    def _start_traceback(self, info: LogLine, header: str) -> None:
        header_line: Optional[str] = info.msg.strip() if header else None
        fatal = bool(header) and bool(_FATAL_HEADER_RE.search(header))
        pid, tags = info.pid, info.tags
        pending = self._pending_header
        if not header and pending is not None and self._line_no - pending[0] <= 1:
            header_line = pending[1].msg.strip()
            tags = pending[1].tags
            pid = pid or pending[1].pid
            fatal = True
        self._pending_header = None
        tb = _Traceback(pid, tags, header_line, self._line_no)
        self._open.append(tb)
        self._tracebacks += 1
        if fatal:
            self._make_fatal(tb)

    def _make_fatal(self, tb: _Traceback) -> None:
        tb.fatal = True
        if self._ready:
            return
        if self._fatal_tb is None:
            self._fatal_tb = tb
        self._fail(tb.header_line or "Traceback (most recent call last):")

    def _close_traceback(self, tb: _Traceback) -> None:
        if tb.closed:
            return
        tb.closed = True
        tb.closed_at = self._line_no
        if tb in self._open:
            self._open.remove(tb)
        held = tb.tail_lines
        tb.tail, tb.tail_lines = [], []
        if not tb.fatal:
            self._last_closed = tb
        for info in held:  # lines held after a blank turned out not to belong to the exception
            if info.msg.strip():
                self._standalone(info, None)

    def _marker(self, line: str, intrinsic: bool, message: str) -> None:
        """A fatal line outside tracebacks: ``line`` as logged, ``message`` without SGLang's record prefix."""
        if self._ready:
            return
        self._markers.append(message)
        if intrinsic:
            self._marker_intrinsic = True
        self._fail(line)

    def _fail(self, line: Optional[str]) -> None:
        if self._failed:
            return
        self._failed = True
        self._failed_at = self._line_no
        self._fatal_line = line

    def _detect_phase(self, info: LogLine, timestamp: Any) -> None:
        match = _PHASE_RE.search(info.body)
        if not match:
            return
        name = match.lastgroup
        if name == "warmup" and "http_up" not in self._seen_phases:
            return
        self._enter_phase(name, info, timestamp)
        if name == "weights_loading" and "Load weight end" in info.body:
            self._weights_loaded = True
        if name == "ready":
            self._ready = True
            self._ready_line = info.msg.strip()

    def _enter_phase(self, name: str, info: LogLine, timestamp: Any) -> None:
        if name in self._seen_phases:
            return
        self._seen_phases.add(name)
        self._phases.append({
            "phase": name,
            "first_seen": timestamp,
            "log_time": info.log_time or info.journal_time,
            "line_no": self._line_no,
            "line": info.msg.strip(),
        })
        if self._phase is None or _PHASE_ORDER[name] > _PHASE_ORDER[self._phase]:
            self._phase = name

    def _final_state(self) -> Tuple[bool, Optional[str]]:
        """(final, pending): why a failed verdict may still change, or None."""
        if self._ready or self._closed or self._argparse_line is not None:
            return True, None
        if not self._failed:
            return False, None
        if self._fatal_tb is not None:
            return (True, None) if self._fatal_tb.closed else (False, "traceback_open")
        if self._open:
            return False, "traceback_open"
        explained = self._marker_intrinsic or self._candidate() is not None
        if explained or self._line_no - self._failed_at > AWAIT_TRACEBACK_LINES:
            return True, None
        return False, "awaiting_traceback"

    def _candidate(self) -> Optional[_Traceback]:
        """A plain traceback that closed just before (or after) the fatal marker: the likely explanation."""
        tb = self._last_closed
        if tb is None or not self._failed:
            return None
        if self._exited or tb.closed_at >= self._failed_at - CANDIDATE_WINDOW_LINES:
            return tb
        return None

    def _evidence_traceback(self) -> Optional[_Traceback]:
        if self._fatal_tb is not None:
            return self._fatal_tb
        if not self._failed or self._argparse_line is not None:
            return None
        if self._open:
            return self._open[0]
        return self._candidate()

    def _error_message(self, tb: Optional[_Traceback]) -> Optional[str]:
        if self._argparse_line is not None:
            return self._argparse_line
        if tb is not None and tb.exception_line:
            return tb.exception_line
        if self._markers:
            return self._markers[0]
        if self._context:
            return self._context[-1]
        return None

    def _evidence(self, tb: Optional[_Traceback]) -> str:
        parts = [tb.text()] if tb is not None else []
        if self._fatal_line:
            parts.append(self._fatal_line)
        parts.extend(self._markers)
        return "\n".join(parts)

    def _cause(self, evidence: str) -> str:
        if self._argparse_line is not None:
            return "invalid_arguments"
        cause = classify(evidence)
        if cause not in ("unknown", "unsupported_model_architecture"):
            return cause
        context = "\n".join(self._context)
        from_context = classify(context)
        if cause == "unknown":
            return from_context
        if from_context == "kernel_compile_failed" and _IMPORT_ERROR_RE.search(context):
            return from_context  # the architecture "is not supported" because its module failed to build
        return cause


def scan_startup_log(text: str, ended: bool = False, secrets: Iterable[str] = ()) -> Dict[str, Any]:
    """Scan a whole log text; ``ended=True`` when the process is known to have exited after the last line.

    A thin wrapper over :class:`StartupLogScanner`, so batch and incremental scanning cannot disagree.
    """
    scanner = StartupLogScanner(secrets=secrets)
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    for line in (text or "").splitlines():
        scanner.feed(line)
    if ended:
        scanner.close(exited=True)
    return scanner.result()
