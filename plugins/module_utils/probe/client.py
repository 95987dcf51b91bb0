# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP and SSE client of the probe, on ``http.client`` only.

Why so plain: the module runs with the target's Python and nothing but the standard library, and the client
must never be what limits the figures. The design keeps the timed path minimal:

- one thread per in-flight request; two connection modes (``connection``):
  - ``keep-alive`` (default): each thread keeps its own persistent connection, opened before the level starts,
    so no request pays for a TCP handshake: TTFT is the server's;
  - ``per-request``: a new connection for every request, opened after the request's clock starts, as
    ``sglang.benchmark.serving`` does (aiohttp, one connection per request): TTFT includes the connect, which is
    also reported on its own (``connect_s``), so the two modes can be compared with each other and with the bench;
- the read loop does ``read1`` (one socket read), takes a timestamp, and splits the bytes into SSE ``data:``
  payloads; nothing is decoded until the whole level has finished (probe/stream.py), so a slow parse can neither
  delay a timestamp nor steal the GIL from another stream's read;
- a payload longer than COMPACT_OVER bytes (native ``/generate`` repeats the whole text so far in every chunk)
  is kept as its head and tail only, cut from a memoryview without copying the middle: the flag "has text" is in
  the head and the token counts in the tail, so the cost per token stays flat however long the answer;
- a level's wall time runs from the first send to the last end, as in SGLang's benchmark.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import (
    COMPACT_HEAD,
    COMPACT_MARK,
    COMPACT_OVER,
    COMPACT_TAIL,
    StreamCapture,
    sse_payload,
)

CONNECTION_MODES = ("keep-alive", "per-request")
READ_SIZE = 262144
STREAM_BUFFER = 262144
ERROR_BODY_LIMIT = 600
_RETRYABLE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest)


class _StreamResponse(http.client.HTTPResponse):
    """An HTTPResponse whose socket reader buffers 256 KiB instead of 8 KiB.

    Why: native ``/generate`` repeats the whole text so far in every chunk; with the default 8 KiB buffer a long
    answer costs several reads and joins per chunk. The replacement happens before anything is read.
    """

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # only the reader: the socket stays open (it has its own reference count)
        self.fp = sock.makefile("rb", buffering=STREAM_BUFFER)


class _StreamConnection(http.client.HTTPConnection):
    response_class = _StreamResponse


class _StreamHTTPSConnection(http.client.HTTPSConnection):
    response_class = _StreamResponse


class ProbeHTTPError(Exception):
    """A non-streaming request failed; the message names the URL path and the status or socket error."""


