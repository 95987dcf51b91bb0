# -*- coding: utf-8 -*-
"""sglang_gateway_worker against a real smg gateway on loopback in front of two SGLang stand-ins.

Register (and idempotence), check mode, a drain while a stream runs (the stream finishes, the worker leaves, the
other worker takes the next requests), the refusal to drain the last serving worker, listed with a batch.
smg comes from build/gateway-venv (tools/dev/gateway-venv, which `make units` runs) or GPUFLEET_GATEWAY_VENV;
without it these tests are skipped.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.modules import sglang_gateway_worker

ROOT = Path(__file__).resolve().parents[4]
SRC = ROOT / "tools" / "standins" / "sglang" / "src"
VENV = Path(os.environ.get("GPUFLEET_GATEWAY_VENV") or ROOT / "build" / "gateway-venv")
SMG = VENV / "bin" / "smg"
ENTRY = "import sys; from sglang.cli.main import main; sys.argv[0] = 'sglang'; main()"

pytestmark = pytest.mark.skipif(not SMG.exists(), reason="no smg venv (tools/dev/gateway-venv)")


def free_ports(count):
    """Ports free on loopback now, all different (each socket stays bound until every port is chosen)."""
    socks = [socket.socket() for _unused in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def free_port():
    return free_ports(1)[0]


def get(url, timeout=2.0):
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # nosec B310: loopback
        return answer.status, answer.read().decode()


def wait_http(url, deadline_s=30.0):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if get(url)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("%s never answered 200" % url)


def start_standin(port):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    env.update(PYTHONPATH=str(SRC), PYTHONUNBUFFERED="1", SGLANG_STANDIN_PROFILE="test-fast",
               SGLANG_STANDIN_TIME_SCALE="0.01", SGLANG_STANDIN_PACE_SCALE="1", SGLANG_STANDIN_DECODE_TOK_S="100")
    return subprocess.Popen([sys.executable, "-c", ENTRY, "serve", "--model-type", "llm", "--model-path", "/models/test",
                             "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module", name="fleet")
def fleet_fixture():
    """Two stand-ins and a gateway routing to the first; everything is stopped at the end."""
    *ports, gateway_port = free_ports(3)
    procs = [start_standin(p) for p in ports]
    urls = ["http://127.0.0.1:%d" % p for p in ports]
    try:
        for url in urls:
            wait_http(url + "/health")
        procs.append(subprocess.Popen([str(SMG), "launch", "--host", "127.0.0.1", "--port", str(gateway_port),
                                       "--worker-urls", urls[0], "--policy", "round_robin",
                                       "--health-check-interval-secs", "1", "--log-level", "warn"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        gateway = "http://127.0.0.1:%d" % gateway_port
        wait_http(gateway + "/health")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and '"ready"' not in get(gateway + "/workers")[1]:
            time.sleep(0.2)
        yield {"gateway": gateway, "workers": urls}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def run_module(args, capsys, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as caught:
            sglang_gateway_worker.main()
    return caught.value.code, json.loads(capsys.readouterr().out)


def stream(gateway, tokens, out):
    body = json.dumps({"model": "/models/test", "prompt": "a long one", "max_tokens": tokens, "ignore_eos": True,
                       "stream": True}).encode()
    request = urllib.request.Request(gateway + "/v1/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:  # nosec B310: loopback
            out["status"] = answer.status
            out["text"] = answer.read().decode()
    except OSError as err:
        out["error"] = str(err)


def test_register_is_idempotent_and_check_mode_sends_nothing(fleet, capsys):
    gateway, (_first, second) = fleet["gateway"], fleet["workers"]
    code, result = run_module({"gateway_url": gateway, "url": second, "state": "present"}, capsys, check_mode=True)
    assert code == 0 and result["changed"] is True and result["worker"] is None
    code, result = run_module({"gateway_url": gateway, "url": second + "/", "state": "present",
                               "register_timeout": 30}, capsys)
    assert code == 0 and result["changed"] is True, result
    assert result["worker"]["status"] == "ready" and result["worker"]["healthy"] is True
    assert result["summary"]["workers"] == 2 and result["summary"]["healthy"] == 2
    code, result = run_module({"gateway_url": gateway, "url": second, "state": "present"}, capsys)
    assert code == 0 and result["changed"] is False


def test_a_drain_lets_the_running_stream_finish_and_the_worker_leave(fleet, capsys):
    gateway, (first, second) = fleet["gateway"], fleet["workers"]
    run_module({"gateway_url": gateway, "url": second, "state": "present", "register_timeout": 30}, capsys)
    outs = [{}, {}]
    threads = [threading.Thread(target=stream, args=(gateway, 150, out)) for out in outs]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # both streams placed: one on each worker (round robin)
        if json.loads(get(gateway + "/workers")[1])["workers"][0].get("load", 0) >= 1:
            break
        time.sleep(0.05)
    code, checked = run_module({"gateway_url": gateway, "url": second, "state": "drained"}, capsys, check_mode=True)
    assert code == 0 and checked["changed"] is True and checked["worker"]["status"] == "ready"
    code, result = run_module({"gateway_url": gateway, "url": second, "state": "drained", "drain_timeout": 60}, capsys)
    for thread in threads:
        thread.join(60)
    assert code == 0 and result["changed"] is True, result
    assert result["worker"] is None and result["before"]["url"] == second
    assert result["drain"]["in_flight_at_start"] >= 1
    assert [w["url"] for w in result["pool"]] == [first]
    for out in outs:
        assert out.get("status") == 200 and "error" not in out, out
        assert out["text"].rstrip().endswith("data: [DONE]") and out["text"].count('"text":') == 150
    code, again = run_module({"gateway_url": gateway, "url": second, "state": "drained"}, capsys)
    assert code == 0 and again["changed"] is False


def test_the_last_serving_worker_may_not_leave(fleet, capsys):
    gateway, (first, second) = fleet["gateway"], fleet["workers"]
    run_module({"gateway_url": gateway, "url": second, "state": "drained", "drain_timeout": 60}, capsys)
    code, result = run_module({"gateway_url": gateway, "url": first, "state": "drained"}, capsys)
    assert code == 1 and "would leave 0 serving worker(s)" in result["msg"] and result["changed"] is False
    assert result["worker"]["status"] == "ready"


def test_listed_says_whether_a_batch_may_leave(fleet, capsys):
    gateway, (first, second) = fleet["gateway"], fleet["workers"]
    run_module({"gateway_url": gateway, "url": second, "state": "present", "register_timeout": 30}, capsys)
    code, result = run_module({"gateway_url": gateway, "state": "listed", "leaving": [first]}, capsys)
    assert code == 0 and result["changed"] is False and result["refusal"] == "" and result["healthy_after"] == [second]
    code, result = run_module({"gateway_url": gateway, "state": "listed", "leaving": [first, second]}, capsys)
    assert code == 0 and "would leave 0 serving worker(s)" in result["refusal"]


def test_an_unreachable_gateway_fails_with_its_url_and_not_the_key(capsys):
    port = free_port()
    code, result = run_module({"gateway_url": "http://127.0.0.1:%d" % port, "gateway_api_key": "gw-secret-123",
                               "url": "http://127.0.0.1:1", "state": "present"}, capsys)
    assert code == 1 and "127.0.0.1:%d" % port in result["msg"] and "gw-secret-123" not in json.dumps(result)


def test_a_bad_worker_url_is_refused_naming_the_option(capsys):
    code, result = run_module({"gateway_url": "http://127.0.0.1:1", "url": "10.0.0.1:30000"}, capsys)
    assert code == 1 and result["msg"].startswith("gateway_url/url/leaving:")
