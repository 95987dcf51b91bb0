# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache/progress: the folded state of a progress file, exactly, and each line a person reads."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import progress


def lines(*records):
    """A progress file: one JSON object a line."""
    return "".join(json.dumps(r) + "\n" for r in records)


def test_state_before_any_line():
    """An empty or unreadable file: nothing started."""
    empty = {"event": None, "started": False, "finished": False, "failed": False}
    assert progress.parse_progress("") == empty
    assert progress.parse_progress('garbage\n[1, 2]\n"text"\n3\n{"event": "start"') == empty


def test_state_folds_every_record_key():
    """Each record's keys update the state; non-JSON and non-object lines are skipped."""
    text = lines({"event": "start", "pid": 7, "bytes_total": 100}) + "Traceback (most recent call last):\n[]\n" + \
        lines({"event": "progress", "bytes_done": 40, "files_done": 1})
    assert progress.parse_progress(text) == {"event": "progress", "started": True, "finished": False, "failed": False,
                                             "pid": 7, "bytes_total": 100, "bytes_done": 40, "files_done": 1}


def test_progress_before_a_start_line_is_not_started():
    """Records without a start line are kept, but the download does not count as started."""
    assert progress.parse_progress(lines({"event": "progress", "bytes_done": 5})) == {
        "event": "progress", "started": False, "finished": False, "failed": False, "bytes_done": 5}


@pytest.mark.parametrize("event, failed", [("done", False), ("error", True)])
def test_done_and_error_finish(event, failed):
    """done and error both finish a run; only error fails it."""
    state = progress.parse_progress(lines({"event": "start"}, {"event": event, "elapsed_s": 3}))
    assert state == {"event": event, "started": True, "finished": True, "failed": failed, "elapsed_s": 3}


def test_a_new_start_forgets_everything_before_it():
    """A second start (a retry) begins from a clean state: no keys, no finish, no failure from the first run."""
    state = progress.parse_progress(lines({"event": "start", "run_id": "a"}, {"event": "error", "error": "x"},
                                          {"event": "start", "run_id": "b"}))
    assert state == {"event": "start", "started": True, "finished": False, "failed": False, "run_id": "b"}


@pytest.mark.parametrize("seconds, text", [
    (None, "unknown"), (0, "0 s"), (89, "89 s"), (89.9, "89 s"), (90, "2 min"), (149, "2 min"), (150, "2 min"),
    (151, "3 min"), (5399, "90 min"), (5400, "1.5 h"), (5579, "1.5 h"), (5581, "1.6 h"), (10800, "3.0 h"),
])
def test_durations(seconds, text):
    """Seconds below 90 s, minutes below 90 min, then hours with one decimal."""
    state = {"started": True, "event": "done", "files_done": 1, "files_total": 1, "bytes_done": 1,
             "elapsed_s": seconds}
    assert progress.format_progress(state) == "download complete: 1/1 files, 1 B in %s" % text


def test_waiting_line():
    """Not started yet (whatever else the state holds)."""
    assert progress.format_progress({}) == "waiting for the download to start"
    assert progress.format_progress({"started": False, "event": "progress"}) == "waiting for the download to start"


def test_progress_line_exact():
    """Files, bytes, percent (rounded down), rate and time left."""
    state = {"started": True, "event": "progress", "files_done": 2, "files_total": 12, "bytes_done": 1,
             "bytes_total": 3, "rate_bps": 2_500_000, "eta_s": 95}
    assert progress.format_progress(state) == "2/12 files, 1 B of 3 B (33%), 2.5 MB/s, 2 min left"


def test_progress_line_when_every_byte_is_there():
    """All bytes done reads 100%, before the done line arrives."""
    state = {"started": True, "event": "progress", "files_done": 3, "files_total": 3, "bytes_done": 7,
             "bytes_total": 7, "rate_bps": 0, "eta_s": 0}
    assert progress.format_progress(state) == "3/3 files, 7 B of 7 B (100%), 0 B/s, 0 s left"


def test_progress_line_with_nothing_known_yet():
    """No totals yet: no percent, '?' files, zero rate, unknown time left."""
    state = {"started": True, "event": "start"}
    assert progress.format_progress(state) == "0/? files, 0 B of 0 B, 0 B/s, unknown left"
    state = {"started": True, "event": "progress", "bytes_done": None, "bytes_total": None, "rate_bps": None}
    assert progress.format_progress(state) == "0/? files, 0 B of 0 B, 0 B/s, unknown left"


def test_error_line_exact():
    """What failed, after how long, how far it got, and the error (or where to look)."""
    state = {"started": True, "event": "error", "elapsed_s": 30, "files_done": 1, "files_total": 3,
             "bytes_done": 2000, "bytes_total": 5000, "error": "disk full"}
    assert progress.format_progress(state) == "download failed after 30 s, 1/3 files, 2.0 KB of 5.0 KB: disk full"
    del state["error"]
    assert progress.format_progress(state) == (
        "download failed after 30 s, 1/3 files, 2.0 KB of 5.0 KB: see the job result")
