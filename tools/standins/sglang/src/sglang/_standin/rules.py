"""SGLang's main flag resolution rules, with SGLang's own messages and outcomes.

``resolve`` mirrors the resolution pipeline (0.5.19+: ``ServerArgs.resolve_once``;
earlier: ``__post_init__``): it fills defaults, rewrites deprecated settings and logs
what it changed, or raises. ``check`` mirrors ``check_server_args``, run after it.
Both work on a plain dict of argparse destinations and return the log lines they
would print as ``(level, message)`` pairs, so tests can assert each rule alone.
The exact texts come from docs/reference/sglang.md#validation-rules and the 0.5.23 validation cases;
where a release differs (see ``releases.py``) the release decides.
"""

import json
import os
from typing import Any, Dict, List, Tuple

from . import releases

Log = List[Tuple[str, str]]

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")
ENCODER_DISAGG_ARCHS = ("Qwen2VL, Qwen3VL, Qwen3.5, InternS2, Qwen2Audio, Qwen2.5Omni, Dots3-Note, Kimi, "
                        "MiMoV2, GLM5Next, MiniMax-M3, MuseSpark")
# The architectures 0.5.23 accepts for --encoder-only / --language-only (pd_disaggregation_hook.py).
ENCODER_DISAGG_CLASSES = (
    "Qwen2VLForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "Qwen3OmniMoeForConditionalGeneration",
    "Qwen2AudioForConditionalGeneration", "Qwen2_5OmniForConditionalGeneration", "Dots3NoteForCausalLM",
    "KimiVLForConditionalGeneration", "KimiK25ForConditionalGeneration", "KimiK3ForConditionalGeneration",
    "MiMoV2ForCausalLM", "Glm5NextForConditionalGeneration", "MiniMaxM3SparseForConditionalGeneration",
    "MuseSparkForConditionalGeneration")
LONGER_CONTEXT = ("Warning: User-specified context_length ({given}) is greater than the derived context_length "
                  "({derived}). This may lead to incorrect model outputs or CUDA errors. Note that the derived "
                  "context_length may differ from max_position_embeddings in the model's config. To allow overriding "
                  "this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")
TBO_NEEDS_ATTN_DP = ("When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
                     "attention DP (--attn-dp-size) is required (DeepSeek-V4 non-EP DP TBO path).")
COMPILE_NO_PADDING = (
    "--disable-cuda-graph-padding is incompatible with --enable-torch-compile. With padding disabled, every "
    "distinct batch size gets its own torch.compile + Triton autotune cycle (O(max_batch_size) compilations) "
    "instead of the small fixed set of padded bucket sizes, causing engine initialisation to stall for many "
    "minutes. Remove --disable-cuda-graph-padding or --enable-torch-compile.")


def _require(condition: Any, message: str = "") -> None:
    """SGLang states these rules as ``assert cond, msg``; raise the same AssertionError (also under -O)."""
    if not condition:
        raise AssertionError(message)


def _gpu_tier(memory_gib: float, tp_size: int) -> Tuple[int, int]:
    """(chunked_prefill_size, decode cuda-graph max bs) for unset values, by GPU memory (section 3.1)."""
    small_tp = tp_size < 4
    if memory_gib < 20:
        return 2048, 8
    if memory_gib < 35:
        return 4096, 48 if small_tp else 160
    if memory_gib < 60:
        return 4096, 32 if small_tp else 160
    if memory_gib < 160:
        return 8192, 256 if small_tp else 512
    return 16384, 512


