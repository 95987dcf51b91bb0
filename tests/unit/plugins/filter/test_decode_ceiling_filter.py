# -*- coding: utf-8 -*-
"""The gpufleet.sglang.decode_ceiling filter: the module_utils model behind Jinja, errors as filter errors,
and its documentation sidecar parses."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter.decode_ceiling import FilterModule, decode_ceiling
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import decode_ceiling as model_ceiling

CONFIG = {"hidden_size": 5120, "intermediate_size": 17408, "num_hidden_layers": 64, "num_attention_heads": 40,
          "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}


def test_filter_is_registered_and_matches_the_model():
    assert FilterModule().filters()["decode_ceiling"] is decode_ceiling
    kwargs = {"gpu": "NVIDIA RTX A6000", "tp": 2, "link": "PHB", "pcie_gen": 4, "pcie_width": 16, "accept_length": 1.0}
    assert decode_ceiling(CONFIG, **kwargs) == model_ceiling(CONFIG, **kwargs)


def test_filter_accepts_a_parameter_count_even_as_text():
    result = decode_ceiling("27", gpu="NVIDIA RTX A6000", tp="2", link="PHB", dtype="bf16", num_layers=64, hidden_size=5120)
    assert 26.0 <= result["tokens_per_s"] <= 30.0


@pytest.mark.parametrize("value,kwargs,match", [
    (CONFIG, {"gpu": "NVIDIA RTX A6000", "bogus": 1}, "unknown argument"),
    (CONFIG, {"gpu": "Imaginary GPU 9000"}, "not in the bandwidth table"),
    ("a model", {"gpu": "NVIDIA L4"}, "not 'a model'"),
])
def test_filter_errors_are_ansible_filter_errors(value, kwargs, match):
    with pytest.raises(AnsibleFilterError, match=match):
        decode_ceiling(value, **kwargs)


def test_documentation_sidecar_lists_every_argument():
    doc_path = Path(__file__).resolve().parents[4] / "plugins" / "filter" / "decode_ceiling.yml"
    doc = yaml.safe_load(doc_path.read_text(encoding="utf-8"))
    options = set(doc["DOCUMENTATION"]["options"]) - {"_input"}
    from ansible_collections.gpufleet.sglang.plugins.filter import decode_ceiling as plugin  # pylint: disable=import-outside-toplevel
    assert options == set(plugin._KEYWORDS)  # pylint: disable=protected-access
    assert doc["DOCUMENTATION"]["name"] == "decode_ceiling" and "tokens_per_s" in doc["RETURN"]["_value"]["contains"]
