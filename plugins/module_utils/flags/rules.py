# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-flag rules of SGLang releases, and what replaced the flags that releases removed.

Why a separate file: these are the facts that change with every SGLang release, written as data and
small functions so that a maintainer can add a release's rules without touching the lint engine in
``sglang_flags``. Each rule names the release range it applies to (inclusive; ``None`` is open) and the
options it needs in that release's flag table, and gets a ``RuleContext`` from the engine (see
``sglang_flags.RuleContext``): ``get(name)`` is the value SGLang will see (the operator's, else the
table's default), ``given(name)`` says whether the operator set it, ``facts`` holds host facts
(``gpu_p2p``, ``nvlink``, ``service_user``, ``environment``), ``model`` / ``draft_model`` the facts of the
model's and the draft model's config.json (flags/model.py; None when unknown), ``options`` the operator's
opt-ins (``allow_open_without_api_key``), ``ref(name)`` the name the operator wrote it under
(``sglang_server_args.tp_size``), and ``error/warning/info`` build findings.

Messages quote SGLang's own text where it has one (docs/reference/sglang.md#validation-rules and the 0.5.23 validation
cases); the hint says what to change. Severity: error when SGLang refuses or crashes, warning when it
accepts something that will surprise, info for silent adjustments worth knowing.

Standard library only, importing only flags/releases: modules ship this file to the target.
"""

from __future__ import annotations

import re
from typing import Any, Callable, NamedTuple, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import in_release_range


class Replacement(NamedTuple):
    """What to use instead of a flag that a release removed or deprecated."""

    since: Optional[str]  # first release (inclusive) this advice is for; None = any
    until: Optional[str]  # last release (inclusive); None = any later one
    flag: Optional[str]  # replacement option (underscore name), None when the advice is "drop it"
    value: Any  # value to give the replacement, None when it takes the operator's value unchanged
    note: str  # why, in a sentence
    message: str = ""  # SGLang's own deprecation text, when it prints one


_TC_PIECEWISE_GONE = "the torch.compile prefill graph (tc_piecewise) and its compiler option are gone"

# Replacements that the flag tables cannot derive on their own (a value changes meaning, or the
# replacement has a different shape). Renames that are plain aliases (--nsa-* -> --dsa-*, ...) are
# derived from the tables' history instead.
REPLACEMENTS = {
    "enforce_piecewise_cuda_graph": (
        Replacement("0.5.14", None, "cuda_graph_backend_prefill", "breakable",
                    "an explicit prefill CUDA-graph backend is locked and skips every auto-disable rule, which is what "
                    "--enforce-piecewise-cuda-graph did; 0.5.14-0.5.19 mapped it to the tc_piecewise backend, which "
                    "0.5.23 removed"),
    ),
    "disable_piecewise_cuda_graph": (
        Replacement("0.5.14", None, "cuda_graph_backend_prefill", "disabled",
                    "the piecewise CUDA graph is now the prefill CUDA graph"),
    ),
    "enable_breakable_cuda_graph": (
        Replacement("0.5.14", None, "cuda_graph_backend_prefill", "breakable",
                    "the breakable CUDA graph is now a prefill CUDA-graph backend"),
    ),
    "enable_piecewise_cuda_graph": (
        Replacement("0.5.10", None, None, None,
                    "the piecewise (prefill) CUDA graph is on by default since 0.5.10; cuda_graph_backend_prefill "
                    "selects its backend from 0.5.14"),
    ),
    "piecewise_cuda_graph_tokens": (
        Replacement("0.5.14", None, "cuda_graph_bs_prefill", None, "the prefill CUDA graph took over these sizes"),
    ),
    "piecewise_cuda_graph_max_tokens": (
        Replacement("0.5.14", None, "cuda_graph_max_bs_prefill", None, "the prefill CUDA graph took over this limit"),
    ),
    "piecewise_cuda_graph_compiler": (
        Replacement("0.5.14", "0.5.21", "cuda_graph_tc_compiler", None, "renamed with the prefill CUDA graph"),
        Replacement("0.5.22", None, None, None, _TC_PIECEWISE_GONE),
    ),
    "cuda_graph_tc_compiler": (
        Replacement("0.5.22", None, None, None, _TC_PIECEWISE_GONE),
    ),
    "cuda_graph_max_bs": (
        Replacement("0.5.14", None, "cuda_graph_max_bs_decode", None, "CUDA-graph limits are per phase now"),
    ),
    "cuda_graph_bs": (
        Replacement("0.5.14", None, "cuda_graph_bs_decode", None, "CUDA-graph batch sizes are per phase now"),
    ),
    "disable_cuda_graph": (
        Replacement("0.5.14", None, "cuda_graph_backend_decode", "disabled",
                    "also set cuda_graph_backend_prefill: disabled",
                    "'--disable-cuda-graph' is deprecated and will be removed in a future release. "
                    "Use '--cuda-graph-backend-{decode,prefill}=disabled' instead."),
    ),
    "enable_dp_attention": (
        Replacement("0.5.22", None, "attn_dp_size", None,
                    "give attn_dp_size the value dp_size had and drop dp_size (SGLang rewrites "
                    "'--dp-size N --enable-dp-attention' into attn_dp_size=N, dp_size=1)"),
    ),
}

# Values that a release refuses through argparse choices, with SGLang's own explanation.
VALUE_HINTS = {
    ("cuda_graph_backend_prefill", "tc_piecewise"): "tc_piecewise was removed; select breakable, full, or disabled",
    ("cuda_graph_backend_decode", "tc_piecewise"): "tc_piecewise was removed; select breakable, full, or disabled",
}

# Text options whose value SGLang parses with json.loads() during resolution (argparse type str), so a bad value fails
# the start with a JSONDecodeError; the lint checks them as JSON and accepts a mapping, written as compact JSON.
JSON_STRING_OPTIONS = ("json_model_override_args", "model_loader_extra_config", "modelexpress_config")

# Built-in speculative algorithm names of releases whose --speculative-algorithm has no argparse choices.
SPECULATIVE_BUILTINS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "ip6-localhost")
_HOST_PORT_RE = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$")


class Rule(NamedTuple):
    """A cross-flag rule: applies to releases since..until (inclusive) whose table has every option in requires."""

    name: str
    since: Optional[str]
    until: Optional[str]
    requires: Tuple[str, ...]
    check: Callable[[Any], list]


RULES: list = []


def rule(since: Optional[str] = None, until: Optional[str] = None, requires: Tuple[str, ...] = ()) -> Callable:
    """Register a rule function for a release range."""

    def register(check: Callable[[Any], list]) -> Callable[[Any], list]:
        RULES.append(Rule(check.__name__, since, until, tuple(requires), check))
        return check

    return register


def finding_rule(severity: str, code: str, flag: str, message: str, hint: str, since: Optional[str] = None,
                 until: Optional[str] = None, requires: Tuple[str, ...] = ()) -> Callable:
    """Register a rule that makes one fixed finding when its condition holds: the finding as data, the condition as code."""

    def register(condition: Callable[[Any], bool]) -> Callable[[Any], bool]:
        def check(ctx: Any) -> list:
            return [getattr(ctx, severity)(code, flag, message, hint)] if condition(ctx) else []

        check.__name__, check.__doc__ = condition.__name__, condition.__doc__
        rule(since, until, requires)(check)
        return condition  # the name stays the condition, so another rule can share it

    return register


def _int(value: Any, default: int = 0) -> int:
    """Best-effort int for arithmetic in rules; type errors are reported by the value checks, not here."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


