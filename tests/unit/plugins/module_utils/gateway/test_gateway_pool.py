# -*- coding: utf-8 -*-
"""gateway/pool: URLs, the pool's counts, the refusal of a batch that leaves no serving worker, drain states."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gateway import pool


def worker(url, status="ready", healthy=True, load=0, running=None, waiting=0):
    entry = {"id": "id-" + url[-5:], "url": url, "status": status, "is_healthy": healthy, "load": load}
    if running is not None:
        entry["engine_load"] = {"loads": [{"dp_rank": 0, "num_running_reqs": running, "num_waiting_reqs": waiting}]}
    return entry


A, B, C = "http://10.0.0.1:30000", "http://10.0.0.2:30000", "http://10.0.0.3:30000"


@pytest.mark.parametrize("given, wanted", [
    ("http://10.0.0.1:30000/", A), ("HTTP://Lab1.Example:30000", "http://lab1.example:30000"),
    (" http://10.0.0.1:30000 ", A), ("http://[::1]:30000", "http://[::1]:30000"), ("https://gw", "https://gw"),
])
def test_urls_are_compared_as_the_gateway_lists_them(given, wanted):
    assert pool.normalize_url(given) == wanted


@pytest.mark.parametrize("bad", ["", "10.0.0.1:30000", "ftp://x:1", "http://x:1/v1", "http://x:1?a=1", None])
def test_a_bad_url_is_refused_with_what_to_give(bad):
    with pytest.raises(pool.PoolError, match="URL"):
        pool.normalize_url(bad)


def test_workers_of_refuses_an_answer_that_is_not_smgs():
    with pytest.raises(pool.PoolError, match="smg"):
        pool.workers_of({"data": []})
    assert pool.workers_of({"workers": [{"url": A}, {"nourl": 1}, "x"]}) == [{"url": A}]


def test_find_matches_a_normalized_url_and_nothing_else():
    workers = [worker(A), worker(B)]
    assert pool.find(workers, A + "/")["url"] == A
    assert pool.find(workers, C) is None


def test_summary_counts_serving_draining_and_in_flight():
    workers = [worker(A, load=2), worker(B, status="draining", load=1), worker(C, healthy=False)]
    assert pool.summary(workers) == {"workers": 3, "healthy": 1, "draining": 1, "in_flight": 3}


def test_engine_in_flight_adds_running_and_waiting_over_ranks():
    entry = worker(A, running=2, waiting=1)
    entry["engine_load"]["loads"].append({"dp_rank": 1, "num_running_reqs": 3, "num_waiting_reqs": 0})
    assert pool.engine_in_flight(entry) == 6
    assert pool.engine_in_flight(worker(A)) is None


def test_a_batch_that_leaves_no_serving_worker_is_refused():
    workers = [worker(A), worker(B), worker(C, healthy=False)]
    assert pool.leave_refusal(workers, [A], 1) is None
    refusal = pool.leave_refusal(workers, [A, B], 1)
    assert refusal and "leave 0 serving worker(s)" in refusal and A in refusal and B in refusal
    assert pool.leave_refusal(workers, [A], 2) is not None
    assert pool.healthy_after(workers, [A]) == [B]


def test_a_draining_worker_does_not_count_as_serving():
    workers = [worker(A, status="draining"), worker(B)]
    assert pool.leave_refusal(workers, [B], 1) is not None


def test_drain_state_and_its_timeout_message():
    assert pool.drain_state(None) == "gone"
    assert pool.drain_state(worker(A, status="draining")) == "draining"
    assert pool.drain_state(worker(A)) == "listed"
    text = pool.drain_timeout_message(A, worker(A, status="draining", load=3, running=2), 30)
    assert "within 30 s" in text and "3 request(s) in flight" in text and "2 reported by the worker" in text


def test_workers_that_do_not_serve_may_always_leave():
    workers = [worker(A, healthy=False), worker(B, status="pending")]
    assert pool.leave_refusal(workers, [A, B], 1) is None
    assert pool.leave_refusal([], [A], 1) is None
    assert pool.leave_refusal([worker(A), worker(B, healthy=False)], [A, B], 1) is not None


def test_metrics_in_flight_adds_running_and_queued_requests():
    page = ("# HELP sglang:num_running_reqs The number of running requests.\n"
            'sglang:num_running_reqs{model_name="m"} 2.0\nsglang:num_queue_reqs{model_name="m"} 1.0\n'
            'sglang:num_requests_total{model_name="m"} 40.0\n')
    assert pool.metrics_in_flight(page) == 3
    assert pool.metrics_in_flight("sglang:gen_throughput 1.0\n") is None
    assert pool.metrics_in_flight("") is None
