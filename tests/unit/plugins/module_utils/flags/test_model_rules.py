# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model's config.json: where it is found, the facts read from it, and the rules that use them.

The model folders are the small configs of tests/data/preflight_configs/models/ (written for these checks, in
the shape of real checkpoints); the verdicts they must give were compared with real SGLang 0.5.23
(benchmarks/preflight_agreement.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import model as fm
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import preflight as pf

ROOT = Path(__file__).resolve().parents[5]
TABLES = {path.stem: json.loads(path.read_text(encoding="utf-8"))
          for path in (ROOT / "data" / "sglang_flags").glob("*.json")}
MODELS = ROOT / "tests" / "data" / "preflight_configs" / "models"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def facts(name, overrides=None):
    config, dummy = fm.read_model_config(str(MODELS / name / "config.json"))
    return fm.model_facts(config, overrides)


def lint(args, name="qwen2-text", release="0.5.23", draft=None, facts_=None, options=None):
    return sf.lint_server_args(dict({"model_path": "/m"}, **args), TABLES[release], release, None, facts_,
                               model=facts(name) if name else None, draft_model=facts(draft) if draft else None,
                               options=options)


def errors(result):
    return sorted(f["code"] for f in result.errors)


def only(result, code):
    found = [f for f in result.findings if f["code"] == code]
    assert len(found) == 1, (code, result.findings)
    return found[0]


# ---------------------------------------------------------------------------------------------------------------------
# Finding the config

def test_a_local_folder(tmp_path):
    assert fm.find_model_config(str(MODELS / "qwen2-text")) == (str(MODELS / "qwen2-text" / "config.json"), "")
    empty = tmp_path / "weights"
    empty.mkdir()
    path, reason = fm.find_model_config(str(empty))
    assert path is None and reason == "%s has no config.json yet (the weights are not there yet)" % empty
    path, reason = fm.find_model_config(str(tmp_path / "nowhere"))
    assert path is None and reason.endswith("does not exist yet (the weights are not there yet)")


def hub_cache(tmp_path, repo="Qwen/Qwen2-0.5B", ref="main"):
    repo_dir = tmp_path / "hub" / ("models--" + repo.replace("/", "--"))
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / ref).write_text(COMMIT)
    snapshot = repo_dir / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text((MODELS / "qwen2-text" / "config.json").read_text())
    return snapshot / "config.json"


def test_a_repo_id_in_the_hub_cache_that_hf_home_names(tmp_path):
    expected = hub_cache(tmp_path)
    environ = {"HF_HOME": str(tmp_path)}
    assert fm.find_model_config("Qwen/Qwen2-0.5B", None, environ) == (str(expected), "")
    assert fm.find_model_config("Qwen/Qwen2-0.5B", COMMIT, environ) == (str(expected), "")
    assert fm.find_model_config("Qwen/Qwen2-0.5B", COMMIT, {"HF_HUB_CACHE": str(tmp_path / "hub")})[0] == str(expected)
    path, reason = fm.find_model_config("Qwen/Qwen2-0.5B", "v2", environ)
    assert path is None and "revision v2" in reason and "the weights are not there yet" in reason
    path, reason = fm.find_model_config("Qwen/Other", None, environ)
    assert path is None and "is not in the hub cache %s" % (tmp_path / "hub") in reason


def test_unreadable_configs_say_why(tmp_path):
    (tmp_path / "config.json").write_text("[1]")
    assert fm.read_model_config(str(tmp_path / "config.json")) == (None, "%s does not hold a JSON object"
                                                                   % (tmp_path / "config.json"))
    (tmp_path / "config.json").write_text("{no")
    assert fm.read_model_config(str(tmp_path / "config.json"))[1].startswith("%s is not JSON" % (tmp_path / "config.json"))
    assert fm.model_facts(None) is None


# ---------------------------------------------------------------------------------------------------------------------
# Facts, as SGLang derives them

def test_facts_of_a_text_model_and_a_multimodal_one():
    text = facts("llama3-text")
    assert (text["architecture"], text["num_attention_heads"], text["num_key_value_heads"]) == \
        ("LlamaForCausalLM", 32, 8)
    assert (text["context_low"], text["context_high"]) == (131072, 131072)
    assert text["context_key"] == "max_position_embeddings"
    vl = facts("qwen2vl-multimodal")  # mrope has no factor: no scaling
    assert (vl["architecture"], vl["context_low"], vl["context_high"]) == ("Qwen2VLForConditionalGeneration",
                                                                           32768, 32768)
    assert facts("qwen2-awq")["quant_method"] == "awq"


def test_yarn_scaling_gives_a_range_because_transformers_5_drops_the_factor():
    yarn = facts("qwen2-yarn")
    assert (yarn["context_low"], yarn["context_high"]) == (32768, 131072)


