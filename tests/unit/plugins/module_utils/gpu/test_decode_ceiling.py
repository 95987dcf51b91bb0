# -*- coding: utf-8 -*-
"""decode_ceiling: parameter counts of known models, bytes per parameter, the story's box, the bound, the expected
figure term by term (exact), speculative cycles, rescaling and verdicts."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import (
    CeilingError,
    band_class_of,
    count_params,
    decode_ceiling,
    distinct_experts,
    dtype_bytes,
    efficiency_verdict,
    facts_inputs,
    quantisation_bytes,
    server_args_inputs,
    speculative_settings,
    with_accept_length,
)

# Shapes from the models' public config.json files.
LLAMA3_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
MIXTRAL_8X7B = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
QWEN3_30B_A3B = {"hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
                 "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
                 "mlp_only_layers": [], "vocab_size": 151936, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
DEEPSEEK_V3 = {"hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
               "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
               "moe_layer_freq": 1, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
               "vocab_size": 129280, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
               "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}}
# The story's model class: a 27B dense multimodal checkpoint (Qwen3.5-27B shape: 64 layers, 3 of 4 gated-DeltaNet).
QWEN35_27B = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "tie_word_embeddings": False,
              "text_config": {"model_type": "qwen3_5_text", "dtype": "bfloat16", "hidden_size": 5120, "intermediate_size": 17408,
                              "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
                              "attn_output_gate": True, "vocab_size": 248320, "full_attention_interval": 4, "linear_num_key_heads": 16,
                              "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                              "linear_conv_kernel_dim": 4, "mtp_num_hidden_layers": 1},
              "vision_config": {"depth": 27, "hidden_size": 1152}}
STORY_BOX = {"gpu": "NVIDIA RTX A6000", "tp": 2, "link": "PHB", "pcie_gen": 4, "pcie_width": 16}


@pytest.mark.parametrize("config,total_b,active_b", [
    (LLAMA3_8B, 8.03, 8.03),
    (MIXTRAL_8X7B, 46.7, 12.9),
    (QWEN3_30B_A3B, 30.5, 3.3),
    (DEEPSEEK_V3, 671.0, 37.5),
    (QWEN35_27B, 26.9, 26.9),   # text model; the vision tower and the MTP layer are not counted
])
def test_parameter_counts_match_the_model_cards(config, total_b, active_b):
    counts = count_params(config)
    assert counts["total_params"] / 1e9 == pytest.approx(total_b, rel=0.02)
    assert counts["active_params"] / 1e9 == pytest.approx(active_b, rel=0.03)


def test_untied_input_embedding_is_not_read_per_token_but_a_tied_one_is_read_as_the_head():
    untied = count_params(LLAMA3_8B)
    tied = count_params(dict(LLAMA3_8B, tie_word_embeddings=True))
    assert untied["read_head_params"] == tied["read_head_params"] == 128256 * 4096
    assert untied["read_layer_params"] == tied["read_layer_params"]
    assert untied["total_params"] - tied["total_params"] == 128256 * 4096


@pytest.mark.parametrize("qcfg,expected", [
    ({"quant_method": "fp8"}, 1.0),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128}, 0.5 + 2.5 / 128),
    ({"quant_method": "awq", "bits": 4, "group_size": -1}, 0.5),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, 0.5625),
    ({"quant_method": "mxfp4"}, 0.53125),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}, 1.0),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}}}},
     0.5 + 2.5 / 128),
])
def test_bytes_per_weight_from_quantization_config(qcfg, expected):
    assert quantisation_bytes({"quantization_config": qcfg})[0] == pytest.approx(expected)


def test_dtype_names_and_unknown_quantisation():
    assert dtype_bytes("torch.bfloat16") == 2.0 and dtype_bytes("float32") == 4.0 and dtype_bytes("fp8") == 1.0
    assert quantisation_bytes(LLAMA3_8B) is None
    with pytest.raises(CeilingError, match="unknown dtype"):
        dtype_bytes("bf13")
    with pytest.raises(CeilingError, match="bytes_per_param"):
        quantisation_bytes({"quantization_config": {"quant_method": "mystery"}})


def test_story_box_ceiling_is_between_26_and_30_tok_s():
    from_config = decode_ceiling(QWEN35_27B, **STORY_BOX)
    from_count = decode_ceiling(27, dtype="bf16", num_layers=64, hidden_size=5120, **STORY_BOX)
    for ceiling in (from_config, from_count):
        assert 26.0 <= ceiling["tokens_per_s"] <= 30.0
        assert ceiling["bound"] == "memory_bandwidth"
        assert ceiling["inputs"]["allreduce_impl"] == "custom" and ceiling["inputs"]["allreduces_per_step"] == 130
    step = from_config["per_step_ms"]
    assert step["total"] == pytest.approx(step["weights"] + step["allreduce"], abs=1e-3)
    assert 1.0 < step["allreduce"] < 2.0                      # 130 x ~8 us over PCIe
    # the bound at accept length 2 (drafts free): what "ceiling x accept length" used to promise
    assert 50 <= decode_ceiling(QWEN35_27B, accept_length=2.0, **STORY_BOX)["tokens_per_s"] <= 60


def test_breakdown_arithmetic_for_a_single_gpu():
    ceiling = decode_ceiling(8, gpu="NVIDIA H100 80GB HBM3", dtype="bf16")
    assert ceiling["per_step_ms"]["allreduce"] == 0.0
    assert ceiling["per_step_ms"]["weights"] == pytest.approx(16e9 / 3350e9 * 1e3, rel=1e-4)
    assert ceiling["tokens_per_s"] == pytest.approx(3350 / 16, rel=1e-3)
    assert decode_ceiling(8, gpu="NVIDIA H100 80GB HBM3", dtype="bf16", achievable_fraction=0.8)["tokens_per_s"] == pytest.approx(0.8 * 3350 / 16, rel=1e-3)


def test_quantisation_moe_and_bandwidth_override():
    bf16 = decode_ceiling(LLAMA3_8B, gpu="NVIDIA L40S")
    fp8 = decode_ceiling(dict(LLAMA3_8B, quantization_config={"quant_method": "fp8"}), gpu="NVIDIA L40S")
    assert 1.7 < fp8["tokens_per_s"] / bf16["tokens_per_s"] < 2.0   # the bf16 LM head keeps it below 2x
    moe = decode_ceiling(QWEN3_30B_A3B, gpu="NVIDIA L40S")
    counts = count_params(QWEN3_30B_A3B)
    read = (counts["read_layer_params"] + counts["read_head_params"]) * 2.0   # routed experts only, not all 128
    assert moe["inputs"]["moe"] and moe["inputs"]["weight_bytes_per_step"] == int(read)
    assert moe["tokens_per_s"] == pytest.approx(864e9 / read, rel=1e-3)
    assert decode_ceiling(LLAMA3_8B, bandwidth_gbs=1000)["inputs"]["bandwidth_source"] == "given"


def test_interconnect_changes_the_allreduce_term_and_can_dominate():
    nvlink = decode_ceiling(LLAMA3_8B, gpu="NVIDIA H100 80GB HBM3", tp=8, link="NV18")
    pcie = decode_ceiling(LLAMA3_8B, gpu="NVIDIA H100 PCIe", tp=8, link="SYS")
    assert nvlink["per_step_ms"]["allreduce"] < pcie["per_step_ms"]["allreduce"]
    assert pcie["inputs"]["allreduce_impl"] == "nccl" and pcie["bound"] == "allreduce_latency"
    geforce = decode_ceiling(LLAMA3_8B, gpu="NVIDIA GeForce RTX 4090", tp=2, link="PHB")
    assert geforce["inputs"]["p2p"] is False and geforce["inputs"]["allreduce_impl"] == "nccl"
    guessed = decode_ceiling(LLAMA3_8B, gpu="NVIDIA L40S", tp=2)
    assert guessed["inputs"]["link_kind"] == "pcie_host_bridge" and "assumed PCIe" in guessed["notes"][0]


def test_gpu_facts_supply_name_link_pcie_and_p2p():
    facts = {"gpus": [{"name": "NVIDIA RTX A6000", "pcie_gen_max": 4, "pcie_width_max": 16},
                      {"name": "NVIDIA RTX A6000", "pcie_gen_max": 4, "pcie_width_max": 8}],
             "links": {"0-1": "PHB"}, "p2p_read": {"0-1": "OK"}}
    assert facts_inputs(facts, 2) == {"gpu": "NVIDIA RTX A6000", "pcie_gen": 4, "pcie_width": 8, "link": "PHB", "p2p": True}
    ceiling = decode_ceiling(QWEN35_27B, tp=2, gpu_facts=facts)
    assert ceiling["inputs"]["gpu_matched"] == "NVIDIA RTX A6000" and ceiling["inputs"]["pcie_width"] == 8
    no_p2p = copy.deepcopy(facts)
    no_p2p["p2p_read"] = {"0-1": "CNS"}
    assert decode_ceiling(QWEN35_27B, tp=2, gpu_facts=no_p2p)["inputs"]["allreduce_impl"] == "nccl"
    four = {"gpus": [{"name": "NVIDIA L40S"}] * 4, "links": {"0-1": "PIX", "0-2": "SYS", "1-3": "PXB"}}
    assert facts_inputs(four, 4)["link"] == "SYS" and facts_inputs(four, 2)["link"] == "PIX"


NEXTN3 = {"algorithm": "NEXTN", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}


def test_speculation_scales_the_bound_and_rescaling_agrees():
    base = decode_ceiling(QWEN35_27B, **STORY_BOX)
    spec = decode_ceiling(QWEN35_27B, accept_length=2.5, speculative=NEXTN3, **STORY_BOX)
    assert spec["tokens_per_s"] == pytest.approx(2.5 * base["tokens_per_s"], rel=1e-3)
    assert spec["per_token_ms"]["total"] == pytest.approx(base["per_token_ms"]["total"] / 2.5, rel=1e-3)
    assert with_accept_length(base, 2.5, NEXTN3)["tokens_per_s"] == pytest.approx(spec["tokens_per_s"], rel=1e-3)
    with pytest.raises(CeilingError, match=">= 1.0"):
        decode_ceiling(QWEN35_27B, accept_length=0.5, **STORY_BOX)
    with pytest.raises(CeilingError, match="more than 3 speculative steps can give"):
        decode_ceiling(QWEN35_27B, accept_length=4.5, speculative=NEXTN3, **STORY_BOX)


def test_expected_figure_of_the_story_box_term_by_term():
    expected = decode_ceiling(QWEN35_27B, **STORY_BOX)["expected"]
    # 54.3 GB of weights over 2 x 768 GB/s at 0.88 sustained; 400 us a step + 64 layers x 20 us; 130 all-reduces x 8.5 us
    assert expected["per_step_ms"] == {"weights": 37.9142, "overhead": 1.68, "moe": 0.0, "allreduce": 1.1034, "total": 40.6976}
    assert expected["tokens_per_s"] == expected["tokens_per_s_no_spec"] == 24.57
    assert expected["band_class"] == "dense" and expected["band"] == [0.68, 1.15]
    assert (expected["low"], expected["high"]) == (16.71, 28.26)
    assert expected["inputs"]["sustained_fraction"] == 0.88 and expected["inputs"]["allreduce_latency_us"] == 8.0


def test_speculation_pays_its_drafts_and_verify_pass():
    ceiling = decode_ceiling(QWEN35_27B, accept_length=2.863, speculative=NEXTN3, **STORY_BOX)
    spec = ceiling["expected"]["speculative"]
    # draft pass: one target-shaped layer (0.84 GB) and the LM head (2.54 GB) per GPU pair, 60 us, 3 all-reduces
    assert spec == {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4, "verify_ms": 40.6976,
                    "draft_pass_ms": 2.5497, "draft_passes": 4, "cycle_ms": 50.8964, "break_even_accept_length": 1.251,
                    "max_accept_length": 4.0}
    assert ceiling["expected"]["tokens_per_s"] == 56.25          # 2.863 tokens per 50.9 ms cycle
    assert ceiling["tokens_per_s"] == 83.06                      # the bound: 2.863 x 29.01, drafts free
    assert ceiling["expected"]["band_class"] == "speculative"
    # what the accept length buys: 2.29x over no speculation, not 2.86x; an accept length of 1.2 loses speed
    assert round(56.25 / 24.57, 2) == 2.29
    assert decode_ceiling(QWEN35_27B, accept_length=1.2, speculative=NEXTN3, **STORY_BOX)["expected"]["tokens_per_s"] == 23.58


def test_moe_verify_reads_the_experts_of_every_draft_token():
    assert distinct_experts(256, 8, 1) == 8.0
    assert distinct_experts(256, 8, 4) == pytest.approx(30.531, abs=1e-3)
    box = {"gpu": "NVIDIA H200", "tp": 8, "link": "NV18"}
    plain = decode_ceiling(DEEPSEEK_V3, **box)
    assert plain["expected"]["per_step_ms"] == {"weights": 1.2224, "overhead": 1.62, "moe": 5.8, "allreduce": 0.7596, "total": 9.4019}
    assert plain["expected"]["tokens_per_s"] == 106.36 and plain["tokens_per_s"] == 575.56
    spec = decode_ceiling(DEEPSEEK_V3, accept_length=2.8, speculative=NEXTN3, **box)["expected"]
    # 0.665 ms of routed experts per token x (30.5 / 8 - 1) more for the four verified tokens
    assert spec["speculative"]["verify_ms"] == pytest.approx(9.4019 + 0.6652 * (30.531 / 8 - 1), abs=1e-3)
    assert spec["tokens_per_s"] == 226.05


def test_cuda_graphs_torch_compile_and_custom_allreduce_move_the_expectation_not_the_bound():
    box = {"gpu": "NVIDIA H100 80GB HBM3"}
    graphs = decode_ceiling(LLAMA3_8B, **box)
    eager = decode_ceiling(LLAMA3_8B, cuda_graphs=False, **box)
    compiled = decode_ceiling(LLAMA3_8B, torch_compile=True, **box)
    assert [c["expected"]["per_step_ms"]["overhead"] for c in (graphs, eager, compiled)] == [1.04, 2.48, 0.72]
    assert [c["expected"]["tokens_per_s"] for c in (graphs, eager, compiled)] == [153.75, 125.88, 161.71]
    assert graphs["tokens_per_s"] == eager["tokens_per_s"] == compiled["tokens_per_s"] == 223.19
    assert eager["expected"]["band_class"] == "eager"
    nccl = decode_ceiling(QWEN35_27B, custom_allreduce=False, **STORY_BOX)
    assert nccl["inputs"]["allreduce_impl"] == "nccl" and nccl["expected"]["per_step_ms"]["allreduce"] == 2.6634


def test_server_args_decide_the_same_inputs():
    args = {"tp_size": 2, "disable_cuda_graph": "false", "enable_torch_compile": True, "disable_custom_all_reduce": True,
            "speculative_algorithm": "NEXTN", "speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}
    assert server_args_inputs(args) == {"tp": 2, "torch_compile": True, "custom_allreduce": False,
                                        "speculative": {"algorithm": "NEXTN", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}}
    explicit = decode_ceiling(QWEN35_27B, gpu="NVIDIA RTX A6000", tp=2, link="PHB", torch_compile=True, custom_allreduce=False,
                              speculative=NEXTN3, accept_length=2.5)
    from_args = decode_ceiling(QWEN35_27B, gpu="NVIDIA RTX A6000", link="PHB", server_args=args, accept_length=2.5)
    assert from_args["expected"] == explicit["expected"] and from_args["tokens_per_s"] == explicit["tokens_per_s"]
    assert server_args_inputs(None) == {} and server_args_inputs({"tp_size": 1}) == {"tp": 1}


def test_speculative_settings_follow_sglangs_resolution():
    assert speculative_settings(None) is None and speculative_settings({"algorithm": "none"}) is None
    auto = speculative_settings("nextn")
    assert (auto["algorithm"], auto["num_steps"], auto["eagle_topk"], auto["num_draft_tokens"]) == ("EAGLE", 3, 1, 4)
    assert speculative_settings({"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 8})["num_draft_tokens"] == 4
    tree = speculative_settings({"algorithm": "EAGLE3", "num_steps": 6, "eagle_topk": 10, "num_draft_tokens": 32})
    assert tree["num_draft_tokens"] == 32 and tree["max_accept_length"] == 7.0
    with pytest.raises(CeilingError, match="STANDALONE needs draft_params_b"):
        speculative_settings({"algorithm": "STANDALONE", "num_steps": 3})
    with pytest.raises(CeilingError, match="must be a dict"):
        speculative_settings(3)


def test_speculative_server_without_an_accept_length_is_bounded_at_its_drafts_most():
    ceiling = decode_ceiling(QWEN35_27B, speculative=NEXTN3, **STORY_BOX)
    assert ceiling["accept_length"] == 4.0 and ceiling["accept_length_measured"] is False
    assert ceiling["tokens_per_s"] == 116.05 and ceiling["expected"]["tokens_per_s"] is None
    verdict = efficiency_verdict(56.0, ceiling)
    assert verdict["efficiency"] is None and verdict["efficiency_of_bound"] == 0.4826
    assert "no expected figure (speculation pays above an accept length of 1.25 on this box)" in verdict["verdict"]
    # the probe's measured accept length then gives both
    measured = with_accept_length(decode_ceiling(QWEN35_27B, **STORY_BOX), 2.863, NEXTN3)
    assert measured["expected"]["tokens_per_s"] == 56.25 and measured["accept_length_measured"] is True
    assert with_accept_length(decode_ceiling(QWEN35_27B, **STORY_BOX), None, NEXTN3)["tokens_per_s"] == 116.05


def test_band_classes():
    assert band_class_of(NEXTN3, True, True, 8) == "speculative"
    assert band_class_of(None, False, False, 1) == "eager"
    assert band_class_of(None, True, True, 2) == "moe"
    assert band_class_of(None, True, False, 4) == "dense_tp"
    assert band_class_of(None, True, False, 2) == "dense"


@pytest.mark.parametrize("kwargs,match", [
    ({"gpu": "Imaginary GPU 9000"}, "not in the bandwidth table"),
    ({}, "no GPU"),
    ({"gpu": "NVIDIA L4", "link": "carrier pigeon", "tp": 2}, "unknown link"),
])
def test_missing_or_wrong_inputs_name_themselves(kwargs, match):
    with pytest.raises(CeilingError, match=match):
        decode_ceiling(LLAMA3_8B, **kwargs)
    with pytest.raises(CeilingError, match="num_layers and hidden_size"):
        decode_ceiling(27, gpu="NVIDIA L4", tp=2)
    with pytest.raises(CeilingError, match="no model"):
        decode_ceiling(None, gpu="NVIDIA L4")
    with pytest.raises(CeilingError, match="hidden_size, num_hidden_layers and vocab_size"):
        decode_ceiling({"hidden_size": 1}, gpu="NVIDIA L4")


def test_verdicts_read_the_expectation_and_keep_the_bound():
    ceiling = decode_ceiling(QWEN35_27B, **STORY_BOX)   # expected 24.57 (band 16.71-28.26), bound 29.01
    near = efficiency_verdict(22.0, ceiling)
    assert (near["efficiency"], near["efficiency_of_bound"]) == (0.8954, 0.7584)
    assert near["verdict"] == ("90% of the expected 24.6 tok/s (band 68-115%; memory-bandwidth bound 29.0 tok/s): as expected for "
                               "this hardware; more flags will not help much; faster decode needs quantisation, better speculative "
                               "acceptance or NVLink")
    assert "below what this hardware normally reaches" in efficiency_verdict(15.0, ceiling)["verdict"]
    assert "faster than this model of the box expects, still under the bound" in efficiency_verdict(28.5, ceiling)["verdict"]
    above = efficiency_verdict(31.0, ceiling)
    assert above["verdict"].startswith("107% of the memory-bandwidth bound (29.0 tok/s), above it: check the ceiling's inputs")
    single = decode_ceiling(LLAMA3_8B, gpu="NVIDIA H100 80GB HBM3")
    assert "a GPU with more memory bandwidth" in efficiency_verdict(150.0, single)["verdict"]
    bound = decode_ceiling(LLAMA3_8B, gpu="NVIDIA H100 PCIe", tp=8, link="SYS")
    assert "all-reduce latency bound" in efficiency_verdict(0.95 * bound["expected"]["tokens_per_s"], bound)["verdict"]
    spec = decode_ceiling(QWEN35_27B, accept_length=2.863, speculative=NEXTN3, **STORY_BOX)
    assert efficiency_verdict(54.0, spec)["verdict"].endswith("speculation at accept length 2.86 buys 2.29x over none (break-even 1.25)")
    assert efficiency_verdict(None, ceiling) == {"efficiency": None, "efficiency_of_bound": None, "verdict": None}
