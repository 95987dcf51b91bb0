"""SIGTERM drains like SGLang: running streams finish whole, new requests are refused, the process exits 0 once the
last one is done (well within a unit's stop timeout), which is what a restart behind the gateway relies on."""
# pylint: disable=missing-function-docstring  # pytest idioms: named tests

import json
import signal
import threading
import time

from standin_helpers import http, sse_events


def test_sigterm_finishes_running_streams_refuses_new_requests_and_exits_0(launch):
    srv = launch(settings={"pace_scale": "1", "decode_tok_s": "100"}).wait_ready()
    results = [{}, {}]

    def stream(out):
        out["raw"] = http("POST", srv.url("/v1/completions"), {
            "prompt": "long one", "max_tokens": 150, "ignore_eos": True, "stream": True}, timeout=30)[1]

    workers = [threading.Thread(target=stream, args=(out,)) for out in results]
    for worker in workers:
        worker.start()
    time.sleep(0.3)
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.1)
    status, body, _headers = http("POST", srv.url("/v1/completions"), {"prompt": "new", "max_tokens": 4})
    assert status == 503 and b"shutting down" in body
    assert srv.proc.poll() is None  # still draining while the two streams run
    for worker in workers:
        worker.join(30)
    assert srv.wait_exit(timeout=10) == 0
    for out in results:
        events = sse_events(out["raw"])
        assert events[-1] == "[DONE]"
        texts = [json.loads(e)["choices"][0]["text"] for e in events[:-1] if json.loads(e).get("choices")]
        assert len([t for t in texts if t]) == 150
    assert "Draining requests and shutting down" in srv.output
