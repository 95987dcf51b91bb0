# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn one streamed response (SSE ``data:`` lines with their arrival times) into a request's timings.

Why separate from the HTTP client: the client only reads bytes and stamps arrival times (nothing else runs
between a chunk's arrival and its timestamp); everything here runs after the whole concurrency level has
finished, so parsing can never delay a reading or make the client the bottleneck. The definitions are those
of SGLang's own benchmark (``sglang.benchmark.serving``, docs/reference/sglang.md#benchmark-metrics):

- TTFT: arrival of the first chunk that carries non-empty generated text, minus the send time.
- ITL: gaps between consecutive text chunks. When a chunk says how many tokens it carries (native ``/generate``
  ``meta_info.completion_tokens``, or OpenAI usage on every chunk), its gap is split evenly over them, as the
  benchmark does for ``/generate`` and for speculative decoding.
- E2E latency: arrival of the last line of the stream (``data: [DONE]``).
- Output tokens: the server's ``usage.completion_tokens`` / ``meta_info.completion_tokens``; the requested
  count only when the server reported none.

Parsing uses a cheap byte scan for the common chunk shapes and falls back to ``json.loads`` whenever the scan
is not certain (spaced or unusual JSON, errors, speculative statistics), so it stays exact. A payload the client
compacted (head + COMPACT_MARK + tail: a long native ``/generate`` chunk, whose middle is text already seen) is
read from its head (is there text) and its tail (``meta_info``: token counts, speculative statistics).

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

ENDPOINTS = {
    "completions": "/v1/completions",
    "chat": "/v1/chat/completions",
    "generate": "/generate",
}

_TEXT_KEYS = {
    "completions": (b'"text"',),
    "chat": (b'"content"', b'"reasoning_content"', b'"reasoning"'),
    "generate": (b'"text"',),
}
_COMPLETION_KEY = b'"completion_tokens"'
_PROMPT_KEY = b'"prompt_tokens"'
_DONE = b"[DONE]"
_SPEC_KEYS = ("spec_verify_ct", "spec_accept_length")
_NUMBER = re.compile(rb'"(completion_tokens|prompt_tokens|spec_verify_ct|spec_accept_length)"\s*:\s*(-?[0-9.eE+-]+)')

# Long payloads kept as head + mark + tail by the client (probe/client.py): the mark cannot occur in JSON text.
COMPACT_OVER = 4096
COMPACT_HEAD = 256
COMPACT_TAIL = 2048
COMPACT_MARK = b"\x00...\x00"


@dataclass
class StreamCapture:
    """What the client recorded for one request: send time, data lines with arrival times, HTTP outcome."""

    start: float
    events: List[Tuple[float, bytes]] = field(default_factory=list)
    status: int = 0
    error: Optional[str] = None
    end: Optional[float] = None
    connect_s: Optional[float] = None


@dataclass
class RequestTiming:
    """One request's figures in seconds and tokens (SGLang benchmark definitions)."""

    ok: bool
    start: float = 0.0
    ttft: float = 0.0
    latency: float = 0.0
    itl: List[float] = field(default_factory=list)
    output_tokens: int = 0
    prompt_tokens: Optional[int] = None
    tokens_source: str = "none"
    spec_verify_ct: Optional[int] = None
    spec_accept_length: Optional[float] = None
    error: Optional[str] = None
    connect: Optional[float] = None

    @property
    def tpot(self) -> Optional[float]:
        """(latency - TTFT) / (output tokens - 1): seconds per decoded token after the first."""
        if not self.ok or self.output_tokens <= 1 or self.latency <= self.ttft:
            return None
        return (self.latency - self.ttft) / (self.output_tokens - 1)

    @property
    def decode_tps(self) -> Optional[float]:
        """Per-request decode tokens/s: 1 / TPOT."""
        tpot = self.tpot
        return 1.0 / tpot if tpot else None


def _int_after(line: bytes, key: bytes) -> Optional[int]:
    """The integer that follows ``"key":`` (optionally a space) in a JSON line, None when absent or not a number."""
    i = line.rfind(key)
    if i < 0:
        return None
    j = i + len(key)
    n = len(line)
    while j < n and line[j] in b": ":
        j += 1
    k = j
    while k < n and 48 <= line[k] <= 57:
        k += 1
    return int(line[j:k]) if k > j else None


def _text_state(line: bytes, keys: Tuple[bytes, ...]) -> Optional[bool]:
    """True if a text key has a non-empty string value, False if none has, None when the scan cannot tell.

    Inside a JSON string every quote is escaped, so ``"key"`` followed by ``:`` can only be a key. A value that
    is a non-empty string starts with a quote followed by anything but a quote.
    """
    for key in keys:
        start = 0
        while True:
            i = line.find(key, start)
            if i < 0:
                break
            j = i + len(key)
            if line[j:j + 2] == b": ":
                j += 2
            elif line[j:j + 1] == b":":
                j += 1
            else:
                return None  # the key text appears somewhere else, e.g. as a value: let json decide
            if line[j:j + 1] == b'"':
                if line[j + 1:j + 2] != b'"':
                    return True
            elif line[j:j + 4] != b"null":
                return None
            start = j
    return False


def _json_text(data: Dict[str, Any], endpoint: str) -> str:
    """Generated text of a decoded chunk (chat: reasoning and content both count, as in the benchmark)."""
    if endpoint == "generate":
        return data.get("text") or ""
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return ""
    if endpoint == "chat":
        delta = choices[0].get("delta") or {}
        return (delta.get("reasoning_content") or delta.get("reasoning") or "") + (delta.get("content") or "")
    return choices[0].get("text") or ""


def _find_keys(data: Any, keys: Tuple[str, ...], found: Dict[str, Any]) -> None:
    """Collect the first value of each key anywhere in a decoded chunk (``meta_info``, ``sglext``...)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in keys and key not in found and value is not None:
                found[key] = value
            elif isinstance(value, (dict, list)):
                _find_keys(value, keys, found)
    elif isinstance(data, list):
        for item in data:
            _find_keys(item, keys, found)


def _error_text(data: Any) -> Optional[str]:
    """An error message carried in a stream chunk (``{"error": {...}}`` or ``{"object": "error"}``)."""
    if not isinstance(data, dict):
        return None
    err = data.get("error")
    if err:
        if isinstance(err, dict):
            return str(err.get("message") or err)
        return str(err)
    if data.get("object") == "error":
        return str(data.get("message") or data)
    return None


def parse_chunk(line: bytes, endpoint: str) -> Dict[str, Any]:
    """Figures of one ``data:`` payload: ``text`` (bool), ``completion``/``prompt`` tokens, spec stats, error.

    The byte scan answers for the usual chunks; JSON decoding is used when the scan is unsure, when the chunk
    carries speculative statistics or an error.
    """
    keys = _TEXT_KEYS[endpoint]
    mark = line.find(COMPACT_MARK)
    if mark >= 0:
        return _parse_compacted(line[:mark], line[mark + len(COMPACT_MARK):], keys)
    state = _text_state(line, keys)
    if (state is not None and line[:1] == b"{" and line[-1:] == b"}" and b'"error"' not in line and b"spec_" not in line
            and b'"object":"error"' not in line):
        return {"text": state, "completion": _int_after(line, _COMPLETION_KEY), "prompt": _int_after(line, _PROMPT_KEY)}
    try:
        data = json.loads(line)
    except ValueError:
        return {"text": False, "completion": None, "prompt": None, "error": "unparseable stream chunk: %r" % line[:200]}
    if not isinstance(data, dict):  # JSON, but no chunk any endpoint sends: a failed request, not a crash
        return {"text": False, "completion": None, "prompt": None, "error": "stream chunk is not a JSON object: %r" % line[:200]}
    out: Dict[str, Any] = {"text": bool(_json_text(data, endpoint)), "completion": None, "prompt": None}
    found: Dict[str, Any] = {}
    _find_keys(data, ("completion_tokens", "prompt_tokens") + _SPEC_KEYS, found)
    if isinstance(found.get("completion_tokens"), int):
        out["completion"] = found["completion_tokens"]
    if isinstance(found.get("prompt_tokens"), int):
        out["prompt"] = found["prompt_tokens"]
    for key in _SPEC_KEYS:
        if key in found:
            out[key] = found[key]
    err = _error_text(data)
    if err:
        out["error"] = err
    return out


def _parse_compacted(head: bytes, tail: bytes, keys: Tuple[bytes, ...]) -> Dict[str, Any]:
    """Figures of a compacted payload: text from its head, counts and speculative statistics from its tail."""
    # A payload is only this long because of its text (the whole answer so far), so an unsure scan means text.
    state = _text_state(head + b'"', keys)
    out: Dict[str, Any] = {"text": state is not False, "completion": None, "prompt": None}
    meta = tail.rfind(b'"meta_info"')
    for match in _NUMBER.finditer(tail, meta if meta >= 0 else 0):
        key, raw = match.group(1).decode("ascii"), match.group(2)
        try:
            value: Any = float(raw) if key == "spec_accept_length" else int(float(raw))
        except ValueError:
            continue
        if key == "completion_tokens":
            out["completion"] = value
        elif key == "prompt_tokens":
            out["prompt"] = value
        else:
            out[key] = value
    return out


def timing_from_capture(capture: StreamCapture, endpoint: str, requested_tokens: int) -> RequestTiming:
    """One request's timings from its capture (see the module docstring for the definitions)."""
    if capture.error or capture.status != 200:
        return RequestTiming(ok=False, start=capture.start, error=capture.error or "HTTP %d" % capture.status, connect=capture.connect_s)
    ttft = 0.0
    last_text_t = None
    last_tokens = 0
    itl: List[float] = []
    completion = None
    prompt = None
    spec: Dict[str, Any] = {}
    last_t = capture.start
    for t, payload in capture.events:
        last_t = t
        if payload == _DONE:
            continue
        info = parse_chunk(payload, endpoint)
        if info.get("error"):
            return RequestTiming(ok=False, start=capture.start, error="stream error: %s" % info["error"])
        chunk_tokens = info.get("completion")
        if chunk_tokens is not None:
            completion = chunk_tokens
        if info.get("prompt") is not None:
            prompt = info["prompt"]
        for key in _SPEC_KEYS:
            if key in info:
                spec[key] = info[key]
        if not info["text"]:
            continue
        if last_text_t is None:
            ttft = t - capture.start
        else:
            gap = t - last_text_t
            new = (chunk_tokens - last_tokens) if chunk_tokens is not None else 1
            if new <= 0:
                # cumulative count did not move (the benchmark skips such chunks for /generate)
                if chunk_tokens is not None:
                    continue
                new = 1
            itl.extend([gap / new] * new)
        last_text_t = t
        if chunk_tokens is not None:
            last_tokens = chunk_tokens
    if last_text_t is None:
        return RequestTiming(ok=False, start=capture.start, error="stream ended without generated text")
    source = "server" if completion is not None else "requested"
    out_tokens = completion if completion is not None else requested_tokens
    verify = spec.get("spec_verify_ct")
    accept = spec.get("spec_accept_length")
    return RequestTiming(ok=True, start=capture.start, ttft=ttft, latency=last_t - capture.start, itl=itl,
                         output_tokens=int(out_tokens), prompt_tokens=prompt, tokens_source=source,
                         spec_verify_ct=int(verify) if isinstance(verify, (int, float)) and verify else None,
                         spec_accept_length=float(accept) if isinstance(accept, (int, float)) else None,
                         connect=capture.connect_s)


def sse_payload(line: bytes) -> Optional[bytes]:
    """The payload of one SSE line without its ``\\n``, or None for a comment (``:``), another field or a blank.

    ``data: <payload>`` and ``data:<payload>`` are both SSE; a ``\\r`` left by a ``\\r\\n`` line end is dropped.
    """
    if line[:5] != b"data:":
        return None
    payload = line[5:]
    if payload[:1] == b" ":
        payload = payload[1:]
    if payload[-1:] == b"\r":
        payload = payload[:-1]
    return payload


def split_sse(buffer: bytes) -> Tuple[List[bytes], bytes]:
    """Split a byte buffer into complete ``data:`` payloads and the unfinished tail.

    SSE events are ``data: <payload>`` lines separated by blank lines; comments (``:``) and other fields are
    skipped. ``\\r\\n`` line ends are accepted.
    """
    lines = buffer.split(b"\n")
    tail = lines.pop()
    payloads = [payload for payload in map(sse_payload, lines) if payload is not None]
    return payloads, tail
