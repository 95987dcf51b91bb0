# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The part of the model cache that runs inside the service venv, where huggingface_hub is installed.

Why a separate script: Ansible modules run with the target's own Python and standard library only, while
the download must use the service venv's huggingface_hub (the same library, version and transfer backends
SGLang itself would use, honouring HF_ENDPOINT, proxies and tokens the same way). The module
``model_cache_hub`` writes this file into its temporary folder and runs it with the venv's interpreter; the
request (token included) arrives as JSON on stdin, never on the command line; the answer is one JSON line on
stdout. huggingface_hub is imported inside the functions, so importing this file needs only the standard library.

Two commands:
  plan      resolve the revision to a commit (and whether it is a branch or a tag) and list the files with
            their sizes and LFS sha256, from the hub's model info (``GET /api/models/{repo}/revision/{rev}``)
  download  ``snapshot_download`` of one commit into the hub cache, with a thread that appends a progress
            line (JSON) to the progress file every few seconds: bytes of finished files plus partial files
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from typing import Any, Dict, Optional


def _versions() -> Dict[str, Optional[str]]:
    """Installed versions of the hub client and the optional transfer backends (None when absent)."""
    from importlib import metadata  # pylint: disable=import-outside-toplevel
    found: Dict[str, Optional[str]] = {}
    for name in ("huggingface_hub", "hf_xet", "hf_transfer"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def choose_backend(versions: Dict[str, Optional[str]], high_performance: bool) -> Dict[str, str]:
    """Environment that turns on the fastest transfer backend installed, before huggingface_hub is imported.

    huggingface_hub >= 1.0 uses hf_xet by itself for Xet-backed files (HF_XET_HIGH_PERFORMANCE=1 makes it use
    all cores and more memory); older releases need HF_HUB_ENABLE_HF_TRANSFER=1 to use hf_transfer.
    """
    env: Dict[str, str] = {}
    hub = versions.get("huggingface_hub") or "0"
    major = int(hub.split(".")[0]) if hub.split(".")[0].isdigit() else 0
    if major < 1 and versions.get("hf_transfer"):
        env["HF_HUB_ENABLE_HF_TRANSFER"] = "1"
    if versions.get("hf_xet") and high_performance:
        env["HF_XET_HIGH_PERFORMANCE"] = "1"
    return env


def backend_name(versions: Dict[str, Optional[str]], env: Dict[str, str]) -> str:
    """What the result reports as the transfer backend."""
    if env.get("HF_HUB_ENABLE_HF_TRANSFER") == "1":
        return "hf_transfer"
    if versions.get("hf_xet"):
        return "http, hf_xet for Xet-backed files" + (" (high performance)" if env.get("HF_XET_HIGH_PERFORMANCE") else "")
    return "http"


def classify_error(exc: BaseException) -> Dict[str, str]:
    """A short kind and message for the failures an operator can act on (names only; no huggingface_hub import)."""
    name = type(exc).__name__
    names = {cls.__name__ for cls in type(exc).__mro__}
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    if "RevisionNotFoundError" in names:
        return {"kind": "revision", "error": "revision not found on the hub: %s" % text}
    if "GatedRepoError" in names:
        return {"kind": "auth", "error": "gated repository, the token has no access: %s" % text}
    if "RepositoryNotFoundError" in names:
        return {"kind": "auth", "error": "repository not found, or private and the token (model_cache_token) is "
                                         "missing or refused: %s" % text}
    if "ProxyError" in names:
        return {"kind": "network", "error": "proxy error (model_cache_proxy_env): %s" % text}
    if names & {"ConnectError", "ConnectTimeout", "TimeoutException", "ReadTimeout", "ConnectionError",
                "OfflineModeIsEnabled", "LocalEntryNotFoundError"}:
        return {"kind": "network", "error": "cannot reach the hub endpoint: %s: %s" % (name, text)}
    return {"kind": "other", "error": "%s: %s" % (name, text)}


def plan(request: Dict[str, Any]) -> Dict[str, Any]:
    """Commit, revision kind and file listing (sizes, LFS sha256) of a repo revision, from the hub's metadata."""
    from huggingface_hub import HfApi  # pylint: disable=import-outside-toplevel,import-error

    api = HfApi(endpoint=request.get("endpoint") or None, token=request.get("token") or None)
    repo_id, revision = request["repo_id"], request["revision"]
    kind = "commit" if len(revision) == 40 and all(c in "0123456789abcdef" for c in revision) else "unknown"
    if kind != "commit":
        refs = api.list_repo_refs(repo_id)
        if any(ref.name == revision for ref in refs.tags):
            kind = "tag"
        elif any(ref.name == revision for ref in refs.branches):
            kind = "branch"
    info = api.model_info(repo_id, revision=revision, files_metadata=True)
    files: Dict[str, Optional[int]] = {}
    sha256: Dict[str, str] = {}
    for sibling in info.siblings or []:
        files[sibling.rfilename] = sibling.size
        if sibling.lfs is not None:
            sha256[sibling.rfilename] = sibling.lfs.sha256
    return {"commit": info.sha, "kind": kind, "files": files, "sha256": sha256}


class ProgressWriter(threading.Thread):
    """Appends a JSON progress line every ``interval`` seconds while the download runs.

    It measures the disk rather than hooking huggingface_hub's progress bars, so it works the same across
    huggingface_hub releases and backends: finished files are the links that appeared in the snapshot folder,
    bytes are those finished files plus the partial ``*.incomplete`` files in ``blobs/``.
    """

    def __init__(self, path: str, storage: str, commit: str, files: Dict[str, int], interval: float,
                 run_id: str) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.snapshot = os.path.join(storage, "snapshots", commit)
        self.blobs = os.path.join(storage, "blobs")
        self.files = files
        self.interval = interval
        self.run_id = run_id
        self.started = time.time()
        self.previous: Optional[Dict[str, Any]] = None
        self.halt = threading.Event()

    def measure(self) -> Dict[str, int]:
        """Finished files and bytes on disk right now."""
        done_files = 0
        done_bytes = 0
        for rel, size in self.files.items():
            if os.path.isfile(os.path.join(self.snapshot, rel)):
                done_files += 1
                done_bytes += int(size or 0)
        try:
            for name in os.listdir(self.blobs):
                if name.endswith(".incomplete"):
                    try:
                        done_bytes += os.path.getsize(os.path.join(self.blobs, name))
                    except OSError:
                        pass  # finished and moved between listdir and stat
        except OSError:
            pass
        return {"files_done": done_files, "bytes_done": done_bytes}

    def write(self) -> None:
        """Append one progress line."""
        now = time.time()
        counts = self.measure()
        total = sum(int(s or 0) for s in self.files.values())
        record = {"event": "progress", "run_id": self.run_id, "t": round(now, 3),
                  "elapsed_s": round(now - self.started, 1), "files_done": counts["files_done"],
                  "files_total": len(self.files), "bytes_done": min(counts["bytes_done"], total), "bytes_total": total}
        rate = 0.0
        if self.previous is not None and now > self.previous["t"]:
            rate = max(0.0, (record["bytes_done"] - self.previous["bytes_done"]) / (now - self.previous["t"]))
        record["rate_bps"] = int(rate)
        record["eta_s"] = int((total - record["bytes_done"]) / rate) if rate > 0 else None
        self.previous = record
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def run(self) -> None:
        while not self.halt.wait(self.interval):
            try:
                self.write()
            except OSError:
                pass  # a progress line is never worth failing the download


def download(request: Dict[str, Any]) -> Dict[str, Any]:
    """snapshot_download one commit into the cache, writing progress; returns what was fetched."""
    from huggingface_hub import snapshot_download  # pylint: disable=import-outside-toplevel,import-error
    from huggingface_hub.file_download import repo_folder_name  # pylint: disable=import-outside-toplevel,import-error

    repo_id, commit, cache_dir = request["repo_id"], request["commit"], request["cache_dir"]
    storage = os.path.join(cache_dir, repo_folder_name(repo_id=repo_id, repo_type="model"))
    files = {k: int(v or 0) for k, v in request["files"].items()}
    writer = None
    if request.get("progress_file"):
        writer = ProgressWriter(request["progress_file"], storage, commit, files,
                                float(request.get("progress_interval") or 2.0), request.get("run_id", ""))
        writer.write()
        writer.start()
    started = time.time()
    try:
        path = snapshot_download(repo_id, revision=commit, cache_dir=cache_dir,
                                 allow_patterns=request.get("allow_patterns") or None,
                                 token=request.get("token") or None, endpoint=request.get("endpoint") or None,
                                 max_workers=int(request.get("max_workers") or 8))
    finally:
        if writer is not None:
            writer.halt.set()
            writer.join(5)
            writer.write()
    return {"path": path, "elapsed_s": round(time.time() - started, 2)}


def main() -> int:
    """Read the request from stdin, run the command, print one JSON line (also on failure), exit 0/1."""
    os.umask(0o022)  # files 0644, folders 0755: the service user reads what root fetched
    request = json.loads(sys.stdin.read())
    versions = _versions()
    env = choose_backend(versions, bool(request.get("high_performance")))
    os.environ.update(env)
    result: Dict[str, Any] = {"versions": versions, "backend": backend_name(versions, env)}
    if not versions.get("huggingface_hub"):
        result.update({"failed": True, "kind": "missing", "error": "huggingface_hub is not installed in %s" % sys.prefix})
        sys.stdout.write(json.dumps(result) + "\n")
        return 1
    try:
        if request["command"] == "plan":
            result.update(plan(request))
        elif request["command"] == "download":
            result.update(download(request))
        else:
            raise ValueError("unknown command %r" % request["command"])
    except Exception as exc:  # pylint: disable=broad-except  # every failure must come back as JSON
        result.update({"failed": True, "traceback": traceback.format_exc()[-4000:]})
        result.update(classify_error(exc))
        sys.stdout.write(json.dumps(result) + "\n")
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
