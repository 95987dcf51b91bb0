# -*- coding: utf-8 -*-
"""gpu.ceiling's inputs, one rule at a time: parameter counts of small configs worked out by hand, each
quantisation layout's bytes per weight, each dtype and config key spelling, the TP group's link and P2P, the
server's flags, the speculative settings SGLang resolves, and the verdict's cut-offs (make mutation:
tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu import ceiling as c
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import CeilingError
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.specs import OVERHEAD_SOURCES

# hidden 8, 2 heads of 4, 1 KV head: attention 8 x (8 + 2 x 4) + 8 x 8 = 192; MLP 3 x 8 x 16 = 384
DENSE = {"hidden_size": 8, "num_hidden_layers": 2, "vocab_size": 10, "num_attention_heads": 2, "num_key_value_heads": 1,
         "intermediate_size": 16}


def test_a_dense_model_counted_by_hand():
    assert c.count_params(DENSE) == {
        "layers": 2, "hidden_size": 8, "vocab_size": 10, "tied": False, "moe": False, "experts": 0, "experts_per_token": 0,
        "linear_attention_layers": 0, "moe_layers": 0, "expert_params": 0, "routed_active_params": 0,
        "total_params": 2 * (192 + 384) + 2 * 80, "active_params": 2 * (192 + 384) + 2 * 80,
        "read_layer_params": 2 * (192 + 384), "read_head_params": 80}


def test_tied_embeddings_are_counted_once():
    counts = c.count_params(dict(DENSE, tie_word_embeddings=True))
    assert (counts["tied"], counts["total_params"], counts["active_params"]) == (True, 1152 + 80, 1152 + 80)


def test_a_moe_model_counted_by_hand():
    # layer 0 dense (first_k_dense_replace 1); layer 1: 4 experts of 3 x 8 x 2 = 48, top 2, router 8 x 4 = 32
    config = dict(DENSE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=2, first_k_dense_replace=1)
    assert c.count_params(config) == {
        "layers": 2, "hidden_size": 8, "vocab_size": 10, "tied": False, "moe": True, "experts": 4, "experts_per_token": 2,
        "linear_attention_layers": 0, "moe_layers": 1, "expert_params": 48, "routed_active_params": 96,
        "total_params": 576 + (192 + 4 * 48 + 32) + 160, "active_params": 576 + (192 + 2 * 48 + 32) + 160,
        "read_layer_params": 576 + 192 + 96 + 32, "read_head_params": 80}


def test_experts_sized_by_intermediate_size_take_the_dense_size_from_dense_intermediate_size():
    config = dict(DENSE, intermediate_size=2, dense_intermediate_size=16, num_experts=4, num_experts_per_tok=2,
                  first_k_dense_replace=1)
    assert c.count_params(config)["total_params"] == 576 + (192 + 4 * 48 + 32) + 160


def test_shared_experts_count_in_total_and_active():
    # 2 shared experts of intermediate 2: 3 x 8 x 4 = 96 more per MoE layer, read by every token
    config = dict(DENSE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=2, n_shared_experts=2)
    counts = c.count_params(config)
    assert counts["moe_layers"] == 2
    assert counts["active_params"] == 2 * (192 + 2 * 48 + 96 + 32) + 160
    explicit = dict(config, shared_expert_intermediate_size=8)  # 3 x 8 x 8 = 192
    assert c.count_params(explicit)["active_params"] == 2 * (192 + 2 * 48 + 192 + 32) + 160


def test_linear_attention_layers_counted_by_hand():
    # gated DeltaNet: key dim 4, value dim 4, kernel 2: 8 x 16 + 8 x 2 + 12 x 2 + 4 x 8 = 200; every 2nd layer full
    config = dict(DENSE, num_hidden_layers=4, full_attention_interval=2, linear_num_key_heads=1, linear_num_value_heads=1,
                  linear_key_head_dim=4, linear_value_head_dim=4, linear_conv_kernel_dim=2)
    counts = c.count_params(config)
    assert counts["linear_attention_layers"] == 2
    assert counts["read_layer_params"] == 2 * (200 + 384) + 2 * (192 + 384)


def test_layer_types_from_the_config_list():
    types = ["linear_attention", "full_attention", "linear_attention", "linear_attention"]
    assert c._layer_types({"layer_types": types}, 4) == ["linear", "full", "linear", "linear"]
    assert c._layer_types({"layer_types": types}, 3) == ["full", "full", "full"]
    assert c._layer_types({"full_attention_interval": 3, "linear_num_value_heads": 2}, 6) == [
        "linear", "linear", "full", "linear", "linear", "full"]
    assert c._layer_types({"full_attention_interval": 3}, 2) == ["full", "full"]


def test_default_linear_attention_shape():
    # key and value head dims default to 128 and the kernel to 4
    assert c._linear_attention_params({"linear_num_key_heads": 1, "linear_num_value_heads": 1}, 8) == (
        8 * (2 * 128 + 2 * 128) + 8 * 2 + (2 * 128 + 128) * 4 + 128 * 8)
    assert c._linear_attention_params({"linear_num_key_heads": 2, "linear_num_value_heads": 3, "linear_key_head_dim": 4,
                                       "linear_value_head_dim": 5, "linear_conv_kernel_dim": 2}, 8) == 598


@pytest.mark.parametrize("cfg, params", [
    ({"num_attention_heads": 2, "num_key_value_heads": 1}, 192),
    ({"n_head": 2, "num_kv_heads": 1}, 192),
    ({"num_heads": 2, "n_kv_heads": 1}, 192),
    ({"num_attention_heads": 2}, 8 * (8 + 16) + 64),                  # no KV heads: as many as query heads
    ({"num_attention_heads": 2, "num_key_value_heads": 1, "attn_output_gate": True}, 8 * (16 + 8) + 64),
    ({"num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8}, 8 * (16 + 16) + 128),
])
def test_attention_weights_of_each_spelling(cfg, params):
    assert c._attention_params(cfg, 8) == params


def test_mla_attention_weights():
    mla = {"num_attention_heads": 2, "kv_lora_rank": 4, "qk_nope_head_dim": 2, "qk_rope_head_dim": 1, "v_head_dim": 3}
    assert c._attention_params(mla, 8) == 8 * 2 * 3 + 8 * 5 + 4 * 2 * 5 + 2 * 3 * 8
    assert c._attention_params(dict(mla, q_lora_rank=5), 8) == (8 * 5 + 5 * 2 * 3) + 8 * 5 + 4 * 2 * 5 + 2 * 3 * 8
    defaults = {"num_attention_heads": 2, "kv_lora_rank": 4}  # nope 128, rope 64, v 128
    assert c._attention_params(defaults, 8) == 8 * 2 * 192 + 8 * 68 + 4 * 2 * 256 + 2 * 128 * 8


def test_attention_without_heads_is_an_error():
    with pytest.raises(CeilingError, match="^config has no num_attention_heads$"):
        c._attention_params({}, 8)


def test_missing_sizes_are_named():
    with pytest.raises(CeilingError) as caught:
        c.count_params({"hidden_size": 8, "vocab_size": 10})
    assert str(caught.value) == "config needs hidden_size, num_hidden_layers and vocab_size (got 8, None, 10)"
    with pytest.raises(CeilingError, match="^config has no intermediate_size$"):
        c.count_params(dict(DENSE, intermediate_size=None))


@pytest.mark.parametrize("keys", [("d_model", "n_layer"), ("n_embd", "num_layers")])
def test_other_spellings_of_the_sizes(keys):
    config = {k: v for k, v in DENSE.items() if k not in ("hidden_size", "num_hidden_layers")}
    config.update({keys[0]: 8, keys[1]: 2})
    assert c.count_params(config)["read_layer_params"] == 1152


@pytest.mark.parametrize("key", ["text_config", "llm_config", "language_config", "thinker_config"])
def test_the_language_model_part_of_a_multimodal_config(key):
    config = {key: {"hidden_size": 8, "dtype": "float16"}, "dtype": "bfloat16", "tie_word_embeddings": True,
              "vision_config": {"hidden_size": 99}}
    assert c.text_config(config) == {"hidden_size": 8, "dtype": "float16", "tie_word_embeddings": True,
                                     "vision_config": {"hidden_size": 99}}


def test_a_nested_text_config_inside_another_part():
    config = {"thinker_config": {"text_config": {"hidden_size": 8}, "audio": 1}, "dtype": "bfloat16"}
    assert c.text_config(config) == {"hidden_size": 8, "dtype": "bfloat16"}
    assert c.text_config({"hidden_size": 8, "text_config": "x"}) == {"hidden_size": 8, "text_config": "x"}


@pytest.mark.parametrize("cfg, flags", [
    ({"num_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 2}, [False, True, False, True, False]),
    ({"num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 3}, [False, False, True, False, False]),
    ({"num_experts": 4, "num_experts_per_tok": 2, "interleave_moe_layer_step": 2}, [False, True, False, True, False]),
    ({"num_experts": 4, "num_experts_per_tok": 2, "moe_layer_freq": 3}, [True, False, False, True, False]),
    ({"num_experts": 4, "num_experts_per_tok": 2, "mlp_only_layers": [0, 3]}, [False, True, True, False, True]),
    ({"n_routed_experts": 4, "experts_per_token": 2}, [True] * 5),
    ({"num_local_experts": 4, "num_experts_per_token": 2}, [True] * 5),
    ({"moe_num_experts": 4, "moe_top_k": 2}, [True] * 5),
    ({"num_experts": 1, "num_experts_per_tok": 1}, [False] * 5),
    ({"num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 0}, [True] * 5),
])
def test_which_layers_are_moe(cfg, flags):
    assert c._moe_layout(dict(cfg, moe_intermediate_size=2), 5)[0] == flags


def test_the_expert_shape():
    assert c._moe_layout({"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 3, "num_shared_experts": 1}, 1) == (
        [True], {"experts": 8, "top_k": 2, "expert_inter": 3, "shared_inter": 3})
    assert c._moe_layout({"num_experts": 8, "num_experts_per_tok": 2, "intermediate_size": 5}, 1)[1]["expert_inter"] == 5


def test_a_moe_without_top_k_is_named():
    with pytest.raises(CeilingError) as caught:
        c._moe_layout({"num_experts": 4}, 2)
    assert str(caught.value) == "MoE config (4 experts) has no num_experts_per_tok"


@pytest.mark.parametrize("qcfg, expected", [
    ({"quant_method": "fp8"}, (1.0, "fp8")), ({"quant_method": "FBGEMM_FP8"}, (1.0, "fp8")),
    ({"quant_method": "w8a8_fp8"}, (1.0, "fp8")), ({"quant_method": "ptpc_fp8"}, (1.0, "fp8")),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128}, (0.5 + 2.5 / 128, "gptq int4")),
    ({"quant_method": "awq", "w_bit": 4, "q_group_size": 64}, (0.5 + 2.5 / 64, "awq int4")),
    ({"quant_method": "gptq_marlin", "bits": 8, "group_size": 128}, (1.0 + 3.0 / 128, "gptq_marlin int8")),
    ({"quant_method": "awq_marlin"}, (0.5 + 2.5 / 128, "awq_marlin int4")),
    ({"quant_method": "auto-round", "bits": 4, "group_size": -1}, (0.5, "auto-round int4")),
    ({"quant_method": "autoround", "bits": 4, "group_size": 0}, (0.5, "autoround int4")),
    ({"quant_method": "marlin", "bits": 4, "group_size": 32}, (0.5 + 2.5 / 32, "marlin int4")),
    ({"quant_method": "hqq", "bits": 2, "group_size": 64}, (0.25 + 2.25 / 64, "hqq int2")),
    ({"quant_method": "quark_int4", "bits": 4, "group_size": 128}, (0.5 + 2.5 / 128, "quark_int4 int4")),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, (0.5 + 0.5 / 64, "bnb nf4")),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True}, (1.0, "bnb int8")),
    ({"quant_method": "mxfp4"}, (0.53125, "mxfp4")),
    ({"quant_method": "nvfp4"}, (0.5625, "nvfp4")), ({"quant_method": "modelopt_fp4"}, (0.5625, "nvfp4")),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, (0.5625, "nvfp4")),
    ({"quant_method": "modelopt", "quant_algo": "FP8"}, (1.0, "modelopt fp8")),
    ({"quant_algo": "FP8"}, (1.0, "fp8")),
    ({"quant_method": "foo", "bits": 3, "group_size": 64}, (0.375 + 2.375 / 64, "foo int3")),
    ({"bits": 8}, (1.0, "quantised int8")),
])
def test_bytes_per_weight_of_each_quantisation(qcfg, expected):
    assert c.quantisation_bytes({"quantization_config": qcfg}) == expected


def test_compressed_tensors_layouts():
    def group(weights):
        return {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": weights}}}}
    assert c.quantisation_bytes(group({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128})) == (
        0.5 + 2.5 / 128, "compressed-tensors int4")
    assert c.quantisation_bytes(group({"num_bits": 8, "type": "float", "strategy": "channel"})) == (1.0, "compressed-tensors fp8")
    assert c.quantisation_bytes(group({"num_bits": 8, "type": "int", "group_size": 128})) == (1.0, "compressed-tensors int8")
    assert c.quantisation_bytes(group({"num_bits": 4, "type": "float", "group_size": 16})) == (0.5625, "nvfp4")
    assert c.quantisation_bytes(group({"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32})) == (
        0.5 + 2.5 / 32, "compressed-tensors fp4")
    with pytest.raises(CeilingError) as caught:
        c.quantisation_bytes(group({"type": "int"}))
    assert str(caught.value) == "compressed-tensors quantization_config without weight num_bits: pass bytes_per_param"


def test_no_quantisation_and_an_unknown_method():
    assert c.quantisation_bytes({}) is None
    assert c.quantisation_bytes({"quantization_config": "fp8"}) is None
    assert c.quantisation_bytes({"quantization": {"quant_method": "fp8"}}) == (1.0, "fp8")
    with pytest.raises(CeilingError) as caught:
        c.quantisation_bytes({"quantization_config": {"quant_method": "Foo"}})
    assert str(caught.value) == "unknown quantization_config quant_method 'foo': pass bytes_per_param"


@pytest.mark.parametrize("dtype, size", [
    ("float32", 4.0), ("fp32", 4.0), ("float", 4.0), ("bfloat16", 2.0), ("bf16", 2.0), ("float16", 2.0), ("fp16", 2.0),
    ("half", 2.0), ("float8", 1.0), ("fp8", 1.0), ("float8_e4m3fn", 1.0), ("float8_e5m2", 1.0), ("int8", 1.0), ("w8a8", 1.0),
    ("int4", 0.5), ("w4a16", 0.5), ("fp4", 0.5), ("nvfp4", 0.5625), ("mxfp4", 0.53125), ("torch.BFloat16", 2.0), (" fp8 ", 1.0),
])
def test_bytes_of_each_dtype(dtype, size):
    assert c.dtype_bytes(dtype) == size


def test_an_unknown_dtype_lists_the_known_ones():
    with pytest.raises(CeilingError) as caught:
        c.dtype_bytes("int3")
    assert str(caught.value) == ("unknown dtype 'int3': one of bf16, bfloat16, float, float16, float32, float8, float8_e4m3fn,"
                                 " float8_e5m2, fp16, fp32, fp4, fp8, half, int4, int8, mxfp4, nvfp4, w4a16, w8a8, or pass"
                                 " bytes_per_param")
    with pytest.raises(CeilingError):
        c.dtype_bytes(None)


@pytest.mark.parametrize("value, number", [(None, None), ("", None), ("3.5", 3.5), (2, 2.0), (0, 0.0)])
def test_numbers_from_config_values(value, number):
    assert c._num(value) == number


@pytest.mark.parametrize("value, message", [(True, "expected a number, got a boolean: True"),
                                            ("abc", "expected a number, got 'abc'"), ([1], "expected a number, got [1]")])
def test_what_is_not_a_number_is_named(value, message):
    with pytest.raises(CeilingError) as caught:
        c._num(value)
    assert str(caught.value) == message


@pytest.mark.parametrize("links, members, worst", [
    ({"0-1": "NV4", "0-2": "PHB", "1-2": "SYS"}, [0, 1, 2], "SYS"),
    ({"0-1": "NV4", "0-2": "PHB", "1-2": "SYS"}, [0, 1], "NV4"),
    ({"0-1": "PIX", "0-2": "PXB", "1-2": "PIX"}, [0, 1, 2], "PXB"),
    ({"0-1": "NODE", "0-2": "PHB"}, [0, 1, 2], "NODE"),
    ({"0-1": "NV2", "0-2": "pix"}, [0, 1, 2], "PIX"),
    ({"0-1": "PHB", "0-2": "weird"}, [0, 1, 2], "WEIRD"),
    ({"1-2": "PHB"}, [2, 1], "PHB"),
    ({"0-1": None}, [0, 1], None),
    ({}, [0, 1], None),
])
def test_the_slowest_link_of_a_tp_group(links, members, worst):
    assert c._worst_link(links, members) == worst


@pytest.mark.parametrize("p2p, members, ok", [
    ({"0-1": "OK"}, [0, 1], True), ({"0-1": "ok"}, [0, 1], True), ({"0-1": "CNS"}, [0, 1], False),
    ({"0-1": "OK", "0-2": "NS", "1-2": "OK"}, [0, 1, 2], False), ({"0-1": "OK", "0-2": "NS"}, [0, 1], True),
    ({"r": {"0-1": "OK"}, "w": {"0-1": "NS"}}, [0, 1], False), ({"r": {"0-1": "OK"}, "w": {}}, [0, 1], True),
    ({"w": {"0-1": "OK"}}, [0, 1], True), ({"0-1": {"nested": 1}}, [0, 1], None), ({"2-3": "OK"}, [0, 1], None),
    ({}, [0, 1], None), ("OK", [0, 1], None),
])
def test_p2p_of_every_pair(p2p, members, ok):
    assert c._p2p_ok(p2p, members) == ok


def test_facts_inputs_of_the_first_tp_gpus():
    facts = {"gpus": [{"name": "NVIDIA RTX A6000", "pcie_gen_max": "4", "pcie_width_max": 16},
                      {"name": "NVIDIA RTX A6000", "pcie_gen_max": 3, "pcie_width_max": "8"},
                      {"name": "other", "pcie_gen_max": 1, "pcie_width_max": 1}],
             "links": {"0-1": "PHB", "0-2": "SYS"}, "p2p_read": {"0-1": "OK"}, "p2p": {"0-1": "NS"}}
    assert c.facts_inputs(facts, 2) == {"gpu": "NVIDIA RTX A6000", "pcie_gen": 3, "pcie_width": 8, "link": "PHB", "p2p": True}
    assert c.facts_inputs(facts, 1) == {"gpu": "NVIDIA RTX A6000", "pcie_gen": 4, "pcie_width": 16}
    assert c.facts_inputs(dict(facts, p2p_read=None), 2)["p2p"] is False
    unknown = {"gpus": [{"name": "x", "pcie_gen_max": "N/A", "pcie_width_max": ""}, {"pcie_gen_max": None}]}
    assert c.facts_inputs(unknown, 2) == {"gpu": "x", "link": None, "p2p": None}
    assert c.facts_inputs({}, 0) == {}


@pytest.mark.parametrize("value", ["", "0", "false", "no", "off", "none", "disabled", " False ", None, False, 0])
def test_flag_values_that_are_off(value):
    assert c._truthy(value) is False


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", "x", True, 1])
def test_flag_values_that_are_on(value):
    assert c._truthy(value) is True


def test_server_args_that_decide_the_model_inputs():
    args = {"tp_size": "4", "disable_cuda_graph": "true", "disable_custom_all_reduce": 1, "enable_torch_compile": "yes",
            "speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4}
    assert c.server_args_inputs(args) == {"tp": 4, "cuda_graphs": False, "custom_allreduce": False, "torch_compile": True,
                                          "speculative": {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1,
                                                          "num_draft_tokens": 4}}
    off = {"tp_size": 0, "disable_cuda_graph": "false", "disable_custom_all_reduce": "0", "enable_torch_compile": "off",
           "speculative_algorithm": None}
    assert c.server_args_inputs(off) == {}
    assert c.server_args_inputs(None) == {} and c.server_args_inputs(["tp_size"]) == {}


AUTO = "speculative steps not given: SGLang's automatic choice, 3 steps, top-k 1, 4 draft tokens"


def spec(algorithm, steps, topk, draft, max_accept, notes=(), layers=1, vocab=None, params=None):
    return {"algorithm": algorithm, "num_steps": steps, "eagle_topk": topk, "num_draft_tokens": draft,
            "max_accept_length": max_accept, "draft_layers": layers, "draft_vocab": vocab, "draft_params_b": params,
            "notes": list(notes)}


@pytest.mark.parametrize("given, resolved", [
    ("EAGLE", spec("EAGLE", 3, 1, 4, 4.0, [AUTO])),
    ({"algorithm": "nextn", "num_steps": 2, "eagle_topk": 1, "num_draft_tokens": 8}, spec("EAGLE", 2, 1, 3, 3.0)),
    ({"algorithm": "EAGLE3", "num_steps": 5, "eagle_topk": 4, "num_draft_tokens": 16}, spec("EAGLE3", 5, 4, 16, 6.0)),
    ({"algorithm": "EAGLE", "num_steps": 5, "eagle_topk": 4}, spec("EAGLE", 5, 4, 6, 6.0)),
    ({"algorithm": "EAGLE", "num_steps": "1", "eagle_topk": 0}, spec("EAGLE", 1, 1, 2, 2.0)),
    ({"algorithm": "NGRAM", "num_draft_tokens": 8}, spec("NGRAM", 0, 1, 8, 8.0)),
    ({"algorithm": "NGRAM", "num_steps": 2, "eagle_topk": 1, "num_draft_tokens": 8}, spec("NGRAM", 2, 1, 8, 8.0)),
    ({"algorithm": "STANDALONE", "num_steps": 3, "draft_params_b": "0.5"}, spec("STANDALONE", 3, 1, 4, 4.0, params=0.5)),
    ({"algorithm": " eagle ", "num_steps": 3, "draft_layers": "2", "draft_vocab": "32000"},
     spec("EAGLE", 3, 1, 4, 4.0, layers=2, vocab=32000.0)),
])
def test_speculative_settings_as_sglang_resolves_them(given, resolved):
    assert c.speculative_settings(given) == resolved


@pytest.mark.parametrize("given", [None, "", {}, "none", "False", "NULL", {"algorithm": None}])
def test_speculation_off(given):
    assert c.speculative_settings(given) is None


@pytest.mark.parametrize("given, message", [
    ([1], "speculative must be a dict (algorithm, num_steps, eagle_topk, num_draft_tokens) or an algorithm name, got [1]"),
    ({"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": -1}, "speculative eagle_topk must be >= 1 and num_steps >= 0 (got -1, 3)"),
    ({"algorithm": "NGRAM", "num_steps": -1, "num_draft_tokens": 4}, "speculative eagle_topk must be >= 1 and num_steps >= 0 (got 1, -1)"),
    ({"algorithm": "NGRAM", "num_draft_tokens": 1}, "speculative num_draft_tokens must be >= 2 (got 1)"),
    ({"algorithm": "STANDALONE", "num_steps": 3},
     "speculative algorithm STANDALONE needs draft_params_b (the draft model's parameters in billions)"),
])
def test_bad_speculative_settings_are_named(given, message):
    with pytest.raises(CeilingError) as caught:
        c.speculative_settings(given)
    assert str(caught.value) == message


def test_distinct_experts_of_a_verify_pass():
    assert c.distinct_experts(256, 8, 4) == 256 * (1 - (248 / 256) ** 4)  # about 30.5, not 8 (docs/ceiling.md)
    assert c.distinct_experts(256, 8, 1) == 8.0
    assert c.distinct_experts(256, 8, 0) == 8.0
    assert c.distinct_experts(0, 8, 4) == 8.0 and c.distinct_experts(8, 0, 4) == 0.0


@pytest.mark.parametrize("args, band", [
    (({"algorithm": "EAGLE"}, False, True, 8), "speculative"), ((None, False, True, 8), "eager"),
    ((None, True, True, 8), "moe"), ((None, True, False, 3), "dense_tp"), ((None, True, False, 2), "dense"),
    ((None, True, False, None), "dense"), ((None, True, False, 1), "dense"),
])
def test_band_class(args, band):
    assert c.band_class_of(*args) == band


def test_bound_texts():
    assert c._bound_text("allreduce_latency") == "the all-reduce latency bound"
    assert c._bound_text("memory_bandwidth") == "the memory-bandwidth bound"


# ------------------------------------------------------------------------------------------------ the verdict

def ceiling_of(bound_tps=200.0, bound="memory_bandwidth", link_kind="pcie_host_bridge", tp=2, expected=None):
    return {"tokens_per_s": bound_tps, "bound": bound, "inputs": {"link_kind": link_kind, "tp": tp},
            "expected": {"tokens_per_s": 100.0, "band": [0.68, 1.15]} if expected is None else expected}


@pytest.mark.parametrize("measured, ceiling", [(None, ceiling_of()), (0, ceiling_of()), (50.0, None),
                                               (50.0, {"tokens_per_s": 0})])
def test_no_verdict_without_a_measurement_or_a_bound(measured, ceiling):
    assert c.efficiency_verdict(measured, ceiling) == {"efficiency": None, "efficiency_of_bound": None, "verdict": None}


REMEDY_PCIE = "faster decode needs quantisation, better speculative acceptance or NVLink"
WHERE = "%d%% of the expected 100.0 tok/s (band 68-115%%; memory-bandwidth bound 200.0 tok/s)"


@pytest.mark.parametrize("measured, text", [
    (68.0, (WHERE % 68) + ": as expected for this hardware; more flags will not help much; " + REMEDY_PCIE),
    (115.0, (WHERE % 115) + ": as expected for this hardware; more flags will not help much; " + REMEDY_PCIE),
    (116.0, (WHERE % 116) + ": faster than this model of the box expects, still under the bound; more flags will not help"
                            " much; " + REMEDY_PCIE),
    (67.0, (WHERE % 67) + ": below what this hardware normally reaches; check the launch flags (CUDA graphs on, custom"
                          " all-reduce, attention backend), NCCL P2P settings, power and clocks, and that the probe ran alone"),
])
def test_the_band_edges_of_the_verdict(measured, text):
    expected = {"efficiency": round(measured / 100.0, 4), "efficiency_of_bound": round(measured / 200.0, 4), "verdict": text}
    assert c.efficiency_verdict(measured, ceiling_of()) == expected


def test_one_gpu_or_nvlink_needs_more_bandwidth_not_nvlink():
    for ceiling in (ceiling_of(tp=1), ceiling_of(link_kind="nvlink", tp=2), ceiling_of(link_kind=None, tp=4)):
        assert c.efficiency_verdict(90.0, ceiling)["verdict"].endswith(
            "; faster decode needs quantisation, better speculative acceptance or a GPU with more memory bandwidth")


def test_an_all_reduce_bound_box_needs_fewer_gpus():
    verdict = c.efficiency_verdict(90.0, ceiling_of(bound="allreduce_latency"))["verdict"]
    assert verdict == ("90% of the expected 100.0 tok/s (band 68-115%; all-reduce latency bound 200.0 tok/s): as expected for"
                       " this hardware; more flags will not help much; faster decode needs fewer GPUs per replica (lower TP),"
                       " NVLink")
    verdict = c.efficiency_verdict(90.0, ceiling_of(bound="allreduce_latency", link_kind="nvlink"))["verdict"]
    assert verdict.endswith("faster decode needs fewer GPUs per replica (lower TP), a lower-latency all-reduce")


def test_above_the_bound_says_the_inputs_are_wrong():
    assert c.efficiency_verdict(210.1, ceiling_of()) == {
        "efficiency": 2.101, "efficiency_of_bound": round(210.1 / 200.0, 4),
        "verdict": "105% of the memory-bandwidth bound (200.0 tok/s), above it: check the ceiling's inputs (parameter count,"
                   " dtype or quantisation, GPU bandwidth, accept length)"}
    at_edge = c.efficiency_verdict(210.0, ceiling_of(expected={"tokens_per_s": 100.0, "band": [0.68, 2.2]}))
    assert at_edge["verdict"].startswith("210% of the expected 100.0 tok/s")  # 1.05 of the bound is not above it
    assert c.efficiency_verdict(300.0, ceiling_of(expected={}))["efficiency"] is None


def test_without_an_expectation_only_the_share_of_the_bound():
    assert c.efficiency_verdict(50.0, ceiling_of(expected={})) == {
        "efficiency": None, "efficiency_of_bound": 0.25, "verdict": "25% of the memory-bandwidth bound (200.0 tok/s)"}
    spec = ceiling_of(expected={"speculative": {"break_even_accept_length": 1.25}})
    assert c.efficiency_verdict(50.0, spec)["verdict"] == (
        "25% of the memory-bandwidth bound (200.0 tok/s); speculative decoding without a measured accept length: no expected"
        " figure (speculation pays above an accept length of 1.25 on this box)")


def test_without_a_band_the_verdict_takes_75_to_100_percent():
    verdict = c.efficiency_verdict(75.0, ceiling_of(expected={"tokens_per_s": 100.0}))["verdict"]
    assert verdict.startswith("75% of the expected 100.0 tok/s (band 75-100%; memory-bandwidth bound 200.0 tok/s): as expected")
    assert ": below what" in c.efficiency_verdict(74.0, ceiling_of(expected={"tokens_per_s": 100.0}))["verdict"]


def test_a_speculative_expectation_says_what_speculation_buys():
    expected = {"tokens_per_s": 100.0, "band": [0.6, 1.35], "tokens_per_s_no_spec": 62.5, "accept_length": 2.5,
                "speculative": {"break_even_accept_length": 1.25}}
    assert c.efficiency_verdict(90.0, ceiling_of(expected=expected))["verdict"].endswith(
        "; speculation at accept length 2.50 buys 1.60x over none (break-even 1.25)")


# ------------------------------------------------------------------------------------------------ accept length

STEP = {"tokens_per_s": 100.0, "accept_length": 1.0, "bound": "memory_bandwidth",
        "per_step_ms": {"weights": 8.0, "allreduce": 2.0, "total": 10.0}, "inputs": {"tp": 1}}
AUTO_SPEC = {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4, "max_accept_length": 4.0,
             "draft_layers": 1, "draft_vocab": None, "draft_params_b": None}


def test_no_accept_length_no_speculation_is_the_target_step():
    assert c.with_accept_length(STEP, None) == dict(STEP, accept_length=1.0, accept_length_measured=False, tokens_per_s=100.0,
                                                    tokens_per_s_no_spec=100.0,
                                                    per_token_ms={"weights": 8.0, "allreduce": 2.0, "total": 10.0})


def test_a_measured_accept_length_without_settings_assumes_sglangs_automatic_steps():
    out = c.with_accept_length(STEP, "2.5")
    assert (out["accept_length"], out["accept_length_measured"], out["tokens_per_s"], out["tokens_per_s_no_spec"]) == (
        2.5, True, 250.0, 100.0)
    assert out["per_token_ms"] == {"weights": 3.2, "allreduce": 0.8, "total": 4.0}
    assert out["inputs"] == {"tp": 1, "speculative": AUTO_SPEC}
    assert STEP["inputs"] == {"tp": 1}


def test_an_accept_length_of_one_is_no_speculation():
    out = c.with_accept_length(STEP, 1.0)
    assert (out["accept_length"], out["accept_length_measured"], out["tokens_per_s"]) == (1.0, True, 100.0)
    assert "speculative" not in out["inputs"]


def test_a_speculative_server_without_a_measurement_is_bounded_by_its_drafts():
    out = c.with_accept_length(STEP, None, {"algorithm": "EAGLE", "num_steps": 1})
    assert (out["accept_length"], out["tokens_per_s"]) == (2.0, 200.0)
    from_inputs = c.with_accept_length(dict(STEP, inputs={"speculative": dict(AUTO_SPEC, notes=["n"])}), None)
    assert from_inputs["accept_length"] == 4.0 and from_inputs["inputs"]["speculative"] == AUTO_SPEC


def test_the_accept_length_is_checked_against_the_steps():
    assert c.with_accept_length(STEP, 4.0)["tokens_per_s"] == 400.0
    with pytest.raises(CeilingError) as caught:
        c.with_accept_length(STEP, 4.01)
    assert str(caught.value) == "accept_length 4.01 is more than 3 speculative steps can give (4)"
    with pytest.raises(CeilingError) as caught:
        c.with_accept_length(STEP, 0.99)
    assert str(caught.value) == "accept_length counts the bonus token, so it is >= 1.0 (got 0.99)"


def test_a_ceiling_without_its_breakdown_is_rebuilt_from_its_speed():
    out = c.with_accept_length({"tokens_per_s_no_spec": 50.0}, None)
    assert (out["tokens_per_s"], out["per_token_ms"]) == (50.0, {"total": 20.0})
    out = c.with_accept_length({"tokens_per_s": 120.0, "accept_length": 2.0, "per_step_ms": {"total": 0}}, None)
    assert (out["tokens_per_s_no_spec"], out["per_token_ms"]) == (60.0, {"total": 16.6667})
    out = c.with_accept_length({"tokens_per_s": 80.0}, None)
    assert out["tokens_per_s"] == 80.0
    with pytest.raises(CeilingError) as caught:
        c.with_accept_length({"per_step_ms": {}}, None)
    assert str(caught.value) == "the ceiling has neither per_step_ms.total nor tokens_per_s_no_spec"


# ------------------------------------------------------------------------------------------------ decode_ceiling, every figure

EXPLICIT = "explicit parameter count: every active parameter is taken as read once per step"


def test_one_gpu_from_a_parameter_count_every_figure():
    # 2 B parameters x 2 bytes = 4 GB a step over 1,000 GB/s: 4 ms, 250 tok/s. Expected: 4 GB over 800 GB/s
    # (0.8 sustained) = 5 ms, + 400 us a step + 10 layers x 20 us = 5.6 ms, 178.57 tok/s. The default draft
    # pass (one layer of 0.2 B parameters, no LM head without a vocabulary): 0.4 GB / 800 GB/s + 60 + 20 us.
    result = c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", num_layers=10, hidden_size=1000, sustained_fraction=0.8)
    tps = round(1e3 / 5.6, 2)
    assert result == {
        "tokens_per_s": 250.0, "tokens_per_s_no_spec": 250.0, "accept_length": 1.0, "accept_length_measured": False,
        "per_step_ms": {"weights": 4.0, "allreduce": 0.0, "total": 4.0},
        "per_token_ms": {"weights": 4.0, "allreduce": 0.0, "total": 4.0},
        "bound": "memory_bandwidth", "weights_share": 1.0,
        "expected": {
            "tokens_per_s_no_spec": tps, "accept_length": None, "speculative": None, "tokens_per_s": tps,
            "band": [0.68, 1.15], "band_class": "dense", "low": round(tps * 0.68, 2), "high": round(tps * 1.15, 2),
            "per_step_ms": {"weights": 5.0, "overhead": 0.6, "moe": 0.0, "allreduce": 0.0, "total": 5.6},
            "components": {"target_ms": 5.6, "routed_expert_ms": 0.0, "experts": 0, "experts_per_token": 0,
                           "draft_pass_ms": 0.58},
            "inputs": {"cuda_graphs": True, "torch_compile": False, "step_overhead_us": 400.0, "layer_overhead_us": 20.0,
                       "moe_layer_us": None, "moe_layers": 0, "sources": OVERHEAD_SOURCES, "sustained_fraction": 0.8,
                       "sustained_source": "given", "allreduce_latency_us": None},
            "notes": []},
        "inputs": {
            "gpu": None, "gpu_matched": None, "bandwidth_gbs": 1000.0, "bandwidth_source": "given", "achievable_fraction": 1.0,
            "tp": 1, "link": None, "link_kind": None, "pcie_gen": None, "pcie_width": None, "p2p": None, "allreduce_impl": None,
            "allreduce_latency_us": None, "allreduce_source": None, "allreduces_per_step": 0, "allreduce_bus_gbs": None,
            "weight_format": "bf16", "bytes_per_param": 2.0, "weight_bytes_per_step": 4000000000,
            "weight_bytes_per_gpu": 4000000000, "total_params": 2000000000, "active_params": 2000000000, "moe": False,
            "num_layers": 10, "hidden_size": 1000, "cuda_graphs": True, "torch_compile": False, "speculative": None, "nnodes": 1},
        "notes": [EXPLICIT]}


# hidden 1024, 8 heads of 128, 2 KV heads: attention 1024 x (1024 + 2 x 256) + 1024 x 1024 = 2,621,440; MLP
# 3 x 1024 x 4096 = 12,582,912; 4 layers; LM head 1000 x 1024
TOY = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 4096,
       "vocab_size": 1000, "torch_dtype": "bfloat16"}
TOY_LAYER = 2621440 + 12582912
TOY_BYTES = (4 * TOY_LAYER + 1000 * 1024) * 2.0
A6000 = {"gpu": "NVIDIA RTX A6000", "tp": 2, "link": "PHB", "pcie_gen": 3, "pcie_width": 8}


def test_two_gpus_over_pcie_bound_by_the_all_reduce():
    # bound: 123.7 MB over 2 x 768 GB/s against 10 all-reduces (2 x 4 layers + 2) of 8 us (custom, P2P) plus
    # 2 x 1024 bytes x 2 x 1/2 over 21 GB/s x 0.5 (Gen3) x 0.5 (x8) = 5.25 GB/s
    result = c.decode_ceiling(TOY, **A6000)
    weight_s = TOY_BYTES / (2 * 768e9)
    each_s = 8e-6 + 2048 * 2.0 * 1 / 2 / 5.25e9
    step_s = weight_s + 10 * each_s
    assert (result["tokens_per_s"], result["tokens_per_s_no_spec"], result["bound"]) == (
        round(1 / step_s, 2), round(1 / step_s, 2), "allreduce_latency")
    assert result["per_step_ms"] == {"weights": round(weight_s * 1e3, 4), "allreduce": round(10 * each_s * 1e3, 4),
                                     "total": round(step_s * 1e3, 4)}
    assert result["per_token_ms"] == result["per_step_ms"]
    assert result["weights_share"] == round(weight_s / step_s, 4)
    assert result["inputs"] == {
        "gpu": "NVIDIA RTX A6000", "gpu_matched": "NVIDIA RTX A6000", "bandwidth_gbs": 768.0,
        "bandwidth_source": "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/ (768 GB/s)", "achievable_fraction": 1.0,
        "tp": 2, "link": "PHB", "link_kind": "pcie_host_bridge", "pcie_gen": 3, "pcie_width": 8, "p2p": True,
        "allreduce_impl": "custom", "allreduce_latency_us": 8.0,
        "allreduce_source": "https://github.com/haohervchb/sglang-V100/pull/2; https://github.com/flashinfer-ai/flashinfer/pull/5023",
        "allreduces_per_step": 10, "allreduce_bus_gbs": 5.25, "weight_format": "bfloat16", "bytes_per_param": 2.0,
        "weight_bytes_per_step": int(TOY_BYTES), "weight_bytes_per_gpu": int(TOY_BYTES / 2),
        "total_params": 4 * TOY_LAYER + 2 * 1024000, "active_params": 4 * TOY_LAYER + 2 * 1024000, "moe": False,
        "num_layers": 4, "hidden_size": 1024, "cuda_graphs": True, "torch_compile": False, "speculative": None, "nnodes": 1}
    assert result["notes"] == []
    # expected: 0.88 of the peak, 400 + 4 x 20 us, the same all-reduces
    sustained = 2 * 768e9 * 0.88
    target_s = TOY_BYTES / sustained + 480e-6 + 10 * each_s
    expected = result["expected"]
    assert expected["per_step_ms"] == {"weights": round(TOY_BYTES / sustained * 1e3, 4), "overhead": 0.48, "moe": 0.0,
                                       "allreduce": round(10 * each_s * 1e3, 4), "total": round(target_s * 1e3, 4)}
    # the default draft pass: one mean layer, the LM head, 3 all-reduces (2 x 1 layer + 1), 60 + 20 us
    draft_s = (TOY_LAYER * 2.0 + 1000 * 1024 * 2.0) / sustained + 3 * each_s + 80e-6
    assert expected["components"] == {"target_ms": round(target_s * 1e3, 4), "routed_expert_ms": 0.0, "experts": 0,
                                      "experts_per_token": 0, "draft_pass_ms": round(draft_s * 1e3, 4)}
    tps = round(1e3 / round(target_s * 1e3, 4), 2)
    assert (expected["tokens_per_s"], expected["band_class"], expected["low"], expected["high"]) == (
        tps, "dense", round(tps * 0.68, 2), round(tps * 1.15, 2))
    assert expected["inputs"]["sustained_fraction"] == 0.88 and expected["inputs"]["allreduce_latency_us"] == 8.0
    assert expected["inputs"]["sustained_source"].startswith("https://github.com/tinygrad/open-gpu-kernel-modules/issues/6")


def test_eager_nccl_and_torch_compile_move_the_expectation():
    # no link: PHB assumed (Gen4 x16, 21 GB/s); custom all-reduce off: NCCL over PCIe, 20 us, 40 us without graphs;
    # without graphs 65 us a layer, halved by torch.compile
    result = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, cuda_graphs=False, custom_allreduce="false", torch_compile="yes")
    wire = 2048 * 2.0 * 1 / 2 / 21e9
    assert result["notes"] == ["link unknown: assumed PCIe through the host bridge (PHB)"]
    inputs = result["inputs"]
    assert (inputs["link"], inputs["link_kind"], inputs["allreduce_impl"], inputs["allreduce_latency_us"], inputs["allreduce_bus_gbs"],
            inputs["cuda_graphs"], inputs["torch_compile"], inputs["p2p"]) == (
        None, "pcie_host_bridge", "nccl", 20.0, 21.0, False, True, True)
    assert result["per_step_ms"]["allreduce"] == round(10 * (20e-6 + wire) * 1e3, 4)
    expected = result["expected"]
    assert expected["per_step_ms"]["overhead"] == 0.53                       # 400 + 4 x 32.5 us
    assert expected["per_step_ms"]["allreduce"] == round(10 * (40e-6 + wire) * 1e3, 4)
    assert (expected["band_class"], expected["band"]) == ("eager", [0.5, 1.2])
    assert (expected["inputs"]["layer_overhead_us"], expected["inputs"]["allreduce_latency_us"], expected["inputs"]["cuda_graphs"],
            expected["inputs"]["torch_compile"]) == (32.5, 40.0, False, True)
    with_graphs = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, link="PHB", custom_allreduce=True)
    assert with_graphs["inputs"]["allreduce_impl"] == "custom" and with_graphs["expected"]["inputs"]["layer_overhead_us"] == 20.0


def test_a_measured_all_reduce_latency_wins_and_doubles_without_graphs():
    given = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, link="PHB", allreduce_latency_us="12", cuda_graphs=False)
    wire = 2048 * 2.0 * 1 / 2 / 21e9
    assert (given["inputs"]["allreduce_latency_us"], given["inputs"]["allreduce_source"]) == (12.0, "given")
    assert given["per_step_ms"]["allreduce"] == round(10 * (12e-6 + wire) * 1e3, 4)
    assert given["expected"]["inputs"]["allreduce_latency_us"] == 24.0
    assert given["expected"]["per_step_ms"]["allreduce"] == round(10 * (24e-6 + wire) * 1e3, 4)
    graphs = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, link="PHB", allreduce_latency_us=12)
    assert graphs["expected"]["inputs"]["allreduce_latency_us"] == 12.0


def test_a_geforce_pair_without_p2p_and_explicit_p2p():
    # RTX 4090: no P2P on stock drivers, so NCCL; p2p=True given: SGLang's custom all-reduce at TP 2
    box = {"gpu": "NVIDIA GeForce RTX 4090", "tp": 2, "link": "PHB"}
    assert (c.decode_ceiling(TOY, **box)["inputs"]["p2p"], c.decode_ceiling(TOY, **box)["inputs"]["allreduce_impl"]) == (False, "nccl")
    forced = c.decode_ceiling(TOY, p2p=True, **box)["inputs"]
    assert (forced["p2p"], forced["allreduce_impl"]) == (True, "custom")
    # no GPU row (bandwidth given): P2P taken as available
    assert c.decode_ceiling(TOY, bandwidth_gbs=500, tp=2, link="PHB")["inputs"]["allreduce_impl"] == "custom"
    # one GPU: no link, no P2P reported even when given
    single = c.decode_ceiling(TOY, p2p=True, link="PHB", gpu="NVIDIA GeForce RTX 4090")["inputs"]
    assert (single["p2p"], single["link_kind"], single["allreduce_impl"], single["allreduce_bus_gbs"]) == (None, None, None, None)


@pytest.mark.parametrize("tp, server_tp, used", [(1, 4, 4), (None, 4, 4), ("", 4, 4), (2, 4, 2), (1, None, 1), (None, None, 1)])
def test_the_servers_tp_fills_in_only_an_unset_tp(tp, server_tp, used):
    args = {"tp_size": server_tp} if server_tp else {}
    result = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", link="PHB", tp=tp, server_args=args)
    assert result["inputs"]["tp"] == used


def test_explicit_flags_win_over_the_servers_except_what_only_turns_on():
    off = {"disable_cuda_graph": True, "disable_custom_all_reduce": True, "enable_torch_compile": True, "nnodes": 2,
           "speculative_algorithm": "EAGLE", "speculative_num_steps": 2, "speculative_eagle_topk": 1}
    box = {"gpu": "NVIDIA RTX A6000", "link": "PHB", "tp": 2}
    from_server = c.decode_ceiling(TOY, server_args=off, **box)
    assert (from_server["inputs"]["cuda_graphs"], from_server["inputs"]["torch_compile"], from_server["inputs"]["nnodes"]) == (
        False, True, 2)
    assert from_server["inputs"]["speculative"]["num_steps"] == 2
    explicit = c.decode_ceiling(TOY, server_args=off, cuda_graphs="yes", custom_allreduce=True, nnodes=1,
                                speculative={"algorithm": "EAGLE", "num_steps": 1}, **box)
    inputs = explicit["inputs"]
    assert (inputs["cuda_graphs"], inputs["allreduce_impl"], inputs["nnodes"], inputs["speculative"]["num_steps"]) == (True, "custom", 1, 1)
    assert inputs["torch_compile"] is True                                   # an explicit False cannot switch the server's off
    assert c.decode_ceiling(TOY, server_args={}, cuda_graphs=False, **box)["inputs"]["cuda_graphs"] is False
    assert c.decode_ceiling(TOY, server_args={"disable_custom_all_reduce": True}, **box)["inputs"]["allreduce_impl"] == "nccl"
    assert c.decode_ceiling(TOY, server_args={"nnodes": 2}, nnodes="", **box)["inputs"]["nnodes"] == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"tp": -1}, "tp must be >= 1"),
    ({"tp": 4, "nnodes": 3}, "nnodes 3 does not divide tp 4: each node holds tp / nnodes of the TP group (pipeline stages across "
                             "nodes are not modelled)"),
    ({"tp": 4, "nnodes": -2}, "nnodes -2 does not divide tp 4: each node holds tp / nnodes of the TP group (pipeline stages across "
                              "nodes are not modelled)"),
    ({"tp": 4, "nnodes": 0.5}, "nnodes 0.5 does not divide tp 4: each node holds tp / nnodes of the TP group (pipeline stages across "
                               "nodes are not modelled)"),
    ({"bytes_per_param": 0}, "bytes_per_param must be positive"),
    ({"bytes_per_param": -1}, "bytes_per_param must be positive"),
    ({"gpu": None}, "no GPU: pass gpu (a name such as 'NVIDIA RTX A6000'), gpu_facts or bandwidth_gbs"),
    ({"gpu": "Imaginary 9000"}, "GPU 'Imaginary 9000' is not in the bandwidth table: pass bandwidth_gbs"),
    ({"bandwidth_gbs": 0}, "bandwidth_gbs must be positive"),
    ({"bandwidth_gbs": -5}, "bandwidth_gbs must be positive"),
    ({"achievable_fraction": 1.01}, "achievable_fraction must be in (0, 1]"),
    ({"achievable_fraction": -0.5}, "achievable_fraction must be in (0, 1]"),
    ({"sustained_fraction": 1.01}, "sustained_fraction must be in (0, 1]"),
    ({"sustained_fraction": 0}, "sustained_fraction must be in (0, 1]"),
    ({"sustained_fraction": -0.5}, "sustained_fraction must be in (0, 1]"),
    ({"tp": 2, "link": "carrier pigeon"}, "unknown link 'carrier pigeon': NV#, PIX, PXB, PHB, NODE, SYS, nvlink, pcie or network"),
    ({"accept_length": 0.99}, "accept_length counts the bonus token, so it is >= 1.0 (got 0.99)"),
    ({"accept_length": 3.5, "speculative": {"algorithm": "EAGLE", "num_steps": 2}},
     "accept_length 3.5 is more than 2 speculative steps can give (3)"),
])
def test_each_bad_input_is_named(kwargs, message):
    call = dict({"gpu": "NVIDIA RTX A6000"}, **kwargs)
    with pytest.raises(CeilingError) as caught:
        c.decode_ceiling(TOY, **call)
    assert str(caught.value) == message


@pytest.mark.parametrize("kwargs", [{"achievable_fraction": 1.0}, {"sustained_fraction": 1.0}, {"accept_length": 1.0},
                                    {"accept_length": 3.0, "speculative": {"algorithm": "EAGLE", "num_steps": 2}},
                                    {"tp": 4, "nnodes": 4}])
def test_the_edges_that_are_allowed(kwargs):
    assert c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", **kwargs)["tokens_per_s"] > 0


def test_an_achievable_fraction_scales_the_bound_and_zero_means_the_default():
    full = c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16")
    assert c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", achievable_fraction=0.5)["tokens_per_s"] == 125.0
    assert c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", achievable_fraction=0)["tokens_per_s"] == full["tokens_per_s"] == 250.0
    assert c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", achievable_fraction="0.8")["inputs"]["achievable_fraction"] == 0.8


@pytest.mark.parametrize("model, kwargs, message", [
    (None, {}, "no model: pass a config.json dict, or params_b (and active_params_b for MoE)"),
    ("", {}, "no model: pass a config.json dict, or params_b (and active_params_b for MoE)"),
    (0, {}, "params_b (or active_params_b) must be a positive number of billions"),
    (-1, {}, "params_b (or active_params_b) must be a positive number of billions"),
    (None, {"active_params_b": 0}, "params_b (or active_params_b) must be a positive number of billions"),
    (30, {"active_params_b": -3}, "params_b (or active_params_b) must be a positive number of billions"),
    (2, {"tp": 2, "num_layers": 10}, "TP 2 needs num_layers and hidden_size for the all-reduce term (or a config.json)"),
    (2, {"tp": 2, "hidden_size": 1000}, "TP 2 needs num_layers and hidden_size for the all-reduce term (or a config.json)"),
])
def test_a_model_given_by_its_size_needs_the_right_inputs(model, kwargs, message):
    with pytest.raises(CeilingError) as caught:
        c.decode_ceiling(model, bandwidth_gbs=1000, dtype="bf16", **kwargs)
    assert str(caught.value) == message


MOE_NOTE = ("MoE given by parameter count: every layer taken as an MoE layer, and the extra experts a verify pass reads are not "
            "modelled")


def test_a_moe_given_by_its_parameter_counts():
    # 30 B total, 3 B active at 1 byte: 3 GB a step over 1,000 GB/s, 3 ms; every one of the 10 layers an MoE layer
    result = c.decode_ceiling(30, active_params_b="3", bandwidth_gbs=1000, dtype="fp8", num_layers=10, hidden_size=1000,
                              sustained_fraction=0.75)
    assert result["notes"] == [EXPLICIT, MOE_NOTE]
    assert (result["tokens_per_s"], result["per_step_ms"]["weights"]) == (round(1e3 / 3.0, 2), 3.0)
    inputs = result["inputs"]
    assert (inputs["total_params"], inputs["active_params"], inputs["moe"], inputs["weight_format"], inputs["bytes_per_param"]) == (
        30000000000, 3000000000, True, "fp8", 1.0)
    expected = result["expected"]
    # 3 GB over 750 GB/s = 4 ms, + 400 + 10 x 20 us, + 10 MoE layers x 100 us
    assert expected["per_step_ms"] == {"weights": 4.0, "overhead": 0.6, "moe": 1.0, "allreduce": 0.0, "total": 5.6}
    assert (expected["band_class"], expected["band"], expected["inputs"]["moe_layer_us"], expected["inputs"]["moe_layers"]) == (
        "moe", [0.55, 1.3], 100.0, 10)
    only_active = c.decode_ceiling(None, active_params_b=3, bandwidth_gbs=1000, dtype="fp8")["inputs"]
    assert (only_active["total_params"], only_active["active_params"], only_active["moe"], only_active["num_layers"],
            only_active["hidden_size"]) == (3000000000, 3000000000, True, None, None)


def test_a_size_dict_and_explicit_sizes():
    box = {"bandwidth_gbs": 1000, "dtype": "bf16"}
    as_dict = c.decode_ceiling({"params_b": 2}, **box)
    assert as_dict["tokens_per_s"] == 250.0 and as_dict["inputs"]["moe"] is False
    moe_dict = c.decode_ceiling({"params_b": 30, "active_params_b": 3}, **box)["inputs"]
    assert (moe_dict["total_params"], moe_dict["active_params"], moe_dict["moe"]) == (30000000000, 3000000000, True)
    assert c.decode_ceiling({"params_b": 2}, params_b=4, **box)["tokens_per_s"] == 125.0        # the keyword wins
    assert c.decode_ceiling({"params_b": 30, "active_params_b": 3}, active_params_b=2, **box)["inputs"]["active_params"] == 2000000000
    assert c.decode_ceiling(2, params_b=4, **box)["tokens_per_s"] == 125.0
    assert c.decode_ceiling("2", **box)["tokens_per_s"] == 250.0
    # a dict with params_b and a shape is a config.json: counted, not taken by its size
    with pytest.raises(CeilingError, match="^config needs hidden_size"):
        c.decode_ceiling({"params_b": 2, "hidden_size": 8}, **box)
    with pytest.raises(CeilingError, match="^config needs hidden_size"):
        c.decode_ceiling({"params_b": 2, "text_config": {"hidden_size": 8}}, **box)
    # a config.json with a parameter count: the count's bytes, the config's shape for the all-reduces
    sized = c.decode_ceiling(TOY, params_b=1, gpu="NVIDIA RTX A6000", tp=2, link="PHB")
    assert (sized["inputs"]["num_layers"], sized["inputs"]["hidden_size"], sized["inputs"]["allreduces_per_step"],
            sized["inputs"]["weight_bytes_per_step"]) == (4, 1024, 10, 2000000000)
    assert (sized["inputs"]["weight_format"], sized["notes"]) == ("bfloat16", [EXPLICIT])
    shaped = c.decode_ceiling(TOY, params_b=1, num_layers=6, hidden_size="2048", gpu="NVIDIA RTX A6000", tp=2, link="PHB")["inputs"]
    assert (shaped["num_layers"], shaped["hidden_size"], shaped["allreduces_per_step"]) == (6, 2048, 14)


def test_a_config_with_other_sizes_given():
    result = c.decode_ceiling(TOY, num_layers="6", hidden_size=2048, gpu="NVIDIA RTX A6000", tp=2, link="PHB")
    # the bytes stay the config's; the all-reduces follow the given shape: 2 x 6 + 2 of 4 KB
    assert (result["inputs"]["num_layers"], result["inputs"]["hidden_size"], result["inputs"]["allreduces_per_step"]) == (6, 2048, 14)
    assert result["inputs"]["weight_bytes_per_step"] == int(TOY_BYTES)
    assert result["per_step_ms"]["allreduce"] == round(14 * (8e-6 + 4096 * 2.0 / 2 / 21e9) * 1e3, 4)


@pytest.mark.parametrize("extra, kwargs, layer_bpp, head_bpp, label, notes", [
    ({"quantization_config": {"quant_method": "fp8"}}, {}, 1.0, 2.0, "fp8", []),
    ({"quantization_config": {"quant_method": "fp8"}, "torch_dtype": "float32"}, {}, 1.0, 4.0, "fp8", []),
    ({"torch_dtype": None}, {}, 2.0, 2.0, "bfloat16 (assumed)", ["no dtype given or in the config: assumed bf16 (2 bytes per parameter)"]),
    ({"torch_dtype": None, "dtype": "float32"}, {}, 4.0, 4.0, "float32", []),
    ({"torch_dtype": None, "quantization_config": {"quant_method": "mxfp4"}}, {}, 0.53125, 2.0, "mxfp4", []),
    ({"quantization_config": {"quant_method": "fp8"}}, {"dtype": "fp16"}, 2.0, 2.0, "fp16", []),
    ({"quantization_config": {"quant_method": "fp8"}}, {"bytes_per_param": "0.5"}, 0.5, 0.5, "0.5 bytes/param (given)", []),
    ({}, {"bytes_per_param": 1, "dtype": "fp32"}, 1.0, 1.0, "1 bytes/param (given)", []),
])
def test_the_bytes_of_the_layers_and_of_the_lm_head(extra, kwargs, layer_bpp, head_bpp, label, notes):
    result = c.decode_ceiling(dict(TOY, **extra), bandwidth_gbs=1000, **kwargs)
    assert result["inputs"]["weight_bytes_per_step"] == int(4 * TOY_LAYER * layer_bpp + 1000 * 1024 * head_bpp)
    assert (result["inputs"]["bytes_per_param"], result["inputs"]["weight_format"], result["notes"]) == (layer_bpp, label, notes)


NODES_NOTE = ("link between nodes not given: assumed NCCL over sockets on 100 GbE (10 GB/s, 50 us per all-reduce); set "
              "internode_bus_gbs and internode_latency_us")


def test_two_nodes_with_the_assumed_link_every_figure():
    # per all-reduce: NCCL over the node's PCIe (20 us + 2 KB x 2 x 1/2 over 21 GB/s), then 50 us + the same over 10 GB/s
    result = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=4, nnodes=2, link="PHB", pcie_gen=4, pcie_width=16)
    wire = 2048 * 2.0 * 1 / 2 / 21e9 + 2048 * 2.0 * 1 / 2 / 10e9
    assert result["notes"] == [NODES_NOTE]
    source = "inter-node bus assumed, latency assumed (docs/ceiling.md#across-nodes)"
    inputs = result["inputs"]
    assert {k: inputs[k] for k in ("allreduce_impl", "allreduce_latency_us", "allreduce_source", "allreduce_bus_gbs", "nnodes",
                                   "gpus_per_node", "internode_bus_gbs", "internode_latency_us", "internode_source")} == {
        "allreduce_impl": "nccl", "allreduce_latency_us": 70.0, "allreduce_source": source, "allreduce_bus_gbs": 10.0, "nnodes": 2,
        "gpus_per_node": 2, "internode_bus_gbs": 10.0, "internode_latency_us": 50.0, "internode_source": source}
    assert result["per_step_ms"]["allreduce"] == round(10 * (70e-6 + wire) * 1e3, 4)
    assert result["per_step_ms"]["weights"] == round(TOY_BYTES / (4 * 768e9) * 1e3, 4)
    assert result["expected"]["per_step_ms"]["allreduce"] == round(10 * (70e-6 + wire) * 1e3, 4)
    assert result["expected"]["inputs"]["allreduce_latency_us"] == 70.0
    eager = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=4, nnodes=2, link="PHB", cuda_graphs=False)
    assert (eager["inputs"]["allreduce_latency_us"], eager["expected"]["inputs"]["allreduce_latency_us"]) == (70.0, 90.0)  # 2 x 20 + 50


@pytest.mark.parametrize("link, tp, latency, wire", [
    ("NV18", 8, 6.0 + 20.0, 2048 * 2.0 * 3 / 4 / 200e9 + 2048 * 2.0 * 1 / 2 / 12.5e9),   # NVLink inside, 4 GPUs a node
    ("network", 4, 20.0, 2048 * 2.0 * 1 / 2 / 12.5e9),                                  # the link is the network: no node part
    ("PHB", 2, 20.0, 2048 * 2.0 * 1 / 2 / 12.5e9),                                      # one GPU a node
])
def test_the_node_part_of_an_all_reduce(link, tp, latency, wire):
    result = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=tp, nnodes=2, link=link, internode_bus_gbs=12.5, internode_latency_us=20)
    assert result["inputs"]["allreduce_latency_us"] == latency
    assert result["per_step_ms"]["allreduce"] == round(10 * (latency * 1e-6 + wire) * 1e3, 4)
    assert result["notes"] == [] and result["inputs"]["gpus_per_node"] == tp // 2
    assert result["inputs"]["internode_source"] == "inter-node bus given, latency given (docs/ceiling.md#across-nodes)"


def test_one_figure_of_the_link_between_nodes_given():
    bus = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, nnodes=2, link="PHB", internode_bus_gbs="5")
    assert bus["notes"] == ["link between nodes not given: assumed NCCL over sockets on 100 GbE (5 GB/s, 50 us per all-reduce); set "
                            "internode_bus_gbs and internode_latency_us"]
    assert bus["inputs"]["internode_source"] == "inter-node bus given, latency assumed (docs/ceiling.md#across-nodes)"
    latency = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, nnodes=2, link="PHB", internode_latency_us=0)
    assert latency["inputs"]["internode_source"] == "inter-node bus assumed, latency given (docs/ceiling.md#across-nodes)"
    assert latency["inputs"]["allreduce_latency_us"] == 0.0 and len(latency["notes"]) == 1


@pytest.mark.parametrize("kwargs", [{"internode_bus_gbs": 0}, {"internode_bus_gbs": -1}, {"internode_bus_gbs": ""},
                                    {"internode_latency_us": -1}, {"internode_latency_us": ""}])
def test_a_bad_figure_of_the_link_between_nodes(kwargs):
    with pytest.raises(CeilingError) as caught:
        c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=2, nnodes=2, link="PHB", **kwargs)
    assert str(caught.value) == "internode_bus_gbs must be positive and internode_latency_us at least 0"


def test_a_measured_latency_across_nodes_is_the_whole_groups():
    result = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=4, nnodes=2, link="PHB", allreduce_latency_us=90, cuda_graphs=False)
    assert (result["inputs"]["allreduce_latency_us"], result["inputs"]["allreduce_source"]) == (90.0, "given")
    assert result["expected"]["inputs"]["allreduce_latency_us"] == 180.0
    assert result["inputs"]["internode_source"] == "inter-node bus assumed, latency assumed (docs/ceiling.md#across-nodes)"


NEXTN3 = {"algorithm": "NEXTN", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}


def _toy_target():
    """The TOY box's target forward and default draft pass, in ms as the expectation rounds them."""
    each_s = 8e-6 + 2048 * 2.0 * 1 / 2 / 5.25e9
    sustained = 2 * 768e9 * 0.88
    target_ms = round((TOY_BYTES / sustained + 480e-6 + 10 * each_s) * 1e3, 4)
    draft_ms = round(((TOY_LAYER * 2.0 + 1000 * 1024 * 2.0) / sustained + 3 * each_s + 80e-6) * 1e3, 4)
    return target_ms, draft_ms, each_s, sustained


