#!/usr/bin/env python
"""The decode ceiling checked against published batch-1 measurements: per class, does the bound hold, is each
figure inside the expectation's band, and what is the median efficiency.

Reads ``tests/data/decode_measurements.json`` (236 published figures with their sources, docs/reference/decode-
measurements.md) and ``tests/data/decode_model_shapes.json`` (the checkpoints' config.json fields), computes for
every row the bound and the expected figure of ``module_utils/gpu/ceiling.py`` from that row's own inputs
(checkpoint shape or parameter count, bytes per parameter, GPU, TP, link, CUDA graphs, speculative settings and,
where published, the accept length), and prints one JSON object:

- ``classes``: per class, ``rows``, ``bound_checked`` / ``bound_holds`` (rows at or below their bound; a
  speculative row without an accept length is checked at the most its drafts can give), ``banded`` (whether the
  class has a band; when not, ``why``), ``band``, ``within_band`` (count), ``median_efficiency`` (measured /
  expected), ``median_of_bound`` (measured / bound), the range, and the rows outside the band;
- ``skipped``: rows that cannot be computed (no GPU named, no bytes per parameter), with the reason;
- ``pass``: every non-speculative row at or below its bound and every banded row inside its band.

    benchmarks/ceiling_validation.py [--rows]      (--rows adds every row's figures)

The classes and their bands are docs/ceiling.md#bands.
"""

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"

# GPUs that gpu/specs.py does not list (not NVIDIA, or no NVIDIA product page): the vendor's figure, for this
# check only (the same figures docs/reference/decode-measurements.md used).
OTHER_GPUS = {
    "a10g": (600.0, "gddr", "AWS: NVIDIA A10G, 600 GB/s"),
    "h20": (4000.0, "hbm", "NVIDIA H20 96GB HBM3, 4.0 TB/s (vendor figure; no NVIDIA product page)"),
    "5060 ti": (448.0, "gddr", "NVIDIA GeForce RTX 5060 Ti 16GB: 128-bit GDDR7 at 28 Gbps, 448 GB/s (derived)"),
    "mi300x": (5300.0, "hbm", "AMD Instinct MI300X datasheet, 5.3 TB/s"),
    "7900 xtx": (960.0, "gddr", "AMD Radeon RX 7900 XTX, 960 GB/s"),
}

# Classes: which rows share a band. The order is the order of the report.
CLASSES = (
    ("dense, CUDA graphs, TP 1-2", "dense, CUDA graphs on, one GPU at a time (single card or a layer split) or TP 2"),
    ("dense, CUDA graphs, TP 4-8", "dense, CUDA graphs on, tensor parallel over 4-8 GPUs of one box"),
    ("dense, CUDA graphs not stated", "dense, the source does not say whether CUDA graphs ran (2025-26 vLLM and llama-server defaults)"),
    ("dense, no CUDA graphs, one GPU", "dense, engines without CUDA graphs, one GPU at a time"),
    ("dense, no CUDA graphs, split over GPUs", "dense, engines without CUDA graphs, tensor or row split over 2-8 GPUs"),
    ("MoE, one box", "MoE, one box (one GPU, or TP within a node)"),
    ("MoE, across nodes", "MoE, tensor parallel across two nodes"),
    ("shape unknown", "no layer count published for the checkpoint (2026 MoE models): the per-layer costs cannot be priced"),
    ("speculative", "speculative decoding (MTP, EAGLE, Medusa, draft models), any model"),
    ("AMD GPUs", "AMD Instinct / Radeon (HIP graphs, other kernels: outside the collection's NVIDIA scope)"),
)

# Bands per class: measured / expected. None = not banded, with the reason (docs/ceiling.md#bands).
BANDS: Dict[str, Tuple[Optional[Tuple[float, float]], str]] = {}


def import_collection() -> None:
    """Make ``ansible_collections.gpufleet.sglang`` importable from this checkout (a throwaway symlink tree)."""
    tree = Path(tempfile.mkdtemp(prefix="ceiling-validation-"))
    (tree / "ansible_collections" / "gpufleet").mkdir(parents=True)
    (tree / "ansible_collections" / "gpufleet" / "sglang").symlink_to(ROOT)
    sys.path.insert(0, str(tree))


