# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the eighth test split's misses (corpus split ``opened8``).

Each kind is a rule in causes.py or scanner.py with its hint; the lines are small ones built from the wording of the
corpus logs and of other logs of the same family (341 a backend refused on a GPU architecture named by its family,
its SM number or AMD's names; 347 and 348 argparse's own refusal of a command line, under any entry point's name or
none; 350 a parser's special token that the model's tokenizer does not have as one token; 352 SGLang's refusal of a
KV cache the weights leave no memory for, in the phrasings of several releases; 362 a model path naming a file that
transformers reads as the JSON config and cannot), and every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 341, and other phrasings of a backend refused on an architecture
FA3_BLACKWELL = "ValueError: The 'fa3' backend is not supported on Blackwell GPUs"
ARCH_LINES = (
    FA3_BLACKWELL,
    "ValueError: FlashAttention v3 backend is only supported on Hopper (SM90).",
    "RuntimeError: trtllm_mha backend is not supported on SM120; use flashinfer or triton.",
    "AssertionError: The aiter backend requires an AMD MI300 or newer GPU",
    "ValueError: FlashMLA is not available on sm_89",
    "RuntimeError: This kernel is only available on NVIDIA Hopper GPUs",
)
# 347 and 348: argparse's refusal with the program name lost, and under other entry points
ARGPARSE_LINES = (
    "error: unrecognized arguments: --served-model-name minimax-h3",
    "sglang serve: error: unrecognized arguments: --model-variant fl2va",
    "sglang: error: the following arguments are required: --model-path",
    "launch_server.py: error: argument --attention-backend: invalid choice: 'fa9' (choose from 'fa3', 'flashinfer', 'triton')",
    "error: argument --tp-size: invalid int value: 'two'",
)
# 350 and other parsers' tokens
PARSER_LINES = (
    "ValueError: think_end_token '</think>' must encode to exactly one token for constrained reasoning.",
    "ValueError: think_start_token '<think>' is not a single token of the tokenizer",
    "ValueError: bot_token '<|tool_call|>' not found in the tokenizer vocabulary",
)
# 352 and other releases' phrasings of a KV cache with no memory left
KV_LINES = (
    "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.",
    "RuntimeError: Not enough memory for the KV cache: increase --mem-fraction-static.",
    "RuntimeError: insufficient GPU memory to allocate KV cache (available memory for KV cache is -3.20 GB)",
)
# 362: the model path names a raw checkpoint file that transformers reads as the JSON config
PTH_CONFIG = ('  File "/venv/lib/python3.10/site-packages/transformers/configuration_utils.py", line 866, in _dict_from_json_file\n'
              "    text = reader.read()\n"
              '  File "/venv/lib/python3.10/codecs.py", line 322, in decode\n'
              "    (result, consumed) = self._buffer_decode(data, self.errors, final)\n"
              "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 64: invalid start byte\n")
NOT_JSON = "OSError: It looks like the config file at './out/full_sft_768.pth' is not a valid JSON file."


@pytest.mark.parametrize("evidence,cause", [
    *((line, "unsupported_gpu") for line in ARCH_LINES),
    # a backend refused for a model or a setting is no GPU's architecture
    ("ValueError: The 'fa3' backend is not supported on this model", "unknown"),
    ("ValueError: trtllm_mha backend is not supported for head_dim 96", "unknown"),
    *((line, "incompatible_arguments") for line in PARSER_LINES),
    # a tokenizer's own notice about a token is no refusal
    ("Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.",
     "unknown"),
    *((line, "gpu_out_of_memory") for line in KV_LINES),
    # the KV cache's allocation report of a healthy start says how much it took
    ("KV Cache is allocated. #tokens: 429312, K size: 24.56 GB, V size: 24.56 GB", "unknown"),
    ("Memory pool end. avail mem=12.25 GB", "unknown"),
    (PTH_CONFIG, "model_unavailable"),
    (NOT_JSON, "model_unavailable"),
    # a UnicodeDecodeError elsewhere (a log file, a prompt) is not the config
    ('  File "/venv/lib/python3.10/site-packages/sglang/srt/utils.py", line 10, in read_text\n'
     "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 64: invalid start byte\n", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


@pytest.mark.parametrize("line", ARGPARSE_LINES)
def test_argparse_refusal_under_any_entry_point_fails_the_start_as_invalid_arguments(line):
    result = scan_startup_log("sglang serve --model-path /m --port 30010\n\n" + line + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "invalid_arguments")
    assert result["error_message"] == line


def test_words_like_argparse_that_argparse_does_not_print_are_no_refusal():
    """A log line that says ``error:`` with other words (a request's, a library's) is not the parser refusing."""
    text = ("Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n"
            "error: connection reset while streaming\n"
            "The server is fired up and ready to roll!\n")
    result = scan_startup_log(text)
    assert result["outcome"] == "ready"


def test_the_kinds_hints_say_what_to_do():
    arch = hint_for("unsupported_gpu", FA3_BLACKWELL, None, FA3_BLACKWELL)
    assert "attention_backend" in arch and "mm_attention_backend" in arch and "Hopper" in arch
    served = "error: unrecognized arguments: --served-model-name minimax-h3"
    unknown_flag = hint_for("invalid_arguments", served, None, served)
    assert "served_model_name" in unknown_flag and "diffusion server" in unknown_flag and "upgrade" in unknown_flag
    parser = hint_for("incompatible_arguments", PARSER_LINES[0], None, PARSER_LINES[0])
    assert "reasoning_parser" in parser and "sglang_install_version" in parser
    kv = hint_for("gpu_out_of_memory", KV_LINES[0], "weights_loading", KV_LINES[0])
    assert "raise mem_fraction_static" in kv
    pth = hint_for("model_unavailable", PTH_CONFIG.splitlines()[-1], None, PTH_CONFIG)
    assert "model directory" in pth and ".pth" in pth


def test_lone_lines_of_the_kinds_are_evidence_once_the_start_failed():
    cases = [(line, "unsupported_gpu") for line in ARCH_LINES] + [(line, "incompatible_arguments") for line in PARSER_LINES]
    cases += [(line, "gpu_out_of_memory") for line in KV_LINES] + [(NOT_JSON, "model_unavailable")]
    for line, cause in cases:
        assert is_notable(line), line
        result = scan_startup_log(line + "\n", ended=True)
        assert (result["outcome"], result["cause"]) == ("failed", cause), line
    assert not is_notable("KV Cache is allocated. #tokens: 429312, K size: 24.56 GB, V size: 24.56 GB")
