# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache/hub_helper in this process: what the helper promises the module, checked by calling it directly.

The end-to-end tests (tests/unit/plugins/modules/test_model_cache_hub.py) run the helper in the service venv,
another process; here huggingface_hub is replaced by a stand-in in ``sys.modules`` that records what it was asked,
so every part of the helper (versions, backend, error kinds, plan, download, progress lines, the JSON answer)
is checked exactly.
"""

from __future__ import annotations

import io
import json
import os
import sys
import types
from importlib import metadata

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import hub_helper as helper

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def named(name, *bases):
    """An exception class with huggingface_hub's (or httpx's) name, without importing either."""
    return type(name, bases or (Exception,), {})


class Clock:
    """time.time() stand-in: returns the values given, in turn (the last one again when they run out)."""

    def __init__(self, *values):
        self.values = list(values)

    def time(self):
        return self.values.pop(0) if len(self.values) > 1 else self.values[0]


# ------------------------------------------------------------------------------------------------ versions, backend

def test_versions_names_each_package_and_none_when_absent(monkeypatch):
    installed = {"huggingface_hub": "1.2.3", "hf_transfer": "0.1.9"}

    def version(name):
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(metadata, "version", version)
    assert helper._versions() == {"huggingface_hub": "1.2.3", "hf_xet": None, "hf_transfer": "0.1.9"}


@pytest.mark.parametrize("versions, high_performance, env", [
    ({"huggingface_hub": "0.36.0", "hf_transfer": "0.1.9"}, False, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}),
    ({"huggingface_hub": "0.99.9", "hf_transfer": "0.1.9"}, True, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}),
    # 1.0 is the first release that uses hf_xet by itself: no hf_transfer from there on
    ({"huggingface_hub": "1.0.0", "hf_transfer": "0.1.9"}, False, {}),
    ({"huggingface_hub": "1.0", "hf_transfer": "0.1.9", "hf_xet": "1.1.0"}, False, {}),
    ({"huggingface_hub": "10.0.0", "hf_transfer": "0.1.9"}, False, {}),
    ({"huggingface_hub": "0.36.0", "hf_transfer": None}, False, {}),
    ({"huggingface_hub": "0.36.0"}, False, {}),
    # a version that does not start with a number, or none at all, counts as an old release
    ({"huggingface_hub": "dev", "hf_transfer": "0.1.9"}, False, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}),
    ({"huggingface_hub": None, "hf_transfer": "0.1.9"}, False, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}),
    ({"hf_transfer": "0.1.9"}, False, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}),
    # high performance only when asked and hf_xet is there
    ({"huggingface_hub": "1.0.0", "hf_xet": "1.1.0"}, True, {"HF_XET_HIGH_PERFORMANCE": "1"}),
    ({"huggingface_hub": "1.0.0", "hf_xet": "1.1.0"}, False, {}),
    ({"huggingface_hub": "1.0.0", "hf_xet": None}, True, {}),
    ({"huggingface_hub": "0.36.0", "hf_xet": "1.1.0", "hf_transfer": "0.1.9"}, True,
     {"HF_HUB_ENABLE_HF_TRANSFER": "1", "HF_XET_HIGH_PERFORMANCE": "1"}),
])
def test_backend_environment(versions, high_performance, env):
    assert helper.choose_backend(versions, high_performance) == env


@pytest.mark.parametrize("versions, env, name", [
    ({"hf_xet": "1.1.0", "hf_transfer": "0.1.9"}, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}, "hf_transfer"),
    ({"hf_xet": None}, {"HF_HUB_ENABLE_HF_TRANSFER": "0"}, "http"),
    ({"hf_xet": "1.1.0"}, {"HF_HUB_ENABLE_HF_TRANSFER": "0"}, "http, hf_xet for Xet-backed files"),
    ({"hf_xet": "1.1.0"}, {}, "http, hf_xet for Xet-backed files"),
    ({"hf_xet": "1.1.0"}, {"HF_XET_HIGH_PERFORMANCE": "1"}, "http, hf_xet for Xet-backed files (high performance)"),
    ({}, {"HF_XET_HIGH_PERFORMANCE": "1"}, "http"),
    ({}, {}, "http"),
])
def test_backend_name(versions, env, name):
    assert helper.backend_name(versions, env) == name


# ------------------------------------------------------------------------------------------------ errors

AUTH = "repository not found, or private and the token (model_cache_token) is missing or refused: "


@pytest.mark.parametrize("exc, expected", [
    (named("RevisionNotFoundError", named("HfHubHTTPError"))("404 Client Error.\nRevision Not Found"),
     {"kind": "revision", "error": "revision not found on the hub: 404 Client Error."}),
    (named("GatedRepoError", named("RepositoryNotFoundError"))("403 Client Error."),
     {"kind": "auth", "error": "gated repository, the token has no access: 403 Client Error."}),
    (named("RepositoryNotFoundError", named("HfHubHTTPError"))("401 Client Error."),
     {"kind": "auth", "error": AUTH + "401 Client Error."}),
    (named("ProxyError", named("ConnectionError"))("bad proxy"),
     {"kind": "network", "error": "proxy error (model_cache_proxy_env): bad proxy"}),
    (named("SubError", named("ConnectError"))("[Errno 111] Connection refused"),
     {"kind": "network", "error": "cannot reach the hub endpoint: SubError: [Errno 111] Connection refused"}),
    (ValueError("odd\nsecond line"), {"kind": "other", "error": "ValueError: odd"}),
    (ValueError("  padded  \n"), {"kind": "other", "error": "ValueError: padded"}),
    (ValueError(""), {"kind": "other", "error": "ValueError: ValueError"}),
    (ValueError("   "), {"kind": "other", "error": "ValueError: ValueError"}),
])
def test_errors_kind_and_whole_message(exc, expected):
    assert helper.classify_error(exc) == expected


@pytest.mark.parametrize("name", ["ConnectError", "ConnectTimeout", "TimeoutException", "ReadTimeout", "ConnectionError",
                                  "OfflineModeIsEnabled", "LocalEntryNotFoundError"])
def test_each_network_error_name_alone(name):
    assert helper.classify_error(named(name)("down")) == {"kind": "network", "error": "cannot reach the hub endpoint: %s: down" % name}


def test_a_name_seen_only_in_the_message_is_not_a_kind():
    assert helper.classify_error(RuntimeError("ConnectError RepositoryNotFoundError")) == {
        "kind": "other", "error": "RuntimeError: ConnectError RepositoryNotFoundError"}


# ------------------------------------------------------------------------------------------------ huggingface_hub stand-in

class Ref:
    def __init__(self, name):
        self.name = name


class Sibling:
    def __init__(self, rfilename, size, sha=None):
        self.rfilename, self.size = rfilename, size
        self.lfs = types.SimpleNamespace(sha256=sha) if sha else None


class FakeHub:
    """The parts of huggingface_hub the helper uses, recording every call."""

    def __init__(self, tags=(), branches=(), siblings=None, sha=COMMIT, fail=None):
        self.calls = []
        self.tags, self.branches, self.siblings, self.sha, self.fail = tags, branches, siblings, sha, fail
        hub = self

        class HfApi:
            def __init__(self, **kwargs):
                hub.calls.append(("HfApi", kwargs))

            def list_repo_refs(self, repo_id):
                hub.calls.append(("list_repo_refs", repo_id))
                return types.SimpleNamespace(tags=[Ref(n) for n in hub.tags], branches=[Ref(n) for n in hub.branches])

            def model_info(self, repo_id, **kwargs):
                hub.calls.append(("model_info", repo_id, kwargs))
                if hub.fail:
                    raise hub.fail
                return types.SimpleNamespace(sha=hub.sha, siblings=hub.siblings)

        def snapshot_download(repo_id, **kwargs):
            hub.calls.append(("snapshot_download", repo_id, kwargs))
            if hub.fail:
                raise hub.fail
            return os.path.join(kwargs["cache_dir"], "models--" + repo_id.replace("/", "--"), "snapshots", kwargs["revision"])

        def repo_folder_name(*, repo_id, repo_type):
            hub.calls.append(("repo_folder_name", repo_id, repo_type))
            return "%ss--%s" % (repo_type, repo_id.replace("/", "--"))

        self.module = types.ModuleType("huggingface_hub")
        self.module.HfApi = HfApi
        self.module.snapshot_download = snapshot_download
        self.file_download = types.ModuleType("huggingface_hub.file_download")
        self.file_download.repo_folder_name = repo_folder_name
        self.module.file_download = self.file_download

    def install(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "huggingface_hub", self.module)
        monkeypatch.setitem(sys.modules, "huggingface_hub.file_download", self.file_download)
        return self


# ------------------------------------------------------------------------------------------------ plan

def test_plan_of_a_commit_lists_files_sizes_and_lfs_sha256(monkeypatch):
    hub = FakeHub(siblings=[Sibling("config.json", 700), Sibling("model.safetensors", 7328, "ab" * 32),
                            Sibling("unsized.bin", None)]).install(monkeypatch)
    answer = helper.plan({"repo_id": "org/m", "revision": COMMIT, "endpoint": "http://hub.local", "token": "hf_x"})
    assert answer == {"commit": COMMIT, "kind": "commit",
                      "files": {"config.json": 700, "model.safetensors": 7328, "unsized.bin": None},
                      "sha256": {"model.safetensors": "ab" * 32}}
    # a commit id needs no refs listing
    assert hub.calls == [("HfApi", {"endpoint": "http://hub.local", "token": "hf_x"}),
                         ("model_info", "org/m", {"revision": COMMIT, "files_metadata": True})]


def test_plan_empty_endpoint_and_token_are_the_librarys_defaults(monkeypatch):
    hub = FakeHub(siblings=None).install(monkeypatch)
    answer = helper.plan({"repo_id": "org/m", "revision": COMMIT, "endpoint": "", "token": ""})
    assert answer == {"commit": COMMIT, "kind": "commit", "files": {}, "sha256": {}}
    assert hub.calls[0] == ("HfApi", {"endpoint": None, "token": None})
    hub = FakeHub(siblings=[]).install(monkeypatch)
    helper.plan({"repo_id": "org/m", "revision": COMMIT})
    assert hub.calls[0] == ("HfApi", {"endpoint": None, "token": None})


@pytest.mark.parametrize("revision, tags, branches, kind", [
    ("v1.0", ["v1.0"], ["main"], "tag"),
    ("main", ["v1.0"], ["main"], "branch"),
    ("both", ["both"], ["both"], "tag"),          # a tag and a branch of the same name: the tag (what the hub resolves)
    ("gone", ["v1.0"], ["main"], "unknown"),
    ("0123abc", [], [], "unknown"),                 # a short commit id is not pinned
    (COMMIT[:39], [], [], "unknown"),
    (COMMIT + "8", [], [], "unknown"),
    (COMMIT.upper(), [], [], "unknown"),            # commit ids are lowercase hex
    ("X" * 40, [], [], "unknown"),
    ("g" * 40, [], ["g" * 40], "branch"),           # 40 characters, not hex: a branch name
])
def test_plan_revision_kinds(monkeypatch, revision, tags, branches, kind):
    hub = FakeHub(tags=tags, branches=branches, siblings=[]).install(monkeypatch)
    assert helper.plan({"repo_id": "org/m", "revision": revision})["kind"] == kind
    assert ("list_repo_refs", "org/m") in hub.calls
    assert hub.calls[-1] == ("model_info", "org/m", {"revision": revision, "files_metadata": True})


# ------------------------------------------------------------------------------------------------ progress writer

def make_storage(tmp_path):
    storage = tmp_path / "models--a--b"
    snapshot = storage / "snapshots" / COMMIT
    blobs = storage / "blobs"
    snapshot.mkdir(parents=True)
    blobs.mkdir()
    return storage, snapshot, blobs


def test_writer_folders_interval_and_daemon(tmp_path):
    writer = helper.ProgressWriter(str(tmp_path / "p.jsonl"), str(tmp_path / "st"), COMMIT, {}, 0.5, "r1")
    assert writer.snapshot == str(tmp_path / "st" / "snapshots" / COMMIT)
    assert writer.blobs == str(tmp_path / "st" / "blobs")
    assert writer.interval == 0.5 and writer.run_id == "r1" and writer.previous is None
    assert writer.daemon is True                     # never keeps the helper alive after the answer
    assert not writer.halt.is_set()


def test_measure_counts_finished_links_and_partial_blobs_only(tmp_path):
    storage, snapshot, blobs = make_storage(tmp_path)
    (snapshot / "config.json").write_text("x" * 10)
    (snapshot / "sub").mkdir()
    (snapshot / "sub" / "tok.json").write_text("t")
    (snapshot / "w.safetensors").mkdir()             # a folder of that name is not a finished file
    (blobs / "etag1.incomplete").write_bytes(b"y" * 25)
    (blobs / "etag2.incomplete").write_bytes(b"z" * 5)
    (blobs / "finishedblob").write_bytes(b"f" * 1000)     # finished blobs count through their snapshot link
    (blobs / "etag3.incomplete.lock").write_bytes(b"l" * 7)
    os.symlink(str(blobs / "vanished"), str(blobs / "etag4.incomplete"))  # moved away between listdir and stat
    files = {"config.json": 10, "sub/tok.json": None, "w.safetensors": 100, "absent.bin": 50}
    writer = helper.ProgressWriter(str(tmp_path / "p.jsonl"), str(storage), COMMIT, files, 1.0, "r")
    assert writer.measure() == {"files_done": 2, "bytes_done": 40}


def test_measure_without_a_blobs_folder(tmp_path):
    storage = tmp_path / "models--a--b"
    (storage / "snapshots" / COMMIT).mkdir(parents=True)
    (storage / "snapshots" / COMMIT / "config.json").write_text("x" * 10)
    writer = helper.ProgressWriter(str(tmp_path / "p.jsonl"), str(storage), COMMIT, {"config.json": 10}, 1.0, "r")
    assert writer.measure() == {"files_done": 1, "bytes_done": 10}


def test_progress_lines_rate_and_eta(tmp_path, monkeypatch):
    storage, snapshot, blobs = make_storage(tmp_path)
    path = tmp_path / "p.jsonl"
    clock = Clock(1000.0)
    monkeypatch.setattr(helper, "time", clock)
    writer = helper.ProgressWriter(str(path), str(storage), COMMIT, {"config.json": 100, "w.safetensors": 900}, 1.0, "run7")
    (blobs / "e.incomplete").write_bytes(b"y" * 100)
    clock.values = [1002.12345]
    writer.write()
    (snapshot / "config.json").write_text("x" * 100)
    (blobs / "e.incomplete").write_bytes(b"y" * 301)
    clock.values = [1004.12345]
    writer.write()
    (blobs / "e.incomplete").write_bytes(b"y" * 50)      # a partial file restarted: never a negative rate
    clock.values = [1005.5]
    writer.write()
    clock.values = [1005.5]                               # no time passed: no rate
    writer.write()
    (blobs / "e.incomplete").write_bytes(b"y" * 5000)    # more on disk than listed: capped at the total
    clock.values = [1006.5]
    writer.write()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    base = {"event": "progress", "run_id": "run7", "files_total": 2, "bytes_total": 1000}
    assert records == [
        dict(base, t=1002.123, elapsed_s=2.1, files_done=0, bytes_done=100, rate_bps=0, eta_s=None),
        dict(base, t=1004.123, elapsed_s=4.1, files_done=1, bytes_done=401, rate_bps=150, eta_s=3),
        dict(base, t=1005.5, elapsed_s=5.5, files_done=1, bytes_done=150, rate_bps=0, eta_s=None),
        dict(base, t=1005.5, elapsed_s=5.5, files_done=1, bytes_done=150, rate_bps=0, eta_s=None),
        dict(base, t=1006.5, elapsed_s=6.5, files_done=1, bytes_done=1000, rate_bps=850, eta_s=0),
    ]
    assert path.read_text().endswith("}\n")


def writer_after_a_first_line(tmp_path, monkeypatch):
    """A ProgressWriter for one 1000-byte file on a stand-in clock, its first line written at t=10 (nothing downloaded)."""
    storage, _snapshot, blobs = make_storage(tmp_path)
    path = tmp_path / "p.jsonl"
    clock = Clock(0.0)
    monkeypatch.setattr(helper, "time", clock)
    writer = helper.ProgressWriter(str(path), str(storage), COMMIT, {"w.safetensors": 1000}, 1.0, "")
    clock.values = [10.0]
    writer.write()
    return writer, path, blobs, clock


def test_progress_rate_rounds_down(tmp_path, monkeypatch):
    writer, path, blobs, clock = writer_after_a_first_line(tmp_path, monkeypatch)
    (blobs / "e.incomplete").write_bytes(b"y" * 10)
    clock.values = [13.0]
    writer.write()
    last = json.loads(path.read_text().splitlines()[-1])
    assert (last["rate_bps"], last["eta_s"]) == (3, 297)   # 10 bytes in 3 s; 990 bytes at 3.33 B/s is 297 s


class Halt:
    """threading.Event stand-in: wait() answers False (go on) the given number of times, then True (stop)."""

    def __init__(self, rounds):
        self.rounds, self.waits = rounds, []

    def wait(self, timeout):
        self.waits.append(timeout)
        self.rounds -= 1
        return self.rounds < 0

    def set(self):
        self.rounds = 0


def test_run_writes_once_per_interval_until_halted(tmp_path):
    storage, _snapshot, _blobs = make_storage(tmp_path)
    path = tmp_path / "p.jsonl"
    writer = helper.ProgressWriter(str(path), str(storage), COMMIT, {"a": 1}, 0.25, "r")
    writer.halt = Halt(2)
    writer.run()
    assert writer.halt.waits == [0.25, 0.25, 0.25]
    assert len(path.read_text().splitlines()) == 2


def test_run_survives_a_progress_file_it_cannot_write(tmp_path):
    storage, _snapshot, _blobs = make_storage(tmp_path)
    writer = helper.ProgressWriter(str(tmp_path / "missing" / "p.jsonl"), str(storage), COMMIT, {"a": 1}, 0.25, "r")
    writer.halt = Halt(2)
    writer.run()                                     # no exception: the download goes on
    assert writer.halt.waits == [0.25, 0.25, 0.25]


# ------------------------------------------------------------------------------------------------ download

class RecordingWriter(helper.ProgressWriter):
    """The real writer, recording how download() made and stopped it."""

    made = []

    def __init__(self, *args):
        super().__init__(*args)
        self.args, self.joined, self.started_thread = args, [], False
        RecordingWriter.made.append(self)

    def start(self):
        self.started_thread = True

    def join(self, timeout=None):
        self.joined.append(timeout)


@pytest.fixture
def recording(monkeypatch):
    RecordingWriter.made = []
    monkeypatch.setattr(helper, "ProgressWriter", RecordingWriter)
    return RecordingWriter.made


def test_download_passes_the_request_and_brackets_it_with_progress_lines(tmp_path, monkeypatch, recording):
    hub = FakeHub().install(monkeypatch)
    progress = tmp_path / "p.jsonl"
    seen = []
    real = hub.module.snapshot_download

    def snapshot_download(repo_id, **kwargs):
        seen.append(progress.read_text().splitlines())
        return real(repo_id, **kwargs)

    hub.module.snapshot_download = snapshot_download
    request = {"repo_id": "org/m", "commit": COMMIT, "cache_dir": str(tmp_path / "hub"), "files": {"a.json": 5, "b.bin": None},
               "allow_patterns": ["*.json"], "token": "hf_t", "endpoint": "http://hub.local", "max_workers": "3",
               "progress_file": str(progress), "progress_interval": 0.5, "run_id": "r9"}
    answer = helper.download(request)
    assert answer["path"] == str(tmp_path / "hub" / "models--org--m" / "snapshots" / COMMIT)
    assert hub.calls == [("repo_folder_name", "org/m", "model"),
                         ("snapshot_download", "org/m", {"revision": COMMIT, "cache_dir": str(tmp_path / "hub"),
                                                         "allow_patterns": ["*.json"], "token": "hf_t",
                                                         "endpoint": "http://hub.local", "max_workers": 3})]
    (writer,) = recording
    assert writer.args == (str(progress), str(tmp_path / "hub" / "models--org--m"), COMMIT, {"a.json": 5, "b.bin": 0}, 0.5, "r9")
    assert writer.started_thread and writer.halt.is_set() and writer.joined == [5]
    assert len(seen[0]) == 1                         # one line before the transfer starts
    lines = [json.loads(line) for line in progress.read_text().splitlines()]
    assert len(lines) == 2 and lines[-1]["run_id"] == "r9" and lines[-1]["bytes_total"] == 5


def test_download_defaults(tmp_path, monkeypatch, recording):
    hub = FakeHub().install(monkeypatch)
    request = {"repo_id": "org/m", "commit": COMMIT, "cache_dir": str(tmp_path), "files": {},
               "allow_patterns": [], "token": "", "endpoint": "", "max_workers": 0,
               "progress_file": str(tmp_path / "p.jsonl"), "progress_interval": 0}
    helper.download(request)
    assert hub.calls[-1] == ("snapshot_download", "org/m", {"revision": COMMIT, "cache_dir": str(tmp_path), "allow_patterns": None,
                                                            "token": None, "endpoint": None, "max_workers": 8})
    assert recording[0].args[4:] == (2.0, "")
    helper.download({"repo_id": "org/m", "commit": COMMIT, "cache_dir": str(tmp_path), "files": {}})
    assert hub.calls[-1][2]["max_workers"] == 8 and hub.calls[-1][2]["allow_patterns"] is None
    assert len(recording) == 1                       # no progress_file: no writer


def test_download_without_progress_file_and_its_elapsed_time(tmp_path, monkeypatch, recording):
    FakeHub().install(monkeypatch)
    monkeypatch.setattr(helper, "time", Clock(100.0, 112.34567))
    answer = helper.download({"repo_id": "org/m", "commit": COMMIT, "cache_dir": str(tmp_path), "files": {}, "progress_file": ""})
    assert answer == {"path": str(tmp_path / "models--org--m" / "snapshots" / COMMIT), "elapsed_s": 12.35}
    assert recording == []


def test_a_failed_download_still_stops_the_writer_and_writes_the_last_line(tmp_path, monkeypatch, recording):
    FakeHub(fail=named("ConnectError")("refused")).install(monkeypatch)
    progress = tmp_path / "p.jsonl"
    with pytest.raises(Exception, match="refused"):
        helper.download({"repo_id": "org/m", "commit": COMMIT, "cache_dir": str(tmp_path), "files": {"a": 1},
                         "progress_file": str(progress)})
    assert recording[0].halt.is_set() and recording[0].joined == [5]
    assert len(progress.read_text().splitlines()) == 2


# ------------------------------------------------------------------------------------------------ main

@pytest.fixture
def umask():
    """Restores the test process's umask after main() set it."""
    before = os.umask(0o077)
    os.umask(before)
    yield
    os.umask(before)


