# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The batch-1 decode ceiling: how many tokens per second the hardware allows one request, and what binds it.

Why a model and not a benchmark: an operator asking "is there more performance?" needs a number the box cannot
beat whatever flags are set, and which part of the hardware sets it. At batch 1 every decode step (one target
forward) reads every active weight once, so

    weight time   = active weight bytes / (TP x peak memory bandwidth x achievable_fraction)
    all-reduce    = (2 per layer + 2) x (latency + bytes x 2(TP-1)/TP / bus bandwidth)      (TP > 1 only)
    tokens/s      = accept_length / (weight time + all-reduce time)

- Bytes read per step: every layer's attention and MLP weights (for MoE, the routed experts a token uses plus
  shared experts and the router), plus the LM head. The input embedding is one row per token, not read whole,
  so an untied embedding table is left out; a tied one is read once, as the LM head. Vision towers and MTP draft
  layers are not read by a plain text decode step and are left out.
- Bytes per parameter: the checkpoint dtype (bf16/fp16 2, fp32 4), or the quantisation (fp8 1; GPTQ/AWQ/int4
  0.5 plus group scales; NVFP4 0.5625; MXFP4 0.53125). Quantised checkpoints keep the LM head at the dtype.
- Bandwidth: NVIDIA's published peak (gpu/specs.py). ``achievable_fraction`` defaults to 1.0, so the figure is a
  ceiling, not a forecast: real decode kernels reach roughly 80-90% of peak, which is what "within 10%" in the
  verdict allows for. On the story's box (a 27B dense bf16 model, 2x RTX A6000 768 GB/s, PCIe, TP 2) this gives
  about 29 tok/s, in line with the ~28 tok/s of docs/reference/sglang.md#decode-ceiling and the ~55 tok/s measured at accept length ~2.
- All-reduce: SGLang runs two per decoder layer (after attention, after the MLP), one for the vocab-parallel
  embedding and a gather of the logits; each moves hidden_size x 2 bytes per token, so it is latency-bound;
  latencies per link and implementation are in gpu/specs.py with their sources.
- Speculative decoding: one target forward yields ``accept_length`` tokens on average (bonus token included,
  as SGLang counts it), so the ceiling scales by it. Draft-model cost is not modelled: the figure stays an
  upper bound.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.specs import (
    DRAFT_EXTEND_PASSES,
    DRAFT_PASS_US,
    EAGER_ALLREDUCE_FACTOR,
    EXPECTATION_BANDS,
    INTERNODE_BUS_GBS,
    INTERNODE_LATENCY_US,
    LAYER_OVERHEAD_US,
    MOE_LAYER_US,
    OVERHEAD_SOURCES,
    STEP_OVERHEAD_US,
    TORCH_COMPILE_LAYER_FACTOR,
    allreduce_bus_gbs,
    allreduce_impl,
    allreduce_latency_us as table_allreduce_latency_us,
    find_gpu,
    link_kind,
    sustained_fraction as table_sustained_fraction,
)

DTYPE_BYTES = {
    "float32": 4.0, "fp32": 4.0, "float": 4.0,
    "bfloat16": 2.0, "bf16": 2.0, "float16": 2.0, "fp16": 2.0, "half": 2.0,
    "float8": 1.0, "fp8": 1.0, "float8_e4m3fn": 1.0, "float8_e5m2": 1.0, "int8": 1.0, "w8a8": 1.0,
    "int4": 0.5, "w4a16": 0.5, "fp4": 0.5,
    "nvfp4": 0.5625,   # 4-bit values + one fp8 scale per 16
    "mxfp4": 0.53125,  # 4-bit values + one 8-bit scale per 32
}

# Verdict thresholds on efficiency = measured / ceiling.
NEAR_CEILING = 0.75
ABOVE_CEILING = 1.05

# Collectives per target forward besides the two per layer: vocab-parallel embedding all-reduce, logits gather.
EXTRA_COLLECTIVES = 2

_TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config", "thinker_config")
_LINK_ORDER = ("NV", "PIX", "PXB", "PHB", "NODE", "SYS")


class CeilingError(ValueError):
    """The inputs cannot give a ceiling; the message says which input is missing or wrong."""


