"""Hardware/pace profiles and the pace model they feed.

A profile (``profiles/<name>.json``, or any JSON file named by path) describes one
box and one model: GPU, count, link, memory, the model's weights and KV size, the
prefill rate, startup phase durations, the decode model's inputs (``physics``: the
model's config.json and the GPUs, exactly what the collection's decode_ceiling
takes), and *flag effects* on prefill, startup and acceptance.

Decode is paced by the collection's own expectation (``physics/``: the symlinked
``plugins/module_utils/gpu/ceiling.py``), fed the server's resolved arguments: TP,
CUDA graphs, custom all-reduce, torch.compile and speculative settings. So a flag
changes the pace only through what it changes in that model - a launch-overhead
flag removes overhead and moves the pace toward the bound, never past it - and a
probe of the stand-in reads what the verdict expects. The functions below are pure
so tests can check them without a server.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import settings
from .physics import ceiling as physics

GIB = 1024 ** 3


def profile_path(name_or_path: str) -> Path:
    """A profile name (a file in the package) or a path to a JSON file."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".json" or "/" in name_or_path:
        return candidate
    return settings.PROFILE_DIR / f"{name_or_path}.json"


def available_profiles() -> List[str]:
    """Names of the profiles shipped in the package."""
    return sorted(p.stem for p in settings.PROFILE_DIR.glob("*.json"))


def load_profile(name_or_path: Optional[str] = None) -> Dict[str, Any]:
    """The profile named by ``SGLANG_STANDIN_PROFILE`` (or the argument), with env overrides applied."""
    chosen = name_or_path or settings.get("profile", settings.DEFAULT_PROFILE) or settings.DEFAULT_PROFILE
    path = profile_path(chosen)
    try:
        profile = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"sglang stand-in: profile {chosen!r} not found ({path}); "
                         f"shipped: {', '.join(available_profiles())}") from exc
    pace = profile.setdefault("pace", {})
    for key in ("decode_tok_s", "prefill_tok_s", "jitter", "batch_slowdown"):
        override = settings.get(key)
        if override is not None:
            pace[key] = float(override)
    return profile


def _matches(effect: Dict[str, Any], args: Dict[str, Any]) -> bool:
    """An effect applies when its flag has the given value (``equals``), or is truthy when none is given."""
    value = args.get(effect["flag"])
    if "equals" in effect:
        return str(value).lower() == str(effect["equals"]).lower()
    return bool(value) and value not in ("false", "disabled", 0)


