# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One test per cross-flag rule (fires, and stays quiet), per release range, and against SGLang's real outcomes."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import model as flag_model
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import releases
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import table as flag_table
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.rules import RULES

ROOT = Path(__file__).resolve().parents[5]
TABLES = {path.stem: json.loads(path.read_text(encoding="utf-8"))
          for path in (ROOT / "data" / "sglang_flags").glob("*.json")}
HISTORY = flag_table.build_history(TABLES)
CASES_FILE = Path(__file__).resolve().parents[1] / "data" / "flags" / "validation_cases_0.5.23.json"
MODEL = {"model_path": "/srv/models/m"}


MODELS = ROOT / "tests" / "data" / "preflight_configs" / "models"


def model(name, overrides=None):
    """The facts of one of the test models' config.json (tests/data/preflight_configs/models/)."""
    config, dummy = flag_model.read_model_config(str(MODELS / name / "config.json"))
    return flag_model.model_facts(config, overrides)


def lint(args, release="0.5.23", facts=None, model_facts=None, draft=None, options=None):
    table = TABLES[releases.select_table_release(release, TABLES)]
    return sf.lint_server_args(dict(MODEL, **args), table, release, HISTORY, facts, model=model_facts,
                               draft_model=draft, options=options)


# rule, release, args, facts, code it reports, severity, and a neighbouring input it must stay quiet on.
CASES = [
    ("language_only_needs_encoders", "0.5.10", {"language_only": True}, None,
     "language_only_without_encoders", "error", {"language_only": True, "encoder_urls": ["http://enc:30001"]}),
    ("language_only_without_encoders", "0.5.23", {"language_only": True}, None,
     "language_only_without_encoders", "warning", {"language_only": True, "encoder_urls": ["http://enc:30001"]}),
    ("encoder_and_language_only", "0.5.23", {"language_only": True, "encoder_only": True}, None,
     "encoder_and_language_only", "error", {"encoder_only": True}),
    ("encoder_only_with_pd", "0.5.23", {"encoder_only": True, "disaggregation_mode": "prefill"}, None,
     "encoder_only_with_pd", "error", {"encoder_only": True}),
    ("prefix_mm_cache_needs_encoder_only", "0.5.23", {"enable_prefix_mm_cache": True}, None,
     "prefix_mm_cache_without_encoder_only", "error", {"enable_prefix_mm_cache": True, "encoder_only": True}),
    ("language_model_only_conflicts", "0.5.23", {"language_model_only": True, "encoder_only": True}, None,
     "language_model_only_conflict", "error", {"language_model_only": True}),
    ("enforce_piecewise_skips_safety", "0.5.12", {"enforce_piecewise_cuda_graph": True,
                                                  "speculative_algorithm": "EAGLE"}, None,
     "enforce_piecewise_cuda_graph", "warning", {"enforce_piecewise_cuda_graph": False}),
    ("full_prefill_graph_experimental", "0.5.23", {"cuda_graph_backend_prefill": "full"}, None,
     "prefill_graph_full_experimental", "warning", {"cuda_graph_backend_prefill": "breakable"}),
    ("prefill_graph_auto_disabled", "0.5.23", {"pp_size": 2}, None,
     "prefill_graph_auto_disabled", "info", {"pp_size": 2, "cuda_graph_backend_prefill": "breakable"}),
    ("speculative_adjusts_scheduling", "0.5.23", {"speculative_algorithm": "NEXTN", "enable_mixed_chunk": True}, None,
     "speculative_disables_mixed_chunk", "info", {"enable_mixed_chunk": True}),
    ("expert_parallel_with_flashinfer_moe", "0.5.23", {"tp_size": 4, "ep_size": 2,
                                                       "moe_runner_backend": "flashinfer_cutlass"}, None,
     "ep_size_for_flashinfer_moe", "error", {"tp_size": 4, "ep_size": 4, "moe_runner_backend": "flashinfer_cutlass"}),
    ("compile_without_padding", "0.5.23", {"enable_torch_compile": True, "disable_cuda_graph_padding": True}, None,
     "compile_without_graph_padding", "error", {"enable_torch_compile": True}),
    ("speculative_algorithm_known", "0.5.23", {"speculative_algorithm": "FOO"}, None,
     "speculative_algorithm_unknown", "error", {"speculative_algorithm": "eagle"}),
    ("speculative_params_without_algorithm", "0.5.23", {"speculative_num_steps": 3}, None,
     "speculative_without_algorithm", "warning", {"speculative_num_steps": 3, "speculative_algorithm": "NEXTN"}),
    ("speculative_triple", "0.5.23", {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4}, None,
     "speculative_params_incomplete", "error",
     {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4, "speculative_num_steps": 5,
      "speculative_num_draft_tokens": 8}),
    ("speculative_caps_running_requests", "0.5.23", {"speculative_algorithm": "EAGLE"}, None,
     "speculative_max_running_requests", "info", {"speculative_algorithm": "EAGLE", "max_running_requests": 64}),
    ("standalone_without_dp_attention", "0.5.23", {"speculative_algorithm": "STANDALONE", "tp_size": 2,
                                                   "attn_dp_size": 2}, None,
     "standalone_with_dp_attention", "error", {"speculative_algorithm": "STANDALONE", "tp_size": 2}),
    ("draft_sink_needs_window", "0.5.23", {"speculative_draft_sink_size": 4}, None,
     "draft_sink_without_window", "error",
     {"speculative_draft_sink_size": 4, "speculative_draft_window_size": 512}),
    ("rejection_sampling_topk", "0.5.23", {"speculative_use_rejection_sampling": True,
                                           "speculative_eagle_topk": 2}, None,
     "rejection_sampling_topk", "error", {"speculative_use_rejection_sampling": True, "speculative_eagle_topk": 1}),
    ("tp_divisible_by_nodes", "0.5.23", {"tp_size": 3, "nnodes": 2, "dist_init_addr": "10.0.0.1:5000"}, None,
     "tp_not_divisible_by_nodes", "error", {"tp_size": 4, "nnodes": 2, "dist_init_addr": "10.0.0.1:5000"}),
    ("multi_node_rendezvous", "0.5.23", {"tp_size": 2, "nnodes": 2}, None,
     "multi_node_without_dist_init_addr", "warning", {"tp_size": 2, "nnodes": 2, "dist_init_addr": "10.0.0.1:5000"}),
    ("dp_replicas", "0.5.23", {"dp_size": 2, "attn_dp_size": 2, "tp_size": 2}, None,
     "dp_with_attn_dp", "error", {"attn_dp_size": 2, "tp_size": 2}),
    ("attn_cp_divides_tp", "0.5.23", {"tp_size": 2, "attn_cp_size": 3}, None,
     "attn_cp_not_dividing_tp", "error", {"tp_size": 4, "attn_cp_size": 2}),
    ("moe_dp_layout", "0.5.23", {"tp_size": 4, "moe_dp_size": 3}, None,
     "moe_dp_not_dividing_tp", "error", {"tp_size": 4, "moe_dp_size": 2}),
    ("two_batch_overlap_needs_a2a_or_dp", "0.5.23", {"enable_two_batch_overlap": True}, None,
     "two_batch_overlap_without_a2a", "error",
     {"enable_two_batch_overlap": True, "tp_size": 2, "attn_dp_size": 2}),
    ("two_batch_overlap_needs_a2a", "0.5.12", {"enable_two_batch_overlap": True}, None,
     "two_batch_overlap_without_a2a", "error", {"enable_two_batch_overlap": True, "moe_a2a_backend": "deepep"}),
    ("two_batch_overlap_needs_a2a_or_dp_attention", "0.5.20", {"enable_two_batch_overlap": True}, None,
     "two_batch_overlap_without_a2a", "error", {"enable_two_batch_overlap": True, "enable_dp_attention": True}),
    ("overlap_with_unsupported_a2a", "0.5.23", {"enable_single_batch_overlap": True,
                                                "moe_a2a_backend": "megamoe"}, None,
     "overlap_with_megamoe", "error", {"enable_single_batch_overlap": True, "moe_a2a_backend": "deepep"}),
    ("custom_all_reduce_without_p2p", "0.5.23", {"tp_size": 2}, {"gpu_p2p": False},
     "custom_all_reduce_without_p2p", "warning", {"tp_size": 2, "disable_custom_all_reduce": True}),
    ("mem_fraction_range", "0.5.23", {"mem_fraction_static": 1.5}, None,
     "mem_fraction_out_of_range", "error", {"mem_fraction_static": 0.85}),
    ("log_level_known", "0.5.23", {"log_level": "verbose"}, None,
     "log_level_unknown", "error", {"log_level": "WARNING"}),
    ("chunk_multiple_of_page", "0.5.23", {"chunked_prefill_size": 1000, "page_size": 64}, None,
     "chunk_not_page_multiple", "error", {"chunked_prefill_size": 1024, "page_size": 64}),
    ("served_name_without_colon", "0.5.23", {"served_model_name": "a:b"}, None,
     "served_model_name_colon", "error", {"served_model_name": "a-b"}),
    ("grpc_port_differs", "0.5.23", {"grpc_port": 30000}, None,
     "grpc_port_equals_port", "error", {"grpc_port": 30001}),
    ("priority_retraction", "0.5.23", {"retraction_policy": "priority"}, None,
     "retraction_priority_without_scheduling", "error",
     {"retraction_policy": "priority", "enable_priority_scheduling": True}),
    ("port_range", "0.5.23", {"port": 80}, {"service_user": "sglang"},
     "privileged_port", "error", {"port": 80}),  # quiet below: facts say root
    ("open_host_needs_api_key", "0.5.23", {"host": "0.0.0.0"}, None,
     "open_without_api_key", "error", {"host": "0.0.0.0", "api_key": "k" * 24}),
    # Rules that read the model's config.json (the model is given to both inputs, see MODEL_CASES).
    ("encoder_disaggregation_architecture", "0.5.23", {"language_only": True}, None,
     "encoder_disaggregation_architecture", "error", {}),
    ("context_length_within_model", "0.5.23", {"context_length": 65536}, None,
     "context_length_above_model", "error", {"context_length": 32768}),
    ("tp_divides_attention_heads", "0.5.23", {"tp_size": 4}, None,
     "tp_not_dividing_heads", "error", {"tp_size": 2}),
    ("quantization_matches_checkpoint", "0.5.23", {"quantization": "fp8"}, None,
     "quantization_mismatch", "error", {"quantization": "awq"}),
    ("draft_model_shape", "0.5.23", {"speculative_algorithm": "EAGLE", "speculative_draft_model_path": "/d"}, None,
     "draft_hidden_size_mismatch", "error", {"speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "/d"}),
]

# The model (and draft) facts each model rule's case runs with.
MODEL_CASES = {
    "encoder_disaggregation_architecture": ("qwen2-text", None),
    "context_length_within_model": ("qwen2-text", None),
    "tp_divides_attention_heads": ("qwen2-text", None),
    "quantization_matches_checkpoint": ("qwen2-awq", None),
    "draft_model_shape": ("llama3-text", "small-eagle-draft"),
}


@pytest.mark.parametrize("rule,release,args,facts,code,severity,quiet", CASES, ids=[c[0] for c in CASES])
def test_rule_fires_and_stays_quiet(rule, release, args, facts, code, severity, quiet):
    name, draft_name = MODEL_CASES.get(rule, (None, None))
    facts_of = dict(model_facts=model(name) if name else None, draft=model(draft_name) if draft_name else None)
    found = [f for f in lint(args, release, facts, **facts_of).findings if f["code"] == code]
    assert [f["severity"] for f in found] == [severity]
    assert found[0]["message"] and found[0]["hint"]
    quiet_facts = {"service_user": "root"} if rule == "port_range" else facts
    if rule == "draft_model_shape":  # EAGLE3 reads target_hidden_size: the 3-layer draft of this target fits
        facts_of["draft"] = model("llama3-eagle3-draft")
    assert [f for f in lint(quiet, release, quiet_facts, **facts_of).findings if f["code"] == code] == []
    if name:  # without the model's config.json a model rule says nothing
        assert [f for f in lint(args, release, facts).findings if f["code"] == code] == []


def test_every_rule_has_a_case():
    assert {rule.name for rule in RULES} == {case[0] for case in CASES}


# ---------------------------------------------------------------------------------------------------------------------
# Release ranges: the same flags, different verdicts

@pytest.mark.parametrize("release,severity", [("0.5.9", "error"), ("0.5.10", "error"), ("0.5.11", "error"),
                                              ("0.5.12", "error"), ("0.5.13", "warning"), ("0.5.14", "warning"),
                                              ("0.5.23", "warning")])
def test_language_only_without_encoders_by_release(release, severity):
    found = [f for f in lint({"language_only": True}, release).findings
             if f["code"] == "language_only_without_encoders"]
    assert [f["severity"] for f in found] == [severity]


@pytest.mark.parametrize("release,expected", [("0.5.9", "flag_not_in_release"), ("0.5.10", None), ("0.5.13", None),
                                              ("0.5.14", "config_unsupported"), ("0.5.19", "config_unsupported"),
                                              ("0.5.20", "removed_flag"), ("0.5.23", "removed_flag")])
def test_enforce_piecewise_cuda_graph_by_release(release, expected):
    errors = [f["code"] for f in lint({"enforce_piecewise_cuda_graph": True}, release).errors]
    assert errors == ([expected] if expected else [])


@pytest.mark.parametrize("release,expected", [("0.5.12", None), ("0.5.14", "config_unsupported"),
                                              ("0.5.20", "removed_flag"), ("0.5.23", "removed_flag")])
def test_cuda_graph_max_bs_by_release(release, expected):
    errors = [f["code"] for f in lint({"cuda_graph_max_bs": 64}, release).errors]
    assert errors == ([expected] if expected else [])


def test_speculative_algorithm_choices_by_release():
    # 0.5.9/0.5.10 have argparse choices (case-sensitive); later releases upper-case the name themselves.
    assert [f["code"] for f in lint({"speculative_algorithm": "eagle"}, "0.5.10").errors] == ["invalid_choice"]
    assert lint({"speculative_algorithm": "eagle"}, "0.5.23").errors == []


@pytest.mark.parametrize("release,message", [
    ("0.5.9", "When enabling two batch overlap, moe_a2a_backend cannot be 'none'."),
    ("0.5.14", "When enabling two batch overlap, moe_a2a_backend cannot be 'none'."),
    ("0.5.16", None),  # 0.5.15-0.5.17 were not read: the host check decides
    ("0.5.18", "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
               "--enable-dp-attention is required (DeepSeek-V4 non-EP DP TBO path)."),
    ("0.5.20", "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
               "--enable-dp-attention is required (DeepSeek-V4 non-EP DP TBO path)."),
    ("0.5.22", "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), attention DP "
               "(--attn-dp-size) is required (DeepSeek-V4 non-EP DP TBO path)."),
])
def test_two_batch_overlap_rule_by_release(release, message):
    """Each release's own check_server_args text (read from the wheels)."""
    found = [f["message"] for f in lint({"enable_two_batch_overlap": True}, release).errors]
    assert found == ([message] if message else [])
    assert lint({"enable_two_batch_overlap": True, "moe_a2a_backend": "deepep"}, release).errors == []


def test_custom_all_reduce_needs_facts_to_judge():
    assert [f for f in lint({"tp_size": 2}).findings if "custom_all_reduce" in f["code"]] == []
    found = [f for f in lint({"tp_size": 2, "enable_p2p_check": True}, facts={"gpu_p2p": False}).findings
             if f["code"] == "custom_all_reduce_p2p_check"]
    assert [f["severity"] for f in found] == ["info"]


def test_custom_all_reduce_reads_string_facts():
    found = [f["code"] for f in lint({"tp_size": 2}, facts={"gpu_p2p": "False"}).findings]
    assert "custom_all_reduce_without_p2p" in found
    unknown = lint({"tp_size": 2}, facts={"gpu_p2p": "yes"}).findings
    assert "custom_all_reduce_without_p2p" not in [f["code"] for f in unknown]


def test_synchronous_speculative_decoding_is_noted():
    found = [f for f in lint({"speculative_algorithm": "EAGLE", "disable_overlap_schedule": True}).findings
             if f["code"] == "speculative_synchronous"]
    assert [f["severity"] for f in found] == ["info"]


@pytest.mark.parametrize("address,ok", [("10.0.0.1:5000", True), ("node0.lan:25000", True), ("[fe80::1]:25000", True),
                                        ("10.0.0.1", False), ("tcp://10.0.0.1:5000", False)])
def test_dist_init_addr_format(address, ok):
    args = {"tp_size": 2, "nnodes": 2, "dist_init_addr": address}
    assert ([f["code"] for f in lint(args).errors] == []) is ok


def test_port_out_of_range_is_an_error():
    assert [f["code"] for f in lint({"port": 99999}).errors] == ["port_out_of_range"]


def test_node_rank_must_be_below_nnodes():
    codes = [f["code"] for f in lint({"tp_size": 2, "nnodes": 2, "node_rank": 2,
                                      "dist_init_addr": "10.0.0.1:5000"}).errors]
    assert codes == ["node_rank_out_of_range"]


def test_topk_one_draft_tokens_are_adjusted():
    args = {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 8}
    found = [f for f in lint(args).findings if f["code"] == "speculative_draft_tokens_adjusted"]
    assert found[0]["severity"] == "info" and "speculative_num_draft_tokens: 4" in found[0]["hint"]


def test_topk_above_one_with_trtllm_mha():
    args = {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 2,
            "speculative_num_draft_tokens": 4, "attention_backend": "trtllm_mha"}
    assert [f["code"] for f in lint(args).errors] == ["speculative_topk_trtllm_mha"]


# ---------------------------------------------------------------------------------------------------------------------
# SGLang 0.5.23's real outcomes (validation cases run through prepare_server_args -> resolve_once -> check_server_args)

# Cases the lint cannot judge from flags alone, or judges differently on purpose, with the reason.
DIVERGENT = {
    # The verdict depends on the model's architecture (config.json), which this test does not give the lint.
    "lang-only-text-model": [],
    # SGLang accepts these on the command line; its --config loader refuses their Deprecated* actions.
    "disable-cuda-graph": ["config_unsupported"],
    "deprecated-dp-attention": ["config_unsupported"],
    # Resolution accepts port 99999; uvicorn fails to bind only after the model has loaded. The open host has no
    # api_key either (docs/preflight.md#deliberate-refusals).
    "port-99999": ["open_without_api_key", "port_out_of_range"],
    # SGLang accepts 1.5 and fails only after the weights loaded (docs/preflight.md#deliberate-refusals).
    "mem-frac-1.5": ["mem_fraction_out_of_range"],
}


def _case_args(argv):
    args, key = {}, None
    for token in argv:
        if token.startswith("--"):
            key = token[2:]
            args[key] = True
        elif isinstance(args[key], list):
            args[key].append(token)
        elif args[key] is True:
            args[key] = token
        else:
            args[key] = [args[key], token]
    return args


def _expected_text(error):
    return error.split(": ", 1)[1] if ": " in error else ""


CASES_023 = json.loads(CASES_FILE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES_023))
def test_lint_agrees_with_sglang_0_5_23(name):
    case = CASES_023[name]
    result = sf.lint_server_args(_case_args(case["argv"]), TABLES["0.5.23"], "0.5.23", HISTORY)
    errors = [f["code"] for f in result.errors]
    if name in DIVERGENT:
        assert sorted(errors) == DIVERGENT[name], shlex.join(case["argv"])
    elif case["ok"]:
        assert errors == [], shlex.join(case["argv"])
    else:
        assert len(errors) == 1, (shlex.join(case["argv"]), result.findings)
        expected = _expected_text(case["error"])
        if expected:  # SGLang's own message, quoted verbatim
            assert expected in result.errors[0]["message"]
        else:  # a bare assert: SGLang prints nothing, the lint says so
            assert "AssertionError (SGLang gives no message)" in result.errors[0]["message"]