class ProbeClient:
    """Requests to one SGLang server: JSON GETs and timed streaming POSTs.

    ``api_key`` is sent as ``Authorization: Bearer`` and never appears in errors or results.
    """

    def __init__(self, base_url: str, api_key: Optional[str] = None, timeout: float = 600.0,
                 validate_certs: bool = True) -> None:
        parts = urlsplit(base_url if "://" in base_url else "http://" + base_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError("base_url must be http:// or https:// (got %r)" % base_url)
        self.scheme = parts.scheme
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = (parts.path or "").rstrip("/")
        self.timeout = float(timeout)
        self.api_key = api_key
        self._ssl_context = None
        if parts.scheme == "https":
            self._ssl_context = ssl.create_default_context() if validate_certs else ssl._create_unverified_context()  # pylint: disable=protected-access

    # --- connections -------------------------------------------------------------------------------------

    def connection(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        """A new (not yet connected) connection to the server."""
        limit = self.timeout if timeout is None else timeout
        if self.scheme == "https":
            return _StreamHTTPSConnection(self.host, self.port, timeout=limit, context=self._ssl_context)
        return _StreamConnection(self.host, self.port, timeout=limit)

    def headers(self, streaming: bool = False) -> Dict[str, str]:
        """Request headers: JSON body, SSE accepted when streaming, bearer token when a key is set."""
        out = {"Content-Type": "application/json", "Accept": "text/event-stream" if streaming else "application/json"}
        if self.api_key:
            out["Authorization"] = "Bearer " + self.api_key
        return out

    # --- plain requests ----------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                timeout: Optional[float] = 30.0) -> Tuple[int, bytes]:
        """One plain (not streamed) request; returns (status, body). Socket errors raise ProbeHTTPError."""
        conn = self.connection(timeout)
        try:
            conn.request(method, self.prefix + path, body=body, headers=self.headers())
            resp = conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ProbeHTTPError("%s %s: %s" % (method, path, _describe(exc))) from exc
        finally:
            conn.close()

    def get(self, path: str, timeout: float = 30.0) -> Tuple[int, bytes]:
        """GET ``path``; returns (status, body). Socket errors raise ProbeHTTPError."""
        return self.request("GET", path, timeout=timeout)

    def get_json(self, path: str, timeout: float = 30.0) -> Optional[Any]:
        """GET ``path`` and decode JSON; None for a non-200 answer or a body that is not JSON."""
        status, body = self.get(path, timeout)
        if status != 200:
            return None
        try:
            return json.loads(body)
        except ValueError:
            return None

    def post_json(self, path: str, payload: Dict[str, Any], timeout: Optional[float] = None) -> Tuple[int, bytes]:
        """POST a JSON body without streaming; returns (status, body)."""
        return self.request("POST", path, json.dumps(payload).encode("utf-8"), timeout)

    # --- streaming ---------------------------------------------------------------------------------------

    def stream(self, conn: http.client.HTTPConnection, path: str, body: bytes, connect: bool = False) -> Tuple[StreamCapture, bool]:
        """Send one streaming POST on ``conn`` and record every ``data:`` payload with its arrival time.

        With ``connect`` the connection is opened inside the request's clock (``per-request`` mode) and the
        handshake's duration is kept in ``connect_s``. Returns the capture and whether the connection can be
        reused. A request that fails before any response on a kept-alive connection (the server closed it while
        idle) is retried once on a new one.
        """
        headers = self.headers(streaming=True)
        full_path = self.prefix + path
        now = time.perf_counter
        cap = StreamCapture(start=now())
        for attempt in (0, 1):
            try:
                cap.start = now()
                if connect:
                    conn.connect()
                    cap.connect_s = now() - cap.start
                conn.request("POST", full_path, body=body, headers=headers)
                resp = conn.getresponse()
                break
            except _RETRYABLE as exc:
                conn.close()
                if attempt:
                    cap.error = "POST %s: %s" % (path, _describe(exc))
                    return cap, False
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                cap.error = "POST %s: %s" % (path, _describe(exc))
                return cap, False
        cap.status = resp.status
        if resp.status != 200:
            try:
                text = resp.read()[:ERROR_BODY_LIMIT].decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                text = ""
            cap.error = "HTTP %d from %s: %s" % (resp.status, path, self.redact(text.strip()))
            cap.end = now()
            return cap, not resp.will_close
        append = cap.events.append
        read1 = resp.read1
        deadline = cap.start + self.timeout
        lines = _LineSplitter()
        t = cap.start
        try:
            while True:
                data = read1(READ_SIZE)
                t = now()
                if not data:
                    break
                for payload in lines.feed(data):
                    append((t, payload))
                if t > deadline:
                    cap.error = "request exceeded the %gs timeout" % self.timeout
                    conn.close()
                    return cap, False
        except socket.timeout:
            cap.error = "no data for %gs (timeout)" % self.timeout
            conn.close()
            return cap, False
        except (OSError, http.client.HTTPException) as exc:
            cap.error = "stream from %s broke: %s" % (path, _describe(exc))
            conn.close()
            return cap, False
        cap.end = t
        return cap, not resp.will_close

    def run_level(self, path: str, bodies: Sequence[bytes], concurrency: int,
                  mode: str = "keep-alive") -> Tuple[List[StreamCapture], float]:
        """Send every body with at most ``concurrency`` in flight; returns the captures (in body order) and the
        level's wall time (first send to last end).

        One worker thread per slot. ``keep-alive``: each with its own connection, opened (and timed, in
        ``connect_s`` of its first request) before a barrier releases them all. ``per-request``: a new connection
        per request, opened inside the request's clock.
        """
        if mode not in CONNECTION_MODES:
            raise ValueError("connection must be one of %s (got %r)" % (", ".join(CONNECTION_MODES), mode))
        per_request = mode == "per-request"
        count = len(bodies)
        workers = max(1, min(int(concurrency), count))
        captures: List[Optional[StreamCapture]] = [None] * count
        next_index = [0]
        lock = threading.Lock()
        barrier = threading.Barrier(workers)

        def worker() -> None:
            conn = self.connection()
            opened: Optional[float] = None
            if not per_request:
                began = time.perf_counter()
                try:
                    conn.connect()
                    opened = time.perf_counter() - began
                except OSError:
                    conn.close()  # the first request reports the error
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                return
            while True:
                with lock:
                    index = next_index[0]
                    if index >= count:
                        break
                    next_index[0] = index + 1
                cap, reusable = self.stream(conn, path, bodies[index], connect=per_request)
                if opened is not None:
                    cap.connect_s, opened = opened, None  # kept-alive: the handshake before the level, once
                captures[index] = cap
                if per_request or not reusable:
                    conn.close()
                    conn = self.connection()
            conn.close()

        threads = [threading.Thread(target=worker, name="probe-%d" % i, daemon=True) for i in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        done = [c for c in captures if c is not None]
        if not done:
            return [], 0.0
        first = min(c.start for c in done)
        last = max(c.end if c.end is not None else c.start for c in done)
        return [c if c is not None else StreamCapture(start=first, error="not sent") for c in captures], max(last - first, 0.0)

    def redact(self, text: str) -> str:
        """The text with the API key (if any) replaced: server error bodies can echo request headers."""
        if self.api_key and self.api_key in text:
            return text.replace(self.api_key, "********")
        return text


class _LineSplitter:
    """SSE ``data:`` payloads from a byte stream, a line's long middle never copied.

    Why not ``bytes.split``: native ``/generate`` lines grow with the answer (the whole text so far), so joining
    and splitting them costs more per token the longer the answer. Lines are found with ``find`` over a
    memoryview, and a payload longer than COMPACT_OVER is kept as head + COMPACT_MARK + tail.
    """

    def __init__(self) -> None:
        self.head = b""           # the first COMPACT_HEAD bytes of an unfinished line
        self.tail = b""           # its last COMPACT_TAIL bytes (or all of it while it is short)
        self.length = 0           # its length so far

    def _piece(self, view: memoryview) -> None:
        """Add part of a line that does not end in this read."""
        size = len(view)
        if self.length < COMPACT_HEAD:
            self.head += bytes(view[:COMPACT_HEAD - self.length])
        self.length += size
        if self.length <= COMPACT_OVER:
            self.tail += bytes(view)
        elif size >= COMPACT_TAIL:
            self.tail = bytes(view[size - COMPACT_TAIL:])
        else:
            self.tail = (self.tail[-COMPACT_TAIL:] + bytes(view))[-COMPACT_TAIL:]

    def _line(self, view: memoryview) -> bytes:
        """The line that ends with ``view``: whole when short, else head + mark + tail."""
        if not self.length:
            if len(view) <= COMPACT_OVER:
                return bytes(view)
            return bytes(view[:COMPACT_HEAD]) + COMPACT_MARK + bytes(view[len(view) - COMPACT_TAIL:])
        self._piece(view)
        if self.length <= COMPACT_OVER:
            line = self.tail
        else:
            line = self.head + COMPACT_MARK + self.tail[-COMPACT_TAIL:]
        self.head, self.tail, self.length = b"", b"", 0
        return line

    def feed(self, data: bytes) -> List[bytes]:
        """Payloads of the ``data:`` lines completed by ``data`` (comments and other fields skipped)."""
        out: List[bytes] = []
        view = memoryview(data)
        find = data.find
        start = 0
        while True:
            end = find(b"\n", start)
            if end < 0:
                break
            payload = sse_payload(self._line(view[start:end]))
            start = end + 1
            if payload is not None:
                out.append(payload)
        if start < len(data):
            self._piece(view[start:])
        return out


def _describe(exc: BaseException) -> str:
    """A short description of a socket or HTTP error (``ConnectionRefusedError: [Errno 111] ...``)."""
    text = str(exc)
    return "%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__
