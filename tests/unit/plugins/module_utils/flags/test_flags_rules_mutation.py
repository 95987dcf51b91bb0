# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flags.rules through the lint on the real flag tables (make mutation MODULES=flags/rules): the exact finding
(severity, code, flag, message, hint) of each cross-flag rule, each condition of a rule on its own (every reason,
every name of a list SGLang checks against), the boundary of each count, and each rule's release range at its
first and last release and the one outside it. Messages quote SGLang's own text where it has one
(docs/reference/sglang.md#validation-rules, tests/unit/plugins/module_utils/data/flags/validation_cases_0.5.23.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import releases
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import table as flag_table

ROOT = Path(__file__).resolve().parents[5]
TABLES = {path.stem: json.loads(path.read_text(encoding="utf-8"))
          for path in (ROOT / "data" / "sglang_flags").glob("*.json")}
HISTORY = flag_table.build_history(TABLES)
MODEL = {"model_path": "/srv/models/m"}
REF = "sglang_server_args."


def lint(args, release="0.5.23", facts=None, model=None, draft=None, options=None):
    table = TABLES[releases.select_table_release(release, TABLES)]
    return sf.lint_server_args(dict(MODEL, **args), table, release, HISTORY, facts, model=model, draft_model=draft,
                               options=options)


def found(args, *codes, **kwargs):
    """The findings of these codes, as (severity, code, flag, message, hint)."""
    return [(f["severity"], f["code"], f["flag"], f["message"], f["hint"]) for f in lint(args, **kwargs).findings
            if f["code"] in codes]


def codes(args, **kwargs):
    return sorted(f["code"] for f in lint(args, **kwargs).findings)


def no_rule_failed(args, **kwargs):
    assert "rule_failed" not in codes(args, **kwargs)


# ---------------------------------------------------------------------------------------------------------------------
# Encoder disaggregation

LANG_ONLY_HINT_OLD = ("language_only serves only the language half of a multimodal model and sends images to separate "
                      "encoder_only servers (encoder disaggregation). Set encoder_urls to those servers, or drop "
                      "language_only to serve the whole model from this one (what a single box wants).")


@pytest.mark.parametrize("release", ["0.5.9", "0.5.12"])
def test_language_only_without_encoders_is_refused_up_to_0_5_12(release):
    assert found({"language_only": True}, "language_only_without_encoders", release=release) == [
        ("error", "language_only_without_encoders", "language_only",
         "requires at least one encoder urls to be set via --encoder-urls", LANG_ONLY_HINT_OLD)]


@pytest.mark.parametrize("release", ["0.5.13", "0.5.23"])
def test_language_only_without_encoders_waits_for_encoders_from_0_5_13(release):
    assert found({"language_only": True}, "language_only_without_encoders", release=release) == [
        ("warning", "language_only_without_encoders", "language_only",
         "--language-only is set without --encoder-urls. Encoders are expected to register dynamically via the "
         "EncoderBootstrapServer.",
         "Until an encoder_only server registers, this server answers no image or audio input. Drop language_only "
         "unless you run encoder servers for it.")]


def test_encoder_and_language_only_together():
    assert found({"language_only": True, "encoder_only": True}, "encoder_and_language_only") == [
        ("error", "encoder_and_language_only", "encoder_only", "Cannot set --encoder-only and --language-only together",
         "A server is either the encoder half or the language half; keep one of them.")]
    assert found({"language_only": True}, "encoder_and_language_only") == []


@pytest.mark.parametrize("mode", ["prefill", "decode"])
def test_encoder_only_with_prefill_decode_disaggregation(mode):
    assert found({"encoder_only": True, "disaggregation_mode": mode}, "encoder_only_with_pd") == [
        ("error", "encoder_only_with_pd", "encoder_only",
         "Cannot set --encoder-only and --disaggregation-mode prefill/decode together",
         "Encoder servers do not take part in prefill/decode disaggregation; drop one of them.")]
    assert found({"disaggregation_mode": mode}, "encoder_only_with_pd") == []


def test_prefix_mm_cache_needs_encoder_only():
    assert found({"enable_prefix_mm_cache": True}, "prefix_mm_cache_without_encoder_only") == [
        ("error", "prefix_mm_cache_without_encoder_only", "enable_prefix_mm_cache",
         "--enable-prefix-mm-cache requires --encoder-only to be enabled", "Set it only on encoder_only servers.")]


LMO_HINT = ("language_model_only skips the vision tower inside one server; encoder disaggregation splits it across "
            "servers. Keep one approach.")


@pytest.mark.parametrize("other,value", [("encoder_only", True), ("language_only", True),
                                         ("encoder_urls", ["http://enc:30001"])])
def test_language_model_only_conflicts_with_each_disaggregation_flag(other, value):
    assert found({"language_model_only": True, other: value}, "language_model_only_conflict") == [
        ("error", "language_model_only_conflict", "language_model_only",
         "--language-model-only cannot be combined with --%s" % other.replace("_", "-"), LMO_HINT)]
    assert found({other: value}, "language_model_only_conflict") == []


@pytest.mark.parametrize("mode", ["prefill", "decode"])
def test_language_model_only_conflicts_with_pd_disaggregation(mode):
    assert found({"language_model_only": True, "disaggregation_mode": mode}, "language_model_only_conflict") == [
        ("error", "language_model_only_conflict", "language_model_only",
         "--language-model-only is incompatible with --disaggregation-mode prefill/decode", "Drop one of them.")]
    assert found({"language_model_only": True, "disaggregation_mode": "null"}, "language_model_only_conflict") == []


# ---------------------------------------------------------------------------------------------------------------------
# Piecewise / prefill CUDA graph

ENFORCE_HINT = ("Drop it: SGLang turns the piecewise graph off for combinations it does not support, and forcing it "
                "there risks a failed capture or wrong output.")


def enforce_message(why):
    return ("--enforce-piecewise-cuda-graph keeps the piecewise CUDA graph on past every auto-disable condition; "
            "SGLang documents it as \"Used for testing\"%s." % why)


@pytest.mark.parametrize("release", ["0.5.10", "0.5.13"])
def test_enforce_piecewise_alone(release):
    assert found({"enforce_piecewise_cuda_graph": True}, "enforce_piecewise_cuda_graph", release=release) == [
        ("warning", "enforce_piecewise_cuda_graph", "enforce_piecewise_cuda_graph", enforce_message(""), ENFORCE_HINT)]


@pytest.mark.parametrize("extra,reason", [
    ({"speculative_algorithm": "EAGLE"}, "speculative decoding"),
    ({"language_only": True, "encoder_urls": ["http://enc:30001"]}, "a multimodal model"),
    ({"encoder_only": True}, "a multimodal model"),
    ({"enable_torch_compile": True}, "torch.compile"),
    ({"pp_size": 2}, "pipeline parallelism"),
    ({"moe_a2a_backend": "deepep"}, "an MoE all-to-all backend"),
])
def test_enforce_piecewise_names_each_condition_it_skips(extra, reason):
    args = dict({"enforce_piecewise_cuda_graph": True}, **extra)
    assert found(args, "enforce_piecewise_cuda_graph", release="0.5.12") == [
        ("warning", "enforce_piecewise_cuda_graph", "enforce_piecewise_cuda_graph",
         enforce_message(" (here: %s)" % reason), ENFORCE_HINT)]


def test_enforce_piecewise_lists_every_condition_in_order():
    args = {"enforce_piecewise_cuda_graph": True, "speculative_algorithm": "EAGLE", "encoder_only": True,
            "enable_torch_compile": True, "pp_size": 2, "moe_a2a_backend": "deepep"}
    assert found(args, "enforce_piecewise_cuda_graph", release="0.5.12")[0][3] == enforce_message(
        " (here: speculative decoding, a multimodal model, torch.compile, pipeline parallelism, an MoE all-to-all "
        "backend)")


def test_enforce_piecewise_with_one_pipeline_stage_and_no_a2a_backend_names_nothing():
    args = {"enforce_piecewise_cuda_graph": True, "pp_size": 1, "moe_a2a_backend": "none"}
    assert found(args, "enforce_piecewise_cuda_graph", release="0.5.12")[0][3] == enforce_message("")


@pytest.mark.parametrize("release", ["0.5.14", "0.5.23"])
def test_enforce_piecewise_rule_ends_with_0_5_13(release):
    assert found({"enforce_piecewise_cuda_graph": True}, "enforce_piecewise_cuda_graph", release=release) == []


def test_full_prefill_graph_is_experimental_from_0_5_20():
    expected = [("warning", "prefill_graph_full_experimental", "cuda_graph_backend_prefill",
                 "cuda_graph_config[prefill].backend='full' is experimental. Use breakable for production workloads.",
                 "Use cuda_graph_backend_prefill: breakable.")]
    assert found({"cuda_graph_backend_prefill": "full"}, "prefill_graph_full_experimental", release="0.5.20") == expected
    assert found({"cuda_graph_backend_prefill": "full"}, "prefill_graph_full_experimental", release="0.5.19") == []


def prefill_info(first, also=""):
    return ("info", "prefill_graph_auto_disabled", "cuda_graph_backend_prefill",
            "Breakable CUDA graph is incompatible with %s; disabling prefill CUDA graph." % first,
            "SGLang runs prefill without a CUDA graph here%s; set cuda_graph_backend_prefill: breakable to force it, "
            "at your own risk." % also)


@pytest.mark.parametrize("args,reason", [
    ({"pp_size": 2}, "pipeline parallelism"),
    ({"enable_two_batch_overlap": True, "moe_a2a_backend": "deepep"}, "two-batch overlap"),
    ({"dcp_size": 2}, "decode context parallel (dcp_size > 1)"),
    ({"moe_a2a_backend": "mooncake"}, "unvalidated a2a backend"),
])
def test_prefill_graph_auto_disabled_for_each_reason(args, reason):
    assert found(args, "prefill_graph_auto_disabled") == [prefill_info(reason)]
    assert found(args, "prefill_graph_auto_disabled", release="0.5.20") == [prefill_info(reason)]
    assert found(args, "prefill_graph_auto_disabled", release="0.5.19") == []
    assert found(dict(args, cuda_graph_backend_prefill="breakable"), "prefill_graph_auto_disabled") == []


def test_prefill_graph_auto_disabled_names_the_other_reasons_in_the_hint():
    args = {"pp_size": 2, "dcp_size": 2, "moe_a2a_backend": "mooncake"}
    assert found(args, "prefill_graph_auto_disabled") == [
        prefill_info("pipeline parallelism", " (also: decode context parallel (dcp_size > 1), unvalidated a2a backend)")]


@pytest.mark.parametrize("backend", ["none", "deepep", "megamoe", "flashinfer"])
def test_prefill_graph_keeps_validated_a2a_backends(backend):
    assert found({"moe_a2a_backend": backend, "pp_size": 1, "dcp_size": 1}, "prefill_graph_auto_disabled") == []


def test_compile_without_graph_padding_from_0_5_20():
    expected = [("error", "compile_without_graph_padding", "disable_cuda_graph_padding",
                 "--disable-cuda-graph-padding is incompatible with --enable-torch-compile. With padding disabled, "
                 "every distinct batch size gets its own torch.compile + Triton autotune cycle (O(max_batch_size) "
                 "compilations) instead of the small fixed set of padded bucket sizes, causing engine initialisation "
                 "to stall for many minutes. Remove --disable-cuda-graph-padding or --enable-torch-compile.",
                 "Remove disable_cuda_graph_padding or enable_torch_compile.")]
    args = {"enable_torch_compile": True, "disable_cuda_graph_padding": True}
    assert found(args, "compile_without_graph_padding", release="0.5.20") == expected
    assert found(args, "compile_without_graph_padding", release="0.5.19") == []
    assert found({"disable_cuda_graph_padding": True}, "compile_without_graph_padding") == []


# ---------------------------------------------------------------------------------------------------------------------
# Speculative decoding

BUILTINS = ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO"]


@pytest.mark.parametrize("name", BUILTINS)
def test_each_builtin_speculative_algorithm_is_known_in_any_case(name):
    assert found({"speculative_algorithm": name.lower()}, "speculative_algorithm_unknown") == []


def test_an_unknown_speculative_algorithm():
    assert found({"speculative_algorithm": "FOO"}, "speculative_algorithm_unknown") == [
        ("error", "speculative_algorithm_unknown", "speculative_algorithm", "Unknown speculative algorithm name: FOO",
         "Use one of EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO (case does not matter); an algorithm "
         "from an SGLang plugin needs that plugin installed in the venv.")]


def test_releases_with_argparse_choices_leave_the_name_to_argparse():
    assert found({"speculative_algorithm": "FOO"}, "speculative_algorithm_unknown", release="0.5.10") == []


@pytest.mark.parametrize("name,value", [("speculative_num_steps", 3), ("speculative_eagle_topk", 1),
                                        ("speculative_num_draft_tokens", 4),
                                        ("speculative_draft_model_path", "/srv/models/draft")])
def test_each_speculative_parameter_without_an_algorithm(name, value):
    assert found({name: value}, "speculative_without_algorithm") == [
        ("warning", "speculative_without_algorithm", name,
         "%s is set but speculative_algorithm is not, so SGLang ignores it" % name,
         "Set speculative_algorithm (e.g. EAGLE or NEXTN) or drop %s." % name)]
    assert found({name: value, "speculative_algorithm": "NGRAM"}, "speculative_without_algorithm") == []


INCOMPLETE = ("error", "speculative_params_incomplete", "speculative_num_steps",
              "AssertionError (SGLang gives no message): speculative_eagle_topk or speculative_num_draft_tokens is set "
              "without speculative_num_steps",
              "Set speculative_num_steps, speculative_eagle_topk and speculative_num_draft_tokens together, or none of "
              "them (SGLang then picks (3, 1, 4) for most models).")


@pytest.mark.parametrize("algorithm", ["EAGLE", "eagle3", "NEXTN", "STANDALONE"])
def test_eagle_family_needs_the_steps(algorithm):
    args = {"speculative_algorithm": algorithm, "speculative_draft_model_path": "/d"}
    assert found(dict(args, speculative_eagle_topk=4), "speculative_params_incomplete") == [INCOMPLETE]
    assert found(dict(args, speculative_num_draft_tokens=4), "speculative_params_incomplete") == [INCOMPLETE]
    assert found(args, "speculative_params_incomplete") == []


def test_ngram_is_not_of_the_eagle_family():
    args = {"speculative_algorithm": "NGRAM", "speculative_eagle_topk": 4}
    assert found(args, "speculative_params_incomplete") == []


def adjusted(steps):
    return ("info", "speculative_draft_tokens_adjusted", "speculative_num_draft_tokens",
            "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1",
            "Set speculative_num_draft_tokens: %d to say what SGLang will use." % (steps + 1))


def test_topk_one_adjusts_the_draft_tokens_to_steps_plus_one():
    """SGLang 0.5.23 (validation case spec-eagle-full): steps 3, topk 1, draft 8 runs with 4 draft tokens."""
    args = {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1}
    assert found(dict(args, speculative_num_draft_tokens=8), "speculative_draft_tokens_adjusted") == [adjusted(3)]
    assert found(dict(args, speculative_num_draft_tokens=2), "speculative_draft_tokens_adjusted") == [adjusted(3)]
    assert found(dict(args, speculative_num_draft_tokens=4), "speculative_draft_tokens_adjusted") == []
    assert found(args, "speculative_draft_tokens_adjusted") == []
    assert found(dict(args, speculative_num_draft_tokens=8, speculative_eagle_topk=2),
                 "speculative_draft_tokens_adjusted") == []


def test_trtllm_mha_takes_only_topk_one():
    args = {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_num_draft_tokens": 4,
            "attention_backend": "trtllm_mha"}
    assert found(dict(args, speculative_eagle_topk=2), "speculative_topk_trtllm_mha") == [
        ("error", "speculative_topk_trtllm_mha", "speculative_eagle_topk",
         "trtllm_mha backend only supports topk = 1 for speculative decoding.",
         "Use speculative_eagle_topk: 1 or another attention_backend.")]
    assert found(dict(args, speculative_eagle_topk=1), "speculative_topk_trtllm_mha") == []
    assert found(dict(args, speculative_eagle_topk=2, attention_backend="fa3"), "speculative_topk_trtllm_mha") == []


MIXED_HINT = "Drop enable_mixed_chunk; it has no effect with speculative decoding."


@pytest.mark.parametrize("algorithm,named", [("NEXTN", "EAGLE"), ("EAGLE", "EAGLE"), ("eagle3", "EAGLE3"),
                                             ("STANDALONE", "STANDALONE")])
def test_speculative_decoding_turns_mixed_chunk_off(algorithm, named):
    args = {"speculative_algorithm": algorithm, "enable_mixed_chunk": True}
    expected = [("info", "speculative_disables_mixed_chunk", "enable_mixed_chunk",
                 "Mixed chunked prefill is disabled: %s speculative decoding does not support it." % named, MIXED_HINT)]
    assert found(args, "speculative_disables_mixed_chunk") == expected
    assert found(args, "speculative_disables_mixed_chunk", release="0.5.20") == expected
    assert found(args, "speculative_disables_mixed_chunk", release="0.5.19") == []


def test_ngram_leaves_mixed_chunk_alone():
    assert found({"speculative_algorithm": "NGRAM", "enable_mixed_chunk": True}, "speculative_disables_mixed_chunk") == []


def test_synchronous_speculative_decoding():
    args = {"speculative_algorithm": "EAGLE", "disable_overlap_schedule": True}
    assert found(args, "speculative_synchronous") == [
        ("info", "speculative_synchronous", "disable_overlap_schedule",
         "Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative decoding.",
         "SGLang keeps the overlap scheduler on for speculative decoding by default; drop disable_overlap_schedule "
         "unless you measured a gain.")]
    assert found({"speculative_algorithm": "EAGLE"}, "speculative_synchronous") == []


def test_speculative_decoding_caps_running_requests_from_0_5_20():
    expected = [("info", "speculative_max_running_requests", "max_running_requests",
                 "Max running requests is reset to 48 for speculative decoding. You can override this by explicitly "
                 "setting --max-running-requests.", "Set max_running_requests if 48 concurrent requests is too few.")]
    assert found({"speculative_algorithm": "NEXTN"}, "speculative_max_running_requests") == expected
    assert found({"speculative_algorithm": "NEXTN"}, "speculative_max_running_requests", release="0.5.20") == expected
    assert found({"speculative_algorithm": "NEXTN"}, "speculative_max_running_requests", release="0.5.19") == []
    assert found({"speculative_algorithm": "NGRAM"}, "speculative_max_running_requests") == []


def test_standalone_without_dp_attention():
    args = {"speculative_algorithm": "STANDALONE", "tp_size": 2}
    assert found(dict(args, attn_dp_size=2), "standalone_with_dp_attention") == [
        ("error", "standalone_with_dp_attention", "speculative_algorithm",
         "Currently standalone speculative decoding does not support dp attention.",
         "Drop attn_dp_size or use another speculative algorithm.")]
    assert found(dict(args, attn_dp_size=1), "standalone_with_dp_attention") == []
    assert found(dict(args, attn_dp_size=2, speculative_algorithm="EAGLE"), "standalone_with_dp_attention") == []


def test_draft_sink_needs_a_window():
    assert found({"speculative_draft_sink_size": 4}, "draft_sink_without_window") == [
        ("error", "draft_sink_without_window", "speculative_draft_sink_size",
         "--speculative-draft-sink-size requires --speculative-draft-window-size.", "Set speculative_draft_window_size too.")]
    assert found({"speculative_draft_window_size": 512}, "draft_sink_without_window") == []


def test_rejection_sampling_needs_topk_one():
    expected = [("error", "rejection_sampling_topk", "speculative_use_rejection_sampling",
                 "--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.", "Set speculative_eagle_topk: 1.")]
    args = {"speculative_use_rejection_sampling": True}
    assert found(dict(args, speculative_eagle_topk=2), "rejection_sampling_topk") == expected
    assert found(dict(args, speculative_eagle_topk=0), "rejection_sampling_topk") == expected
    assert found(dict(args, speculative_eagle_topk=1), "rejection_sampling_topk") == []
    assert found(args, "rejection_sampling_topk") == []  # no topk given: SGLang picks one
    assert found({"speculative_eagle_topk": 2}, "rejection_sampling_topk") == []


# ---------------------------------------------------------------------------------------------------------------------
# Parallelism and multi-node

def test_tp_times_pp_must_divide_by_the_nodes():
    """SGLang 0.5.23 (validation case tp3-nnodes2): 'AssertionError: tp_size must be divisible by number of nodes'."""
    assert found({"tp_size": 3, "nnodes": 2, "dist_init_addr": "10.0.0.1:5000"}, "tp_not_divisible_by_nodes") == [
        ("error", "tp_not_divisible_by_nodes", "tp_size", "tp_size must be divisible by number of nodes",
         "Make tp_size x pp_size (3) a multiple of nnodes (2).")]
    assert found({"tp_size": 2, "pp_size": 3, "nnodes": 4, "dist_init_addr": "10.0.0.1:5000"},
                 "tp_not_divisible_by_nodes")[0][4] == "Make tp_size x pp_size (6) a multiple of nnodes (4)."
    assert found({"tp_size": 2, "pp_size": 2, "nnodes": 4, "dist_init_addr": "10.0.0.1:5000"},
                 "tp_not_divisible_by_nodes") == []


def test_zero_nodes_is_no_rule_failure():
    no_rule_failed({"tp_size": 3, "nnodes": 0})
    assert found({"tp_size": 3, "nnodes": 0}, "tp_not_divisible_by_nodes", "node_rank_out_of_range") == []


def test_multi_node_without_dist_init_addr():
    assert found({"tp_size": 2, "nnodes": 2}, "multi_node_without_dist_init_addr") == [
        ("warning", "multi_node_without_dist_init_addr", "dist_init_addr",
         "nnodes is 2 but dist_init_addr is unset: each node would rendezvous on its own --host and nccl port",
         "Set dist_init_addr to node 0's IP:port on every node.")]
    assert found({"nnodes": 1}, "multi_node_without_dist_init_addr") == []


@pytest.mark.parametrize("address", ["10.0.0.1", "tcp://10.0.0.1:5000", "10.0.0.1:123456", "10.0.0.1:"])
def test_dist_init_addr_must_be_host_port(address):
    assert found({"tp_size": 2, "nnodes": 2, "dist_init_addr": address}, "dist_init_addr_format") == [
        ("error", "dist_init_addr_format", "dist_init_addr",
         "dist_init_addr %r is not HOST:PORT; torch.distributed cannot rendezvous on it" % address,
         "Write node 0's address as 192.168.0.2:25000 (or [fe80::1]:25000 for IPv6).")]


@pytest.mark.parametrize("address", ["10.0.0.1:5", "10.0.0.1:65535", "node-0.lan:25000", "[fe80::1]:25000",
                                     "my_host:1"])
def test_dist_init_addr_forms_torch_takes(address):
    assert found({"tp_size": 2, "nnodes": 2, "dist_init_addr": address}, "dist_init_addr_format") == []
    # a one-node server checks the address too
    assert found({"dist_init_addr": address}, "dist_init_addr_format") == []


def test_dist_init_addr_is_checked_on_one_node_too():
    assert [f[1] for f in found({"dist_init_addr": "10.0.0.1"}, "dist_init_addr_format")] == ["dist_init_addr_format"]


@pytest.mark.parametrize("rank", [2, 3, -1])
def test_node_rank_outside_the_nodes(rank):
    args = {"tp_size": 2, "nnodes": 2, "node_rank": rank, "dist_init_addr": "10.0.0.1:5000"}
    assert found(args, "node_rank_out_of_range") == [
        ("error", "node_rank_out_of_range", "node_rank", "node_rank %d is outside 0..1 for nnodes 2" % rank,
         "Give each node a distinct node_rank from 0 to nnodes - 1.")]


@pytest.mark.parametrize("rank", [0, 1])
def test_node_rank_inside_the_nodes(rank):
    args = {"tp_size": 2, "nnodes": 2, "node_rank": rank, "dist_init_addr": "10.0.0.1:5000"}
    assert found(args, "node_rank_out_of_range") == []


def test_one_node_has_rank_zero_only():
    assert found({"node_rank": 1}, "node_rank_out_of_range") == [
        ("error", "node_rank_out_of_range", "node_rank", "node_rank 1 is outside 0..0 for nnodes 1",
         "Give each node a distinct node_rank from 0 to nnodes - 1.")]
    assert found({}, "node_rank_out_of_range") == []


def test_multi_node_dp_replicas_from_0_5_22():
    """SGLang 0.5.23 (validation case dp2-nnodes2)."""
    args = {"dp_size": 2, "nnodes": 2, "tp_size": 2, "dist_init_addr": "10.0.0.1:5000"}
    expected = [("error", "multi_node_dp", "dp_size",
                 "multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) across nodes",
                 "Use attn_dp_size instead of dp_size across nodes.")]
    assert found(args, "multi_node_dp") == expected
    assert found(args, "multi_node_dp", release="0.5.22") == expected
    assert found(args, "multi_node_dp", release="0.5.20") == []
    assert found(dict(args, dp_size=1), "multi_node_dp") == []
    assert found(dict(args, nnodes=1), "multi_node_dp") == []


def test_dp_replicas_with_attention_dp():
    """SGLang 0.5.23 (validation case dp2-attn-dp2)."""
    assert found({"dp_size": 2, "attn_dp_size": 2, "tp_size": 2}, "dp_with_attn_dp") == [
        ("error", "dp_with_attn_dp", "dp_size",
         "--dp-size 2 with --attn-dp-size 2: data-parallel replicas combined with attention data parallelism are not "
         "supported.", "Keep one of dp_size and attn_dp_size.")]
    assert found({"dp_size": 2, "attn_dp_size": 1, "tp_size": 2}, "dp_with_attn_dp") == []
    assert found({"dp_size": 1, "attn_dp_size": 2, "tp_size": 2}, "dp_with_attn_dp") == []


def test_attention_dp_must_divide_tp():
    """SGLang 0.5.23 (validation case attn-dp-3-tp-2): a bare assertion."""
    assert found({"attn_dp_size": 3, "tp_size": 2}, "attn_dp_not_dividing_tp") == [
        ("error", "attn_dp_not_dividing_tp", "attn_dp_size",
         "AssertionError (SGLang gives no message): attn_dp_size 3 does not divide tp_size 2",
         "Make tp_size a multiple of attn_dp_size.")]
    assert found({"attn_dp_size": 2, "tp_size": 4}, "attn_dp_not_dividing_tp") == []
    assert found({"attn_dp_size": 1, "tp_size": 3}, "attn_dp_not_dividing_tp") == []


def test_attention_cp_must_divide_tp():
    assert found({"attn_cp_size": 3, "tp_size": 2}, "attn_cp_not_dividing_tp") == [
        ("error", "attn_cp_not_dividing_tp", "attn_cp_size", "tp_size must be divisible by attn_cp_size",
         "Make tp_size a multiple of attn_cp_size.")]
    assert found({"attn_cp_size": 2, "tp_size": 4}, "attn_cp_not_dividing_tp") == []
    assert found({"attn_cp_size": 1, "tp_size": 3}, "attn_cp_not_dividing_tp") == []


def test_moe_dp_must_divide_tp():
    assert found({"moe_dp_size": 3, "tp_size": 4}, "moe_dp_not_dividing_tp") == [
        ("error", "moe_dp_not_dividing_tp", "moe_dp_size", "tp_size must be divisible by moe_dp_size",
         "Make tp_size a multiple of moe_dp_size.")]
    assert found({"moe_dp_size": 2, "tp_size": 4}, "moe_dp_not_dividing_tp", "ep_moe_dp_exceed_tp") == []
    assert found({"moe_dp_size": 1, "tp_size": 3}, "moe_dp_not_dividing_tp") == []


def test_ep_times_moe_dp_at_most_tp():
    expected = [("error", "ep_moe_dp_exceed_tp", "moe_dp_size",
                 "ep_size * moe_dp_size must be less than or equal to tp_size", "Lower ep_size or moe_dp_size.")]
    assert found({"moe_dp_size": 2, "ep_size": 4, "tp_size": 4}, "ep_moe_dp_exceed_tp") == expected
    assert found({"moe_dp_size": 2, "ep_size": 2, "tp_size": 4}, "ep_moe_dp_exceed_tp") == []
    assert found({"moe_dp_size": 1, "ep_size": 8, "tp_size": 4}, "ep_moe_dp_exceed_tp") == []


def test_two_batch_overlap_hints_by_release():
    old = found({"enable_two_batch_overlap": True}, "two_batch_overlap_without_a2a", release="0.5.12")
    assert [f[4] for f in old] == ["Two-batch overlap hides MoE all-to-all time; set %smoe_a2a_backend (deepep, ...) "
                                   "or drop %senable_two_batch_overlap." % (REF, REF)]
    assert [f[:3] for f in old] == [("error", "two_batch_overlap_without_a2a", "enable_two_batch_overlap")]
    middle = found({"enable_two_batch_overlap": True}, "two_batch_overlap_without_a2a", release="0.5.18")
    assert [f[4] for f in middle] == ["Two-batch overlap hides MoE all-to-all time; without an a2a backend or attention "
                                      "DP there is nothing to overlap. Drop %senable_two_batch_overlap." % REF]
    assert [f[:3] for f in middle] == [("error", "two_batch_overlap_without_a2a", "enable_two_batch_overlap")]
    new = found({"enable_two_batch_overlap": True}, "two_batch_overlap_without_a2a", release="0.5.22")
    assert [f[4] for f in new] == ["Two-batch overlap hides MoE all-to-all time; without an a2a backend or attention DP "
                                   "there is nothing to overlap. Drop enable_two_batch_overlap."]
    assert [f[:3] for f in new] == [("error", "two_batch_overlap_without_a2a", "enable_two_batch_overlap")]


@pytest.mark.parametrize("release", ["0.5.9", "0.5.14", "0.5.18", "0.5.20", "0.5.22"])
def test_two_batch_overlap_is_one_finding_at_each_range_edge(release):
    assert len(found({"enable_two_batch_overlap": True}, "two_batch_overlap_without_a2a", release=release)) == 1


def test_two_batch_overlap_with_attention_dp_from_0_5_22():
    args = {"enable_two_batch_overlap": True, "tp_size": 2}
    assert found(dict(args, attn_dp_size=2), "two_batch_overlap_without_a2a") == []
    assert len(found(dict(args, attn_dp_size=1), "two_batch_overlap_without_a2a")) == 1
    assert found(dict(args, moe_a2a_backend="deepep"), "two_batch_overlap_without_a2a", release="0.5.18") == []


@pytest.mark.parametrize("overlaps", [["enable_two_batch_overlap"], ["enable_single_batch_overlap"],
                                      ["enable_two_batch_overlap", "enable_single_batch_overlap"]])
def test_overlap_with_megamoe_and_deepep_v2(overlaps):
    args = {name: True for name in overlaps}
    assert found(dict(args, moe_a2a_backend="megamoe"), "overlap_with_megamoe") == [
        ("error", "overlap_with_megamoe", overlaps[0],
         "--moe-a2a-backend megamoe has no two-batch / single-batch overlap decomposition; disable "
         "--enable-two-batch-overlap and --enable-single-batch-overlap.", "Drop %s." % " and ".join(overlaps))]
    assert found(dict(args, moe_a2a_backend="deepep_v2"), "overlap_with_deepep_v2") == [
        ("error", "overlap_with_deepep_v2", overlaps[0], "DeepEP v2 MoE has not implemented the TBO/SBO overlap hooks yet.",
         "Drop %s or use moe_a2a_backend: deepep." % " and ".join(overlaps))]
    assert found(dict(args, moe_a2a_backend="deepep"), "overlap_with_megamoe", "overlap_with_deepep_v2") == []


def test_megamoe_without_overlap():
    assert found({"moe_a2a_backend": "megamoe"}, "overlap_with_megamoe") == []
    assert found({"moe_a2a_backend": "deepep_v2"}, "overlap_with_deepep_v2") == []


@pytest.mark.parametrize("backend", ["flashinfer_cutlass", "flashinfer_cutedsl"])
def test_flashinfer_moe_takes_ep_one_or_tp(backend):
    args = {"tp_size": 4, "moe_runner_backend": backend}
    expected = [("error", "ep_size_for_flashinfer_moe", "ep_size",
                 "The expert parallel size must be 1 or the same as the tensor parallel size",
                 "With moe_runner_backend %s use ep_size: 1 or ep_size: 4." % backend)]
    assert found(dict(args, ep_size=2), "ep_size_for_flashinfer_moe") == expected
    assert found(dict(args, ep_size=2), "ep_size_for_flashinfer_moe", release="0.5.14") == expected
    assert found(dict(args, ep_size=1), "ep_size_for_flashinfer_moe") == []
    assert found(dict(args, ep_size=4), "ep_size_for_flashinfer_moe") == []
    assert found(dict(args, ep_size=2, moe_runner_backend="triton"), "ep_size_for_flashinfer_moe") == []


def test_flashinfer_moe_rule_starts_with_0_5_14():
    args = {"tp_size": 4, "ep_size": 2, "moe_runner_backend": "flashinfer_cutlass"}
    assert found(args, "ep_size_for_flashinfer_moe", release="0.5.12") == []


P2P_WARNING = ("warning", "custom_all_reduce_without_p2p", "disable_custom_all_reduce",
               "Custom all-reduce is on (SGLang's default) for tp_size 2, but this host's GPUs have no P2P access; SGLang "
               "assumes P2P unless --enable-p2p-check is set and then fails with 'peer access is not supported between "
               "these two devices'.",
               "Set disable_custom_all_reduce: true (or enable_p2p_check: true to let SGLang test P2P and fall back).")


def test_custom_all_reduce_without_p2p():
    assert found({"tp_size": 2}, "custom_all_reduce_without_p2p", facts={"gpu_p2p": False}) == [P2P_WARNING]
    assert found({"tp_size": 1}, "custom_all_reduce_without_p2p", facts={"gpu_p2p": False}) == []
    assert found({"tp_size": 2}, "custom_all_reduce_without_p2p", facts={"gpu_p2p": True}) == []
    assert found({"tp_size": 2, "disable_custom_all_reduce": True}, "custom_all_reduce_without_p2p",
                 "custom_all_reduce_p2p_check", facts={"gpu_p2p": False}) == []


def test_custom_all_reduce_with_the_p2p_check():
    assert found({"tp_size": 2, "enable_p2p_check": True}, "custom_all_reduce_without_p2p",
                 "custom_all_reduce_p2p_check", facts={"gpu_p2p": "false"}) == [
        ("info", "custom_all_reduce_p2p_check", "enable_p2p_check",
         "This host's GPUs have no P2P access; enable_p2p_check makes SGLang test P2P and fall back to NCCL",
         "Setting disable_custom_all_reduce: true skips the test.")]


# ---------------------------------------------------------------------------------------------------------------------
# Memory, scheduling, serving

def mem_fraction(value):
    return ("error", "mem_fraction_out_of_range", "mem_fraction_static",
            "mem_fraction_static %r is outside (0, 1); SGLang does not check the range and fails only after the weights "
            "loaded: 'Not enough memory. Please try to increase --mem-fraction-static.' (or a CUDA out-of-memory error)"
            % (value,),
            "Give %smem_fraction_static a fraction of GPU memory for weights plus KV cache, typically 0.8-0.9, or leave "
            "it unset to let SGLang size it." % REF)


@pytest.mark.parametrize("value", [1.5, 1, 1.0, 0, 0.0, -0.1])
def test_mem_fraction_outside_the_open_interval(value):
    assert found({"mem_fraction_static": value}, "mem_fraction_out_of_range") == [mem_fraction(value)]


@pytest.mark.parametrize("value", [0.85, 0.01, 0.99])
def test_mem_fraction_inside(value):
    assert found({"mem_fraction_static": value}, "mem_fraction_out_of_range") == []


@pytest.mark.parametrize("level", ["critical", "FATAL", "error", "warning", "warn", "info", "debug", "notset"])
def test_each_logging_level_python_knows(level):
    assert found({"log_level": level}, "log_level_unknown") == []


def test_a_logging_level_python_lacks():
    assert found({"log_level": "verbose"}, "log_level_unknown") == [
        ("error", "log_level_unknown", "log_level",
         "module 'logging' has no attribute 'VERBOSE' (SGLang looks --log-level up in Python's logging)",
         "Give %slog_level one of debug, info, warning, error or critical." % REF)]


def test_chunk_must_be_a_multiple_of_the_page():
    """SGLang 0.5.23 (validation case chunk-not-page-multiple)."""
    assert found({"chunked_prefill_size": 1000, "page_size": 64}, "chunk_not_page_multiple") == [
        ("error", "chunk_not_page_multiple", "chunked_prefill_size", "chunked_prefill_size must be divisible by page_size",
         "Use a multiple of 64, e.g. 960.")]
    assert found({"chunked_prefill_size": 48, "page_size": 64}, "chunk_not_page_multiple")[0][4] == \
        "Use a multiple of 64, e.g. 64."
    assert found({"chunked_prefill_size": 1024, "page_size": 64}, "chunk_not_page_multiple") == []
    assert found({"chunked_prefill_size": -1, "page_size": 64}, "chunk_not_page_multiple") == []  # -1: no chunking
    assert found({"chunked_prefill_size": 1, "page_size": 64}, "chunk_not_page_multiple")[0][4] == \
        "Use a multiple of 64, e.g. 64."
    assert found({"chunked_prefill_size": 1000, "page_size": 1}, "chunk_not_page_multiple") == []


def test_served_model_name_colon_from_0_5_20():
    """SGLang 0.5.23 (validation case served-name-colon)."""
    expected = [("error", "served_model_name_colon", "served_model_name",
                 "served_model_name cannot contain a colon (':') character. The colon is reserved for the 'model:adapter' "
                 "syntax used in LoRA adapter specification. Invalid value: 'a:b'", "Replace ':' in served_model_name, e.g. "
                 "with '-'.")]
    assert found({"served_model_name": "a:b"}, "served_model_name_colon") == expected
    assert found({"served_model_name": "a:b"}, "served_model_name_colon", release="0.5.20") == expected
    assert found({"served_model_name": "a:b"}, "served_model_name_colon", release="0.5.19") == []


def test_grpc_port_must_differ_from_port():
    """SGLang 0.5.23 (validation case grpc-eq-port)."""
    assert found({"grpc_port": 30000}, "grpc_port_equals_port") == [
        ("error", "grpc_port_equals_port", "grpc_port", "--grpc-port (30000) must differ from --port (30000)",
         "Pick another grpc_port.")]
    assert found({"grpc_port": 31000, "port": 31000}, "grpc_port_equals_port")[0][3] == \
        "--grpc-port (31000) must differ from --port (31000)"
    assert found({"grpc_port": 30001}, "grpc_port_equals_port") == []


def test_priority_retraction_needs_priority_scheduling():
    assert found({"retraction_policy": "priority"}, "retraction_priority_without_scheduling") == [
        ("error", "retraction_priority_without_scheduling", "retraction_policy",
         "--retraction-policy priority requires --enable-priority-scheduling",
         "Set enable_priority_scheduling: true or use retraction_policy: length.")]
    assert found({"retraction_policy": "length"}, "retraction_priority_without_scheduling") == []


def out_of_range(port):
    return ("error", "port_out_of_range", "port",
            "port %d is not a TCP port (1-65535); SGLang does not check it and uvicorn fails to bind only after the "
            "model has loaded" % port,
            "Give %sport a port between 1024 and 65535 (30000 is SGLang's default)." % REF)


def privileged(port, who):
    return ("error", "privileged_port", "port",
            "port %d is below 1024: the service runs as %s without CAP_NET_BIND_SERVICE and cannot bind it; SGLang "
            "finds out only after the model has loaded" % (port, who),
            "Give %sport a port of 1024 or above (30000 is SGLang's default) and put a proxy in front for a low port."
            % REF)


@pytest.mark.parametrize("port", [0, 65536, 99999, -1])
def test_port_outside_tcp(port):
    assert found({"port": port}, "port_out_of_range", "privileged_port", facts={"service_user": "root"}) == \
        [out_of_range(port)]


@pytest.mark.parametrize("port", [1, 1023])
def test_a_privileged_port_for_an_unprivileged_user(port):
    assert found({"port": port}, "port_out_of_range", "privileged_port", facts={"service_user": "sglang"}) == \
        [privileged(port, "'sglang'")]
    assert found({"port": port}, "port_out_of_range", "privileged_port") == [privileged(port, "an unprivileged user")]


@pytest.mark.parametrize("user", ["root", 0, "0"])
def test_root_binds_a_privileged_port(user):
    assert found({"port": 80}, "port_out_of_range", "privileged_port", facts={"service_user": user}) == []


@pytest.mark.parametrize("port", [1024, 30000, 65535])
def test_an_unprivileged_port(port):
    assert found({"port": port}, "port_out_of_range", "privileged_port", facts={"service_user": "sglang"}) == []


def test_a_port_that_is_not_a_number_is_left_to_the_value_checks():
    no_rule_failed({"port": True})
    assert found({"port": True}, "port_out_of_range", "privileged_port") == []


OPEN_MESSAGE = ("SGLang listens on %s without an API key, so anyone who reaches the port can use the model and its admin "
                "routes (/flush_cache, /update_weights...)")


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "node0.lan"])
def test_an_open_host_without_an_api_key(host):
    assert found({"host": host}, "open_without_api_key") == [
        ("error", "open_without_api_key", "host", OPEN_MESSAGE % host,
         "Set sglang_server_api_key (from a vault), or bind %shost to 127.0.0.1 behind an authenticating proxy; if the "
         "network is closed by other means, say so with sglang_server_allow_open_without_api_key: true." % REF)]
    assert found({"host": host}, "open_without_api_key", options={"allow_open_without_api_key": True}) == [
        ("warning", "open_without_api_key", "host", OPEN_MESSAGE % host + "; allowed by allow_open_without_api_key",
         "Make sure a firewall or an authenticating proxy stands in front of the port.")]
    assert found({"host": host, "api_key": "k" * 24}, "open_without_api_key") == []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "ip6-localhost", "127.0.1.1"])