def in_release(release: Tuple[int, ...], since: str) -> bool:
    """True when ``release`` is ``since`` or newer."""
    return in_release_range(release, since, None)


def _spec_algorithm(ctx: Any) -> str:
    value = ctx.get("speculative_algorithm")
    return value.upper() if isinstance(value, str) else ""


# ---------------------------------------------------------------------------------------------------------------------
# Encoder disaggregation (EPD): --language-only / --encoder-only / --encoder-urls.

@finding_rule("error", "language_only_without_encoders", "language_only",
              "requires at least one encoder urls to be set via --encoder-urls",
              "language_only serves only the language half of a multimodal model and sends images to separate "
              "encoder_only servers (encoder disaggregation). Set encoder_urls to those servers, or drop language_only "
              "to serve the whole model from this one (what a single box wants).",
              until="0.5.12", requires=("language_only", "encoder_urls"))
def language_only_needs_encoders(ctx: Any) -> bool:
    """0.5.9-0.5.12 raise in _handle_encoder_disaggregation when no encoder URL is given."""
    return ctx.on("language_only") and not ctx.get("encoder_urls")


@finding_rule("warning", "language_only_without_encoders", "language_only",
              "--language-only is set without --encoder-urls. Encoders are expected to register dynamically via the "
              "EncoderBootstrapServer.",
              "Until an encoder_only server registers, this server answers no image or audio input. Drop language_only "
              "unless you run encoder servers for it.",
              since="0.5.13", requires=("language_only", "encoder_urls"))
def language_only_without_encoders(ctx: Any) -> bool:
    """0.5.13+ accept it and wait for encoders to register: a server that silently cannot see images."""
    return language_only_needs_encoders(ctx)


@finding_rule("error", "encoder_and_language_only", "encoder_only",
              "Cannot set --encoder-only and --language-only together",
              "A server is either the encoder half or the language half; keep one of them.",
              requires=("language_only", "encoder_only"))
def encoder_and_language_only(ctx: Any) -> bool:
    return ctx.on("language_only") and ctx.on("encoder_only")


@finding_rule("error", "encoder_only_with_pd", "encoder_only",
              "Cannot set --encoder-only and --disaggregation-mode prefill/decode together",
              "Encoder servers do not take part in prefill/decode disaggregation; drop one of them.",
              requires=("encoder_only", "disaggregation_mode"))
def encoder_only_with_pd(ctx: Any) -> bool:
    return ctx.on("encoder_only") and ctx.get("disaggregation_mode") in ("prefill", "decode")


@finding_rule("error", "prefix_mm_cache_without_encoder_only", "enable_prefix_mm_cache",
              "--enable-prefix-mm-cache requires --encoder-only to be enabled",
              "Set it only on encoder_only servers.",
              requires=("enable_prefix_mm_cache", "encoder_only"))
def prefix_mm_cache_needs_encoder_only(ctx: Any) -> bool:
    return ctx.on("enable_prefix_mm_cache") and not ctx.on("encoder_only")


@rule(requires=("language_model_only",))
def language_model_only_conflicts(ctx: Any) -> list:
    if not ctx.on("language_model_only"):
        return []
    out = []
    for other in ("encoder_only", "language_only", "encoder_urls"):
        if ctx.has(other) and ctx.on(other):
            out.append(ctx.error("language_model_only_conflict", "language_model_only",
                                 "--language-model-only cannot be combined with --%s" % other.replace("_", "-"),
                                 "language_model_only skips the vision tower inside one server; encoder "
                                 "disaggregation splits it across servers. Keep one approach."))
    if ctx.has("disaggregation_mode") and ctx.get("disaggregation_mode") in ("prefill", "decode"):
        out.append(ctx.error("language_model_only_conflict", "language_model_only",
                             "--language-model-only is incompatible with --disaggregation-mode prefill/decode",
                             "Drop one of them."))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Piecewise / prefill CUDA graph.

@rule(since="0.5.10", until="0.5.13", requires=("enforce_piecewise_cuda_graph",))
def enforce_piecewise_skips_safety(ctx: Any) -> list:
    """0.5.10-0.5.13: the flag skips every auto-disable condition of _handle_piecewise_cuda_graph."""
    if not ctx.on("enforce_piecewise_cuda_graph"):
        return []
    reasons = []
    if _spec_algorithm(ctx):
        reasons.append("speculative decoding")
    if ctx.on("language_only") or ctx.on("encoder_only"):
        reasons.append("a multimodal model")
    if ctx.on("enable_torch_compile"):
        reasons.append("torch.compile")
    if _int(ctx.get("pp_size"), 1) > 1:
        reasons.append("pipeline parallelism")
    if ctx.get("moe_a2a_backend") not in (None, "none"):
        reasons.append("an MoE all-to-all backend")
    why = " (here: %s)" % ", ".join(reasons) if reasons else ""
    return [ctx.warning(
        "enforce_piecewise_cuda_graph", "enforce_piecewise_cuda_graph",
        "--enforce-piecewise-cuda-graph keeps the piecewise CUDA graph on past every auto-disable condition; SGLang "
        "documents it as \"Used for testing\"%s." % why,
        "Drop it: SGLang turns the piecewise graph off for combinations it does not support, and forcing it there "
        "risks a failed capture or wrong output.")]