def test_a_speculative_cycle_on_the_toy_box():
    result = c.decode_ceiling(TOY, accept_length="2.5", speculative=NEXTN3, **A6000)
    target_ms, draft_ms, each_s = _toy_target()[:3]
    step_s = TOY_BYTES / (2 * 768e9) + 10 * each_s           # the bound's step: peak bandwidth, drafts free
    cycle = target_ms + 4 * draft_ms                         # verify (dense: the target forward) + 3 drafts + the extend
    assert (result["accept_length"], result["accept_length_measured"], result["notes"]) == (2.5, True, [])
    assert (result["tokens_per_s"], result["tokens_per_s_no_spec"]) == (round(2.5 / step_s, 2), round(1 / step_s, 2))
    assert result["per_token_ms"]["total"] == round(result["per_step_ms"]["total"] / 2.5, 4)
    assert result["inputs"]["speculative"] == {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4,
                                               "max_accept_length": 4.0, "draft_layers": 1, "draft_vocab": None, "draft_params_b": None}
    expected = result["expected"]
    assert expected["speculative"] == {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4,
                                       "verify_ms": target_ms, "draft_pass_ms": draft_ms, "draft_passes": 4,
                                       "cycle_ms": round(cycle, 4), "break_even_accept_length": round(cycle / target_ms, 3),
                                       "max_accept_length": 4.0}
    tps = round(2.5e3 / cycle, 2)
    assert (expected["tokens_per_s"], expected["tokens_per_s_no_spec"], expected["accept_length"]) == (
        tps, round(1e3 / target_ms, 2), 2.5)
    assert (expected["band_class"], expected["band"], expected["low"], expected["high"]) == (
        "speculative", [0.6, 1.35], round(tps * 0.6, 2), round(tps * 1.35, 2))
    assert expected["notes"] == []


