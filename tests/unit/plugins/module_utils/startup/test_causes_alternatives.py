# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each alternative of a cause rule on its own, in the words of the message it was written for.

The corpus and the kinds tests read real logs, where a failure usually says the same thing several ways: one
alternative of a rule can then stop matching without any test noticing (mutation testing of startup/causes showed
dozens such). Here each line holds the words of ONE alternative (the message as SGLang, PyTorch, NCCL, CUDA, systemd,
uvicorn or pip print it), and no other rule may take it: read alone, it gives its cause at its strength. The hints
that name what the message says (the flag, the tool, the architecture, the status) are checked word for word.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import decisive, hint_for, is_notable, notable_by_rules

SITE = "/usr/local/lib/python3.10/dist-packages"

# (line, cause, strength): one alternative each.
ALTERNATIVES = (
    # a launcher (verl, slime) calling an SGLang entry point of another release
    ("TypeError: run_detokenizer_process() got an unexpected keyword argument 'port_args'", "package_mismatch", "root"),
    # a log level the parser let through and logging does not know
    ("    logger.setLevel(LOG_LEVELS[log_level])\nKeyError: 'Info'", "invalid_arguments", "root"),
    (f'  File "{SITE}/uvicorn/config.py", line 402, in configure_logging\n    logging.config.dictConfig(self.log_config)\n'
     "ValueError: Unable to configure handler 'default'", "invalid_arguments", "root"),
    ("Error: Invalid value for '--log-level': 'verbose' is not one of 'critical', 'error', 'warning', 'info', 'debug', 'trace'.",
     "invalid_arguments", "root"),
    # systemd refusing the unit's files
    ("sglang.service: Failed to set up credentials: Protocol error", "systemd_unit_error", "root"),
    ("/etc/systemd/system/sglang.service:9: Executable path is not absolute, ignoring: python -m sglang.launch_server",
     "systemd_unit_error", "root"),
    # uvicorn binding a privileged port, IPv6: the address tuple keeps "permission denied" far from "bind"
    ("ERROR:    [Errno 13] error while attempting to bind on address ('2001:0db8:85a3:0000:0000:8a2e:0370:7334', 443, 0, 0): "
     "permission denied", "bind_permission_denied", "root"),
    ("PermissionError: [Errno 13] Permission denied: bind on port 443", "bind_permission_denied", "root"),
    # the driver stack
    ("RuntimeError: CUDA error: forward compatibility was attempted on non supported HW", "driver_mismatch", "root"),
    ("RuntimeError: CUDA error: unsupported display driver / cuda driver combination", "driver_mismatch", "root"),
    # a JIT build's tools
    ("RuntimeError: nvcc not found. Did you forget to set CUDA_HOME?", "jit_tool_missing", "root"),
    ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.", "jit_tool_missing", "root"),
    ("/tmp/tmpq1x2/main.c:5:10: fatal error: Python.h: No such file or directory", "jit_tool_missing", "root"),
    ("FAILED: [code=127] flashinfer/jit/batch_prefill.cuda.o", "jit_tool_missing", "root"),
    # kernels
    ("torch.AcceleratorError: CUDA error: cudaErrorMisalignedAddress", "illegal_memory_access", "root"),
    ("RuntimeError: sm_120 is not supported by this build", "unsupported_gpu", "root"),
    ("RuntimeError: HIP error: hipErrorInvalidDeviceFunction", "unsupported_gpu", "root"),
    ("ValueError: fp8 e4m3 KV cache is not supported on compute capability 8.6", "unsupported_gpu", "root"),
    ("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 86.",
     "unsupported_gpu", "root"),
    ("UserWarning: This version of PyTorch no longer supports this GPU", "unsupported_gpu", "root"),
    ("RuntimeError: Marlin kernels need compute capability of at least 8.0 (found 7.5)", "unsupported_gpu", "root"),
    # ranks
    ("ncclRemoteError: Connection reset by peer; TCPStore at 10.0.0.1:29500 lost", "peer_rank_lost", "root"),
    ("torch.distributed.DistBackendError: Can't enable access between nodes 0 and 1", "p2p_unsupported", "root"),
    (f'  File "{SITE}/deep_gemm/jit_kernels/impls/sm90_fp8_gemm_1d2d.py", line 120, in fp8_gemm_nt\n    assert n % block_n == 0\n'
     "AssertionError", "kernel_compile_failed", "root"),
    ("NCCL WARN Cuda failure 'out of memory'", "gpu_out_of_memory", "root"),
    ("    loaded_weight = loaded_weight.narrow(output_dim, start_idx, shard_size)\n"
     "RuntimeError: start (4096) + length (4096) exceeds dimension size (6144).", "parallelism_mismatch", "root"),
    (f'  File "{SITE}/sglang/srt/layers/linear.py", line 1321, in weight_loader\n    param_data.copy_(loaded_weight)\n'
     "RuntimeError: start (2048) + length (1024) exceeds dimension size (2560).", "parallelism_mismatch", "root"),
    ("AssertionError: pp_size 3 must be a multiple of the number of layers 32", "parallelism_mismatch", "root"),
    ("AssertionError: world_size 6 does not match the number of GPUs 8", "parallelism_mismatch", "root"),
    (f'  File "{SITE}/torch/distributed/distributed_c10d.py", line 4037, in _store_based_barrier', "distributed_init_failed",
     "root"),
    ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
     "distributed_init_failed", "root"),
    ("RuntimeError: [rank0]: wait timeout after 600000ms, keys: /default_pg/0//cuda//0", "distributed_init_failed", "root"),
    ("RuntimeError: No backend type associated with device type cpu", "distributed_init_failed", "root"),
    (f'  File "{SITE}/rpyc/core/netref.py", line 240, in __call__\n    return syncreq(_self, consts.HANDLE_CALL, args, kwargs)\n'
     "TimeoutError: result expired", "distributed_init_failed", "root"),
    # the host
    ("OSError: [Errno 24] Too many open files", "host_resource_error", "root"),
    ("RuntimeError: unable to allocate shared memory(shm) for file </torch_1234_5678_0>: Resource temporarily unavailable (11)",
     "host_resource_error", "root"),
    ("terminate called after throwing an instance of 'std::bad_alloc'", "host_resource_error", "root"),
    # the capture, where it surfaced
    ("RuntimeError: CUDA driver error: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "cuda_graph_capture_failed", "surface"),
    # a sign only: a shard beyond its tensor, without the loader's frame
    ("RuntimeError: start (4096) + length (4096) exceeds dimension size (6144).", "parallelism_mismatch", "hint"),
    ("You can suppress this exception and fall back to eager by setting:", "cuda_graph_capture_failed", "surface"),
    # the model
    ("OSError: Qwen/Qwen9-72B is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
     "model_unavailable", "root"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/models/llama/config.json'", "model_unavailable", "root"),
)

# SGLang's argument checks refusing a combination: every phrase on its own (the dashed-option fallback, a weaker
# sign, must not be what decides them).
ARGUMENT_CHECKS = (
    "ValueError: Cannot set --enable-dp-attention when dp_size is 1",
    "ValueError: Two-batch overlap cannot be combined with the overlap scheduler disabled",
    "ValueError: Data parallel attention requires --enable-dp-lm-head to be set with this model",
    "ValueError: --enable-hierarchical-cache requires page size > 1",
    "ValueError: The metrics port must differ from the HTTP port",
    "ValueError: Overlap schedule is not supported with pipeline parallelism",
    "ValueError: DP attention is only supported when the attention backend is fa3 or flashinfer",
    "ValueError: disable_cuda_graph and enable_torch_compile are mutually exclusive",
)


@pytest.mark.parametrize("line, cause, strength", ALTERNATIVES, ids=[str(n) for n in range(len(ALTERNATIVES))])
def test_each_alternative_alone_gives_its_cause_at_its_strength(line, cause, strength):
    found, decided, found_strength = decisive(line)
    assert (found, found_strength) == (cause, strength)
    assert decided and decided in line


@pytest.mark.parametrize("line", ARGUMENT_CHECKS, ids=[str(n) for n in range(len(ARGUMENT_CHECKS))])
def test_each_phrase_of_the_argument_checks_is_a_settings_clash_on_its_own(line):
    assert decisive(line) == ("incompatible_arguments", line, "root")


def test_the_decided_line_is_the_line_itself_when_the_evidence_starts_with_a_blank_line():
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert decisive("\n" + line) == ("illegal_memory_access", line, "root")


def test_a_speculative_refusal_by_the_argument_checks_does_not_hide_what_follows_it():
    """The speculative sign is skipped when the argument checks raised the exception; the rules after it still read."""
    refused = (f'  File "{SITE}/sglang/srt/server_args.py", line 2041, in _handle_speculative_decoding\n'
               "    raise ValueError(\n"
               "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable\n")
    shard = "RuntimeError: start (4096) + length (4096) exceeds dimension size (6144)"
    assert decisive(refused + shard)[0] == "parallelism_mismatch"


def test_sglang_s_note_of_a_model_module_that_did_not_import_is_not_evidence():
    assert not notable_by_rules("[2026-01-02 10:00:01] Ignore import error when loading sglang.srt.models.mllama4: "
                                "libcudart.so.13: cannot open shared object file: No such file or directory")


HINTS = (
    ("invalid_arguments",
     "launch_server.py: error: argument --attention-backend: invalid choice: 'fa5' (choose from 'triton', 'flashinfer')",
     "'fa5' is not a value --attention-backend takes: set attention_backend in sglang_server_args to one of the choices "
     "error_message lists."),
    ("unsupported_model_architecture", "ValueError: Model architectures ['Ernie9ForCausalLM'] are not supported for now.",
     "This SGLang version has no implementation of 'Ernie9ForCausalLM' (or cannot read its config): upgrade SGLang "
     "(sglang_install_version), try the transformers fallback (model_impl: transformers) where supported, or serve a "
     "supported model."),
    ("package_mismatch", "NameError: name 'marlin_permute_scales' is not defined",
     "SGLang's code for this feature calls marlin_permute_scales, a name it imports from an optional dependency only when "
     "that dependency is installed (vLLM for the GPTQ/AWQ Marlin checks of SGLang 0.4.x): install the dependency set this "
     "SGLang release pins, with the extra that brings it (sglang_install role), or upgrade to a release that no longer needs "
     "it; serving without the feature (another quantization) confirms it."),
    ("jit_tool_missing", "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'",
     "The JIT kernel build needs ninja, which the unit cannot find: pip install ninja into the SGLang venv, then put its "
     "folder on PATH in sglang_server_env (under systemd PATH is only /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin, "
     "without the venv's bin or /usr/local/cuda/bin), e.g. PATH: <venv>/bin:/usr/local/cuda/bin:/usr/bin:/bin, and CUDA_HOME."),
    ("jit_tool_missing", "which: no nvcc in (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin)",
     "The JIT kernel build needs nvcc, which the unit cannot find: install the CUDA toolkit that matches torch's CUDA, then "
     "put its folder on PATH in sglang_server_env (under systemd PATH is only /usr/local/sbin:/usr/local/bin:/usr/sbin:"
     "/usr/bin, without the venv's bin or /usr/local/cuda/bin), e.g. PATH: <venv>/bin:/usr/local/cuda/bin:/usr/bin:/bin, "
     "and CUDA_HOME."),
    ("package_mismatch", "TypeError: forward() got an unexpected keyword argument 'pp_proxy_tensors'",
     "SGLang called something of another installed package (a kernel op, a layer) that it does not have, or has with "
     "another signature (TypeError: forward() got an unexpected keyword argument 'pp_proxy_tensors'): that package "
     "(sgl-kernel, vLLM, FlashInfer) is of another version than this SGLang. Install the versions this SGLang release pins "
     "(the sglang_install role installs the set together; a source checkout needs the sgl-kernel of the same commit) "
     "instead of upgrading one of them alone."),
    ("package_mismatch", "TypeError: apply() missing 1 required positional argument: 'layer'",
     "SGLang called something of another installed package (a kernel op, a layer) that it does not have, or has with "
     "another signature (TypeError: apply() missing 1 required positional argument: 'layer'): that package "
     "(sgl-kernel, vLLM, FlashInfer) is of another version than this SGLang. Install the versions this SGLang release pins "
     "(the sglang_install role installs the set together; a source checkout needs the sgl-kernel of the same commit) "
     "instead of upgrading one of them alone."),
    ("speculative_decoding_error",
     "RuntimeError: shape mismatch: value tensor of shape [4096, 2048] cannot be broadcast to indexing result of shape [4096]",
     "The draft model's weights are not in the layout SGLang's loader expects (a weight name it does not know, or a shape "
     "of another checkpoint): use a draft checkpoint made for SGLang and this target model (an EAGLE/EAGLE3 head in "
     "SGLang's format, or NEXTN/MTP with the checkpoint's own layers) in speculative_draft_model_path, or convert it; "
     "remove the speculative_* keys to confirm the base model starts."),
    ("warmup_failed", "Exception: Warmup failed: <Response [403]>",
     "The warmup request got HTTP 403, which is a proxy's answer (SGLang sends the warmup to its own bind address through "
     "http_proxy): set no_proxy and NO_PROXY in sglang_server_env to hold that address - 127.0.0.1,localhost,0.0.0.0 when "
     "host is 0.0.0.0 - or unset the proxy for the unit. skip_server_warmup: true only hides it."),
)


@pytest.mark.parametrize("cause, message, hint", HINTS, ids=[str(n) for n in range(len(HINTS))])
def test_a_hint_names_what_the_message_says(cause, message, hint):
    assert hint_for(cause, message, None, message) == hint


def test_torch_compile_in_the_capture_gets_its_own_hint():
    evidence = (f'  File "{SITE}/torch/_inductor/codecache.py", line 2005, in load\n    raise RuntimeError(msg)\n'
                "RuntimeError: Capture cuda graph failed: Triton compile failed")
    assert hint_for("cuda_graph_capture_failed", "Exception: Capture cuda graph failed: Triton compile failed", None,
                    evidence).startswith("torch.compile failed inside the CUDA graph capture: drop enable_torch_compile")


def test_an_exception_pasted_above_its_loader_frame_is_the_decided_line():
    """A paste that puts the exception before the frame it came from: the line shown is the exception, not the one above."""
    key_error = "KeyError: 'model.layers.0.mlp.experts.w2_weight'"
    evidence = (f"Traceback (most recent call last):\n{key_error}\n"
                f'  File "{SITE}/sglang/srt/models/qwen3_moe.py", line 900, in load_weights\n')
    assert decisive(evidence) == ("unsupported_model_architecture", key_error, "root")


def test_systemd_quoting_the_unit_s_command_line_is_evidence_not_an_echo():
    """The echo of SGLang's own command line is never evidence; systemd's refusal that quotes it is."""
    refusal = ("/etc/systemd/system/sglang-main.service:9: Executable path is not absolute, ignoring: python3 -m "
               "sglang.launch_server --model-path /models/qwen")
    assert is_notable(refusal) and decisive(refusal)[0] == "systemd_unit_error"
