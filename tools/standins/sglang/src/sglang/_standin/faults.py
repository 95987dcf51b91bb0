"""Injected faults: what to break, where, and the traceback SGLang would print for it.

Faults come from environment variables (so a systemd environment file can set
them); see the README for the contract. A crash during model startup happens in
SGLang's scheduler subprocess: it logs ``Scheduler hit an exception: <traceback>``,
the launcher logs ``Received sigquit from a child process...`` and kills its whole
process tree, itself included, so systemd sees ``status=9/KILL``. The tracebacks
below follow the real call chains (module paths, function names) closely enough
that a log scanner and a human both recognise the cause.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Tuple

from . import settings

KINDS = ("crash", "hang", "port_in_use", "exit_after_ready", "unhealthy", "slow_start")
PHASES = ("args", "init", "load", "kv", "graph", "warmup")
CAUSES = ("generic", "oom_weights", "oom_kv", "oom_graph", "not_enough_memory", "nccl", "p2p",
          "model_not_found", "unsupported_arch", "kernel_compile")
DEFAULT_PHASE = {"generic": "load", "oom_weights": "load", "oom_kv": "kv", "oom_graph": "graph",
                 "not_enough_memory": "kv", "nccl": "init", "p2p": "init", "model_not_found": "args",
                 "unsupported_arch": "load", "kernel_compile": "graph"}
PHASE_OOM = {"load": "oom_weights", "kv": "oom_kv", "graph": "oom_graph"}


@dataclass(frozen=True)
class Faults:
    """The faults this process was asked to show."""

    kinds: FrozenSet[str]
    phase: str
    cause: str
    after_s: float
    exit_code: Optional[int]
    slow_factor: float

    def crash_in(self, phase: str) -> bool:
        """Whether to crash when ``phase`` starts."""
        return "crash" in self.kinds and self.phase == phase

    def hang_in(self, phase: str) -> bool:
        """Whether to stop making progress when ``phase`` starts."""
        return "hang" in self.kinds and self.phase == phase


def _cause_for(raw_cause: Optional[str], phase: Optional[str]) -> str:
    """``cuda_oom`` picks the OOM of the phase; no cause means a generic failure."""
    if raw_cause in (None, "", "cuda_oom", "oom"):
        if raw_cause and phase in PHASE_OOM:
            return PHASE_OOM[phase]
        return "oom_weights" if raw_cause else "generic"
    if raw_cause not in CAUSES:
        raise SystemExit(f"sglang stand-in: unknown fault cause {raw_cause!r}; one of {', '.join(CAUSES)}, cuda_oom")
    return raw_cause


def from_settings() -> Faults:
    """Read ``SGLANG_STANDIN_FAULT*`` (kinds may be combined with commas)."""
    raw = settings.get("fault", "") or ""
    kinds = frozenset(k.strip() for k in raw.split(",") if k.strip() and k.strip() != "none")
    unknown = kinds - set(KINDS)
    if unknown:
        raise SystemExit(f"sglang stand-in: unknown fault {', '.join(sorted(unknown))}; one of {', '.join(KINDS)}")
    phase = settings.get("fault_phase")
    cause = _cause_for(settings.get("fault_cause"), phase)
    phase = phase or DEFAULT_PHASE[cause]
    if phase not in PHASES:
        raise SystemExit(f"sglang stand-in: unknown fault phase {phase!r}; one of {', '.join(PHASES)}")
    code = settings.get("fault_exit_code")
    return Faults(kinds=kinds, phase=phase, cause=cause, after_s=settings.get_float("fault_after", 0.0),
                  exit_code=int(code) if code is not None else None,
                  slow_factor=settings.get_float("slow_factor", 10.0))


# --- traceback texts ------------------------------------------------------------------------

Frame = Tuple[str, int, str, str]

SCHEDULER_FRAMES: List[Frame] = [
    ("srt/managers/scheduler.py", 3169, "run_scheduler_process", "scheduler = Scheduler("),
    ("srt/managers/scheduler.py", 367, "__init__", "self.init_model_worker()"),
    ("srt/managers/scheduler.py", 562, "init_model_worker", "self.tp_worker = TpModelWorker("),
    ("srt/managers/tp_worker.py", 247, "__init__", "self._init_model_runner()"),
    ("srt/managers/tp_worker.py", 330, "_init_model_runner", "self._model_runner = ModelRunner("),
]
PHASE_FRAMES: Dict[str, List[Frame]] = {
    "init": [("srt/model_executor/model_runner.py", 391, "__init__", "min_per_gpu_memory = self.init_torch_distributed()"),
             ("srt/model_executor/model_runner.py", 790, "init_torch_distributed", "initialize_model_parallel(")],
    "load": [("srt/model_executor/model_runner.py", 420, "__init__", "self.initialize(min_per_gpu_memory)"),
             ("srt/model_executor/model_runner.py", 517, "initialize", "self.load_model()"),
             ("srt/model_executor/model_runner.py", 955, "load_model", "self.model = self.loader.load_model("),
             ("srt/model_loader/loader.py", 655, "load_model", "model = _initialize_model(")],
    "kv": [("srt/model_executor/model_runner.py", 420, "__init__", "self.initialize(min_per_gpu_memory)"),
           ("srt/model_executor/model_runner.py", 601, "initialize", "self.init_memory_pool(min_per_gpu_memory)"),
           ("srt/model_executor/model_runner.py", 1842, "init_memory_pool", "self.token_to_kv_pool = MHATokenToKVPool(")],
    "graph": [("srt/model_executor/model_runner.py", 420, "__init__", "self.initialize(min_per_gpu_memory)"),
              ("srt/model_executor/model_runner.py", 640, "initialize", "self.init_device_graphs()"),
              ("srt/model_executor/model_runner.py", 2210, "init_device_graphs", "self.graph_runner = CudaGraphRunner(self)"),
              ("srt/model_executor/cuda_graph_runner.py", 402, "__init__", "self.capture()")],
}

GRAPH_FAILED_HINT = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")


def cuda_oom_text(gpu_gib: float, tried_gib: float) -> str:
    """PyTorch's CUDA OOM message, with numbers from the profile's GPU."""
    free_mib = 312.0
    in_use = gpu_gib - free_mib / 1024
    return (f"CUDA out of memory. Tried to allocate {tried_gib:.2f} GiB. GPU 0 has a total capacity of {gpu_gib:.2f} GiB "
            f"of which {free_mib:.2f} MiB is free. Including non-PyTorch memory, this process has {in_use:.2f} GiB memory "
            f"in use. Of the allocated memory {in_use - 0.61:.2f} GiB is allocated by PyTorch, and 412.20 MiB is reserved "
            "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
            "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def exception_for(cause: str, context: Dict[str, str]) -> Tuple[List[Frame], str]:
    """Extra innermost frames and the final ``Type: message`` line of a cause."""
    gpu = float(context.get("gpu_gib", "47.41"))
    table: Dict[str, Tuple[List[Frame], str]] = {
        "generic": ([], f"RuntimeError: stand-in injected failure in phase {context.get('phase')}"),
        "oom_weights": ([("srt/model_loader/weight_utils.py", 523, "safetensors_weights_iterator",
                          "result = f.get_tensor(name)")], "torch.OutOfMemoryError: " + cuda_oom_text(gpu, 1.12)),
        "oom_kv": ([("srt/mem_cache/memory_pool.py", 712, "_create_buffers", "torch.zeros(")],
                   "torch.OutOfMemoryError: " + cuda_oom_text(gpu, 7.83)),
        "oom_graph": ([], "Exception: Capture cuda graph failed: " + cuda_oom_text(gpu, 0.52) + "\n" + GRAPH_FAILED_HINT),
        "not_enough_memory": ([("srt/model_executor/model_runner.py", 1790, "init_memory_pool", "raise RuntimeError(")],
                              "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                              f"Current value: mem_fraction_static={context.get('mem_fraction_static', '0.871')}"),
        "nccl": ([("srt/distributed/parallel_state.py", 1658, "initialize_model_parallel", "_TP = init_model_parallel_group("),
                  ("torch/distributed/distributed_c10d.py", 4798, "barrier", "work = group.barrier(opts=opts)")],
                 "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, "
                 "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5\n"
                 "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
                 "Last error:\nsocketStartConnect: Connect to 127.0.0.1<41393> failed : Software caused connection abort"),
        "p2p": ([("srt/distributed/parallel_state.py", 1658, "initialize_model_parallel", "_TP = init_model_parallel_group("),
                 ("srt/distributed/parallel_state.py", 311, "__init__", "self.ca_comm = CustomAllreduce("),
                 ("srt/distributed/device_communicators/custom_all_reduce.py", 168, "__init__",
                  "self._ptr = ops.init_custom_ar(")],
                "RuntimeError: CUDART error: peer access is not supported between these two devices"),
        "model_not_found": ([("srt/configs/model_config.py", 106, "__init__", "self.hf_config = get_config(")],
                            "OSError: " + context.get("model_not_found", "")),
        "unsupported_arch": ([("srt/model_loader/utils.py", 96, "get_model_architecture",
                               "raise ValueError(")],
                             f"ValueError: Model architectures ['{context.get('architecture')}'] are not supported for now. "
                             "Supported architectures: dict_keys(['LlamaForCausalLM', 'Qwen2ForCausalLM', "
                             "'Qwen3ForCausalLM', 'MistralForCausalLM', 'DeepseekV3ForCausalLM', 'Gemma3ForCausalLM'])"),
        "kernel_compile": ([("flashinfer/jit/core.py", 284, "build_and_load", "self.build(verbose, need_lock=False)"),
                            ("flashinfer/jit/cpp_ext.py", 294, "run_ninja", "raise RuntimeError(msg) from None")],
                           "RuntimeError: Ninja build failed. Ninja output:\n"
                           "[1/3] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile -c batch_decode.cu -o batch_decode.cuda.o\n"
                           "FAILED: batch_decode.cuda.o\n"
                           "flashinfer/data/include/flashinfer/attention/decode.cuh(412): error: identifier \"__nv_bfloat162\" "
                           "is undefined\n1 error detected in the compilation of \"batch_decode.cu\".\n"
                           "ninja: build stopped: subcommand failed."),
    }
    return table[cause]


def _format_frames(frames: List[Frame], root: Path) -> str:
    lines = []
    for rel, number, func, code in frames:
        base = root.parent if rel.startswith(("torch/", "flashinfer/")) else root
        lines.append(f'  File "{base / rel}", line {number}, in {func}\n    {code}')
    return "\n".join(lines)


def scheduler_traceback(cause: str, phase: str, context: Dict[str, str], package_root: Path) -> str:
    """The ``Traceback (most recent call last): ...`` text a scheduler would log for this cause."""
    inner, last = exception_for(cause, {**context, "phase": phase})
    frames = SCHEDULER_FRAMES + PHASE_FRAMES.get(phase, PHASE_FRAMES["load"]) + inner
    return "Traceback (most recent call last):\n" + _format_frames(frames, package_root) + "\n" + last + "\n"


def warmup_traceback(context: Dict[str, str], package_root: Path, cause: str) -> str:
    """What ``_execute_server_warmup`` logs when the warmup request fails."""
    _inner, last = exception_for(cause, {**context, "phase": "warmup"})
    frames = [("srt/entrypoints/http_server.py", 1592, "_execute_server_warmup", "res = requests.post(")]
    return "Traceback (most recent call last):\n" + _format_frames(frames, package_root) + "\n" + last + "\n"