def test_a_speculative_server_without_its_accept_length():
    result = c.decode_ceiling(TOY, speculative="EAGLE", **A6000)
    plain = c.decode_ceiling(TOY, **A6000)
    assert result["notes"] == [
        "speculative steps not given: SGLang's automatic choice, 3 steps, top-k 1, 4 draft tokens",
        "speculative decoding without a measured accept length: the bound is taken at the most the drafts can give (4 tokens per "
        "step); the expectation needs the accept length"]
    assert (result["accept_length"], result["accept_length_measured"]) == (4.0, False)
    assert result["tokens_per_s_no_spec"] == plain["tokens_per_s"]
    assert (result["expected"]["tokens_per_s"], result["expected"]["low"], result["expected"]["high"]) == (None, None, None)
    assert result["expected"]["speculative"]["max_accept_length"] == 4.0


@pytest.mark.parametrize("speculative, passes, draft", [
    # NGRAM drafts from a host-side lookup: no draft passes, the cycle is the verify pass alone
    ({"algorithm": "NGRAM", "num_draft_tokens": 8}, 0, lambda each_s, sbw: 0.0),
    # a STANDALONE draft model of 0.5 B parameters at the layers' 2 bytes, one layer's overhead, 3 all-reduces
    ({"algorithm": "STANDALONE", "num_steps": 2, "draft_params_b": 0.5}, 3,
     lambda each_s, sbw: 0.5e9 * 2.0 / sbw + 3 * each_s + 80e-6),
    # two target-shaped layers and a 500-token LM head: 5 all-reduces, 60 + 2 x 20 us
    ({"algorithm": "EAGLE3", "num_steps": 2, "draft_layers": 2, "draft_vocab": 500}, 3,
     lambda each_s, sbw: (2 * TOY_LAYER * 2.0 + 500 * 1024 * 2.0) / sbw + 5 * each_s + 100e-6),
])
def test_what_each_kind_of_draft_costs(speculative, passes, draft):
    target_ms, _draft_ms, each_s, sustained = _toy_target()
    result = c.decode_ceiling(TOY, accept_length=2, speculative=speculative, **A6000)["expected"]
    draft_ms = round(draft(each_s, sustained) * 1e3, 4)
    assert result["components"]["draft_pass_ms"] == draft_ms
    assert (result["speculative"]["draft_passes"], result["speculative"]["cycle_ms"], result["speculative"]["draft_pass_ms"]) == (
        passes, round(target_ms + passes * draft_ms, 4), draft_ms)
    assert result["tokens_per_s"] == round(2e3 / (target_ms + passes * draft_ms), 2)


