# -*- coding: utf-8 -*-
"""gateway/client against a scripted HTTP server on loopback (real sockets, no smg): what each call sends
(method, path, headers, JSON body), what it makes of each answer (JSON, empty, not JSON, 409, an error status at
the 400 cut-off, a body past 400 characters), the errors' texts with the keys redacted, and worker_in_flight.
The same client against a real smg gateway: tests/unit/plugins/modules/test_sglang_gateway_worker.py."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway import client
from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway.client import GatewayClient, GatewayError
from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway.pool import PoolError


class Server:
    """Answers each request with the next scripted (status, body) and records what came."""

    def __init__(self):
        self.answers = []
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                outer.seen.append((self.command, self.path, dict(self.headers), body))
                status, text = outer.answers.pop(0) if outer.answers else (200, "{}")
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _any

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.close()


def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_the_base_url_is_normalized_and_an_empty_key_is_no_key():
    gw = GatewayClient("HTTP://127.0.0.1:1/", api_key="")
    assert (gw.base_url, gw.api_key, gw.timeout) == ("http://127.0.0.1:1", None, 10.0)
    with pytest.raises(PoolError):
        GatewayClient("127.0.0.1:1")


def test_workers_sends_a_get_with_accept_only(server):
    server.answers.append((200, json.dumps({"workers": [{"url": "http://10.0.0.1:30000", "status": "ready"}]})))
    assert GatewayClient(server.url).workers() == [{"url": "http://10.0.0.1:30000", "status": "ready"}]
    method, path, headers, body = server.seen[0]
    assert (method, path, body) == ("GET", "/workers", None)
    assert headers["Accept"] == "application/json"
    assert "Content-Type" not in headers and "Authorization" not in headers


def test_the_api_key_goes_in_a_bearer_header(server):
    GatewayClient(server.url, api_key="gw-key-123").health()
    headers = server.seen[0][2]
    assert headers["Authorization"] == "Bearer gw-key-123"


def test_add_posts_the_normalized_url_key_and_priority_as_json(server):
    server.answers.append((202, '{"status": "accepted"}'))
    out = GatewayClient(server.url).add("HTTP://10.0.0.1:30000/", worker_api_key="wk", priority=0)
    assert out == {"status": "accepted"}
    method, path, headers, body = server.seen[0]
    assert (method, path) == ("POST", "/workers")
    assert headers["Content-Type"] == "application/json" and headers["Accept"] == "application/json"
    assert json.loads(body) == {"url": "http://10.0.0.1:30000", "api_key": "wk", "priority": 0}
    GatewayClient(server.url).add("http://10.0.0.2:30000", priority="3")
    assert json.loads(server.seen[1][3]) == {"url": "http://10.0.0.2:30000", "priority": 3}
    GatewayClient(server.url).add("http://10.0.0.2:30000", worker_api_key="")
    assert json.loads(server.seen[2][3]) == {"url": "http://10.0.0.2:30000"}


def test_a_409_on_add_is_an_answer_with_the_key_redacted(server):
    server.answers.append((409, "  worker already exists (key wk-secret)  \n"))
    out = GatewayClient(server.url, api_key="gw").add("http://10.0.0.1:30000", worker_api_key="wk-secret")
    assert out == {"conflict": True, "text": "worker already exists (key ********)"}


def test_a_409_elsewhere_is_an_error(server):
    server.answers.append((409, "busy"))
    with pytest.raises(GatewayError) as info:
        GatewayClient(server.url).remove("w1")
    assert str(info.value) == "gateway %s: DELETE /workers/w1 answered 409: busy" % server.url


def test_remove_quotes_the_id_whole(server):
    server.answers.append((200, ""))
    assert GatewayClient(server.url).remove("a/b c?") == {}
    assert server.seen[0][:2] == ("DELETE", "/workers/a%2Fb%20c%3F")
    assert server.seen[0][3] is None and "Content-Type" not in server.seen[0][2]


@pytest.mark.parametrize("status", [400, 401, 500, 503])
def test_an_error_status_names_the_gateway_call_and_status_without_the_key(server, status):
    server.answers.append((status, " denied for gw-key-123 \n"))
    with pytest.raises(GatewayError) as info:
        GatewayClient(server.url, api_key="gw-key-123").workers()
    assert str(info.value) == "gateway %s: GET /workers answered %d: denied for ********" % (server.url, status)


def test_an_error_body_is_cut_at_400_characters(server):
    server.answers.append((500, "x" * 400 + "y"))
    with pytest.raises(GatewayError) as info:
        GatewayClient(server.url).workers()
    assert str(info.value) == "gateway %s: GET /workers answered 500: %s" % (server.url, "x" * 400)
    server.answers.append((409, "z" * 400 + "w"))
    assert GatewayClient(server.url).add("http://10.0.0.1:30000") == {"conflict": True, "text": "z" * 400}


@pytest.mark.parametrize("text, out", [("", {}), ("  \n", {}), ('{"a": 1}', {"a": 1}), ("[1]", [1]),
                                       ("not json", {"text": "not json"}), ("<" * 401, {"text": "<" * 400})])
def test_what_a_success_answer_becomes(server, text, out):
    server.answers.append((299, text))
    assert GatewayClient(server.url).remove("w") == out


def test_health(server):
    server.answers.append((200, "ok"))
    assert GatewayClient(server.url).health() is True
    server.answers.append((503, "starting"))
    assert GatewayClient(server.url).health() is False
    assert server.seen[0][:2] == ("GET", "/health")
    assert GatewayClient("http://127.0.0.1:%d" % closed_port()).health() is False


def test_an_unreachable_gateway_names_the_call_and_never_the_key():
    url = "http://127.0.0.1:%d" % closed_port()
    with pytest.raises(GatewayError) as info:
        GatewayClient(url, api_key="Connection refused").workers()
    text = str(info.value)
    assert text.startswith("gateway %s: GET /workers failed: " % url)
    assert "Connection refused" not in text and "********" in text


def test_https_is_spoken_to_an_https_url(server):
    https_url = server.url.replace("http://", "https://")
    with pytest.raises(GatewayError) as info:
        GatewayClient(https_url).workers()  # a TLS handshake with a plain HTTP server fails
    assert str(info.value).startswith("gateway %s: GET /workers failed: " % https_url)
    assert server.seen == [] or server.seen[0][0] != "GET"


def test_the_timeout_bounds_a_call():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)  # accepts the connection, never answers
    try:
        url = "http://127.0.0.1:%d" % sock.getsockname()[1]
        with pytest.raises(GatewayError) as info:
            GatewayClient(url, timeout=0.3).workers()
        assert str(info.value) == "gateway %s: GET /workers failed: timed out" % url
    finally:
        sock.close()


def test_worker_in_flight(server):
    server.answers.append((200, "sglang:num_running_reqs 2\nsglang:num_queue_reqs 1\n"))
    assert client.worker_in_flight(server.url + "/") == 3
    assert server.seen[0][:2] == ("GET", "/metrics") and "Authorization" not in server.seen[0][2]
    server.answers.append((404, "sglang:num_running_reqs 2\n"))
    assert client.worker_in_flight(server.url) is None
    server.answers.append((200, "sglang:gen_throughput 1\n"))
    assert client.worker_in_flight(server.url) is None
    assert client.worker_in_flight("http://127.0.0.1:%d" % closed_port()) is None
    assert client.worker_in_flight("not a url") is None
