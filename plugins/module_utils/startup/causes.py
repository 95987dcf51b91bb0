# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a start failed: the cause labels, the rules that pick one from the evidence, and a hint for each.

Why a module of its own: the labels are a contract with operators (docs/startup-failure-causes.md explains
each one, with the real fixes each hint was checked against) and the rules change with every SGLang release that
words an error differently; the scanner only collects the evidence (the fatal traceback, the other tracebacks,
notable lines outside tracebacks, systemd's lines) and asks here what it means. The rules were written on the
development split of a verbatim corpus of real startup logs (``tests/data/startup_corpus``) and are measured on
its held-out test split by ``benchmarks/diagnosis_accuracy.py``.

A rule names the root cause, not the wrapper it surfaced in: SGLang reports most failures during CUDA graph
capture as ``Capture cuda graph failed: <the real error>``, so an out-of-memory, an illegal memory access, a
missing ``ninja`` or a lost peer inside that message is labelled by what it is.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Dict, Iterable, Optional, Pattern, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import starts_line

# Cause labels (docs/startup-failure-causes.md explains each one for operators).
CAUSES = (
    "invalid_arguments",
    "incompatible_arguments",
    "parallelism_mismatch",
    "gpu_out_of_memory",
    "host_resource_error",
    "cuda_graph_capture_failed",
    "illegal_memory_access",
    "nccl_error",
    "p2p_unsupported",
    "distributed_init_failed",
    "peer_rank_lost",
    "model_unavailable",
    "unsupported_model_architecture",
    "kernel_compile_failed",
    "jit_tool_missing",
    "package_mismatch",
    "driver_mismatch",
    "unsupported_gpu",
    "speculative_decoding_error",
    "port_in_use",
    "bind_permission_denied",
    "systemd_unit_error",
    "warmup_failed",
    "unknown",
)

# The torch extensions of accelerators other than CUDA (Ascend, Cambricon, Moore Threads, Intel, Gaudi).
_DEVICE_EXTENSIONS = r"(?:torch_npu|torch_mlu|torch_musa|intel_extension_for_pytorch|ipex|habana_frameworks|torch_gcu)"

# A KV transfer engine of PD disaggregation refusing to register GPU memory for RDMA: SGLang's Mooncake wrapper, NIXL's
# agent and its GPUNetIO backend.
_KV_REGISTRATION_FAILED = (r"Mooncake memory registration failed|\bregisterMem: registration failed"
                           r"|Can't register memory for unknown device")
# A feature that does not run under a kind of parallelism ("Prequant BitsAndBytes models with TP is not supported.").
_PARALLELISM_UNSUPPORTED = (r"\b(?:with|under|when using) (?:TP|PP|DP|EP|(?:tensor|pipeline|data|expert)[ _]parallel\w*)"
                            r"(?: ?> ?1)? (?:is|are) not supported\b")
# A kernel that takes 16-bit data only, in its own words.
_HALF_ONLY = (r"\bonly supports? (?:fp16|float16|half|bf16|bfloat16) (?:and|or|/) (?:fp16|float16|half|bf16|bfloat16)"
              r"(?: data ?types?| dtypes?)?\b")
# The torch.distributed backend left unset for a device value that names none of the device types SGLang knows, in the
# words of Python 3.10 and of 3.11 and later.
_BACKEND_UNSET = (r"local variable 'backend' referenced before assignment"
                  r"|cannot access local variable 'backend' where it is not associated with a value")
# A device value with an index, in server_args' repr or on the command line ("device='cuda:7'", "--device cuda:7").
_INDEXED_DEVICE_RE = re.compile(r"\bdevice(?:='|\s+|=)(?P<device>[a-z]+:\d+)\b")

# A layer of the model without the part that code walking the layers reads (its attention module, its self_attn).
_LAYER_LACKS = r"\bNo (?P<part>\w+) attribute in (?:the )?layer type <class '(?:[\w.]*\.)?(?P<layer>\w+)'>"

# A TMA descriptor the driver refuses as not supported (error 801): the GPU has no Tensor Memory Accelerator.
_NO_TMA = (r"Failed to initialize the TMA descriptor (?:801\b|due to (?:operation )?not supported)"
           r"|cuTensorMapEncode\w*[^\n]{0,80}(?:CUDA_ERROR_NOT_SUPPORTED|\b801\b)")

# A build step killed by a signal 9 (exit status 137): ninja's "FAILED: [code=137]", a CalledProcessError of ninja
# with status 137, a compiler's "Killed signal terminated program cicc".
_BUILD_KILLED = (r"FAILED: \[code=137\]|\bninja\b[^\n]*(?:\n[^\n]*){0,3}?returned non-zero exit status 137\b"
                 r"|Killed signal terminated program (?:cicc|cc1plus|ptxas|nvcc)")

# An Ascend operator's kernel that the installed CANN kernels cannot set up on this SoC.
_ASCEND_KERNEL_CONFIG = r"Parse dynamic kernel config fail|AclOpKernelInit failed"
# A kernel library's prebuilt binaries that target other GPU architectures than the one running (AITER's words).
_OTHER_ARCH_BUILD = r"prebuilt (?:\S+ ){0,2}targets \[(?P<built>[^\]\n]*)\] but not the running arch (?P<running>\w+)"

# The name a divisibility message gives the divisor ("by tp_size = 8", "by b_scales.size(1) = 5", "by 128"): named once.
_DIVISOR_NAME = r"(?:[\w .()\[\]]+?= ?)?"

# Build and kernel tools a JIT compile runs; named here once.
# GPU architectures by the names a check that refuses one says (an SM number, NVIDIA's family names, AMD's)
_ARCH_NAMES = (r"(?:NVIDIA |AMD )?(?:Hopper|Blackwell|Ampere|Ada(?: Lovelace)?|Turing|Volta|Pascal|sm_?\d{2,3}[af]?|SM ?\d{2,3}[af]?"
               r"|MI\d{3}\w*|gfx\d{3,4}\w*|CDNA ?\d|RDNA ?\d)")
_TOOLS = r"(?:ninja|nvcc|gcc|g\+\+|cc|c\+\+|clang|clang\+\+|ptxas|cicc|fatbinary|nvlink|hipcc|ld)"

# The lines between a frame and the exception raised in it: its code (indented, or not when a paste lost the
# indentation), Python 3.11 caret lines; never another frame.
_FRAME_BODY = r"(?:(?![ \t]*File \")[^\n]*\n){0,6}?"
# A model's weight loader (or a quantization method processing the loaded weights) that fails on a checkpoint: an
# assertion (a shape), a KeyError (a weight name it has no parameter for) or an IndexError (a scale of another shape)
# raised in it or in what it calls (a rule below, and its hint). Pasted newest line first (a UI that shows the last
# line on top), the exception comes before the frame: both orders.
_LOADER_FUNCS = r"(?:weight_loader\w*|load_weights?\w*|process_weights_after_loading)"
_LOADER_EXC = r"(?:AssertionError|KeyError|IndexError)\b"
_WEIGHT_LOADER_FAILED_RE = re.compile(
    r"File \"[^\"\n]*\", line \d+, in " + _LOADER_FUNCS + r"\n" + _FRAME_BODY
    + r"(?:[ \t]*File \"[^\"\n]*/srt/layers/quantization/[^\"\n]*\", line \d+, in \w+\n" + _FRAME_BODY + r")?" + _LOADER_EXC
    + r"|(?:^|(?<=\n))" + _LOADER_EXC + r"[^\n]*\n(?:(?![ \t]*File \")[^\n]*\n){0,3}?[ \t]*File \"[^\"\n]*\", line \d+, in " + _LOADER_FUNCS + r"\b")

# A model path that names a file, not a model directory: transformers' JSON read of it as the config fails (the read
# goes through the codec's frame, so up to a few lines of frames), or transformers says so itself.
_CONFIG_NOT_JSON = (r"|in _dict_from_json_file\n(?:[^\n]*\n){0,8}?(?:UnicodeDecodeError|(?:json\.decoder\.)?JSONDecodeError)\b"
                    r"|It looks like the config file at '[^'\n]*' is not a valid JSON file")
# A checkpoint file there but empty or cut: the loader's JSON read of the index fails, or safetensors' header.
_BROKEN_CHECKPOINT = (r"|in (?:filter_duplicate_safetensors_files|_prepare_weights|_get_weights_iterator|get_index_file\w*)\n"
                      r"(?:[^\n]*\n){0,16}?(?:json\.decoder\.)?JSONDecodeError\b"
                      r"|SafetensorError: Error while deserializing header|HeaderTooLarge")

# A bare assertion (the code line, Python 3.11 carets, then ``AssertionError`` with no message) on the head size an
# attention kernel takes, or on a layer's quantization method.
_BARE_ASSERT_END = r"[^\n]*\n(?:[ \t]*[\^~]+[ \t]*\n)?AssertionError\b(?!:)"
# a bare assertion on the GPU's architecture: the code path runs only on the architectures it names
_ARCH_ASSERT = (r"assert [^\n]*\b(?:is_sm\d{2,3}\w*_supported|is_(?:hopper|blackwell|ampere)\w*|get_device_capability"
                r"|device_capability|get_device_sm|sm_version)\b" + _BARE_ASSERT_END)
# a bare assertion on a tensor's dtype ("assert x.dtype == torch.bfloat16" in the NSA indexer): the model runs in a
# dtype this code path does not take
_DTYPE_ASSERT = (r"assert [^\n]*\.dtype\s*(?:==|!=|in\b|is\b)\s*[^\n]*\b(?:torch\.)?(?P<want>bfloat16|float16|half|bf16|fp16|float32"
                 r"|float8_e4m3fn\w*)\b" + _BARE_ASSERT_END)
# a quantization method's own list of the dtypes its kernels take ("torch.bfloat16 is not supported for quantization
# method awq. Supported dtypes: [torch.float16]")
_QUANT_DTYPE = r"(?P<got>[\w.]+) is not supported for quantization method (?P<method>[\w-]+)\.?\s+Supported dtypes: (?P<ok>\[[^\]\n]*\])"
# torch (through the CUDA runtime) sees no GPU at all
_NO_GPU_SEEN = (r"No accelerator \((?:CUDA|XPU|HPU|NPU|MUSA|MPS)[^)\n]*\) (?:or platform plugin )?is available"
                r"|No (?:CUDA|HIP) GPUs are available")
_KERNEL_HEAD_ASSERT = r"assert (?:L[qkv]|head_?(?:dim|size)\w*|\w*_head_dim) in [\[{(]\d" + _BARE_ASSERT_END
_NO_QUANT_METHOD_ASSERT = r"assert (?:self\.)?quant_method is not None" + _BARE_ASSERT_END

# A package that is a stand-in for another platform's build (a shim that raises when one of its functions is called).
_SHIM = r"\b(?:ROCm|CUDA|HIP) shim: [\w.]+ was really called|needs a native (?:ROCm|CUDA|HIP|XPU|NPU) build"
# A library built without the GPU support it is asked to use (UCX under NIXL without its CUDA modules, a CPU build of
# torch): "UCX is likely not configured with CUDA support", "Torch not compiled with CUDA enabled".
_WITHOUT_CUDA = r"\bnot (?:configured|built|compiled) with (?:CUDA|ROCm|HIP) (?:support|enabled)"
# SGLang's own version gate on a package it needs ("sgl-kernel is installed with version 0.3.20, which is less than
# the minimum required version 0.3.21").
_VERSION_GATE = (r"[\w.-]+ is installed with version [\w.+-]+, which is (?:less|lower|older) than"
                 r"|(?:less|lower|older) than the minimum required version [\w.+-]+")
# safetensors' dtype table without the checkpoint's dtype.
_UNKNOWN_DTYPE = r"safetensors/torch\.py\", line \d+, in _getdtype\n(?:[^\n]*\n){0,3}?[ \t]*KeyError: '"
# A framework that starts SGLang itself (verl, slime) reading a ServerArgs setting, or calling an entry point of SGLang's,
# that the installed release does not have in that form.
_LAUNCHER_SIGNATURE = (r"(?:'ServerArgs' object|type object 'ServerArgs') has no attribute|TypeError: (?:[\w.]*\.)?(?:_launch_subprocesses"
                       r"|_set_envs_and_config|launch_server|launch_engine|run_scheduler_process|run_detokenizer_process"
                       r"|init_tokenizer_manager|ServerArgs\.__init__)\(\) (?:got an unexpected keyword argument"
                       r"|missing \d+ required (?:positional|keyword-only) argument|takes \d+ positional)")
# A compiler's own diagnostic on a kernel source (gcc/clang "file.cuh:95:52: error:", nvcc "file.cu(95): error:").
_COMPILER_DIAGNOSTIC = r"\.(?:cuh?|cpp|cc|cxx|hpp|hh|h)(?::\d+){1,2}: (?:fatal )?error: |\.cuh?\(\d+\): (?:catastrophic )?error: "

# How much a rule's match says. ROOT: the cause itself. SURFACE: where a failure surfaced (a capture that failed),
# true but general: a ROOT cause found in other evidence wins. HINT: a sign rather than a statement (a keyword, a
# signature error, a frame): it decides only when nothing else does, and a line outside a traceback that only
# matches a HINT rule is no evidence at all (``server_args=`` names every speculative_* option, for one).
ROOT, SURFACE, HINT = "root", "surface", "hint"

# Cause rules, most specific first; the first that matches the evidence wins.
_CAUSE_RULES: Tuple[Tuple[str, Pattern[str], str], ...] = (
    # A value the argument parser let through but the component it is handed to rejects: uvicorn and logging know
    # only lower-case (uvicorn) or their own level names, so ``--log-level INFO`` dies in uvicorn's Config before the
    # HTTP server binds (and the warmup's refused connection is only a consequence).
    ("invalid_arguments", re.compile(
        r"LOG_LEVELS\[[^\n]*\n" + _FRAME_BODY + r"KeyError: '|ValueError: Unknown level: '"
        r"|uvicorn/config\.py\", line \d+, in configure_logging\n" + _FRAME_BODY + r"(?:KeyError|ValueError)\b"
        r"|Invalid value for '--log-level'"
        # a value the parser let through and SGLang's own lookup does not know ("Unknown speculative algorithm name:
        # MTP")
        r"|\bUnknown [\w-]+(?: [\w-]+)? (?:algorithm|backend|parser|method|strategy|mode)(?: name)?: ['\"]?[\w.-]+"
        # SGLang's own argument checks refusing a value that names a file that is not there ("channel mask file not
        # found at '...'. Set 'channel_mask_path' in --double-sparsity-config to a readable file.")
        r"|in check_server_args\n(?:[^\n]*\n){0,12}?[\w.]*(?:Error|Exception|Missing)\w*: [^\n]*"
        r"(?:not found|does not exist|No such file)[^\n]*--[a-z][\w-]*"
        # a device SGLang's distributed set-up picks no backend for ("cuda:7": it takes a device type, not one GPU), which
        # it meets with its backend variable unset
        r"|" + _BACKEND_UNSET), ROOT),
    ("systemd_unit_error", re.compile(
        r"status=2(?:[0-3]\d|4[0-3])/[A-Z_]+|Failed at step \w+ spawning|Failed to load environment files"
        r"|Failed to (?:run|spawn) '\w+' task|Failed to set up (?:mount namespacing|credentials|standard|special|network)"
        r"|Failed to determine (?:user|group) credentials|(?:Failed|Unable) to locate executable|has a bad unit file setting"
        r"|Unit configuration has fatal error|Failed with result 'resources'|Executable path is not absolute"), ROOT),
    ("bind_permission_denied", re.compile(
        r"\[Errno 13\] error while attempting to bind|error while attempting to bind on address[^\n]*permission denied"
        r"|(?:bind|listen)\(?\)?[^\n]{0,60}(?:Permission denied|EACCES)|PermissionError: \[Errno 13\][^\n]*(?:bind|port \d)", re.I), ROOT),
    ("port_in_use", re.compile(
        r"address already in use|\[Errno 98\]|EADDRINUSE|port \d+ is (?:already )?in use|Address in use"
        r"|port\b[^\n]{0,40}\bis not available|is used by a process already", re.I), ROOT),
    ("driver_mismatch", re.compile(
        r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|cudaErrorInsufficientDriver"
        r"|driver/library version mismatch|Found no NVIDIA driver|forward compatibility was attempted"
        r"|CUDA_ERROR_COMPAT_NOT_SUPPORTED|unsupported display driver / cuda driver combination"
        r"|undefined symbol: cu[A-Z]\w+"  # a CUDA driver API symbol (cuGreenCtxDestroy): the driver is older
        # CUDA's "system not yet initialized" (error 802): the driver stack is not ready for CUDA - on an NVSwitch system
        # its fabric manager is not running or not of the driver's version
        r"|Error 802: system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY"
        # torch (through the CUDA runtime) sees no GPU at all, though the box has them: SGLang's platform check ("No
        # accelerator (CUDA, XPU, ...) or platform plugin is available"), torch's own "No CUDA GPUs are available"
        r"|" + _NO_GPU_SEEN, re.I), ROOT),
    # sgl-kernel's own loader reporting that none of its compiled ops libraries loads (the CUDA runtime library it
    # links, libnvrtc.so.12, missing on a CUDA 13 host): the kernel package was built for another CUDA than the host's,
    # whatever the library it names; before the missing-tool rule, which takes a lone missing libnvrtc
    ("package_mismatch", re.compile(
        r"(?:Could not load any common_ops library|Standard Python import: common_ops - failed"
        r"|(?:Architecture-specific|Fallback) pattern: [^\n]*sgl_kernel/)"
        # the line that says why (the library it links that is missing) is the one to show, when the report has it
        r"(?:[\s\S]{0,4000}?(?P<line>(?:ImportError|OSError): [^\n]*cannot open shared object file))?"), ROOT),
    # A JIT build whose compiler was killed (exit status 137: SIGKILL, the kernel's OOM killer): a build that starts one
    # compiler per CPU (ninja, cicc) beside a resident server exhausts the host's memory. Not the build's code.
    ("host_resource_error", re.compile(_BUILD_KILLED), ROOT),
    ("jit_tool_missing", re.compile(
        r"Ninja is required to load C\+\+ extensions|No such file or directory: '(?:[^'\n]*/)?" + _TOOLS + r"'"
        r"|\b" + _TOOLS + r"(?:: command)?: not found|(?:Could not|cannot|unable to) find (?:nvcc|ninja|CUDA_HOME|the CUDA (?:toolkit|installation))"
        r"|CUDA_HOME environment variable is not set|CUDA_HOME[^\n]{0,40}(?:not set|does not exist)|nvcc not found"
        r"|libnvrtc[\w.-]*: cannot open shared object file|Failed to find C compiler"
        r"|fatal error: (?:cuda|cuda_runtime|cuda_fp16|cuda_bf16|cublas_v2|nvrtc|Python)\w*\.h: No such file"
        # the shell's own words for a tool it cannot run (bash: "/opt/rocm/bin/hipcc: No such file or directory", "nvcc:
        # command not found"), which's, gcc's for a part of itself not installed (cc1plus), and the shell's exit
        # status for a command not found (127) as a build tool reports it
        + r"|\b" + _TOOLS + r"['\u2019]?: (?:No such file or directory|command not found)|\bwhich: no " + _TOOLS + r" in \("
        # torch.compile's inductor finding no C++ compiler to build its kernels with
        r"|InvalidCxxCompiler|No working C\+\+ compiler found"
        r"|cannot execute '[\w+.-]+': (?:execvp: )?No such file|FAILED: \[code=127\]"
        r"|\b(?:ninja|make|cmake|sh)\b[^\n]{0,20} exited with (?:status|code) 127\b|returned non-zero exit status 127\b", re.I), ROOT),
    # A peer GPU's buffer opened over CUDA IPC at the C++ source of the code that shares buffers between the GPUs of a
    # node (DeepEP's intranode buffer sync, the custom all-reduce) refused with "invalid resource handle": IPC between
    # these GPUs does not work here. Before the illegal-memory-access rule: an access that follows it through the
    # handle that did not open is its consequence (the first CUDA error is the cause).
    # The same code refused by the driver when it sets the shared memory up (DeepEP's shared_memory.hpp: IPC or fabric
    # handles of its cuMem allocations): "not permitted" / "not supported" there is the sharing not allowed here.
    ("p2p_unsupported", re.compile(
        r"(?:deep_ep|custom_all_reduce|buffer|shared_memory)\.(?:cpp|cuh?|hpp):\d+[^\n]{0,20}(?:'?invalid resource handle"
        r"|CUDA_ERROR_NOT_(?:PERMITTED|SUPPORTED)|cudaErrorNot(?:Permitted|Supported))"), ROOT),
    ("illegal_memory_access", re.compile(
        r"an illegal memory access was encountered|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS"
        r"|an illegal instruction was encountered|cudaErrorIllegalInstruction|misaligned address|cudaErrorMisalignedAddress"
        # ROCm's runtime for the same fault (a GPU page fault: the kernel touched an address it does not own), printed
        # by the HSA runtime itself, often glued to the progress bar of the capture it interrupted
        r"|Memory access fault by GPU node-\d+",
        re.I), ROOT),
    ("unsupported_gpu", re.compile(
        r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice|hipErrorNoBinaryForGpu"
        r"|is not compatible with the current PyTorch installation|\bsm_?\d{2,3}a?\b[^\n]{0,40}\bnot (?:compatible|supported)"
        r"|invalid device function|cudaErrorInvalidDeviceFunction|hipErrorInvalidDeviceFunction"
        r"|not supported on (?:this GPU|this device|compute capability|sm_?\d+|your GPU)"
        # ... or by the architecture's name (SGLang's backend checks: "The 'fa3' backend is not supported on Blackwell
        # GPUs"; "only available on Hopper", "not supported on SM120", "requires an NVIDIA Hopper GPU", AMD's gfx/MI names)
        r"|(?:not (?:supported|available)|unsupported) (?:on|for) (?:the )?" + _ARCH_NAMES + r"\b"
        r"|(?:only (?:supported|available)|(?:supported|available) only) on (?:NVIDIA |AMD )?(?:the )?" + _ARCH_NAMES + r"\b"
        # ... or a kernel that on these architectures takes only some data types ("FlashAttention on Ampere/Ada cards
        # only supports fp16 and bf16 data type": an fp8 KV cache there)
        r"|\bon " + _ARCH_NAMES + r"(?:/" + _ARCH_NAMES + r")*(?: cards| GPUs?| devices)? only(?:\s+supports?\b|[ \t]*(?:\n|$))"
        r"|requires? (?:an? )?" + _ARCH_NAMES + r"(?: or (?:newer|later|above))?(?: GPUs?| devices?|\b)"
        r"|requires (?:a GPU with )?(?:compute capability|sm_?\d{2,3}|SM ?\d{2,3}|Hopper|Blackwell|Ampere|Ada)"
        r"|(?:compute|device) capability \S+ (?:is )?not supported|Unsupported (?:GPU|CUDA arch\w*|compute capability)"
        r"|only supported on (?:sm|SM|GPUs? with|Hopper|Blackwell|Ampere|Ada|devices with)"
        r"|(?:Ampere|Hopper|Blackwell|Ada|Turing|Volta)(?: GPUs?)? or (?:newer|later|above)"
        r"|compute capability (?:>= ?|of at least |\d+\.\d+ or (?:higher|above|newer))\d"
        r"|(?:not supported|unsupported) (?:for|on) the current (?:GPU|device)|Minimum capability: \d+"
        r"|minimum cuda capability supported by this library|no longer supports this GPU"
        # the device has no kernel for the op or format: an Ascend SoC's op binaries ("The bin of socVersion
        # [ascend910b] does not support opType [DispatchLayout]"), a quantization's check ("MXFP4 is not available on
        # your device")
        r"|socVersion \[\w+\] does not support opType|is not (?:available|supported) on (?:your|this) (?:device|GPU|hardware)"
        # ... or an Ascend op that has no kernel for the data type ("tensor 0 not implemented for DT_UINT64, should be
        # in dtype support list [...]")
        r"|not implemented for DT_\w+, should be in dtype support list"
        # ... or the code path of a device other than CUDA (forward_xpu, forward_npu ...) refusing what the model needs
        # ("activation = relu2 is not supported." in forward_xpu)
        r"|in forward_(?:xpu|npu|hpu|musa|mlu|cpu)\n" + _FRAME_BODY + r"(?:AssertionError|NotImplementedError)\b"
        # a bare assertion on the GPU's architecture (fp8.py's MoE method: ``assert is_sm100_supported() or
        # is_sm90_supported()``): this code path runs only on the architectures it names
        r"|" + _ARCH_ASSERT +
        # a floor stated as the lowest architecture supported (SGLang's own check before loading a model: "SGLang only
        # supports sm75 and above")
        r"|only supports? (?:sm_?|SM ?|compute capability )\d[\d.]*\w* (?:and|or) (?:above|higher|newer|later)"
        # Triton refuses a data type the GPU has no instructions for (fp8e4nv needs compute capability 8.9), ptxas an
        # instruction of a newer target
        r"|\bfp8\w* not supported in this architecture|not supported in this architecture\. The supported"
        # FlashInfer's fa2 path (the one it takes below Hopper) has no fp8 tensor-core kernel
        r"|\bfp8 tensor cores? (?:is|are) not supported"
        r"|requires \.target sm_\d+|(?:GPU|device) does not support (?:bf16|bfloat16|fp8|float8)"
        # ptxas refuses an instruction feature for the GPU's target ("Feature '.tile::gather4 ...' not supported on
        # .target 'sm_120a'"; the target may be cut off), and a kernel's own table has no build for the GPU's major
        r"|ptxas[^\n]*error\s*: Feature '[^'\n]*' not supported on|No supported CUDA architectures found for major versions?"
        # FlashInfer's prefill finds no tiling of this head size that fits the GPU's shared memory (an L40, sm_89)
        r"|Unsupported max_mma_(?:kv|q): 0\b"
        # a Hopper kernel (FA3, a TMA GEMM) builds a Tensor Memory Accelerator descriptor and the driver answers 801,
        # CUDA_ERROR_NOT_SUPPORTED: this GPU has no TMA (before sm_90). "due to invalid argument" is a shape, not this.
        r"|" + _NO_TMA, re.I), ROOT),
    # Kernels the image ships built for other GPU architectures than this one ("[aiter] [module_quant] prebuilt .so
    # targets ['gfx942'] but not the running arch gfx1201"): an image for another GPU family; a crash that follows
    # (a segfault in a capture) is this, not where it surfaced
    ("unsupported_gpu", re.compile(_OTHER_ARCH_BUILD), ROOT),
    # A package installed as a stand-in for another platform's build (a ROCm host given CUDA wheels through a shim that
    # raises when one of its functions is really called), or a library built without the GPU support asked of it: the
    # installed packages are not this host's builds
    ("package_mismatch", re.compile(_SHIM + r"|" + _WITHOUT_CUDA), ROOT),
    # An Ascend operator whose kernel the installed CANN kernels cannot set up for this SoC ("Parse dynamic kernel
    # config fail", "AclOpKernelInit failed"): an image or kernels package built for another Ascend SoC
    ("package_mismatch", re.compile(_ASCEND_KERNEL_CONFIG), ROOT),
    # A framework that launches SGLang itself (verl, slime, an RL trainer) written for another SGLang release: it reads
    # a ServerArgs setting this release lacks, or calls an entry point of SGLang's with another release's signature
    ("package_mismatch", re.compile(_LAUNCHER_SIGNATURE), ROOT),
    # SGLang's own version gate on a package it needs ("sgl-kernel is installed with version 0.3.20, which is less
    # than the minimum required version 0.3.21")
    ("package_mismatch", re.compile(_VERSION_GATE, re.I), ROOT),
    # safetensors (with the torch it maps dtypes to) does not know a dtype the checkpoint stores ("KeyError: 'F8_E8M0'",
    # an FP4 checkpoint's scales): the installed pair is older than the checkpoint
    ("package_mismatch", re.compile(_UNKNOWN_DTYPE), ROOT),
    # A compiled kernel package's own device assertion on what SGLang hands it (DeepGEMM's "Assertion failed: <file>:<line>,
    # condition: ...", CUDA's "<file>:<line>: <kernel>: block: [..], thread: [..] Assertion `...` failed."): the package
    # is of another version than the SGLang that calls it (a release that checks its inputs more strictly)
    ("package_mismatch", re.compile(
        r"\b(?:deep_gemm|flashinfer|flash_mla|sgl_kernel)/[^\s:]*\.cuh?:\d+(?:, condition: |: [^\n]*Assertion `)"), ROOT),
    # SGLang's own file importing a name another of its modules no longer has: the checkout's files do not fit each
    # other (a bug of that commit, or two versions mixed): no package to change, so no cause is named (hint: unknown)
    ("unknown", re.compile(
        r"File \"[^\"\n]*\bsglang/srt/[^\"\n]*\", line \d+, in \w+\n" + _FRAME_BODY + r"ImportError: cannot import name '\w+' from 'sglang\."),
     ROOT),
    ("package_mismatch", re.compile(
        r"undefined symbol: |Could not load any common_ops library|No module named '[\w.]+'"
        r"|cannot import name '\w+' from|cannot open shared object file"
        # torch.ops.<package> has no such op: the compiled kernel package is of another version than its Python side
        r"|'_OpNamespace' '\w+' object has no attribute"
        # torch and torchvision (or another extension) of versions that do not go together; NumPy's ABI
        r"|operator \w+::\w+ does not exist|may indicate binary incompatibility|compiled using NumPy 1\.x cannot be run"
        r"|PackageNotFoundError: No package metadata was found for|ImportError: [^\n]*\bpip install\b"
        # a library that checks for an optional package it needs and says so (FastAPI's form routes: python-multipart)
        r"|\brequires \"?[\w.\[\]-]+\"? to be installed|\b[\w.-]+ is not installed\. (?:Please )?(?:install|run|use pip)"
        r"|(?:sgl[-_]kernel|flashinfer|vllm|torch|transformers|triton|xgrammar)\S*[^\n]{0,60}version mismatch"
        # transformers now registers a config class of the same name that SGLang registers for itself: a transformers
        # newer than the SGLang release knows
        r"|is already used by a Transformers model", re.I), ROOT),
    # A parser chosen by a setting (reasoning_parser, tool_call_parser) whose special token the model's tokenizer does
    # not have as one token ("think_end_token '</think>' must encode to exactly one token"): the parser does not fit
    # this model (or the release checks what an earlier one let through)
    ("incompatible_arguments", re.compile(
        r"\b(?:think|reasoning|tool_call|tool|bot|eot|eos)\w*_token\b[^\n]{0,80}(?:must (?:encode|tokeni[sz]e) (?:to|as|into) (?:exactly )?"
        r"(?:one|a single|1) token|(?:is not|isn't) (?:a single token|in the (?:tokenizer|vocab\w*))"
        r"|not found in (?:the )?(?:tokenizer|vocab\w*))", re.I), ROOT),
    # The MoE runner backend reading what the all-to-all backend's dispatch hands it, and that object lacking it
    # (flashinfer_mxfp4's runner on DeepEP's low-latency output; DeepEPLLOutput before the classes were renamed), or a
    # runner's own bare check of the dispatch format: the two MoE options do not fit each other
    ("incompatible_arguments", re.compile(
        r"'(?:\w*(?:Dispatch|Combine)(?:Output|Input)\w*|DeepEP\w*Output)' object has no attribute"
        r"|assert \w*DispatchOutputChecker\.format_is_\w+\(" + _BARE_ASSERT_END), ROOT),
    # A setting that contradicts the checkpoint's own quantization (a wrapped message keeps its line break), or a
    # kernel backend chosen by a setting that takes only some quantizations or dtypes ("modelopt_fp4 quantization or
    # bf16 is required for Flashinfer Cutlass MOE")
    ("incompatible_arguments", re.compile(
        r"specified in the model config \([\w-]+\)(?:\s+does not match|[ \t]*(?:\n|$))"
        r"|\b(?:quantization|bf16|bfloat16|fp16|float16|fp8|fp4|dtype)\b[^\n]{0,40}\b(?:is|are) required (?:for|by) [^\n]*"
        r"(?:MoE|MOE|backend|runner|kernel)"
        # a feature chosen by one setting that takes only some backends ("KV4 MHA expects attention_backend to be one
        # of [...], but got fa3")
        r"|\bexpects (?:--)?[\w-]*backend to be one of\b"
        # a feature that says it does not work with another setting, naming it ("... is not compatible with radix cache
        # when using --mamba-scheduler-strategy no_buffer"), or a page size one component needs and another changed
        r"|\bis not compatible with\b[^\n]*--[a-z][\w-]+|\bpage[_ ]size must be \d+ for\b"
        # ... or a kind of parallelism it does not run under ("Prequant BitsAndBytes models with TP is not supported.")
        r"|" + _PARALLELISM_UNSUPPORTED +
        # the model's dtype against what a quantization method or a code path takes
        r"|" + _QUANT_DTYPE + r"|" + _DTYPE_ASSERT, re.I), ROOT),
    # LoRA wrapping a layer that does not hold the weights LoRA reads (a MoE runner backend or quantization that keeps
    # them in another layout: "'FusedMoE' object has no attribute 'w13_weight'" from sglang/srt/lora): LoRA and that
    # backend do not fit each other
    # ... or a layer LoRA has no wrapper for at all, reached by the target modules asked for ("No corresponding LoRA
    # layer supported for <class '...ReplicatedLinear'>": 'all-linear' takes in a MoE router)
    ("incompatible_arguments", re.compile(
        r"/srt/lora/[^\n]*\n(?:[^\n]*\n){0,10}?[^\n]*AttributeError: '\w+' object has no attribute"
        r"|No corresponding LoRA layer supported for\b"), ROOT),
    ("peer_rank_lost", re.compile(
        r"gloo/transport/tcp/pair\.cc:\d+\] Connection|Connection was likely closed\. Did the remote server shutdown or crash"
        r"|(?:gloo|Gloo|c10d|TCPStore|ProcessGroup\w*)[^\n]{0,200}Connection (?:closed|reset) by peer"
        r"|Connection (?:closed|reset) by peer[^\n]{0,200}(?:gloo|Gloo|c10d|TCPStore)"
        # SGLang's own check after loading: this rank loaded, others did not (they died or hang: their log has why)
        r"|other ranks (?:that )?did(?:n't| not) finish (?:the model )?loading"), ROOT),
    ("p2p_unsupported", re.compile(
        r"peer access is not supported between these two devices|cudaErrorPeerAccessUnsupported"
        r"|P2P (?:access )?is not supported|Can't enable access between nodes"
        # the custom all-reduce's own CUDA calls refused at its source (sgl-kernel's custom_all_reduce.cuh: opening the
        # other GPUs' IPC buffers, get_graph_buffer_ipc_meta): "invalid argument" / "invalid resource handle" there is
        # IPC between these GPUs not working (another error at that source, an ECC fault, is not this)
        r"|(?:invalid argument|invalid resource handle)[^\n]{0,80}\n?[^\n]{0,160}custom_all_reduce\.cuh?:\d+"
        # a CUDA IPC handle another process shared that this one cannot open (WSL2 and some VMs have no CUDA IPC)
        r"|CUDA IPC handle[^\n]{0,80}invalid resource handle"
        r"|custom_all_reduce\.cuh?:\d+[^\n]{0,80}\n?[^\n]{0,80}(?:invalid argument|invalid resource handle)", re.I), ROOT),
    # Triton's "compilation" error for an argument that is None (AttributeError("'NoneType' object has no attribute
    # 'type'")) is no compiler failing but a tensor the caller did not have; in the speculative draft's path (its
    # worker, its graphs) the draft's setup with this model and backend does not work
    ("speculative_decoding_error", re.compile(
        r"(?:/speculative/|draft_worker|eagle_worker|DraftWorker|EAGLEWorker|multi_layer_eagle)[\s\S]{0,8000}?CompilationError\b"
        r"[\s\S]{0,1500}?'NoneType' object has no attribute"), ROOT),
    ("kernel_compile_failed", re.compile(
        r"ninja: build stopped|Error building extension|CompilationError|nvcc fatal|fatal error: \S+: No such file or directory"
        r"|collect2: error|ld returned \d+ exit status|CalledProcessError: Command '\[?'(?:ninja|nvcc|gcc|g\+\+|cc|c\+\+)'"
        r"|Command '\['\S*(?:gcc|g\+\+|nvcc|clang)'[^\n]*returned non-zero exit status|Ninja build failed"
        # the same as one shell string (Triton runs its bundled ptxas so): the build tool ran and failed
        r"|Command '(?:\S*/)?" + _TOOLS + r" [^'\n]*' returned non-zero exit status|PTXASError: PTXAS error"
        r"|(?:JIT|jit) (?:compil\w*|build) (?:failed|error)|Failed to compile|triton\.compiler\.errors|cannot find -lcuda"
        # the compiler's own diagnostic on a kernel source
        r"|" + _COMPILER_DIAGNOSTIC +
        # FlashInfer's dispatch has no kernel instance for this configuration (a head size it was not built for)
        r"|FlashInfer Internal Error: Invalid configuration"
        # an assertion raised inside DeepGEMM's JIT dispatcher: it has no kernel for this case
        r"|deep_gemm/[^\"\n]*\", line \d+[^\n]*\n" + _FRAME_BODY + r"(?:AssertionError|RuntimeError)"), ROOT),
    ("gpu_out_of_memory", re.compile(
        r"CUDA out of memory|OutOfMemoryError|Not enough memory\. Please try to increase --mem-fraction-static"
        r"|Please try to increase --mem-fraction-static|Not enough memory to allocate KV cache|CUDA error: out of memory"
        r"|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|HIP out of memory|hipErrorOutOfMemory"
        # the NVIDIA kernel driver's own words (dmesg, or a unified-memory GB10's console): it could not map GPU memory
        r"|\bNV_ERR_NO_MEMORY\b"
        # Intel GPUs (XPU): the Unified Runtime's and Level Zero's own out-of-memory results
        r"|\b(?:UR|ZE)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b"
        r"|larger than the profiled value -\d+"
        # SGLang's own refusal when the weights leave no room for the KV cache, across releases' phrasings ("Loaded
        # weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88", "not enough memory for the KV
        # cache", "insufficient GPU memory for KV cache", "available memory for KV cache is negative")
        r"|\bleaves? no (?:free |available )?(?:GPU )?(?:memory|room) (?:left )?for (?:the )?(?:full )?KV[ _-]?(?:cache|pool)"
        r"|(?:not enough|insufficient|no) (?:free |available )?(?:GPU )?memory (?:left )?(?:for|to allocate) (?:the )?KV[ _-]?cache"
        # ... or for the state cache of a hybrid (linear-attention) model ("Not enough space for mamba cache, try to
        # increase --mamba-full-memory-ratio")
        r"|Not enough (?:space|memory) for (?:the )?(?:mamba|state|ssm|linear[ _]attention) cache"
        r"|(?:available|free|remaining) (?:GPU )?memory for (?:the )?KV[ _-]?cache (?:is|=) ?(?:negative|-\d|0(?:\.0+)? ?GB)"
        # NCCL's own allocation of its buffers on the GPU failed (a memory fraction that leaves NCCL no room)
        r"|Failed to CUDA (?:calloc|malloc|host alloc)\w* \d+ bytes|NCCL WARN Cuda failure 'out of memory'"
        r"|The memory capacity is unbalanced", re.I), ROOT),  # another process holds memory on some of the GPUs
    # a rank's shard of a checkpoint tensor lies beyond it (torch's narrow, which the weight loaders use to take a TP
    # shard): the layer does not split into tp_size shards of the size the runtime layout wants
    ("parallelism_mismatch", re.compile(
        r"\.narrow\([^\n]*\n(?:[^\n]*\n){0,3}?(?:RuntimeError|IndexError): start \(\d+\) \+ length \(\d+\) exceeds dimension size"
        r"|in (?:\w*weight_loader\w*|_load_w\d+|load_weights?\w*)\n" + _FRAME_BODY + r"(?:RuntimeError|IndexError): start \(\d+\) \+ length"), ROOT),
    ("parallelism_mismatch", re.compile(
        r"(?:\b|= ?)\d+,? is not divisible by " + _DIVISOR_NAME + r"\d+|(?:tp_size|tensor[_ -]parallel(?:[_ ]size)?|pp_size"
        r"|pipeline[_ ]parallel(?:[_ ]size)?|dp_size|attn_dp_size|moe_dp_size|ep_size|attn_cp_size|world[_ ]size"
        r"|number of nodes|nnodes)[^\n]{0,80}(?:divisible|must be (?:equal|a multiple|less|greater)|does not match|mismatch)"
        r"|divisible by (?:the )?(?:attn |attention |moe )?(?:tensor parallel|tp|world)|invalid device ordinal|hipErrorInvalidDevice\b"
        # a bare assertion in model code that the heads (experts, ...) split evenly over the TP ranks
        r"|assert [^\n]*%\s*(?:self\.)?\w*(?:tp|tensor_model_parallel|tensor_parallel|world)_?(?:size|world_size)\w*(?:\(\))?\)?\s*==\s*0"
        # a message that states the divisibility it wants, the TP (or EP) size in it ("(moe_intermediate_size=... /
        # moe_tp_size=8) % weight_block_size_n=128 == 0")
        r"|\b\w*(?:tp|ep)_size=[^\n]{0,12}\)?\s*%\s*[\w=]+\s*==\s*0",
        re.I), ROOT),
    # NCCL's bootstrap at communicator creation could not reach the other ranks (ncclRemoteError while the
    # communicator is made): the ranks did not meet, as in the store's rendezvous
    ("distributed_init_failed", re.compile(
        r"in ncclCommInitRank\w*\n(?:[^\n]*\n){0,8}?[^\n]*NCCL error: remote process exited or there was a network error"), ROOT),
    ("nccl_error", re.compile(
        r"NCCL error|nccl(?:System|Internal|InvalidUsage|UnhandledCuda|Remote)Error|DistBackendError|NCCL WARN"
        r"|ProcessGroupNCCL[^\n]{0,80}(?:error|Watchdog caught|timed out)|Error while creating shared memory segment /dev/shm/nccl"
        # a crash inside NCCL's transport setup (its shared-memory transport's connect: a segment in /dev/shm that cannot
        # be used gives a SIGBUS there)
        r"|\bshm(?:Send|Recv)Connect\b|\bncclTransportP2pSetup\b"), ROOT),
    ("distributed_init_failed", re.compile(
        r"DistStoreError|DistNetworkError|TCPStore|Timed out initializing process group|store_based_barrier"
        r"|Rendezvous\w*Error|\[c10d\][^\n]{0,200}(?:timed out|timeout|Connection refused)|socketStartConnect"
        r"|init_process_group[^\n]{0,200}(?:timed out|timeout|refused)|Gloo connectFullMesh failed"
        r"|wait timeout after \d+ms, keys:"
        # Mooncake's KV transfer engine (PD disaggregation) could not set up its RDMA transport between the nodes
        r"|Transfer Engine initialization failed|please check your GID index"
        # ... or could not register the GPU memory of the KV cache with the NIC (Mooncake's or NIXL's own words)
        r"|" + _KV_REGISTRATION_FAILED +
        # ... or could not open its TCP transport's socket: an address family the node has switched off (IPv6)
        r"|transfer_engine\.py\", line \d+, in initialize\n(?:[^\n]*\n){0,4}?[^\n]*Address family not supported by protocol"
        # Gloo told to use a network interface this node has no address on (GLOO_SOCKET_IFNAME)
        r"|Unable to find address for: \S+|gloo/transport/tcp/device\.cc:\d+\] ifa != nullptr"
        # a process group made without a backend for the tensors' device (NCCL only, by a framework that runs SGLang
        # in its own processes), while SGLang sends Python objects between the ranks over CPU tensors
        r"|No backend type associated with device type \w+"
        # DeepEP's buffer sets up NVSHMEM across the ranks (and nodes): a failure there is the ranks not meeting
        r"|\bnvshmem\w*\([^\n]*\)[^\n]{0,40}== 0'|NVSHMEM (?:ERROR|error)|nvshmem\w* (?:failed|error)"
        # NVSHMEM's own C-level lines, without a Python traceback: its bootstrap between the ranks returned an error, and
        # a call after it finds NVSHMEM never initialised
        r"|nvshmem[\w-]*/\S*?\.(?:cpp|cu|c):(?:\w+:)?\d+: non-zero status|NVSHMEM API called before NVSHMEM initialization"
        r"|deep_ep/buffer\.py\", line \d+, in __init__\n" + _FRAME_BODY + r"[\w.]*(?:Error|Exception)\b"
        # ... or its ranks' handshake timing out at a dispatch (a peer that never answered): "DeepEP error: CPU recv
        # timeout", "DeepEP timeout check failed"
        r"|DeepEP error: (?:CPU )?(?:recv|send) timeout|DeepEP timeout check failed"
        # 0.1-era SGLang: the router reached its TP workers over rpyc, whose call timed out
        r"|AsyncResultTimeout|rpyc[^\n]*\n" + _FRAME_BODY + r"[\w.]*TimeoutError: result expired", re.I), ROOT),
    ("host_resource_error", re.compile(
        r"Fatal Python error: Bus error|Bus error \(core dumped\)|\bSIGBUS\b|exit code:? 135\b|Exit code: -7\b"
        r"|\[Errno 12\] Cannot allocate memory|No space left on device|\[Errno 24\] Too many open files"
        r"|unable to write to file </torch_|unable to (?:mmap|allocate shared memory)"
        r"|scheduler died during initialization \(exit code: -9\)|can't start new thread|std::bad_alloc"), ROOT),
    # An exception raised while SGLang sets up its custom all-reduce (the P2P check, the IPC buffers, libcudart):
    # the custom all-reduce cannot run here, NCCL can.
    ("p2p_unsupported", re.compile(
        r"(?:custom_all_reduce(?:_utils)?|cuda_wrapper)\.py\", line \d+, in \w+\n" + _FRAME_BODY + r"[\w.]*(?:Error|Exception)\b"), HINT),
    ("cuda_graph_capture_failed", re.compile(
        r"Capture (?:cuda|CUDA) graph failed|cuda_graph_runner\.py|CudaGraphRunner|cudaStreamCaptureStatus"
        r"|operation not permitted when stream is capturing|during CUDA graph capture|previous error during capture"
        r"|cudaErrorStreamCapture\w+|CUDA_ERROR_STREAM_CAPTURE_\w+"
        # torch.compile runs inside SGLang's graph capture (enable_torch_compile, piecewise graphs)
        r"|File \"[^\"\n]*torch/_(?:dynamo|inductor)/|torch\._dynamo\.exc\.\w+|BackendCompilerFailed"
        r"|You can suppress this exception and fall back to eager"
        # the custom all-reduce registers the captured graphs' buffers: none means the capture failed (its error
        # can be hidden, sgl-project/sglang PR 11275)
        r"|Registering 0 cuda graph addresses", re.I), SURFACE),
    ("unsupported_model_architecture", re.compile(
        r"Model architectures? \[[^\]]*\] (?:are|is) not supported|does not recognize this architecture"
        r"|Unsupported (?:model )?architecture|No model architectures? (?:are )?specified"
        r"|'\w+Config' object has no attribute"  # the model's config lacks what this SGLang reads: not supported here
        # code that walks the model's layers finds a layer without the part it needs ("No attention attribute in layer
        # type <class '...Qwen3NextDecoderLayer'>": a hybrid linear-attention layer under a cache written for attention)
        r"|" + _LAYER_LACKS +
        # SGLang's generic transformers fallback (TransformersForCausalLM, spelled TransformersForCasualLM in some
        # releases) used because it has no class of its own for the model, and the fallback cannot run it either
        r"|'Transformers\w*For\w+' object has no attribute"
        # ... or finds no class for the architecture in transformers either (SGLang's and vLLM's resolve_transformers_arch)
        r"|is not a registered model in the Transformers library|Cannot find model module\. '"
        r"|The Transformers implementation of '?\w+'? is not compatible with (?:SGLang|vLLM)"
        # SGLang's own sentence for both at once ("Qwen3_5ForCausalLM has no SGlang implementation and the Transformers
        # implementation is not compatible with SGLang"), its spelling of SGLang varying
        r"|\bhas no SGLang implementation\b"
        r"|architectures\[0\](?:[^\n]*\n){1,4}TypeError: 'NoneType' object is not subscriptable"
        # transformers does not know the config's model_type (an architecture newer than the installed transformers)
        r"|configuration_auto\.py\", line \d+, in __getitem__\n" + _FRAME_BODY + r"KeyError: '"
        # ... the same seen from SGLang's config read, the transformers frames elided: get_config, then the KeyError
        r"|\bget_config\(\s*\n(?:[^\n]*\n){0,6}?KeyError: '"
        # an attention kernel's bare assertion on the head size it takes (Triton's extend attention: ``assert Lq in {16,
        # 32, 64, 128, 256, 576}``): this model's head size is not one of them
        + r"|" + _KERNEL_HEAD_ASSERT
        # a layer that finds no method for the checkpoint's quantization (vLLM's FusedMoE under GPTQ: ``assert
        # self.quant_method is not None``): this quantized variant is not one this release can build
        + r"|" + _NO_QUANT_METHOD_ASSERT, re.I), ROOT),
    ("model_unavailable", re.compile(
        r"is not a local folder and is not a valid model identifier|RepositoryNotFoundError|GatedRepoError"
        r"|RevisionNotFoundError|EntryNotFoundError|HFValidationError|Repository Not Found for url|Cannot access gated repo"
        r"|\b(?:401|403|404) Client Error|does not appear to have a file named|Can't load (?:the )?(?:config|tokenizer|configuration)"
        # the model's loader found the checkpoint short of weights it needs (SGLang's own check after loading)
        r"|load_weights failed because some weights are missing"
        r"|OfflineModeIsEnabled|couldn't connect to 'https://huggingface\.co'|You must be authenticated to access it"
        # huggingface_hub's own report of a request to the hub (or the HF_ENDPOINT mirror) that the network refused
        # ("'[Errno 101] Network is unreachable' thrown while requesting HEAD https://huggingface.co/.../x.safetensors")
        r"|' thrown while requesting (?:HEAD|GET) https?://"
        r"|(?:No such file or directory|FileNotFoundError)[^\n]{0,160}(?:config\.json|\.safetensors|tokenizer)"
        # the model path names a file that is no model directory (a raw .pth/.pt/.bin checkpoint): transformers reads
        # it as the JSON config and cannot (a UnicodeDecodeError or a JSON error under _dict_from_json_file, or its own
        # "It looks like the config file at ... is not a valid JSON file")
        + _CONFIG_NOT_JSON
        # a checkpoint file that is there but empty or cut (an interrupted download): its index JSON does not parse,
        # a safetensors header does not deserialise
        + _BROKEN_CHECKPOINT), ROOT),
    ("speculative_decoding_error", re.compile(
        r"speculative|eagle_worker|EAGLEWorker|draft_worker|DraftWorker|draft_model|draft model|multi_layer_eagle"
        r"|ngram_worker|eagle_utils|\bMTP\b|\bNextN\b|_nextn\b"
        r"|KeyError: 'midlayer\.", re.I), HINT),  # EAGLE3 heads name their one layer ``midlayer``
    # An assertion in the model's weight loader (a parameter's shape, a name): the checkpoint is not one this
    # implementation of the model can read (a quantized or converted variant it does not support). After the
    # speculative rule: in a draft model's loader it is the draft's checkpoint.
    ("unsupported_model_architecture", _WEIGHT_LOADER_FAILED_RE, ROOT),
    # torch's narrow beyond a dimension without the loader's frame: a sign of a shard that does not fit.
    ("parallelism_mismatch", re.compile(r"start \(\d+\) \+ length \(\d+\) exceeds dimension size \(\d+\)"), HINT),
    # SGLang's own code calling a helper of its own: a bare function handed the model's or layer's ``self`` first
    # (``forward_dsa_core_npu(self, *inner_state)``), which no other package's function takes, raising the signature
    # error itself: SGLang disagreeing with itself (a bug of that build), not a package of another version - no cause
    # is named (hint: unknown). Before the signature sign below, after every rule that names a cause.
    ("unknown", re.compile(
        r"File \"[^\"\n]*\bsglang/srt/[^\"\n]*\", line \d+, in \w+\n[ \t]*(?:return |[\w, .\[\]]+ = )?(?P<func>[A-Za-z_]\w*)\(self\b"
        r"[^\n]*\n(?:[ \t]*[\^~]+[ \t]*\n)?TypeError: (?P=func)\(\) (?:got an unexpected keyword argument|missing \d+ required positional"
        r"|takes \d+ positional arguments? but)"), ROOT),
    # Weak signs, after every specific rule: one package called another with the signature of another version
    # (also as SGLang logs a request's error: the exception's text without its type, whose words are TypeError's own).
    ("package_mismatch", re.compile(
        r"(?:TypeError|Error in request): (?!(?:[\w.]*\.)?_[a-z])[^\n]*(?:got an unexpected keyword argument|missing \d+ required positional argument"
        r"|takes \d+ positional arguments? but \d+ (?:were|was) given|got multiple values for argument)"
        r"|AttributeError: module '[\w.]+' has no attribute"
        # ... or a class of it lacking a member this SGLang reads (an enum of an older compressed-tensors)
        r"|AttributeError: type object '\w+' has no attribute"
        # Triton's configuration objects (triton.knobs: runtime_knobs, compilation_knobs ...) change with its version
        r"|AttributeError: '\w*knobs' object has no attribute"), HINT),
    # A kernel that takes one dtype only (AWQ's dequantize takes float16) called with the model's other one: the
    # dtype chosen does not fit the quantization. A sign: a dtype error can also be a bug of one kernel.
    ("incompatible_arguments", re.compile(r"expected scalar type (?:Half|BFloat16) but found (?:BFloat16|Half)"), HINT),
    # ... or a kernel that says it takes 16-bit data only ("FlashAttention only support fp16 and bf16 data type"), met
    # with an 8-bit KV cache: the attention backend and kv_cache_dtype do not fit (the capture is only where it ran first)
    ("incompatible_arguments", re.compile(_HALF_ONLY), HINT),
    # A name SGLang imports from an optional dependency (vLLM's Marlin checks on 0.4.x, guarded by try/except
    # ImportError) is undefined when it runs: the dependency the feature needs is not installed. A sign, not a
    # statement: a NameError in an installed package's own code, never in a user's script.
    ("package_mismatch", re.compile(
        r"(?:site-packages|dist-packages|/python/sglang)/[^\"\n]*\", line \d+, in \w+\n" + _FRAME_BODY
        # an accelerator's own torch extension (torch_npu ...) is installed wherever code for that device runs: its
        # name undefined is an import SGLang's code lacks (a bug of that release, unknown), not a missing package
        + r"NameError: name '(?!" + _DEVICE_EXTENSIONS + r"')\w+' is not defined"), HINT),
)
_ARGS_FRAME_RE = re.compile(  # a frame of the argument checks: not server_args.py being imported (its <module> frame)
    r'File "[^"]*(?:server_args\.py|/arg_groups/[^"]*|server_args_config_parser\.py)", line \d+, in (?!<module>)'
    r"|in (?:check_server_args|prepare_server_args|resolve_once|run_resolution_pipeline)\b"
)
# An exception raised in a frame of the argument checks itself (the innermost frame of its traceback).
_RAISED_BY_ARGS_CHECK_RE = re.compile(
    r'File "[^"\n]*(?:server_args\.py|/arg_groups/[^"\n]*)", line \d+, in (?!<module>)\w+\n' + _FRAME_BODY
    + r"(?:ValueError|AssertionError|NotImplementedError|TypeError)\b")
_ARGS_EXC_RE = re.compile(r"^(?:ValueError|AssertionError|NotImplementedError|TypeError)\b")
# The phrases of SGLang's argument checks that refuse a combination of settings.
_ARGS_MSG_RE = re.compile("|".join((
    r"Cannot set --", r"cannot be combined with", r"is incompatible with", r"requires (?:at least one|--)",
    r"--[\w-]+ requires", r"must differ from", r"is not supported (?:with|when|together)", r"only supported (?:with|when)",
    r"mutually exclusive", r"backends? (?:are|is) supported (?:on|for|with)",
    # a backend chosen by a setting that one of the model's layers does not take, with the ones it does
    r"[Bb]ackend '[\w.-]+' is not supported by (?:this|the) \w+",
    # two backends chosen by settings that have no kernel for each other ("Runner backend
    # MoeRunnerBackend.FLASHINFER_TRTLLM requires a fused func for a2a backend deepep, but none is registered")
    r"[Bb]ackend [\w.]+ requires an? [\w ]{1,40}for (?:the )?[\w-]+ backend [\w.-]+",
)))
# Any other refusal that names an option in the CLI's dashed form ("--enable-kv-cache-sharding does not support session
# radix cache yet", "DeepSeek V3.2 prefill CP does not support --cp-strategy zigzag"): the words SGLang's argument checks
# use, read only where nothing more specific matched, and only as a sign (a warning can say the same).
_ARGS_REFUSAL_RE = re.compile(
    r"--[a-z][\w-]+\b[^\n]{0,160}?\b(?:does not (?:yet )?support|doesn't support|requires?|(?:is|are) not (?:yet )?"
    r"(?:compatible|supported|allowed)|only supports?|can only be|cannot (?:be|exceed)|must be|is only)\b"
    r"|\b(?:does not (?:yet )?support|doesn't support|requires?|not (?:yet )?compatible with|only supports?|only works with)"
    r"\b[^\n]{0,120}?--[a-z][\w-]+")
_WARMUP_RE = re.compile(
    r"warmup error|_wait_and_warmup|_execute_server_warmup"
    # the diffusion server's warmup waits for its own /health first (multimodal_gen's http_server)
    r"|Server warmup failed|HTTP server did not become ready at|_wait_until_http_ready|_run_server_warmup\w*"
    # the scheduler's watchdog: a batch's forward did not finish in watchdog_timeout (its report of the batch, the
    # py-spy dump of the stuck stack, its timeout line). It watches the event loop, which before ready runs only the
    # warmup's request: the warmup hung
    r"|Watchdog timeout \(self\.watchdog_timeout=|Pyspy dump for PID \d+|self\.cur_batch\.batch_size\(\)="
    r'|"(?:GET|POST) [^"\n]*/(?:get_model_info|model_info|generate|v1/chat/completions)[^"\n]*" [45]\d\d', re.I)

_UNRECOGNIZED_RE = re.compile(r"unrecognized arguments: (?P<args>.+)$")
_AMBIGUOUS_RE = re.compile(r"ambiguous option: (?P<opt>\S+) could match (?P<choices>.+)$")
_INVALID_CHOICE_RE = re.compile(r"argument (?P<opt>--[\w-]+)(?:/[\w-]+)*: invalid choice: (?P<value>'[^']*')")
_DIVISIBLE_RE = re.compile(r"\b(?P<a>\d+),? is not divisible by " + _DIVISOR_NAME + r"(?P<b>\d+)")
# A quantized kernel's own check that a rank's share of a layer is a whole number of its scale groups (Marlin's
# "size_k = 704, is not divisible by b_scales.size(1) = 5", "size_k = 2752 is not divisible by group_size = 128")
_QUANT_GROUPS_RE = re.compile(r"\bsize_[kn] = \d+,? is not divisible by (?:\w*scales\w*(?:\.size\(\d\))?|group_size|group_blocks) = \d+")
_PORT_RE = re.compile(r"\('?[\w.:\[\]-]*'?, (?P<port>\d+)(?:, \d+, \d+)?\)|port (?:at )?(?P<port2>\d+)|_port at (?P<port3>\d+)"
                      r"|tcp://[^\s'\")]*:(?P<port4>\d+)")
_ARCH_RE = re.compile(r"Model architectures? \[(?P<arch>[^\]]*)\]")
_HTTP_STATUS_RE = re.compile(r"Response \[(?P<status>\d{3})\]|\" (?P<status2>[45]\d\d)\b")
_MISSING_TOOL_RE = re.compile(r"No such file or directory: '(?:[^'\n]*/)?(?P<tool>" + _TOOLS + r")'|\b(?P<tool2>" + _TOOLS
                              + r")(?:: command)?: not found|(?P<ninja>Ninja is required)|\b(?P<tool3>" + _TOOLS
                              + r")['\u2019]?: (?:No such file or directory|command not found)|\bwhich: no (?P<tool4>" + _TOOLS + r") in \(")
_MISSING_MODULE_RE = re.compile(r"No module named '(?P<module>[\w.]+)'")
_UNDEFINED_NAME_RE = re.compile(r"NameError: name '(?P<name>\w+)' is not defined")
_UNDEFINED_NAME_HINT = (
    "SGLang's code for this feature calls {name}, a name it imports from an optional dependency only when that "
    "dependency is installed (vLLM for the GPTQ/AWQ Marlin checks of SGLang 0.4.x): install the dependency set this "
    "SGLang release pins, with the extra that brings it (sglang_install role), or upgrade to a release that no longer "
    "needs it; serving without the feature (another quantization) confirms it.")
_SIGNATURE_RE = re.compile(r"got an unexpected keyword argument|missing \d+ required positional argument"
                           r"|takes \d+ positional arguments? but \d+ (?:were|was) given|got multiple values for argument")
_SHAPE_RE = re.compile(r"must match the size of tensor|shapes cannot be multiplied|size mismatch|shape mismatch", re.I)
_TORCH_COMPILE_RE = re.compile(r"torch/_(?:dynamo|inductor)/|torch\._dynamo|BackendCompilerFailed|fall back to eager")

# Context lines that say an architecture "is not supported" only because its module failed to import (and build).
_IMPORT_ERROR_RE = re.compile(r"Ignore import error when loading (?P<module>[\w.]+)")


def classify(evidence: str) -> str:
    """Return the cause label whose rule first matches ``evidence`` (traceback and fatal lines), or "unknown".

    Why an ordered list: one failure often shows several symptoms (a capture failure *caused by* a JIT build
    error, an OOM *during* graph capture); the most specific, most actionable rule is listed first.
    """
    return decisive(evidence)[0]


def decisive(evidence: str) -> Tuple[str, Optional[str], str]:
    """The cause label of ``evidence``, the line that decided it (None for "unknown") and the rule's strength."""
    if not evidence:
        return "unknown", None, HINT
    for index, (cause, pattern, strength) in enumerate(_CAUSE_RULES):
        match = pattern.search(evidence)
        if match and cause == "speculative_decoding_error" and strength == HINT and _RAISED_BY_ARGS_CHECK_RE.search(evidence):
            continue  # speculative settings refused by the argument checks before any draft loads: a settings clash
        if match and cause == "unknown":
            # a statement that this failure is none of the causes (SGLang disagreeing with itself): what it matched says
            # nothing more, but the rest of the evidence (another traceback of the tier, a line beside it) still may
            evidence = evidence[:match.start()] + evidence[match.end():]
            continue
        if match:
            # a rule may name the line that decides it (group ``line``), when it is not where the match starts
            start = match.start("line") if "line" in pattern.groupindex and match.group("line") else match.start()
            if strength == SURFACE:
                # where it surfaced (a capture) says less than what kind of failure it was: the draft model's
                # capture, a kernel called with another version's signature
                for refined, refined_pattern, refined_strength in _CAUSE_RULES[index + 1:]:
                    refined_match = refined_pattern.search(evidence) if refined_strength == HINT else None
                    if refined_match:
                        return refined, _line_at(evidence, refined_match.start()), HINT
            return cause, _line_at(evidence, start), strength
    match = _ARGS_MSG_RE.search(evidence)
    if match:
        return "incompatible_arguments", _line_at(evidence, match.start()), ROOT
    if _ARGS_FRAME_RE.search(evidence):
        for line in evidence.splitlines():
            if _ARGS_EXC_RE.match(line):
                return "incompatible_arguments", line, HINT
    match = _ARGS_REFUSAL_RE.search(evidence)
    if match:
        return "incompatible_arguments", _line_at(evidence, match.start()), HINT
    match = _WARMUP_RE.search(evidence)
    if match:
        return "warmup_failed", _line_at(evidence, match.start()), SURFACE
    return "unknown", None, HINT


def _states_unknown(evidence: str) -> bool:
    """Whether a rule that names no cause matched (SGLang disagreeing with itself): the evidence was read as it is, so
    joining lines a terminal may have broken (:func:`unwrap`) must not find a cause the text as it is does not give."""
    return any(cause == "unknown" and pattern.search(evidence) for cause, pattern, _strength in _CAUSE_RULES)


def _line_at(text: str, index: int) -> str:
    """The whole line of ``text`` around ``index``."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start:] if end < 0 else text[start:end]


# Lines that say themselves that they are harmless (newer SGLang only warns and goes on without its custom all-reduce;
# a package skips an optional extension; SGLang adjusts a setting itself: "Breakable CUDA graph is incompatible with
# multimodal model; disabling prefill CUDA graph."): never evidence, even when their words match a rule.
_HARMLESS_RE = re.compile(r"To silence this warning|can be ignored|Skipping import of|Ignoring \w+ import error"
                          r"|[;.] (?:[Dd]isabling|[Aa]utomatically (?:set|disabl|adjust)\w*|[Ff]alling back to|[Ff]allback to) "
                          # SGLang adjusting a setting itself, saying why ("Disabling overlap schedule since mamba no_buffer
                          # is not compatible with overlap schedule, try to use --disable-radix-cache ...")
                          r"|^[Dd]isabling [^\n]{1,80}? (?:since|because) "
                          # a checkpoint without the optional generation_config.json: SGLang warns and uses defaults
                          r"|^Failed to load generation config for ")
# SGLang's echo of its arguments and of its command line names every option: never evidence.
_ECHO_RE = re.compile(r"^(?:\[[^\]]*\] )?server_args=|launch_server |sglang serve |^\S*\$ |command: ")
# ... but systemd quoting the unit's command line in its own refusal ("sglang.service:9: Executable path is not absolute,
# ignoring: python3 -m sglang.launch_server ...") is systemd speaking, not an echo.
_SYSTEMD_SAYS_RE = re.compile(r"\.service(?::\d+)?: ")


# Words without which no rule can match a line (lower case): a line with none of them is not evidence. The rules are
# many alternations that Python's re tries at every position; this check keeps a line that says nothing (most of a log:
# progress, phases, requests) to a few substring searches (tests hold the gate equal to the rules on real logs, and
# word by word). No word holds another: the shorter one already lets every line with the longer one through.
_NOTABLE_WORDS = (
    "status=2", "failed at step", "environment files", "task:", "failed to set up", "credentials", "locate executable",
    "unit file", "fatal error", "memory access fault", "gpus are available", "weights are missing", "'resources'",
    "not absolute", "errno", "permission denied", "eacces", "in use", "eaddrinuse", "not available",
    "used by a process", "driver", "compatib", "undefined symbol", "ninja", "no such file", "not found", "find",
    "cuda_home", "nvcc", "libnvrtc", "illegal", "misaligned", "kernel image", "binaryforgpu", "supported",
    "invalid device", "invaliddevice", "require", "capabilit", "or newer", "or later", "or above", "common_ops",
    "no module named", "cannot import name", "shared object", "mismatch", "pair.cc", "likely closed", "by peer",
    "peer access", "peeraccess", "p2p", "enable access", "error building extension", "collect2", "ld returned",
    "calledprocesserror", "command '[", "build failed", "compil", "jit", "-lcuda", "deep_gemm", "out of memory",
    "outofmemory", "not enough memory", "mem-fraction-static", "memoryallocation", "alloc_failed", "profiled value",
    "divisible", "must be", "does not match", "assert ", "nccl", "diststore", "distnetwork", "tcpstore",
    "process group", "store_based_barrier", "rendezvous", "c10d", "init_process_group", "wait timeout", "nvshmem",
    "deep_ep", "result expired", "asyncresulttimeout", "bus error", "sigbus", "135", "exit code: -", "new thread",
    "bad_alloc", "graph", "capturing", "dynamo", "inductor", "fall back to eager", "_opnamespace", "architecture",
    "object has no attribute", "local folder", "notfounderror", "gatedrepo", "hfvalidation", "gated repo",
    "client error", "does not appear to have", "can't load", "offlinemode", "huggingface.co", "authenticated",
    "cannot set --", "cannot be combined", "must differ", "mutually exclusive", "warmup", "model_info", "/generate",
    "/v1/", "no space left", "unable to write to file", "unable to mmap", "unable to allocate shared memory",
    "current gpu", "current device", "no longer supports", "does not exist", "numpy 1.x", "package metadata",
    "pip install", "unbalanced", "during capture", "streamcapture", "stream_capture", "invalid value for '--log-level'",
    "does not support", "already used by", "deserializing header", "headertoolarge", "distbackenderror", "cuda calloc",
    "cuda malloc", "cuda host alloc", "to be installed", "is not installed", "model config", "only support",
    "finish loading", "become ready", "fallback pattern", "custom_all_reduce.cu", "http_ready", "watchdog timeout",
    "pyspy dump", "cur_batch", "error 802", "systemnotready", "system_not_ready", "ptxas", "exit status",
    "invalid resource handle", "which: no ", "cannot execute", "code=127", "status 127", "not_permitted",
    "notpermitted", "condition: ", "assertion `", "registered model", "transformers implementation", "dispatchoutput",
    "dispatchinput", "combineoutput", "combineinput", "exceeds dimension size", "output' object", "kv cache",
    "kv_cache", "kv-cache", "one token", "single token", "1 token", "in the tokenizer", "in the vocab", "in tokenizer",
    "valid json", "_dict_from_json_file", "available on", "shim: ", "native ", "'serverargs'", "() got an",
    "() missing", "() takes", ": error: ", "invalid configuration", "_size=", "tensor core", "cuda support",
    "cuda enabled", "rocm support", "sglang implementation", "installed with version", "expects", "nv_err_no_memory",
    "socversion", "on your device", "on this device", "deepep error", "deepep timeout", "ipc handle", "connect",
    "dtype support list", "transfer engine", "gid index", "unknown ", "page size", "page_size", ".dtype", "code=137",
    "status 137", "killed signal", "kernel config", "aclopkernelinit", "running arch", "out_of_device_memory",
    "ifa != nullptr", "no accelerator", "no cuda gpus", "layer type", "tma descriptor", "cutensormapencode",
    "registration failed", "register memory", "variable 'backend'", "kv pool", "nokernelimage",
    "thrown while requesting", "no backend type",
)


def is_notable(line: str) -> bool:
    """Whether a line outside any traceback says something about a failure (kept as evidence for later).

    Why: real logs often carry the decisive line alone (a tail, a UI that keeps the last error, a warning printed
    before a cut traceback). Such a line does not fail a start, but once the start has failed it explains it.
    """
    low = line.lower()
    return any(word in low for word in _NOTABLE_WORDS) and notable_by_rules(line)


@functools.lru_cache(maxsize=2048)
def notable_by_rules(line: str) -> bool:
    """:func:`is_notable` without its gate of words: what the rules alone say (tests hold the two equal on real logs).

    Cached: the ranks of one server print the same lines, and a pure function of a line may remember its answer."""
    if (_ECHO_RE.search(line) and not _SYSTEMD_SAYS_RE.search(line)) or _HARMLESS_RE.search(line):
        return False
    cause, _line, strength = decisive(line)
    return cause != "unknown" and strength != HINT and not _IMPORT_ERROR_RE.search(line)


_HINTS = {
    "invalid_arguments": "The command line was rejected by SGLang's argument parser: fix the flag named in error_message in "
                         "sglang_server_args (keys are SGLang's option names with underscores; the CLI prints them dashed).",
    "incompatible_arguments": "Two settings in sglang_server_args contradict each other (see error_message, which names them in the CLI's "
                              "dashed form): change or drop one of them; the preflight lint runs the same rules before a restart.",
    "cuda_graph_capture_failed": "CUDA graph capture failed: lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20), e.g. to 16, "
                                 "and/or mem_fraction_static (e.g. 0.8); drop enable_torch_compile (torch.compile fails inside the capture "
                                 "in several reports); as a last resort set cuda_graph_backend_decode: disabled (disable_cuda_graph: true "
                                 "on older versions), at a large speed cost.",
    "illegal_memory_access": "A GPU kernel read or wrote memory it does not own: a kernel bug, not a memory setting. Upgrade SGLang "
                             "(sglang_install_version) and its kernels, try another attention_backend (e.g. triton or fa3) or drop "
                             "enable_torch_compile, and confirm with cuda_graph_backend_decode: disabled (disable_cuda_graph: true "
                             "before 0.5.20); CUDA_LAUNCH_BLOCKING=1 in sglang_server_env shows the failing kernel.",
    "nccl_error": "NCCL failed between the GPUs: get its reason with NCCL_DEBUG=INFO (NCCL WARN lines), check /dev/shm size in "
                  "containers (NCCL's shared memory segments; a Kubernetes pod needs a memory-backed /dev/shm) and IOMMU/ACS on PCIe "
                  "boxes; try NCCL_P2P_DISABLE=1, and pin NCCL_SOCKET_IFNAME on multi-NIC hosts (all in the unit's environment "
                  "file, which the gpu_tuning role manages).",
    "p2p_unsupported": "These GPUs cannot access each other's memory for SGLang's custom all-reduce (no P2P: GeForce cards, ACS/IOMMU "
                       "on PCIe, or a CUDA custom all-reduce on ROCm): set disable_custom_all_reduce: true in sglang_server_args "
                       "(NCCL then does the all-reduce).",
    "distributed_init_failed": "The ranks could not meet: check that dist_init_addr points to node 0 and that its port is reachable "
                               "from every node (firewall), that all nodes use the same nnodes/tp_size and distinct node_rank values "
                               "and were started within dist_timeout of each other, and pin GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME on "
                               "multi-NIC hosts (IPv6 addresses go in [addr]:port form).",
    "peer_rank_lost": "Another rank (or node) went away first: this rank only saw its connection closed. The cause is in the other "
                      "ranks' or nodes' logs (journalctl -u on every node, and the first traceback by time): look there, not here.",
    "model_unavailable": "The model could not be found or fetched: check model_path (a local directory with config.json, or the "
                         "exact hub id), HF_TOKEN for gated or private repos (accept the licence on the hub first), the files the "
                         "repo really has, and network access; or let the model_cache role fetch it once and serve it offline "
                         "(HF_HUB_OFFLINE=1). For speculative decoding also check speculative_draft_model_path.",
    "kernel_compile_failed": "A JIT kernel build (FlashInfer, Triton, DeepGEMM or sgl-kernel) failed: install the CUDA toolkit "
                             "matching the torch build (nvcc and headers, CUDA_HOME), gcc and ninja, make the cache directory "
                             "writable (SGLANG_CACHE_DIR or HOME in the unit), or choose another attention_backend (e.g. triton); "
                             "a DeepGEMM case it cannot build is switched off with SGL_ENABLE_JIT_DEEPGEMM=0.",
    "jit_tool_missing": "A JIT kernel build needs a tool that the unit cannot find (error_message names it): under systemd PATH "
                        "is only /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin, so neither the venv's bin (ninja from pip) nor "
                        "/usr/local/cuda/bin (nvcc) is on it. Install it (pip install ninja into the SGLang venv; the CUDA toolkit "
                        "for nvcc and libnvrtc), then set PATH and CUDA_HOME in sglang_server_env, e.g. "
                        "PATH: <venv>/bin:/usr/local/cuda/bin:/usr/bin:/bin and CUDA_HOME: /usr/local/cuda.",
    "package_mismatch": "Installed packages do not fit each other: a compiled kernel package (sgl-kernel, vLLM, FlashInfer) built "
                        "for another torch or CUDA (an undefined symbol), a dependency missing or at an incompatible version, or a "
                        "CUDA build on a ROCm host. Install the versions pinned together for this SGLang release (sglang_install "
                        "role: one venv per release with its own torch) instead of upgrading one package alone.",
    "driver_mismatch": "The NVIDIA driver does not match the CUDA runtime of this SGLang/torch build: upgrade the driver "
                       "(nvidia_driver role; CUDA 13 wheels need R580 or newer, sgl-kernel's green contexts a driver for CUDA "
                       ">= 12.4) or pin an SGLang version built for the installed driver; after a driver upgrade without "
                       "reboot, reboot (driver/library version mismatch).",
    "unsupported_gpu": "The installed build or the chosen kernel does not support this GPU's architecture: pick another "
                       "attention_backend (e.g. flashinfer or triton instead of fa3/fa4) or quantization (FP8/FP4 kernels need "
                       "newer GPUs), or install a build made for this architecture (sgl-kernel, FlashInfer or torch wheels for it).",
    "speculative_decoding_error": "Speculative decoding failed to start: check that speculative_algorithm and "
                                  "speculative_draft_model_path fit the target model (EAGLE3 needs an EAGLE3 draft head; NEXTN/MTP uses "
                                  "the checkpoint's own draft layers), set speculative_num_steps, speculative_eagle_topk and "
                                  "speculative_num_draft_tokens together, or remove the speculative_* keys to confirm the base model starts.",
    "warmup_failed": "The server came up but its warmup request failed. SGLang sends the warmup to its own bind address (host), "
                     "through any http_proxy in its environment: a 502, 503 or 403 (often an HTML page) is a proxy's answer. Set "
                     "no_proxy (and NO_PROXY) in sglang_server_env to hold that address, e.g. 127.0.0.1,localhost,0.0.0.0 when "
                     "host is 0.0.0.0, or unset the proxy. skip_server_warmup: true hides the check but does not fix the cause.",
    "port_in_use": "The port is already in use: stop the process that holds it or set another port in sglang_server_args.",
    "bind_permission_denied": "The server may not bind its port: ports below 1024 need CAP_NET_BIND_SERVICE, which the unit drops "
                              "(CapabilityBoundingSet= is empty). Set port to 1024 or above in sglang_server_args and put a proxy "
                              "in front for port 80/443.",
    "systemd_unit_error": "systemd could not start the unit's process (error_message has its words): a file the unit names is "
                          "missing or unusable (ExecStart's program: the SGLang venv; EnvironmentFile; WorkingDirectory), or its "
                          "user does not exist. Re-run the sglang_install and sglang_server roles, then read "
                          "systemctl status and journalctl -u for the unit.",
    "host_resource_error": "The host, not the GPU, ran out of a resource: a SIGBUS while reading memory-mapped weights (disk or "
                           "page cache trouble, a full /dev/shm or tmpfs), host RAM or a limit ([Errno 12] Cannot allocate memory; "
                           "check dmesg -T for the OOM killer), disk space or open files. Free host memory, check the disk that "
                           "holds the weights, raise the limit (sglang_server_limit_nofile).",
    "unknown": "No known cause matched: read traceback and error_message (and last_lines); the process ended before reaching ready.",
}


# vLLM's options that SGLang does not know, and the sglang_server_args key that does the same
# (docs/startup-failure-causes.md, invalid_arguments).
_VLLM_EQUIVALENTS = {
    "gpu_memory_utilization": "mem_fraction_static",
    "max_model_len": "context_length",
    "max_num_seqs": "max_running_requests",
    "max_num_batched_tokens": "chunked_prefill_size",
    "enforce_eager": "disable_cuda_graph (cuda_graph_backend_decode: disabled from 0.5.20)",
    "pipeline_parallel_size": "pp_size",
    "data_parallel_size": "dp_size",
    "enable_prefix_caching": "nothing (SGLang's radix cache is on unless disable_radix_cache)",
    "swap_space": "nothing (no CPU swap space in SGLang)",
}


def _key(flag: str) -> str:
    """The sglang_server_args key of a CLI flag: ``--max-loaded-loras`` -> ``max_loaded_loras``."""
    return flag.lstrip("-").split("=", 1)[0].replace("-", "_")


def _hint_invalid_arguments(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _UNRECOGNIZED_RE.search(message)
    if match:
        flags = match.group("args").strip()
        keys = sorted({_key(flag) for flag in flags.split() if flag.startswith("--")})
        named = ", ".join(keys) or flags
        vllm = ["%s is %s" % (key, _VLLM_EQUIVALENTS[key]) for key in keys if key in _VLLM_EQUIVALENTS]
        other = (" Those are vLLM's names; in SGLang " + "; ".join(vllm) + ".") if vllm else ""
        return (f"SGLang does not know {flags}: remove {named} from sglang_server_args or fix the key (keys are SGLang's "
                f"option names with underscores; the parser prints them dashed).{other} A flag newer than the installed "
                "release needs an upgrade (sglang_install_version); a removed one (enforce_piecewise_cuda_graph, ...) must go. "
                "The diffusion server (sglang serve of a diffusion model) has its own, smaller set of options: an option of "
                "the LLM server (served_model_name, ...) is not one of them there. The preflight lint checks every key against "
                "the installed version before restarting.")
    match = _AMBIGUOUS_RE.search(message)
    if match:
        return (f"{match.group('opt')} is only a prefix of {match.group('choices').strip()}: use the full option name, "
                "e.g. cuda_graph_max_bs_decode instead of cuda_graph_max_bs on SGLang 0.5.20 and later.")
    match = _INVALID_CHOICE_RE.search(message)
    if match:
        key = match.group("opt").lstrip("-").replace("-", "_")
        return (f"{match.group('value')} is not a value {match.group('opt')} takes: set {key} in sglang_server_args to one of "
                "the choices error_message lists.")
    if "LOG_LEVELS[" in evidence or "Unknown level" in evidence or "--log-level" in message:
        return ("The log level is not one the server's logging knows: uvicorn takes only lower-case names, so set log_level "
                "(and log_level_http) in sglang_server_args to debug, info, warning, error or critical (info, not INFO). "
                "A warmup that found nothing listening is only a consequence: the HTTP server never started.")
    if re.search(_BACKEND_UNSET, message) or re.search(_BACKEND_UNSET, evidence):
        indexed = _INDEXED_DEVICE_RE.search(evidence)
        named = f"device is {indexed.group('device')}, but it" if indexed else "device"
        return (f"SGLang's {named} takes a device type (cuda, xpu, npu, hpu, cpu), not one device with its index: its "
                "distributed set-up found no backend for the value and stopped. Set device to the type (or leave it out) "
                "and choose the GPUs with CUDA_VISIBLE_DEVICES in sglang_server_env, or base_gpu_id in sglang_server_args.")
    unknown_value = re.search(r"\bUnknown (?P<what>[\w-]+(?: [\w-]+)? (?:algorithm|backend|parser|method|strategy|mode))"
                              r"(?: name)?: ['\"]?(?P<value>[\w.-]+)", message)
    if unknown_value:
        return (f"{unknown_value.group('value')} is not a {unknown_value.group('what')} the installed SGLang knows (the parser "
                "let it through; SGLang's own lookup did not): set the key in sglang_server_args to a name this release "
                "takes (its docs or `--help` list them; a name of a newer release, or another engine's, needs an upgrade "
                "or SGLang's own name, e.g. speculative_algorithm NEXTN or EAGLE for a model's MTP layers).")
    if re.search(r"unrecognized arguments:\s*$", message):
        return ("The parser was handed an empty argument (unrecognized arguments: with nothing after it): a variable that "
                "expands to an empty word, such as a quoted \"$EXTRA_ARGS\" in a unit's ExecStart or a wrapper script. Drop "
                "the empty argument (leave the variable unquoted, or remove it); sglang_server renders every option itself, "
                "so extra options go in sglang_server_extra_args.")
    missing = re.search(r"(?:not found|does not exist|No such file)[^\n]*?(?P<flag>--[a-z][\w-]*)", message)
    if missing:
        return (f"SGLang's own check of {missing.group('flag')} refused its value: a file it names is not there (error_message "
                f"says which). Fix {_key(missing.group('flag'))} in sglang_server_args to name a file the service user can "
                "read on this host (the model_cache role can put it there), or drop the option.")
    if message.startswith("usage:"):
        return ("The argument parser rejected the command line (only its usage banner reached the log): run the preflight "
                "lint, which checks every key of sglang_server_args against the installed SGLang's parser.")
    return None


# the method the setting names may be on the next line of a wrapped message, or cut off
_QUANT_CONFIG_RE = re.compile(r"specified in the model config \((?P<config>[\w-]+)\)(?:\s+does not match[^\n]*?\((?P<arg>[\w-]+)\))?")


_MOE_OUTPUT_RE = re.compile(r"'(?P<output>\w*(?:Dispatch|Combine)(?:Output|Input)\w*|DeepEP\w*Output)' object has no attribute "
                            r"'(?P<attr>\w+)'|(?P<check>DispatchOutputChecker)\.format_is_")


def _hint_incompatible_arguments(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    if "speculative_eagle_topk" in message and "page_size" in message:
        return ("The speculative settings do not fit the KV cache's layout: a speculative_eagle_topk above 1 with a "
                "page_size above 1 runs only on the attention backend error_message names. Set speculative_eagle_topk: 1 "
                "in sglang_server_args (with speculative_num_draft_tokens one more than speculative_num_steps), or page_size: "
                "1 where the backend allows it, or that attention_backend where this GPU has it.")
    moe = _MOE_OUTPUT_RE.search(message) or _MOE_OUTPUT_RE.search(evidence)
    if moe:
        what = "its check of the dispatch format failed" if moe.group("check") else f"{moe.group('output')} has no {moe.group('attr')}"
        return (f"The MoE runner backend cannot take what the all-to-all backend hands it ({what}): moe_runner_backend and "
                "moe_a2a_backend in sglang_server_args do not fit each other on this release. Choose a moe_runner_backend "
                "that supports that moe_a2a_backend (with DeepEP's low-latency mode: deep_gemm rather than flashinfer_mxfp4), "
                "or another moe_a2a_backend; dropping one of them confirms it.")
    found = [match for match in (_QUANT_CONFIG_RE.search(message), _QUANT_CONFIG_RE.search(evidence)) if match]
    match = next((match for match in found if match.group("arg")), found[0] if found else None)
    if match:
        chosen = f"quantization: {match.group('arg')}" if match.group("arg") else "quantization to another method"
        return (f"The checkpoint's config says it is quantized with {match.group('config')}, and sglang_server_args sets "
                f"{chosen}, which this release does not accept for it: drop quantization (SGLang "
                "reads the method from the checkpoint and picks its fastest kernel where it can), or set it to "
                f"{match.group('config')}; a faster kernel of the same format (awq_marlin) needs a release that converts it.")
    quant_dtype = re.search(_QUANT_DTYPE, evidence, re.I)
    if quant_dtype:
        return (f"The quantization method {quant_dtype.group('method')} takes only the dtypes {quant_dtype.group('ok')}, and the "
                f"model runs in {quant_dtype.group('got')} (dtype: auto takes the checkpoint's): set dtype in sglang_server_args "
                "to one it lists (dtype: float16), or choose a quantization whose kernels take the model's dtype (awq_marlin "
                "for an AWQ checkpoint on Ampere or newer).")
    dtype_assert = re.search(_DTYPE_ASSERT, evidence, re.I)
    if dtype_assert:
        return (f"A code path of this model asserts that its tensors are {dtype_assert.group('want')}, and the server runs it in "
                "another dtype (dtype in sglang_server_args, or one a quantization forces, such as awq's float16): set dtype: "
                f"{dtype_assert.group('want')} in sglang_server_args, and a quantization whose kernels take it (awq_marlin "
                "rather than awq for an AWQ checkpoint).")
    if "encoder" in message and "url" in message.lower():
        return ("language_only: true needs encoder_urls on this SGLang version: set encoder_urls to the URL(s) of the encoder "
                "server(s), e.g. [\"http://10.0.0.5:30001\"], or remove language_only.")
    if "not compatible with" in message and "--" in message:
        keys = sorted({_key(flag) for flag in _FLAG_RE.findall(message)})
        return (f"A feature in use says it does not work with {', '.join(keys)} as set (error_message names the setting and "
                "often the way out, such as another value or an environment variable): change that setting in "
                "sglang_server_args (or sglang_server_env) as the message says, or drop the feature.")
    lora_layer = re.search(r"No corresponding LoRA layer supported for <class '(?:[\w.]*\.)?(?P<layer>\w+)'>", message)
    if lora_layer:
        return (f"The LoRA target modules reach a layer SGLang has no LoRA wrapper for ({lora_layer.group('layer')}; with "
                "'all-linear' on a MoE model that is the router): name the modules instead, e.g. lora_target_modules: "
                "[q_proj, k_proj, v_proj, o_proj] in sglang_server_args (and the adapter's own target modules), leaving the "
                "router and other unsupported layers out.")
    if "/srt/lora/" in evidence and "object has no attribute" in message:
        return ("LoRA wraps a layer that does not hold the weights it reads here (error_message names the layer and the "
                "weight): the MoE runner backend or quantization in use keeps them in another layout. Set "
                "moe_runner_backend to one that works with LoRA on this release (or drop it to let SGLang choose), or "
                "serve without the LoRA adapters (lora_paths) to confirm.")
    backends = re.search(r"expects (?P<setting>(?:--)?[\w-]*backend) to be one of", message)
    if backends:
        return (f"A feature chosen in sglang_server_args (error_message names it: an fp4 KV cache, say) takes only some "
                f"values of {_key(backends.group('setting'))}, which SGLang's message lists: set "
                f"{_key(backends.group('setting'))} to one of them, or drop the feature.")
    if "backend" in message and "supported" in message:
        return ("The attention backend chosen does not support this model or GPU (error_message lists the ones that do): set "
                "attention_backend in sglang_server_args to one of them, or drop it to let SGLang choose.")
    keys = sorted({_key(flag) for flag in _FLAG_RE.findall(message)})
    if keys:
        return (f"These settings contradict each other: {', '.join(keys)} (error_message names them as the CLI's dashed flags): "
                "change or drop one of them in sglang_server_args; the preflight lint runs the same rules before a restart.")
    return None


_FLAG_RE = re.compile(r"--[a-z][\w-]*")


def _hint_parallelism(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    if "invalid device ordinal" in evidence or "hipErrorInvalidDevice" in evidence:
        return ("A rank asked for a GPU this node does not have: tp_size * pp_size / nnodes GPUs must be visible on every node "
                "(CUDA_VISIBLE_DEVICES, the container's GPUs, base_gpu_id): lower tp_size or add nodes (nnodes, node_rank).")
    if "exceeds dimension size" in evidence:
        return ("A weight of the checkpoint does not split into tp_size shards of the size this release's layout takes "
                "(a rank's shard starts beyond the tensor: start + length exceeds its dimension; a narrow MoE or quantized "
                "layer that would need padding): choose a tp_size that divides that layer (for MoE experts, expert "
                "parallelism, ep_size equal to tp_size, keeps each expert whole on a rank instead of splitting its width), "
                "or upgrade SGLang (sglang_install_version) to a release whose loader pads such layers.")
    match = _DIVISIBLE_RE.search(message) or _DIVISIBLE_RE.search(evidence)
    detail = f" ({match.group('a')} is not divisible by {match.group('b')})" if match else ""
    if _QUANT_GROUPS_RE.search(message) or _QUANT_GROUPS_RE.search(evidence):
        return (f"A quantized layer's share on each rank is not a whole number of its quantization groups{detail}: the "
                "checkpoint's group size (often 128) cuts the layer into groups that tp_size ranks cannot share evenly. "
                "Pick a tp_size that divides them (a smaller one; 1 where one GPU holds the model), use expert parallelism "
                "for MoE experts (ep_size equal to tp_size keeps each expert whole on a rank), or serve a checkpoint "
                "quantized with a smaller group size.")
    return (f"The parallel layout does not fit the model{detail}: pick a tp_size that divides the model's attention heads "
            "(including vision heads of multimodal models), experts and, for quantized weights, the layer widths by the "
            "quantization block (a smaller tp_size, or another quantization); keep tp_size * pp_size divisible by nnodes, "
            "and keep attn_dp_size / ep_size within tp_size.")


_KV_ROOM_RE = re.compile(r"(?:no|not enough|insufficient) (?:free |available )?(?:GPU )?(?:memory|room) (?:left )?(?:for|to allocate) "
                         r"(?:the )?(?:full )?KV[ _-]?(?:cache|pool)"
                         r"|memory for (?:the )?KV[ _-]?cache (?:is|=) ?(?:negative|-\d|0(?:\.0+)? ?GB)", re.I)


def _hint_oom(message: str, phase: Optional[str], evidence: str) -> Optional[str]:
    if "memory capacity is unbalanced" in evidence:
        return ("Some of the GPUs have much less free memory than the others: another process holds memory there (nvidia-smi; "
                "often an earlier server that did not stop, or another job on a shared box), or the GPUs of this tensor-parallel "
                "group are of different models (a 10 GB card beside a 32 GB one: each rank gets the smallest one's share). "
                "Stop the other process, or give this server GPUs of one model with free memory "
                "(CUDA_VISIBLE_DEVICES in sglang_server_env, or base_gpu_id).")
    if re.search(r"Failed to CUDA (?:calloc|malloc|host alloc)|NCCL WARN Cuda failure 'out of memory'", evidence):
        return ("NCCL could not allocate its buffers on the GPU: mem_fraction_static leaves too little GPU memory outside "
                "SGLang's own pools (NCCL, CUDA graphs and activations need it): lower mem_fraction_static (e.g. from 0.95 "
                "to 0.85) in sglang_server_args, and check that no other process holds GPU memory (nvidia-smi).")
    if re.search(r"Not enough (?:space|memory) for (?:the )?(?:mamba|state|ssm|linear[ _]attention) cache", evidence, re.I):
        return ("The state cache of this hybrid (linear-attention) model got too little of the memory SGLang keeps for its "
                "pools: raise mamba_full_memory_ratio or max_mamba_cache_size as the message says, or mem_fraction_static, "
                "or lower max_running_requests (each running request holds a state slot).")
    if ("Not enough memory" in message or "larger than the profiled value" in evidence or "increase --mem-fraction-static" in evidence
            or _KV_ROOM_RE.search(message) or _KV_ROOM_RE.search(evidence)):
        return ("The weights fit but no GPU memory is left for the KV cache: raise mem_fraction_static (e.g. by 0.05, or to "
                "the value SGLang's message names when it names one; check that the value really reaches the server), lower "
                "context_length or max_running_requests, use more GPUs (tp_size) or a quantized model.")
    if phase == "cuda_graph_capture" or "apture cuda graph failed" in evidence.replace("CUDA", "cuda") or "cuda_graph_runner" in evidence:
        return ("GPU memory ran out while capturing CUDA graphs: lower mem_fraction_static (e.g. 0.8) to leave room for the "
                "graphs, and/or lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20), e.g. to 16.")
    if phase in (None, "process_started", "parallel_init", "weights_loading"):
        return ("The model weights do not fit in GPU memory: increase tp_size, use a quantized checkpoint, or free the GPUs "
                "(another process may hold memory: nvidia-smi). mem_fraction_static does not help while loading weights.")
    return ("GPU memory ran out after the weights were loaded: lower mem_fraction_static (e.g. 0.8) to leave room for "
            "activations and CUDA graphs, and/or lower cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20) "
            "or chunked_prefill_size.")


_MODEL_TYPE_RE = re.compile(r"(?:configuration_auto\.py\", line \d+, in __getitem__\n" + _FRAME_BODY
                            + r"|\bget_config\(\s*\n(?:[^\n]*\n){0,6}?)KeyError: '(?P<type>[\w.-]+)'")
_MODEL_TYPE_HINT = (
    "The installed transformers does not know the model type '{type}' in the checkpoint's config.json (a model newer "
    "than that transformers): install the SGLang release that supports the model, with the transformers it pins "
    "(sglang_install_version; the sglang_install role installs the set together), rather than upgrading transformers "
    "alone.")


_LAYER_LACKS_RE = re.compile(_LAYER_LACKS)


_UNREGISTERED_RE = re.compile(r"'(?P<arch>\w+)' is not a registered model in the Transformers library"
                              r"|The Transformers implementation of '?(?P<arch2>\w+)'? is not compatible")


def _hint_architecture(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    lacking = _LAYER_LACKS_RE.search(evidence)
    if lacking:
        return (f"Code that walks the model's layers (a cache or runner feature) expects an {lacking.group('part')} "
                f"attribute in each, and this model's {lacking.group('layer')} has none (the linear-attention or "
                "state-space layers of a hybrid model have no attention module): the runner or feature in use does not "
                "support this architecture. Serve the model "
                "with a runner and SGLang release that support it (sglang_install_version), start without the optional "
                "feature that raised it (a radix or KV cache patch), or serve a model with attention in every layer.")
    unregistered = _UNREGISTERED_RE.search(evidence)
    if unregistered:
        arch = unregistered.group("arch") or unregistered.group("arch2")
        return (f"This SGLang build has no model class of its own for {arch}, and its transformers fallback has none "
                "either (transformers does not know it, or its class cannot run under SGLang): install an SGLang release "
                "that supports the model (sglang_install_version; a main build from before its support is not one), or "
                "serve a model this release supports.")
    if re.search(r"'Transformers\w*For\w+' object has no attribute", evidence):
        return ("SGLang has no implementation of its own for this model, and its transformers fallback "
                "(TransformersForCausalLM) cannot run it on this release (it lacks what the model's layers need): "
                "upgrade SGLang (sglang_install_version) to a release with a native class for the model or a fixed "
                "fallback, or serve a model this release supports natively.")
    if re.search(_KERNEL_HEAD_ASSERT, evidence):
        return ("This model's head size (head_dim) is not one the attention kernel in use takes (its assertion lists the "
                "sizes it supports): set attention_backend in sglang_server_args to another backend (flashinfer, or triton "
                "when flashinfer was in use), or upgrade SGLang (sglang_install_version), whose kernels take more sizes.")
    if re.search(_NO_QUANT_METHOD_ASSERT, evidence):
        return ("A layer of this model found no implementation for the checkpoint's quantization (quant_method is None: "
                "the MoE layer of a GPTQ or AWQ checkpoint in older releases): serve the unquantized checkpoint or a "
                "quantization this release supports for the model (FP8, or another export), or upgrade SGLang "
                "(sglang_install_version).")
    if _WEIGHT_LOADER_FAILED_RE.search(evidence):
        return ("The checkpoint's weights are not what this SGLang's implementation of the model expects (its weight loader, "
                "or the quantization method processing the loaded weights, failed: a shape assertion, a weight name it has no "
                "parameter for, a scale of another shape): a quantized or converted variant it cannot load (a bitsandbytes "
                "4-bit export, an FP8 checkpoint with per-tensor input scales, a tied lm_head stored anyway), or a layer that "
                "tp_size splits unevenly. Serve the original checkpoint or a quantization this version supports for the "
                "model, try another tp_size, or upgrade SGLang (sglang_install_version).")
    match = _ARCH_RE.search(message) or _ARCH_RE.search(evidence)
    arch = match.group("arch") if match else "the model's architecture"
    return _hint_naming(_MODEL_TYPE_RE, evidence, _MODEL_TYPE_HINT) or (
        f"This SGLang version has no implementation of {arch} (or cannot read its config): upgrade SGLang "
        "(sglang_install_version), try the transformers fallback (model_impl: transformers) where supported, or serve a supported model.")


def _hint_naming(pattern: "re.Pattern[str]", text: str, template: str) -> Optional[str]:
    """A hint that names what the pattern found in text (its named groups fill the template), or None."""
    match = pattern.search(text)
    return template.format(**match.groupdict()) if match else None


def _hint_port(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _PORT_RE.search(message) or _PORT_RE.search(evidence)
    port = (match.group("port") or match.group("port2") or match.group("port3") or match.group("port4")) if match else None
    which = "metrics_port" if "metrics_port" in message else "port"
    if "zmq" in evidence.lower() or "tcp://" in message:
        where = f"port {port}" if port else "the endpoint error_message names"
        return (f"A ZMQ socket could not bind {where}: another process holds it (an earlier server that did not stop: "
                "ss -ltnp), or several ranks bind the same endpoint (an endpoint of kv_events_config, or another in-process "
                "publisher, with tp_size > 1). Stop the holder, or give that endpoint a port of its own that is free.")
    if port is None:
        return "The port is already in use: stop the process that holds it or set another port in sglang_server_args."
    return (f"Port {port} is already in use: stop the process that holds it (ss -ltnp 'sport = :{port}'; often an earlier "
            f"server that did not stop) or set another {which} in sglang_server_args.")


def _hint_jit_tool(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    match = _MISSING_TOOL_RE.search(message) or _MISSING_TOOL_RE.search(evidence)
    if match is None:
        return None
    named = match.group("tool") or match.group("tool2") or match.group("tool3") or match.group("tool4")
    tool = "ninja" if match.group("ninja") else named
    if tool == "hipcc":
        return ("The JIT kernel build ran ROCm's compiler (hipcc under /opt/rocm), which is not installed: on an NVIDIA host "
                "the JIT picked the ROCm toolchain because a ROCm folder exists (a stray /opt/rocm, or ROCM_HOME/HIP_PATH "
                "set). Remove or rename that folder (or unset those variables in sglang_server_env) so that the CUDA "
                "toolkit's nvcc is used; on an AMD host install ROCm's hipcc instead.")
    where = ("pip install ninja into the SGLang venv" if tool == "ninja" else
             "install the CUDA toolkit that matches torch's CUDA" if tool in ("nvcc", "ptxas", "cicc", "fatbinary", "nvlink") else
             "install the build tools (apt-get install build-essential)")
    return (f"The JIT kernel build needs {tool}, which the unit cannot find: {where}, then put its folder on PATH in "
            "sglang_server_env (under systemd PATH is only /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin, without the "
            "venv's bin or /usr/local/cuda/bin), e.g. PATH: <venv>/bin:/usr/local/cuda/bin:/usr/bin:/bin, and CUDA_HOME.")


_KERNEL_LOADER_RE = re.compile(r"Could not load any common_ops library|Standard Python import: common_ops - failed"
                               r"|(?:Architecture-specific|Fallback) pattern: [^\n]*sgl_kernel/")
_MISSING_LIBRARY_RE = re.compile(r"(?P<lib>lib[\w.+-]+\.so[\w.]*): cannot open shared object file")
_SHIM_RE = re.compile(_SHIM)
_HALF_ONLY_RE = re.compile(r"only\s+supports?\s+(?:fp16|bf16|float16|bfloat16|half)\b", re.I)
_WITHOUT_CUDA_RE = re.compile(_WITHOUT_CUDA)
_VERSION_GATE_RE = re.compile(_VERSION_GATE, re.I)
_LAUNCHER_RE = re.compile(_LAUNCHER_SIGNATURE)
_COMPILER_DIAGNOSTIC_RE = re.compile(_COMPILER_DIAGNOSTIC)
_REQUIRED_PACKAGE_RE = re.compile(r"\brequires \"?(?P<package>[\w.\[\]-]+)\"? to be installed|\b(?P<package2>[\w.-]+) is not installed\. ")


_KERNEL_ASSERT_RE = re.compile(r"\b(?P<package>deep_gemm|flashinfer|flash_mla|sgl_kernel)/[^\s:]*\.cuh?:\d+"
                               r"(?:, condition: |: [^\n]*Assertion `)")


def _hint_package(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    assertion = _KERNEL_ASSERT_RE.search(evidence)
    if assertion:
        package = assertion.group("package")
        return (f"A compiled kernel of {package} stopped on its own device assertion about what SGLang handed it: the installed "
                f"{package} is of another version than this SGLang release was made with (a newer {package} that checks its "
                "inputs more strictly, such as sgl-deep-gemm 0.1.4 under an SGLang made for 0.1.3). Install the version this "
                "SGLang release pins (sglang_install role) rather than a newer one alone, or an SGLang release made for it.")
    if _KERNEL_LOADER_RE.search(evidence):
        library = _MISSING_LIBRARY_RE.search(evidence)
        named = f" (it links {library.group('lib')}, which this host does not have)" if library else ""
        return (f"sgl-kernel's compiled ops (common_ops) do not load on this host{named}: the installed sgl-kernel was built "
                "for another CUDA (or GPU) than the host's - a CUDA 12 wheel on a CUDA 13 host, or the reverse. Install the "
                "sgl-kernel build for the host's CUDA (the cu130 wheel on CUDA 13) together with the torch this SGLang "
                "release pins (sglang_install role), rather than adding the missing library alone.")
    match = _REQUIRED_PACKAGE_RE.search(message) or _REQUIRED_PACKAGE_RE.search(evidence)
    if match and "undefined symbol" not in message:
        package = match.group("package") or match.group("package2")
        return (f"A library SGLang runs needs the Python package {package}, which is not installed in the SGLang venv (an "
                "image or venv built without it): install the dependency set pinned for this SGLang release (sglang_install "
                "role) rather than adding packages one by one; where the release forgot it, add it to that set "
                f"(pip install {package} into the venv) and restart.")
    if _SHIM_RE.search(evidence):
        return ("An installed package is a shim for this platform, not a build of it (a ROCm host given CUDA wheels: "
                f"{_SHIM_RE.search(evidence).group(0)}): install the packages built for this host's platform (ROCm builds "
                "of sgl-kernel, aiter and torch, e.g. SGLang's ROCm image or its ROCm install steps) instead of the pip "
                "CUDA wheels; disable_custom_all_reduce does not help, the model's own kernels need the native build too.")
    if _WITHOUT_CUDA_RE.search(evidence):
        return ("A library SGLang uses was built, or configured, without the GPU support it is asked for "
                f"({_WITHOUT_CUDA_RE.search(evidence).group(0)}): for NIXL's UCX, the wheel's bundled CUDA modules are not "
                "found (set UCX_MODULE_DIR to the wheel's ucx module folder and UCX_TLS, e.g. cuda_copy,cuda_ipc,sm,tcp,self, "
                "in sglang_server_env, or use the NIXL wheel for the image's CUDA); for torch, a CPU build is installed. "
                "Install the GPU builds pinned for this SGLang release (sglang_install role).")
    version = _VERSION_GATE_RE.search(evidence)
    if version:
        return (f"SGLang checks the version of a package it needs and the installed one is older ({version.group(0).strip()}): "
                "install the versions pinned together for this SGLang release (sglang_install role: one venv per release), "
                "not an upgrade of that package alone; in an image or a framework's environment that pins its own, use "
                "the SGLang release that image or framework was made for.")
    if re.search(_UNKNOWN_DTYPE, evidence):
        dtype = re.search(r"KeyError: '(?P<dtype>[\w.-]+)'", evidence)
        named = f" ({dtype.group('dtype')})" if dtype else ""
        return (f"The checkpoint stores tensors in a data type{named} that the installed safetensors and torch do not "
                "know (an FP4/FP8 checkpoint's scale format, newer than them): install the torch and safetensors this "
                "SGLang release pins (sglang_install role), or a release made for the checkpoint.")
    if _LAUNCHER_RE.search(evidence):
        return ("The program that starts SGLang here (an RL framework or launcher such as verl or slime that builds "
                f"ServerArgs or calls SGLang's internal entry points itself: {message.strip()[:160]}) was written for "
                "another SGLang release than the installed one. Install the SGLang version that framework release pins "
                "(sglang_install_version), or a framework release made for this SGLang.")
    if re.search(r"'\w*knobs' object has no attribute", message):
        return (f"SGLang uses a Triton setting that the installed Triton does not have ({message.strip()[:160]}): Triton "
                "is of another version than this SGLang expects (an image's own Triton, a ROCm build). Install the Triton "
                "this SGLang release pins (sglang_install role), or an SGLang release made for that Triton.")
    if "'_OpNamespace'" in message or _SIGNATURE_RE.search(message):
        return ("SGLang called something of another installed package (a kernel op, a layer) that it does not have, or has "
                f"with another signature ({message.strip()[:160]}): that package (sgl-kernel, vLLM, FlashInfer) is of "
                "another version than this SGLang. Install the versions this SGLang release pins (the sglang_install role "
                "installs the set together; a source checkout needs the sgl-kernel of the same commit) instead of "
                "upgrading one of them alone.")
    hint = _hint_naming(_UNDEFINED_NAME_RE, message, _UNDEFINED_NAME_HINT)
    if hint:
        return hint
    match = _MISSING_MODULE_RE.search(message) or _MISSING_MODULE_RE.search(evidence)
    if match and "undefined symbol" not in message:
        module = match.group("module")
        return (f"The Python module {module} is missing from the SGLang venv (or the installed package that should provide it "
                "is of another version): install the dependency set pinned for this SGLang release (sglang_install role) "
                "rather than adding packages one by one; a module that one feature needs (boto3 for s3:// model paths, "
                "datasets for outlines) is installed with that feature's extra.")
    return None


def _hint_warmup(message: str, phase: Optional[str], evidence: str) -> Optional[str]:  # pylint: disable=unused-argument
    if _WATCHDOG_RE.search(evidence):
        return ("The warmup's request hung: SGLang's watchdog found its batch still in the model's forward after "
                "watchdog_timeout and dumped the stack (the top frames say where: a CUDA/NPU graph replay, a collective "
                "waiting for another rank, a kernel). Start once with CUDA graphs off (cuda_graph_backend_decode: "
                "disabled; disable_cuda_graph: true before 0.5.20) to confirm a replay hang, check every rank's lines for "
                "one that failed first, and upgrade SGLang and its kernels (or the device's own runtime: CANN, drivers).")
    match = _HTTP_STATUS_RE.search(message) or _HTTP_STATUS_RE.search(evidence)
    status = (match.group("status") or match.group("status2")) if match else None
    if status is None and "Internal server error" in message + evidence:
        status = "500"  # SGLang's own error body for a request that failed inside it, without the status line
    ready = _NOT_READY_RE.search(evidence)
    if ready:
        return (f"The warmup waited for the server's own health check ({ready.group('url')}) and got no answer: that address "
                "is the bind address (host) as the warmup reaches it - an IPv6 [::1] needs the server to listen on IPv6 too - "
                "and the request goes through any http_proxy in the unit's environment. Set no_proxy and NO_PROXY in "
                "sglang_server_env to hold it (127.0.0.1,localhost,::1,0.0.0.0) and set host to an address the host reaches; "
                "if the address answers curl, the warmup's own HTTP client is at fault (httpx of another version than the "
                "release pins): install the pinned set (sglang_install role). skip_server_warmup: true only hides it.")
    if status in (None, "200"):
        if "Connection refused" in evidence or "ConnectionRefusedError" in evidence:
            return ("The warmup request found nothing listening on SGLang's own address: the HTTP server did not come up (a "
                    "port in use or a bind refused earlier in the log) - read the lines before the traceback.")
        return None
    if status == "500":
        return ("The warmup request failed inside the server (HTTP 500, SGLang's own error): the message names what failed "
                "while serving it - a kernel or device operator, the model's forward, or for a multimodal model the "
                "processing of the warmup's image. Fix what it names (another attention or multimodal backend, the "
                "device runtime's pinned versions, an SGLang release with the fix); the first real request would fail "
                "the same way, so skip_server_warmup: true only hides it.")
    if status not in _PROXY_STATUSES:
        return (f"The warmup request got HTTP {status} from the server itself (read the traceback and the lines before it: "
                "401 means api_key is set and the request lacked it). skip_server_warmup: true only hides it.")
    return (f"The warmup request got HTTP {status}, which is a proxy's answer (SGLang sends the warmup to its own bind address "
            "through http_proxy): set no_proxy and NO_PROXY in sglang_server_env to hold that address - "
            "127.0.0.1,localhost,0.0.0.0 when host is 0.0.0.0 - or unset the proxy for the unit. skip_server_warmup: true only "
            "hides it.")


_WATCHDOG_RE = re.compile(r"Watchdog timeout \(self\.watchdog_timeout=|Pyspy dump for PID \d+|self\.cur_batch\.batch_size\(\)=")
_NOT_READY_RE = re.compile(r"HTTP server did not become ready at (?P<url>https?://[^\s'\"]+)")
# What an HTTP proxy answers for a request it will not or cannot pass on (an HTML page often comes with it).
_PROXY_STATUSES = ("403", "407", "502", "503", "504")


def _draft_layout(message: str, evidence: str) -> bool:
    return message.startswith("KeyError") or "\nKeyError: " in evidence or bool(_SHAPE_RE.search(message))


_OWN_HELPER_RE = re.compile(r"(?P<func>[A-Za-z_]\w*)\(self\b[^\n]*\n(?:[ \t]*[\^~]+[ \t]*\n)?TypeError: (?P=func)\(\) ")
_FP8_ARCH_RE = re.compile(r"fp8\w* not supported in this architecture|not supported in this architecture\. The supported fp8")

# Hints whose text is fixed and whose choice is one test of the failure's message and evidence: (test, hint) pairs,
# first match wins, no match falls back to _HINTS.
_ARCH_BACKEND_RE = re.compile(r"backend\b[^\n]{0,40}(?:not (?:supported|available)|unsupported) (?:on|for) (?:the )?" + _ARCH_NAMES
                              + r"|backend\b[^\n]{0,40}(?:only (?:supported|available) on|requires?) (?:an? )?" + _ARCH_NAMES, re.I)
_PARSER_TOKEN_RE = re.compile(r"_token\b[^\n]{0,80}(?:must (?:encode|tokeni[sz]e) (?:to|as|into) (?:exactly )?(?:one|a single|1) token"
                              r"|(?:is not|isn't) (?:a single token|in the (?:tokenizer|vocab\w*))|not found in (?:the )?(?:tokenizer|vocab\w*))", re.I)
_ARCH_ASSERT_RE = re.compile(_ARCH_ASSERT, re.I)
_NO_TMA_RE = re.compile(_NO_TMA, re.I)
_NO_GPU_SEEN_RE = re.compile(_NO_GPU_SEEN, re.I)
_BUILD_KILLED_RE = re.compile(_BUILD_KILLED)
_STATED_FLOOR_RE = re.compile(r"only supports? (?:sm_?|SM ?|compute capability )\d[\d.]*\w* (?:and|or) (?:above|higher|newer|later)",
                              re.I)
_CASE_HINTS: Dict[str, Tuple[Tuple[Callable[[str, str], bool], str], ...]] = {
    "speculative_decoding_error": (
        (lambda message, evidence: "CompilationError" in evidence and "'NoneType' object has no attribute" in evidence,
         ("A Triton kernel in the draft model's path was handed no tensor (None) for an argument: the speculative "
          "setup (speculative_algorithm with this draft and model) does not work with the attention backend in use on "
          "this release. Try another attention_backend (or speculative_draft_attention_backend) that this GPU has, or "
          "upgrade SGLang (sglang_install_version); remove the speculative_* keys to confirm the base model starts.")),
        (_draft_layout,
         ("The draft model's weights are not in the layout SGLang's loader expects (a weight name it does not know, or a "
          "shape of another checkpoint): use a draft checkpoint made for SGLang and this target model (an EAGLE/EAGLE3 "
          "head in SGLang's format, or NEXTN/MTP with the checkpoint's own layers) in speculative_draft_model_path, or "
          "convert it; remove the speculative_* keys to confirm the base model starts.")),
    ),
    "cuda_graph_capture_failed": (
        (lambda message, evidence: bool(_TORCH_COMPILE_RE.search(evidence)),
         ("torch.compile failed inside the CUDA graph capture: drop enable_torch_compile from sglang_server_args (such "
          "failures come with it); if the capture still fails, lower "
          "cuda_graph_max_bs_decode (cuda_graph_max_bs before 0.5.20) or, at a large speed cost, set "
          "cuda_graph_backend_decode: disabled (disable_cuda_graph: true before 0.5.20).")),
        (lambda message, evidence: "Registering 0 cuda graph addresses" in evidence and "Traceback" not in evidence,
         ("The CUDA graph capture failed without printing its error (the custom all-reduce registered no graph: before "
          "sgl-project/sglang PR 11275 its error handling could hide the real one, and the start hung): start once with "
          "disable_custom_all_reduce: true in sglang_server_args to see the error, or upgrade SGLang; then follow the "
          "hint for that error.")),
    ),
    "kernel_compile_failed": (
        (lambda message, evidence: "FlashInfer Internal Error: Invalid configuration" in evidence,
         ("FlashInfer has no kernel built for this model's attention shape on this GPU (its dispatch found no "
          "configuration, e.g. a head size of 512 on a GPU with less shared memory than a Hopper): set "
          "attention_backend: triton in sglang_server_args (or another backend this GPU supports), or upgrade FlashInfer "
          "with SGLang (sglang_install_version) to a release that has the kernel.")),
        (lambda message, evidence: bool(_COMPILER_DIAGNOSTIC_RE.search(evidence)),
         ("The compiler rejected a kernel's source while SGLang built it just in time (the compiler's error line is in "
          "error_message): the host compiler or CUDA toolkit is not one this SGLang release builds with (a CUDA 13 "
          "toolkit, a gcc newer than nvcc supports). Point CUDA_HOME (and PATH) in sglang_server_env at the toolkit "
          "that matches the torch build, with a gcc it supports, or upgrade SGLang (sglang_install_version) to a "
          "release whose kernels build with this toolkit.")),
        (lambda message, evidence: "ptxas" in evidence.lower(),
         ("ptxas could not build a Triton kernel for this GPU (it exits non-zero; a ptxas older than the GPU's "
          "architecture, like the one a Triton release bundles for GPUs newer than itself, does so): install the Triton "
          "this SGLang release pins, or a newer one that knows the GPU, or point TRITON_PTXAS_PATH in "
          "sglang_server_env at the ptxas of a CUDA toolkit that supports the GPU.")),
    ),
    "distributed_init_failed": (
        (lambda message, evidence: bool(re.search(r"Unable to find address for: |ifa != nullptr", evidence)),
         ("Gloo was told to use a network interface that has no address on this node (GLOO_SOCKET_IFNAME, or "
          "NCCL_SOCKET_IFNAME, names an interface of another node, or one that is down here): set both in "
          "sglang_server_env to the interface that carries dist_init_addr's network on every node (ip -br addr), "
          "per host where the names differ.")),
        (lambda message, evidence: "Address family not supported by protocol" in evidence and "transfer_engine" in evidence,
         ("Mooncake's transfer engine (the KV transfer of PD disaggregation) could not open its TCP transport's socket: "
          "the address family it asked for is switched off on this node (with MC_FORCE_TCP it binds IPv6 unless told "
          "otherwise, and the node has IPv6 disabled). Set MC_TCP_BIND_ADDRESS in sglang_server_env to the node's IPv4 "
          "address on every node (per host), or enable IPv6, then restart.")),
        (lambda message, evidence: bool(re.search(_KV_REGISTRATION_FAILED, evidence)),
         ("The KV transfer engine of PD disaggregation (Mooncake or NIXL) could not register the KV cache's GPU memory "
          "with the NIC for RDMA: GPUDirect RDMA does not work for this process. Load nvidia_peermem (or use a driver "
          "and kernel with dma-buf), let the unit pin memory (LimitMEMLOCK=infinity), and do not set "
          "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in sglang_server_env (memory allocated so cannot be "
          "registered; removing it was the confirmed fix in kvcache-ai/Mooncake #351); for NIXL, use a backend that "
          "sees the GPU (UCX built with CUDA). Mooncake's transfer_engine_bench with GPU memory confirms it.")),
        (lambda message, evidence: "Transfer Engine initialization failed" in evidence or "GID index" in evidence,
         ("Mooncake's transfer engine (the KV transfer of PD disaggregation) could not set up RDMA: it found no usable "
          "GID on a device (RoCE needs the right GID index) or could not open a device. Set MC_GID_INDEX in "
          "sglang_server_env to the RoCE v2 GID of the NIC (show_gids), name the devices with "
          "disaggregation_ib_device, and check them with ibv_devinfo on every node; the transfer test of Mooncake "
          "confirms it before SGLang starts.")),
        (lambda message, evidence: "No backend type associated with device type" in evidence,
         ("The process group the ranks used has no backend for the device of the tensors sent over it: torch.distributed "
          "was initialised with NCCL alone, while SGLang sends Python objects between its ranks as CPU tensors (this "
          "happens when a framework, an RL trainer for example, starts SGLang inside processes whose process group it made "
          "itself). Initialise that process group with backend 'cpu:gloo,cuda:nccl' (gloo for CPU tensors, NCCL for CUDA "
          "ones), or let SGLang make its own process group as launch_server does.")),
        (lambda message, evidence: "nvshmem" in evidence.lower() or "deep_ep" in evidence or "DeepEP" in evidence,
         ("DeepEP's ranks could not reach each other (NVSHMEM set up when its buffer is created with the model, or a "
          "handshake at the first dispatch that timed out): check "
          "the NVSHMEM that DeepEP was built with and its RDMA transport on every node (nvshmem-info -a; IBGDA, which "
          "DeepEP needs on InfiniBand and RoCE alike, needs the NVIDIA driver's options), run DeepEP's own "
          "test_internode.py / test_low_latency.py across the nodes, or start without DeepEP (moe_a2a_backend: deepep, "
          "enable_deepep_moe on 0.4.x, removed) to confirm the rest works.")),
        (lambda message, evidence: "result expired" in evidence or "AsyncResultTimeout" in evidence,
         ("The router's call to its tensor-parallel workers timed out while they were still loading (0.1-era SGLang "
          "talked to its workers over rpyc with a fixed timeout): upgrade SGLang (sglang_install_version), or load the "
          "weights from a fast local disk (the model_cache role) so that loading ends in time.")),
    ),
    "unsupported_gpu": (
        (lambda message, evidence: bool(re.search(_OTHER_ARCH_BUILD, evidence)),
         ("The image's GPU kernels are built for other architectures than this GPU's (a kernel library says its prebuilt "
          "binaries target another arch and rebuilds them, as AITER does for an MI300 image on an RDNA4 card): the image "
          "is for another GPU family, and kernels rebuilt on the fly may still not run here (a crash in a kernel, a "
          "segfault in a capture, follows). Use the SGLang image or build made for this GPU's architecture, or serve on "
          "the GPUs the image was built for.")),
        (lambda message, evidence: bool(_NO_TMA_RE.search(evidence)),
         ("A kernel in use builds a TMA descriptor (the Tensor Memory Accelerator of Hopper, sm_90, and newer) and the "
          "driver says this GPU does not support it (error 801): the kernel is for newer GPUs, most often the fa3 "
          "attention backend (Hopper only). Set attention_backend in sglang_server_args to one this GPU has (flashinfer "
          "or triton), or serve on a Hopper or newer GPU.")),
        (lambda message, evidence: bool(_ARCH_BACKEND_RE.search(message) or _ARCH_BACKEND_RE.search(evidence)),
         ("A backend in use (named in error_message) does not run on this GPU's architecture, whether sglang_server_args "
          "chose it or SGLang picked it by default for this model: set attention_backend (and, for a vision model's "
          "encoder, mm_attention_backend) in sglang_server_args to one this GPU has (fa3 is for Hopper; on Blackwell "
          "flashinfer, triton or trtllm_mha; trtllm kernels are for SM100 data-centre GPUs only), or upgrade SGLang "
          "(sglang_install_version) to a release whose default picks one that runs here.")),
        (lambda message, evidence: bool(_ARCH_ASSERT_RE.search(evidence)),
         ("A code path asserts that the GPU is one of the architectures it names (is_sm100_supported, is_sm90_supported: "
          "Blackwell data-centre or Hopper), and this GPU is not one: the quantization or kernel chosen for this model "
          "has no path here (an SM120 workstation Blackwell is not SM100). Choose a quantization, MoE runner or "
          "attention backend this GPU has in sglang_server_args (or a checkpoint in another format), or serve on one "
          "of the named architectures.")),
        (lambda message, evidence: bool(_STATED_FLOOR_RE.search(evidence)),
         ("This GPU is older than the lowest architecture the installed SGLang runs on (it says so: only supports smNN "
          "and above): no setting makes it start. Serve on a GPU of that architecture or newer, or pin an older SGLang "
          "release that still supported this one (sglang_install_version), with its own torch.")),
        (lambda message, evidence: bool(_FP8_ARCH_RE.search(evidence)),
         ("This GPU has no FP8 instructions (Triton's fp8e4nv needs compute capability 8.9 or newer: Ada, Hopper, "
          "Blackwell; an A10, A100 or 3090 is 8.0-8.6): serve a BF16/FP16 checkpoint, or an INT8/AWQ/GPTQ one, set "
          "quantization accordingly in sglang_server_args, or move the model to a GPU of 8.9 or newer.")),
        (lambda message, evidence: "should be in dtype support list" in evidence,
         ("An Ascend NPU operator has no kernel for the data type this code path hands it (the log names the operator and "
          "the type, e.g. aclnnCat with DT_UINT64): a gap of the installed CANN and torch_npu for this model. Install the "
          "CANN and torch_npu versions SGLang's Ascend instructions pin for this release (or its Ascend image), or "
          "upgrade SGLang to a release that avoids the operator there.")),
        (lambda message, evidence: bool(_HALF_ONLY_RE.search(evidence)),
         ("On this GPU the kernel in use takes only 16-bit data (fp16/bf16; FlashAttention on Ampere and Ada, for one): "
          "an fp8 or fp4 KV cache or checkpoint asks for more than it has. Set kv_cache_dtype: auto (bf16) in "
          "sglang_server_args instead of fp8_e4m3/fp4, or serve a BF16 checkpoint; FP8 attention needs Hopper or newer.")),
        (lambda message, evidence: "Unsupported max_mma_" in evidence,
         ("FlashInfer has no prefill tiling of this model's head size that fits this GPU's shared memory (an Ada "
          "card such as the L40 has less than a Hopper): set attention_backend: triton in sglang_server_args (or "
          "another backend this GPU supports), or upgrade FlashInfer with SGLang (sglang_install_version).")),
    ),
    "driver_mismatch": (
        (lambda message, evidence: bool(re.search(r"Error 802|SystemNotReady|SYSTEM_NOT_READY", evidence)),
         ("CUDA says the system is not yet initialized (error 802): the driver stack is not ready. On an NVSwitch "
          "system (HGX, DGX, GB200) the NVIDIA fabric manager must run and be of the driver's exact version "
          "(systemctl status nvidia-fabricmanager; the nvidia_driver role installs the pair); elsewhere check that the "
          "driver supports this CUDA build (nvidia-smi) and that the GPUs are visible to the unit, then restart.")),
        (lambda message, evidence: "No HIP GPUs are available" in evidence,
         ("torch, through ROCm's HIP runtime, sees no GPU at all: the amdgpu driver is not loaded or its devices are not "
          "reachable from the unit. Check rocm-smi (or amd-smi) on the host, that HIP_VISIBLE_DEVICES and "
          "CUDA_VISIBLE_DEVICES in sglang_server_env are not empty or wrong, and in a container that /dev/kfd and /dev/dri "
          "are passed in; torch's earlier \"Can't initialize amdsmi\" warning says the same. python -c 'import torch; "
          "print(torch.cuda.is_available())' in the SGLang venv must print True.")),
        (lambda message, evidence: bool(_NO_GPU_SEEN_RE.search(evidence)),
         ("torch, through the CUDA runtime, sees no GPU at all: the driver is not loaded or not reachable from the unit. "
          "Check nvidia-smi on the host (the nvidia_driver role), that CUDA_VISIBLE_DEVICES in sglang_server_env is not "
          "empty or wrong, and in a container that the GPUs and the driver's libcuda.so.1 are passed in (the NVIDIA "
          "container toolkit; a stub or emulated libcuda does not do); python -c 'import torch; "
          "print(torch.cuda.is_available())' in the SGLang venv must print True.")),
    ),
    "nccl_error": (
        (lambda message, evidence: bool(re.search(r"\bshm(?:Send|Recv)Connect\b", evidence)),
         ("NCCL crashed setting up its shared-memory transport between the GPUs of this host (a bus error in shmSendConnect): "
          "its segments in /dev/shm cannot be used as NCCL maps them (a /dev/shm too small or not memory-backed in a "
          "container, or a confidential-computing VM whose memory protection refuses them). Set NCCL_SHM_DISABLE=1 in the "
          "unit's environment (NCCL then uses P2P or sockets; NCCL_P2P_DISABLE=1 as well if that fails too), or give the "
          "container a larger memory-backed /dev/shm.")),
    ),
    "p2p_unsupported": (
        (lambda message, evidence: bool(re.search(r"shared_memory\.\w+:\d+[^\n]{0,20}(?:NOT_(?:PERMITTED|SUPPORTED)|Not(?:Permitted|Supported))",
                                                  evidence)),
         ("The driver refused the GPU memory sharing DeepEP sets up between the GPUs (not permitted / not supported at its "
          "shared-memory setup: CUDA IPC or fabric handles of its allocations): run all ranks of a node in one IPC "
          "namespace (a container needs --ipc=host, a pod hostIPC, and every GPU's device files), for fabric handles on "
          "NVLink-switch systems the IMEX channel devices too; check DeepEP's build for this GPU and driver, or start "
          "without DeepEP (drop moe_a2a_backend: deepep) to confirm the rest works.")),
        (lambda message, evidence: "CUDA IPC handle" in evidence and "deep_ep" not in evidence.lower(),
         ("A CUDA IPC handle that another SGLang process shared could not be opened here (invalid resource handle): this "
          "host has no CUDA IPC between processes (WSL2's GPU paravirtualization, some VMs and containers without "
          "--ipc=host). SGLang's multimodal warmup passes image features between its processes over CUDA IPC: set "
          "mm_feature_transport: cpu in sglang_server_args (the fix in the report), or run where CUDA IPC works.")),
        (lambda message, evidence: "deep_ep" in evidence.lower(),
         ("DeepEP could not open another GPU's buffer over CUDA IPC ('invalid resource handle'; an illegal memory access "
          "after it is the consequence): run all ranks of a node in one IPC namespace (a container needs --ipc=host, a "
          "pod hostIPC), check peer access between the GPUs (nvidia-smi topo -p2p r) and the DeepEP build for this GPU "
          "and driver, or start without DeepEP (drop moe_a2a_backend: deepep) to confirm the rest works.")),
    ),
    "peer_rank_lost": (
        (lambda message, evidence: bool(re.search(r"other ranks (?:that )?did(?:n't| not) finish", evidence)),
         ("This rank loaded the model but others did not: another rank (or node) failed or hung while loading (an OOM, a "
          "missing or unreadable weight file on that node, a slow disk). The cause is in that rank's own lines (journalctl -u "
          "on every node, the first traceback by time); this rank's message is only the consequence.")),
    ),
    "model_unavailable": (
        (lambda message, evidence: bool(re.search(_CONFIG_NOT_JSON[1:], evidence)),
         ("model_path names a file that is not a model directory (a raw .pth/.pt/.bin checkpoint, or another file): "
          "transformers read it as the model's JSON config and could not. Point model_path at a Hugging Face model "
          "directory (config.json, tokenizer files and safetensors weights), converting the checkpoint with its "
          "project's own script first if it was saved as a bare state dict.")),
        (lambda message, evidence: "some weights are missing" in evidence,
         ("The model's loader found the checkpoint short of weights it needs (SGLang's check after loading names them): "
          "the model directory on this host is incomplete (an interrupted download or copy: shards missing or cut). "
          "Compare it with the checkpoint's index (model.safetensors.index.json) and fetch it again (the model_cache role "
          "verifies what it fetched); the same model_path and flags serving on another host points at this host's "
          "copy.")),
        (lambda message, evidence: bool(re.search(_BROKEN_CHECKPOINT[1:], evidence)),
         ("A file of the checkpoint is there but empty or cut (its index JSON does not parse, or a safetensors header "
          "does not deserialise): an interrupted download or a full disk. Delete the model's files and fetch them again "
          "(the model_cache role verifies what it fetched), check the free space of the disk that holds them, then "
          "restart.")),
    ),
    "package_mismatch": (
        (lambda message, evidence: bool(re.search(_ASCEND_KERNEL_CONFIG, evidence)),
         ("An Ascend operator's kernel could not be set up from the installed CANN kernels ('Parse dynamic kernel config "
          "fail'): the image or the CANN kernels package is built for another Ascend SoC than this host's (an Atlas A2, "
          "910B, image on an A3, 910C, host). Use the SGLang image or CANN kernels for this SoC (SGLang's Ascend images "
          "have separate A2 and A3 tags; npu-smi info names the chip), with the torch_npu that goes with them.")),
        (lambda message, evidence: "is already used by a Transformers model" in evidence,
         ("The installed transformers is newer than this SGLang release expects: it now registers a config class that "
          "SGLang registers for itself. Install the transformers version this SGLang release pins (the sglang_install "
          "role installs the set together), or upgrade SGLang to a release made for that transformers.")),
    ),
    "incompatible_arguments": (
        (lambda message, evidence: bool(re.search(_HALF_ONLY, evidence)),
         ("A kernel on this path takes 16-bit data only (error_message) and was handed another type: most often an 8-bit "
          "KV cache (kv_cache_dtype fp8_e4m3/fp8_e5m2) with an attention backend whose kernels have no fp8 path. Set "
          "kv_cache_dtype: auto in sglang_server_args, or choose an attention_backend that reads an fp8 KV cache on this "
          "GPU; the CUDA graph capture is only where the kernel ran first.")),
        (lambda message, evidence: bool(re.search(_PARALLELISM_UNSUPPORTED, message, re.I)),
         ("The model or a setting (its quantization, a feature) does not run under the kind of parallelism that "
          "error_message names: split the model another way (pp_size instead of tp_size when the message says so, "
          "with the same number of GPUs), or use a checkpoint or setting that supports it (another quantization, "
          "tp_size: 1 on a GPU large enough).")),
        (lambda message, evidence: bool(_PARSER_TOKEN_RE.search(message) or _PARSER_TOKEN_RE.search(evidence)),
         ("The reasoning_parser (or tool_call_parser) in sglang_server_args expects a special token that this model's "
          "tokenizer does not have as one token: the parser is not the one for this model. Set the parser made for this "
          "model (the model card names it), or drop it; if the same settings started on an earlier release, this release "
          "checks more strictly (a regression): pin the earlier one (sglang_install_version) until a fix.")),
        (lambda message, evidence: "expected scalar type" in evidence,
         ("A kernel of the checkpoint's quantization takes another dtype than the server runs in (AWQ's dequantize takes "
          "float16, the model's config says bfloat16): set dtype: float16 (half) in sglang_server_args, or serve a "
          "checkpoint or quantization made for bfloat16.")),
    ),
    "host_resource_error": (
        (lambda message, evidence: bool(_BUILD_KILLED_RE.search(evidence)),
         ("A kernel's JIT build was killed (exit status 137: SIGKILL, the kernel's OOM killer; dmesg -T shows it): the "
          "build starts one compiler per CPU (ninja, cicc), each taking gigabytes of host memory beside the server's own. "
          "Limit its parallelism with MAX_JOBS in sglang_server_env (1 to 4), give the host or container more memory, "
          "and keep the compiled kernels' cache on a lasting volume so the build runs once.")),
    ),
    "unknown": (
        (lambda message, evidence: bool(_OWN_HELPER_RE.search(evidence)),
         ("SGLang's own code calls a helper of its own with another signature than the helper has (the model or layer "
          "handed over as self, an argument missing or extra): a bug of the installed build, common in pre-release "
          "images; no setting fixes it. Use a released image or version for this device or model "
          "(sglang_install_version), or one with the fix.")),
        (lambda message, evidence: bool(re.search(r"cannot import name '\w+' from 'sglang\.", evidence)),
         ("SGLang's own files do not fit each other: one imports a name that another SGLang module no longer has (a bug "
          "of that commit, or files of two versions mixed in one install): no setting fixes it. Install one release "
          "cleanly (sglang_install_version), or a commit with the fix; nothing outside SGLang needs another version.")),
        (lambda message, evidence: bool(re.search(r"NameError: name '" + _DEVICE_EXTENSIONS + r"' is not defined", evidence)),
         ("SGLang's code for this accelerator uses its torch extension without importing it (a NameError in SGLang's "
          "own file: a bug of the installed release, common in pre-release images): no setting fixes it. Use a "
          "released image or version for this device (sglang_install_version), or one with the fix.")),
        (lambda message, evidence: "exit code: -9" in evidence or "exit code 9" in evidence,
         ("A scheduler was killed (exit code -9), most often by the Linux OOM killer (host RAM): check "
          "dmesg -T | grep -i oom and lower host memory use.")),
    ),
}


# Hints that depend on details of the failure; None from one of these falls back to _HINTS.
_HINT_DETAILS: Dict[str, Callable[[str, Optional[str], str], Optional[str]]] = {
    "invalid_arguments": _hint_invalid_arguments,
    "incompatible_arguments": _hint_incompatible_arguments,
    "parallelism_mismatch": _hint_parallelism,
    "gpu_out_of_memory": _hint_oom,
    "unsupported_model_architecture": _hint_architecture,
    "port_in_use": _hint_port,
    "jit_tool_missing": _hint_jit_tool,
    "package_mismatch": _hint_package,
    "warmup_failed": _hint_warmup,
}


def hint_for(cause: Optional[str], error_message: Optional[str], phase: Optional[str], evidence: str = "") -> Optional[str]:
    """Return a concrete next step for ``cause``: the flag to change and how (keys of ``sglang_server_args``).

    Why separate: hints depend on details (the unrecognised flag, the busy port, the phase an OOM hit) and
    are worth testing on their own.
    """
    if cause is None:
        return None
    message = error_message or ""
    detail = _HINT_DETAILS.get(cause)
    hint = detail(message, phase, evidence) if detail else None
    if hint is None:
        hint = next((text for test, text in _CASE_HINTS.get(cause, ()) if test(message, evidence)), None)
    return hint or _HINTS.get(cause)


def cause_for(evidence: str, context: str, argparse_error: bool = False) -> str:
    """The cause label of a failure: from its evidence first, then from the notable lines logged before it.

    Kept for callers that hold two texts; the scanner itself asks :func:`cause_in_tiers`.
    """
    if argparse_error:
        return "invalid_arguments"
    imports = "\n".join(line for line in context.splitlines() if _IMPORT_ERROR_RE.search(line))
    plain = "\n".join(line for line in context.splitlines() if not _IMPORT_ERROR_RE.search(line))
    return cause_in_tiers((evidence, plain), imports)[0]


def cause_in_tiers(tiers: Iterable[str], import_errors: str = "") -> Tuple[str, Optional[str], int]:
    """The cause of a failure from evidence in tiers of trust: (label, the line that decided it, the tier's index).

    Why tiers: the fatal traceback says most (tier 0); when it does not say why (a scheduler killed mid-load, a
    traceback cut by the paste, a generic "not supported"), the other tracebacks (tier 1) or a line logged
    outside any traceback (tier 2: an NCCL WARN, a failed kernel build, a lone decisive line) do. A cause that
    only names where a failure surfaced (a capture that failed) or hints at one (a draft worker's frames, a
    signature error) gives way to a root cause found in a later tier. ``import_errors`` are SGLang's "Ignore
    import error when loading <model>" lines: harmless on their own, they explain an architecture reported as
    "not supported", or a failure nothing else explains (tier -1 when used).
    """
    best: Optional[Tuple[str, Optional[str], int, str]] = None
    for index, text in enumerate(tiers):
        cause, line, strength = decisive(text)
        if cause == "unknown":
            continue
        if best is None or (best[3] != ROOT and strength == ROOT):
            best = (cause, line, index, strength)
        if best[3] == ROOT:
            break
    if best is None and not any(_states_unknown(text) for text in tiers):
        unwrapped = [unwrap(text) for text in tiers]
        if unwrapped != list(tiers):
            found = cause_in_tiers(unwrapped)
            if found[0] != "unknown":
                return found
    if (best is None or best[0] == "unsupported_model_architecture") and import_errors:
        cause, line, _strength = decisive(import_errors)
        if cause == "kernel_compile_failed":
            return cause, line, -1  # the architecture "is not supported" because its module failed to build
    return (best[0], best[1], best[2]) if best else ("unknown", None, -1)


def unwrap(text: str) -> str:
    """``text`` with lines that a terminal broke at its width joined again.

    Why: a paste from a terminal breaks long lines at the terminal's width, even inside a word, and a decisive
    message broken in two matches no rule. The width shows itself: several lines exactly as long as the longest
    ones; a single broken line shows itself by the next line, which starts mid-text. Used only when nothing matched
    the text as it is.
    """
    lines = text.split("\n")
    lengths: Dict[int, int] = {}
    for line in lines:
        if len(line) >= 80:
            lengths[len(line)] = lengths.get(len(line), 0) + 1
    widths = [width for width, count in lengths.items() if count >= 2]
    joined: list = []
    carry = ""
    if not widths:
        # One broken line shows no width: a long line whose next line starts mid-text (not a record, a frame, code,
        # an exception) is taken as broken.
        for line in lines:
            if carry and not starts_line(line):
                carry += line
                if len(line) >= 80:
                    continue
                joined.append(carry)
                carry = ""
                continue
            if carry:
                joined.append(carry)
            carry = line if len(line) >= 80 else ""
            if not carry:
                joined.append(line)
        if carry:
            joined.append(carry)
        return "\n".join(joined)
    width = max(widths, key=lambda value: (lengths[value], value))
    for line in lines:
        if len(line) == width:
            carry += line
            continue
        joined.append(carry + line)
        carry = ""
    if carry:
        joined.append(carry)
    return "\n".join(joined)
