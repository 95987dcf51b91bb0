#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache_hub: put one pinned revision of a Hugging Face model into the host's hub cache, verified."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: model_cache_hub
short_description: Fetch a pinned Hugging Face model revision into a local hub cache, with a disk check and progress
version_added: 0.1.0
description:
  - Plans, then (with O(download=true)) fetches the files of one revision of a Hugging Face model repository
    into a hub cache folder (the C(models--org--name/snapshots/<commit>) layout that C(huggingface_hub) and
    SGLang read), using the C(huggingface_hub) installed in the service venv (O(python)), run as a subprocess.
  - Without network when the revision is a commit id that was fetched completely before (a manifest of it is
    kept in O(state_dir)); the files are then only checked (sizes and safetensors headers), nothing is fetched.
  - Otherwise it reads the revision's file listing from the hub (sizes included), compares it with the local
    snapshot, and checks the free disk space against what is missing (or O(declared_size_bytes)) plus
    O(min_free_margin) before anything is fetched, failing with both numbers.
  - Files found damaged (wrong size, a link to a blob that is gone) are named; with O(repair=true) they are
    removed and fetched again, else the module fails.
  - The download appends a JSON progress line to O(progress_file) every O(progress_interval) seconds, so a play
    can run this module with C(async) and show progress with P(gpufleet.sglang.model_cache_progress#module).
  - After the download every file is checked against the hub's listing and every shard named in
    C(model.safetensors.index.json) against its own header; then a manifest of the commit is written.
author:
  - gpufleet maintainers (@gpufleet)
options:
  repo_id:
    description: Repository id, C(org/name).
    type: str
    required: true
  revision:
    description:
      - A commit id (40 hex characters, pinned, the only kind that never moves), a tag, or a branch.
      - A branch is resolved on every run and reported in RV(revision_kind) so the caller can warn.
    type: str
    required: true
  cache_dir:
    description: The hub cache folder (what C(HF_HUB_CACHE) names), e.g. C(/var/lib/sglang/models/hub).
    type: path
    required: true
  state_dir:
    description: Folder for the manifests of completed commits (C(manifests/)).
    type: path
    required: true
  python:
    description: Interpreter of the service venv, where C(huggingface_hub) is installed.
    type: path
    required: true
  token:
    description: Hub token for private or gated repositories. Passed to the venv's Python on stdin, never in argv.
    type: str
  endpoint:
    description: Hub endpoint (C(HF_ENDPOINT)), for a mirror. Empty for the library's default.
    type: str
    default: ""
  allow_patterns:
    description: Only repository files matching one of these C(fnmatch) patterns are fetched.
    type: list
    elements: str
    default: ["*.json", "*.safetensors", "*.model", "*.tiktoken", "*.txt", "*.jinja"]
  declared_size_bytes:
    description:
      - Size of the model to check the free space against instead of the hub's listing (a mirror that does not
        report sizes). 0 uses the listing.
    type: int
    default: 0
  min_free_margin:
    description: Free space to keep beyond the model, C(10%) of what is fetched, or a size like C(20GiB).
    type: str
    default: "10%"
  download:
    description: C(false) plans only (read-only); C(true) fetches what is missing.
    type: bool
    default: false
  repair:
    description: Remove and fetch again files that are damaged in the cache; C(false) fails naming them.
    type: bool
    default: true
  verify_checksums:
    description: After a download, also compare every LFS file's sha256 with the hub's (reads every byte).
    type: bool
    default: false
  max_workers:
    description: Files fetched in parallel.
    type: int
    default: 8
  high_performance:
    description: Set C(HF_XET_HIGH_PERFORMANCE=1) for C(hf_xet) (all cores, more memory) when it is installed.
    type: bool
    default: false
  hf_home:
    description: C(HF_HOME) for the subprocess (where hf_xet keeps its chunk cache). Default the parent of O(cache_dir).
    type: path
  progress_file:
    description: JSON-lines progress file, truncated when a download starts. Default C(<state_dir>/progress/<repo>.jsonl).
    type: path
  progress_interval:
    description: Seconds between progress lines.
    type: float
    default: 2.0
  run_id:
    description: Written into every progress line, so a reader can tell this run's lines from an older file's.
    type: str
    default: ""
  timeout:
    description: Seconds the venv's Python may run for the listing (plan); the download is bounded by C(async).
    type: int
    default: 120
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Plans (which reads the hub's listing) and reports changed when files would be fetched; fetches nothing.
  diff_mode:
    support: full
    details: The diff lists the files that would be (or were) fetched.
  platform:
    platforms: posix
notes:
  - The module itself uses only the target's standard library; C(huggingface_hub) runs in the venv.
  - With huggingface_hub 1.0 and later an interrupted file is fetched again from its start on the next run
    (files already complete are kept); within one run transient errors are retried with HTTP range requests.
seealso:
  - module: gpufleet.sglang.model_cache_progress
  - module: gpufleet.sglang.model_cache_verify
  - name: huggingface_hub, download files
    description: The library call this module runs (snapshot_download).
    link: https://huggingface.co/docs/huggingface_hub/guides/download
"""

EXAMPLES = r"""
- name: Plan (read-only, fails early when the disk is too small)
  gpufleet.sglang.model_cache_hub:
    repo_id: Qwen/Qwen3-0.6B
    revision: c1899de289a04d12100db370d81485cdf75e47ca
    cache_dir: /var/lib/sglang/models/hub
    state_dir: /var/lib/sglang/models/.model_cache
    python: /opt/sglang/venvs/0.5.23/bin/python
    token: "{{ vault_hf_token }}"
  register: plan

- name: Fetch in the background
  gpufleet.sglang.model_cache_hub:
    repo_id: Qwen/Qwen3-0.6B
    revision: "{{ plan.commit }}"
    cache_dir: /var/lib/sglang/models/hub
    state_dir: /var/lib/sglang/models/.model_cache
    python: /opt/sglang/venvs/0.5.23/bin/python
    token: "{{ vault_hf_token }}"
    download: true
  async: 7200
  poll: 0
  when: not plan.complete
"""

RETURN = r"""
complete:
  description: Whether the snapshot holds every listed file, verified, at the end of the call.
  returned: always
  type: bool
commit:
  description: The commit id the revision resolved to.
  returned: always
  type: str
  sample: c1899de289a04d12100db370d81485cdf75e47ca
revision_kind:
  description: C(commit), C(tag), C(branch), or C(unknown) (a ref that is neither, or not asked because offline).
  returned: always
  type: str
snapshot_path:
  description: The folder to give SGLang as C(model_path).
  returned: always
  type: str
files:
  description: Listed files (after O(allow_patterns)) and their sizes.
  returned: always
  type: dict
total_bytes:
  description: Sum of the listed sizes.
  returned: always
  type: int
fetch:
  description: Files that were (or would be) fetched, with sizes.
  returned: always
  type: dict
fetch_bytes:
  description: Bytes that were (or would be) fetched.
  returned: always
  type: int
free_bytes:
  description: Free bytes on the cache's file system when checked.
  returned: always
  type: int
damaged:
  description: Files found damaged in the cache (file, kind, detail); fetched again with O(repair=true).
  returned: always
  type: list
  elements: dict
source:
  description: Where the listing came from, C(manifest) (no network) or C(hub).
  returned: always
  type: str
backend:
  description: Transfer backend of the download.
  returned: when downloaded
  type: str
elapsed_s:
  description: Seconds the download took.
  returned: when downloaded
  type: float
manifest:
  description: Path of the commit's manifest.
  returned: always
  type: str
"""

import json
import os
import subprocess
import time
from typing import Any, Dict, List, Optional

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import hub_helper as helper_module
from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.hub import (
    DEFAULT_ALLOW_PATTERNS,
    filter_patterns,
    is_commit,
    manifest_path,
    plan_fetch,
    read_manifest,
    repo_folder_name,
    snapshot_path,
    write_manifest,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.space import check_space, free_bytes, human_bytes
from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.verify import describe_problems, normalize_modes, verify_model_dir
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import redact


def helper_source() -> str:
    """The helper's source text, read from the module_utils payload (a zip under AnsiballZ)."""
    import inspect  # pylint: disable=import-outside-toplevel
    try:
        return inspect.getsource(helper_module)
    except (OSError, TypeError):
        import pkgutil  # pylint: disable=import-outside-toplevel
        data = pkgutil.get_data(helper_module.__name__.rpartition(".")[0], "hub_helper.py")
        if data is None:
            raise
        return data.decode("utf-8")


class HubCache:
    """One call: plan, and with download=true fetch, verify and record a revision."""

    def __init__(self, module: AnsibleModule) -> None:
        self.module = module
        self.params = module.params
        self.repo_id: str = self.params["repo_id"]
        self.cache_dir: str = self.params["cache_dir"]
        self.state_dir: str = self.params["state_dir"]
        self.patterns: List[str] = list(self.params["allow_patterns"])
        self.token: str = self.params["token"] or ""
        self.listing: Dict[str, int] = {}
        self.sha256: Dict[str, str] = {}
        self.result: Dict[str, Any] = {"changed": False, "complete": False, "commit": "", "revision_kind": "unknown",
                                       "snapshot_path": "", "files": {}, "total_bytes": 0, "fetch": {},
                                       "fetch_bytes": 0, "free_bytes": 0, "damaged": [], "source": "", "manifest": ""}

    # -- the venv's Python ----------------------------------------------------------------------------------------
    def run_helper(self, request: Dict[str, Any], timeout: Optional[int], log_path: Optional[str] = None) -> Dict[str, Any]:
        """Run the helper in the venv with the request on stdin; its JSON answer, or fail naming the cause."""
        python = self.params["python"]
        if not os.access(python, os.X_OK):
            self.fail("the service venv's interpreter %s does not exist: run gpufleet.sglang.sglang_install first, "
                      "or set model_cache_venv" % python)
        script = os.path.join(self.module.tmpdir, "hub_helper.py")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(helper_source())
        env = dict(os.environ)
        env.update({"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "1",
                    "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HOME": self.params["hf_home"] or os.path.dirname(self.cache_dir),
                    "PYTHONUNBUFFERED": "1"})
        for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
            env.pop(name, None)  # the token comes in the request only
        if self.params["endpoint"]:
            env["HF_ENDPOINT"] = self.params["endpoint"]
        request = dict(request, endpoint=self.params["endpoint"], token=self.token, repo_id=self.repo_id)
        log = open(log_path, "w", encoding="utf-8") if log_path else subprocess.PIPE  # pylint: disable=consider-using-with
        try:
            # Not run_command: the request (token included) goes on stdin, stderr streams into a log file the
            # operator can tail during a download, and the listing call needs a timeout.
            done = subprocess.run([python, script], input=json.dumps(request),  # pylint: disable=ansible-bad-function
                                  stdout=subprocess.PIPE, stderr=log, env=env, timeout=timeout, check=False,
                                  universal_newlines=True)
        except subprocess.TimeoutExpired:
            self.fail("the hub listing of %s did not come within %d s (endpoint %s)"
                      % (self.repo_id, timeout or 0, self.params["endpoint"] or "default"))
        finally:
            if log_path:
                log.close()
        lines = [line for line in (done.stdout or "").splitlines() if line.startswith("{")]
        try:
            answer = json.loads(lines[-1])
        except (IndexError, ValueError):
            stderr = done.stderr if not log_path else self.tail(log_path)
            self.fail("the venv's Python (%s) gave no answer (exit %d): %s" % (python, done.returncode,
                                                                               self.clean(stderr or done.stdout)))
        if log_path and answer.get("failed"):
            answer["log_tail"] = self.clean(self.tail(log_path))
        return answer

    @staticmethod
    def tail(path: str, size: int = 3000) -> str:
        """The end of a log file."""
        try:
            with open(path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - size))
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def clean(self, text: str) -> str:
        """Text safe to return: the token and token-looking strings masked."""
        return redact(text or "", [self.token] if self.token else [])

    def fail(self, msg: str, **extra: Any) -> None:
        """fail_json with the result so far; every string passes through redact."""
        result = dict(self.result)
        result.update(extra)
        self.module.fail_json(msg=self.clean(msg), **{k: (self.clean(v) if isinstance(v, str) else v)
                                                      for k, v in result.items() if k != "changed"})

    # -- plan -----------------------------------------------------------------------------------------------------
    def listing_from_manifest(self, commit: str) -> Optional[Dict[str, Any]]:
        """The stored listing of a commit fetched before with the same patterns; None when there is none."""
        manifest = read_manifest(manifest_path(self.state_dir, self.repo_id, commit))
        if manifest is None or manifest.get("allow_patterns") != self.patterns:
            return None
        return manifest

    def cached_commit(self, revision: str) -> Optional[str]:
        """The commit a tag or branch pointed to when it was last fetched (the hub cache's refs/ file)."""
        ref = os.path.join(self.cache_dir, repo_folder_name(self.repo_id), "refs", revision)
        try:
            with open(ref, encoding="utf-8") as handle:
                value = handle.read().strip()
        except OSError:
            return None
        return value if is_commit(value) else None

    def plan(self) -> None:
        """Decide what is missing; fail before any download when it cannot fit."""
        revision = self.params["revision"]
        manifest = self.listing_from_manifest(revision) if is_commit(revision) else None
        if manifest is not None:
            self.result.update(commit=revision, revision_kind="commit", source="manifest")
            listing = {k: int(v) for k, v in manifest["files"].items()}
            sha256 = manifest.get("sha256", {})
        else:
            answer = self.run_helper({"command": "plan", "revision": revision}, self.params["timeout"])
            if answer.get("failed"):
                self.plan_offline(revision, answer)
                return
            self.result.update(commit=answer["commit"], revision_kind=answer["kind"], source="hub",
                               backend=answer.get("backend"), versions=answer.get("versions"))
            if answer["kind"] in ("branch", "unknown"):
                what = "a branch" if answer["kind"] == "branch" else "neither a tag nor a commit id"
                self.module.warn("model_cache_revision %r is %s, not pinned: a later run may fetch another commit. "
                                 "Pin the commit it points to now, %s" % (revision, what, answer["commit"]))
            kept = filter_patterns(sorted(answer["files"]), self.patterns)
            unknown = [name for name in kept if answer["files"][name] is None]
            if unknown and not self.params["declared_size_bytes"]:
                self.module.warn("the hub listing gives no size for %d file(s) (e.g. %s): the disk-space check counts "
                                 "them as 0; set model_cache_declared_size_bytes" % (len(unknown), unknown[0]))
            listing = {name: int(answer["files"][name] or 0) for name in kept}
            sha256 = {k: v for k, v in answer.get("sha256", {}).items() if k in listing}
        self.listing, self.sha256 = listing, sha256
        commit = self.result["commit"]
        root = snapshot_path(self.cache_dir, self.repo_id, commit)
        self.result.update(snapshot_path=root, files=listing, total_bytes=sum(listing.values()),
                           manifest=manifest_path(self.state_dir, self.repo_id, commit))
        if not listing:
            self.fail("no file of %s at %s matches model_cache_allow_patterns %s" % (self.repo_id, revision, self.patterns))
        todo = plan_fetch(listing, root, was_complete=os.path.exists(self.result["manifest"]))
        self.result.update(fetch=todo["fetch"], fetch_bytes=todo["fetch_bytes"], damaged=todo["damaged"])
        if not todo["fetch"]:
            self.finish_if_complete(root, listing)
            return
        if todo["damaged"] and not self.params["repair"]:
            self.fail(describe_problems(todo["damaged"], root) + ". Set model_cache_repair: true to fetch them again.")
        declared = self.params["declared_size_bytes"]
        needed = max(0, declared - todo["present_bytes"]) if declared else todo["fetch_bytes"]
        free = free_bytes(self.cache_dir)
        self.result["free_bytes"] = free
        problem = check_space(needed, free, self.params["min_free_margin"], self.cache_dir,
                              "%s at %s (%s)" % (self.repo_id, commit[:12], "declared size" if declared else "hub listing"))
        if problem:
            self.fail(problem, needed_bytes=needed)

    def plan_offline(self, revision: str, answer: Dict[str, Any]) -> None:
        """The hub could not be asked: serve a complete cached copy of the same revision, else fail with the cause."""
        commit = revision if is_commit(revision) else self.cached_commit(revision)
        manifest = self.listing_from_manifest(commit) if commit and answer.get("kind") == "network" else None
        if manifest is not None:
            root = snapshot_path(self.cache_dir, self.repo_id, commit)
            listing = {k: int(v) for k, v in manifest["files"].items()}
            self.result.update(commit=commit, source="manifest", snapshot_path=root, files=listing,
                               total_bytes=sum(listing.values()), manifest=manifest_path(self.state_dir, self.repo_id, commit))
            self.listing, self.sha256 = listing, manifest.get("sha256", {})
            check = verify_model_dir(root, expected=listing)
            if check["ok"]:
                self.module.warn("the hub could not be reached (%s); %s was cached complete for %s, using it"
                                 % (self.clean(answer.get("error", "")), commit, revision))
                self.result["complete"] = True
                return
        if answer.get("kind") == "missing":
            self.fail(answer["error"] + ": the role installs it (model_cache_hub_package) before this step")
        self.fail("cannot list %s at %s: %s" % (self.repo_id, revision, answer.get("error", "unknown error")),
                  error_kind=answer.get("kind"), helper_traceback=self.clean(answer.get("traceback", "")))

    def finish_if_complete(self, root: str, listing: Dict[str, int]) -> None:
        """Everything listed is present: check shards against their headers and the index, record the manifest."""
        check = verify_model_dir(root, expected=listing)
        if not check["ok"]:
            self.fail(describe_problems(check["problems"], root), problems=check["problems"])
        self.result["complete"] = True
        path = manifest_path(self.state_dir, self.repo_id, self.result["commit"])
        if not self.module.check_mode:
            if self.listing_from_manifest(self.result["commit"]) is None:
                self.record(path)
            self.write_ref()

    def write_ref(self) -> None:
        """Remember which commit a tag or branch named (huggingface_hub's refs/ file), for offline fallbacks."""
        revision, commit = self.params["revision"], self.result["commit"]
        if is_commit(revision) or self.cached_commit(revision) == commit:
            return
        ref = os.path.join(self.cache_dir, repo_folder_name(self.repo_id), "refs", revision)
        os.makedirs(os.path.dirname(ref), mode=0o755, exist_ok=True)
        tmp = "%s.tmp.%d" % (ref, os.getpid())
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(commit)
        os.chmod(tmp, 0o644)
        os.replace(tmp, ref)

    def record(self, path: str) -> None:
        """Write the commit's manifest: the next run needs no network for it."""
        write_manifest(path, {"repo_id": self.repo_id, "revision": self.params["revision"], "commit": self.result["commit"],
                              "allow_patterns": self.patterns, "files": self.listing, "sha256": self.sha256,
                              "completed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})

    # -- download -------------------------------------------------------------------------------------------------
    def progress_path(self) -> str:
        """The progress file (JSON lines) a watcher reads."""
        return self.params["progress_file"] or os.path.join(self.state_dir, "progress", repo_folder_name(self.repo_id) + ".jsonl")

    def append_progress(self, record: Dict[str, Any]) -> None:
        """One line into the progress file."""
        record = dict(record, run_id=self.params["run_id"], t=round(time.time(), 3))
        with open(self.progress_path(), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def remove_damaged(self, root: str) -> None:
        """Delete damaged snapshot entries and the blobs they point to, so the download fetches them again."""
        for problem in self.result["damaged"]:
            path = os.path.join(root, problem["file"])
            target = os.path.realpath(path)
            for victim in sorted({path, target}):
                if os.path.lexists(victim) and victim.startswith(os.path.join(self.cache_dir, "")):
                    os.unlink(victim)

    def download(self) -> None:
        """Fetch what the plan found missing, with progress; verify; record."""
        root = self.result["snapshot_path"]
        progress = self.progress_path()
        os.makedirs(os.path.dirname(progress), mode=0o755, exist_ok=True)
        os.makedirs(self.cache_dir, mode=0o755, exist_ok=True)
        with open(progress, "w", encoding="utf-8"):
            pass
        self.append_progress({"event": "start", "pid": os.getpid(), "repo_id": self.repo_id, "commit": self.result["commit"],
                              "files_total": len(self.listing), "bytes_total": self.result["total_bytes"],
                              "files_fetch": len(self.result["fetch"]), "bytes_fetch": self.result["fetch_bytes"]})
        self.remove_damaged(root)
        started = time.time()
        answer = self.run_helper({"command": "download", "commit": self.result["commit"], "cache_dir": self.cache_dir,
                                  "allow_patterns": self.patterns, "files": self.listing, "progress_file": progress,
                                  "progress_interval": self.params["progress_interval"], "run_id": self.params["run_id"],
                                  "max_workers": self.params["max_workers"],
                                  "high_performance": self.params["high_performance"]},
                                 None, log_path=progress[:-len(".jsonl")] + ".log" if progress.endswith(".jsonl") else progress + ".log")
        self.result.update(backend=answer.get("backend"), versions=answer.get("versions"),
                           elapsed_s=round(time.time() - started, 2), changed=True)
        if answer.get("failed"):
            self.append_progress({"event": "error", "error": self.clean(answer.get("error", ""))})
            self.fail("downloading %s at %s failed: %s" % (self.repo_id, self.result["commit"], answer.get("error")),
                      error_kind=answer.get("kind"), log_tail=answer.get("log_tail", ""),
                      helper_traceback=self.clean(answer.get("traceback", "")))
        check = verify_model_dir(root, expected=self.listing,
                                 checksums=self.sha256 if self.params["verify_checksums"] else None)
        if not check["ok"]:
            self.append_progress({"event": "error", "error": describe_problems(check["problems"], root)})
            self.fail("downloaded, but " + describe_problems(check["problems"], root), problems=check["problems"])
        for folder in (os.path.join(self.cache_dir, repo_folder_name(self.repo_id)),
                       os.path.join(self.cache_dir, ".locks", repo_folder_name(self.repo_id))):
            if os.path.isdir(folder):
                normalize_modes(folder)  # huggingface_hub writes some bookkeeping 0600/0664
        self.record(manifest_path(self.state_dir, self.repo_id, self.result["commit"]))
        self.write_ref()
        self.result["complete"] = True
        seconds = max(self.result["elapsed_s"], 0.001)
        self.append_progress({"event": "done", "files_done": len(self.listing), "files_total": len(self.listing),
                              "bytes_done": self.result["total_bytes"], "bytes_total": self.result["total_bytes"],
                              "elapsed_s": self.result["elapsed_s"]})
        self.result["msg"] = "fetched %d file(s), %s in %.1f s (%s/s)" % (
            len(self.result["fetch"]), human_bytes(self.result["fetch_bytes"]), seconds,
            human_bytes(self.result["fetch_bytes"] / seconds))

    # -- the whole call -------------------------------------------------------------------------------------------
    def run(self) -> Dict[str, Any]:
        """Plan; then download, or report what a download would do."""
        self.plan()
        if self.result["complete"]:
            self.result["msg"] = "%s at %s is complete in the cache (%d files, %s); nothing to fetch" % (
                self.repo_id, self.result["commit"], len(self.result["files"]), human_bytes(self.result["total_bytes"]))
            return self.result
        if self.module._diff:  # pylint: disable=protected-access
            self.result["diff"] = {"before": "", "after": "".join("%s (%s)\n" % (name, human_bytes(size))
                                                                  for name, size in sorted(self.result["fetch"].items())),
                                   "before_header": self.result["snapshot_path"], "after_header": self.result["snapshot_path"]}
        if self.module.check_mode or not self.params["download"]:
            self.result["changed"] = bool(self.module.check_mode)
            self.result["msg"] = "%d file(s) to fetch, %s of %s" % (len(self.result["fetch"]),
                                                                    human_bytes(self.result["fetch_bytes"]),
                                                                    human_bytes(self.result["total_bytes"]))
            return self.result
        self.download()
        return self.result


def build_module() -> AnsibleModule:
    """The module with its argument spec (a function so unit tests can build it)."""
    return AnsibleModule(
        argument_spec=dict(
            repo_id=dict(type="str", required=True),
            revision=dict(type="str", required=True),
            cache_dir=dict(type="path", required=True),
            state_dir=dict(type="path", required=True),
            python=dict(type="path", required=True),
            token=dict(type="str", no_log=True),
            endpoint=dict(type="str", default=""),
            allow_patterns=dict(type="list", elements="str", default=list(DEFAULT_ALLOW_PATTERNS)),
            declared_size_bytes=dict(type="int", default=0),
            min_free_margin=dict(type="str", default="10%"),
            download=dict(type="bool", default=False),
            repair=dict(type="bool", default=True),
            verify_checksums=dict(type="bool", default=False),
            max_workers=dict(type="int", default=8),
            high_performance=dict(type="bool", default=False),
            hf_home=dict(type="path"),
            progress_file=dict(type="path"),
            progress_interval=dict(type="float", default=2.0),
            run_id=dict(type="str", default=""),
            timeout=dict(type="int", default=120),
        ),
        supports_check_mode=True,
    )


def main() -> None:
    """Entry point."""
    module = build_module()
    if module.params["repo_id"].count("/") != 1:
        module.fail_json(msg="repo_id must be org/name, got %r" % module.params["repo_id"])
    cache = HubCache(module)
    module.exit_json(**cache.run())


if __name__ == "__main__":
    main()