def test_a_loopback_host_needs_no_api_key(host):
    assert found({"host": host}, "open_without_api_key") == []


# ---------------------------------------------------------------------------------------------------------------------
# Rules that read the model's config.json (flags/model.py model_facts(); written out here for each case)

def facts(**extra):
    base = {"architecture": "Qwen2ForCausalLM", "num_attention_heads": 28, "num_key_value_heads": 4, "mla": False,
            "context_low": 32768, "context_high": 32768, "context_key": "max_position_embeddings", "quant_method": None,
            "hidden_size": 3584, "target_hidden_size": None, "vocab_size": 152064}
    base.update(extra)
    return base


NAMES_0_5_23 = ("Qwen2VL, Qwen3VL, Qwen3.5, InternS2, Qwen2Audio, Qwen2.5Omni, Dots3-Note, Kimi, MiMoV2, GLM5Next, "
                "MiniMax-M3, MuseSpark")


def test_encoder_disaggregation_of_a_text_model_on_0_5_23():
    """SGLang 0.5.23 (validation case lang-only-text-model): its message lists the supported families."""
    assert found({"language_only": True}, "encoder_disaggregation_architecture", model=facts()) == [
        ("error", "encoder_disaggregation_architecture", "language_only",
         "Model type Qwen2ForCausalLM is not supported for encoder disaggregation. Supported architectures: %s."
         % NAMES_0_5_23,
         "language_only splits a multimodal model's vision or audio encoder off to other servers; Qwen2ForCausalLM has "
         "none SGLang can split. Drop %slanguage_only to serve the whole model from this server." % REF)]
    assert found({"encoder_only": True}, "encoder_disaggregation_architecture", model=facts())[0][2] == "encoder_only"
    assert found({}, "encoder_disaggregation_architecture", model=facts()) == []
    assert found({"language_only": True}, "encoder_disaggregation_architecture", model=facts(architecture=None)) == []