# the TOY model with 8 experts of intermediate 512 (3 x 1024 x 512 = 1,572,864 each), top 2, layer 0 dense:
# layers 1-3 read 2,621,440 + 2 x 1,572,864 + a router of 8 x 1024 = 5,775,360
MOE_TOY = dict(TOY, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=512, first_k_dense_replace=1)
MOE_LAYERS = TOY_LAYER + 3 * 5775360


def test_a_moe_verify_pass_reads_the_experts_of_every_draft_token():
    result = c.decode_ceiling(MOE_TOY, bandwidth_gbs=1000, sustained_fraction=0.8, accept_length=2, speculative=NEXTN3)
    sbw = 1000e9 * 0.8
    weight_bytes = (MOE_LAYERS + 1024000) * 2.0
    assert weight_bytes == 2 ** 26 and result["inputs"]["weight_bytes_per_step"] == 2 ** 26
    expected = result["expected"]
    # weights; 400 + 4 x 20 us; 3 MoE layers x 100 us
    target_ms = round((weight_bytes / sbw + 480e-6 + 300e-6) * 1e3, 4)
    assert expected["per_step_ms"] == {"weights": round(weight_bytes / sbw * 1e3, 4), "overhead": 0.48, "moe": 0.3, "allreduce": 0.0,
                                       "total": target_ms}
    routed_ms = round(3 * 2 * 1572864 * 2.0 / sbw * 1e3, 4)
    # the draft layer is a mean MoE layer: 60 + 20 + 100 us
    draft_ms = round(((MOE_LAYERS / 4 * 2.0 + 1024000 * 2.0) / sbw + 180e-6) * 1e3, 4)
    assert expected["components"] == {"target_ms": target_ms, "routed_expert_ms": routed_ms, "experts": 8, "experts_per_token": 2,
                                      "draft_pass_ms": draft_ms}
    # 4 tokens over 8 experts, top 2: 8 x (1 - (6/8)^4) = 5.46875 distinct experts, not 2
    verify_ms = target_ms + routed_ms * (5.46875 / 2 - 1.0)
    assert expected["speculative"]["verify_ms"] == round(verify_ms, 4)
    assert expected["speculative"]["cycle_ms"] == round(verify_ms + 4 * draft_ms, 4)
    assert expected["tokens_per_s"] == round(2e3 / (verify_ms + 4 * draft_ms), 2)
    assert (expected["inputs"]["moe_layer_us"], expected["inputs"]["moe_layers"]) == (100.0, 3)