def resolve_memory_defaults(args: Dict[str, Any], profile: Dict[str, Any]) -> Log:
    """Fill the GPU-memory-dependent defaults the way the memory hook does (no range checks)."""
    chunk, max_bs = _gpu_tier(float(profile["gpu"]["memory_gib"]), int(args.get("tp_size") or 1))
    if args.get("chunked_prefill_size") is None:
        args["chunked_prefill_size"] = chunk
    if args.get("cuda_graph_max_bs_decode") is None and args.get("cuda_graph_max_bs") is None:
        args["cuda_graph_max_bs_decode"] = max_bs
    if args.get("mem_fraction_static") is None:
        args["mem_fraction_static"] = profile.get("defaults", {}).get("mem_fraction_static", 0.85)
    if args.get("page_size") is None:
        args["page_size"] = 1
    return []


def resolve_attention_backend(args: Dict[str, Any], profile: Dict[str, Any]) -> Log:
    """Unset attention backend: the profile's GPU default, announced like SGLang."""
    if args.get("attention_backend"):
        return []
    backend = profile.get("defaults", {}).get("attention_backend", "flashinfer")
    args["attention_backend"] = backend
    return [("info", f"Attention backend not specified. Use {backend} backend by default.")]


def resolve_parallelism(args: Dict[str, Any]) -> Log:
    """Data parallelism vs attention DP, and the deprecated ``--enable-dp-attention`` rewrite."""
    log: Log = []
    has_attn_dp = "attn_dp_size" in args
    dp = int(args.get("dp_size") or 1)
    tp = int(args.get("tp_size") or 1)
    if args.get("enable_dp_attention"):
        attn_dp = dp
        if has_attn_dp:  # 0.5.22+: the flag is an alias of --attn-dp-size <dp-size>
            args.update(attn_dp_size=dp, dp_size=1, enable_dp_attention=False)
        old = int(args.get("chunked_prefill_size") or 0)
        if attn_dp > 1 and old > 0:
            args["chunked_prefill_size"] = old // attn_dp
            log.append(("warning", f"DP attention is enabled. chunked prefill size is adjusted from {old} to {old // attn_dp}."))
        return log
    if not has_attn_dp:
        return log
    attn_dp = int(args.get("attn_dp_size") or 1)
    if dp > 1 and attn_dp > 1:
        raise ValueError(f"--dp-size {dp} with --attn-dp-size {attn_dp}: data-parallel replicas combined with "
                         "attention data parallelism are not supported.")
    if attn_dp > 1:
        _require(tp % attn_dp == 0)  # SGLang's assert has no message
        old = int(args.get("chunked_prefill_size") or 0)
        if old > 0:
            args["chunked_prefill_size"] = old // attn_dp
            log.append(("warning", f"DP attention is enabled. chunked prefill size is adjusted from {old} to {old // attn_dp}."))
    return log


def resolve_encoder_disaggregation(args: Dict[str, Any], release: str, profile: Dict[str, Any]) -> Log:
    """``--encoder-only`` / ``--language-only`` / ``--encoder-urls``: the rule of the story."""
    log: Log = []
    if args.get("encoder_only") and args.get("language_only"):
        raise ValueError("Cannot set --encoder-only and --language-only together")
    if args.get("encoder_only") and not args.get("language_only") and releases.at_least(release, "0.5.10") \
            and profile["model"]["architecture"] not in ENCODER_DISAGG_CLASSES:
        raise ValueError(f"Model type {profile['model']['architecture']} is not supported for encoder "
                         f"disaggregation. Supported architectures: {ENCODER_DISAGG_ARCHS}.")
    if not args.get("language_only"):
        return log
    if not args.get("encoder_urls"):
        if releases.language_only_needs_encoder_urls(release):
            raise ValueError("requires at least one encoder urls to be set via --encoder-urls")
        log.append(("info", "--language-only is set without --encoder-urls. Encoders are expected to register "
                            "dynamically via the EncoderBootstrapServer."))
    model = profile["model"]
    arch = model["architecture"]
    if releases.at_least(release, "0.5.20"):
        log.append(("info", f"Encoder transfer backend auto-resolved to zmq_to_scheduler for {arch} at "
                            f"TP{int(args.get('tp_size') or 1)}."))
    if releases.at_least(release, "0.5.10") and (arch not in ENCODER_DISAGG_CLASSES or not model.get("multimodal")):
        raise ValueError(f"Model type {arch} is not supported for encoder disaggregation. "
                         f"Supported architectures: {ENCODER_DISAGG_ARCHS}.")
    return log


