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
    allreduce_bus_gbs,
    allreduce_impl,
    allreduce_latency_us as table_allreduce_latency_us,
    find_gpu,
    link_kind,
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
AT_CEILING = 0.90
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
    quantisers; an untied input embedding is one row per token and is not read whole).
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
    total_layer = active_layer = 0
    for i in range(layers):
        attn = linear_attn if types[i] == "linear" and linear_attn else full_attn
        if moe_flags[i]:
            per_expert = 3 * hidden * moe["expert_inter"]
            shared = 3 * hidden * moe["shared_inter"]
            router = hidden * moe["experts"]
            total_layer += attn + moe["experts"] * per_expert + shared + router
            active_layer += attn + moe["top_k"] * per_expert + shared + router
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


def decode_ceiling(model: Any = None, gpu: Optional[str] = None, tp: int = 1, link: Optional[str] = None,
                   pcie_gen: Optional[int] = None, pcie_width: Optional[int] = None, accept_length: Any = 1.0,
                   bandwidth_gbs: Any = None, gpu_facts: Optional[Dict[str, Any]] = None, p2p: Optional[bool] = None,
                   params_b: Any = None, active_params_b: Any = None, dtype: Optional[str] = None,
                   bytes_per_param: Any = None, num_layers: Any = None, hidden_size: Any = None,
                   allreduce_latency_us: Any = None, achievable_fraction: Any = 1.0) -> Dict[str, Any]:
    """The batch-1 decode ceiling (see the module docstring for the formula) with its breakdown.

    ``model`` is a config.json dict (or a number: total parameters in billions). Explicit arguments win over
    what the config or ``gpu_facts`` say. Raises CeilingError with the missing input named.
    """
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals,too-many-branches,too-many-statements
    notes: List[str] = []
    tp = int(tp or 1)
    if tp < 1:
        raise CeilingError("tp must be >= 1")
    facts = facts_inputs(gpu_facts, tp) if isinstance(gpu_facts, dict) else {}
    gpu = gpu or facts.get("gpu")
    link = link or facts.get("link")
    pcie_gen = pcie_gen or facts.get("pcie_gen")
    pcie_width = pcie_width or facts.get("pcie_width")
    if p2p is None:
        p2p = facts.get("p2p")

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

    if params_b is not None or active_params_b is not None:
        total = _num(params_b)
        active = _num(active_params_b) if active_params_b is not None else total
        if active is None or active <= 0:
            raise CeilingError("params_b (or active_params_b) must be a positive number of billions")
        counts = {"total_params": int((total or active) * 1e9), "active_params": int(active * 1e9), "moe": active_params_b is not None,
                  "read_layer_params": int(active * 1e9), "read_head_params": 0,
                  "layers": int(_num(num_layers) or _num(_first(cfg, "num_hidden_layers")) or 0),
                  "hidden_size": int(_num(hidden_size) or _num(_first(cfg, "hidden_size")) or 0)}
        weight_bytes = active * 1e9 * layer_bpp
        notes.append("explicit parameter count: every active parameter is taken as read once per step")
    elif cfg:
        counts = count_params(config)
        if num_layers:
            counts["layers"] = int(_num(num_layers))
        if hidden_size:
            counts["hidden_size"] = int(_num(hidden_size))
        weight_bytes = counts["read_layer_params"] * layer_bpp + counts["read_head_params"] * head_bytes_pp
    else:
        raise CeilingError("no model: pass a config.json dict, or params_b (and active_params_b for MoE)")

    # --- GPU bandwidth ---
    spec = find_gpu(gpu) if gpu else None
    if bandwidth_gbs is not None:
        bandwidth = _num(bandwidth_gbs)
        bw_source = "given"
    elif spec is not None:
        bandwidth = spec.bandwidth_gbs
        bw_source = spec.source
    elif gpu:
        raise CeilingError("GPU %r is not in the bandwidth table: pass bandwidth_gbs" % gpu)
    else:
        raise CeilingError("no GPU: pass gpu (a name such as 'NVIDIA RTX A6000'), gpu_facts or bandwidth_gbs")
    if not bandwidth or bandwidth <= 0:
        raise CeilingError("bandwidth_gbs must be positive")
    fraction = _num(achievable_fraction) or 1.0
    if not 0 < fraction <= 1.0:
        raise CeilingError("achievable_fraction must be in (0, 1]")
    weight_s = weight_bytes / (tp * bandwidth * 1e9 * fraction)

    # --- interconnect ---
    kind = impl = None
    ar_latency = ar_count = ar_bytes = bus = 0.0
    ar_source = None
    if tp > 1:
        kind = link_kind(link)
        if kind is None:
            if link:
                raise CeilingError("unknown link %r: NV#, PIX, PXB, PHB, NODE, SYS, nvlink or pcie" % link)
            kind = "pcie_host_bridge"
            notes.append("link unknown: assumed PCIe through the host bridge (PHB)")
        if p2p is None:
            p2p = spec.p2p if spec is not None else True
        impl = allreduce_impl(kind, tp, bool(p2p))
        if allreduce_latency_us is not None:
            ar_latency, ar_source = _num(allreduce_latency_us), "given"
        else:
            ar_latency, ar_source = table_allreduce_latency_us(kind, impl)
        layers = counts.get("layers") or 0
        hidden = counts.get("hidden_size") or 0
        if not layers or not hidden:
            raise CeilingError("TP %d needs num_layers and hidden_size for the all-reduce term (or a config.json)" % tp)
        ar_count = 2 * layers + EXTRA_COLLECTIVES
        ar_bytes = hidden * 2.0
        bus = allreduce_bus_gbs(kind, pcie_gen, pcie_width)
    ar_each_s = (ar_latency * 1e-6 + ar_bytes * 2.0 * (tp - 1) / tp / (bus * 1e9)) if tp > 1 else 0.0
    allreduce_s = ar_count * ar_each_s

    accept = _num(accept_length) or 1.0
    if accept < 1.0:
        raise CeilingError("accept_length counts the bonus token, so it is >= 1.0 (got %g)" % accept)
    step_s = weight_s + allreduce_s
    bound = "memory_bandwidth" if weight_s >= allreduce_s else "allreduce_latency"
    return {
        "tokens_per_s": round(accept / step_s, 2),
        "tokens_per_s_no_spec": round(1.0 / step_s, 2),
        "accept_length": accept,
        "per_step_ms": {"weights": round(weight_s * 1e3, 4), "allreduce": round(allreduce_s * 1e3, 4), "total": round(step_s * 1e3, 4)},
        "per_token_ms": {"weights": round(weight_s * 1e3 / accept, 4), "allreduce": round(allreduce_s * 1e3 / accept, 4),
                         "total": round(step_s * 1e3 / accept, 4)},
        "bound": bound,
        "weights_share": round(weight_s / step_s, 4),
        "inputs": {
            "gpu": gpu, "gpu_matched": spec.name if spec else None, "bandwidth_gbs": bandwidth, "bandwidth_source": bw_source,
            "achievable_fraction": fraction, "tp": tp, "link": link, "link_kind": kind, "pcie_gen": pcie_gen, "pcie_width": pcie_width,
            "p2p": p2p if tp > 1 else None, "allreduce_impl": impl, "allreduce_latency_us": ar_latency if tp > 1 else None,
            "allreduce_source": ar_source, "allreduces_per_step": int(ar_count), "allreduce_bus_gbs": bus if tp > 1 else None,
            "weight_format": quant_label, "bytes_per_param": layer_bpp, "weight_bytes_per_step": int(weight_bytes),
            "weight_bytes_per_gpu": int(weight_bytes / tp), "total_params": counts.get("total_params"),
            "active_params": counts.get("active_params"), "moe": counts.get("moe"), "num_layers": counts.get("layers") or None,
            "hidden_size": counts.get("hidden_size") or None,
        },
        "notes": notes,
    }