def test_encoder_disaggregation_before_0_5_23_lists_that_releases_architectures():
    message = found({"encoder_only": True}, "encoder_disaggregation_architecture", release="0.5.10",
                    model=facts())[0][3]
    assert message == (
        "Model type Qwen2ForCausalLM is not supported for encoder disaggregation. Supported architectures: "
        "Qwen2AudioForConditionalGeneration, Qwen2VLForConditionalGeneration, Qwen2_5OmniForConditionalGeneration, "
        "Qwen2_5_VLForConditionalGeneration, Qwen3OmniMoeForConditionalGeneration, Qwen3VLForConditionalGeneration, "
        "Qwen3VLMoeForConditionalGeneration.")
    assert found({"encoder_only": True}, "encoder_disaggregation_architecture", release="0.5.9", model=facts()) == []


# Each architecture with the first release whose model_arch list has it (read from the wheels, see rules.py).
ARCHS = [("Qwen2VLForConditionalGeneration", "0.5.10", None), ("Qwen3VLForConditionalGeneration", "0.5.10", None),
         ("Qwen2_5_VLForConditionalGeneration", "0.5.10", None), ("Qwen3VLMoeForConditionalGeneration", "0.5.10", None),
         ("Qwen3OmniMoeForConditionalGeneration", "0.5.10", None), ("Qwen2AudioForConditionalGeneration", "0.5.10", None),
         ("Qwen2_5OmniForConditionalGeneration", "0.5.10", None),
         ("Qwen3_5ForConditionalGeneration", "0.5.12", "0.5.11"), ("Qwen3_5MoeForConditionalGeneration", "0.5.12", "0.5.11"),
         ("InternS2PreviewForConditionalGeneration", "0.5.12", "0.5.11"),
         ("KimiVLForConditionalGeneration", "0.5.12", "0.5.11"), ("KimiK25ForConditionalGeneration", "0.5.12", "0.5.11"),
         ("MiMoV2ForCausalLM", "0.5.14", "0.5.13"), ("KimiK3ForConditionalGeneration", "0.5.18", "0.5.17"),
         ("Dots3NoteForCausalLM", "0.5.19", "0.5.18"), ("Glm5NextForConditionalGeneration", "0.5.20", "0.5.19"),
         ("MiniMaxM3SparseForConditionalGeneration", "0.5.23", "0.5.22"),
         ("MuseSparkForConditionalGeneration", "0.5.23", "0.5.22")]