def speculative_of(row: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The row's speculative settings as decode_ceiling takes them, from its ``speculative`` text and draft length."""
    text = str(row.get("speculative") or "none")
    if text == "none":
        return None
    steps = row.get("draft_tokens")
    match = re.search(r"steps (\d+), topk (\d+), (\d+) draft tokens", text)
    if match:
        return {"algorithm": "EAGLE3", "num_steps": int(match.group(1)), "eagle_topk": int(match.group(2)),
                "num_draft_tokens": int(match.group(3))}
    upper = text.upper()
    algorithm = "EAGLE3" if "EAGLE-3" in upper else ("STANDALONE_LIKE" if "DRAFTER" in upper else ("MEDUSA" if "MEDUSA" in upper else "EAGLE"))
    if algorithm in ("STANDALONE_LIKE", "MEDUSA"):
        algorithm = "EAGLE"  # priced as one target-shaped draft layer and the LM head per pass
    spec: Dict[str, Any] = {"algorithm": algorithm}
    if steps:
        spec.update({"num_steps": int(steps), "eagle_topk": 1, "num_draft_tokens": int(steps) + 1})
    return spec


def gpu_inputs(row: Dict[str, Any], find_gpu: Any) -> Tuple[Dict[str, Any], Optional[str], str]:
    """decode_ceiling's GPU inputs for a row, a note when the figure is not from gpu/specs.py, and the memory kind."""
    name = str(row.get("gpu") or "")
    lower = name.lower()
    for key, (gbs, kind, source) in OTHER_GPUS.items():
        if key in lower:
            return {"bandwidth_gbs": gbs}, source, kind
    spec = find_gpu(name) if name else None
    if spec is None:
        return {}, None, ""
    return {"gpu": name}, None, "hbm" if spec.key.startswith(("b", "gb", "gh", "h", "a100", "a30", "v100")) else "gddr"


def model_inputs(row: Dict[str, Any], shapes: Dict[str, Any]) -> Tuple[Any, Dict[str, Any], List[str]]:
    """The model argument and weight inputs of a row: its checkpoint's config when known, else its parameter counts."""
    notes: List[str] = []
    hf_id = row.get("hf_id") or shapes["by_name"].get(row.get("model") or "")
    config = shapes["configs"].get(hf_id or "")
    kwargs: Dict[str, Any] = {}
    bpp = row.get("bytes_per_param")
    if bpp is None and row.get("weight_gb") and row.get("params_b"):
        bpp = float(row["weight_gb"]) / float(row["params_b"])
        notes.append("bytes per parameter from the published weight size (%.1f GB)" % float(row["weight_gb"]))
    if bpp is None and config and "mixed" in str(row.get("dtype") or "").lower() and "nvfp4" in str(row.get("bytes_per_param_note") or "").lower():
        bpp = mixed_nvfp4_bytes(config)
        notes.append("mixed NVFP4 experts and bf16 attention: %.3f bytes per parameter averaged over the layers" % bpp)
    if bpp is None:
        return None, {}, ["no bytes per parameter: %s" % (row.get("bytes_per_param_note") or row.get("dtype"))]
    kwargs["bytes_per_param"] = bpp
    if config:
        return config, kwargs, notes
    kwargs["params_b"] = row["params_b"]
    if row.get("active_params_b"):
        kwargs["active_params_b"] = row["active_params_b"]
    assumed = shapes["assumed"].get(hf_id or "")
    layers = row.get("num_layers") or (assumed or {}).get("num_layers")
    hidden = row.get("hidden_size") or (assumed or {}).get("hidden_size")
    if assumed and not row.get("num_layers"):
        notes.append("shape assumed: %s" % assumed["why"])
    if layers:
        kwargs["num_layers"] = layers
    if hidden:
        kwargs["hidden_size"] = hidden
    return None, kwargs, notes


def mixed_nvfp4_bytes(config: Dict[str, Any]) -> float:
    """Average bytes per read parameter of a checkpoint with NVFP4 MLP/expert weights and bf16 attention."""
    from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import (  # pylint: disable=import-outside-toplevel
        _attention_params, count_params)
    counts = count_params(config)
    attn = _attention_params(config, int(config["hidden_size"])) * counts["layers"]
    rest = counts["read_layer_params"] - attn
    return (attn * 2.0 + rest * 0.5625) / counts["read_layer_params"]


def parallel_inputs(row: Dict[str, Any]) -> Tuple[Dict[str, Any], List[str]]:
    """TP, link and P2P of a row (a layer split reads one GPU at a time: TP 1)."""
    notes: List[str] = []
    tp = row.get("tp")
    if tp is None:
        tp = row.get("gpu_count") or 1
        notes.append("split not stated: taken as tensor parallel over all %d GPUs (the most the bound allows)" % tp)
    link_class = str(row.get("link_class") or "")
    out: Dict[str, Any] = {"tp": int(tp)}
    if int(tp) > 1:
        if link_class == "nvlink+network":
            out["link"] = "network"
        elif link_class.startswith("nvlink") or link_class == "infinity-fabric":
            out["link"] = "nvlink"
        else:
            out["link"] = "pcie"
        if row.get("p2p") is not None:
            out["p2p"] = bool(row["p2p"])
    return out, notes


def own_allreduce(row: Dict[str, Any]) -> bool:
    """Whether the row's engine has a one-shot all-reduce of its own (SGLang, TensorRT-LLM, vLLM from 2024);
    the others (MLC, llama.cpp, 2023 vLLM) go through NCCL."""
    engine = str(row.get("engine") or "")
    if engine.startswith(("SGLang", "TensorRT-LLM")):
        return True
    return engine.startswith("vLLM") and str(row.get("source_date") or "") >= "2024-02"


def graphs_of(row: Dict[str, Any]) -> Optional[bool]:
    """True / False from the row's ``cuda_graphs`` evidence; None when the source does not say."""
    text = str(row.get("cuda_graphs") or "unknown").lower()
    if text.startswith("yes") or text.startswith("n/a"):
        return True
    if text.startswith("no"):
        return False
    return None


def class_of(row: Dict[str, Any], graphs: Optional[bool], tp: int, layers: int) -> str:
    """The row's class (CLASSES)."""
    if str(row.get("gpu_vendor") or "") == "AMD":
        return "AMD GPUs"
    if str(row.get("speculative") or "none") != "none":
        return "speculative"
    if not layers:
        return "shape unknown"
    if row.get("moe"):
        return "MoE, across nodes" if str(row.get("link_class")) == "nvlink+network" else "MoE, one box"
    split = tp > 1 or "row split" in str(row.get("parallelism") or "")
    if graphs is None:
        return "dense, CUDA graphs not stated"
    if graphs:
        return "dense, CUDA graphs, TP 4-8" if tp > 2 else "dense, CUDA graphs, TP 1-2"
    return "dense, no CUDA graphs, split over GPUs" if split else "dense, no CUDA graphs, one GPU"


def evaluate(row: Dict[str, Any], shapes: Dict[str, Any], api: Dict[str, Any]) -> Dict[str, Any]:
    """One row's bound, expectation, ratios and class; ``skip`` with the reason when it cannot be computed."""
    gpu_kwargs, gpu_note, _kind = gpu_inputs(row, api["find_gpu"])
    if not gpu_kwargs:
        return {"id": row["id"], "skip": "GPU not named" if not row.get("gpu") else "GPU %r not known" % row["gpu"]}
    model, weight_kwargs, notes = model_inputs(row, shapes)
    if not weight_kwargs:
        return {"id": row["id"], "skip": notes[0]}
    par, par_notes = parallel_inputs(row)
    notes += par_notes + ([gpu_note] if gpu_note else [])
    graphs = graphs_of(row)
    spec = speculative_of(row)
    accept = row.get("accept_length")
    kwargs = dict(gpu_kwargs, **weight_kwargs, **par, cuda_graphs=graphs is not False, speculative=spec)
    if par["tp"] > 1 and not own_allreduce(row):
        kwargs["custom_allreduce"] = False
    if accept:
        kwargs["accept_length"] = accept
    try:
        ceiling = api["decode_ceiling"](model, **kwargs)
    except api["CeilingError"] as exc:
        return {"id": row["id"], "skip": "ceiling: %s" % exc}
    measured = float(row["decode_tok_s"])
    bound = float(ceiling["tokens_per_s"])
    expected = ceiling["expected"].get("tokens_per_s")
    layers = int(ceiling["inputs"]["num_layers"] or 0)
    out = {"id": row["id"], "class": class_of(row, graphs, par["tp"], layers), "engine": row.get("engine"), "gpu": row.get("gpu"),
           "tp": par["tp"], "measured": measured, "bound": round(bound, 2), "of_bound": round(measured / bound, 3),
           "bound_at": "accept length %g" % ceiling["accept_length"] if spec else "no speculation",
           "bound_checked": bool(not spec or accept or (spec and spec.get("num_steps"))),
           "expected": expected, "efficiency": round(measured / expected, 3) if expected else None,
           "notes": notes + ceiling["notes"] + ceiling["expected"].get("notes", [])}
    if spec and not accept and not spec.get("num_steps"):
        out["bound_checked"] = False
    cycle = (ceiling["expected"].get("speculative") or {}).get("cycle_ms")
    if spec and cycle:
        # The accept length this figure needs under the model's prices: above what the drafts can give, the
        # drafts would be over-priced; below 1, the target step.
        out["implied_accept_length"] = round(measured * cycle / 1e3, 3)
        out["max_accept_length"] = ceiling["expected"]["speculative"]["max_accept_length"]
        out["steps_given"] = bool(spec.get("num_steps"))
    return out


def implied_accept(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Speculative rows with their draft length: the accept length each figure needs at the model's cycle cost."""
    members = [r for r in rows if r.get("class") == "speculative" and r.get("steps_given")]
    plausible = [r for r in members if 1.0 <= r["implied_accept_length"] <= r["max_accept_length"]]
    return {"rows": len(members), "plausible": len(plausible),
            "what": "implied accept length = measured tok/s x modelled verify cycle; plausible when within [1, steps + 1]",
            "outside": [{"id": r["id"], "implied": r["implied_accept_length"], "max": r["max_accept_length"]}
                        for r in members if r not in plausible],
            "median_implied_over_max": round(statistics.median([r["implied_accept_length"] / r["max_accept_length"] for r in members]), 3)
            if members else None}


def graph_pairs(data: List[Dict[str, Any]], shapes: Dict[str, Any], api: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Same source, same box, with and without CUDA graphs: the measured speed-up against the modelled one.

    The SGLang pair of PR #1401 names no GPU; it is computed on an H100 SXM (its author's usual), which moves
    the modelled ratio little because both sides share the weights term.
    """
    by_id = {r["id"]: r for r in data}
    out = []
    for row in data:
        rid = row["id"]
        if "nograph" not in rid:
            continue
        other = by_id.get(rid.replace("nograph", "graph"))
        if other is None:
            continue
        ratios = []
        for eager in (True, False):
            item = dict(row if eager else other)
            if not item.get("gpu"):
                item["gpu"] = "NVIDIA H100 80GB HBM3"
            model, weights, _notes = model_inputs(item, shapes)
            gpu_kwargs, _n, _k = gpu_inputs(item, api["find_gpu"])
            par, _p = parallel_inputs(item)
            ratios.append(api["decode_ceiling"](model, **gpu_kwargs, **weights, **par, cuda_graphs=not eager)["expected"]["tokens_per_s"])
        out.append({"pair": rid.replace("nograph", "(no)graph"), "engine": row.get("engine"),
                    "measured_speedup": round(float(other["decode_tok_s"]) / float(row["decode_tok_s"]), 3),
                    "modelled_speedup": round(ratios[1] / ratios[0], 3)})
    return out


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per class: counts, band check, medians."""
    out: Dict[str, Any] = {}
    for name, description in CLASSES:
        members = [r for r in rows if r.get("class") == name]
        band, why = BANDS[name]
        checked = [r for r in members if r["bound_checked"]]
        effs = [r["efficiency"] for r in members if r["efficiency"] is not None]
        entry: Dict[str, Any] = {
            "description": description, "rows": len(members), "bound_checked": len(checked),
            "bound_holds": sum(1 for r in checked if r["of_bound"] <= 1.0),
            "banded": band is not None, "band": list(band) if band else None,
            "with_expectation": len(effs),
            "median_efficiency": round(statistics.median(effs), 3) if effs else None,
            "efficiency_range": [min(effs), max(effs)] if effs else None,
            "median_of_bound": round(statistics.median([r["of_bound"] for r in members]), 3) if members else None,
        }
        if band:
            inside = [r for r in members if r["efficiency"] is not None and band[0] <= r["efficiency"] <= band[1]]
            entry["within_band"] = len(inside)
            entry["outside_band"] = [{"id": r["id"], "efficiency": r["efficiency"]} for r in members
                                     if r["efficiency"] is not None and not band[0] <= r["efficiency"] <= band[1]]
        else:
            entry["why_not_banded"] = why
        entry["above_bound"] = [{"id": r["id"], "of_bound": r["of_bound"]} for r in checked if r["of_bound"] > 1.0]
        out[name] = entry
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--rows", action="store_true", help="print every row's figures too")
    args = parser.parse_args()
    import_collection()
    from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu import ceiling, specs  # pylint: disable=import-outside-toplevel
    api = {"decode_ceiling": ceiling.decode_ceiling, "CeilingError": ceiling.CeilingError, "find_gpu": specs.find_gpu}
    BANDS.update(specs_bands(specs))
    data = json.loads((DATA / "decode_measurements.json").read_text(encoding="utf-8"))
    shapes = json.loads((DATA / "decode_model_shapes.json").read_text(encoding="utf-8"))
    evaluated = [evaluate(row, shapes, api) for row in data["measurements"]]
    rows = [r for r in evaluated if "skip" not in r]
    classes = summarise(rows)
    non_spec = [r for r in rows if r["class"] != "speculative"]
    report = {
        "measurements": len(data["measurements"]), "computed": len(rows),
        "skipped": [{"id": r["id"], "why": r["skip"]} for r in evaluated if "skip" in r],
        "non_speculative_bound_holds": "%d of %d" % (sum(1 for r in non_spec if r["of_bound"] <= 1.0), len(non_spec)),
        "classes": classes,
        "speculative_implied_accept_length": implied_accept(rows),
        "cuda_graph_pairs": graph_pairs(data["measurements"], shapes, api),
        "pass": all(r["of_bound"] <= 1.0 for r in non_spec)
        and all(not c["banded"] or c["within_band"] == c["with_expectation"] for c in classes.values()),
    }
    if args.rows:
        report["rows"] = rows
    print(json.dumps(report, indent=1))
    return 0 if report["pass"] else 1


def specs_bands(specs: Any) -> Dict[str, Tuple[Optional[Tuple[float, float]], str]]:
    """Which band each class is checked against (specs.EXPECTATION_BANDS), or why it has none."""
    bands = specs.EXPECTATION_BANDS
    return {
        "dense, CUDA graphs, TP 1-2": (bands["dense"], ""),
        "dense, CUDA graphs, TP 4-8": (bands["dense_tp"], ""),
        "dense, CUDA graphs not stated": (bands["dense"], ""),
        "dense, no CUDA graphs, one GPU": (None, ("without graphs the launch overhead is the engine's own: ExLlamaV2's hand-written "
                                                  "kernels launch few (1.2-1.7x SGLang's eager expectation), 2023 llama.cpp many "
                                                  "(0.35-0.45x); the eager band is SGLang's own pair, see cuda_graph_pairs")),
        "dense, no CUDA graphs, split over GPUs": (None, ("launch overhead without graphs is the engine's own: 2023 vLLM and llama.cpp "
                                                          "lose speed as GPUs are added, a fixed per-layer figure cannot follow that")),
        "MoE, one box": (bands["moe"], ""),
        "shape unknown": (None, "no layer count: the expectation leaves out every per-layer cost, so it is optimistic by an unknown "
                                "amount; bound checked only"),
        "MoE, across nodes": (None, "one source (SGLang on 2 x 8 H20, 2025): the network all-reduce and EP dispatch latency are "
                                    "not measured anywhere else, so no band can be drawn from it"),
        "speculative": (bands["speculative"], ""),
        "AMD GPUs": (None, "outside the NVIDIA tables (bandwidth given by hand, HIP graphs): bound checked, no band"),
    }


if __name__ == "__main__":
    sys.exit(main())
