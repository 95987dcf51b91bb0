"""A small asyncio HTTP/1.1 server: enough of uvicorn for SGLang's API, on one core.

Why not ``http.server``: a thread per stream costs a core's worth of context
switches at 16 streams x 300 tokens/s. One event loop writing SSE chunks straight
to the sockets keeps the pace on one core. It speaks keep-alive, Content-Length
and chunked bodies, streams with ``Transfer-Encoding: chunked`` like uvicorn, and
logs access lines in uvicorn's format as SGLang configures it.
"""

import asyncio
import email.utils
import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Awaitable, Callable, Dict, Optional, Union

from . import logs

MAX_HEADER_BYTES = 65536


@dataclass
class Request:
    """One parsed request."""

    method: str
    path: str
    query: str
    version: str
    headers: Dict[str, str]
    body: bytes
    client: str

    def json(self) -> object:
        """The body as JSON (raises ValueError on a malformed body)."""
        return json.loads(self.body or b"null")


@dataclass
class Response:
    """A complete response."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: Dict[str, str] = field(default_factory=dict)


def json_response(obj: object, status: int = 200) -> Response:
    """A JSON response like FastAPI's (compact separators)."""
    return Response(status, json.dumps(obj, separators=(",", ":")).encode())


Writer = Callable[[bytes], None]


@dataclass
class StreamResponse:
    """A chunked response whose body ``produce`` writes piece by piece."""

    produce: Callable[[Writer], Awaitable[None]]
    status: int = 200
    content_type: str = "text/event-stream; charset=utf-8"


Handler = Callable[[Request], Awaitable[Union[Response, StreamResponse]]]


class ClientGone(ConnectionError):
    """The client closed the connection while we were still streaming."""


def _status_line(status: int) -> str:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return f"{status} {phrase}".strip()


def _head(status: int, content_type: str, extra: Dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {_status_line(status)}", f"date: {email.utils.formatdate(usegmt=True)}", "server: uvicorn"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    if content_type:
        lines.append(f"content-type: {content_type}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = b""
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readline()
            return body
        body += await reader.readexactly(size)
        await reader.readline()


async def read_request(reader: asyncio.StreamReader, client: str) -> Optional[Request]:
    """Read one request; None when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    path, _sep, query = target.partition("?")
    return Request(method.upper(), path, query, version.replace("HTTP/", ""), headers, body, client)


class HttpServer:
    """Serve ``handler`` on one host/port until closed."""

    def __init__(self, handler: Handler, keep_alive_s: float = 5.0):
        self.handler = handler
        self.keep_alive_s = keep_alive_s
        self.server: Optional[asyncio.AbstractServer] = None
        self.connections: set = set()

    async def start(self, host: str, port: int) -> None:
        """Bind and listen; raises OSError as uvicorn sees it when the port is taken."""
        self.server = await asyncio.start_server(self._serve, host, port, limit=MAX_HEADER_BYTES, reuse_address=True)

    def close(self) -> None:
        """Stop listening and drop idle connections."""
        if self.server is not None:
            self.server.close()
        for writer in list(self.connections):
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        client = f"{peer[0]}:{peer[1]}"
        self.connections.add(writer)
        try:
            first = True
            while True:
                wait = None if first else self.keep_alive_s
                try:
                    request = await asyncio.wait_for(read_request(reader, client), wait)
                except (asyncio.TimeoutError, ValueError, asyncio.LimitOverrunError):
                    break
                if request is None:
                    break
                first = False
                keep = await self._respond(request, writer)
                if not keep:
                    break
        except (ConnectionError, ClientGone):
            pass
        finally:
            self.connections.discard(writer)
            writer.close()

    async def _respond(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        """Run the handler and write its answer; returns whether to keep the connection."""
        try:
            result = await self.handler(request)
        except Exception:  # pylint: disable=broad-except  # a handler bug must not kill the server
            logs.UVICORN.exception("Exception in ASGI application")
            result = Response(500, b"Internal Server Error", "text/plain; charset=utf-8")
        keep = request.version == "1.1" and request.headers.get("connection", "").lower() != "close"
        logs.ACCESS.info('%s - "%s %s HTTP/%s" %s', request.client, request.method,
                         request.path + ("?" + request.query if request.query else ""), request.version,
                         _status_line(result.status))
        if isinstance(result, Response):
            extra = {"content-length": str(len(result.body)), **result.headers}
            if not keep:
                extra["connection"] = "close"
            writer.write(_head(result.status, result.content_type, extra) + result.body)
            await writer.drain()
            return keep
        writer.write(_head(result.status, result.content_type, {"transfer-encoding": "chunked"}))
        transport = writer.transport

        def write(data: bytes) -> None:
            if transport.is_closing():
                raise ClientGone()
            transport.write(b"%x\r\n%s\r\n" % (len(data), data))

        await result.produce(write)
        if transport.is_closing():
            return False
        transport.write(b"0\r\n\r\n")
        await writer.drain()
        return keep