@finding_rule("warning", "prefill_graph_full_experimental", "cuda_graph_backend_prefill",
              "cuda_graph_config[prefill].backend='full' is experimental. Use breakable for production "
              "workloads.",
              "Use cuda_graph_backend_prefill: breakable.",
              since="0.5.20", requires=("cuda_graph_backend_prefill",))
def full_prefill_graph_experimental(ctx: Any) -> bool:
    return ctx.get("cuda_graph_backend_prefill") == "full"


@rule(since="0.5.20",
      requires=("cuda_graph_backend_prefill", "pp_size", "enable_two_batch_overlap", "dcp_size", "moe_a2a_backend"))
def prefill_graph_auto_disabled(ctx: Any) -> list:
    """SGLang turns the breakable prefill graph off for these unless the backend is set explicitly."""
    if ctx.given("cuda_graph_backend_prefill"):
        return []  # an explicit backend is locked: no auto-disable rule applies
    reasons = []
    if _int(ctx.get("pp_size"), 1) > 1:
        reasons.append("pipeline parallelism")
    if ctx.on("enable_two_batch_overlap"):
        reasons.append("two-batch overlap")
    if _int(ctx.get("dcp_size"), 1) > 1:
        reasons.append("decode context parallel (dcp_size > 1)")
    if ctx.get("moe_a2a_backend") not in (None, "none", "deepep", "megamoe", "flashinfer"):
        reasons.append("unvalidated a2a backend")
    if not reasons:
        return []
    return [ctx.info("prefill_graph_auto_disabled", "cuda_graph_backend_prefill",
                     "Breakable CUDA graph is incompatible with %s; disabling prefill CUDA graph." % reasons[0],
                     "SGLang runs prefill without a CUDA graph here%s; set cuda_graph_backend_prefill: breakable to "
                     "force it, at your own risk." % (" (also: %s)" % ", ".join(reasons[1:]) if reasons[1:] else ""))]


@finding_rule("error", "compile_without_graph_padding", "disable_cuda_graph_padding",
              "--disable-cuda-graph-padding is incompatible with --enable-torch-compile. With padding disabled, every "
              "distinct batch size gets its own torch.compile + Triton autotune cycle (O(max_batch_size) compilations) "
              "instead of the small fixed set of padded bucket sizes, causing engine initialisation to stall for many "
              "minutes. Remove --disable-cuda-graph-padding or --enable-torch-compile.",
              "Remove disable_cuda_graph_padding or enable_torch_compile.",
              since="0.5.20", requires=("enable_torch_compile", "disable_cuda_graph_padding"))
def compile_without_padding(ctx: Any) -> bool:
    return ctx.on("enable_torch_compile") and ctx.on("disable_cuda_graph_padding")


# ---------------------------------------------------------------------------------------------------------------------
# Speculative decoding.

@rule(requires=("speculative_algorithm",))
def speculative_algorithm_known(ctx: Any) -> list:
    """Releases without argparse choices (0.5.14+) only refuse an unknown name at resolution time."""
    if ctx.choices("speculative_algorithm"):
        return []  # argparse checks it; the value check reports it with argparse's message
    value = ctx.get("speculative_algorithm")
    if isinstance(value, str) and value and value.upper() not in SPECULATIVE_BUILTINS:
        return [ctx.error("speculative_algorithm_unknown", "speculative_algorithm",
                          "Unknown speculative algorithm name: %s" % value,
                          "Use one of %s (case does not matter); an algorithm from an SGLang plugin needs that "
                          "plugin installed in the venv." % ", ".join(SPECULATIVE_BUILTINS))]
    return []


@rule(requires=("speculative_algorithm", "speculative_num_steps"))
def speculative_params_without_algorithm(ctx: Any) -> list:
    if _spec_algorithm(ctx):
        return []
    out = []
    for name in ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
                 "speculative_draft_model_path"):
        if ctx.has(name) and ctx.given(name) and ctx.get(name) is not None:
            out.append(ctx.warning("speculative_without_algorithm", name,
                                   "%s is set but speculative_algorithm is not, so SGLang ignores it" % name,
                                   "Set speculative_algorithm (e.g. EAGLE or NEXTN) or drop %s." % name))
    return out


@rule(requires=("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
                "speculative_num_draft_tokens"))
def speculative_triple(ctx: Any) -> list:
    """steps / topk / draft tokens go together: SGLang asserts with an empty message otherwise."""
    if _spec_algorithm(ctx) not in EAGLE_FAMILY:
        return []
    out = []
    steps = ctx.get("speculative_num_steps")
    topk = ctx.get("speculative_eagle_topk")
    draft = ctx.get("speculative_num_draft_tokens")
    if steps is None and (topk is not None or draft is not None):
        out.append(ctx.error(
            "speculative_params_incomplete", "speculative_num_steps",
            "AssertionError (SGLang gives no message): speculative_eagle_topk or speculative_num_draft_tokens is set "
            "without speculative_num_steps",
            "Set speculative_num_steps, speculative_eagle_topk and speculative_num_draft_tokens together, or none of "
            "them (SGLang then picks (3, 1, 4) for most models)."))
    elif steps is not None and _int(topk, 0) == 1 and draft is not None and _int(draft) != _int(steps) + 1:
        out.append(ctx.info(
            "speculative_draft_tokens_adjusted", "speculative_num_draft_tokens",
            "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1",
            "Set speculative_num_draft_tokens: %d to say what SGLang will use." % (_int(steps) + 1)))
    if _int(topk, 0) > 1 and ctx.get("attention_backend") == "trtllm_mha":
        out.append(ctx.error("speculative_topk_trtllm_mha", "speculative_eagle_topk",
                             "trtllm_mha backend only supports topk = 1 for speculative decoding.",
                             "Use speculative_eagle_topk: 1 or another attention_backend."))
    return out