def resolve_model_config(args: Dict[str, Any], profile: Dict[str, Any]) -> Log:
    """``ModelConfig``: json_model_override_args parsed as JSON, context_length against the derived maximum."""
    log: Log = []
    overrides = args.get("json_model_override_args")
    model = profile["model"]
    derived = int(model["context_length"])
    if isinstance(overrides, str) and overrides:
        parsed = json.loads(overrides)  # SGLang's own json.loads: a JSONDecodeError for text that is not JSON
        for key, value in parsed.items():  # a JSON list fails here as in SGLang ('list' ... no attribute 'items')
            if key == "max_position_embeddings":
                derived = int(value)
    given = args.get("context_length")
    if given is not None and int(given) > derived:
        message = LONGER_CONTEXT.format(given=given, derived=derived)
        if os.environ.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "").lower() in ("1", "true", "yes"):
            log.append(("warning", message.rsplit(" To allow", 1)[0]))
        else:
            raise ValueError(message)
    return log


def _auto_speculative_params(algorithm: str, architecture: str) -> Tuple[int, int, int]:
    """(steps, topk, draft tokens) when none is given (``_auto_choose_speculative_params``)."""
    if algorithm == "STANDALONE":
        return 3, 1, 4
    if architecture in ("LlamaForCausalLM",) or architecture.startswith("Grok"):
        return 5, 4, 8
    return 3, 1, 4


def resolve_speculative(args: Dict[str, Any], release: str, profile: Dict[str, Any]) -> Log:
    """Speculative decoding: names, the EAGLE-family defaults, the topk=1 adjustment."""
    log: Log = []
    raw = args.get("speculative_algorithm")
    if raw is None:
        return log
    name = str(raw).upper()
    if name not in releases.speculative_builtins(release):
        raise ValueError(f"Unknown speculative algorithm name: {name}")
    if name == "NEXTN":
        name = "EAGLE"
    args["speculative_algorithm"] = name
    if name not in EAGLE_FAMILY:
        return log
    if name == "STANDALONE" and (int(args.get("attn_dp_size") or 1) > 1 or args.get("enable_dp_attention")):
        raise ValueError("Currently standalone speculative decoding does not support dp attention.")
    if args.get("max_running_requests") is None:
        args["max_running_requests"] = 48
        log.append(("warning", "Max running requests is reset to 48 for speculative decoding. You can override "
                               "this by explicitly setting --max-running-requests."))
    if args.get("speculative_num_steps") is None:
        # SGLang: all three together or none; a bare assert with an empty message.
        _require(args.get("speculative_eagle_topk") is None and args.get("speculative_num_draft_tokens") is None)
        steps, topk, draft = _auto_speculative_params(name, profile["model"]["architecture"])
        args.update(speculative_num_steps=steps, speculative_eagle_topk=topk, speculative_num_draft_tokens=draft)
    # Stand-in simplification: steps given alone get topk 1 and steps + 1 drafts.
    if args.get("speculative_eagle_topk") is None:
        args["speculative_eagle_topk"] = 1
    if args.get("speculative_num_draft_tokens") is None:
        args["speculative_num_draft_tokens"] = int(args["speculative_num_steps"]) + 1
    steps, topk = int(args["speculative_num_steps"]), int(args["speculative_eagle_topk"])
    if topk == 1 and int(args["speculative_num_draft_tokens"]) != steps + 1:
        args["speculative_num_draft_tokens"] = steps + 1
        log.append(("warning", "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
                               "speculative_eagle_topk == 1"))
    if topk > 1 and args.get("attention_backend") == "trtllm_mha":
        raise ValueError("trtllm_mha backend only supports topk = 1 for speculative decoding.")
    if args.get("speculative_draft_sink_size") is not None and args.get("speculative_draft_window_size") is None:
        raise ValueError("--speculative-draft-sink-size requires --speculative-draft-window-size.")
    if args.get("speculative_use_rejection_sampling") and name in ("EAGLE", "EAGLE3") and topk != 1:
        raise ValueError("--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.")
    return log