def run_main(monkeypatch, capsys, request, versions):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(request)))
    monkeypatch.setattr(helper, "_versions", lambda: dict(versions))
    code = helper.main()
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1     # exactly one JSON line
    return code, json.loads(out)


HUB2 = {"huggingface_hub": "2.4.0", "hf_xet": "1.8.0", "hf_transfer": None}


def test_main_plan_answer_and_umask(monkeypatch, capsys, umask):
    FakeHub(siblings=[Sibling("config.json", 7)]).install(monkeypatch)
    os.umask(0o077)
    code, answer = run_main(monkeypatch, capsys, {"command": "plan", "repo_id": "org/m", "revision": COMMIT}, HUB2)
    assert code == 0
    assert answer == {"versions": HUB2, "backend": "http, hf_xet for Xet-backed files", "commit": COMMIT, "kind": "commit",
                      "files": {"config.json": 7}, "sha256": {}}
    assert os.umask(0o022) == 0o022                  # files 0644, folders 0755 for the service user


def test_main_sets_the_backend_environment_before_the_command(monkeypatch, capsys, umask, tmp_path):
    hub = FakeHub().install(monkeypatch)
    monkeypatch.delenv("HF_XET_HIGH_PERFORMANCE", raising=False)
    monkeypatch.delenv("HF_HUB_ENABLE_HF_TRANSFER", raising=False)
    seen = []
    real = hub.module.snapshot_download

    def snapshot_download(repo_id, **kwargs):
        seen.append(os.environ.get("HF_XET_HIGH_PERFORMANCE"))
        return real(repo_id, **kwargs)

    hub.module.snapshot_download = snapshot_download
    monkeypatch.setattr(helper, "time", Clock(5.0))
    code, answer = run_main(monkeypatch, capsys, {"command": "download", "repo_id": "org/m", "commit": COMMIT, "cache_dir": str(tmp_path),
                                                  "files": {}, "high_performance": True}, HUB2)
    assert code == 0 and seen == ["1"]
    assert answer == {"versions": HUB2, "backend": "http, hf_xet for Xet-backed files (high performance)",
                      "path": str(tmp_path / "models--org--m" / "snapshots" / COMMIT), "elapsed_s": 0.0}


