# -*- coding: utf-8 -*-
"""gateway/pool, exactly (make mutation MODULES=gateway/pool): each error text, each URL part on its own, every
shape of an smg /workers entry and of an SGLang /metrics page, the full result of brief/summary, the refusal's
whole text at its cut-off (as many serving workers left as required is enough) and the drain timeout's text."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway import pool

A, B, C = "http://10.0.0.1:30000", "http://10.0.0.2:30000", "http://10.0.0.3:30000"


def worker(url, status="ready", healthy=True, load=0, **extra):
    entry = {"id": "id-" + url[-1], "url": url, "status": status, "is_healthy": healthy, "load": load}
    entry.update(extra)
    return entry


def loads(*ranks):
    return {"loads": [{"dp_rank": i, "num_running_reqs": r, "num_waiting_reqs": w} for i, (r, w) in enumerate(ranks)]}


# ------------------------------------------------------------------------------------------------ URLs

@pytest.mark.parametrize("bad", ["", "   ", None, 30000])
def test_an_empty_or_missing_url_says_what_to_give(bad):
    with pytest.raises(pool.PoolError) as info:
        pool.normalize_url(bad)
    assert str(info.value) == "a worker URL is empty: give http://HOST:PORT"


@pytest.mark.parametrize("bad", ["ftp://x:1", "10.0.0.1:30000", "http://:30000", "gopher://gw"])
def test_a_url_that_is_not_http_says_so(bad):
    with pytest.raises(pool.PoolError) as info:
        pool.normalize_url(bad)
    assert str(info.value) == "worker URL %r is not http://HOST:PORT or https://HOST:PORT" % bad


@pytest.mark.parametrize("bad", ["http://x:1/v1", "http://x:1?a=1", "http://x:1#top", "http://x:1//"])
def test_a_url_with_a_path_query_or_fragment_is_refused(bad):
    with pytest.raises(pool.PoolError) as info:
        pool.normalize_url(bad)
    assert str(info.value) == ("worker URL %r carries a path or query; the gateway wants only scheme, host and port"
                               % bad)


@pytest.mark.parametrize("given, wanted", [
    ("https://GW.example:8443/", "https://gw.example:8443"), ("http://[FE80::1]:8000", "http://[fe80::1]:8000"),
    ("http://gw", "http://gw"), ("https://10.0.0.9", "https://10.0.0.9"),
])
def test_urls_normalized(given, wanted):
    assert pool.normalize_url(given) == wanted


# ------------------------------------------------------------------------------------------------ the pool

@pytest.mark.parametrize("answer", [[], None, "workers", {"workers": {}}, {"workers": None}, {}])
def test_an_answer_that_is_not_smgs_is_refused_exactly(answer):
    with pytest.raises(pool.PoolError) as info:
        pool.workers_of(answer)
    assert str(info.value) == "the gateway's /workers answer has no 'workers' list: is this an smg gateway?"


def test_workers_of_keeps_entries_with_a_text_url_as_copies():
    entry = worker(A)
    got = pool.workers_of({"workers": [entry, {"url": 5}, {"url": None}, ["url"], worker(B)]})
    assert got == [worker(A), worker(B)]
    got[0]["status"] = "changed"
    assert entry["status"] == "ready"
    assert pool.workers_of({"workers": []}) == []


def test_find_skips_entries_with_a_bad_url_and_returns_a_copy():
    entry = worker(A, load=4)
    workers = [{"url": "ftp://old"}, {"url": "http://x:1/path"}, entry, worker(B)]
    found = pool.find(workers, "HTTP://10.0.0.1:30000/")
    assert found == worker(A, load=4)
    found["load"] = 0
    assert entry["load"] == 4
    assert pool.find(workers, B) == worker(B)
    assert pool.find([], A) is None


def test_engine_in_flight_every_shape():
    assert pool.engine_in_flight(worker(A, engine_load=loads((0, 0)))) == 0
    assert pool.engine_in_flight(worker(A, engine_load=loads((2, 1), (3, 4)))) == 10
    nulls = {"loads": [{"num_running_reqs": None, "num_waiting_reqs": 2}]}
    assert pool.engine_in_flight(worker(A, engine_load=nulls)) == 2
    assert pool.engine_in_flight(worker(A, engine_load={"loads": [{"num_running_reqs": 3}]})) == 3
    assert pool.engine_in_flight(worker(A, engine_load={"loads": [{}]})) == 0
    for shape in ({"loads": []}, {}, {"loads": None}, {"loads": {"num_running_reqs": 1}}, [{"loads": [{}]}], None,
                  {"loads": [{"num_running_reqs": 1}, "x"]}):
        assert pool.engine_in_flight(worker(A, engine_load=shape)) is None, shape
    assert pool.engine_in_flight({"url": A}) is None


def test_metrics_in_flight_every_line_shape():
    assert pool.metrics_in_flight("sglang:num_running_reqs 4\n") == 4
    assert pool.metrics_in_flight("sglang:num_queue_reqs 2\n") == 2
    assert pool.metrics_in_flight('sglang:num_running_reqs{dp="0"} 1.0\nsglang:num_running_reqs{dp="1"} 2.0\n'
                                  'sglang:num_queue_reqs{dp="0"} 3\n') == 6
    assert pool.metrics_in_flight("sglang:num_running_reqs 0\n") == 0
    # a bad figure is skipped, and the lines after it still count
    assert pool.metrics_in_flight("sglang:num_running_reqs x\nsglang:num_running_reqs\nsglang:num_queue_reqs 5\n") == 5
    assert pool.metrics_in_flight("sglang:num_running_reqs x\n") is None
    # comments never count, even one glued to a metric name; other metrics neither
    assert pool.metrics_in_flight("#sglang:num_running_reqs 7\nsglang:num_queue_reqs 1\n") == 1
    assert pool.metrics_in_flight("sglang:num_running_reqs_total 9\nsglang:num_running 9\n") is None
    assert pool.metrics_in_flight(None) is None


@pytest.mark.parametrize("entry, serves", [
    (worker(A), True), (worker(A, healthy=False), False), (worker(A, status="pending"), False),
    (worker(A, status="draining"), False), ({"url": A, "status": "ready"}, False), ({"url": A, "is_healthy": True}, False),
])
def test_serving_is_ready_and_healthy(entry, serves):
    assert pool.serving(entry) is serves


def test_brief_of_an_entry():
    assert pool.brief(worker(A + "/", status="draining", healthy=1, load=3, engine_load=loads((2, 0)))) == {
        "url": A, "id": "id-/", "status": "draining", "healthy": True, "in_flight": 3, "engine_in_flight": 2}
    assert pool.brief({"url": B, "load": None}) == {"url": B, "id": None, "status": None, "healthy": False,
                                                    "in_flight": 0, "engine_in_flight": None}


def test_summary_of_a_pool():
    workers = [worker(A, load=None), worker(B, status="draining", load=2), worker(C, status="pending", load=1),
               {"url": "http://10.0.0.4:30000"}]
    assert pool.summary(workers) == {"workers": 4, "healthy": 1, "draining": 1, "in_flight": 3}
    assert pool.summary(iter(workers)) == {"workers": 4, "healthy": 1, "draining": 1, "in_flight": 3}
    assert pool.summary([]) == {"workers": 0, "healthy": 0, "draining": 0, "in_flight": 0}


def test_healthy_after_compares_normalized_urls_and_sorts():
    workers = [worker(C), worker(A), worker(B, healthy=False)]
    assert pool.healthy_after(workers, []) == [A, C]
    assert pool.healthy_after(workers, [A + "/"]) == [C]
    assert pool.healthy_after(workers, ["HTTP://10.0.0.3:30000", A]) == []


# ------------------------------------------------------------------------------------------------ the refusal

def test_as_many_serving_workers_left_as_required_is_enough():
    workers = [worker(A), worker(B), worker(C)]
    assert pool.leave_refusal(workers, [A], 2) is None
    assert pool.leave_refusal(workers, [A, B], 1) is None
    assert pool.leave_refusal(iter(workers), iter([A]), 2) is None
    assert pool.leave_refusal(workers, [], 5) is None  # nobody leaves: nothing changes for clients


def test_the_refusal_text():
    workers = [worker(C), worker(A), worker(B), worker("http://10.0.0.4:30000", healthy=False)]
    assert pool.leave_refusal(workers, [B + "/", A], 2) == (
        "taking http://10.0.0.1:30000, http://10.0.0.2:30000 out of the gateway's pool would leave 1 serving worker(s)"
        " (http://10.0.0.3:30000), fewer than the 2 required; serving now: http://10.0.0.1:30000, http://10.0.0.2:30000,"
        " http://10.0.0.3:30000. Make the batch smaller (serial) or bring more workers to ready first")
    assert pool.leave_refusal(iter(workers), iter([A, B, C]), 1) == (
        "taking http://10.0.0.1:30000, http://10.0.0.2:30000, http://10.0.0.3:30000 out of the gateway's pool would leave"
        " 0 serving worker(s) (none), fewer than the 1 required; serving now: http://10.0.0.1:30000,"
        " http://10.0.0.2:30000, http://10.0.0.3:30000. Make the batch smaller (serial) or bring more workers to ready"
        " first")


def test_a_leave_that_takes_no_serving_worker_is_never_refused():
    workers = [worker(A), worker(B, status="draining"), worker(C, healthy=False)]
    assert pool.leave_refusal(workers, [B, C, "http://10.0.0.9:30000"], 1) is None
    assert pool.leave_refusal(workers, [A], 1) is not None


# ------------------------------------------------------------------------------------------------ drains

def test_drain_state_of_other_entries():
    assert pool.drain_state({}) == "listed"
    assert pool.drain_state(worker(A, status="pending")) == "listed"
    assert pool.drain_state(worker(A, status="draining")) == "draining"


def test_the_drain_timeout_text():
    assert pool.drain_timeout_message(A + "/", None, 29.6) == (
        "worker http://10.0.0.1:30000 did not leave the gateway's pool within 30 s: status gone, 0 request(s) in flight"
        " through the gateway, none reported by the worker. It receives no new requests; raise drain_timeout for longer"
        " requests, or check the worker")
    assert pool.drain_timeout_message(A, worker(A, status="draining", load=3, engine_load=loads((0, 0))), 60) == (
        "worker http://10.0.0.1:30000 did not leave the gateway's pool within 60 s: status draining, 3 request(s) in"
        " flight through the gateway, 0 reported by the worker. It receives no new requests; raise drain_timeout for"
        " longer requests, or check the worker")
    assert "status ready, 0 request(s) in flight through the gateway, none reported by the worker" in \
        pool.drain_timeout_message(A, worker(A), 5)