def resolve_cuda_graphs(args: Dict[str, Any], release: str, profile: Dict[str, Any]) -> Log:
    """Decide the decode and prefill (piecewise) graph backends, as the graph hooks of each era do."""
    log: Log = []
    decode = args.get("cuda_graph_backend_decode") or "full"
    if releases.phase_graph_lines(release):
        explicit = args.get("cuda_graph_backend_prefill")
        prefill = explicit or "breakable"
        if not explicit and profile["model"].get("multimodal"):
            prefill = "disabled"
            if releases.at_least(release, "0.5.20"):
                log.append(("info", "Breakable CUDA graph is incompatible with multimodal model; disabling prefill CUDA graph."))
        if not explicit and int(args.get("pp_size") or 1) > 1:
            prefill = "disabled"
    elif releases.piecewise_graph_default_on(release):
        enforce = bool(args.get("enforce_piecewise_cuda_graph"))
        off = (args.get("disable_piecewise_cuda_graph") or args.get("speculative_algorithm")
               or args.get("enable_dp_attention") or args.get("enable_torch_compile")
               or profile["model"].get("multimodal") or int(args.get("pp_size") or 1) > 1)
        prefill = "piecewise" if enforce or not off else "disabled"
    else:
        prefill = "piecewise" if args.get("enable_piecewise_cuda_graph") else "disabled"
    if args.get("disable_cuda_graph"):
        decode, prefill = "disabled", "disabled"
    args["_cuda_graph"] = {"decode": decode, "prefill": prefill}
    return log


def resolve_disaggregation_flags(args: Dict[str, Any]) -> Log:
    """The flag-only checks at the start of handle_encoder_disaggregation (and handle_language_model_only)."""
    if args.get("language_model_only"):
        for other in ("encoder_only", "language_only"):
            if args.get(other):
                raise ValueError(f"--language-model-only cannot be combined with --{other.replace('_', '-')}")
    if args.get("enable_prefix_mm_cache") and not args.get("encoder_only"):
        raise ValueError("--enable-prefix-mm-cache requires --encoder-only to be enabled")
    if args.get("encoder_only") and args.get("language_only"):
        raise ValueError("Cannot set --encoder-only and --language-only together")
    if args.get("encoder_only") and args.get("disaggregation_mode", "null") != "null":
        raise ValueError("Cannot set --encoder-only and --disaggregation-mode prefill/decode together")
    return []


def resolve_moe_and_context_parallel(args: Dict[str, Any]) -> Log:
    """parallel_hook / moe_hook / mega_moe_hook assertions on the parallel layout."""
    if args.get("moe_a2a_backend") == "megamoe" and (args.get("enable_two_batch_overlap")
                                                     or args.get("enable_single_batch_overlap")):
        raise ValueError("--moe-a2a-backend megamoe has no two-batch / single-batch overlap decomposition; disable "
                         "--enable-two-batch-overlap and --enable-single-batch-overlap.")
    tp = int(args.get("tp_size") or 1)
    cp = int(args.get("attn_cp_size") or 1)
    moe_dp = int(args.get("moe_dp_size") or 1)
    ep = int(args.get("ep_size") or 1)
    if cp > 1:
        _require(tp % cp == 0, "tp_size must be divisible by attn_cp_size")
    if moe_dp > 1:
        _require(tp % moe_dp == 0, "tp_size must be divisible by moe_dp_size")
        _require(ep * moe_dp <= tp, "ep_size * moe_dp_size must be less than or equal to tp_size")
    if args.get("moe_runner_backend") in ("flashinfer_cutlass", "flashinfer_cutedsl"):
        _require(ep in (1, tp), "The expert parallel size must be 1 or the same as the tensor parallel size")
    return []