def test_a_speculative_size_without_a_shape_says_what_the_draft_leaves_out():
    no_layers = c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", accept_length=2, speculative=NEXTN3)["expected"]
    assert no_layers["notes"] == ["no layer count: the per-layer overhead is left out, so the expectation is optimistic",
                                  "draft layer size unknown (no layer count): only the LM head is counted"]
    # no layer count: only the 60 us of the pass itself and one layer's 20 us
    assert no_layers["components"]["draft_pass_ms"] == 0.08 and no_layers["per_step_ms"]["overhead"] == 0.4
    no_vocab = c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", accept_length=2, speculative=NEXTN3, num_layers=10,
                                hidden_size=1000)["expected"]
    assert no_vocab["notes"] == ["draft LM head not counted (no vocabulary size: give a config.json)"]
    vocab = c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", accept_length=2, hidden_size=1000, num_layers=10,
                             speculative=dict(NEXTN3, draft_vocab=1000))["expected"]
    assert vocab["notes"] == []
    # one layer of 0.2 B and a 1000 x 1000 head at 2 bytes over 1,000 GB/s x 0.88, + 80 us
    assert vocab["components"]["draft_pass_ms"] == round(((2e8 + 1e6) * 2.0 / 880e9 + 80e-6) * 1e3, 4)


