# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model's ``config.json``: where it is on a host, and the facts SGLang derives from it.

Why: several launch flags are right or wrong only for a given model (encoder disaggregation on a text-only
architecture, a context length above the model's maximum, a tp_size that does not divide the attention heads,
a quantization that contradicts the checkpoint). SGLang finds some of these during resolution and the head
split only when it loads the weights; the lint reads the same file first (docs/preflight.md#model-checks).

Pure and standard library only (modules ship this file to the target): ``find_model_config`` looks in the
places SGLang would (a local model folder, the Hugging Face hub cache) without any network, and
``model_facts`` mirrors SGLang's own derivations (``get_hf_text_config``, ``get_context_length``) closely enough
that the lint only errs where SGLang certainly would.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Mapping, Optional, Tuple

# SGLang's CONTEXT_LENGTH_KEYS, in its order (utils/hf_transformers/common.py; the same in 0.5.9-0.5.23).
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                       "max_position_embeddings")
DEFAULT_CONTEXT_LENGTH = 2048  # what get_context_length returns when no key is present
_REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(?:/[A-Za-z0-9][A-Za-z0-9_.-]*)?$")
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def hub_cache_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    """The Hugging Face hub cache that huggingface_hub would use with this environment."""
    env = os.environ if environ is None else environ
    if env.get("HF_HUB_CACHE"):
        return env["HF_HUB_CACHE"]
    if env.get("HF_HOME"):
        return os.path.join(env["HF_HOME"], "hub")
    cache = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "huggingface", "hub")


def find_model_config(model_path: Any, revision: Any = None,
                      environ: Optional[Mapping[str, str]] = None) -> Tuple[Optional[str], str]:
    """(path of the model's config.json, '') when it is on this machine, else (None, why not).

    A local folder is used as SGLang uses it; a hub repo id is looked up in the hub cache at the revision
    asked for (a commit id, else the ref it names, else ``main``), offline, as HF_HUB_OFFLINE=1 makes SGLang do.
    """
    if not isinstance(model_path, str) or not model_path:
        return None, "model_path is not set"
    if os.path.isdir(model_path):
        path = os.path.join(model_path, "config.json")
        if os.path.isfile(path):
            return path, ""
        return None, "%s has no config.json yet (the weights are not there yet)" % model_path
    if os.path.isabs(model_path) or model_path.startswith("."):
        if os.path.isfile(model_path):
            return None, "%s is a file (a GGUF checkpoint?), not a folder with config.json" % model_path
        return None, "%s does not exist yet (the weights are not there yet)" % model_path
    if not _REPO_ID_RE.match(model_path):
        return None, "%s is neither a local folder nor a hub repo id" % model_path
    cache = hub_cache_dir(environ)
    repo = os.path.join(cache, "models--" + model_path.replace("/", "--"))
    wanted = revision if isinstance(revision, str) and revision else "main"
    commit = wanted if _COMMIT_RE.match(wanted) else None
    if commit is None:
        try:
            with open(os.path.join(repo, "refs", wanted), encoding="utf-8") as handle:
                commit = handle.read().strip()
        except OSError:
            return None, ("%s (revision %s) is not in the hub cache %s yet (the weights are not there yet)"
                          % (model_path, wanted, cache))
    path = os.path.join(repo, "snapshots", commit, "config.json")
    if os.path.isfile(path):
        return path, ""
    return None, "the hub cache %s has no config.json for %s at %s yet" % (cache, model_path, commit[:12])