def with_accept_length(ceiling: Dict[str, Any], accept_length: Any) -> Dict[str, Any]:
    """A computed ceiling re-scaled to another accept length (the target-forward breakdown does not change).

    Why: the filter runs before the probe, usually with accept length 1; the probe then knows the run's real
    accept length and can give the speculative ceiling without the model's inputs.
    """
    accept = _num(accept_length) or 1.0
    if accept < 1.0:
        raise CeilingError("accept_length counts the bonus token, so it is >= 1.0 (got %g)" % accept)
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
    out["tokens_per_s"] = round(accept * 1e3 / total_ms, 2)
    out["tokens_per_s_no_spec"] = round(1e3 / total_ms, 2)
    out["per_token_ms"] = {k: round(float(v) / accept, 4) for k, v in step.items()}
    return out


def efficiency_verdict(measured_tps: Optional[float], ceiling: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Efficiency = measured / ceiling, and a plain sentence on what would make decode faster.

    Why a sentence: the operator's question is "will more flags help?"; near the ceiling the answer is no,
    and what does help depends on which bound dominates (bytes per token, or all-reduce latency).
    """
    if not measured_tps or not ceiling or not ceiling.get("tokens_per_s"):
        return {"efficiency": None, "verdict": None}
    eff = measured_tps / float(ceiling["tokens_per_s"])
    inputs = ceiling.get("inputs") or {}
    pcie = str(inputs.get("link_kind") or "").startswith("pcie")
    if ceiling.get("bound") == "allreduce_latency":
        bound_text = "the all-reduce latency ceiling"
        remedy = "faster decode needs fewer GPUs per replica (lower TP), %s" % ("NVLink" if pcie else "a lower-latency all-reduce")
    else:
        bound_text = "the memory-bandwidth ceiling"
        extras = ["quantisation", "better speculative acceptance"]
        extras.append("NVLink" if pcie and (inputs.get("tp") or 1) > 1 else "a GPU with more memory bandwidth")
        remedy = "faster decode needs " + ", ".join(extras[:-1]) + " or " + extras[-1]
    pct = eff * 100.0
    if eff > ABOVE_CEILING:
        verdict = ("%.0f%% of %s, above it: check the ceiling's inputs (parameter count, dtype or quantisation, GPU "
                   "bandwidth, accept length)" % (pct, bound_text))
    elif eff >= AT_CEILING:
        verdict = "within 10%% of %s (%.0f%%): more flags will not help; %s" % (bound_text, pct, remedy)
    elif eff >= NEAR_CEILING:
        verdict = ("%.0f%% of %s: a little headroom; look at CUDA graphs, the all-reduce path and GPU clocks before "
                   "flags; beyond that %s" % (pct, bound_text, remedy))
        if (_num(ceiling.get("accept_length")) or 1.0) > 1.0:
            verdict += " (with speculation part of the gap is the draft model's own work, which the ceiling leaves out)"
    else:
        verdict = ("%.0f%% of %s: well below what the hardware allows; check the launch flags (CUDA graphs on, custom "
                   "all-reduce, attention backend), NCCL P2P settings, power and clocks, and that the probe ran alone"
                   % (pct, bound_text))
    return {"efficiency": round(eff, 4), "verdict": verdict}
