# -*- coding: utf-8 -*-
"""flags.model on its own: where huggingface_hub's cache is, finding a model's config.json locally and in
the hub cache, reading it, SGLang's override and text-config rules, the context length it derives and the
facts the rules use, each case word for word (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import model as fm

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("env, path", [
    ({"HF_HUB_CACHE": "/c/hub", "HF_HOME": "/h", "XDG_CACHE_HOME": "/x", "HOME": "/home/u"}, "/c/hub"),
    ({"HF_HUB_CACHE": "", "HF_HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/h/hub"),
    ({"HF_HOME": "", "XDG_CACHE_HOME": "/x", "HOME": "/home/u"}, "/x/huggingface/hub"),
    ({"XDG_CACHE_HOME": "", "HOME": "/home/u"}, "/home/u/.cache/huggingface/hub"),
])
def test_the_hub_cache_huggingface_hub_would_use(env, path):
    assert fm.hub_cache_dir(env) == path


def test_without_home_the_cache_is_under_the_users_home(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert fm.hub_cache_dir({}) == "/home/someone/.cache/huggingface/hub"
    monkeypatch.setenv("HF_HUB_CACHE", "/from/env")
    assert fm.hub_cache_dir() == "/from/env"


def make_cache(tmp_path, repo="Qwen/Qwen3-8B", ref="main", commit=COMMIT, config=True):
    folder = tmp_path / "hub" / ("models--" + repo.replace("/", "--"))
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / ref).write_text(commit + "\n", encoding="utf-8")
    snapshot = folder / "snapshots" / commit
    snapshot.mkdir(parents=True)
    if config:
        (snapshot / "config.json").write_text("{}", encoding="utf-8")
    return {"HF_HUB_CACHE": str(tmp_path / "hub")}, str(snapshot / "config.json")


def test_a_local_folder_with_and_without_its_config(tmp_path):
    assert fm.find_model_config(str(tmp_path)) == (None, "%s has no config.json yet (the weights are not there yet)" % tmp_path)
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert fm.find_model_config(str(tmp_path)) == (os.path.join(str(tmp_path), "config.json"), "")


def test_a_local_file_or_a_missing_path(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_text("x", encoding="utf-8")
    assert fm.find_model_config(str(gguf)) == (None, "%s is a file (a GGUF checkpoint?), not a folder with config.json" % gguf)
    missing = str(tmp_path / "nope")
    assert fm.find_model_config(missing) == (None, "%s does not exist yet (the weights are not there yet)" % missing)
    assert fm.find_model_config("./nope") == (None, "./nope does not exist yet (the weights are not there yet)")


@pytest.mark.parametrize("value", [None, "", 3])
def test_no_model_path(value):
    assert fm.find_model_config(value) == (None, "model_path is not set")


@pytest.mark.parametrize("name", ["Qwen/Qwen3-8B/extra", "-bad", "a b", "Qwen/"])
def test_what_is_neither_a_folder_nor_a_repo_id(name):
    assert fm.find_model_config(name, environ={"HF_HUB_CACHE": "/nowhere"}) == (
        None, "%s is neither a local folder nor a hub repo id" % name)


def test_a_repo_in_the_hub_cache_at_main_a_ref_and_a_commit(tmp_path):
    env, path = make_cache(tmp_path)
    assert fm.find_model_config("Qwen/Qwen3-8B", environ=env) == (path, "")
    assert fm.find_model_config("Qwen/Qwen3-8B", "", environ=env) == (path, "")
    assert fm.find_model_config("Qwen/Qwen3-8B", COMMIT, environ=env) == (path, "")
    env2, path2 = make_cache(tmp_path, repo="gpt2", ref="v1")
    assert fm.find_model_config("gpt2", "v1", environ=env2) == (path2, "")


def test_a_repo_missing_from_the_cache(tmp_path):
    env = {"HF_HUB_CACHE": str(tmp_path / "hub")}
    assert fm.find_model_config("Qwen/Qwen3-8B", "dev", environ=env) == (
        None, "Qwen/Qwen3-8B (revision dev) is not in the hub cache %s yet (the weights are not there yet)" % env["HF_HUB_CACHE"])


def test_a_snapshot_without_its_config(tmp_path):
    env = make_cache(tmp_path, config=False)[0]
    assert fm.find_model_config("Qwen/Qwen3-8B", environ=env) == (
        None, "the hub cache %s has no config.json for Qwen/Qwen3-8B at 0123456789ab yet" % env["HF_HUB_CACHE"])
    other = "f" * 40
    assert fm.find_model_config("Qwen/Qwen3-8B", other, environ=env) == (
        None, "the hub cache %s has no config.json for Qwen/Qwen3-8B at ffffffffffff yet" % env["HF_HUB_CACHE"])


def test_reading_a_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 8}', encoding="utf-8")
    assert fm.read_model_config(str(path)) == ({"hidden_size": 8}, "")
    path.write_text("[1]", encoding="utf-8")
    assert fm.read_model_config(str(path)) == (None, "%s does not hold a JSON object" % path)
    path.write_text("{not json", encoding="utf-8")
    config, why = fm.read_model_config(str(path))
    assert config is None and why.startswith("%s is not JSON: " % path)
    path.write_bytes(b'{"a": "\xff"}')
    assert fm.read_model_config(str(path))[1].startswith("%s is not JSON: " % path)
    missing = str(tmp_path / "missing.json")
    assert fm.read_model_config(missing) == (None, "cannot read %s: No such file or directory" % missing)


def test_a_config_of_exactly_4_mib_is_read_and_one_byte_more_is_not(tmp_path):
    path = tmp_path / "config.json"
    body = '{"a": "' + "x" * (4 * 1024 * 1024 - 10) + '"}'
    assert len(body) == 4 * 1024 * 1024 - 1
    path.write_text(body + " ", encoding="utf-8")
    assert fm.read_model_config(str(path))[1] == ""
    path.write_text(body + "  ", encoding="utf-8")
    assert fm.read_model_config(str(path)) == (None, "%s is larger than 4194304 bytes; not a model config" % path)


def test_overrides_apply_on_top_as_a_mapping_or_json_text():
    config = {"max_position_embeddings": 4096, "a": 1}
    assert fm.apply_overrides(config, {"max_position_embeddings": 8192}) == {"max_position_embeddings": 8192, "a": 1}
    assert fm.apply_overrides(config, '{"a": 2}') == {"max_position_embeddings": 4096, "a": 2}
    assert fm.apply_overrides(config, "{bad") == config
    assert fm.apply_overrides(config, "[1]") == config
    assert fm.apply_overrides(config, None) == config
    assert config == {"max_position_embeddings": 4096, "a": 1}


def test_the_text_config_sglang_reads():
    inner = {"hidden_size": 8}
    assert fm.text_config({"thinker_config": {"text_config": inner}, "text_config": {"x": 1}}) is inner
    assert fm.text_config({"thinker_config": {"x": 1}, "llm_config": inner}) is inner
    assert fm.text_config({"language_config": inner, "text_config": {"x": 1}}) is inner
    assert fm.text_config({"text_config": inner}) is inner
    assert fm.text_config({"text_config": "x", "hidden_size": 4}) == {"text_config": "x", "hidden_size": 4}
    llava = {"architectures": ["LlavaLlamaForCausalLM"], "text_config": inner}
    assert fm.text_config(llava) is llava
    other = {"architectures": ["LlavaForConditionalGeneration"], "text_config": inner}
    assert fm.text_config(other) is inner
    assert fm.text_config({"architectures": "LlavaLlamaForCausalLM", "text_config": inner}) is inner
    assert fm.text_config({"architectures": [3], "text_config": inner}) is inner


@pytest.mark.parametrize("key", ["max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                                 "max_position_embeddings"])
def test_each_context_length_key(key):
    assert fm.context_limits({key: 4096}) == (4096, 4096, key)


def test_context_keys_are_read_in_sglangs_order():
    text = {"max_position_embeddings": 1, "model_max_length": 2, "max_seq_len": 3, "seq_length": 4, "max_sequence_length": 5}
    assert fm.context_limits(text) == (5, 5, "max_sequence_length")
    assert fm.context_limits(dict(text, max_sequence_length=None)) == (4, 4, "seq_length")
    assert fm.context_limits({}) == (None, None, "")


@pytest.mark.parametrize("value", [0, -1, 4096.5, True, "4096"])
def test_a_context_length_that_is_not_a_positive_whole_number(value):
    assert fm.context_limits({"max_position_embeddings": value}) == (None, None, "max_position_embeddings")


@pytest.mark.parametrize("scaling, high", [
    ({"rope_type": "yarn", "factor": 4.0}, 4 * 32768),
    ({"rope_type": "yarn", "factor": 2}, 2 * 32768),
    ({"rope_type": "yarn", "factor": 1.0}, 32768),
    ({"rope_type": "yarn", "factor": 0.5}, 32768),
    ({"rope_type": "yarn", "factor": True}, 32768),
    ({"rope_type": "yarn", "factor": "4"}, 32768),
    ({"rope_type": "yarn"}, 32768),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}, 32768),
    ({"rope_type": "llama3", "factor": 8.0}, 32768),
    ({"type": "linear", "factor": 1.5}, 49152),
    ("yarn", 32768),
])
def test_rope_scaling_widens_the_top_of_the_range(scaling, high):
    assert fm.context_limits({"max_position_embeddings": 32768, "rope_scaling": scaling}) == (32768, high, "max_position_embeddings")


def test_the_facts_of_a_config():
    config = {"architectures": ["Qwen3ForCausalLM", 3, "X"], "num_attention_heads": 32, "num_key_value_heads": 8,
              "max_position_embeddings": 40960, "quantization_config": {"quant_method": "FP8"}, "hidden_size": 4096,
              "vocab_size": 151936}
    assert fm.model_facts(config) == {
        "architecture": "Qwen3ForCausalLM", "architectures": ["Qwen3ForCausalLM", "X"], "num_attention_heads": 32,
        "num_key_value_heads": 8, "mla": False, "hybrid": False, "context_low": 40960, "context_high": 40960,
        "context_key": "max_position_embeddings", "quant_method": "fp8", "hidden_size": 4096, "target_hidden_size": None,
        "vocab_size": 151936, "draft_vocab_size": None}


def test_the_facts_of_a_bare_config():
    assert fm.model_facts({}) == {
        "architecture": None, "architectures": [], "num_attention_heads": None, "num_key_value_heads": None, "mla": False,
        "hybrid": False, "context_low": None, "context_high": None, "context_key": "", "quant_method": None,
        "hidden_size": None, "target_hidden_size": None, "vocab_size": None, "draft_vocab_size": None}
    assert fm.model_facts(None) is None and fm.model_facts([1]) is None
    assert fm.model_facts({"architectures": "Qwen3ForCausalLM"})["architectures"] == []


def test_kv_heads_default_to_the_heads_only_when_absent():
    assert fm.model_facts({"num_attention_heads": 16})["num_key_value_heads"] == 16
    assert fm.model_facts({"num_attention_heads": 16, "num_key_value_heads": None})["num_key_value_heads"] is None


def test_the_facts_come_from_the_text_config_with_overrides_applied():
    text = {"num_attention_heads": 24, "max_position_embeddings": 262144, "hidden_size": 5120, "vocab_size": 248320,
            "quantization_config": {"quant_method": "AWQ"}, "target_hidden_size": 9, "draft_vocab_size": 7}
    config = {"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": text, "draft_vocab_size": 32000,
              "target_hidden_size": 4096}
    facts = fm.model_facts(config, '{"architectures": ["Override"]}')
    assert (facts["architecture"], facts["num_attention_heads"], facts["context_high"], facts["quant_method"]) == (
        "Override", 24, 262144, "awq")
    assert (facts["hidden_size"], facts["vocab_size"], facts["target_hidden_size"], facts["draft_vocab_size"]) == (
        5120, 248320, 4096, 32000)
    facts = fm.model_facts({"text_config": {"target_hidden_size": 9, "draft_vocab_size": 7}})
    assert (facts["target_hidden_size"], facts["draft_vocab_size"]) == (9, 7)
    top = {"quantization_config": {"quant_method": "gptq"}, "text_config": {"quantization_config": {"quant_method": "awq"}}}
    assert fm.model_facts(top)["quant_method"] == "gptq"
    assert fm.model_facts({"quantization_config": {"quant_method": 3}})["quant_method"] is None
    assert fm.model_facts({"quantization_config": "fp8"})["quant_method"] is None


def test_mla_and_hybrid_models():
    assert fm.model_facts({"kv_lora_rank": 512})["mla"] is True
    assert fm.model_facts({"kv_lora_rank": None})["mla"] is False
    for key in ("layer_types", "linear_attn_config", "full_attention_interval", "hybrid_override_pattern", "attn_type_list"):
        assert fm.model_facts({key: None})["hybrid"] is True, key


def test_the_module_constants_sglang_documents():
    assert fm.CONTEXT_LENGTH_KEYS == ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                                      "max_position_embeddings")
    assert fm.DEFAULT_CONTEXT_LENGTH == 2048
    assert fm.MAX_CONFIG_BYTES == 4 * 1024 * 1024


def test_one_is_a_positive_whole_number():
    assert fm.model_facts({"num_attention_heads": 1, "max_position_embeddings": 1})["num_attention_heads"] == 1
    assert fm.context_limits({"max_position_embeddings": 1}) == (1, 1, "max_position_embeddings")