def resolve_quantization(args: Dict[str, Any], profile: Dict[str, Any]) -> Log:
    """ModelConfig._verify_quantization, for the plain case: the checkpoint's quant_method against --quantization."""
    method = profile["model"].get("quant_method")
    wanted = args.get("quantization")
    if method and wanted and str(wanted).lower() != method:
        raise ValueError(f"Quantization method specified in the model config ({method}) does not match the "
                         f"quantization method specified in the `quantization` argument ({str(wanted).lower()}).")
    return []


def resolve(args: Dict[str, Any], release: str, profile: Dict[str, Any]) -> Log:
    """The resolution pipeline in SGLang's order; returns the lines it logs, raises on a bad combination."""
    log: Log = []
    log += resolve_memory_defaults(args, profile)
    log += resolve_attention_backend(args, profile)
    log += resolve_parallelism(args)
    log += resolve_disaggregation_flags(args)
    log += resolve_model_config(args, profile)
    log += resolve_quantization(args, profile)
    log += resolve_encoder_disaggregation(args, release, profile)
    log += resolve_moe_and_context_parallel(args)
    log += resolve_speculative(args, release, profile)
    log += resolve_cuda_graphs(args, release, profile)
    if args.get("served_model_name") is None:
        args["served_model_name"] = args.get("model_path")
    if args.get("tokenizer_path") is None:
        args["tokenizer_path"] = args.get("model_path")
    if args.get("context_length") is None:
        args["context_length"] = profile["model"]["context_length"]
    return log


def check(args: Dict[str, Any], release: str) -> Log:
    """``check_server_args``: cross-flag assertions after resolution."""
    if (args.get("enable_two_batch_overlap") and "attn_dp_size" in args
            and (args.get("moe_a2a_backend") or "none") == "none" and int(args.get("attn_dp_size") or 1) == 1):
        raise ValueError(TBO_NEEDS_ATTN_DP)
    tp, pp = int(args.get("tp_size") or 1), int(args.get("pp_size") or 1)
    nnodes, dp = int(args.get("nnodes") or 1), int(args.get("dp_size") or 1)
    _require((tp * pp) % nnodes == 0, "tp_size must be divisible by number of nodes")
    if releases.at_least(release, "0.5.22"):
        _require(not (dp > 1 and nnodes > 1), "multi-node data-parallel replicas are not supported; "
                                              "use attention DP (--attn-dp-size) across nodes")
    else:
        _require(not (dp > 1 and nnodes != 1 and not args.get("enable_dp_attention")),
                 "multi-node data parallel is not supported unless dp attention!")
    chunk, page = int(args.get("chunked_prefill_size") or 0), int(args.get("page_size") or 1)
    if chunk > 0:
        _require(chunk % page == 0, "chunked_prefill_size must be divisible by page_size")
    if releases.at_least(release, "0.5.22"):
        _require(not (args.get("enable_torch_compile") and args.get("disable_cuda_graph_padding")), COMPILE_NO_PADDING)
    name = args.get("served_model_name")
    _require(not (name and ":" in str(name)),
             "served_model_name cannot contain a colon (':') character. The colon is reserved for the "
             f"'model:adapter' syntax used in LoRA adapter specification. Invalid value: '{name}'")
    if args.get("retraction_policy") == "priority" and not args.get("enable_priority_scheduling"):
        raise ValueError("--retraction-policy priority requires --enable-priority-scheduling")
    grpc = args.get("grpc_port")
    if grpc is not None and int(grpc) == int(args.get("port") or 0):
        raise ValueError(f"--grpc-port ({grpc}) must differ from --port ({args.get('port')})")
    return []
