# -*- coding: utf-8 -*-
"""The probe client's promises held exactly without a server (the mutation run's survivors, issue 22): what a
base URL becomes, the headers, the connection kinds, each refusal's whole text, a socket error's description, and
the SSE line splitter at its cut-offs (a line of 4096 bytes kept whole, longer ones as 256 + mark + 2048)."""

from __future__ import annotations

import http.client
import re
import socket
import ssl
import threading

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.client import ProbeClient, ProbeHTTPError, _describe, _LineSplitter

MARK = b"\x00...\x00"  # docs: a compacted payload is its first 256 bytes, this mark and its last 2048


def test_a_base_url_without_scheme_port_or_path():
    client = ProbeClient("gpu1")
    assert (client.scheme, client.host, client.port, client.prefix, client.timeout, client.api_key) == ("http", "gpu1", 80, "", 600.0, None)
    assert client._ssl_context is None
    assert ProbeClient("http://:8080").host == "127.0.0.1"


def test_https_defaults_to_443_and_verifies_certificates_unless_told_not_to():
    client = ProbeClient("https://gpu1.example/sglang/")
    assert (client.scheme, client.port, client.prefix) == ("https", 443, "/sglang")
    assert isinstance(client._ssl_context, ssl.SSLContext)
    assert client._ssl_context.verify_mode == ssl.CERT_REQUIRED and client._ssl_context.check_hostname is True
    unverified = ProbeClient("https://gpu1.example", validate_certs=False)._ssl_context
    assert unverified.verify_mode == ssl.CERT_NONE and unverified.check_hostname is False
    assert ProbeClient("http://gpu1:81/XX").prefix == "/XX"


def test_a_base_url_of_another_scheme_is_refused_whole():
    with pytest.raises(ValueError) as caught:
        ProbeClient("ftp://x")
    assert str(caught.value) == "base_url must be http:// or https:// (got 'ftp://x')"


def test_connections_are_of_the_servers_scheme_with_the_clients_or_the_given_timeout():
    plain = ProbeClient("http://10.0.0.1:30000", timeout=12).connection()
    assert isinstance(plain, http.client.HTTPConnection) and not isinstance(plain, http.client.HTTPSConnection)
    assert (plain.host, plain.port, plain.timeout) == ("10.0.0.1", 30000, 12.0)
    assert ProbeClient("http://10.0.0.1:30000", timeout=12).connection(3).timeout == 3
    secure = ProbeClient("https://10.0.0.1:8443").connection()
    assert isinstance(secure, http.client.HTTPSConnection) and (secure.port, secure.timeout) == (8443, 600.0)


def test_headers_whole():
    client = ProbeClient("http://h")
    assert client.headers() == {"Content-Type": "application/json", "Accept": "application/json"}
    assert client.headers(streaming=True) == {"Content-Type": "application/json", "Accept": "text/event-stream"}
    keyed = ProbeClient("http://h", api_key="k-1")
    assert keyed.headers(True) == {"Content-Type": "application/json", "Accept": "text/event-stream", "Authorization": "Bearer k-1"}


def test_a_refused_plain_request_names_method_path_and_error(unused_port=1):
    client = ProbeClient("http://127.0.0.1:%d" % unused_port, timeout=2)
    with pytest.raises(ProbeHTTPError) as caught:
        client.get("/health")
    assert str(caught.value).startswith("GET /health: ConnectionRefusedError: [Errno 111]")


def test_an_unknown_connection_mode_is_refused_whole():
    with pytest.raises(ValueError) as caught:
        ProbeClient("http://h").run_level("/generate", [b"{}"], 1, mode="pooled")
    assert str(caught.value) == "connection must be one of keep-alive, per-request (got 'pooled')"


def test_an_error_is_described_by_its_type_and_its_text_when_it_has_one():
    assert _describe(ConnectionResetError(104, "Connection reset by peer")) == "ConnectionResetError: [Errno 104] Connection reset by peer"
    assert _describe(http.client.RemoteDisconnected()) == "RemoteDisconnected"


def expected(text):
    """The payload of one ``data:`` line as the splitter keeps it: the line whole up to 4096 bytes, else its first
    256 bytes, the mark and its last 2048 (the line is compacted, "data: " included)."""
    kept = text if len(text) <= 4096 else text[:256] + MARK + text[-2048:]
    return kept[len(b"data: "):]


@pytest.mark.parametrize("length", [4095, 4096, 4097, 6000])
def test_a_line_in_one_read_is_whole_up_to_4096_bytes_and_compacted_beyond(length):
    data = bytes(range(48, 58)) * 1000
    text = b"data: " + data[:length - 6]
    assert _LineSplitter().feed(text + b"\n") == [expected(text)]


