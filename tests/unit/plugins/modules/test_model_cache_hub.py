# -*- coding: utf-8 -*-
"""model_cache_hub end to end on this machine: the module, its helper running in a venv with the real
huggingface_hub (installed offline from build/wheelhouse), and the hub stand-in on loopback.

What it proves: a pinned commit is fetched and verified; the second call makes no request at all; a cut shard is
fetched again alone; a declared size larger than the disk fails before any request for a file; a refused token
fails without showing the token; tags and branches resolve (a branch warns); check mode fetches nothing and
shows the files in its diff; an unreachable hub falls back to a complete cached copy of the same tag.

Needs CPython 3.11 (the wheelhouse's interpreter); builds build/wheelhouse with tools/dev/wheelhouse when it lacks
huggingface_hub (as `make molecule` does), and skips when that fails. The helper's pure parts are tested without
any venv below.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import urllib.request
from unittest import mock
from pathlib import Path

import pytest

from ansible.module_utils import _internal as module_utils_internal

from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import hub_helper as helper
from ansible_collections.gpufleet.sglang.plugins.modules import model_cache_hub

ROOT = Path(__file__).resolve().parents[4]
WHEELHOUSE = ROOT / "build" / "wheelhouse"
sys.path.insert(0, str(ROOT / "tools" / "standins" / "hub"))
import hub_standin  # noqa: E402  pylint: disable=wrong-import-position

REPO = "gpufleet-test/Qwen2-tiny"
TOKEN = "hf_unitTestToken0123456789abcdefgh"
SHARD2 = "model-00002-of-00003.safetensors"


# ------------------------------------------------------------------------------------------------ fixtures

def python311():
    """An interpreter matching the wheelhouse (CPython 3.11), or None."""
    for name in ("python3.11", "python3"):
        path = shutil.which(name)
        if path and subprocess.run([path, "-c", "import sys, venv; assert sys.version_info[:2] == (3, 11)"],
                                   capture_output=True, check=False).returncode == 0:
            return path
    return None


@pytest.fixture(scope="module")
def hub_python(tmp_path_factory):
    """A venv with huggingface_hub from the wheelhouse; its python."""
    interpreter = python311()
    if interpreter is None:
        pytest.skip("needs CPython 3.11, the interpreter the wheelhouse is built for")
    if not list(WHEELHOUSE.glob("huggingface_hub-*.whl")):
        # The same build `make molecule` runs first (up-to-date stamp; needs the package index once).
        built = subprocess.run([str(ROOT / "tools" / "dev" / "wheelhouse")], capture_output=True, text=True, check=False)
        if built.returncode != 0 or not list(WHEELHOUSE.glob("huggingface_hub-*.whl")):
            pytest.skip("build/wheelhouse has no huggingface_hub and tools/dev/wheelhouse failed: %s" % built.stderr[-300:])
    venv = tmp_path_factory.mktemp("hubvenv")
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index", "--find-links",
                    str(WHEELHOUSE), "huggingface_hub"], check=True)
    return str(venv / "bin" / "python")


class Hub:
    """The stand-in on 127.0.0.1 in a thread, with its request log in memory."""

    def __init__(self, folder: Path, token: str) -> None:
        hub_standin.make_model(folder)
        self.repo = hub_standin.Repo(REPO, folder, ["v1.0"])
        self.server = hub_standin.HubServer(("127.0.0.1", 0), {REPO: self.repo}, token, None, 0)
        self.requests = []
        self.server.write_log = self.requests.append
        self.endpoint = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def downloads(self):
        return [r["path"].rsplit("/", 1)[-1] for r in self.requests if r["method"] == "GET" and "/resolve/" in r["path"]]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(tmp_path):
    server = Hub(tmp_path / "served", TOKEN)
    yield server
    server.stop()


def run(args, capsys, check_mode=False, diff=False):
    """main() with these arguments; (exit code, result dict)."""
    full = dict(args, _ansible_tmpdir=args["state_dir"], _ansible_check_mode=check_mode, _ansible_diff=diff)
    os.makedirs(args["state_dir"], exist_ok=True)
    # Once a test in this process has imported controller code, ansible sends module warnings to the display
    # instead of the result; a module runs on the target, so pretend we are there.
    with patch_module_args(full), mock.patch.object(module_utils_internal, "is_controller", False):
        with pytest.raises(SystemExit) as exc:
            model_cache_hub.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def base_args(tmp_path, hub, python, **extra):
    args = {"repo_id": REPO, "revision": hub.repo.sha, "cache_dir": str(tmp_path / "cache" / "hub"),
            "state_dir": str(tmp_path / "cache" / ".model_cache"), "python": python, "token": TOKEN,
            "endpoint": hub.endpoint, "progress_interval": 0.2}
    args.update(extra)
    return args


# ------------------------------------------------------------------------------------------------ end to end

def test_fetch_then_nothing_then_repair(tmp_path, hub, hub_python, capsys):
    args = base_args(tmp_path, hub, hub_python, download=True)
    code, result = run(args, capsys)
    assert code == 0, result
    assert result["changed"] and result["complete"] and result["revision_kind"] == "commit"
    assert sorted(hub.downloads()) == sorted(result["files"]) and len(result["files"]) == 10
    assert "README.md" not in result["files"]  # not in the default patterns
    snapshot = Path(result["snapshot_path"])
    assert snapshot == tmp_path / "cache" / "hub" / "models--gpufleet-test--Qwen2-tiny" / "snapshots" / hub.repo.sha
    assert stat.S_IMODE(os.stat(snapshot / SHARD2).st_mode) == 0o644
    assert Path(result["manifest"]).is_file()
    progress = [json.loads(line) for line in Path(args["state_dir"], "progress",
                                                  "models--gpufleet-test--Qwen2-tiny.jsonl").read_text().splitlines()]
    assert progress[0]["event"] == "start" and progress[-1]["event"] == "done"
    assert progress[-1]["bytes_done"] == result["total_bytes"]

    before = len(hub.requests)
    code, again = run(args, capsys)
    assert code == 0 and not again["changed"] and again["source"] == "manifest"
    assert len(hub.requests) == before  # a complete pinned commit needs no network at all

    with open(os.path.realpath(snapshot / SHARD2), "r+b") as handle:
        handle.truncate(100)
    code, failed = run(dict(args, download=False, repair=False), capsys)
    assert code == 1 and SHARD2 + ": truncated: 100 of 7328 bytes" in failed["msg"]
    code, repaired = run(args, capsys)
    assert code == 0 and repaired["changed"] and list(repaired["fetch"]) == [SHARD2]
    assert hub.downloads()[-1] == SHARD2 and len(hub.downloads()) == 11


def test_no_room_fails_before_any_file_request(tmp_path, hub, hub_python, capsys):
    code, result = run(base_args(tmp_path, hub, hub_python, download=True, declared_size_bytes=10 ** 16), capsys)
    assert code == 1
    assert "not enough disk space" in result["msg"] and "(10000000000000000 bytes)" in result["msg"]
    assert "bytes) are free" in result["msg"]
    assert hub.downloads() == [] and not (tmp_path / "cache" / "hub").exists()


def test_refused_token_is_named_not_shown(tmp_path, hub, hub_python, capsys):
    code, result = run(base_args(tmp_path, hub, hub_python, token="hf_wrongWrongWrong0123456789abcd"), capsys)
    assert code == 1 and "token (model_cache_token) is missing or refused" in result["msg"]
    assert "hf_wrongWrongWrong0123456789abcd" not in json.dumps(result)
    assert result.get("error_kind") == "auth"


def test_tags_branches_check_mode_and_offline_fallback(tmp_path, hub, hub_python, capsys):
    code, result = run(base_args(tmp_path, hub, hub_python, revision="main"), capsys, check_mode=True, diff=True)
    assert code == 0 and result["changed"] and not result["complete"] and result["revision_kind"] == "branch"
    assert "is a branch, not pinned" in json.dumps(result.get("warnings"))
    assert SHARD2 + " (7.3 KB)" in result["diff"]["after"]
    assert hub.downloads() == []

    code, result = run(base_args(tmp_path, hub, hub_python, revision="v1.0", download=True), capsys)
    assert code == 0 and result["revision_kind"] == "tag" and result["commit"] == hub.repo.sha

    hub.stop()  # the hub goes away: the complete cached copy of the tag is used, with a warning
    code, result = run(base_args(tmp_path, hub, hub_python, revision="v1.0"), capsys)
    assert code == 0 and result["complete"] and not result["changed"], result["msg"]
    assert "could not be reached" in json.dumps(result.get("warnings"))
    code, result = run(base_args(tmp_path, hub, hub_python, revision="v2.0"), capsys)
    assert code == 1 and "cannot reach the hub endpoint" in result["msg"]


def test_standin_serves_ranges_and_hub_headers(hub):
    url = "%s/%s/resolve/main/%s" % (hub.endpoint, REPO, SHARD2)
    head = urllib.request.Request(url, method="HEAD", headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(head, timeout=5) as response:
        assert response.headers["X-Repo-Commit"] == hub.repo.sha
        assert response.headers["X-Linked-Size"] == "7328"
        assert response.headers["X-Linked-Etag"].strip('"') == hub.repo.files[SHARD2]["lfs"]["oid"]
    ranged = urllib.request.Request(url, headers={"Authorization": "Bearer " + TOKEN, "Range": "bytes=7000-"})
    with urllib.request.urlopen(ranged, timeout=5) as response:
        assert response.status == 206 and response.headers["Content-Range"] == "bytes 7000-7327/7328"
        assert response.read() == hub.repo.files[SHARD2]["path"].read_bytes()[7000:]
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url, timeout=5)  # no token
    assert err.value.code == 401 and err.value.headers["X-Error-Code"] == "RepoNotFound"


# ------------------------------------------------------------------------------------------------ helper, pure

def test_backend_choice():
    assert helper.choose_backend({"huggingface_hub": "2.4.0", "hf_xet": "1.8.0", "hf_transfer": "0.1.9"}, False) == {}
    assert helper.choose_backend({"huggingface_hub": "2.4.0", "hf_xet": "1.8.0"}, True) == {"HF_XET_HIGH_PERFORMANCE": "1"}
    old = {"huggingface_hub": "0.36.0", "hf_xet": None, "hf_transfer": "0.1.9"}
    assert helper.choose_backend(old, False) == {"HF_HUB_ENABLE_HF_TRANSFER": "1"}
    assert helper.backend_name(old, {"HF_HUB_ENABLE_HF_TRANSFER": "1"}) == "hf_transfer"
    assert helper.backend_name({"hf_xet": None}, {}) == "http"


def named(name, *bases):
    return type(name, bases or (Exception,), {})


def test_errors_are_classified_by_name():
    not_found = named("RepositoryNotFoundError", named("HfHubHTTPError"))
    assert helper.classify_error(not_found("401 Client Error."))["kind"] == "auth"
    assert helper.classify_error(named("GatedRepoError", not_found)("x"))["error"].startswith("gated repository")
    assert helper.classify_error(named("RevisionNotFoundError")("404"))["kind"] == "revision"
    assert helper.classify_error(named("ConnectError")("[Errno 111] Connection refused"))["kind"] == "network"
    assert helper.classify_error(named("ProxyError")("bad proxy"))["error"].startswith("proxy error")
    assert helper.classify_error(ValueError("odd\nsecond line")) == {"kind": "other", "error": "ValueError: odd"}


def test_progress_writer_measures_finished_and_partial_files(tmp_path):
    storage = tmp_path / "models--a--b"
    snapshot = storage / "snapshots" / ("c" * 40)
    blobs = storage / "blobs"
    snapshot.mkdir(parents=True)
    blobs.mkdir()
    (snapshot / "config.json").write_text("x" * 10)
    (blobs / "etag.1234abcd.incomplete").write_bytes(b"y" * 25)
    path = tmp_path / "p.jsonl"
    writer = helper.ProgressWriter(str(path), str(storage), "c" * 40, {"config.json": 10, "w.safetensors": 100}, 1.0, "r")
    assert writer.measure() == {"files_done": 1, "bytes_done": 35}
    writer.write()
    record = json.loads(path.read_text())
    assert record["event"] == "progress" and record["run_id"] == "r" and record["bytes_total"] == 110
    assert record["files_done"] == 1 and record["rate_bps"] == 0 and record["eta_s"] is None