def test_the_probes_accept_length_reprices_the_expectation():
    plain = c.decode_ceiling(TOY, **A6000)
    target_ms, draft_ms = _toy_target()[:2]
    priced = c.with_accept_length(plain, 2.5, NEXTN3)
    direct = c.decode_ceiling(TOY, accept_length=2.5, speculative=NEXTN3, **A6000)
    assert priced["expected"] == dict(direct["expected"], per_step_ms=plain["expected"]["per_step_ms"])
    assert priced["expected"]["speculative"]["cycle_ms"] == round(target_ms + 4 * draft_ms, 4)
    auto = c.with_accept_length(plain, 2.0)
    assert auto["expected"]["notes"] == ["accept length without the server's speculative settings: SGLang's automatic 3 steps assumed"]
    assert (auto["expected"]["band_class"], auto["expected"]["accept_length"]) == ("speculative", 2.0)
    assert auto["expected"]["tokens_per_s"] == round(2e3 / round(target_ms + 4 * draft_ms, 4), 2)
    same = c.with_accept_length(plain, None)
    assert same["expected"] == plain["expected"] and same["tokens_per_s"] == round(1e3 / plain["per_step_ms"]["total"], 2)
    eager = c.decode_ceiling(TOY, cuda_graphs=False, **A6000)
    assert c.with_accept_length(eager, 1.0)["expected"]["band_class"] == "eager"