@rule(since="0.5.20", requires=("speculative_algorithm", "enable_mixed_chunk", "disable_overlap_schedule"))
def speculative_adjusts_scheduling(ctx: Any) -> list:
    algorithm = _spec_algorithm(ctx)
    if algorithm not in EAGLE_FAMILY:
        return []
    out = []
    if ctx.on("enable_mixed_chunk"):
        out.append(ctx.info("speculative_disables_mixed_chunk", "enable_mixed_chunk",
                            "Mixed chunked prefill is disabled: %s speculative decoding does not support it."
                            % ("EAGLE" if algorithm == "NEXTN" else algorithm),
                            "Drop enable_mixed_chunk; it has no effect with speculative decoding."))
    if ctx.on("disable_overlap_schedule"):
        out.append(ctx.info("speculative_synchronous", "disable_overlap_schedule",
                            "Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative "
                            "decoding.", "SGLang keeps the overlap scheduler on for speculative decoding by default; "
                            "drop disable_overlap_schedule unless you measured a gain."))
    return out


@finding_rule("info", "speculative_max_running_requests", "max_running_requests",
              "Max running requests is reset to 48 for speculative decoding. You can override this by "
              "explicitly setting --max-running-requests.",
              "Set max_running_requests if 48 concurrent requests is too few.",
              since="0.5.20", requires=("speculative_algorithm", "max_running_requests"))
def speculative_caps_running_requests(ctx: Any) -> bool:
    return _spec_algorithm(ctx) in EAGLE_FAMILY and ctx.get("max_running_requests") is None


@finding_rule("error", "standalone_with_dp_attention", "speculative_algorithm",
              "Currently standalone speculative decoding does not support dp attention.",
              "Drop attn_dp_size or use another speculative algorithm.",
              requires=("speculative_algorithm", "attn_dp_size"))
def standalone_without_dp_attention(ctx: Any) -> bool:
    return _spec_algorithm(ctx) == "STANDALONE" and _int(ctx.get("attn_dp_size"), 1) > 1


@finding_rule("error", "draft_sink_without_window", "speculative_draft_sink_size",
              "--speculative-draft-sink-size requires --speculative-draft-window-size.",
              "Set speculative_draft_window_size too.",
              requires=("speculative_draft_sink_size", "speculative_draft_window_size"))
def draft_sink_needs_window(ctx: Any) -> bool:
    return ctx.get("speculative_draft_sink_size") is not None and ctx.get("speculative_draft_window_size") is None


@finding_rule("error", "rejection_sampling_topk", "speculative_use_rejection_sampling",
              "--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.",
              "Set speculative_eagle_topk: 1.",
              requires=("speculative_use_rejection_sampling", "speculative_eagle_topk"))
def rejection_sampling_topk(ctx: Any) -> bool:
    topk = ctx.get("speculative_eagle_topk")
    return ctx.on("speculative_use_rejection_sampling") and topk is not None and _int(topk) != 1


# ---------------------------------------------------------------------------------------------------------------------
# Parallelism and multi-node.

@rule(requires=("tp_size", "nnodes"))
def tp_divisible_by_nodes(ctx: Any) -> list:
    nnodes = _int(ctx.get("nnodes"), 1)
    tp_pp = _int(ctx.get("tp_size"), 1) * (_int(ctx.get("pp_size"), 1) if ctx.has("pp_size") else 1)
    if nnodes > 0 and tp_pp % nnodes:
        return [ctx.error("tp_not_divisible_by_nodes", "tp_size", "tp_size must be divisible by number of nodes",
                          "Make tp_size x pp_size (%d) a multiple of nnodes (%d)." % (tp_pp, nnodes))]
    return []


@rule(requires=("nnodes", "node_rank", "dist_init_addr"))
def multi_node_rendezvous(ctx: Any) -> list:
    out = []
    nnodes = _int(ctx.get("nnodes"), 1)
    rank = _int(ctx.get("node_rank"), 0)
    address = ctx.get("dist_init_addr")
    if nnodes > 1 and not address:
        out.append(ctx.warning("multi_node_without_dist_init_addr", "dist_init_addr",
                               "nnodes is %d but dist_init_addr is unset: each node would rendezvous on its own "
                               "--host and nccl port" % nnodes,
                               "Set dist_init_addr to node 0's IP:port on every node."))
    elif isinstance(address, str) and address and not _HOST_PORT_RE.match(address):
        out.append(ctx.error("dist_init_addr_format", "dist_init_addr",
                             "dist_init_addr %r is not HOST:PORT; torch.distributed cannot rendezvous on it" % address,
                             "Write node 0's address as 192.168.0.2:25000 (or [fe80::1]:25000 for IPv6)."))
    if nnodes >= 1 and not 0 <= rank < nnodes:
        out.append(ctx.error("node_rank_out_of_range", "node_rank",
                             "node_rank %d is outside 0..%d for nnodes %d" % (rank, nnodes - 1, nnodes),
                             "Give each node a distinct node_rank from 0 to nnodes - 1."))
    return out


@rule(since="0.5.22", requires=("dp_size", "nnodes", "attn_dp_size"))
def dp_replicas(ctx: Any) -> list:
    out = []
    dp = _int(ctx.get("dp_size"), 1)
    attn_dp = _int(ctx.get("attn_dp_size"), 1)
    if dp > 1 and _int(ctx.get("nnodes"), 1) > 1:
        out.append(ctx.error("multi_node_dp", "dp_size",
                             "multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) "
                             "across nodes", "Use attn_dp_size instead of dp_size across nodes."))
    if dp > 1 and attn_dp > 1:
        out.append(ctx.error("dp_with_attn_dp", "dp_size",
                             "--dp-size %d with --attn-dp-size %d: data-parallel replicas combined with attention "
                             "data parallelism are not supported." % (dp, attn_dp),
                             "Keep one of dp_size and attn_dp_size."))
    tp = _int(ctx.get("tp_size"), 1)
    if attn_dp > 1 and tp % attn_dp:
        out.append(ctx.error("attn_dp_not_dividing_tp", "attn_dp_size",
                             "AssertionError (SGLang gives no message): attn_dp_size %d does not divide tp_size %d"
                             % (attn_dp, tp), "Make tp_size a multiple of attn_dp_size."))
    return out