def read_model_config(path: str) -> Tuple[Optional[dict], str]:
    """(the parsed config.json, '') or (None, why it cannot be used)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        return None, "cannot read %s: %s" % (path, exc.strerror or exc)
    if len(data) > MAX_CONFIG_BYTES:
        return None, "%s is larger than %d bytes; not a model config" % (path, MAX_CONFIG_BYTES)
    try:
        config = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, "%s is not JSON: %s" % (path, exc)
    if not isinstance(config, dict):
        return None, "%s does not hold a JSON object" % path
    return config, ""


def apply_overrides(config: Mapping[str, Any], overrides: Any) -> dict:
    """The config with ``json_model_override_args`` applied on top, as SGLang's ModelConfig does."""
    merged = dict(config)
    if isinstance(overrides, str):
        try:
            overrides = json.loads(overrides)
        except ValueError:
            overrides = None
    if isinstance(overrides, Mapping):
        merged.update(overrides)
    return merged


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language-model part of a config (``get_hf_text_config``): thinker, llm, language or text config."""
    architectures = config.get("architectures") or []
    first = architectures[0] if isinstance(architectures, list) and architectures else ""
    if isinstance(first, str) and first.startswith("Llava") and first.endswith("ForCausalLM"):
        return config
    thinker = config.get("thinker_config")
    if isinstance(thinker, Mapping) and isinstance(thinker.get("text_config"), Mapping):
        return thinker["text_config"]
    for key in ("llm_config", "language_config", "text_config"):
        if isinstance(config.get(key), Mapping):
            return config[key]
    return config


def _positive_int(value: Any) -> Optional[int]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = int(value)
    return number if number > 0 and number == value else None


def context_limits(text: Mapping[str, Any]) -> Tuple[Optional[int], Optional[int], str]:
    """(lowest, highest) maximum context SGLang may derive, and the key it comes from.

    SGLang multiplies by ``rope_scaling.factor`` unless ``original_max_position_embeddings`` is in it or it is
    llama3 scaling, but only where transformers still exposes ``rope_scaling`` (transformers 5 moved it to
    ``rope_parameters``, so 0.5.23 ignores a yarn factor): a scaled config gives a range, and the lint errs only
    above its top.
    """
    for key in CONTEXT_LENGTH_KEYS:
        if key in text and text[key] is not None:
            base = _positive_int(text[key])
            if base is None:
                return None, None, key
            scaling = text.get("rope_scaling")
            factor = 1.0
            if isinstance(scaling, Mapping) and "original_max_position_embeddings" not in scaling \
                    and scaling.get("rope_type") != "llama3":
                raw = scaling.get("factor", 1)
                if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 1:
                    factor = float(raw)
            return base, int(factor * base), key
    return None, None, ""


def model_facts(config: Optional[Mapping[str, Any]], overrides: Any = None) -> Optional[dict]:
    """What the rules need from a config.json, or None when there is none. Unknown values are None."""
    if not isinstance(config, Mapping):
        return None
    config = apply_overrides(config, overrides)
    text = text_config(config)
    architectures = config.get("architectures")
    architectures = [a for a in architectures if isinstance(a, str)] if isinstance(architectures, list) else []
    heads = _positive_int(text.get("num_attention_heads"))
    kv_heads = _positive_int(text.get("num_key_value_heads")) if "num_key_value_heads" in text else heads
    low, high, key = context_limits(text)
    quant = config.get("quantization_config")
    if not isinstance(quant, Mapping):
        quant = text.get("quantization_config") if isinstance(text.get("quantization_config"), Mapping) else None
    quant_method = quant.get("quant_method") if isinstance(quant, Mapping) else None
    return {
        "architecture": architectures[0] if architectures else None,
        "architectures": architectures,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        # MLA (DeepSeek V2/V3 family) splits heads its own way; linear-attention hybrids have layers without KV heads.
        "mla": "kv_lora_rank" in text and text.get("kv_lora_rank") is not None,
        "hybrid": any(k in text for k in ("layer_types", "linear_attn_config", "full_attention_interval",
                                          "hybrid_override_pattern", "attn_type_list")),
        "context_low": low,
        "context_high": high,
        "context_key": key,
        "quant_method": quant_method.lower() if isinstance(quant_method, str) else None,
        "hidden_size": _positive_int(text.get("hidden_size")),
        "target_hidden_size": _positive_int(config.get("target_hidden_size") or text.get("target_hidden_size")),
        "vocab_size": _positive_int(text.get("vocab_size")),
        "draft_vocab_size": _positive_int(config.get("draft_vocab_size") or text.get("draft_vocab_size")),
    }
