# -*- coding: utf-8 -*-
"""model_cache_progress: the wait ends on a done/error line, on a vanished writer, on an ended async job, or
after `wait` seconds; lines of another run never count. A fake clock keeps the tests instant."""

from __future__ import annotations

import json
import os

from ansible_collections.gpufleet.sglang.plugins.modules.model_cache_progress import job_result, process_alive, watch


class Clock:
    """time.time/time.sleep stand-in: sleeping advances the clock and can run a hook (a writer)."""

    def __init__(self, hook=None):
        self.now = 1000.0
        self.hook = hook
        self.sleeps = 0

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps += 1
        self.now += seconds
        if self.hook:
            self.hook(self)


def write(path, *records):
    with open(path, "a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def test_missing_file_waits_the_whole_interval(tmp_path):
    clock = Clock()
    result = watch(str(tmp_path / "none.jsonl"), 5.0, "r", clock=clock)
    assert result["started"] is False and result["finished"] is False
    assert result["line"] == "waiting for the download to start"
    assert result["waited_s"] == 5.0 and clock.sleeps == 10


def test_returns_as_soon_as_the_download_is_done(tmp_path):
    path = str(tmp_path / "p.jsonl")
    write(path, {"event": "start", "run_id": "r", "pid": os.getpid(), "bytes_total": 100, "files_total": 2})

    def finish(clock):
        if clock.sleeps == 3:
            write(path, {"event": "done", "run_id": "r", "files_done": 2, "files_total": 2, "bytes_done": 100,
                         "bytes_total": 100, "elapsed_s": 1.5})

    clock = Clock(finish)
    result = watch(path, 10.0, "r", clock=clock)
    assert result["finished"] and not result["failed_download"]
    assert result["waited_s"] == 1.5
    assert result["line"] == "download complete: 2/2 files, 100 B in 1 s"


def test_progress_of_a_running_download(tmp_path):
    path = str(tmp_path / "p.jsonl")
    write(path, {"event": "start", "run_id": "r", "pid": os.getpid()},
          {"event": "progress", "run_id": "r", "files_done": 1, "files_total": 4, "bytes_done": 25 * 10 ** 9,
           "bytes_total": 55 * 10 ** 9, "rate_bps": 100 * 10 ** 6, "eta_s": 300})
    result = watch(path, 1.0, "r", clock=Clock())
    assert not result["finished"]
    assert result["line"] == "1/4 files, 25.0 GB of 55.0 GB (45%), 100.0 MB/s, 5 min left"
    assert (result["bytes_done"], result["bytes_total"], result["files_done"], result["files_total"]) == (
        25 * 10 ** 9, 55 * 10 ** 9, 1, 4)


def test_another_runs_lines_do_not_count(tmp_path):
    path = str(tmp_path / "p.jsonl")
    write(path, {"event": "start", "run_id": "old", "pid": os.getpid()}, {"event": "done", "run_id": "old"})
    result = watch(path, 1.0, "new", clock=Clock())
    assert not result["started"] and not result["finished"]
    assert watch(path, 1.0, "", clock=Clock())["finished"]  # an empty run id accepts any run


def test_a_vanished_writer_ends_the_wait(tmp_path):
    path = str(tmp_path / "p.jsonl")
    write(path, {"event": "start", "run_id": "r", "pid": 2 ** 22 + 12345})
    result = watch(path, 30.0, "r", clock=Clock())
    assert result["finished"] and result["failed_download"] and result["waited_s"] == 0
    assert "ended without a result" in result["line"]


def test_an_ended_job_without_progress_lines_ends_the_wait(tmp_path):
    results = tmp_path / "job"
    results.write_text(json.dumps({"started": True, "finished": False, "ansible_job_id": "j1"}))
    assert job_result(str(results)) is None
    results.write_text(json.dumps({"failed": True, "msg": "repo_id must be org/name"}))
    assert job_result(str(results)) == {"failed": True, "msg": "repo_id must be org/name"}
    result = watch(str(tmp_path / "none.jsonl"), 30.0, "r", results_file=str(results), clock=Clock())
    assert result["finished"] and result["failed_download"] and "repo_id must be org/name" in result["line"]
    results.write_text(json.dumps({"changed": True, "msg": "fetched"}))
    assert watch(str(tmp_path / "none.jsonl"), 30.0, "r", results_file=str(results), clock=Clock())["failed_download"] is False
    assert job_result(str(tmp_path / "absent")) is None


def test_process_alive():
    assert process_alive(os.getpid())
    assert not process_alive(2 ** 22 + 12345)
    assert not process_alive("not a pid")