@finding_rule("error", "attn_cp_not_dividing_tp", "attn_cp_size",
              "tp_size must be divisible by attn_cp_size",
              "Make tp_size a multiple of attn_cp_size.",
              requires=("tp_size", "attn_cp_size"))
def attn_cp_divides_tp(ctx: Any) -> bool:
    cp = _int(ctx.get("attn_cp_size"), 1)
    return cp > 1 and _int(ctx.get("tp_size"), 1) % cp


@rule(requires=("tp_size", "moe_dp_size", "ep_size"))
def moe_dp_layout(ctx: Any) -> list:
    moe_dp = _int(ctx.get("moe_dp_size"), 1)
    tp = _int(ctx.get("tp_size"), 1)
    if moe_dp <= 1:
        return []
    out = []
    if tp % moe_dp:
        out.append(ctx.error("moe_dp_not_dividing_tp", "moe_dp_size", "tp_size must be divisible by moe_dp_size",
                             "Make tp_size a multiple of moe_dp_size."))
    if _int(ctx.get("ep_size"), 1) * moe_dp > tp:
        out.append(ctx.error("ep_moe_dp_exceed_tp", "moe_dp_size",
                             "ep_size * moe_dp_size must be less than or equal to tp_size",
                             "Lower ep_size or moe_dp_size."))
    return out


@rule(until="0.5.14", requires=("enable_two_batch_overlap", "moe_a2a_backend"))
def two_batch_overlap_needs_a2a(ctx: Any) -> list:
    """0.5.9-0.5.14 (ServerArgs.check_server_args): no two-batch overlap without an a2a backend."""
    if ctx.on("enable_two_batch_overlap") and ctx.get("moe_a2a_backend") in (None, "none"):
        return [ctx.error("two_batch_overlap_without_a2a", "enable_two_batch_overlap",
                          "When enabling two batch overlap, moe_a2a_backend cannot be 'none'.",
                          "Two-batch overlap hides MoE all-to-all time; set %s (deepep, ...) or drop %s."
                          % (ctx.ref("moe_a2a_backend"), ctx.ref("enable_two_batch_overlap")))]
    return []


@rule(since="0.5.18", until="0.5.20", requires=("enable_two_batch_overlap", "moe_a2a_backend", "enable_dp_attention"))
def two_batch_overlap_needs_a2a_or_dp_attention(ctx: Any) -> list:
    """0.5.18-0.5.20: without an a2a backend, two-batch overlap needs --enable-dp-attention (the DeepSeek-V4 path).

    0.5.18 and 0.5.19 also accept ROCm's DSA prefill context parallel (round-robin split); on CUDA hosts that
    exception never applies, so the lint reports it and the host check has the last word.
    """
    if ctx.on("enable_two_batch_overlap") and ctx.get("moe_a2a_backend") in (None, "none") \
            and not ctx.on("enable_dp_attention"):
        return [ctx.error("two_batch_overlap_without_a2a", "enable_two_batch_overlap",
                          "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
                          "--enable-dp-attention is required (DeepSeek-V4 non-EP DP TBO path).",
                          "Two-batch overlap hides MoE all-to-all time; without an a2a backend or attention DP there "
                          "is nothing to overlap. Drop %s." % ctx.ref("enable_two_batch_overlap"))]
    return []


@finding_rule("error", "two_batch_overlap_without_a2a", "enable_two_batch_overlap",
              "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
              "attention DP (--attn-dp-size) is required (DeepSeek-V4 non-EP DP TBO path).",
              "Two-batch overlap hides MoE all-to-all time; without an a2a backend or attention DP there "
              "is nothing to overlap. Drop enable_two_batch_overlap.",
              since="0.5.22", requires=("enable_two_batch_overlap", "moe_a2a_backend", "attn_dp_size"))
def two_batch_overlap_needs_a2a_or_dp(ctx: Any) -> bool:
    return (ctx.on("enable_two_batch_overlap") and ctx.get("moe_a2a_backend") in (None, "none")
            and _int(ctx.get("attn_dp_size"), 1) <= 1)


@rule(requires=("moe_a2a_backend",))
def overlap_with_unsupported_a2a(ctx: Any) -> list:
    backend = ctx.get("moe_a2a_backend")
    overlap = [n for n in ("enable_two_batch_overlap", "enable_single_batch_overlap") if ctx.has(n) and ctx.on(n)]
    if not overlap:
        return []
    if backend == "megamoe":
        return [ctx.error("overlap_with_megamoe", overlap[0],
                          "--moe-a2a-backend megamoe has no two-batch / single-batch overlap decomposition; disable "
                          "--enable-two-batch-overlap and --enable-single-batch-overlap.",
                          "Drop %s." % " and ".join(overlap))]
    if backend == "deepep_v2":
        return [ctx.error("overlap_with_deepep_v2", overlap[0],
                          "DeepEP v2 MoE has not implemented the TBO/SBO overlap hooks yet.",
                          "Drop %s or use moe_a2a_backend: deepep." % " and ".join(overlap))]
    return []


@rule(since="0.5.14", requires=("ep_size", "tp_size", "moe_runner_backend"))
def expert_parallel_with_flashinfer_moe(ctx: Any) -> list:
    ep, tp = _int(ctx.get("ep_size"), 1), _int(ctx.get("tp_size"), 1)
    backend = ctx.get("moe_runner_backend")
    if backend in ("flashinfer_cutlass", "flashinfer_cutedsl") and ep not in (1, tp):
        return [ctx.error("ep_size_for_flashinfer_moe", "ep_size",
                          "The expert parallel size must be 1 or the same as the tensor parallel size",
                          "With moe_runner_backend %s use ep_size: 1 or ep_size: %d." % (backend, tp))]
    return []


