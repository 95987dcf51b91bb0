# -*- coding: utf-8 -*-
"""probe.stream at its edges: each chunk shape the scan must hand to json, error and speculative fields in
every place a server puts them, compacted payloads, and each way a request's timing ends, with the exact
figures (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import (
    COMPACT_MARK,
    ENDPOINTS,
    RequestTiming,
    StreamCapture,
    parse_chunk,
    split_sse,
    timing_from_capture,
)


def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def test_the_endpoints_and_their_paths():
    assert ENDPOINTS == {"completions": "/v1/completions", "chat": "/v1/chat/completions", "generate": "/generate"}


@pytest.mark.parametrize("payload, out", [
    (b'{"choices":[{"text":"a"}],"usage":{"completion_tokens":7,"prompt_tokens":3}}', {"text": True, "completion": 7, "prompt": 3}),
    (b'{"choices":[{"text": "a"}],"usage":{"completion_tokens": 12,"prompt_tokens":  4}}', {"text": True, "completion": 12, "prompt": 4}),
    (b'{"choices":[{"text":""}],"usage":null}', {"text": False, "completion": None, "prompt": None}),
    (b'{"choices":[{"text":null}]}', {"text": False, "completion": None, "prompt": None}),
    (b'{"choices":[{"text":"a"}],"usage":{"completion_tokens":"7"}}', {"text": True, "completion": None, "prompt": None}),
])
def test_completion_chunks_the_scan_reads(payload, out):
    assert parse_chunk(payload, "completions") == out


def test_chat_text_from_content_reasoning_content_or_reasoning():
    for key in ("content", "reasoning_content", "reasoning"):
        for dump in (compact, lambda o: json.dumps(o).encode()):
            chunk = dump({"choices": [{"delta": {key: "x"}}]})
            assert parse_chunk(chunk, "chat")["text"] is True, (key, chunk)
            assert parse_chunk(chunk + b" ", "chat")["text"] is True  # not ending in }: through json
    assert parse_chunk(compact({"choices": [{"delta": {"role": "assistant"}}]}), "chat")["text"] is False
    assert parse_chunk(compact({"choices": [{"delta": None}]}), "chat")["text"] is False


@pytest.mark.parametrize("data, text", [
    ({"choices": []}, False), ({"choices": ["x"]}, False), ({"choices": None}, False), ({}, False),
    ({"choices": [{"text": "t"}], "x": [1, {"text": 1}]}, True),
])
def test_completion_chunks_decoded_by_json(data, text):
    payload = json.dumps(data, indent=1).encode()  # newlines and spaces: the scan is unsure, json decides
    assert parse_chunk(payload, "completions")["text"] is text


def test_a_key_text_inside_a_value_goes_to_json():
    payload = compact({"choices": [{"text": 'say "text" here'}]})
    assert parse_chunk(payload, "completions") == {"text": True, "completion": None, "prompt": None}
    payload = compact({"choices": [{"text": ""}], "note": "text"})
    assert parse_chunk(payload, "completions")["text"] is False
    payload = b'{"choices":[{"text":5}]}'  # neither a string nor null after the key
    assert parse_chunk(payload, "completions")["text"] is True


def test_counts_found_anywhere_in_a_decoded_chunk():
    data = {"text": "a", "meta_info": {"prompt_tokens": 9, "completion_tokens": 4, "spec_verify_ct": 2,
                                       "spec_accept_length": 2.0}}
    assert parse_chunk(compact(data), "generate") == {"text": True, "completion": 4, "prompt": 9, "spec_verify_ct": 2,
                                                      "spec_accept_length": 2.0}
    nested = {"choices": [{"text": "a"}], "sglext": [{"spec_verify_ct": 3}, {"spec_verify_ct": 9}],
              "usage": {"completion_tokens": 5.0, "prompt_tokens": None}}
    assert parse_chunk(compact(nested), "completions") == {"text": True, "completion": None, "prompt": None, "spec_verify_ct": 3}


@pytest.mark.parametrize("data, error", [
    ({"error": {"message": "boom"}}, "boom"),
    ({"error": {"code": 500}}, "{'code': 500}"),
    ({"error": "plain"}, "plain"),
    ({"object": "error", "message": "KV cache full"}, "KV cache full"),
    ({"object": "error"}, "{'object': 'error'}"),
])
def test_error_chunks(data, error):
    assert parse_chunk(compact(data), "completions")["error"] == error


def test_chunks_that_are_not_errors_carry_no_error():
    assert "error" not in parse_chunk(compact({"error": None, "choices": [{"text": "a"}]}), "completions")
    assert "error" not in parse_chunk(compact({"error": "", "object": "text_completion"}), "completions")


@pytest.mark.parametrize("payload", [b"[1, 2]", b'"text"', b"3", b"null"])
def test_json_that_is_no_chunk_object_fails_the_request_instead_of_raising(payload):
    """A proxy or a broken server can stream any JSON; the probe must report it, not crash (a bug it had)."""
    assert parse_chunk(payload, "completions") == {"text": False, "completion": None, "prompt": None,
                                                   "error": "stream chunk is not a JSON object: %r" % payload}
    timing = timing_from_capture(capture([(100.1, payload)]), "chat", 4)
    assert (timing.ok, timing.error) == (False, "stream error: stream chunk is not a JSON object: %r" % payload)


def test_an_unparseable_chunk_is_shown_cut_at_200_bytes():
    assert parse_chunk(b"{" + b"x" * 300, "completions") == {
        "text": False, "completion": None, "prompt": None, "error": "unparseable stream chunk: %r" % (b"{" + b"x" * 199)}


def test_a_compacted_payload_reads_text_from_its_head_and_counts_from_its_tail():
    head = b'{"text":"' + b"a" * 200
    tail = b'aaa","meta_info":{"prompt_tokens":9,"completion_tokens":300,"spec_verify_ct":100,"spec_accept_length":3.0}}'
    assert parse_chunk(head + COMPACT_MARK + tail, "generate") == {
        "text": True, "completion": 300, "prompt": 9, "spec_verify_ct": 100, "spec_accept_length": 3.0}


def test_a_compacted_payload_reads_the_tail_after_meta_info_only():
    head = b'{"text":"' + b"a" * 50
    tail = b'"completion_tokens":1 in the text","meta_info":{"completion_tokens":7}}'
    assert parse_chunk(head + COMPACT_MARK + tail, "generate")["completion"] == 7
    tail = b'x","completion_tokens": 5e1, "prompt_tokens":1.}'
    assert parse_chunk(head + COMPACT_MARK + tail, "generate") == {"text": True, "completion": 50, "prompt": 1}
    tail = b'x","completion_tokens":1.2.3}'
    assert parse_chunk(head + COMPACT_MARK + tail, "generate") == {"text": True, "completion": None, "prompt": None}


def test_a_compacted_payload_with_an_empty_text_head():
    assert parse_chunk(b'{"text":""' + COMPACT_MARK + b'}', "generate")["text"] is False
    assert parse_chunk(b'{"other":1' + COMPACT_MARK + b'}', "generate")["text"] is False


def capture(events, start=100.0, status=200, error=None, connect=None):
    return StreamCapture(start=start, events=list(events), status=status, error=error, connect_s=connect)


def test_an_http_error_without_a_message_says_its_status():
    timing = timing_from_capture(capture([], status=503, connect=0.01), "completions", 8)
    assert (timing.ok, timing.error, timing.connect, timing.start) == (False, "HTTP 503", 0.01, 100.0)


def test_an_error_in_the_stream_ends_the_request():
    events = [(100.1, compact({"choices": [{"text": "a"}]})), (100.2, compact({"error": {"message": "oom"}}))]
    timing = timing_from_capture(capture(events), "completions", 8)
    assert (timing.ok, timing.error, timing.start) == (False, "stream error: oom", 100.0)


def test_a_whole_request_with_connect_time_and_spec_fields():
    last = {"completion_tokens": 3, "spec_verify_ct": 0, "spec_accept_length": "2"}
    events = [(100.1, compact({"text": "a", "meta_info": {"completion_tokens": 1, "prompt_tokens": 3}})),
              (100.3, compact({"text": "abc", "meta_info": last})),
              (100.5, b"[DONE]")]
    timing = timing_from_capture(capture(events, connect=0.002), "generate", 99)
    assert timing == RequestTiming(ok=True, start=100.0, ttft=pytest.approx(0.1), latency=pytest.approx(0.5),
                                   itl=[pytest.approx(0.1), pytest.approx(0.1)], output_tokens=3, prompt_tokens=3,
                                   tokens_source="server", spec_verify_ct=None, spec_accept_length=None, connect=0.002)


def test_chunks_without_counts_count_one_token_each():
    events = [(100.1, compact({"choices": [{"text": "a"}]})), (100.2, compact({"choices": [{"text": "b"}]})),
              (100.4, compact({"choices": [{"text": "c"}]}))]
    timing = timing_from_capture(capture(events), "completions", 3)
    assert timing.itl == [pytest.approx(0.1), pytest.approx(0.2)]
    assert (timing.latency, timing.output_tokens, timing.tokens_source) == (pytest.approx(0.4), 3, "requested")


def test_chunks_whose_count_did_not_grow_are_skipped():
    def gen(n):
        return compact({"choices": [{"text": "x"}], "usage": {"completion_tokens": n}})
    events = [(100.1, gen(2)), (100.2, gen(2)), (100.3, gen(1)), (100.4, gen(4))]
    timing = timing_from_capture(capture(events), "completions", 9)
    assert timing.itl == [pytest.approx(0.15)] * 2  # 100.1 -> 100.4 over the 2 tokens past the last counted 2
    assert timing.output_tokens == 4


def test_float_spec_counts_are_taken_as_numbers():
    meta = {"completion_tokens": 5, "spec_verify_ct": 2.0, "spec_accept_length": 2}
    events = [(100.1, compact({"text": "a", "meta_info": meta}))]
    timing = timing_from_capture(capture(events), "generate", 5)
    assert (timing.spec_verify_ct, timing.spec_accept_length) == (2, 2.0)
    assert isinstance(timing.spec_verify_ct, int) and isinstance(timing.spec_accept_length, float)


def test_a_stream_that_only_ends_has_no_text():
    timing = timing_from_capture(capture([(100.1, b"[DONE]")]), "chat", 4)
    assert (timing.ok, timing.error) == (False, "stream ended without generated text")


@pytest.mark.parametrize("tokens, latency, ttft, tpot", [(1, 1.0, 0.1, None), (2, 1.0, 0.1, 0.9), (5, 0.1, 0.1, None),
                                                         (5, 0.09, 0.1, None), (3, 1.1, 0.1, 0.5)])
def test_tpot_needs_two_tokens_and_time_after_the_first(tokens, latency, ttft, tpot):
    timing = RequestTiming(ok=True, ttft=ttft, latency=latency, output_tokens=tokens)
    assert timing.tpot == (pytest.approx(tpot) if tpot is not None else None)
    assert timing.decode_tps == (pytest.approx(1.0 / tpot) if tpot is not None else None)
    assert RequestTiming(ok=False, ttft=0.1, latency=1.0, output_tokens=5).tpot is None


def test_split_sse_of_a_buffer_ending_on_a_line_end():
    assert split_sse(b"data: a\n") == ([b"a"], b"")
    assert split_sse(b"") == ([], b"")
    assert split_sse(b"data: a") == ([], b"data: a")


def test_a_failed_timing_carries_no_figures():
    timing = timing_from_capture(StreamCapture(start=5.0), "completions", 8)
    assert (timing.ok, timing.error, timing.start, timing.ttft, timing.latency, timing.itl, timing.output_tokens,
            timing.prompt_tokens, timing.tokens_source, timing.spec_verify_ct, timing.spec_accept_length,
            timing.connect) == (False, "HTTP 0", 5.0, 0.0, 0.0, [], 0, None, "none", None, None, None)
    bare = StreamCapture(start=1.0)
    assert (bare.events, bare.status, bare.error, bare.end, bare.connect_s) == ([], 0, None, None, None)
    assert RequestTiming(ok=True).start == 0.0 and RequestTiming(ok=True).itl == []


@pytest.mark.parametrize("payload, endpoint", [
    (b'{"text": ""} ', "generate"), (b'{"choices": []} ', "completions"), (b'{"choices": [{"delta": {"content": null}}]} ', "chat"),
    (b'{"choices": [{"delta": {"reasoning_content": "", "content": ""}}]} ', "chat"),
])
def test_chunks_without_text_read_by_json_have_no_text(payload, endpoint):
    assert parse_chunk(payload, endpoint)["text"] is False


def test_what_only_looks_like_a_chunk_is_unparseable():
    assert parse_chunk(b'x{"text":"a"}', "completions")["error"] == "unparseable stream chunk: %r" % b'x{"text":"a"}'


def test_compacted_tails_number_by_number():
    head = b'{"text":"' + b"a" * 50
    assert parse_chunk(head + COMPACT_MARK + b'x","completion_tokens":1.2.3,"prompt_tokens":4}', "generate")["prompt"] == 4
    assert parse_chunk(head + COMPACT_MARK + b'"completion_tokens":7}', "generate")["completion"] == 7
    info = parse_chunk(head + COMPACT_MARK + b'x "prompt_tokens":99 ","meta_info":{"completion_tokens":7,"spec_accept_length":2.5}}',
                       "generate")
    assert (info["prompt"], info["completion"], info["spec_accept_length"]) == (None, 7, 2.5)