def test_text_config_of_a_multimodal_config_and_the_overrides():
    config = {"architectures": ["X"], "text_config": {"num_attention_heads": 40, "max_position_embeddings": 4096,
                                                      "seq_length": 2048}}
    found = fm.model_facts(config)
    assert found["num_attention_heads"] == 40 and found["num_key_value_heads"] == 40
    assert (found["context_low"], found["context_key"]) == (2048, "seq_length")  # SGLang's key order
    assert fm.model_facts(facts_config("qwen2-text"), '{"max_position_embeddings": 65536}')["context_low"] == 65536
    assert fm.model_facts(facts_config("qwen2-text"), {"max_position_embeddings": 65536})["context_low"] == 65536


def facts_config(name):
    return json.loads((MODELS / name / "config.json").read_text())


# ---------------------------------------------------------------------------------------------------------------------
# Rules

@pytest.mark.parametrize("release,arch,refused", [
    ("0.5.9", "Qwen2ForCausalLM", False),  # 0.5.9 has no architecture list
    ("0.5.12", "MiMoV2ForCausalLM", True),
    ("0.5.14", "MiMoV2ForCausalLM", False),
    ("0.5.22", "MuseSparkForConditionalGeneration", True),
    ("0.5.23", "MuseSparkForConditionalGeneration", False),
    ("0.5.23", "Qwen2VLForConditionalGeneration", False),
    ("0.5.23", "LlamaForCausalLM", True),
])
def test_encoder_disaggregation_architectures_by_release(release, arch, refused):
    result = sf.lint_server_args({"model_path": "/m", "encoder_only": True}, TABLES[
        {"0.5.9": "0.5.9", "0.5.12": "0.5.12", "0.5.14": "0.5.14", "0.5.22": "0.5.22"}.get(release, "0.5.23")],
        release, model={"architecture": arch})
    assert ("encoder_disaggregation_architecture" in errors(result)) is refused


def test_encoder_disaggregation_message_is_sglangs():
    found = only(lint({"language_only": True}), "encoder_disaggregation_architecture")
    assert found["message"] == ("Model type Qwen2ForCausalLM is not supported for encoder disaggregation. Supported "
                                "architectures: Qwen2VL, Qwen3VL, Qwen3.5, InternS2, Qwen2Audio, Qwen2.5Omni, "
                                "Dots3-Note, Kimi, MiMoV2, GLM5Next, MiniMax-M3, MuseSpark.")
    assert "Drop sglang_server_args.language_only" in found["hint"]


def test_context_length_against_the_derived_maximum():
    found = only(lint({"context_length": 65536}), "context_length_above_model")
    assert found["severity"] == "error"
    assert found["message"].startswith("Warning: User-specified context_length (65536) is greater than the derived "
                                       "context_length (32768).")
    assert "at most 32768" in found["hint"] and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in found["hint"]
    assert errors(lint({"context_length": 32768})) == []
    allowed = lint({"context_length": 65536}, facts_={"environment": {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}})
    assert only(allowed, "context_length_above_model")["severity"] == "warning"


def test_context_length_within_rope_scaling_is_left_to_the_host_check():
    assert only(lint({"context_length": 100000}, "qwen2-yarn"), "context_length_rope_scaled")["severity"] == "info"
    assert errors(lint({"context_length": 200000}, "qwen2-yarn")) == ["context_length_above_model"]


def test_json_model_override_args_raise_the_maximum_as_in_sglang():
    args = {"json_model_override_args": {"max_position_embeddings": 65536}, "context_length": 60000}
    config = facts_config("qwen2-text")
    result = sf.lint_server_args(dict({"model_path": "/m"}, **args), TABLES["0.5.23"], "0.5.23",
                                 model=fm.model_facts(config, args["json_model_override_args"]))
    assert errors(result) == []


@pytest.mark.parametrize("name,tp,code", [
    ("llama3-text", 1, None), ("llama3-text", 2, None), ("llama3-text", 8, None), ("llama3-text", 16, None),
    ("llama3-text", 3, "tp_not_dividing_heads"),
    ("qwen2-text", 2, None), ("qwen2-text", 14, None),
    ("qwen2-text", 4, "tp_not_dividing_heads"),
    ("qwen2-text", 7, "tp_not_dividing_kv_heads"),  # 7 GPUs cannot replicate 2 KV heads evenly
])
def test_tp_against_the_heads(name, tp, code):
    result = lint({"tp_size": tp}, name)
    assert errors(result) == ([code] if code else [])


def test_head_message_quotes_sglangs_load_time_assertion():
    found = only(lint({"tp_size": 4}), "tp_not_dividing_heads")
    assert "'AssertionError: 14 is not divisible by 4'" in found["message"]
    assert found["hint"] == "Give sglang_server_args.tp_size a divisor of 14 (1, 2, 7, 14)."