@rule(requires=("tp_size", "disable_custom_all_reduce"))
def custom_all_reduce_without_p2p(ctx: Any) -> list:
    """Custom all-reduce assumes P2P unless enable_p2p_check; GPUs without P2P crash on the first all-reduce."""
    tp = _int(ctx.get("tp_size"), 1)
    if tp < 2 or ctx.on("disable_custom_all_reduce") or ctx.fact_bool("gpu_p2p") is not False:
        return []
    if ctx.has("enable_p2p_check") and ctx.on("enable_p2p_check"):
        return [ctx.info("custom_all_reduce_p2p_check", "enable_p2p_check",
                         "This host's GPUs have no P2P access; enable_p2p_check makes SGLang test P2P and fall back "
                         "to NCCL", "Setting disable_custom_all_reduce: true skips the test.")]
    return [ctx.warning(
        "custom_all_reduce_without_p2p", "disable_custom_all_reduce",
        "Custom all-reduce is on (SGLang's default) for tp_size %d, but this host's GPUs have no P2P access; SGLang "
        "assumes P2P unless --enable-p2p-check is set and then fails with 'peer access is not supported between "
        "these two devices'." % tp,
        "Set disable_custom_all_reduce: true (or enable_p2p_check: true to let SGLang test P2P and fall back).")]


# ---------------------------------------------------------------------------------------------------------------------
# Memory, scheduling, serving.

@rule(requires=("mem_fraction_static",))
def mem_fraction_range(ctx: Any) -> list:
    """SGLang takes any float and fails minutes later, after the weights load: an error here."""
    value = ctx.get("mem_fraction_static")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or 0 < value < 1:
        return []
    return [ctx.error(
        "mem_fraction_out_of_range", "mem_fraction_static",
        "mem_fraction_static %r is outside (0, 1); SGLang does not check the range and fails only after the weights "
        "loaded: 'Not enough memory. Please try to increase --mem-fraction-static.' (or a CUDA out-of-memory error)"
        % (value,),
        "Give %s a fraction of GPU memory for weights plus KV cache, typically 0.8-0.9, or leave it unset to let "
        "SGLang size it." % ctx.ref("mem_fraction_static"))]


# prepare_server_args calls logging.basicConfig(level=getattr(logging, log_level.upper())).
LOGGING_LEVELS = ("CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET")


@rule(requires=("log_level",))
def log_level_known(ctx: Any) -> list:
    """--log-level has no argparse choices; a name the logging module lacks fails inside prepare_server_args."""
    value = ctx.get("log_level")
    if not ctx.given("log_level") or not isinstance(value, str) or value.upper() in LOGGING_LEVELS:
        return []
    return [ctx.error("log_level_unknown", "log_level",
                      "module 'logging' has no attribute '%s' (SGLang looks --log-level up in Python's logging)"
                      % value.upper(),
                      "Give %s one of debug, info, warning, error or critical." % ctx.ref("log_level"))]


@rule(requires=("chunked_prefill_size", "page_size"))
def chunk_multiple_of_page(ctx: Any) -> list:
    chunk = ctx.get("chunked_prefill_size")
    page = ctx.get("page_size")
    if isinstance(chunk, int) and isinstance(page, int) and not isinstance(chunk, bool) and chunk > 0 \
            and page > 0 and chunk % page:
        return [ctx.error("chunk_not_page_multiple", "chunked_prefill_size",
                          "chunked_prefill_size must be divisible by page_size",
                          "Use a multiple of %d, e.g. %d." % (page, max(page, chunk - chunk % page)))]
    return []


@rule(since="0.5.20", requires=("served_model_name",))
def served_name_without_colon(ctx: Any) -> list:
    value = ctx.get("served_model_name")
    if isinstance(value, str) and ":" in value:
        return [ctx.error("served_model_name_colon", "served_model_name",
                          "served_model_name cannot contain a colon (':') character. The colon is reserved for the "
                          "'model:adapter' syntax used in LoRA adapter specification. Invalid value: '%s'" % value,
                          "Replace ':' in served_model_name, e.g. with '-'.")]
    return []


@rule(requires=("grpc_port", "port"))
def grpc_port_differs(ctx: Any) -> list:
    grpc, port = ctx.get("grpc_port"), ctx.get("port")
    if grpc is not None and grpc == port:
        return [ctx.error("grpc_port_equals_port", "grpc_port",
                          "--grpc-port (%s) must differ from --port (%s)" % (grpc, port), "Pick another grpc_port.")]
    return []


@finding_rule("error", "retraction_priority_without_scheduling", "retraction_policy",
              "--retraction-policy priority requires --enable-priority-scheduling",
              "Set enable_priority_scheduling: true or use retraction_policy: length.",
              requires=("retraction_policy", "enable_priority_scheduling"))
def priority_retraction(ctx: Any) -> bool:
    return ctx.get("retraction_policy") == "priority" and not ctx.on("enable_priority_scheduling")


@rule(requires=("port",))
def port_range(ctx: Any) -> list:
    port = ctx.get("port")
    if isinstance(port, bool) or not isinstance(port, int):
        return []
    if not 1 <= port <= 65535:
        return [ctx.error("port_out_of_range", "port",
                          "port %d is not a TCP port (1-65535); SGLang does not check it and uvicorn fails to bind only "
                          "after the model has loaded" % port,
                          "Give %s a port between 1024 and 65535 (30000 is SGLang's default)." % ctx.ref("port"))]
    user = ctx.facts.get("service_user")
    if port < 1024 and user not in ("root", 0, "0"):
        return [ctx.error("privileged_port", "port",
                          "port %d is below 1024: the service runs as %s without CAP_NET_BIND_SERVICE and cannot bind "
                          "it; SGLang finds out only after the model has loaded"
                          % (port, repr(user) if user else "an unprivileged user"),
                          "Give %s a port of 1024 or above (30000 is SGLang's default) and put a proxy in front for a "
                          "low port." % ctx.ref("port"))]
    return []


def is_loopback_host(host: Any) -> bool:
    """A --host that only this machine can reach."""
    return isinstance(host, str) and (host in LOOPBACK_HOSTS or host.startswith("127."))