@pytest.mark.parametrize("arch,since,before", ARCHS, ids=[a[0] for a in ARCHS])
def test_each_encoder_disaggregation_architecture_from_its_release(arch, since, before):
    for release in (since, "0.5.23"):
        assert codes({"encoder_only": True}, release=release, model=facts(architecture=arch)) == []
    if before:
        assert [f[1] for f in found({"encoder_only": True}, "encoder_disaggregation_architecture", release=before,
                                    model=facts(architecture=arch))] == ["encoder_disaggregation_architecture"]


def context_error(value, high=32768, low=32768, key="max_position_embeddings"):
    return ("error", "context_length_above_model", "context_length",
            "Warning: User-specified context_length (%d) is greater than the derived context_length (%d). This may lead "
            "to incorrect model outputs or CUDA errors. (SGLang raises this as a ValueError; the model's %s is %d.)"
            % (value, high, key, low),
            "Give %scontext_length at most %d, or leave it unset to use the model's maximum; to go beyond it on "
            "purpose set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 in sglang_server_env." % (REF, high))


def test_context_length_above_the_model():
    assert found({"context_length": 32769}, "context_length_above_model", model=facts()) == [context_error(32769)]
    assert found({"context_length": 32768}, "context_length_above_model", "context_length_rope_scaled",
                 model=facts()) == []
    assert found({"context_length": 4096}, "context_length_above_model", "context_length_rope_scaled",
                 model=facts()) == []
    assert found({"context_length": 65536}, "context_length_above_model") == []  # no config.json: no verdict