@pytest.mark.parametrize("length", [100, 256, 257, 2048, 4096, 4097, 9000])
@pytest.mark.parametrize("cut", [1, 5, 255, 256, 257, 2047, 2048, 2049, 4095, 4096])
def test_a_line_split_over_two_reads_gives_what_one_read_gives(length, cut):
    data = (bytes(range(33, 127)) * 200)[:length - 6]
    text = b"data: " + data
    if cut >= len(text):
        return
    whole = [expected(text)]
    splitter = _LineSplitter()
    assert splitter.feed(text[:cut]) == []
    assert splitter.feed(text[cut:] + b"\n") == whole
    assert (splitter.head, splitter.tail, splitter.length) == (b"", b"", 0)


@pytest.mark.parametrize("sizes", [[3000, 3000, 3000], [100] * 60, [2047, 1, 2049, 10], [5000, 5000]])
def test_a_long_line_over_many_reads_keeps_its_first_256_and_last_2048_bytes(sizes):
    data = (bytes(range(33, 127)) * 400)[:sum(sizes)]
    text = b"data: " + data
    splitter, at, got = _LineSplitter(), 0, []
    for size in sizes[:-1]:
        got += splitter.feed(text[at:at + size])
        at += size
    got += splitter.feed(text[at:] + b"\n")
    assert got == [expected(text)]


def test_lines_after_a_compacted_one_start_afresh_and_the_last_byte_of_a_read_is_kept():
    splitter = _LineSplitter()
    long_text = b"data: " + b"x" * 5000
    assert splitter.feed(long_text[:4000]) == []
    assert splitter.feed(long_text[4000:] + b"\ndata: 1\ndata: 2") == [expected(long_text), b"1"]
    assert splitter.feed(b"3\n\n") == [b"23"]
    assert splitter.feed(b"data: end\n") == [b"end"]


# ---------------------------------------------------------------------------------------------------------------------
# A streaming POST against a loopback server that misbehaves on purpose

class _Server:
    """A loopback TCP server: each connection is answered by ``answer(sock, request_bytes)``; connections counted."""

    def __init__(self, answer):
        self.answer, self.connections, self.requests = answer, 0, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            # the whole body too: a socket closed with unread bytes sends a reset instead of a clean close
            head, _sep, body = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            while length and len(body) < int(length.group(1)):
                chunk = conn.recv(65536)
                if not chunk:
                    return
                body += chunk
                data += chunk
            self.requests.append(data)
            self.answer(conn, data)

    def close(self):
        self.sock.close()


@pytest.fixture
def serve():
    servers = []

    def start(answer):
        servers.append(_Server(answer))
        return servers[-1]
    yield start
    for server in servers:
        server.close()


def test_an_error_status_keeps_600_characters_of_its_body_and_asks_for_a_stream(serve):
    body = ("x" * 590 + "0123456789abcdef").encode()
    server = serve(lambda conn, _req: conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: %d\r\n\r\n" % len(body) + body))
    client = ProbeClient("http://127.0.0.1:%d" % server.port, timeout=5)
    cap, reusable = client.stream(client.connection(), "/generate", b"{}")
    assert cap.status == 500 and cap.error == "HTTP 500 from /generate: " + "x" * 590 + "0123456789"
    assert cap.end is not None and cap.end >= cap.start and reusable is True and cap.connect_s is None
    assert b"\r\nAccept: text/event-stream\r\n" in server.requests[0]


def test_a_refused_stream_is_reported_not_raised():
    client = ProbeClient("http://127.0.0.1:1", timeout=2)
    cap, reusable = client.stream(client.connection(), "/generate", b"{}", connect=True)
    assert cap.error == "POST /generate: ConnectionRefusedError: [Errno 111] Connection refused" and reusable is False


def test_a_connection_closed_before_any_answer_is_retried_once_on_a_new_one(serve):
    server = serve(lambda conn, _req: None)
    client = ProbeClient("http://127.0.0.1:%d" % server.port, timeout=5)
    cap, reusable = client.stream(client.connection(), "/generate", b"{}")
    assert cap.error == "POST /generate: RemoteDisconnected: Remote end closed connection without response"
    assert reusable is False and server.connections == 2


def test_a_server_that_goes_silent_hits_the_socket_timeout(serve):
    gone = threading.Event()
    server = serve(lambda conn, _req: (conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndata: 1\n"), gone.wait(5)))
    client = ProbeClient("http://127.0.0.1:%d" % server.port, timeout=0.5)
    cap, reusable = client.stream(client.connection(), "/generate", b"{}")
    gone.set()
    assert cap.error == "no data for 0.5s (timeout)" and reusable is False


def test_a_level_without_bodies_is_empty():
    assert ProbeClient("http://127.0.0.1:1", timeout=2).run_level("/generate", [], 4) == ([], 0.0)