@rule(requires=("host", "api_key"))
def open_host_needs_api_key(ctx: Any) -> list:
    """A server open to the network without an API key serves anyone, admin routes included: an error unless the
    operator says it is meant (sglang_server_allow_open_without_api_key, the module's allow_open_without_api_key)."""
    host = ctx.get("host")
    if not isinstance(host, str) or is_loopback_host(host) or ctx.get("api_key"):
        return []
    # no "api_key: <word>" in the text: the secrets policy would take the word after the colon for a key and mask it
    message = ("SGLang listens on %s without an API key, so anyone who reaches the port can use the model and its "
               "admin routes (/flush_cache, /update_weights...)" % host)
    if ctx.options.get("allow_open_without_api_key"):
        return [ctx.warning("open_without_api_key", "host", message + "; allowed by allow_open_without_api_key",
                            "Make sure a firewall or an authenticating proxy stands in front of the port.")]
    return [ctx.error(
        "open_without_api_key", "host", message,
        "Set sglang_server_api_key (from a vault), or bind %s to 127.0.0.1 behind an authenticating proxy; if the "
        "network is closed by other means, say so with sglang_server_allow_open_without_api_key: true."
        % ctx.ref("host"))]


# ---------------------------------------------------------------------------------------------------------------------
# Rules that read the model's config.json (ctx.model / ctx.draft_model, from flags/model.py; None when unknown).

# Architectures SGLang accepts for --encoder-only / --language-only, with the first release that lists each
# (the model_arch list in _handle_encoder_disaggregation / pd_disaggregation_hook.handle_encoder_disaggregation).
# 0.5.9 has no such list. Read from the wheels of 0.5.10, 0.5.12, 0.5.14, 0.5.18, 0.5.19, 0.5.20, 0.5.23.
ENCODER_DISAGG_ARCHS = {
    "Qwen2VLForConditionalGeneration": "0.5.10",
    "Qwen3VLForConditionalGeneration": "0.5.10",
    "Qwen2_5_VLForConditionalGeneration": "0.5.10",
    "Qwen3VLMoeForConditionalGeneration": "0.5.10",
    "Qwen3OmniMoeForConditionalGeneration": "0.5.10",
    "Qwen2AudioForConditionalGeneration": "0.5.10",
    "Qwen2_5OmniForConditionalGeneration": "0.5.10",
    "Qwen3_5ForConditionalGeneration": "0.5.12",
    "Qwen3_5MoeForConditionalGeneration": "0.5.12",
    "InternS2PreviewForConditionalGeneration": "0.5.12",
    "KimiVLForConditionalGeneration": "0.5.12",
    "KimiK25ForConditionalGeneration": "0.5.12",
    "MiMoV2ForCausalLM": "0.5.14",
    "KimiK3ForConditionalGeneration": "0.5.18",
    "Dots3NoteForCausalLM": "0.5.19",
    "Glm5NextForConditionalGeneration": "0.5.20",
    "MiniMaxM3SparseForConditionalGeneration": "0.5.23",
    "MuseSparkForConditionalGeneration": "0.5.23",
}
# The names SGLang 0.5.23's error message lists.
ENCODER_DISAGG_NAMES_0_5_23 = ("Qwen2VL, Qwen3VL, Qwen3.5, InternS2, Qwen2Audio, Qwen2.5Omni, Dots3-Note, Kimi, MiMoV2, "
                               "GLM5Next, MiniMax-M3, MuseSpark")

# Quantization names that SGLang accepts for a checkpoint of another quant_method: its
# compatible_quantization_methods (0.5.23, ModelConfig._verify_quantization), the Marlin kernels that
# override_quantization_method picks for AWQ/GPTQ checkpoints on a GPU, and the online requantization methods.
QUANT_COMPATIBLE = {
    "modelopt_fp8": ("modelopt",),
    "modelopt_fp4": ("modelopt", "fp8"),
    "modelopt_mixed": ("modelopt",),
    "nvfp4_online": ("fp8", "modelopt_fp8"),
    "minimax_m3_nvfp4": ("mxfp8",),
    "petit_nvfp4": ("modelopt",),
    "w8a8_int8": ("compressed-tensors", "compressed_tensors"),
    "w8a8_fp8": ("compressed-tensors", "compressed_tensors"),
    "auto-round-int8": ("compressed-tensors", "compressed_tensors"),
    "awq_marlin": ("awq",),
    "gptq_marlin": ("gptq",),
    "gptq_marlin_24": ("gptq",),
    "marlin": ("gptq", "awq"),
    "moe_wna16": ("awq", "gptq"),
}
REQUANTIZATION_METHODS = ("quark_mxfp4",)


def _attention_split(ctx: Any) -> Optional[int]:
    """The tensor-parallel size the attention heads are split by, when it is simply tp_size (else None)."""
    for name in ("attn_dp_size", "attn_cp_size", "dp_size"):
        if ctx.has(name) and _int(ctx.get(name), 1) > 1 and (name != "dp_size" or ctx.on("enable_dp_attention")):
            return None
    if ctx.has("enable_dp_attention") and ctx.on("enable_dp_attention"):
        return None
    tp = _int(ctx.get("tp_size"), 1)
    return tp if tp > 1 else None


def _head_findings(ctx: Any, model: dict, flag: str, which: str) -> list:
    """SGLang's QKVParallelLinear: heads must divide by the TP size; KV heads divide it or are divided by it."""
    tp = _attention_split(ctx)
    if tp is None or model.get("mla"):
        return []
    heads, kv = model.get("num_attention_heads"), model.get("num_key_value_heads")
    out = []
    if heads and heads % tp:
        out.append(ctx.error(
            "tp_not_dividing_heads", flag,
            "%s has %d attention heads, which tp_size %d does not divide; SGLang accepts the flags and fails only when "
            "it loads the weights: 'AssertionError: %d is not divisible by %d'" % (which, heads, tp, heads, tp),
            "Give %s a divisor of %d (%s)."
            % (ctx.ref("tp_size"), heads, ", ".join(str(d) for d in range(1, min(heads, 16) + 1) if heads % d == 0))))
    elif kv and (tp % kv if tp >= kv else kv % tp):
        out.append(ctx.error(
            "tp_not_dividing_kv_heads", flag,
            "%s has %d key/value heads; tp_size %d neither divides them nor is a multiple of them, so SGLang fails when "
            "it loads the weights: 'AssertionError: %d is not divisible by %d'"
            % (which, kv, tp, max(tp, kv), min(tp, kv)),
            "Give %s a divisor or a multiple of %d that also divides the %d attention heads."
            % (ctx.ref("tp_size"), kv, heads or kv)))
    return out


