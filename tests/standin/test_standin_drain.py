"""SIGTERM drains like SGLang: running streams finish whole, new requests are refused, the process exits 0 once the
last one is done (well within a unit's stop timeout), which is what a restart behind the gateway relies on."""
# pylint: disable=missing-function-docstring  # pytest idioms: named tests

import json
import signal

from standin_helpers import WAIT_S, Stream, http, sse_events


def test_sigterm_finishes_running_streams_refuses_new_requests_and_exits_0(launch):
    srv = launch(settings={"pace_scale": "1", "decode_tok_s": "100"}).wait_ready()
    workers = [Stream(srv.url("/v1/completions"), {
        "prompt": "long one", "max_tokens": 150, "ignore_eos": True, "stream": True}) for _stream in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        assert worker.started.wait(WAIT_S)  # both running before the signal
    srv.proc.send_signal(signal.SIGTERM)
    srv.wait_for("SIGTERM received")
    status, body, _headers = http("POST", srv.url("/v1/completions"), {"prompt": "new", "max_tokens": 4})
    assert status == 503 and b"shutting down" in body
    assert srv.proc.poll() is None  # still draining while the two streams run
    for worker in workers:
        worker.join(30)
    assert srv.wait_exit(timeout=10) == 0
    for worker in workers:
        events = sse_events(worker.raw)
        assert events[-1] == "[DONE]"
        texts = [json.loads(e)["choices"][0]["text"] for e in events[:-1] if json.loads(e).get("choices")]
        assert len([t for t in texts if t]) == 150
    assert "Draining requests and shutting down" in srv.output