def test_an_expectation_without_its_class_is_dense_and_one_without_components_is_kept():
    ceiling = {"per_step_ms": {"total": 10.0}, "expected": {"components": {"target_ms": 10.0}, "notes": ["kept"]}}
    out = c.with_accept_length(ceiling, None)["expected"]
    assert out == {"components": {"target_ms": 10.0}, "tokens_per_s_no_spec": 100.0, "accept_length": None, "speculative": None,
                   "tokens_per_s": 100.0, "band": [0.68, 1.15], "band_class": "dense", "notes": ["kept"], "low": 68.0, "high": 115.0}
    spec = c.with_accept_length(ceiling, None, {"algorithm": "EAGLE", "num_steps": 1})["expected"]
    assert (spec["tokens_per_s"], spec["low"], spec["high"], spec["band"]) == (None, None, None, [0.6, 1.35])
    assert spec["speculative"]["draft_passes"] == 2 and spec["speculative"]["cycle_ms"] == 10.0   # no draft cost known
    bare = {"per_step_ms": {"total": 10.0}, "expected": {"tokens_per_s": 5.0}}
    assert c.with_accept_length(bare, None)["expected"] == {"tokens_per_s": 5.0}
    assert c.with_accept_length({"per_step_ms": {"total": 10.0}, "expected": None}, None)["expected"] is None


def test_the_remedy_names_nvlink_only_for_a_pcie_group():
    def verdict(link_kind, tp):
        ceiling = {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {"link_kind": link_kind, "tp": tp},
                   "expected": {"tokens_per_s": 100.0, "band": [0.68, 1.15]}}
        return c.efficiency_verdict(90.0, ceiling)["verdict"]
    assert verdict("pcie_switch", 2).endswith("or NVLink") and verdict("pcie_cross_socket", 4).endswith("or NVLink")
    assert verdict("pcie_switch", None).endswith("or a GPU with more memory bandwidth")
    assert verdict("network", 2).endswith("or a GPU with more memory bandwidth")


def test_the_gpu_facts_fill_in_every_input_they_hold():
    facts = {"gpus": [{"name": "NVIDIA RTX A6000", "pcie_gen_max": 3, "pcie_width_max": 8}] * 2, "links": {"0-1": "PHB"},
             "p2p_read": {"0-1": "OK"}}
    result = c.decode_ceiling(TOY, tp=2, gpu_facts=facts)
    assert result["inputs"] == c.decode_ceiling(TOY, **A6000)["inputs"]          # the same box given by hand
    assert result["per_step_ms"] == c.decode_ceiling(TOY, **A6000)["per_step_ms"]
    no_p2p = dict(facts, p2p_read={"0-1": "NS"})
    assert c.decode_ceiling(TOY, tp=2, gpu_facts=no_p2p)["inputs"]["p2p"] is False
    # what is given by hand wins over the facts
    mine = c.decode_ceiling(TOY, tp=2, gpu_facts=no_p2p, gpu="NVIDIA GeForce RTX 4090", link="PIX", pcie_gen=4, pcie_width=16, p2p=True)
    assert {k: mine["inputs"][k] for k in ("gpu", "link", "pcie_gen", "pcie_width", "p2p", "allreduce_bus_gbs")} == {
        "gpu": "NVIDIA GeForce RTX 4090", "link": "PIX", "pcie_gen": 4, "pcie_width": 16, "p2p": True, "allreduce_bus_gbs": 26.0}
    assert c.decode_ceiling(TOY, gpu_facts=["not", "a", "dict"], gpu="NVIDIA RTX A6000")["inputs"]["gpu"] == "NVIDIA RTX A6000"


def test_at_a_thousand_bytes_a_second_every_byte_counts():
    # 1000 parameters of 2 bytes over 1,000 bytes/s: 2 s a step; one layer, hidden 1, no vocabulary; nothing the
    # model does not read may add even one byte (1 ms) or one microsecond
    result = c.decode_ceiling(1e-6, bandwidth_gbs=1e-6, dtype="bf16", num_layers=1, hidden_size=1, sustained_fraction=1.0,
                              accept_length=2, speculative=NEXTN3)
    assert result["per_step_ms"] == {"weights": 2000.0, "allreduce": 0.0, "total": 2000.0}
    expected = result["expected"]
    assert expected["components"] == {"target_ms": 2000.42, "routed_expert_ms": 0.0, "experts": 0, "experts_per_token": 0,
                                      "draft_pass_ms": 2000.08}   # + 400 + 20 us; the draft: the one layer, 60 + 20 us
    assert expected["speculative"]["verify_ms"] == 2000.42
    moe = c.decode_ceiling(None, active_params_b=1e-6, bandwidth_gbs=1e-6, dtype="bf16", num_layers=1, hidden_size=1,
                           sustained_fraction=1.0, accept_length=2, speculative=NEXTN3)["expected"]
    # a MoE given by its size: one MoE layer (100 us), the draft layer too, no routed-expert term known
    assert moe["components"] == {"target_ms": 2000.52, "routed_expert_ms": 0.0, "experts": 0, "experts_per_token": 0,
                                 "draft_pass_ms": 2000.18}
    assert moe["speculative"]["verify_ms"] == 2000.52


@pytest.mark.parametrize("components, verify_ms", [
    ({"target_ms": 10.0, "experts": 8, "experts_per_token": 2}, 10.0),                    # no routed-expert term: nothing more
    ({"target_ms": 10.0, "experts_per_token": 2, "routed_expert_ms": 1.0}, 10.0),         # no expert count
    ({"target_ms": 10.0, "experts": 8, "routed_expert_ms": 1.0}, 10.0),                   # no top-k
    ({"target_ms": 10.0, "experts": 8, "experts_per_token": 2, "routed_expert_ms": 1.0}, 10.0 + 5.46875 / 2 - 1.0),
])
def test_the_verify_pass_from_a_breakdown(components, verify_ms):
    spec = c.speculative_settings(NEXTN3)
    out = c.speculative_expectation(dict(components, draft_pass_ms=0.5), spec, 2.0)
    assert out["speculative"]["verify_ms"] == round(verify_ms, 4)
    assert out["speculative"]["cycle_ms"] == round(verify_ms + 4 * 0.5, 4)
    assert out["speculative"]["break_even_accept_length"] == round((verify_ms + 2.0) / 10.0, 3)


def test_without_a_band_above_the_expectation_is_faster_than_expected():
    ceiling = {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {"link_kind": None, "tp": 1}, "expected": {"tokens_per_s": 100.0}}
    assert ": faster than this model of the box expects" in c.efficiency_verdict(101.0, ceiling)["verdict"]
    assert ": as expected" in c.efficiency_verdict(100.0, ceiling)["verdict"]


def test_layer_types_that_say_linear_without_a_linear_shape_are_full_attention():
    config = dict(DENSE, layer_types=["linear_attention", "full_attention"])
    counts = c.count_params(config)
    assert (counts["linear_attention_layers"], counts["read_layer_params"]) == (0, 2 * (192 + 384))


@pytest.mark.parametrize("group_size, overhead", [(1, 2.5), ("64", 2.5 / 64), (0, 0.0), (-1, 0.0), (None, 0.0)])
def test_the_scales_of_each_group_size(group_size, overhead):
    assert c._group_overhead(4.0, group_size) == overhead