def test_main_without_huggingface_hub(monkeypatch, capsys, umask):
    versions = {"huggingface_hub": None, "hf_xet": None, "hf_transfer": None}
    code, answer = run_main(monkeypatch, capsys, {"command": "plan", "repo_id": "org/m", "revision": COMMIT}, versions)
    assert code == 1
    assert answer == {"versions": versions, "backend": "http", "failed": True, "kind": "missing",
                      "error": "huggingface_hub is not installed in %s" % sys.prefix}


def test_main_failure_is_one_json_line_with_kind_and_traceback_tail(monkeypatch, capsys, umask):
    FakeHub(fail=named("RepositoryNotFoundError")("401 Client Error." + "x" * 5000)).install(monkeypatch)
    code, answer = run_main(monkeypatch, capsys, {"command": "plan", "repo_id": "org/m", "revision": COMMIT}, HUB2)
    assert code == 1
    assert answer["failed"] is True and answer["kind"] == "auth"
    assert answer["error"] == AUTH + "401 Client Error." + "x" * 5000
    assert len(answer["traceback"]) == 4000 and answer["traceback"].endswith("x" * 100 + "\n")
    assert set(answer) == {"versions", "backend", "failed", "traceback", "kind", "error"}


def test_main_unknown_command(monkeypatch, capsys, umask):
    code, answer = run_main(monkeypatch, capsys, {"command": "delete"}, HUB2)
    assert code == 1
    assert answer["kind"] == "other" and answer["error"] == "ValueError: unknown command 'delete'"
    assert answer["traceback"].startswith("Traceback (most recent call last):")
    assert answer["traceback"].endswith("ValueError: unknown command 'delete'\n")


def test_a_rate_under_one_byte_a_second_still_gives_an_eta(tmp_path, monkeypatch):
    writer, path, blobs, clock = writer_after_a_first_line(tmp_path, monkeypatch)
    (blobs / "e.incomplete").write_bytes(b"y")
    clock.values = [12.0]
    writer.write()
    last = json.loads(path.read_text().splitlines()[-1])
    assert (last["rate_bps"], last["eta_s"]) == (0, 1998)   # 1 byte in 2 s: 999 bytes left at 0.5 B/s
