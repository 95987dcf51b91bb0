# -*- coding: utf-8 -*-
"""jobs.progress at its edges: each shape of a results file, the timestamp pip writes, the 200-character cut and
the two-minute switch of the time format (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.jobs.progress import job_ended, newest_line, progress_line


@pytest.mark.parametrize("text", ["[1, 2]", '"done"', "3", "null", "not json at all"])
def test_a_results_file_that_is_no_object_means_the_job_still_runs(text):
    assert job_ended(text) is None


def test_a_started_job_has_ended_once_finished_is_set():
    result = {"started": 1, "finished": 1, "changed": False, "rc": 0}
    assert job_ended(json.dumps(result)) == result


def test_a_result_without_started_is_the_module_result():
    assert job_ended('{"started": 0, "finished": 0, "msg": "x"}') == {"started": 0, "finished": 0, "msg": "x"}
    assert job_ended("{}") == {}


@pytest.mark.parametrize("stamp", ["2026-12-01T10:22:15,120 ", "2026-12-01T10:22:15.120\t", "2026-12-01T10:22:15,1   "])
def test_pip_timestamps_are_removed_with_the_space_after_them(stamp):
    assert newest_line(stamp + "Collecting sglang==0.5.23\n") == "Collecting sglang==0.5.23"


@pytest.mark.parametrize("line", [
    "2026-12-01 10:22:15,120 Collecting x",  # a space, not a T
    "2026-12-01T10:22:15 Collecting x",      # no fraction
    "2026-12-01T10:22:15,120Collecting x",   # nothing after the stamp
    "x 2026-12-01T10:22:15,120 Collecting x",  # not at the start
    "26-12-01T10:22:15,120 Collecting x",
])
def test_what_is_not_a_pip_timestamp_stays(line):
    assert newest_line(line + "\n") == line


def test_blank_lines_are_skipped():
    assert newest_line("Collecting a\n   \n\t\n\n") == "Collecting a"
    assert newest_line("Collecting a\n   \n\n", "Coll") == "Collecting a"


def test_with_a_pattern_the_newest_matching_line_wins_over_newer_others():
    text = "Collecting a\nCollecting b\n  Created temporary directory: x\n"
    assert newest_line(text, "Collecting") == "Collecting b"
    assert newest_line(text, "nothing") == ""


@pytest.mark.parametrize("length", [199, 200, 201])
def test_lines_are_cut_at_200_characters(length):
    assert newest_line("y" * length) == "y" * min(length, 200)
    assert newest_line("x " + "y" * length, "y+") == "y" * min(length, 200)


@pytest.mark.parametrize("elapsed, text", [
    (0, "0 s: step"), (59.99, "59 s: step"), (119.9, "119 s: step"), (120, "2 min 00 s: step"),
    (121, "2 min 01 s: step"), (3599, "59 min 59 s: step"), (3725, "62 min 05 s: step"),
])
def test_the_time_is_in_seconds_below_two_minutes_then_minutes_and_seconds(elapsed, text):
    assert progress_line(elapsed, "step", None) == text


def test_an_ended_job_is_done_or_failed_whatever_the_time():
    assert progress_line(500, "step", {"failed": False, "changed": True}) == "done"
    assert progress_line(500, "step", {}) == "done"
    assert progress_line(500, "step", {"failed": True}) == "failed (the task's result says why)"