@rule(since="0.5.10", requires=("language_only", "encoder_only"))
def encoder_disaggregation_architecture(ctx: Any) -> list:
    """handle_encoder_disaggregation refuses --language-only / --encoder-only on other architectures."""
    if ctx.model is None or not (ctx.on("language_only") or ctx.on("encoder_only")):
        return []
    arch = ctx.model.get("architecture")
    if not arch:
        return []
    supported = sorted(a for a, since in ENCODER_DISAGG_ARCHS.items() if in_release(ctx.release, since))
    if arch in supported:
        return []
    flag = "language_only" if ctx.on("language_only") else "encoder_only"
    names = ENCODER_DISAGG_NAMES_0_5_23 if in_release(ctx.release, "0.5.23") else ", ".join(supported)
    return [ctx.error(
        "encoder_disaggregation_architecture", flag,
        "Model type %s is not supported for encoder disaggregation. Supported architectures: %s." % (arch, names),
        "%s splits a multimodal model's vision or audio encoder off to other servers; %s has none SGLang can split. "
        "Drop %s to serve the whole model from this server." % (flag, arch, ctx.ref(flag)))]


@rule(requires=("context_length",))
def context_length_within_model(ctx: Any) -> list:
    """ModelConfig._derive_context_length refuses a context_length above the derived maximum."""
    value = ctx.get("context_length")
    if ctx.model is None or not ctx.given("context_length") or isinstance(value, bool) or not isinstance(value, int):
        return []
    low, high = ctx.model.get("context_low"), ctx.model.get("context_high")
    if not low or value <= low:
        return []
    allowed = str((ctx.facts.get("environment") or {}).get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "")).lower() \
        in ("1", "true", "yes", "on")
    if value > high and not allowed:
        return [ctx.error(
            "context_length_above_model", "context_length",
            "Warning: User-specified context_length (%d) is greater than the derived context_length (%d). This may lead "
            "to incorrect model outputs or CUDA errors. (SGLang raises this as a ValueError; the model's %s is %d.)"
            % (value, high, ctx.model.get("context_key"), low),
            "Give %s at most %d, or leave it unset to use the model's maximum; to go beyond it on purpose set "
            "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 in sglang_server_env." % (ctx.ref("context_length"), high))]
    if value > high:
        return [ctx.warning(
            "context_length_above_model", "context_length",
            "context_length %d is above the model's maximum (%d); SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN lets it "
            "through, which may lead to incorrect model outputs or CUDA errors" % (value, high),
            "Keep %s at or below %d unless the model was trained for more." % (ctx.ref("context_length"), high))]
    return [ctx.info(
        "context_length_rope_scaled", "context_length",
        "context_length %d is above the model's %s (%d) but within its rope scaling (%d): whether SGLang accepts it "
        "depends on the transformers release in the venv; the host check decides"
        % (value, ctx.model.get("context_key"), low, high))]


@rule(requires=("tp_size",))
def tp_divides_attention_heads(ctx: Any) -> list:
    """SGLang checks the head split only at model load, minutes into a start: the lint checks it first."""
    if ctx.model is None:
        return []
    return _head_findings(ctx, ctx.model, "tp_size", "the model")


@rule(requires=("quantization",))
def quantization_matches_checkpoint(ctx: Any) -> list:
    """ModelConfig._verify_quantization: a quantization the checkpoint's quantization_config contradicts."""
    wanted = ctx.get("quantization")
    if ctx.model is None or not ctx.given("quantization") or not isinstance(wanted, str):
        return []
    method = ctx.model.get("quant_method")
    wanted = wanted.lower()
    if not method or wanted in (method, "unquant") or wanted in REQUANTIZATION_METHODS \
            or method in QUANT_COMPATIBLE.get(wanted, ()):
        return []
    return [ctx.error(
        "quantization_mismatch", "quantization",
        "Quantization method specified in the model config (%s) does not match the quantization method specified in "
        "the `quantization` argument (%s)." % (method, wanted),
        "The checkpoint is already quantized with %s: drop %s (SGLang reads it from the checkpoint) or give %s."
        % (method, ctx.ref("quantization"), method))]


@rule(requires=("speculative_algorithm", "speculative_draft_model_path"))
def draft_model_shape(ctx: Any) -> list:
    """A draft model must fit the target: its heads split by the same tp_size, EAGLE drafts the target's width."""
    draft, target = ctx.draft_model, ctx.model
    algorithm = _spec_algorithm(ctx)
    if draft is None or not algorithm:
        return []
    out = _head_findings(ctx, draft, "speculative_draft_model_path", "the draft model")
    if target is None:
        return out
    width = target.get("hidden_size")
    if algorithm in ("EAGLE", "EAGLE3") and width:
        draft_width = (draft.get("target_hidden_size") if algorithm == "EAGLE3" else None) or draft.get("hidden_size")
        if draft_width and draft_width != width:
            out.append(ctx.error(
                "draft_hidden_size_mismatch", "speculative_draft_model_path",
                "the %s draft model reads hidden states %d wide, but the target model's hidden_size is %d: the draft "
                "was trained for another model, and SGLang fails when it loads the draft weights (shape mismatch)"
                % (algorithm, draft_width, width),
                "Use a draft model trained for this target model in %s." % ctx.ref("speculative_draft_model_path")))
    if algorithm == "STANDALONE" and target.get("vocab_size") and draft.get("vocab_size") \
            and target["vocab_size"] != draft["vocab_size"]:
        out.append(ctx.warning(
            "draft_vocab_mismatch", "speculative_draft_model_path",
            "the standalone draft model has a vocabulary of %d tokens, the target %d: its proposals are token ids of "
            "another tokenizer, so almost none will be accepted" % (draft["vocab_size"], target["vocab_size"]),
            "Use a smaller model of the same family (same tokenizer) as the draft."))
    return out