@pytest.mark.parametrize("word", ["1", "true", "True", "yes", "on"])
def test_context_length_above_the_model_allowed_by_sglangs_variable(word):
    environment = {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": word}
    assert found({"context_length": 65536}, "context_length_above_model", model=facts(),
                 facts={"environment": environment}) == [
        ("warning", "context_length_above_model", "context_length",
         "context_length 65536 is above the model's maximum (32768); SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN lets it "
         "through, which may lead to incorrect model outputs or CUDA errors",
         "Keep %scontext_length at or below 32768 unless the model was trained for more." % REF)]


@pytest.mark.parametrize("word", ["0", "false", ""])
def test_context_length_variable_switched_off(word):
    environment = {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": word}
    assert found({"context_length": 65536}, "context_length_above_model", model=facts(),
                 facts={"environment": environment}) == [context_error(65536)]


def test_context_length_within_rope_scaling():
    yarn = facts(context_low=32768, context_high=131072)
    assert found({"context_length": 65536}, "context_length_above_model", "context_length_rope_scaled", model=yarn) == [
        ("info", "context_length_rope_scaled", "context_length",
         "context_length 65536 is above the model's max_position_embeddings (32768) but within its rope scaling "
         "(131072): whether SGLang accepts it depends on the transformers release in the venv; the host check decides",
         "")]
    assert found({"context_length": 131072}, "context_length_rope_scaled", model=yarn)[0][0] == "info"
    assert found({"context_length": 131073}, "context_length_above_model", model=yarn) == [
        context_error(131073, high=131072)]
    assert found({"context_length": 32768}, "context_length_rope_scaled", model=yarn) == []


def test_context_length_without_a_known_maximum():
    assert found({"context_length": 65536}, "context_length_above_model", "context_length_rope_scaled",
                 model=facts(context_low=None, context_high=None)) == []
    no_rule_failed({"context_length": 65536}, model=facts(context_low=None, context_high=None))


def heads_error(heads, tp, flag="tp_size", which="the model", divisors="1, 2, 4, 7, 14"):
    return ("error", "tp_not_dividing_heads", flag,
            "%s has %d attention heads, which tp_size %d does not divide; SGLang accepts the flags and fails only when "
            "it loads the weights: 'AssertionError: %d is not divisible by %d'" % (which, heads, tp, heads, tp),
            "Give %stp_size a divisor of %d (%s)." % (REF, heads, divisors))


def test_tp_must_divide_the_attention_heads():
    assert found({"tp_size": 8}, "tp_not_dividing_heads", "tp_not_dividing_kv_heads", model=facts()) == [
        heads_error(28, 8)]
    assert found({"tp_size": 3}, "tp_not_dividing_heads", model=facts(num_attention_heads=32))[0][4] == \
        "Give %stp_size a divisor of 32 (1, 2, 4, 8, 16)." % REF
    assert found({"tp_size": 5}, "tp_not_dividing_heads", model=facts(num_attention_heads=6, num_key_value_heads=6)) \
        == [heads_error(6, 5, divisors="1, 2, 3, 6")]
    assert found({"tp_size": 4}, "tp_not_dividing_heads", "tp_not_dividing_kv_heads", model=facts()) == []


def kv_error(kv, tp, heads, flag="tp_size", which="the model"):
    return ("error", "tp_not_dividing_kv_heads", flag,
            "%s has %d key/value heads; tp_size %d neither divides them nor is a multiple of them, so SGLang fails when "
            "it loads the weights: 'AssertionError: %d is not divisible by %d'" % (which, kv, tp, max(tp, kv), min(tp, kv)),
            "Give %stp_size a divisor or a multiple of %d that also divides the %d attention heads." % (REF, kv, heads))


def test_tp_must_divide_or_be_a_multiple_of_the_kv_heads():
    assert found({"tp_size": 6}, "tp_not_dividing_heads", "tp_not_dividing_kv_heads",
                 model=facts(num_attention_heads=12, num_key_value_heads=4)) == [kv_error(4, 6, 12)]
    assert found({"tp_size": 4}, "tp_not_dividing_heads", "tp_not_dividing_kv_heads",
                 model=facts(num_attention_heads=12, num_key_value_heads=6)) == [kv_error(6, 4, 12)]
    for tp, kv in ((4, 4), (8, 4), (2, 4)):  # equal, a multiple, a divisor
        model = facts(num_attention_heads=32, num_key_value_heads=kv)
        assert found({"tp_size": tp}, "tp_not_dividing_kv_heads", model=model) == []
    model = facts(num_attention_heads=12, num_key_value_heads=None)
    assert found({"tp_size": 6}, "tp_not_dividing_kv_heads", model=model) == []


def test_mla_models_have_no_head_split_rule():
    assert found({"tp_size": 8}, "tp_not_dividing_heads", model=facts(mla=True)) == []


@pytest.mark.parametrize("args", [{"attn_dp_size": 2}, {"attn_cp_size": 2}])
def test_attention_data_or_context_parallel_splits_heads_otherwise(args):
    assert found(dict(args, tp_size=8), "tp_not_dividing_heads", model=facts()) == []


def test_dp_size_splits_the_heads_only_with_dp_attention():
    assert found({"tp_size": 8, "dp_size": 2}, "tp_not_dividing_heads", model=facts(), release="0.5.20") == \
        [heads_error(28, 8)]
    assert found({"tp_size": 8, "dp_size": 2, "enable_dp_attention": True}, "tp_not_dividing_heads", model=facts(),
                 release="0.5.20") == []
    assert found({"tp_size": 8, "enable_dp_attention": True}, "tp_not_dividing_heads", model=facts(),
                 release="0.5.20") == []
    assert found({"tp_size": 8, "dp_size": 1, "attn_dp_size": 1, "attn_cp_size": 1}, "tp_not_dividing_heads",
                 model=facts()) == [heads_error(28, 8)]


def test_one_gpu_splits_nothing():
    assert found({"tp_size": 1}, "tp_not_dividing_heads", model=facts(num_attention_heads=7)) == []


def mismatch(method, wanted):
    return ("error", "quantization_mismatch", "quantization",
            "Quantization method specified in the model config (%s) does not match the quantization method specified in "
            "the `quantization` argument (%s)." % (method, wanted),
            "The checkpoint is already quantized with %s: drop %squantization (SGLang reads it from the checkpoint) or "
            "give %s." % (method, REF, method))


def relaxed_quantization():
    """0.5.23's table with --quantization's choices taken away (a fork, or a release that lists fewer)."""
    table = TABLES["0.5.23"]
    return dict(table, actions=[dict(a, choices=None) if a["dest"] == "quantization" else a for a in table["actions"]])


def test_quantization_that_the_checkpoint_contradicts():
    assert found({"quantization": "fp8"}, "quantization_mismatch", model=facts(quant_method="awq")) == \
        [mismatch("awq", "fp8")]
    assert [f["code"] for f in lint({"quantization": "GPTQ"}, model=facts(quant_method="awq")).errors] == \
        ["invalid_choice"]  # argparse's choices are case-sensitive; without choices the rule reads it as gptq
    result = sf.lint_server_args(dict(MODEL, quantization="GPTQ"), relaxed_quantization(), "0.5.23", HISTORY,
                                 model=facts(quant_method="awq"))
    assert [(f["severity"], f["code"], f["flag"], f["message"], f["hint"]) for f in result.findings
            if f["code"] == "quantization_mismatch"] == [mismatch("awq", "gptq")]
    assert found({"quantization": "awq"}, "quantization_mismatch", model=facts(quant_method="awq")) == []
    assert found({"quantization": "fp8"}, "quantization_mismatch", model=facts(quant_method=None)) == []


# SGLang 0.5.23's compatible_quantization_methods, the Marlin overrides and online requantization (see rules.py).
COMPATIBLE = [("modelopt_fp8", "modelopt"), ("modelopt_fp4", "modelopt"), ("modelopt_fp4", "fp8"),
              ("modelopt_mixed", "modelopt"), ("nvfp4_online", "fp8"), ("nvfp4_online", "modelopt_fp8"),
              ("petit_nvfp4", "modelopt"), ("w8a8_int8", "compressed-tensors"), ("w8a8_int8", "compressed_tensors"),
              ("w8a8_fp8", "compressed-tensors"), ("w8a8_fp8", "compressed_tensors"),
              ("auto-round-int8", "compressed-tensors"), ("auto-round-int8", "compressed_tensors"),
              ("awq_marlin", "awq"), ("gptq_marlin", "gptq"), ("moe_wna16", "awq"), ("moe_wna16", "gptq"),
              ("unquant", "fp8"), ("quark_mxfp4", "fp8")]


@pytest.mark.parametrize("wanted,method", COMPATIBLE)
def test_quantization_compatible_with_the_checkpoint(wanted, method):
    assert found({"quantization": wanted}, "quantization_mismatch", model=facts(quant_method=method)) == []
    assert found({"quantization": "mxfp4"}, "quantization_mismatch", model=facts(quant_method=method)) == \
        [mismatch(method, "mxfp4")]


@pytest.mark.parametrize("wanted,method", [("minimax_m3_nvfp4", "mxfp8"), ("gptq_marlin_24", "gptq"),
                                           ("marlin", "gptq"), ("marlin", "awq")])
def test_quantization_names_of_other_releases_compatible_with_the_checkpoint(wanted, method):
    """Names 0.5.23's argparse choices lack (earlier or fork releases): the rule still reads them as compatible."""
    relaxed = relaxed_quantization()
    result = sf.lint_server_args(dict(MODEL, quantization=wanted), relaxed, "0.5.23", HISTORY,
                                 model=facts(quant_method=method))
    assert [f for f in result.findings if f["code"] == "quantization_mismatch"] == []
    result = sf.lint_server_args(dict(MODEL, quantization=wanted), relaxed, "0.5.23", HISTORY,
                                 model=facts(quant_method="bitsandbytes"))
    assert [f["code"] for f in result.findings if f["code"] == "quantization_mismatch"] == ["quantization_mismatch"]


def draft(**extra):
    return facts(**dict({"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096,
                         "vocab_size": 128256}, **extra))


def test_an_eagle_draft_of_another_width():
    target = facts(hidden_size=4096)
    expected = [("error", "draft_hidden_size_mismatch", "speculative_draft_model_path",
                 "the EAGLE draft model reads hidden states 2048 wide, but the target model's hidden_size is 4096: the "
                 "draft was trained for another model, and SGLang fails when it loads the draft weights (shape mismatch)",
                 "Use a draft model trained for this target model in %sspeculative_draft_model_path." % REF)]
    args = {"speculative_algorithm": "eagle", "speculative_draft_model_path": "/d"}
    narrow = facts(num_attention_heads=16, num_key_value_heads=8, hidden_size=2048)
    assert found(args, "draft_hidden_size_mismatch", model=target, draft=narrow) == expected
    assert found(args, "draft_hidden_size_mismatch", model=target, draft=dict(narrow, hidden_size=4096)) == []
    assert found(args, "draft_hidden_size_mismatch", model=facts(hidden_size=None), draft=narrow) == []
    assert found(args, "draft_hidden_size_mismatch", model=target, draft=dict(narrow, hidden_size=None)) == []
    assert found(args, "draft_hidden_size_mismatch", draft=narrow) == []
    assert found({"speculative_draft_model_path": "/d"}, "draft_hidden_size_mismatch", model=target, draft=narrow) == []


def test_an_eagle3_draft_reads_target_hidden_size():
    target = facts(hidden_size=4096)
    args = {"speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "/d"}
    fits = facts(num_attention_heads=16, num_key_value_heads=8, hidden_size=2048, target_hidden_size=4096)
    assert found(args, "draft_hidden_size_mismatch", model=target, draft=fits) == []
    wrong = dict(fits, target_hidden_size=5120)
    assert [f[3][:60] for f in found(args, "draft_hidden_size_mismatch", model=target, draft=wrong)] == [
        "the EAGLE3 draft model reads hidden states 5120 wide, but th"]
    # without target_hidden_size an EAGLE3 draft reads its own width
    assert [f[3][:60] for f in found(args, "draft_hidden_size_mismatch", model=target,
                                     draft=dict(fits, target_hidden_size=None))] == [
        "the EAGLE3 draft model reads hidden states 2048 wide, but th"]
    # EAGLE (not 3) ignores target_hidden_size
    assert found(dict(args, speculative_algorithm="EAGLE"), "draft_hidden_size_mismatch", model=target,
                 draft=dict(fits, hidden_size=4096, target_hidden_size=5120)) == []


def test_other_algorithms_do_not_compare_widths():
    target = facts(hidden_size=4096)
    narrow = facts(num_attention_heads=16, num_key_value_heads=8, hidden_size=2048, vocab_size=152064)
    for algorithm in ("NEXTN", "STANDALONE"):
        assert found({"speculative_algorithm": algorithm, "speculative_draft_model_path": "/d"},
                     "draft_hidden_size_mismatch", model=target, draft=narrow) == []


def test_a_standalone_draft_of_another_vocabulary():
    args = {"speculative_algorithm": "STANDALONE", "speculative_draft_model_path": "/d"}
    assert found(args, "draft_vocab_mismatch", model=facts(vocab_size=152064), draft=draft()) == [
        ("warning", "draft_vocab_mismatch", "speculative_draft_model_path",
         "the standalone draft model has a vocabulary of 128256 tokens, the target 152064: its proposals are token ids "
         "of another tokenizer, so almost none will be accepted",
         "Use a smaller model of the same family (same tokenizer) as the draft.")]
    assert found(args, "draft_vocab_mismatch", model=facts(vocab_size=128256), draft=draft()) == []
    assert found(args, "draft_vocab_mismatch", model=facts(vocab_size=None), draft=draft()) == []
    assert found(args, "draft_vocab_mismatch", model=facts(), draft=draft(vocab_size=None)) == []
    assert found(dict(args, speculative_algorithm="EAGLE"), "draft_vocab_mismatch", model=facts(), draft=draft()) == []


def test_the_draft_models_heads_split_by_the_same_tp():
    args = {"speculative_algorithm": "STANDALONE", "speculative_draft_model_path": "/d", "tp_size": 8}
    small = facts(num_attention_heads=12, num_key_value_heads=2, hidden_size=1536, vocab_size=152064)
    assert found(args, "tp_not_dividing_heads", model=facts(num_attention_heads=32, num_key_value_heads=8),
                 draft=small) == [heads_error(12, 8, "speculative_draft_model_path", "the draft model", "1, 2, 3, 4, 6, 12")]
    # the draft's heads are checked even when the target's facts are unknown
    assert found(args, "tp_not_dividing_heads", draft=small) == [
        heads_error(12, 8, "speculative_draft_model_path", "the draft model", "1, 2, 3, 4, 6, 12")]
    assert found(dict(args, speculative_algorithm=None), "tp_not_dividing_heads", draft=small) == []


# ---------------------------------------------------------------------------------------------------------------------
# What replaced removed and deprecated flags (REPLACEMENTS, VALUE_HINTS): the hint of the lint's finding

REPLACED = [
    ("enforce_piecewise_cuda_graph", True, "0.5.23",
     "Use cuda_graph_backend_prefill: breakable instead (an explicit prefill CUDA-graph backend is locked and skips "
     "every auto-disable rule, which is what --enforce-piecewise-cuda-graph did; 0.5.14-0.5.19 mapped it to the "
     "tc_piecewise backend, which 0.5.23 removed)."),
    ("disable_piecewise_cuda_graph", True, "0.5.23",
     "Use cuda_graph_backend_prefill: disabled instead (the piecewise CUDA graph is now the prefill CUDA graph)."),
    ("enable_breakable_cuda_graph", True, "0.5.14",
     "Use cuda_graph_backend_prefill: breakable instead (the breakable CUDA graph is now a prefill CUDA-graph backend)."),
    ("enable_piecewise_cuda_graph", True, "0.5.12",
     "Drop it: the piecewise (prefill) CUDA graph is on by default since 0.5.10; cuda_graph_backend_prefill selects its "
     "backend from 0.5.14."),
    ("enable_piecewise_cuda_graph", True, "0.5.23",
     "Drop it: the piecewise (prefill) CUDA graph is on by default since 0.5.10; cuda_graph_backend_prefill selects its "
     "backend from 0.5.14."),
    ("piecewise_cuda_graph_tokens", [4, 8], "0.5.14",
     "Use cuda_graph_bs_prefill instead (the prefill CUDA graph took over these sizes)."),
    ("piecewise_cuda_graph_max_tokens", 64, "0.5.19",
     "Use cuda_graph_max_bs_prefill instead (the prefill CUDA graph took over this limit)."),
    ("piecewise_cuda_graph_compiler", "eager", "0.5.14",
     "Use cuda_graph_tc_compiler instead (renamed with the prefill CUDA graph)."),
    ("piecewise_cuda_graph_compiler", "eager", "0.5.21",
     "Use cuda_graph_tc_compiler instead (renamed with the prefill CUDA graph)."),
    ("piecewise_cuda_graph_compiler", "eager", "0.5.22",
     "Drop it: the torch.compile prefill graph (tc_piecewise) and its compiler option are gone."),
    ("cuda_graph_tc_compiler", "eager", "0.5.22",
     "Drop it: the torch.compile prefill graph (tc_piecewise) and its compiler option are gone."),
    ("cuda_graph_max_bs", 64, "0.5.23", "Use cuda_graph_max_bs_decode instead (CUDA-graph limits are per phase now)."),
    ("cuda_graph_bs", [1, 2], "0.5.14", "Use cuda_graph_bs_decode instead (CUDA-graph batch sizes are per phase now)."),
    ("disable_cuda_graph", True, "0.5.23",
     "Use cuda_graph_backend_decode: disabled instead (also set cuda_graph_backend_prefill: disabled)."),
    ("enable_dp_attention", True, "0.5.22",
     "Use attn_dp_size instead (give attn_dp_size the value dp_size had and drop dp_size (SGLang rewrites '--dp-size N "
     "--enable-dp-attention' into attn_dp_size=N, dp_size=1))."),
]


@pytest.mark.parametrize("name,value,release,hint", REPLACED, ids=["%s-%s" % (r[0], r[2]) for r in REPLACED])
def test_the_replacement_of_a_removed_or_deprecated_flag(name, value, release, hint):
    assert [f["hint"] for f in lint({name: value}, release=release).errors if f["flag"] == name] == [hint]


@pytest.mark.parametrize("name,value,release", [("disable_piecewise_cuda_graph", True, "0.5.12"),
                                                ("cuda_graph_max_bs", 64, "0.5.12"), ("cuda_graph_bs", [1, 2], "0.5.12"),
                                                ("disable_cuda_graph", True, "0.5.12"),
                                                ("enable_dp_attention", True, "0.5.20")])
def test_no_replacement_before_the_flag_was_replaced(name, value, release):
    assert [f for f in lint({name: value}, release=release).findings if f["flag"] == name] == []


def test_a_deprecated_flag_that_loads_gets_sglangs_own_deprecation_text():
    """A release whose --disable-cuda-graph is a plain store_true marked deprecated: the warning is SGLang's text."""
    table = TABLES["0.5.23"]
    loadable = dict(table, actions=[dict(a, action="_StoreTrueAction") if a["dest"] == "disable_cuda_graph" else a
                                    for a in table["actions"]])
    result = sf.lint_server_args(dict(MODEL, disable_cuda_graph=True), loadable, "0.5.23", HISTORY)
    assert [(f["severity"], f["code"], f["message"], f["hint"]) for f in result.findings
            if f["flag"] == "disable_cuda_graph"] == [
        ("warning", "deprecated_flag",
         "'--disable-cuda-graph' is deprecated and will be removed in a future release. Use "
         "'--cuda-graph-backend-{decode,prefill}=disabled' instead.",
         "Use cuda_graph_backend_decode: disabled instead (also set cuda_graph_backend_prefill: disabled).")]


@pytest.mark.parametrize("name", ["cuda_graph_backend_prefill", "cuda_graph_backend_decode"])
def test_tc_piecewise_was_removed(name):
    assert [(f["code"], f["hint"]) for f in lint({name: "tc_piecewise"}).errors] == [
        ("invalid_choice", "tc_piecewise was removed; select breakable, full, or disabled")]


@pytest.mark.parametrize("name", ["json_model_override_args", "model_loader_extra_config", "modelexpress_config"])
def test_json_text_options_take_a_mapping(name):
    result = lint({name: {"a": 1}})
    assert result.errors == []
    assert result.args[name] == '{"a":1}'
    assert [f["code"] for f in lint({name: "{not json"}).errors] != []


# ---------------------------------------------------------------------------------------------------------------------
# The helpers rules use

def test_int_is_best_effort():
    from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import rules
    assert rules._int(True) == 1 and rules._int(False, 5) == 0
    assert rules._int(4) == 4 and rules._int("12") == 12 and rules._int(" 3 ") == 3
    assert rules._int(None) == 0 and rules._int(None, 1) == 1
    assert rules._int("two", 2) == 2 and rules._int([1], 7) == 7 and rules._int(2.5, 9) == 9


def test_in_release_is_since_or_newer():
    from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import rules
    assert rules.in_release((0, 5, 23), "0.5.23") and rules.in_release((0, 5, 24), "0.5.23")
    assert not rules.in_release((0, 5, 22), "0.5.23")


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("127.8.9.1", True), ("localhost", True), ("::1", True),
                                           ("ip6-localhost", True), ("0.0.0.0", False), ("128.0.0.1", False),
                                           ("localhost.lan", False), (None, False), (127, False)])
def test_loopback_hosts(host, loopback):
    from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import rules
    assert rules.is_loopback_host(host) is loopback


# ---------------------------------------------------------------------------------------------------------------------
# After the run of 2026-12-06 (95.7%). A count the value checks refuse never reaches the rules: they read the table's
# default instead (one GPU, one stage, one node, rank 0, no topk), so they add nothing of their own to the value
# check's error (and the fallbacks of rules._int behind it are never used: tests/mutation/equivalent.yml)

def test_a_refused_pipeline_size_names_no_pipeline_in_the_enforce_warning():
    args = {"enforce_piecewise_cuda_graph": True, "pp_size": "two"}
    assert found(args, "enforce_piecewise_cuda_graph", "invalid_type", release="0.5.12") == [
        ("error", "invalid_type", "pp_size", "argument --pipeline-parallel-size/--pp-size: invalid int value: 'two'",
         "Give %spp_size a whole number, e.g. %spp_size: 1." % (REF, REF)),
        ("warning", "enforce_piecewise_cuda_graph", "enforce_piecewise_cuda_graph", enforce_message(""), ENFORCE_HINT)]


UNSET = ["prefill_graph_auto_disabled", "standalone_with_dp_attention", "tp_not_divisible_by_nodes",
         "node_rank_out_of_range", "multi_node_dp", "dp_with_attn_dp", "attn_dp_not_dividing_tp",
         "attn_cp_not_dividing_tp", "moe_dp_not_dividing_tp", "ep_moe_dp_exceed_tp", "ep_size_for_flashinfer_moe",
         "custom_all_reduce_without_p2p", "tp_not_dividing_heads", "speculative_draft_tokens_adjusted"]
REFUSED = [
    {"pp_size": "two"},
    {"dcp_size": "two"},
    {"speculative_algorithm": "STANDALONE", "attn_dp_size": "x", "tp_size": 2},
    {"nnodes": "x", "tp_size": 3},
    {"node_rank": "x"},
    {"dp_size": "x", "nnodes": 2, "attn_dp_size": 2, "tp_size": 2, "dist_init_addr": "10.0.0.1:5000"},
    {"dp_size": 2, "nnodes": "x", "tp_size": 2},
    {"dp_size": 2, "attn_dp_size": "x", "tp_size": 3},
    {"attn_cp_size": "x", "tp_size": 3},
    {"moe_dp_size": "x", "tp_size": 3},
    {"moe_dp_size": 2, "ep_size": "x", "tp_size": 2},
    {"moe_runner_backend": "flashinfer_cutlass", "ep_size": "x", "tp_size": 4},
    {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_num_draft_tokens": 8},
]


@pytest.mark.parametrize("args", REFUSED, ids=[",".join(a) for a in REFUSED])
def test_a_refused_or_unset_count_adds_no_cross_flag_finding(args):
    assert found(args, *UNSET) == []
    no_rule_failed(args)


def test_a_refused_tensor_parallel_size_splits_nothing():
    """Seven heads split by no GPU count but one; a host without P2P needs no custom all-reduce warning for one GPU."""
    kwargs = {"model": facts(num_attention_heads=7, num_key_value_heads=7), "facts": {"gpu_p2p": False}}
    assert found({"tp_size": "x"}, *UNSET, **kwargs) == []
    no_rule_failed({"tp_size": "x"}, **kwargs)


def test_a_refused_node_count_is_one_node():
    assert found({"nnodes": "x", "node_rank": 1}, "node_rank_out_of_range") == [
        ("error", "node_rank_out_of_range", "node_rank", "node_rank 1 is outside 0..0 for nnodes 1",
         "Give each node a distinct node_rank from 0 to nnodes - 1.")]


def test_a_refused_tensor_parallel_size_is_one_gpu():
    """The value check reports tp_size; the rules that divide by it read one GPU, as SGLang's default."""
    nodes = found({"tp_size": "x", "nnodes": 3, "dist_init_addr": "10.0.0.1:5000"}, "tp_not_divisible_by_nodes")
    assert [f[4] for f in nodes] == ["Make tp_size x pp_size (1) a multiple of nnodes (3)."]
    assert found({"tp_size": "x", "attn_dp_size": 2}, "attn_dp_not_dividing_tp")[0][3] == \
        "AssertionError (SGLang gives no message): attn_dp_size 2 does not divide tp_size 1"
    assert [f[1] for f in found({"tp_size": "x", "attn_cp_size": 2}, "attn_cp_not_dividing_tp")] == \
        ["attn_cp_not_dividing_tp"]
    assert sorted(f[1] for f in found({"tp_size": "x", "moe_dp_size": 2}, "moe_dp_not_dividing_tp",
                                      "ep_moe_dp_exceed_tp")) == ["ep_moe_dp_exceed_tp", "moe_dp_not_dividing_tp"]
    assert [f[4] for f in found({"tp_size": "x", "ep_size": 2, "moe_runner_backend": "flashinfer_cutlass"},
                                "ep_size_for_flashinfer_moe")] == [
        "With moe_runner_backend flashinfer_cutlass use ep_size: 1 or ep_size: 1."]


def test_a_refused_pipeline_size_is_one_stage():
    assert [f[4] for f in found({"pp_size": "x", "tp_size": 3, "nnodes": 2, "dist_init_addr": "10.0.0.1:5000"},
                                "tp_not_divisible_by_nodes")] == ["Make tp_size x pp_size (3) a multiple of nnodes (2)."]


def test_a_release_without_pipeline_parallelism_is_one_stage():
    """0.5.9-0.5.12's tables have no --pp-size: tp_size alone must divide by the nodes."""
    assert [f[4] for f in found({"tp_size": 3, "nnodes": 2, "dist_init_addr": "10.0.0.1:5000"},
                                "tp_not_divisible_by_nodes", release="0.5.12")] == [
        "Make tp_size x pp_size (3) a multiple of nnodes (2)."]


def test_a_refused_attention_dp_size_is_no_attention_dp():
    assert len(found({"enable_two_batch_overlap": True, "attn_dp_size": "x"}, "two_batch_overlap_without_a2a")) == 1
    assert found({"tp_size": 8, "attn_dp_size": "x"}, "tp_not_dividing_heads", model=facts()) == [heads_error(28, 8)]


def test_two_auto_disable_reasons_name_the_second_in_the_hint():
    assert found({"pp_size": 2, "dcp_size": 2}, "prefill_graph_auto_disabled") == [
        prefill_info("pipeline parallelism", " (also: decode context parallel (dcp_size > 1))")]


def test_attention_dp_and_cp_of_two_on_three_gpus():
    assert [f[1] for f in found({"attn_dp_size": 2, "tp_size": 3}, "attn_dp_not_dividing_tp")] == \
        ["attn_dp_not_dividing_tp"]
    assert [f[1] for f in found({"attn_cp_size": 2, "tp_size": 3}, "attn_cp_not_dividing_tp")] == \
        ["attn_cp_not_dividing_tp"]


def test_two_gpus_split_an_odd_number_of_heads():
    """Falcon-7B: 71 attention heads, 1 key/value head; only 1 divides 71 among the sizes up to 16."""
    assert found({"tp_size": 2}, "tp_not_dividing_heads", model=facts(num_attention_heads=71, num_key_value_heads=1)) \
        == [heads_error(71, 2, divisors="1")]


def test_the_divisors_offered_stop_at_sixteen():
    assert found({"tp_size": 4}, "tp_not_dividing_heads", model=facts(num_attention_heads=34, num_key_value_heads=2)) \
        == [heads_error(34, 4, divisors="1, 2")]


@pytest.mark.parametrize("args", [{"chunked_prefill_size": 1000, "page_size": 0}, {"port": "http"},
                                  {"context_length": 65536}, {"quantization": "fp8"}])
def test_values_a_rule_cannot_read_are_no_rule_failure(args):
    """No config.json, a page size of 0, a port that is not a number: the rule steps aside, it does not fail."""
    no_rule_failed(args)


def test_a_deprecated_flag_without_sglangs_own_text_gets_the_lints():
    """A release whose --enable-piecewise-cuda-graph loads (store_true) but is deprecated: SGLang prints no text of its
    own for it (no message in REPLACEMENTS), so the warning is the lint's sentence, the hint the replacement's."""
    table = TABLES["0.5.12"]
    loadable = dict(table, actions=[dict(a, action="_StoreTrueAction") if a["dest"] == "enable_piecewise_cuda_graph" else a
                                    for a in table["actions"]])
    result = sf.lint_server_args(dict(MODEL, enable_piecewise_cuda_graph=True), loadable, "0.5.12", HISTORY)
    assert [(f["severity"], f["code"], f["flag"], f["message"], f["hint"]) for f in result.findings] == [
        ("warning", "deprecated_flag", "enable_piecewise_cuda_graph",
         "--enable-piecewise-cuda-graph is deprecated in SGLang 0.5.12",
         "Drop it: the piecewise (prefill) CUDA graph is on by default since 0.5.10; cuda_graph_backend_prefill selects "
         "its backend from 0.5.14.")]