def test_heads_are_not_judged_when_attention_is_split_otherwise():
    assert errors(lint({"tp_size": 4, "attn_dp_size": 2}, "qwen2-text")) == []
    mla = {"architecture": "DeepseekV3ForCausalLM", "num_attention_heads": 128, "num_key_value_heads": 128,
           "mla": True}
    assert errors(sf.lint_server_args({"model_path": "/m", "tp_size": 3}, TABLES["0.5.23"], "0.5.23",
                                      model=mla)) == []


@pytest.mark.parametrize("checkpoint,wanted,refused", [
    ("qwen2-awq", "fp8", True), ("qwen2-awq", "gptq", True), ("qwen2-awq", "awq", False),
    ("qwen2-awq", "awq_marlin", False),  # Marlin is what SGLang picks for AWQ on a GPU
    ("llama3-fp8", "awq", True), ("llama3-fp8", "fp8", False), ("llama3-fp8", "modelopt_fp4", False),
    ("llama3-text", "fp8", False),  # online quantization of an unquantized checkpoint
])
def test_quantization_against_the_checkpoint(checkpoint, wanted, refused):
    assert ("quantization_mismatch" in errors(lint({"quantization": wanted}, checkpoint))) is refused


def test_draft_model_shape():
    spec = {"speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "/d"}
    assert errors(lint(spec, "llama3-text", draft="llama3-eagle3-draft")) == []
    wrong = only(lint(spec, "qwen3-text", draft="llama3-eagle3-draft"), "draft_hidden_size_mismatch")
    assert "reads hidden states 4096 wide, but the target model's hidden_size is 2560" in wrong["message"]
    both = lint(dict(spec, tp_size=3), "llama3-text", draft="llama3-eagle3-draft")
    assert sorted((f["code"], f["flag"]) for f in both.errors) == [
        ("tp_not_dividing_heads", "speculative_draft_model_path"), ("tp_not_dividing_heads", "tp_size")]
    standalone = {"speculative_algorithm": "STANDALONE", "speculative_draft_model_path": "/d"}
    assert only(lint(standalone, "qwen2-text", draft="llama3-1b-standalone"),
                "draft_vocab_mismatch")["severity"] == "warning"
    assert [f for f in lint(standalone, "llama3-text", draft="llama3-1b-standalone").findings
            if f["code"].startswith("draft_")] == []


def test_open_host_and_privileged_port_are_errors_with_an_opt_in_for_the_host():
    found = only(lint({"host": "0.0.0.0"}), "open_without_api_key")
    assert found["severity"] == "error" and "sglang_server_allow_open_without_api_key: true" in found["hint"]
    # the operator reads the whole sentence: the lint's redaction finds no secret in it to mask
    assert found["message"] == ("SGLang listens on 0.0.0.0 without an API key, so anyone who reaches the port can use the "
                                "model and its admin routes (/flush_cache, /update_weights...)")
    allowed = lint({"host": "0.0.0.0"}, options={"allow_open_without_api_key": True})
    assert only(allowed, "open_without_api_key")["severity"] == "warning"
    assert errors(lint({"host": "127.0.0.5"})) == [] and errors(lint({"host": "::1"})) == []
    unknown_user = only(lint({"port": 443}), "privileged_port")
    assert unknown_user["severity"] == "error" and "an unprivileged user" in unknown_user["message"]
    assert errors(lint({"port": 443}, facts_={"service_user": "root"})) == []


def test_mem_fraction_outside_zero_one_is_an_error():
    for value in (0, 0.0, 1, 1.0, 1.5, -0.1):
        assert errors(lint({"mem_fraction_static": value})) == ["mem_fraction_out_of_range"], value
    assert errors(lint({"mem_fraction_static": 0.9})) == []


# ---------------------------------------------------------------------------------------------------------------------
# locate_models: what the module and the action plugin do with a rendered config

def test_locate_models_reads_the_model_and_the_draft(tmp_path):
    config = {"model-path": str(MODELS / "llama3-text"), "speculative-draft-model-path": str(tmp_path / "missing")}
    found = pf.locate_models(config, {})
    assert found["model"]["architecture"] == "LlamaForCausalLM" and found["draft"] is None
    assert found["draft_wanted"] and found["draft_reason"].endswith("does not exist yet (the weights are not there yet)")
    notes = pf.model_findings(found)
    assert [(f["code"], f["severity"]) for f in notes] == [("draft_config_unknown", "info")]
    given = pf.locate_models({"model-path": "Org/Unknown"}, {}, given=facts_config("qwen2-text"))
    assert given["model"]["architecture"] == "Qwen2ForCausalLM"
    missing = pf.locate_models({"model-path": "Org/Unknown"}, {"HF_HOME": str(tmp_path)})
    assert [f["code"] for f in pf.model_findings(missing)] == ["model_config_unknown"]
