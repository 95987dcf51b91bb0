# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The invalid_arguments hints word for word, for the parser messages the corpus holds few of.

The issue's promise for a CLI error: its hint speaks the role's language (sglang_server_args keys, with underscores) and
names vLLM's flags with their SGLang equivalents. The equivalents are pinned here as the docs state them
(docs/startup-failure-causes.md, invalid_arguments), not read from the module's table, so a wrong entry fails.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import hint_for

USAGE = "usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]\n"
VLLM = {
    "--gpu-memory-utilization 0.9": "gpu_memory_utilization is mem_fraction_static",
    "--max-model-len 8192": "max_model_len is context_length",
    "--max-num-seqs 64": "max_num_seqs is max_running_requests",
    "--max-num-batched-tokens 4096": "max_num_batched_tokens is chunked_prefill_size",
    "--enforce-eager": "enforce_eager is disable_cuda_graph (cuda_graph_backend_decode: disabled from 0.5.20)",
    "--pipeline-parallel-size 2": "pipeline_parallel_size is pp_size",
    "--data-parallel-size 2": "data_parallel_size is dp_size",
    "--enable-prefix-caching": "enable_prefix_caching is nothing (SGLang's radix cache is on unless disable_radix_cache)",
    "--swap-space 4": "swap_space is nothing (no CPU swap space in SGLang)",
}


def _hint(message: str) -> str:
    return hint_for("invalid_arguments", message, "args", USAGE + message)


@pytest.mark.parametrize("flags", sorted(VLLM), ids=[flags.split()[0] for flags in sorted(VLLM)])
def test_each_vllm_flag_is_named_with_its_sglang_equivalent(flags):
    key = flags.split()[0][2:].replace("-", "_")
    hint = _hint(f"launch_server.py: error: unrecognized arguments: {flags}")
    assert hint.startswith(f"SGLang does not know {flags}: remove {key} from sglang_server_args or fix the key (keys are "
                           "SGLang's option names with underscores; the parser prints them dashed). Those are vLLM's names; "
                           f"in SGLang {VLLM[flags]}. A flag newer than the installed release needs an upgrade")


def test_several_vllm_flags_are_named_in_key_order_and_a_flag_with_its_value_is_one_key():
    hint = _hint("launch_server.py: error: unrecognized arguments: --max-model-len=8192 --enforce-eager --foo-bar 1")
    assert ("SGLang does not know --max-model-len=8192 --enforce-eager --foo-bar 1: remove enforce_eager, foo_bar, "
            "max_model_len from sglang_server_args") in hint
    assert ("Those are vLLM's names; in SGLang enforce_eager is disable_cuda_graph (cuda_graph_backend_decode: disabled "
            "from 0.5.20); max_model_len is context_length. A flag") in hint


def test_a_flag_of_no_other_engine_gets_no_vllm_sentence():
    hint = _hint("launch_server.py: error: unrecognized arguments: --enable-foo")
    assert "vLLM" not in hint
    assert hint.startswith("SGLang does not know --enable-foo: remove enable_foo from sglang_server_args or fix the key")


def test_an_ambiguous_prefix_names_its_choices():
    hint = _hint("launch_server.py: error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
                 "--cuda-graph-max-bs-prefill")
    assert hint == ("--cuda-graph-max-bs is only a prefix of --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill: use "
                    "the full option name, e.g. cuda_graph_max_bs_decode instead of cuda_graph_max_bs on SGLang 0.5.20 and "
                    "later.")


def test_an_invalid_choice_names_the_key():
    hint = _hint("launch_server.py: error: argument --attention-backend: invalid choice: 'fa9' (choose from 'fa3', 'triton')")
    assert hint == ("'fa9' is not a value --attention-backend takes: set attention_backend in sglang_server_args to one of "
                    "the choices error_message lists.")


def test_an_empty_argument_is_named_as_one():
    hint = _hint("launch_server.py: error: unrecognized arguments: ")
    assert hint == ("The parser was handed an empty argument (unrecognized arguments: with nothing after it): a variable that "
                    "expands to an empty word, such as a quoted \"$EXTRA_ARGS\" in a unit's ExecStart or a wrapper script. "
                    "Drop the empty argument (leave the variable unquoted, or remove it); sglang_server renders every option "
                    "itself, so extra options go in sglang_server_extra_args.")


def test_a_usage_banner_alone_sends_the_operator_to_the_preflight_lint():
    assert hint_for("invalid_arguments", "usage: launch_server.py [-h] --model-path MODEL_PATH", "args", USAGE) == (
        "The argument parser rejected the command line (only its usage banner reached the log): run the preflight lint, "
        "which checks every key of sglang_server_args against the installed SGLang's parser.")


@pytest.mark.parametrize("message, evidence", [
    ("ValueError: Unknown level: 'INFO'", "ValueError: Unknown level: 'INFO'"),
    ("KeyError: 'INFO'", "    log_level = LOG_LEVELS[log_level]\nKeyError: 'INFO'"),
    ("launch_server.py: error: argument --log-level: expected one argument", ""),
])
def test_a_log_level_uvicorn_does_not_know_is_named_in_each_wording(message, evidence):
    assert hint_for("invalid_arguments", message, "args", evidence).startswith(
        "The log level is not one the server's logging knows: uvicorn takes only lower-case names, so set log_level "
        "(and log_level_http) in sglang_server_args to debug, info, warning, error or critical (info, not INFO).")