def _num(value: Any) -> Optional[float]:
    """A number from an int/float/numeric string, None for None/empty."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise CeilingError("expected a number, got a boolean: %r" % (value,))
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise CeilingError("expected a number, got %r" % (value,)) from exc


def text_config(config: Dict[str, Any]) -> Dict[str, Any]:
    """The language-model part of a config.json: ``text_config`` and kin for multimodal models, else itself.

    Keys missing from the nested part (dtype, tie_word_embeddings, quantization_config) are taken from the top.
    """
    for key in _TEXT_CONFIG_KEYS:
        nested = config.get(key)
        if isinstance(nested, dict):
            if "text_config" in nested and isinstance(nested["text_config"], dict):
                nested = nested["text_config"]
            merged = {k: v for k, v in config.items() if k not in _TEXT_CONFIG_KEYS}
            merged.update(nested)
            return merged
    return config


def _first(config: Dict[str, Any], *keys: str) -> Any:
    """The first key present (and not None) in the config."""
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return None


def _layer_types(cfg: Dict[str, Any], layers: int) -> List[str]:
    """``full`` or ``linear`` per layer: from ``layer_types``, or every ``full_attention_interval``-th layer full."""
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return ["linear" if str(t).startswith("linear") else "full" for t in types]
    interval = cfg.get("full_attention_interval")
    if interval and cfg.get("linear_num_value_heads"):
        step = int(interval)
        return ["full" if (i + 1) % step == 0 else "linear" for i in range(layers)]
    return ["full"] * layers


def _attention_params(cfg: Dict[str, Any], hidden: int) -> int:
    """Weights of one full-attention block: MLA (DeepSeek/Kimi) or multi/grouped-query attention."""
    heads = int(_first(cfg, "num_attention_heads", "n_head", "num_heads") or 0)
    if not heads:
        raise CeilingError("config has no num_attention_heads")
    if cfg.get("kv_lora_rank"):
        nope = int(cfg.get("qk_nope_head_dim") or 128)
        rope = int(cfg.get("qk_rope_head_dim") or 64)
        v_dim = int(cfg.get("v_head_dim") or 128)
        kv_rank = int(cfg["kv_lora_rank"])
        q_rank = cfg.get("q_lora_rank")
        q_params = hidden * int(q_rank) + int(q_rank) * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
        return q_params + hidden * (kv_rank + rope) + kv_rank * heads * (nope + v_dim) + heads * v_dim * hidden
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    kv_heads = int(_first(cfg, "num_key_value_heads", "num_kv_heads", "n_kv_heads") or heads)
    q_out = heads * head_dim * (2 if cfg.get("attn_output_gate") else 1)
    return hidden * (q_out + 2 * kv_heads * head_dim) + heads * head_dim * hidden


def _linear_attention_params(cfg: Dict[str, Any], hidden: int) -> int:
    """Weights of one gated-DeltaNet block (Qwen3-Next, Qwen3.5): qkvz and ba projections, conv, output."""
    k_heads = int(cfg.get("linear_num_key_heads") or 0)
    v_heads = int(cfg.get("linear_num_value_heads") or 0)
    key_dim = k_heads * int(cfg.get("linear_key_head_dim") or 128)
    value_dim = v_heads * int(cfg.get("linear_value_head_dim") or 128)
    kernel = int(cfg.get("linear_conv_kernel_dim") or 4)
    return hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * v_heads + (2 * key_dim + value_dim) * kernel + value_dim * hidden


def _moe_layout(cfg: Dict[str, Any], layers: int) -> Tuple[List[bool], Dict[str, int]]:
    """Which layers are MoE, and the expert shape; all False when the model is dense."""
    experts = int(_first(cfg, "num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts") or 0)
    if experts <= 1:
        return [False] * layers, {}
    top_k = int(_first(cfg, "num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_top_k") or 0)
    if top_k <= 0:
        raise CeilingError("MoE config (%d experts) has no num_experts_per_tok" % experts)
    expert_inter = int(_first(cfg, "moe_intermediate_size", "intermediate_size") or 0)
    shared_inter = int(cfg.get("shared_expert_intermediate_size") or 0)
    n_shared = int(_first(cfg, "n_shared_experts", "num_shared_experts") or 0)
    if not shared_inter and n_shared:
        shared_inter = n_shared * expert_inter
    first_dense = int(cfg.get("first_k_dense_replace") or 0)
    freq = int(_first(cfg, "moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step") or 1)
    dense_only = set(int(i) for i in (cfg.get("mlp_only_layers") or []))
    uses_step = cfg.get("decoder_sparse_step") is not None or cfg.get("interleave_moe_layer_step") is not None
    flags = []
    for i in range(layers):
        if i < first_dense or i in dense_only:
            flags.append(False)
        elif uses_step:
            flags.append((i + 1) % max(freq, 1) == 0)
        else:
            flags.append((i - first_dense) % max(freq, 1) == 0)
    return flags, {"experts": experts, "top_k": top_k, "expert_inter": expert_inter, "shared_inter": shared_inter}


def count_params(config: Dict[str, Any]) -> Dict[str, Any]:
    """Parameter counts of a transformer from its config.json: total, active per token, and read per decode step.

    Returns ``layers``, ``hidden_size``, ``vocab_size``, ``tied``, ``moe``, ``total_params``, ``active_params``
    (counted the way model cards count them: embedding and LM head included), ``read_layer_params`` (decoder-layer
    weights read per step: quantisable) and ``read_head_params`` (the LM head, kept at the checkpoint dtype by
    quantisers; an untied input embedding is one row per token and is not read whole). For MoE also
    ``moe_layers``, ``expert_params`` (one routed expert) and ``routed_active_params`` (the routed experts one
    token reads, all layers): a verify pass over several draft tokens reads more distinct experts than that.
    """
    cfg = text_config(config)
    hidden = int(_first(cfg, "hidden_size", "d_model", "n_embd") or 0)
    layers = int(_first(cfg, "num_hidden_layers", "n_layer", "num_layers") or 0)
    vocab = int(cfg.get("vocab_size") or 0)
    if not hidden or not layers or not vocab:
        raise CeilingError("config needs hidden_size, num_hidden_layers and vocab_size (got %s, %s, %s)" % (hidden or None, layers or None, vocab or None))
    tied = bool(cfg.get("tie_word_embeddings", False))
    dense_inter = int(cfg.get("intermediate_size") or 0)
    moe_flags, moe = _moe_layout(cfg, layers)
    if moe and not cfg.get("moe_intermediate_size"):
        dense_inter = int(cfg.get("dense_intermediate_size") or dense_inter)
    full_attn = _attention_params(cfg, hidden)
    linear_attn = _linear_attention_params(cfg, hidden) if cfg.get("linear_num_value_heads") else 0
    types = _layer_types(cfg, layers)
    total_layer = active_layer = routed_active = moe_layers = per_expert = 0
    for i in range(layers):
        attn = linear_attn if types[i] == "linear" and linear_attn else full_attn
        if moe_flags[i]:
            per_expert = 3 * hidden * moe["expert_inter"]
            shared = 3 * hidden * moe["shared_inter"]
            router = hidden * moe["experts"]
            total_layer += attn + moe["experts"] * per_expert + shared + router
            active_layer += attn + moe["top_k"] * per_expert + shared + router
            routed_active += moe["top_k"] * per_expert
            moe_layers += 1
        else:
            if not dense_inter:
                raise CeilingError("config has no intermediate_size")
            mlp = 3 * hidden * dense_inter
            total_layer += attn + mlp
            active_layer += attn + mlp
    embed = vocab * hidden
    return {
        "layers": layers,
        "hidden_size": hidden,
        "vocab_size": vocab,
        "tied": tied,
        "moe": bool(moe),
        "experts": moe.get("experts", 0),
        "experts_per_token": moe.get("top_k", 0),
        "linear_attention_layers": sum(1 for t in types if t == "linear") if linear_attn else 0,
        "moe_layers": moe_layers,
        "expert_params": per_expert,
        "routed_active_params": routed_active,
        "total_params": total_layer + embed + (0 if tied else embed),
        "active_params": active_layer + embed + (0 if tied else embed),
        "read_layer_params": active_layer,
        "read_head_params": embed,
    }


def _group_overhead(bits: float, group_size: Any) -> float:
    """Bytes per weight of a 16-bit scale plus a packed zero point per group (GPTQ/AWQ layout)."""
    size = int(group_size) if group_size and int(group_size) > 0 else 0
    return (2.0 + bits / 8.0) / size if size else 0.0


def quantisation_bytes(config: Dict[str, Any]) -> Optional[Tuple[float, str]]:
    """Bytes per quantised weight and a label, from ``quantization_config``; None for an unquantised checkpoint."""
    qcfg = config.get("quantization_config") or config.get("quantization")
    if not isinstance(qcfg, dict):
        return None
    method = str(qcfg.get("quant_method") or qcfg.get("quant_algo") or "").lower()
    if method in ("fp8", "fbgemm_fp8", "w8a8_fp8", "ptpc_fp8"):
        return 1.0, "fp8"
    if method in ("gptq", "awq", "gptq_marlin", "awq_marlin", "auto-round", "autoround", "marlin", "hqq", "quark_int4"):
        bits = float(qcfg.get("bits") or qcfg.get("w_bit") or 4)
        return bits / 8.0 + _group_overhead(bits, qcfg.get("group_size", qcfg.get("q_group_size", 128))), "%s int%d" % (method, int(bits))
    if method == "bitsandbytes":
        return (0.5 + 0.5 / 64.0, "bnb nf4") if qcfg.get("load_in_4bit") else (1.0, "bnb int8")
    if method in ("mxfp4",):
        return DTYPE_BYTES["mxfp4"], "mxfp4"
    if method in ("nvfp4", "modelopt_fp4"):
        return DTYPE_BYTES["nvfp4"], "nvfp4"
    if method == "modelopt":
        algo = str(qcfg.get("quant_algo") or "").lower()
        if "fp4" in algo:
            return DTYPE_BYTES["nvfp4"], "nvfp4"
        return 1.0, "modelopt fp8"
    if method == "compressed-tensors":
        for group in (qcfg.get("config_groups") or {}).values():
            weights = (group or {}).get("weights") or {}
            if weights.get("num_bits"):
                bits = float(weights["num_bits"])
                label = "%s%d" % ("fp" if weights.get("type") == "float" else "int", int(bits))
                if bits == 4 and weights.get("type") == "float" and int(weights.get("group_size") or 0) == 16:
                    return DTYPE_BYTES["nvfp4"], "nvfp4"
                overhead = _group_overhead(bits, weights.get("group_size")) if weights.get("strategy") == "group" else 0.0
                return bits / 8.0 + overhead, "compressed-tensors " + label
        raise CeilingError("compressed-tensors quantization_config without weight num_bits: pass bytes_per_param")
    if qcfg.get("bits"):
        bits = float(qcfg["bits"])
        return bits / 8.0 + _group_overhead(bits, qcfg.get("group_size")), "%s int%d" % (method or "quantised", int(bits))
    raise CeilingError("unknown quantization_config quant_method %r: pass bytes_per_param" % method)


def dtype_bytes(dtype: Any) -> float:
    """Bytes per parameter for a dtype name (``bfloat16``, ``torch.float16``, ``fp8``, ``nvfp4``...)."""
    name = str(dtype or "").lower().replace("torch.", "").strip()
    if name not in DTYPE_BYTES:
        raise CeilingError("unknown dtype %r: one of %s, or pass bytes_per_param" % (dtype, ", ".join(sorted(DTYPE_BYTES))))
    return DTYPE_BYTES[name]


def _worst_link(links: Dict[str, Any], members: List[int]) -> Optional[str]:
    """The slowest link class among the pairs of a TP group (NV# fastest, SYS slowest), None when none known."""
    worst, worst_rank = None, -1
    for a_i, a in enumerate(members):
        for b in members[a_i + 1:]:
            key = "%d-%d" % (min(a, b), max(a, b))
            value = links.get(key)
            if value is None:
                continue
            text = str(value).upper()
            rank = 0 if text.startswith("NV") else (_LINK_ORDER.index(text) if text in _LINK_ORDER else len(_LINK_ORDER))
            if rank > worst_rank:
                worst, worst_rank = text, rank
    return worst


def _p2p_ok(p2p: Any, members: List[int]) -> Optional[bool]:
    """True when every pair in the TP group has driver P2P status OK, False when one does not, None if unknown.

    Takes ``{"0-1": "OK"}`` or per-mode maps ``{"r": {...}, "w": {...}}`` (read and write both count).
    """
    if not isinstance(p2p, dict) or not p2p:
        return None
    maps = [p2p[m] for m in ("r", "w") if isinstance(p2p.get(m), dict) and p2p[m]] or [p2p]
    seen = False
    for mapping in maps:
        for a_i, a in enumerate(members):
            for b in members[a_i + 1:]:
                status = mapping.get("%d-%d" % (min(a, b), max(a, b)))
                if status is None or isinstance(status, dict):
                    continue
                seen = True
                if str(status).upper() != "OK":
                    return False
    return True if seen else None


def facts_inputs(gpu_facts: Dict[str, Any], tp: int) -> Dict[str, Any]:
    """GPU name, link, PCIe generation/width and P2P for the first ``tp`` GPUs of a gpu_facts-style dict.

    Reads ``gpus[i].name``, ``gpus[i].pcie_gen_max``/``pcie_width_max`` (the link's capability: the current
    values drop at idle), ``links`` (``{"0-1": "PHB"}``) and ``p2p_read`` (or ``p2p``) as the gpu_facts module
    returns them.
    """
    gpus = gpu_facts.get("gpus") or []
    members = list(range(max(int(tp), 1)))
    group = [g for i, g in enumerate(gpus) if i in members and isinstance(g, dict)]
    found: Dict[str, Any] = {}
    if group:
        found["gpu"] = group[0].get("name")
        gens = [int(g["pcie_gen_max"]) for g in group if g.get("pcie_gen_max") not in (None, "", "N/A")]
        widths = [int(g["pcie_width_max"]) for g in group if g.get("pcie_width_max") not in (None, "", "N/A")]
        if gens:
            found["pcie_gen"] = min(gens)
        if widths:
            found["pcie_width"] = min(widths)
    if tp > 1:
        found["link"] = _worst_link(gpu_facts.get("links") or {}, members)
        found["p2p"] = _p2p_ok(gpu_facts.get("p2p_read") or gpu_facts.get("p2p"), members)
    return found


def _truthy(value: Any) -> bool:
    """A flag value as SGLang's argparse would take it (``"false"``, ``"0"``, ``""`` and None are off)."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "off", "none", "disabled")
    return bool(value)


def speculative_settings(spec: Any) -> Optional[Dict[str, Any]]:
    """Normalised speculative settings (algorithm, steps, top-k, draft tokens, draft shape); None when off.

    Takes SGLang's own resolution where it matters for cost: NEXTN is EAGLE; no steps given means SGLang's
    automatic (3, 1, 4); with top-k 1 the draft tokens are steps + 1 (docs/reference/sglang.md#speculative-decoding).
    """
    if not spec:
        return None
    if isinstance(spec, str):
        spec = {"algorithm": spec}
    if not isinstance(spec, dict):
        raise CeilingError("speculative must be a dict (algorithm, num_steps, eagle_topk, num_draft_tokens) or an algorithm name, "
                           "got %r" % (spec,))
    algorithm = str(spec.get("algorithm") or "").strip().upper()
    if algorithm in ("", "NONE", "FALSE", "NULL"):
        return None
    if algorithm == "NEXTN":
        algorithm = "EAGLE"
    steps = int(_num(spec.get("num_steps")) or 0)
    topk = int(_num(spec.get("eagle_topk")) or 1)
    draft = int(_num(spec.get("num_draft_tokens")) or 0)
    notes = []
    if steps <= 0 and algorithm != "NGRAM":
        steps, topk, draft = 3, 1, 4
        notes.append("speculative steps not given: SGLang's automatic choice, 3 steps, top-k 1, 4 draft tokens")
    if topk < 1 or steps < 0:
        raise CeilingError("speculative eagle_topk must be >= 1 and num_steps >= 0 (got %r, %r)" % (topk, steps))
    if algorithm != "NGRAM" and (topk == 1 or draft <= 0):
        draft = steps + 1
    if draft < 2:
        raise CeilingError("speculative num_draft_tokens must be >= 2 (got %r)" % draft)
    max_accept = float(draft if algorithm == "NGRAM" else steps + 1)
    out = {"algorithm": algorithm, "num_steps": steps, "eagle_topk": topk, "num_draft_tokens": draft, "max_accept_length": max_accept,
           "draft_layers": int(_num(spec.get("draft_layers")) or 1), "draft_vocab": _num(spec.get("draft_vocab")),
           "draft_params_b": _num(spec.get("draft_params_b")), "notes": notes}
    if algorithm == "STANDALONE" and not out["draft_params_b"]:
        raise CeilingError("speculative algorithm STANDALONE needs draft_params_b (the draft model's parameters in billions)")
    return out


def server_args_inputs(args: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The model inputs that an SGLang server's (resolved) arguments decide: TP, the nodes it spans, CUDA graphs,
    custom all-reduce, torch.compile and speculative decoding.

    Why one function: the probe reads these from ``/server_info`` and the SGLang stand-in from its own parsed
    arguments, so the expectation the verdict uses and the pace the rehearsal keeps follow the same flags.
    """
    if not isinstance(args, dict):
        return {}
    out: Dict[str, Any] = {}
    if _num(args.get("tp_size")):
        out["tp"] = int(_num(args.get("tp_size")) or 1)
    if (_num(args.get("nnodes")) or 1) > 1:
        out["nnodes"] = int(_num(args.get("nnodes")) or 1)
    if _truthy(args.get("disable_cuda_graph")):
        out["cuda_graphs"] = False
    if _truthy(args.get("disable_custom_all_reduce")):
        out["custom_allreduce"] = False
    if _truthy(args.get("enable_torch_compile")):
        out["torch_compile"] = True
    if args.get("speculative_algorithm"):
        out["speculative"] = {"algorithm": args.get("speculative_algorithm"), "num_steps": args.get("speculative_num_steps"),
                              "eagle_topk": args.get("speculative_eagle_topk"),
                              "num_draft_tokens": args.get("speculative_num_draft_tokens")}
    return out


def distinct_experts(experts: int, top_k: int, tokens: int) -> float:
    """Expected number of distinct routed experts ``tokens`` tokens read in one MoE layer (uniform routing).

    Why: a verify pass over k draft tokens is one forward, but each token picks its own experts; with 256
    experts and top-8, four tokens read about 30 experts, not 8, so MoE speculation pays more bytes per step.
    """
    if experts <= 0 or top_k <= 0:
        return float(top_k)
    return experts * (1.0 - (1.0 - float(top_k) / experts) ** max(int(tokens), 1))


def band_class_of(spec: Any, graphs: bool, moe: bool, tp: int) -> str:
    """Which band of specs.EXPECTATION_BANDS an expectation carries: speculative, eager, moe, dense_tp or dense."""
    if spec:
        return "speculative"
    if not graphs:
        return "eager"
    if moe:
        return "moe"
    return "dense_tp" if int(tp or 1) > 2 else "dense"


def _bound_text(bound: str) -> str:
    return "the all-reduce latency bound" if bound == "allreduce_latency" else "the memory-bandwidth bound"


def decode_ceiling(model: Any = None, gpu: Optional[str] = None, tp: int = 1, link: Optional[str] = None,
                   pcie_gen: Optional[int] = None, pcie_width: Optional[int] = None, accept_length: Any = None,
                   bandwidth_gbs: Any = None, gpu_facts: Optional[Dict[str, Any]] = None, p2p: Optional[bool] = None,
                   params_b: Any = None, active_params_b: Any = None, dtype: Optional[str] = None,
                   bytes_per_param: Any = None, num_layers: Any = None, hidden_size: Any = None,
                   allreduce_latency_us: Any = None, achievable_fraction: Any = 1.0, cuda_graphs: Any = True,
                   custom_allreduce: Any = None, torch_compile: Any = False, speculative: Any = None,
                   sustained_fraction: Any = None, server_args: Optional[Dict[str, Any]] = None, nnodes: Any = None,
                   internode_bus_gbs: Any = None, internode_latency_us: Any = None) -> Dict[str, Any]:
    """The batch-1 decode bound and the expected figure with its band (the module docstring has the formulas).

    ``model`` is a config.json dict (or a number: total parameters in billions). Explicit arguments win over
    what the config, ``gpu_facts`` or ``server_args`` say. Raises CeilingError with the missing input named.
    """
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals,too-many-branches,too-many-statements
    from_server = server_args_inputs(server_args)
    if tp in (None, "", 1) and from_server.get("tp"):
        tp = from_server["tp"]
    if cuda_graphs is True and "cuda_graphs" in from_server:
        cuda_graphs = from_server["cuda_graphs"]
    if custom_allreduce is None and "custom_allreduce" in from_server:
        custom_allreduce = from_server["custom_allreduce"]
    if not torch_compile and from_server.get("torch_compile"):
        torch_compile = True
    if not speculative and from_server.get("speculative"):
        speculative = from_server["speculative"]
    if nnodes in (None, "") and from_server.get("nnodes"):
        nnodes = from_server["nnodes"]
    notes: List[str] = []
    tp = int(tp or 1)
    if tp < 1:
        raise CeilingError("tp must be >= 1")
    nodes = int(_num(nnodes) or 1)
    if nodes < 1 or tp % nodes:
        raise CeilingError("nnodes %s does not divide tp %d: each node holds tp / nnodes of the TP group (pipeline "
                           "stages across nodes are not modelled)" % (nnodes, tp))
    # A node's facts describe its own GPUs: a group over several nodes has tp / nnodes of them on each.
    facts = facts_inputs(gpu_facts, tp // nodes) if isinstance(gpu_facts, dict) else {}
    gpu = gpu or facts.get("gpu")
    link = link or facts.get("link")
    pcie_gen = pcie_gen or facts.get("pcie_gen")
    pcie_width = pcie_width or facts.get("pcie_width")
    if p2p is None:
        p2p = facts.get("p2p")
    graphs = _truthy(cuda_graphs)
    spec = speculative_settings(speculative)
    if spec:
        notes.extend(spec.pop("notes"))

    # --- weights ---
    config: Dict[str, Any] = {}
    if isinstance(model, dict):
        if model.get("params_b") is not None and not model.get("hidden_size") and not model.get("text_config"):
            params_b = params_b if params_b is not None else model.get("params_b")
            active_params_b = active_params_b if active_params_b is not None else model.get("active_params_b")
        else:
            config = model
    elif model is not None and model != "":
        params_b = params_b if params_b is not None else model
    cfg = text_config(config) if config else {}
    head_bytes_pp = None
    quant_label = None
    if bytes_per_param is not None:
        layer_bpp = _num(bytes_per_param)
        quant_label = "%g bytes/param (given)" % layer_bpp
    elif dtype:
        layer_bpp = dtype_bytes(dtype)
        quant_label = str(dtype)
    else:
        quant = quantisation_bytes(cfg) if cfg else None
        base = _first(cfg, "torch_dtype", "dtype") if cfg else None
        head_bytes_pp = dtype_bytes(base) if base else 2.0
        if quant:
            layer_bpp, quant_label = quant
        else:
            layer_bpp = head_bytes_pp
            quant_label = str(base or "bfloat16 (assumed)")
            if not base:
                notes.append("no dtype given or in the config: assumed bf16 (2 bytes per parameter)")
    if head_bytes_pp is None:
        head_bytes_pp = layer_bpp
    if not layer_bpp or layer_bpp <= 0:
        raise CeilingError("bytes_per_param must be positive")

    if params_b is not None or active_params_b is not None:
        total = _num(params_b)
        active = _num(active_params_b) if active_params_b is not None else total
        if active is None or active <= 0:
            raise CeilingError("params_b (or active_params_b) must be a positive number of billions")
        layers_given = int(_num(num_layers) or _num(_first(cfg, "num_hidden_layers")) or 0)
        moe = active_params_b is not None
        counts = {"total_params": int((total or active) * 1e9), "active_params": int(active * 1e9), "moe": moe,
                  "read_layer_params": int(active * 1e9), "read_head_params": 0, "layers": layers_given,
                  "hidden_size": int(_num(hidden_size) or _num(_first(cfg, "hidden_size")) or 0),
                  "moe_layers": layers_given if moe else 0, "expert_params": 0, "routed_active_params": 0, "experts": 0,
                  "experts_per_token": 0, "vocab_size": 0}
        weight_bytes = active * 1e9 * layer_bpp
        notes.append("explicit parameter count: every active parameter is taken as read once per step")
        if moe:
            notes.append("MoE given by parameter count: every layer taken as an MoE layer, and the extra experts a "
                         "verify pass reads are not modelled")
    elif cfg:
        counts = count_params(config)
        if num_layers:
            counts["layers"] = int(_num(num_layers))
        if hidden_size:
            counts["hidden_size"] = int(_num(hidden_size))
        weight_bytes = counts["read_layer_params"] * layer_bpp + counts["read_head_params"] * head_bytes_pp
    else:
        raise CeilingError("no model: pass a config.json dict, or params_b (and active_params_b for MoE)")
    layers = int(counts.get("layers") or 0)
    hidden = int(counts.get("hidden_size") or 0)

    # --- GPU bandwidth ---
    gpu_spec = find_gpu(gpu) if gpu else None
    if bandwidth_gbs is not None:
        bandwidth = _num(bandwidth_gbs)
        bw_source = "given"
    elif gpu_spec is not None:
        bandwidth = gpu_spec.bandwidth_gbs
        bw_source = gpu_spec.source
    elif gpu:
        raise CeilingError("GPU %r is not in the bandwidth table: pass bandwidth_gbs" % gpu)
    else:
        raise CeilingError("no GPU: pass gpu (a name such as 'NVIDIA RTX A6000'), gpu_facts or bandwidth_gbs")
    if not bandwidth or bandwidth <= 0:
        raise CeilingError("bandwidth_gbs must be positive")
    fraction = _num(achievable_fraction) or 1.0
    if not 0 < fraction <= 1.0:
        raise CeilingError("achievable_fraction must be in (0, 1]")
    if sustained_fraction is not None:
        sustained, sustained_source = _num(sustained_fraction), "given"
    else:
        sustained, sustained_source = table_sustained_fraction(gpu_spec.key if gpu_spec else None)
    if not sustained or not 0 < sustained <= 1.0:
        raise CeilingError("sustained_fraction must be in (0, 1]")
    per_gpu_bw = tp * bandwidth * 1e9
    weight_s = weight_bytes / (per_gpu_bw * fraction)

    # --- interconnect ---
    kind = impl = None
    ar_latency = ar_count = ar_bytes = bus = 0.0
    ar_expected = 0.0
    ar_source = None
    if tp > 1:
        kind = link_kind(link)
        if kind is None:
            if link:
                raise CeilingError("unknown link %r: NV#, PIX, PXB, PHB, NODE, SYS, nvlink, pcie or network" % link)
            kind = "pcie_host_bridge"
            notes.append("link unknown: assumed PCIe through the host bridge (PHB)")
        if p2p is None:
            p2p = gpu_spec.p2p if gpu_spec is not None else True
        impl = allreduce_impl(kind, tp, bool(p2p))
        if custom_allreduce is not None and not _truthy(custom_allreduce):
            impl = "nccl"
        if allreduce_latency_us is not None:
            ar_latency, ar_source = _num(allreduce_latency_us), "given"
            ar_expected = ar_latency if graphs else ar_latency * EAGER_ALLREDUCE_FACTOR
        else:
            ar_latency, ar_source = table_allreduce_latency_us(kind, impl)
            ar_expected = table_allreduce_latency_us(kind, impl, graphs)[0]
        if not layers or not hidden:
            raise CeilingError("TP %d needs num_layers and hidden_size for the all-reduce term (or a config.json)" % tp)
        ar_count = 2 * layers + EXTRA_COLLECTIVES
        ar_bytes = hidden * 2.0
        bus = allreduce_bus_gbs(kind, pcie_gen, pcie_width)
    ar_wire_s = (ar_bytes * 2.0 * (tp - 1) / tp / (bus * 1e9)) if tp > 1 else 0.0
    internode: Dict[str, Any] = {}
    if nodes > 1:
        ar_latency, ar_expected, ar_wire_s, internode = _across_nodes(
            nodes, tp // nodes, kind, ar_bytes, pcie_gen, pcie_width, graphs, internode_bus_gbs, internode_latency_us, notes)
        impl, bus = "nccl", internode["internode_bus_gbs"]
        if allreduce_latency_us is not None:  # a measured figure for the whole group wins
            ar_latency, ar_source = _num(allreduce_latency_us), "given"
            ar_expected = ar_latency if graphs else ar_latency * EAGER_ALLREDUCE_FACTOR
        else:
            ar_source = internode["internode_source"]
    allreduce_s = ar_count * (ar_latency * 1e-6 + ar_wire_s) if tp > 1 else 0.0

    accept_given = _num(accept_length)
    if accept_given is not None and accept_given < 1.0:
        raise CeilingError("accept_length counts the bonus token, so it is >= 1.0 (got %g)" % accept_given)
    if spec and accept_given and accept_given > spec["max_accept_length"] + 1e-9:
        raise CeilingError("accept_length %g is more than %d speculative steps can give (%g)"
                           % (accept_given, spec["num_steps"], spec["max_accept_length"]))
    if spec:
        accept_bound = accept_given or spec["max_accept_length"]
        if accept_given is None:
            notes.append("speculative decoding without a measured accept length: the bound is taken at the most the drafts "
                         "can give (%g tokens per step); the expectation needs the accept length" % spec["max_accept_length"])
    else:
        accept_bound = accept_given or 1.0
    step_s = weight_s + allreduce_s
    bound = "memory_bandwidth" if weight_s >= allreduce_s else "allreduce_latency"
    expected = _expectation(counts, weight_bytes, layer_bpp, head_bytes_pp, per_gpu_bw * sustained, tp, graphs,
                            _truthy(torch_compile), ar_count, ar_expected * 1e-6 + ar_wire_s, spec, accept_given)
    expected["inputs"].update({"sustained_fraction": sustained, "sustained_source": sustained_source,
                               "allreduce_latency_us": ar_expected if tp > 1 else None})
    return {
        "tokens_per_s": round(accept_bound / step_s, 2),
        "tokens_per_s_no_spec": round(1.0 / step_s, 2),
        "accept_length": accept_bound,
        "accept_length_measured": accept_given is not None,
        "per_step_ms": {"weights": round(weight_s * 1e3, 4), "allreduce": round(allreduce_s * 1e3, 4), "total": round(step_s * 1e3, 4)},
        "per_token_ms": {"weights": round(weight_s * 1e3 / accept_bound, 4), "allreduce": round(allreduce_s * 1e3 / accept_bound, 4),
                         "total": round(step_s * 1e3 / accept_bound, 4)},
        "bound": bound,
        "weights_share": round(weight_s / step_s, 4),
        "expected": expected,
        "inputs": {
            "gpu": gpu, "gpu_matched": gpu_spec.name if gpu_spec else None, "bandwidth_gbs": bandwidth, "bandwidth_source": bw_source,
            "achievable_fraction": fraction, "tp": tp, "link": link, "link_kind": kind, "pcie_gen": pcie_gen, "pcie_width": pcie_width,
            "p2p": p2p if tp > 1 else None, "allreduce_impl": impl, "allreduce_latency_us": ar_latency if tp > 1 else None,
            "allreduce_source": ar_source, "allreduces_per_step": int(ar_count), "allreduce_bus_gbs": bus if tp > 1 else None,
            "weight_format": quant_label, "bytes_per_param": layer_bpp, "weight_bytes_per_step": int(weight_bytes),
            "weight_bytes_per_gpu": int(weight_bytes / tp), "total_params": counts.get("total_params"),
            "active_params": counts.get("active_params"), "moe": counts.get("moe"), "num_layers": layers or None,
            "hidden_size": hidden or None, "cuda_graphs": graphs, "torch_compile": _truthy(torch_compile),
            "speculative": spec, "nnodes": nodes, **internode,
        },
        "notes": notes,
    }


def _across_nodes(nodes: int, local: int, kind: Optional[str], ar_bytes: float, pcie_gen: Any, pcie_width: Any, graphs: bool,
                  bus_given: Any, latency_given: Any, notes: List[str]) -> Tuple[float, float, float, Dict[str, Any]]:
    """One all-reduce of a TP group spread over ``nodes`` nodes of ``local`` GPUs each: the node's own link, then the
    link between the nodes (NCCL: SGLang's custom all-reduce works inside one node only).

    Returns (bound latency us, expected latency us, wire seconds, inputs). The intra-node part is NCCL on the
    node's link (none with one GPU per node); the inter-node part is ``internode_latency_us`` plus the
    ring's bytes over ``internode_bus_gbs``, from the inputs or INTERNODE_* in specs.py with a note.
    """
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals
    if bus_given is not None:
        inter_bus, bus_source = _num(bus_given), "given"
    else:
        inter_bus, bus_source = INTERNODE_BUS_GBS, "assumed"
    if latency_given is not None:
        inter_lat, lat_source = _num(latency_given), "given"
    else:
        inter_lat, lat_source = INTERNODE_LATENCY_US, "assumed"
    if not inter_bus or inter_bus <= 0 or inter_lat is None or inter_lat < 0:
        raise CeilingError("internode_bus_gbs must be positive and internode_latency_us at least 0")
    if "assumed" in (bus_source, lat_source):
        notes.append("link between nodes not given: assumed NCCL over sockets on 100 GbE (%g GB/s, %g us per all-reduce); "
                     "set internode_bus_gbs and internode_latency_us" % (inter_bus, inter_lat))
    intra_lat = intra_expected = intra_wire = 0.0
    if local > 1 and kind is not None and kind != "network":
        intra_lat = table_allreduce_latency_us(kind, "nccl")[0]
        intra_expected = table_allreduce_latency_us(kind, "nccl", graphs)[0]
        intra_wire = ar_bytes * 2.0 * (local - 1) / local / (allreduce_bus_gbs(kind, pcie_gen, pcie_width) * 1e9)
    inter_wire = ar_bytes * 2.0 * (nodes - 1) / nodes / (inter_bus * 1e9)
    inputs = {"gpus_per_node": local, "internode_bus_gbs": inter_bus, "internode_latency_us": inter_lat,
              "internode_source": "inter-node bus %s, latency %s (docs/ceiling.md#across-nodes)" % (bus_source, lat_source)}
    return intra_lat + inter_lat, intra_expected + inter_lat, intra_wire + inter_wire, inputs


def _draft_bytes(spec: Dict[str, Any], counts: Dict[str, Any], layer_bpp: float, head_bpp: float) -> Tuple[float, bool, Optional[str]]:
    """Bytes one draft pass reads, whether its layers are MoE, and a note when the shape had to be assumed.

    MTP / NEXTN / EAGLE heads are ``draft_layers`` decoder layers of the target's shape plus an LM head (the
    target's vocabulary unless ``draft_vocab`` says otherwise: EAGLE-3 heads often have a smaller one); a
    STANDALONE draft is its own model (``draft_params_b``); NGRAM drafts from a host-side lookup and reads nothing.
    """
    algorithm = spec["algorithm"]
    if algorithm == "NGRAM":
        return 0.0, False, None
    if algorithm == "STANDALONE":
        return float(spec["draft_params_b"]) * 1e9 * layer_bpp, False, None
    layers = int(counts.get("layers") or 0)
    mean_layer = float(counts.get("read_layer_params") or 0) / layers if layers else 0.0
    note = None
    hidden = int(counts.get("hidden_size") or 0)
    vocab = spec.get("draft_vocab") or counts.get("vocab_size")
    if vocab and hidden:
        head = float(vocab) * hidden * head_bpp
    else:
        head = 0.0
        note = "draft LM head not counted (no vocabulary size: give a config.json)"
    if not mean_layer:
        note = "draft layer size unknown (no layer count): only the LM head is counted"
    return spec["draft_layers"] * mean_layer * layer_bpp + head, bool(counts.get("moe")), note


def _expectation(counts: Dict[str, Any], weight_bytes: float, layer_bpp: float, head_bpp: float, sustained_bw: float, tp: int,
                 graphs: bool, compiled: bool, ar_count: float, ar_each_s: float, spec: Optional[Dict[str, Any]],
                 accept: Optional[float]) -> Dict[str, Any]:
    """The expected batch-1 decode figure: what a step really costs, term by term (specs.py has each constant)."""
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals
    layers = int(counts.get("layers") or 0)
    moe_layers = int(counts.get("moe_layers") or 0)
    mode = "graphs" if graphs else "eager"
    compile_factor = TORCH_COMPILE_LAYER_FACTOR if compiled else 1.0
    layer_us = LAYER_OVERHEAD_US[mode] * compile_factor
    moe_us = MOE_LAYER_US[mode] * compile_factor
    weights_s = weight_bytes / sustained_bw
    overhead_s = (STEP_OVERHEAD_US + layers * layer_us) * 1e-6
    moe_s = moe_layers * moe_us * 1e-6
    allreduce_s = ar_count * ar_each_s
    target_s = weights_s + overhead_s + moe_s + allreduce_s
    routed_s = float(counts.get("routed_active_params") or 0) * layer_bpp / sustained_bw
    notes: List[str] = []
    if not layers:
        notes.append("no layer count: the per-layer overhead is left out, so the expectation is optimistic")
    # The draft pass is priced for the configured drafts, or for SGLang's default (one target-shaped MTP/EAGLE
    # layer and the LM head), so a later accept length can be priced without the model's inputs.
    draft_spec = spec or speculative_settings({"algorithm": "EAGLE"})
    draft_spec.pop("notes", None)
    draft_bytes, draft_moe, note = _draft_bytes(draft_spec, counts, layer_bpp, head_bpp)
    if note and spec:
        notes.append(note)
    draft_s = 0.0
    if draft_spec["algorithm"] != "NGRAM":
        draft_layers = draft_spec["draft_layers"]
        draft_ar = (2 * draft_layers + 1) * ar_each_s if tp > 1 else 0.0
        draft_s = (draft_bytes / sustained_bw + draft_ar
                   + (DRAFT_PASS_US + draft_layers * (layer_us + (moe_us if draft_moe else 0.0))) * 1e-6)
    components = {"target_ms": round(target_s * 1e3, 4), "routed_expert_ms": round(routed_s * 1e3, 4),
                  "experts": int(counts.get("experts") or 0), "experts_per_token": int(counts.get("experts_per_token") or 0),
                  "draft_pass_ms": round(draft_s * 1e3, 4)}
    result = speculative_expectation(components, spec, accept)
    band_class = band_class_of(spec, graphs, bool(counts.get("moe")), tp)
    low, high = EXPECTATION_BANDS[band_class]
    tps = result["tokens_per_s"]
    result.update({
        "band": [low, high], "band_class": band_class,
        "low": round(tps * low, 2) if tps else None, "high": round(tps * high, 2) if tps else None,
        "per_step_ms": {"weights": round(weights_s * 1e3, 4), "overhead": round(overhead_s * 1e3, 4), "moe": round(moe_s * 1e3, 4),
                        "allreduce": round(allreduce_s * 1e3, 4), "total": round(target_s * 1e3, 4)},
        "components": components,
        "inputs": {"cuda_graphs": graphs, "torch_compile": compiled, "step_overhead_us": STEP_OVERHEAD_US, "layer_overhead_us": layer_us,
                   "moe_layer_us": moe_us if moe_layers else None, "moe_layers": moe_layers, "sources": OVERHEAD_SOURCES},
        "notes": notes,
    })
    return result


def speculative_expectation(components: Dict[str, Any], spec: Optional[Dict[str, Any]], accept: Optional[float]) -> Dict[str, Any]:
    """Expected tokens/s from a target forward's cost, and with speculation from one verify cycle's.

    A cycle is one verify pass (the target over ``num_draft_tokens`` tokens: the same weights, but for MoE the
    distinct experts of all those tokens) plus ``num_steps`` draft passes and the draft extend; it yields
    ``accept_length`` tokens. So speculation pays only above the break-even accept length, cycle / target step.
    Without an accept length there is no expected figure for a speculative server, only that break-even.
    """
    target_ms = float(components["target_ms"])
    out: Dict[str, Any] = {"tokens_per_s_no_spec": round(1e3 / target_ms, 2), "accept_length": None, "speculative": None}
    if not spec:
        out["tokens_per_s"] = out["tokens_per_s_no_spec"]
        return out
    k = int(spec["num_draft_tokens"])
    experts, top_k = int(components.get("experts") or 0), int(components.get("experts_per_token") or 0)
    routed = float(components.get("routed_expert_ms") or 0.0)
    extra = routed * (distinct_experts(experts, top_k, k) / top_k - 1.0) if experts and top_k else 0.0
    verify_ms = target_ms + extra
    passes = 0 if spec["algorithm"] == "NGRAM" else spec["num_steps"] + DRAFT_EXTEND_PASSES
    draft_ms = float(components.get("draft_pass_ms") or 0.0)
    cycle_ms = verify_ms + passes * draft_ms
    out["speculative"] = {"algorithm": spec["algorithm"], "num_steps": spec["num_steps"], "eagle_topk": spec["eagle_topk"],
                          "num_draft_tokens": k, "verify_ms": round(verify_ms, 4), "draft_pass_ms": round(draft_ms, 4),
                          "draft_passes": passes, "cycle_ms": round(cycle_ms, 4),
                          "break_even_accept_length": round(cycle_ms / target_ms, 3),
                          "max_accept_length": spec["max_accept_length"]}
    out["accept_length"] = accept
    out["tokens_per_s"] = round(accept * 1e3 / cycle_ms, 2) if accept else None
    return out


def with_accept_length(ceiling: Dict[str, Any], accept_length: Any, speculative: Any = None) -> Dict[str, Any]:
    """A computed ceiling at a measured accept length (None: not measured) and, when given, the server's
    speculative settings.

    Why: the filter runs before the probe, usually without an accept length; the probe then knows the run's
    accept length and the server's speculative settings, and gives the bound and the expectation for them
    without the model's inputs. The target forward's breakdown does not change.
    """
    measured = _num(accept_length)
    if measured is not None and measured < 1.0:
        raise CeilingError("accept_length counts the bonus token, so it is >= 1.0 (got %g)" % measured)
    spec = speculative_settings(speculative) if speculative else (ceiling.get("inputs") or {}).get("speculative")
    notes = list(((ceiling.get("expected") or {}).get("notes")) or [])
    if not spec and measured and measured > 1.0:
        spec = speculative_settings({"algorithm": "EAGLE"})
        notes.append("accept length without the server's speculative settings: SGLang's automatic 3 steps assumed")
    if spec:
        spec = dict(spec)
        spec.pop("notes", None)
        if measured and measured > spec["max_accept_length"] + 1e-9:
            raise CeilingError("accept_length %g is more than %d speculative steps can give (%g)"
                               % (measured, spec["num_steps"], spec["max_accept_length"]))
    # Without a measured accept length a speculative server is bounded at the most its drafts can give.
    accept = measured or (spec["max_accept_length"] if spec else 1.0)
    step = dict(ceiling.get("per_step_ms") or {})
    total_ms = float(step.get("total") or 0.0)
    if total_ms <= 0:
        no_spec = _num(ceiling.get("tokens_per_s_no_spec")) or (_num(ceiling.get("tokens_per_s")) or 0.0) / (_num(ceiling.get("accept_length")) or 1.0)
        if not no_spec:
            raise CeilingError("the ceiling has neither per_step_ms.total nor tokens_per_s_no_spec")
        total_ms = 1e3 / no_spec
        step = {"total": round(total_ms, 4)}
    out = dict(ceiling)
    out["accept_length"] = accept
    out["accept_length_measured"] = measured is not None
    out["tokens_per_s"] = round(accept * 1e3 / total_ms, 2)
    out["tokens_per_s_no_spec"] = round(1e3 / total_ms, 2)
    out["per_token_ms"] = {k: round(float(v) / accept, 4) for k, v in step.items()}
    if spec:
        out["inputs"] = dict(out.get("inputs") or {}, speculative=spec)
    expected = ceiling.get("expected")
    if not isinstance(expected, dict) or not isinstance(expected.get("components"), dict):
        return out
    new = dict(expected)
    new.update(speculative_expectation(expected["components"], spec, measured if spec else None))
    band_class = "speculative" if spec else expected.get("band_class", "dense")
    low, high = EXPECTATION_BANDS[band_class]
    tps = new.get("tokens_per_s")
    new.update({"band": [low, high], "band_class": band_class, "notes": notes,
                "low": round(tps * low, 2) if tps else None, "high": round(tps * high, 2) if tps else None})
    out["expected"] = new
    return out


def efficiency_verdict(measured_tps: Optional[float], ceiling: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Efficiency = measured / expected, and a plain sentence on what would make decode faster.

    Why the expectation and not the bound: no server reaches the bound (sustained bandwidth is below the
    datasheet, and every step has fixed costs), and with speculation the bound x accept length over-promises by
    the drafts' own cost; "well below what the hardware allows" must mean below what such a box really reaches.
    The bound stays in the sentence: a figure above it means the inputs are wrong.
    """
    if not measured_tps or not ceiling or not ceiling.get("tokens_per_s"):
        return {"efficiency": None, "efficiency_of_bound": None, "verdict": None}
    bound_tps = float(ceiling["tokens_per_s"])
    of_bound = measured_tps / bound_tps
    inputs = ceiling.get("inputs") or {}
    expected = ceiling.get("expected") if isinstance(ceiling.get("expected"), dict) else {}
    pcie = str(inputs.get("link_kind") or "").startswith("pcie")
    bound_text = _bound_text(str(ceiling.get("bound")))
    if ceiling.get("bound") == "allreduce_latency":
        remedy = "faster decode needs fewer GPUs per replica (lower TP), %s" % ("NVLink" if pcie else "a lower-latency all-reduce")
    else:
        extras = ["quantisation", "better speculative acceptance"]
        extras.append("NVLink" if pcie and (inputs.get("tp") or 1) > 1 else "a GPU with more memory bandwidth")
        remedy = "faster decode needs " + ", ".join(extras[:-1]) + " or " + extras[-1]
    if of_bound > ABOVE_CEILING:
        verdict = ("%.0f%% of %s (%.1f tok/s), above it: check the ceiling's inputs (parameter count, dtype or "
                   "quantisation, GPU bandwidth, accept length)" % (of_bound * 100.0, bound_text, bound_tps))
        return {"efficiency": round(measured_tps / expected["tokens_per_s"], 4) if expected.get("tokens_per_s") else None,
                "efficiency_of_bound": round(of_bound, 4), "verdict": verdict}
    exp_tps = expected.get("tokens_per_s")
    spec = expected.get("speculative")
    if not exp_tps:
        text = "%.0f%% of %s (%.1f tok/s)" % (of_bound * 100.0, bound_text, bound_tps)
        if spec:
            text += ("; speculative decoding without a measured accept length: no expected figure (speculation pays above "
                     "an accept length of %.2f on this box)" % spec["break_even_accept_length"])
        return {"efficiency": None, "efficiency_of_bound": round(of_bound, 4), "verdict": text}
    eff = measured_tps / float(exp_tps)
    low, high = (expected.get("band") or [NEAR_CEILING, 1.0])[:2]
    pct = eff * 100.0
    where = "%.0f%% of the expected %.1f tok/s (band %.0f-%.0f%%; %s %.1f tok/s)" % (
        pct, exp_tps, low * 100, high * 100, bound_text.replace("the ", ""), bound_tps)
    if eff > high:
        verdict = ("%s: faster than this model of the box expects, still under the bound; more flags will not help "
                   "much; %s" % (where, remedy))
    elif eff >= low:
        verdict = "%s: as expected for this hardware; more flags will not help much; %s" % (where, remedy)
    else:
        verdict = ("%s: below what this hardware normally reaches; check the launch flags (CUDA graphs on, custom "
                   "all-reduce, attention backend), NCCL P2P settings, power and clocks, and that the probe ran alone" % where)
    if spec and expected.get("accept_length"):
        gain = float(exp_tps) / float(expected["tokens_per_s_no_spec"])
        verdict += ("; speculation at accept length %.2f buys %.2fx over none (break-even %.2f)"
                    % (float(expected["accept_length"]), gain, spec["break_even_accept_length"]))
    return {"efficiency": round(eff, 4), "efficiency_of_bound": round(of_bound, 4), "verdict": verdict}
