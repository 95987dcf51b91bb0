# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the eighteenth test split's misses (corpus split ``opened18``).

585: a chat completion's error, SGLang's ``Error in request:`` with the OpenAI handlers' frames, and nothing else, from
a start whose process ended. A multimodal model's warmup posts a chat completion, so these traces alone are what a
failed warmup leaves too: the ready read from them holds only while the server lives. And SGLang logs a request's
error as the exception's text without its type: a signature error there reads as one package calling another of
another version, as a ``TypeError:`` does.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner, scan_startup_log

REQUEST_ERROR = ("[2026-05-11 11:19:09] Error in request: npu_wrapper_preprocess.<locals>._preprocess() missing 1 required "
                 "positional argument: 'interpolation'")
CHAT_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/openai/serving_base.py", line 107, in handle_request\n'
    "    return await self._handle_non_streaming_request(\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/openai/serving_chat.py", line 1094, in _handle_non_streaming_request\n'
    "    ret = await self.tokenizer_manager.generate_request(\n")
DECODE_SERVING = ("[2026-05-11 11:19:12] Decode batch, #running-req: 3, #token: 4096, token usage: 0.02, cuda graph: True, "
                  "gen throughput (token/s): 812.40, #queue-req: 0,")
READY_LINE = "[2026-05-11 11:19:13] The server is fired up and ready to roll!"


@pytest.mark.parametrize("evidence,cause", [
    ("Error in request: npu_wrapper_preprocess.<locals>._preprocess() missing 1 required positional argument: 'interpolation'",
     "package_mismatch"),
    ("Error in request: forward() got an unexpected keyword argument 'pixel_values_videos'", "package_mismatch"),
    ("Error in request: apply() takes 2 positional arguments but 3 were given", "package_mismatch"),
    # a private helper's signature is SGLang's own code disagreeing with itself, not another package
    ("Error in request: _tokenize_one_request() missing 1 required positional argument: 'obj'", "unknown"),
    # a request's other errors name no package
    ("Error in request: The input (9000 tokens) is longer than the model's context length (8192 tokens).", "unknown"),
])
def test_a_request_errors_signature_words_and_what_they_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_a_chat_request_error_alone_then_the_exit_is_a_failed_start_with_sglangs_words():
    """585's shape: the error, its traceback cut, the process gone: the warmup's request failed."""
    result = scan_startup_log(REQUEST_ERROR + "\n" + CHAT_TRACEBACK, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "package_mismatch")
    assert result["error_message"] == REQUEST_ERROR.split("] ", 1)[1]
    assert result["fatal_line"] == result["error_message"]
    assert "serving_chat.py" in result["traceback"]
    assert result["ready_line"] is None and "ready" not in [entry["phase"] for entry in result["phases"]]


def test_while_the_process_lives_such_a_ready_is_read_but_not_final():
    """A live server with a client's failed chat completion is serving; the verdict waits for more only while
    nothing but warmup-alike traces say so."""
    scanner = StartupLogScanner()
    for line in (REQUEST_ERROR + "\n" + CHAT_TRACEBACK).splitlines():
        scanner.feed(line)
    assert scanner.result_outcome() == "ready" and not scanner.is_final
    scanner.feed(READY_LINE)
    assert scanner.result_outcome() == "ready" and scanner.is_final
    scanner.close(exited=True)  # SGLang said it was ready: a later end is after ready
    assert scanner.result()["outcome"] == "ready"


@pytest.mark.parametrize("later", [DECODE_SERVING, READY_LINE])
def test_another_sign_of_serving_makes_it_ready_for_good(later):
    result = scan_startup_log("\n".join([REQUEST_ERROR, CHAT_TRACEBACK, later]), ended=True)
    assert (result["outcome"], result["cause"]) == ("ready", None)


def test_a_client_only_sign_stays_ready_though_a_chat_error_follows():
    """Evidence no warmup gives (an input longer than the context) is not made provisional by a later chat error."""
    log = ("[2026-05-11 11:19:08] Error in request: Input length (9000 tokens) exceeds the maximum allowed length (8192 tokens).\n"
           + REQUEST_ERROR + "\n" + CHAT_TRACEBACK)
    assert scan_startup_log(log, ended=True)["outcome"] == "ready"


def test_a_warmup_alike_frame_without_sglangs_line_fails_on_the_exit_with_the_traceback():
    """Only the handlers' frames (a paste that lost the logged line): failed, the traceback as the evidence."""
    result = scan_startup_log(CHAT_TRACEBACK + "TypeError: forward() got an unexpected keyword argument 'image_grid_thw'\n",
                              ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "package_mismatch")
    assert result["error_message"] == "TypeError: forward() got an unexpected keyword argument 'image_grid_thw'"
