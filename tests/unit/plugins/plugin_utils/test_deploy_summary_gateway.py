# -*- coding: utf-8 -*-
"""deploy_summary.gateway_line: the gateway's line of the summary (pool counts, drained workers left out)."""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.deploy_summary import gateway_line


def test_the_line_counts_the_pool_and_names_what_was_left_out():
    line = gateway_line({"url": "http://gw1:30080", "summary": {"workers": 3, "healthy": 2, "draining": 1},
                         "drained": ["http://10.0.0.3:30000"]})
    assert line == ("gateway http://gw1:30080: 3 worker(s) in the pool, 2 healthy, 1 draining; "
                    "drained and left out: http://10.0.0.3:30000")


def test_nothing_left_out_is_said():
    line = gateway_line({"url": "http://gw1:30080", "summary": {"workers": 4, "healthy": 4, "draining": 0}})
    assert line.endswith("4 worker(s) in the pool, 4 healthy, 0 draining; none left out")


def test_no_pool_read_is_said_not_left_blank():
    assert gateway_line(None).startswith("gateway: no pool read")
    assert gateway_line({"url": "x"}).startswith("gateway: no pool read")