def active_effects(profile: Dict[str, Any], args: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The profile's flag effects that the resolved args switch on."""
    return [e for e in profile.get("flag_effects", []) if _matches(e, args)]


def _product(effects: List[Dict[str, Any]], key: str) -> float:
    result = 1.0
    for effect in effects:
        result *= float(effect.get(key, 1.0))
    return result


@dataclass(frozen=True)
class Pace:  # pylint: disable=too-many-instance-attributes
    """What the scheduler paces by. Times are seconds before the pace scale is applied."""

    step_s_batch1: float          # one decode (or verify) step at batch 1
    batch_slowdown: float         # relative step-time growth per extra running request
    prefill_tok_s: float          # prompt tokens per second during prefill
    ttft_overhead_s: float        # fixed part of time to first token
    accept_length: float          # mean tokens per step and request (1 without speculation)
    draft_accept_rate: float      # per-draft acceptance, for sampling accept lengths
    draft_depth: int              # drafts a step can accept at most (0 without speculation)
    num_draft_tokens: int         # proposed drafts + 1, for accept rates
    jitter: float                 # +-fraction of each step time, mean preserving
    bound_tok_s: float = 0.0      # the bound at this accept length: the pace never exceeds it

    def step_time(self, batch: int) -> float:
        """Seconds per step with ``batch`` running requests (memory-bound decode grows slowly)."""
        return self.step_s_batch1 * (1.0 + self.batch_slowdown * max(batch - 1, 0))

    def stream_tok_s(self, batch: int = 1) -> float:
        """Expected tokens per second of one stream at this batch size."""
        return self.accept_length / self.step_time(batch)

    def ttft(self, uncached_prompt_tokens: int) -> float:
        """Seconds from arrival to the first token of a request that starts at once."""
        return self.ttft_overhead_s + uncached_prompt_tokens / self.prefill_tok_s


def expected_accept_length(rate: float, depth: int) -> float:
    """Mean tokens per verify step: the bonus token plus a chain of drafts each accepted with ``rate``."""
    return sum(rate ** i for i in range(depth + 1))


def speculation(args: Dict[str, Any]) -> Optional[Dict[str, int]]:
    """Resolved speculative settings, or None when speculation is off."""
    if not args.get("speculative_algorithm"):
        return None
    steps = int(args.get("speculative_num_steps") or 0)
    topk = int(args.get("speculative_eagle_topk") or 1)
    draft = int(args.get("speculative_num_draft_tokens") or steps + 1)
    return {"steps": steps, "topk": topk, "draft": draft}


def decode_model(profile: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, Any]:
    """The collection's decode_ceiling for this profile's box and model under these resolved server args."""
    conf = dict(profile.get("physics") or {})
    model = conf.pop("model_config", None)
    if model is None:
        raise SystemExit(f"sglang stand-in: profile {profile.get('name')!r} has no physics.model_config")
    return physics.decode_ceiling(model, server_args=args, **conf)


def pace_for(profile: Dict[str, Any], args: Dict[str, Any]) -> Pace:
    """Turn a profile and resolved args into pacing numbers: decode from the collection's expectation."""
    pace = profile["pace"]
    effects = active_effects(profile, args)
    prefill = float(pace["prefill_tok_s"]) * _product(effects, "prefill_factor")
    model = decode_model(profile, args)
    expected = model["expected"]
    spec = speculation(args)
    accept, rate, depth, draft = 1.0, 0.0, 0, 1
    step = float(expected["per_step_ms"]["total"]) / 1e3
    if pace.get("decode_tok_s") is not None:  # SGLANG_STANDIN_DECODE_TOK_S: a test knob that bypasses the model
        step = 1.0 / float(pace["decode_tok_s"])
    if spec is not None:
        conf = profile.get("speculative", {})
        rate = min(float(conf.get("draft_accept_rate", 0.6)) * _product(effects, "accept_factor"), 0.99)
        if spec["topk"] > 1:  # a wider tree catches more first-choice misses
            rate = 1.0 - (1.0 - rate) ** min(spec["topk"], 4)
        depth = max(min(spec["steps"], spec["draft"] - 1), 0)
        draft = spec["draft"]
        accept = expected_accept_length(rate, depth)
        for effect in effects:
            if "accept_length" in effect:
                accept = float(effect["accept_length"])
        cycle = (expected.get("speculative") or {}).get("cycle_ms")
        if cycle:
            step *= float(cycle) / float(expected["per_step_ms"]["total"])
    return Pace(step_s_batch1=step, batch_slowdown=float(pace.get("batch_slowdown", 0.0)),
                prefill_tok_s=prefill, ttft_overhead_s=float(pace.get("ttft_overhead_s", 0.03)),
                accept_length=accept, draft_accept_rate=rate, draft_depth=depth,
                num_draft_tokens=draft, jitter=float(pace.get("jitter", 0.0)),
                bound_tok_s=float(model["tokens_per_s_no_spec"]) * accept)


def startup_seconds(profile: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, float]:
    """Phase durations before scaling; flag effects may lengthen some (torch.compile, for one)."""
    phases = {k: float(v) for k, v in profile.get("startup_s", {}).items()}
    for effect in active_effects(profile, args):
        for phase, extra in effect.get("startup_s", {}).items():
            phases[phase] = phases.get(phase, 0.0) + float(extra)
    return phases


def memory_plan(profile: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, float]:
    """GPU memory story of one rank: what weights take, what the KV pool gets, how many tokens fit.

    A negative ``kv_gib`` is what makes real SGLang raise "Not enough memory" at KV
    allocation, and a fraction near or above 1 makes it run out of memory; the
    stand-in lets those failures arise from the flags the same way.
    """
    gpu, model = profile["gpu"], profile["model"]
    tp = max(int(args.get("tp_size") or 1), 1)
    total = float(gpu["memory_gib"])
    weights = float(model["weights_gib"]) / tp
    fraction = float(args.get("mem_fraction_static") or profile.get("defaults", {}).get("mem_fraction_static", 0.85))
    kv = fraction * total - weights - float(gpu.get("graph_reserve_gib", 0.5))
    per_token = float(model["kv_bytes_per_token"]) / tp
    tokens = int(kv * GIB / per_token) if kv > 0 else 0
    return {"total_gib": total, "weights_gib": weights, "fraction": fraction, "kv_gib": kv,
            "tokens": tokens, "avail_start_gib": total - 0.6}


MODEL_NOT_FOUND = ("Can't load the configuration of '{path}'. If you were trying to load it from "
                   "'https://huggingface.co/models', make sure you don't have a local directory with the same name. "
                   "Otherwise, make sure '{path}' is the correct path to a directory containing a config.json file")


# SGLang's CONTEXT_LENGTH_KEYS, in its order (utils/hf_transformers/common.py).
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                       "max_position_embeddings")


def derived_context_length(config: Dict[str, Any]) -> Optional[int]:
    """The maximum context SGLang 0.5.23 derives from a config.json (``get_context_length``).

    With transformers 5 (what 0.5.23 pins) ``rope_scaling`` is no longer an attribute of the config, so a yarn
    factor does not raise the limit: only the first present key counts, read from the language-model part.
    """
    text = config
    for key in ("thinker_config", "llm_config", "language_config", "text_config"):
        if isinstance(config.get(key), dict):
            text = config[key].get("text_config", config[key]) if key == "thinker_config" else config[key]
            break
    for key in CONTEXT_LENGTH_KEYS:
        if isinstance(text.get(key), int) and not isinstance(text.get(key), bool):
            return int(text[key])
    return None


def model_from_path(profile: Dict[str, Any], model_path: Optional[str]) -> Dict[str, Any]:
    """Let a real ``config.json`` at the model path override the profile's model facts.

    Rehearsal hosts may carry a small fake model folder; its architecture and
    context length then show in ``/model_info`` and in the rules. With
    ``SGLANG_STANDIN_CHECK_MODEL_PATH=1`` a missing folder fails as transformers does.
    """
    config_file = Path(model_path or "") / "config.json"
    if model_path and config_file.is_file():
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except ValueError:
            config = {}
        model = dict(profile["model"])
        if config.get("architectures"):
            model["architecture"] = config["architectures"][0]
        derived = derived_context_length(config)
        if derived:
            model["context_length"] = derived
        # A real config says itself whether the model has an encoder; the profile's guess no longer applies.
        model["multimodal"] = any(key in config for key in ("vision_config", "audio_config", "thinker_config"))
        quant = config.get("quantization_config")
        model["quant_method"] = (str(quant.get("quant_method") or "").lower() or None) if isinstance(quant, dict) else None
        return {**profile, "model": model}
    if settings.get("check_model_path", "0") not in ("0", "false", "no", ""):
        raise OSError(MODEL_NOT_FOUND.format(path=model_path))
    return profile
