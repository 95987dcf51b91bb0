# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hub revisions, cache layout, the fetch plan, and the manifest of a complete fetch.

Why: a revision must be pinned to a commit for "fetched once" to mean anything, and the plan says what is
missing before a byte moves, so "nothing to do" costs a listing, not a download.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.verify import Problem, describe_absent, file_present

DEFAULT_ALLOW_PATTERNS = ("*.json", "*.safetensors", "*.model", "*.tiktoken", "*.txt", "*.jinja")
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")


# ---------------------------------------------------------------------------------------------------------------
# Hub listing
# ---------------------------------------------------------------------------------------------------------------

def is_commit(revision: str) -> bool:
    """A full 40-hex commit id, the only revision that can never move."""
    return bool(COMMIT_RE.match(revision or ""))


def repo_folder_name(repo_id: str, repo_type: str = "model") -> str:
    """The hub cache's folder for a repo (huggingface_hub's repo_folder_name): models--org--name."""
    return "--".join([repo_type + "s"] + repo_id.split("/"))


def snapshot_path(cache_dir: str, repo_id: str, commit: str) -> str:
    """Where a commit's files appear in the hub cache (links into blobs/)."""
    return os.path.join(cache_dir, repo_folder_name(repo_id), "snapshots", commit)


def filter_patterns(paths: Iterable[str], allow: Optional[Sequence[str]], ignore: Optional[Sequence[str]] = None) -> List[str]:
    """Keep the paths huggingface_hub's filter_repo_objects keeps: fnmatch, a trailing '/' means the whole folder."""
    def norm(patterns: Optional[Sequence[str]]) -> Optional[List[str]]:
        if patterns is None:
            return None
        return [p + "*" if p.endswith("/") else p for p in patterns]

    allow_n, ignore_n = norm(allow), norm(ignore)
    kept = []
    for path in paths:
        if allow_n is not None and not any(fnmatch.fnmatch(path, p) for p in allow_n):
            continue
        if ignore_n is not None and any(fnmatch.fnmatch(path, p) for p in ignore_n):
            continue
        kept.append(path)
    return kept


def plan_fetch(listing: Mapping[str, int], root: str, was_complete: bool = False) -> Dict[str, Any]:
    """Compare the hub's listing (already filtered) with the local snapshot: what is there, what must be fetched.

    Files present with the listed size are kept; missing ones and ones of the wrong size go to ``fetch``.
    Files of the wrong size, links whose blob is gone, and (when the snapshot ``was_complete`` once, i.e. a
    manifest of it exists) plain missing files are also reported as ``damaged``: something removed or cut them
    after a complete fetch, and the operator should hear about it even when they are fetched again.
    """
    present: Dict[str, int] = {}
    fetch: Dict[str, int] = {}
    damaged: List[Problem] = []
    for rel, size in sorted(listing.items()):
        path = os.path.join(root, rel)
        if not file_present(path):
            fetch[rel] = int(size)
            if os.path.islink(path) or was_complete:
                damaged.append(Problem(rel, "missing", describe_absent(root, rel)))
            continue
        actual = os.path.getsize(path)
        if size is not None and actual != int(size):
            fetch[rel] = int(size)
            kind = "truncated" if actual < int(size) else "size"
            label = "truncated" if kind == "truncated" else "wrong size"
            damaged.append(Problem(rel, kind, "%s: %d of %d bytes" % (label, actual, int(size))))
            continue
        present[rel] = actual
    return {"present": present, "fetch": fetch, "damaged": damaged,
            "present_bytes": sum(present.values()), "fetch_bytes": sum(fetch.values())}


# ---------------------------------------------------------------------------------------------------------------
# Manifests: what a complete fetch of one commit looked like
# ---------------------------------------------------------------------------------------------------------------

def manifest_path(state_dir: str, repo_id: str, commit: str) -> str:
    """Where the listing of a completed commit is kept (beside the hub cache, never inside a snapshot)."""
    return os.path.join(state_dir, "manifests", "%s--%s.json" % (repo_folder_name(repo_id), commit))


def read_manifest(path: str) -> Optional[Dict[str, Any]]:
    """The manifest, or None when absent or unreadable (then the hub's listing is asked for again)."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return None
    return data


def write_manifest(path: str, data: Mapping[str, Any]) -> None:
    """Write atomically (temp file + rename), readable by all: a half-written manifest must never exist."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o755, exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
