# -*- coding: utf-8 -*-
"""gpu.ceiling's inputs, one rule at a time: parameter counts of small configs worked out by hand, each
quantisation layout's bytes per weight, each dtype and config key spelling, the TP group's link and P2P, the
server's flags, the speculative settings SGLang resolves, and the verdict's cut-offs (make mutation:
tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu import ceiling as c
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import CeilingError

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
