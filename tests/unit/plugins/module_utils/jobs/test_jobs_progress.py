# -*- coding: utf-8 -*-
"""jobs.progress: when an async job counts as ended, which line of its log or journal is shown, and the line."""

from __future__ import annotations

import json

from ansible_collections.gpufleet.sglang.plugins.module_utils.jobs.progress import job_ended, newest_line, progress_line

# Lines as pip 24 writes them with --log (verbatim shape: ISO time with a comma before the milliseconds).
PIP_LOG = """2026-12-01T10:22:15,120 Using pip 24.0 from /opt/sglang/venvs/0.5.23/lib/python3.11/site-packages/pip (python 3.11)
2026-12-01T10:22:15,980 Collecting sglang==0.5.23
2026-12-01T10:22:16,002   Obtaining dependency information for sglang==0.5.23 from https://files.example/sglang.whl.metadata
2026-12-01T10:22:41,553 Downloading torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl (899.7 MB)
2026-12-01T10:23:40,001   Created temporary directory: /tmp/pip-unpack-x1
"""
PIP_STEPS = r"(Collecting|Downloading|Installing collected packages|Successfully installed)"


def test_a_running_job_has_not_ended():
    assert job_ended(json.dumps({"started": 1, "finished": 0, "ansible_job_id": "j1"})) is None
    assert job_ended("") is None
    assert job_ended('{"started": 1, "fini') is None  # half written


def test_an_ended_job_gives_its_result():
    assert job_ended(json.dumps({"changed": True, "failed": True, "msg": "boom"})) == {"changed": True, "failed": True,
                                                                                       "msg": "boom"}


def test_the_newest_matching_log_line_without_its_timestamp():
    assert newest_line(PIP_LOG, PIP_STEPS) == "Downloading torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl (899.7 MB)"
    assert newest_line(PIP_LOG) == "Created temporary directory: /tmp/pip-unpack-x1"
    assert newest_line("", PIP_STEPS) == ""


def test_a_pattern_shows_the_line_from_where_it_matched():
    journal = "[2026-12-01 10:30:01 TP0] Decode batch, #running-req: 1, #token: 300, gen throughput (token/s): 53.70\n"
    assert newest_line(journal, r"Decode batch.*") == "Decode batch, #running-req: 1, #token: 300, gen throughput (token/s): 53.70"


def test_long_lines_are_cut():
    assert len(newest_line("x" * 500)) == 200


def test_the_line_says_the_time_and_the_step_then_how_it_ended():
    assert progress_line(42.9, "Collecting sglang==0.5.23", None) == "42 s: Collecting sglang==0.5.23"
    assert progress_line(130, "", None) == "2 min 10 s: running"
    assert progress_line(0, "", {"changed": True}) == "done"
    assert progress_line(0, "", {"failed": True}) == "failed (the task's result says why)"
