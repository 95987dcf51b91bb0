# -*- coding: utf-8 -*-
"""probe_stream: the byte scan agrees with json.loads on every chunk shape, and timings follow the benchmark."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import (
    StreamCapture,
    parse_chunk,
    split_sse,
    sse_payload,
    timing_from_capture,
)


def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def spaced(obj):
    return json.dumps(obj).encode()


def completion_chunk(text, usage=None):
    return {"id": "x", "object": "text_completion", "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": None}], "usage": usage}


def chat_chunk(content=None, reasoning=None, role=None):
    delta = {}
    if role:
        delta["role"] = role
    delta["content"] = content
    if reasoning is not None:
        delta["reasoning_content"] = reasoning
    return {"id": "x", "choices": [{"index": 0, "delta": delta}], "usage": None}


TRICKY_TEXTS = ["", " the", 'say "text":"', '"', "\\", '\\"', "é✓ 中文", '{"text":""}', "text", "null", ' "content": "x"', "\n\n"]


def reference(payload, endpoint):
    """What a plain json.loads reading says: non-empty generated text, and the token counts."""
    data = json.loads(payload)
    if endpoint == "generate":
        text = data.get("text") or ""
        meta = data.get("meta_info") or {}
        return bool(text), meta.get("completion_tokens"), meta.get("prompt_tokens")
    choices = data.get("choices") or []
    usage = data.get("usage") or {}
    if not choices:
        text = ""
    elif endpoint == "chat":
        delta = choices[0].get("delta") or {}
        text = (delta.get("reasoning_content") or "") + (delta.get("content") or "")
    else:
        text = choices[0].get("text") or ""
    return bool(text), usage.get("completion_tokens"), usage.get("prompt_tokens")


@pytest.mark.parametrize("dump", [compact, spaced], ids=["compact", "spaced"])
@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_scan_matches_json_for_completions(dump, text):
    for usage in (None, {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}):
        payload = dump(completion_chunk(text, usage))
        info = parse_chunk(payload, "completions")
        assert (info["text"], info["completion"], info["prompt"]) == reference(payload, "completions")


@pytest.mark.parametrize("dump", [compact, spaced], ids=["compact", "spaced"])
@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_scan_matches_json_for_chat_content_and_reasoning(dump, text):
    for chunk in (chat_chunk(text), chat_chunk(None, reasoning=text), chat_chunk("", role="assistant"), chat_chunk(text, reasoning="")):
        payload = dump(chunk)
        info = parse_chunk(payload, "chat")
        assert info["text"] == reference(payload, "chat")[0], payload


@pytest.mark.parametrize("dump", [compact, spaced], ids=["compact", "spaced"])
def test_scan_matches_json_for_native_generate(dump):
    for text in TRICKY_TEXTS:
        payload = dump({"text": text, "meta_info": {"id": "r", "prompt_tokens": 9, "completion_tokens": 4, "finish_reason": None}})
        info = parse_chunk(payload, "generate")
        assert (info["text"], info["completion"], info["prompt"]) == reference(payload, "generate")


def test_final_usage_chunk_has_no_text_and_the_counts():
    usage = {"prompt_tokens": 31, "completion_tokens": 256, "total_tokens": 287, "completion_tokens_details": {"reasoning_tokens": 0}}
    info = parse_chunk(compact({"id": "x", "choices": [], "usage": usage}), "completions")
    assert info == {"text": False, "completion": 256, "prompt": 31}


def test_spec_statistics_and_errors_go_through_json():
    meta = {"completion_tokens": 10, "spec_verify_ct": 4, "spec_accept_length": 2.5}
    info = parse_chunk(compact({"text": "abc", "meta_info": meta}), "generate")
    assert info["spec_verify_ct"] == 4 and info["spec_accept_length"] == 2.5 and info["completion"] == 10
    err = parse_chunk(compact({"object": "error", "message": "out of memory", "code": 500}), "completions")
    assert err["error"] == "out of memory"
    err = parse_chunk(compact({"error": {"message": "boom"}}), "chat")
    assert err["error"] == "boom"
    assert "unparseable" in parse_chunk(b"{not json", "completions")["error"]


def capture(events, start=100.0, status=200, error=None):
    return StreamCapture(start=start, events=list(events), status=status, error=error, end=events[-1][0] if events else start)


def test_timing_openai_one_token_per_chunk():
    events = [(100.050, compact(completion_chunk(""))),  # an empty first chunk does not count for TTFT
              (100.100, compact(completion_chunk(" a"))),
              (100.110, compact(completion_chunk(" b"))),
              (100.125, compact(completion_chunk(" c"))),
              (100.126, compact({"id": "x", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})),
              (100.127, b"[DONE]")]
    t = timing_from_capture(capture(events), "completions", requested_tokens=99)
    assert t.ok
    assert t.ttft == pytest.approx(0.100)
    assert t.itl == pytest.approx([0.010, 0.015])
    assert t.latency == pytest.approx(0.127)
    assert (t.output_tokens, t.prompt_tokens, t.tokens_source) == (3, 5, "server")
    assert t.tpot == pytest.approx((0.127 - 0.100) / 2)
    assert t.decode_tps == pytest.approx(2 / 0.027)


def test_timing_splits_a_gap_over_the_tokens_a_chunk_carries():
    def usage(n):
        return {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n}
    events = [(100.1, compact(completion_chunk(" a", usage(1)))),
              (100.13, compact(completion_chunk(" b c d", usage(4)))),
              (100.14, compact(completion_chunk(" e", usage(5)))),
              (100.141, b"[DONE]")]
    t = timing_from_capture(capture(events), "completions", 5)
    assert t.itl == pytest.approx([0.01, 0.01, 0.01, 0.01])
    assert t.output_tokens == 5


def test_timing_native_generate_skips_chunks_without_new_tokens_and_reads_spec():
    def gen(text, n, **extra):
        return compact({"text": text, "meta_info": dict({"completion_tokens": n, "prompt_tokens": 3}, **extra)})
    events = [(100.2, gen("a", 1)), (100.3, gen("ab", 3)), (100.35, gen("ab", 3)),
              (100.4, gen("abcd", 4, spec_verify_ct=2, spec_accept_length=2.0)), (100.41, b"[DONE]")]
    t = timing_from_capture(capture(events), "generate", 4)
    assert t.ttft == pytest.approx(0.2)
    assert t.itl == pytest.approx([0.05, 0.05, 0.1])
    assert (t.spec_verify_ct, t.spec_accept_length) == (2, 2.0)


def test_timing_without_server_counts_falls_back_to_requested_tokens():
    events = [(100.1, compact(completion_chunk(" a"))), (100.2, compact(completion_chunk(" b"))), (100.3, b"[DONE]")]
    t = timing_from_capture(capture(events), "completions", requested_tokens=2)
    assert (t.output_tokens, t.tokens_source) == (2, "requested")


@pytest.mark.parametrize("cap,needle", [
    (StreamCapture(start=1.0, status=401, error="HTTP 401 from /v1/completions: Unauthorized"), "401"),
    (StreamCapture(start=1.0, status=0, error="POST /v1/completions: ConnectionRefusedError"), "Refused"),
    (StreamCapture(start=1.0, status=200, events=[(1.1, b"[DONE]")]), "without generated text"),
    (StreamCapture(start=1.0, status=200, events=[(1.1, compact({"object": "error", "message": "KV cache full"}))]), "KV cache full"),
])
def test_failed_requests_carry_their_reason(cap, needle):
    t = timing_from_capture(cap, "completions", 8)
    assert not t.ok and needle in t.error
    assert t.tpot is None and t.decode_tps is None


def test_split_sse_keeps_the_unfinished_tail_and_skips_comments():
    payloads, tail = split_sse(b'data: {"a":1}\n\n: keep-alive\n\ndata:{"b":2}\r\n\r\nevent: x\ndata: [DO')
    assert payloads == [b'{"a":1}', b'{"b":2}']
    assert tail == b"data: [DO"
    payloads, tail = split_sse(tail + b"NE]\n\n")
    assert payloads == [b"[DONE]"] and tail == b""


@pytest.mark.parametrize("line, payload", [
    (b"data: x", b"x"), (b"data:x", b"x"), (b"data:  x", b" x"), (b"data: x\r", b"x"), (b"data: x\r\r", b"x\r"),
    (b"data:", b""), (b"data: ", b""), (b": keep-alive", None), (b"event: x", None), (b"", None), (b" data: x", None),
])
def test_sse_payload_takes_one_space_and_one_carriage_return(line, payload):
    assert sse_payload(line) == payload