def test_a_tie_between_the_weights_and_the_all_reduces_is_bandwidth_bound():
    # 2 GB over 2 x 2,000 GB/s = 0.5 ms; 50 all-reduces (2 x 24 + 2) of 9.99 us + 2 KB x 2 x 1/2 over NVLink's 200 GB/s
    # (0.01 us) = 0.5 ms
    box = {"bandwidth_gbs": 2000, "dtype": "bf16", "tp": 2, "link": "NV4", "num_layers": 24, "hidden_size": 1000}
    tie = c.decode_ceiling(1, allreduce_latency_us=9.99, **box)
    assert (tie["per_step_ms"], tie["bound"], tie["weights_share"]) == ({"weights": 0.5, "allreduce": 0.5, "total": 1.0}, "memory_bandwidth", 0.5)
    assert c.decode_ceiling(1, allreduce_latency_us=10, **box)["bound"] == "allreduce_latency"


# ------------------------------------------------------------------------------------------------ each rule alone

def test_the_link_order_ranks_node_below_sys_and_an_unknown_class_below_both():
    assert c._worst_link({"0-1": "NODE", "0-2": "SYS"}, [0, 1, 2]) == "SYS"
    assert c._worst_link({"0-1": "SYS", "0-2": "weird"}, [0, 1, 2]) == "WEIRD"
    # the first of equally slow links is kept; a missing pair does not end the search
    assert c._worst_link({"0-1": "NV4", "0-2": "NV8"}, [0, 1, 2]) == "NV4"
    assert c._worst_link({"0-2": "SYS"}, [0, 1, 2]) == "SYS"


def test_p2p_ignores_the_diagonal_and_reads_past_a_missing_pair():
    assert c._p2p_ok({"0-1": "OK", "1-1": "X", "0-0": "X"}, [0, 1]) is True
    assert c._p2p_ok({"0-2": "NS"}, [0, 1, 2]) is False


def test_a_linear_attention_block_missing_one_head_count():
    # no key heads: value dim 128 only: 8 x 256 + 8 x 2 + 128 x 4 + 128 x 8; no value heads: key dim 128 only
    assert c._linear_attention_params({"linear_num_value_heads": 1}, 8) == 8 * 256 + 16 + 128 * 4 + 128 * 8
    assert c._linear_attention_params({"linear_num_key_heads": 1}, 8) == 8 * 256 + 256 * 4


def test_the_moe_cut_offs():
    assert c._moe_layout({"num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 2}, 1)[0] == [True]   # two experts are MoE
    assert c._moe_layout({"num_experts": 4, "num_experts_per_tok": 1, "moe_intermediate_size": 2}, 1)[1]["top_k"] == 1
    assert c._moe_layout({"num_experts": 4, "num_experts_per_tok": 2}, 1)[1]["expert_inter"] == 0
    # the first dense layer shifts the MoE frequency: layers 1 and 4 of 6 are MoE every 3rd after it
    flags = c._moe_layout({"num_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 3}, 6)[0]
    assert flags == [False, True, False, False, True, False]


@pytest.mark.parametrize("config, message", [
    ({"num_hidden_layers": 2, "vocab_size": 10}, "config needs hidden_size, num_hidden_layers and vocab_size (got None, 2, 10)"),
    ({"hidden_size": 8, "num_hidden_layers": 2}, "config needs hidden_size, num_hidden_layers and vocab_size (got 8, 2, None)"),
])
def test_each_missing_size_is_named(config, message):
    with pytest.raises(CeilingError) as caught:
        c.count_params(config)
    assert str(caught.value) == message


def test_dense_intermediate_size_is_only_for_experts_sized_by_intermediate_size():
    assert c.count_params(dict(DENSE, dense_intermediate_size=32))["read_layer_params"] == 2 * (192 + 384)
    config = dict(DENSE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=2, first_k_dense_replace=1, dense_intermediate_size=32)
    assert c.count_params(config)["read_layer_params"] == 576 + 192 + 96 + 32


def test_shared_experts_count_in_the_total():
    config = dict(DENSE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=2, n_shared_experts=2)
    assert c.count_params(config)["total_params"] == 2 * (192 + 4 * 48 + 96 + 32) + 160


def test_three_linear_layers_of_four():
    config = dict(DENSE, num_hidden_layers=4, full_attention_interval=4, linear_num_key_heads=1, linear_num_value_heads=1,
                  linear_key_head_dim=4, linear_value_head_dim=4, linear_conv_kernel_dim=2)
    assert c.count_params(config)["linear_attention_layers"] == 3


@pytest.mark.parametrize("method", ["gptq", "awq", "gptq_marlin", "awq_marlin", "auto-round", "autoround", "marlin", "hqq", "quark_int4"])
def test_each_group_quantisation_method_alone_defaults_to_int4_in_groups_of_128(method):
    assert c.quantisation_bytes({"quantization_config": {"quant_method": method}}) == (0.5 + 2.5 / 128, "%s int4" % method)


def test_awqs_own_spelling_of_the_bits():
    assert c.quantisation_bytes({"quantization_config": {"quant_method": "awq", "w_bit": 8, "q_group_size": 64}}) == (
        1.0 + 3.0 / 64, "awq int8")


def test_pcie_facts_that_are_not_numbers():
    facts = {"gpus": [{"name": "x", "pcie_gen_max": "", "pcie_width_max": "N/A"}, {"name": "x", "pcie_gen_max": 3, "pcie_width_max": 8}]}
    assert c.facts_inputs(facts, 2) == {"gpu": "x", "pcie_gen": 3, "pcie_width": 8, "link": None, "p2p": None}


def test_a_tree_of_one_draft_token_is_refused():
    with pytest.raises(CeilingError) as caught:
        c.speculative_settings({"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 2, "num_draft_tokens": 1})
    assert str(caught.value) == "speculative num_draft_tokens must be >= 2 (got 1)"


def test_top_1_routing_over_two_tokens():
    assert c.distinct_experts(8, 1, 2) == 8 * (1 - (7 / 8) ** 2)     # 1.875 experts, not 1


def test_the_gpus_per_node_is_a_whole_number():
    inputs = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=4, nnodes=2, link="PHB")["inputs"]
    assert isinstance(inputs["gpus_per_node"], int) and not isinstance(inputs["gpus_per_node"], bool)
    assert inputs["gpus_per_node"] == 2


def test_three_nodes_of_one_gpu():
    # the ring over 3 nodes moves 2 x (3 - 1) / 3 of the 2 KB
    result = c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", tp=3, nnodes=3, link="PHB", internode_bus_gbs=10, internode_latency_us=20)
    assert result["per_step_ms"]["allreduce"] == round(10 * (20e-6 + 2048 * 2.0 * 2 / 3 / 10e9) * 1e3, 4)


@pytest.mark.parametrize("accept, allowed", [(3.0 + 1e-9, True), (3.0000000015, False)])
def test_the_accept_length_tolerance(accept, allowed):
    spec = {"algorithm": "EAGLE", "num_steps": 2}
    if allowed:
        assert c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", accept_length=accept, speculative=spec)["accept_length"] == accept
        assert c.with_accept_length(STEP, accept, spec)["accept_length"] == accept
        return
    with pytest.raises(CeilingError):
        c.decode_ceiling(TOY, gpu="NVIDIA RTX A6000", accept_length=accept, speculative=spec)
    with pytest.raises(CeilingError):
        c.with_accept_length(STEP, accept, spec)


def test_the_per_token_breakdown_divides_every_term():
    result = c.decode_ceiling(TOY, accept_length=2.5, speculative=NEXTN3, **A6000)
    each_s = 8e-6 + 2048 * 2.0 * 1 / 2 / 5.25e9
    weight_s = TOY_BYTES / (2 * 768e9)
    assert result["per_token_ms"] == {"weights": round(weight_s * 1e3 / 2.5, 4), "allreduce": round(10 * each_s * 1e3 / 2.5, 4),
                                      "total": round((weight_s + 10 * each_s) * 1e3 / 2.5, 4)}


def test_a_parameter_count_below_one_parameter_a_layer():
    # 0.1 parameter: no whole parameter in the layers, so the draft's layer is unknown
    result = c.decode_ceiling(1e-10, bandwidth_gbs=1000, dtype="bf16", num_layers=1, hidden_size=10, accept_length=2, speculative=NEXTN3)
    assert result["expected"]["notes"] == ["draft layer size unknown (no layer count): only the LM head is counted"]


def test_a_draft_vocabulary_without_a_hidden_size_is_no_head():
    result = c.decode_ceiling(2, bandwidth_gbs=1000, dtype="bf16", num_layers=10, accept_length=2, speculative=dict(NEXTN3, draft_vocab=1000))
    assert result["expected"]["notes"] == ["draft LM head not counted (no vocabulary size: give a config.json)"]


def test_torch_compile_halves_the_moe_floor_too():
    result = c.decode_ceiling(MOE_TOY, bandwidth_gbs=1000, torch_compile=True)["expected"]
    assert (result["inputs"]["moe_layer_us"], result["inputs"]["layer_overhead_us"], result["per_step_ms"]["moe"]) == (50.0, 10.0, 0.15)


def test_a_breakdowns_draft_pass_to_four_digits():
    out = c.speculative_expectation({"target_ms": 10.0, "draft_pass_ms": 0.123456}, c.speculative_settings(NEXTN3), 2.0)
    assert out["speculative"]["draft_pass_ms"] == 0.1235


def test_a_rebuilt_step_to_two_and_four_digits():
    out = c.with_accept_length({"per_step_ms": {"total": 7.0}}, 3.0)
    assert (out["tokens_per_s_no_spec"], out["tokens_per_s"], out["per_token_ms"]) == (142.86, 428.57, {"total": 2.3333})


def test_the_verdict_figures_to_four_digits():
    above = c.efficiency_verdict(210.123, {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {},
                                           "expected": {"tokens_per_s": 100.0}})
    assert (above["efficiency"], above["efficiency_of_bound"]) == (2.1012, 1.0506)
    near = c.efficiency_verdict(90.123, {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {},
                                         "expected": {"tokens_per_s": 100.0, "band": [0.68, 1.15]}})
    assert near["efficiency"] == 0.9012
    share = c.efficiency_verdict(150.0, {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {}, "expected": {}})
    assert share["verdict"] == "75% of the memory-bandwidth bound (200.0 tok/s)"


def test_a_band_with_more_figures_uses_its_first_two():
    ceiling = {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {},
               "expected": {"tokens_per_s": 100.0, "band": [0.68, 1.15, 9.0]}}
    assert c.efficiency_verdict(90.0, ceiling)["verdict"].startswith("90% of the expected 100.0 tok/s (band 68-115%;")


def test_an_accept_length_without_speculation_adds_no_sentence():
    ceiling = {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {},
               "expected": {"tokens_per_s": 100.0, "band": [0.68, 1.15], "accept_length": 2.0, "tokens_per_s_no_spec": 50.0}}
    assert c.efficiency_verdict(90.0, ceiling)["verdict"].endswith("or a GPU with more memory bandwidth")


def test_the_whole_speculative_verdict():
    ceiling = {"tokens_per_s": 200.0, "bound": "memory_bandwidth", "inputs": {},
               "expected": {"tokens_per_s": 100.0, "band": [0.6, 1.35], "tokens_per_s_no_spec": 62.5, "accept_length": 2.5,
                            "speculative": {"break_even_accept_length": 1.25}}}
    assert c.efficiency_verdict(90.0, ceiling)["verdict"] == (
        "90% of the expected 100.0 tok/s (band 60-135%; memory-bandwidth bound 200.0 tok/s): as expected for this hardware; more flags"
        " will not help much; faster decode needs quantisation, better speculative acceptance or a GPU with more memory bandwidth;"
        " speculation at accept length 2.50 buys 1.60x over none (break-even 1.25)")
