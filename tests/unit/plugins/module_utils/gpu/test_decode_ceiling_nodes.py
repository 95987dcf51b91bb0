# -*- coding: utf-8 -*-
"""decode_ceiling across nodes (a serving group, --nnodes > 1): the all-reduce pays the node's own link and the
link between the nodes, from the inputs or from the assumed figures with a note; exact arithmetic."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import (
    EXTRA_COLLECTIVES, CeilingError, decode_ceiling, server_args_inputs)
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.specs import (
    ALLREDUCE_LATENCY_US, INTERNODE_BUS_GBS, INTERNODE_LATENCY_US, allreduce_bus_gbs)

LLAMA3_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16"}
BOX = {"gpu": "NVIDIA RTX A6000", "link": "PHB", "pcie_gen": 4, "pcie_width": 16, "p2p": True}


def test_two_nodes_of_two_gpus_pay_the_pcie_nccl_and_the_network():
    one = decode_ceiling(LLAMA3_8B, tp=4, **BOX)
    two = decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, internode_bus_gbs=12.5, internode_latency_us=30, **BOX)
    count = 2 * 32 + EXTRA_COLLECTIVES
    hidden_bytes = 4096 * 2.0
    intra = ALLREDUCE_LATENCY_US[("pcie", "nccl")] * 1e-6 + hidden_bytes * 2 * 1 / 2 / (allreduce_bus_gbs("pcie_host_bridge", 4, 16) * 1e9)
    inter = 30e-6 + hidden_bytes * 2 * 1 / 2 / 12.5e9
    assert two["per_step_ms"]["allreduce"] == pytest.approx(round(count * (intra + inter) * 1e3, 4), abs=1e-4)
    assert two["per_step_ms"]["weights"] == one["per_step_ms"]["weights"]  # the weights are split the same way
    assert two["tokens_per_s"] < one["tokens_per_s"]
    assert two["expected"]["tokens_per_s"] < one["expected"]["tokens_per_s"]
    inputs = two["inputs"]
    assert inputs["nnodes"] == 2 and inputs["gpus_per_node"] == 2 and inputs["allreduce_impl"] == "nccl"
    assert inputs["internode_bus_gbs"] == 12.5 and inputs["internode_latency_us"] == 30
    assert inputs["allreduce_latency_us"] == pytest.approx(ALLREDUCE_LATENCY_US[("pcie", "nccl")] + 30)
    assert "given" in inputs["internode_source"] and not any("between nodes" in n for n in two["notes"])


def test_without_the_link_the_assumed_figures_are_used_and_said():
    result = decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, **BOX)
    assert result["inputs"]["internode_bus_gbs"] == INTERNODE_BUS_GBS
    assert result["inputs"]["internode_latency_us"] == INTERNODE_LATENCY_US
    assert any("set internode_bus_gbs and internode_latency_us" in note for note in result["notes"])
    slower = decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, internode_bus_gbs=1.0, internode_latency_us=200, **BOX)
    assert slower["tokens_per_s"] < result["tokens_per_s"]


def test_one_gpu_per_node_pays_only_the_network():
    result = decode_ceiling(LLAMA3_8B, tp=2, nnodes=2, internode_bus_gbs=10, internode_latency_us=40, **BOX)
    count = 2 * 32 + EXTRA_COLLECTIVES
    each = 40e-6 + 4096 * 2.0 * 2 * 1 / 2 / 10e9
    assert result["per_step_ms"]["allreduce"] == pytest.approx(round(count * each * 1e3, 4), abs=1e-4)


def test_the_nodes_come_from_the_server_args_too():
    assert server_args_inputs({"tp_size": 4, "nnodes": 2}) == {"tp": 4, "nnodes": 2}
    assert "nnodes" not in server_args_inputs({"tp_size": 4, "nnodes": 1})
    by_args = decode_ceiling(LLAMA3_8B, server_args={"tp_size": 4, "nnodes": 2}, **BOX)
    assert by_args["inputs"]["nnodes"] == 2 and by_args["inputs"]["tp"] == 4
    assert by_args == decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, **BOX)


def test_a_measured_group_latency_wins():
    result = decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, allreduce_latency_us=90, **BOX)
    assert result["inputs"]["allreduce_latency_us"] == 90 and result["inputs"]["allreduce_source"] == "given"


@pytest.mark.parametrize("tp, nnodes", [(4, 3), (1, 2)])
def test_nodes_that_do_not_divide_tp_are_refused(tp, nnodes):
    with pytest.raises(CeilingError, match="nnodes %d does not divide tp %d" % (nnodes, tp)):
        decode_ceiling(LLAMA3_8B, tp=tp, nnodes=nnodes, **BOX)


def test_a_bad_link_figure_is_refused():
    with pytest.raises(CeilingError, match="internode_bus_gbs must be positive"):
        decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, internode_bus_gbs=0, **BOX)


def test_one_node_is_unchanged():
    assert decode_ceiling(LLAMA3_8B, tp=2, nnodes=1, **BOX)["per_step_ms"] == decode_ceiling(LLAMA3_8B, tp=2, **BOX)["per_step_ms"]


def test_a_nodes_facts_describe_its_own_gpus():
    facts = {"gpus": [{"name": "NVIDIA RTX A6000", "pcie_gen_max": 4, "pcie_width_max": 16}] * 2, "links": {"0-1": "PHB"},
             "p2p_read": {"0-1": "OK"}}
    result = decode_ceiling(LLAMA3_8B, tp=4, nnodes=2, gpu_facts=facts)
    assert result["inputs"]["link"] == "PHB" and result["inputs"]["gpu"] == "NVIDIA RTX A6000"
    assert result["inputs"]["gpus_per_node"] == 2
