# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache/hub: commit ids, cache folder names, allow/ignore patterns, the fetch plan and manifests, exactly."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import hub

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("revision, expected", [
    (COMMIT, True), ("f" * 40, True), (COMMIT[:-1], False), (COMMIT + "0", False), (COMMIT.upper(), False),
    ("g" * 40, False), (" " + COMMIT[1:], False), ("main", False), ("", False), (None, False),
])
def test_is_commit(revision, expected):
    """Only a full 40-digit lowercase hex id is a commit."""
    assert hub.is_commit(revision) is expected


def test_cache_names_and_paths():
    """huggingface_hub's cache layout: <type>s--org--name/snapshots/<commit>."""
    assert hub.repo_folder_name("Qwen/Qwen3-0.6B") == "models--Qwen--Qwen3-0.6B"
    assert hub.repo_folder_name("gpt2") == "models--gpt2"
    assert hub.repo_folder_name("org/data", "dataset") == "datasets--org--data"
    assert hub.snapshot_path("/c", "org/m", COMMIT) == "/c/models--org--m/snapshots/" + COMMIT
    assert hub.manifest_path("/s", "org/m", COMMIT) == "/s/manifests/models--org--m--%s.json" % COMMIT


def test_each_default_allow_pattern_keeps_its_kind_of_file():
    """Weights, configs, tokenizers and chat templates are fetched; nothing else by default."""
    paths = ["c.json", "w.safetensors", "t.model", "q.tiktoken", "merges.txt", "chat.jinja", "w.bin", "w.pth",
             "README.md", "a.py", "json", "x.json.lock"]
    assert hub.filter_patterns(paths, hub.DEFAULT_ALLOW_PATTERNS) == [
        "c.json", "w.safetensors", "t.model", "q.tiktoken", "merges.txt", "chat.jinja"]


def test_allow_and_ignore_patterns():
    """None allows everything, an empty list nothing; ignore wins over allow; a trailing '/' is a whole folder."""
    paths = ["config.json", "original/params.json", "original/x.pth", "sub/original/y.json"]
    assert hub.filter_patterns(paths, None) == paths
    assert hub.filter_patterns(paths, []) == []
    assert hub.filter_patterns(paths, None, []) == paths
    assert hub.filter_patterns(paths, ["*.json"], ["original/"]) == ["config.json", "sub/original/y.json"]
    assert hub.filter_patterns(paths, ["original/"]) == ["original/params.json", "original/x.pth"]
    assert hub.filter_patterns(paths, ["config.json"], ["*.pth"]) == ["config.json"]


def write(path, size):
    """A file of ``size`` bytes."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(b"x" * size)


def test_plan_fetch_exact(tmp_path):
    """Present with the listed size: kept; missing, short or long: fetched; short and long are damage."""
    root = str(tmp_path)
    write(os.path.join(root, "ok.json"), 5)
    write(os.path.join(root, "sub/short.safetensors"), 3)
    write(os.path.join(root, "long.txt"), 7)
    write(os.path.join(root, "unsized.txt"), 2)
    listing = {"ok.json": 5, "sub/short.safetensors": 5, "long.txt": 5, "missing.model": 11, "unsized.txt": None}
    assert hub.plan_fetch(listing, root) == {
        "present": {"ok.json": 5, "unsized.txt": 2},
        "fetch": {"long.txt": 5, "missing.model": 11, "sub/short.safetensors": 5},
        "damaged": [{"file": "long.txt", "kind": "size", "detail": "wrong size: 7 of 5 bytes"},
                    {"file": "sub/short.safetensors", "kind": "truncated", "detail": "truncated: 3 of 5 bytes"}],
        "present_bytes": 7, "fetch_bytes": 21}


def test_plan_fetch_reports_missing_files_only_after_a_complete_fetch_or_as_dangling_links(tmp_path):
    """A plain missing file is damage only when the snapshot was complete once; a dangling link always is."""
    root = str(tmp_path)
    os.symlink("../../blobs/gone", os.path.join(root, "linked.json"))
    listing = {"linked.json": 4, "never.json": 6}
    assert hub.plan_fetch(listing, root)["damaged"] == [
        {"file": "linked.json", "kind": "missing", "detail": "missing: a link to ../../blobs/gone that does not exist"}]
    assert hub.plan_fetch(listing, root, was_complete=True)["damaged"] == [
        {"file": "linked.json", "kind": "missing", "detail": "missing: a link to ../../blobs/gone that does not exist"},
        {"file": "never.json", "kind": "missing", "detail": "missing"}]
    plan = hub.plan_fetch({"never.json": "6"}, root)
    assert (plan["fetch"], plan["fetch_bytes"], plan["present_bytes"]) == ({"never.json": 6}, 6, 0)


@pytest.mark.parametrize("content", [None, b"not json", b"\xff\xfe", b"[1]", b'{"commit": "x"}', b'{"files": []}'])
def test_read_manifest_refuses_what_is_not_one(tmp_path, content):
    """Absent, unreadable, not an object, or without a files mapping: None (the listing is asked again)."""
    path = tmp_path / "m.json"
    if content is not None:
        path.write_bytes(content)
    assert hub.read_manifest(str(path)) is None


def test_write_manifest_exact_bytes_and_mode(tmp_path):
    """Sorted keys, two-space indent, a final newline, mode 0644, folders made, no temporary file left."""
    path = str(tmp_path / "state" / "manifests" / "m.json")
    old_umask = os.umask(0o022)
    try:
        hub.write_manifest(path, {"files": {"b": 2, "a": 1}, "commit": COMMIT})
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o755
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert text == '{\n  "commit": "%s",\n  "files": {\n    "a": 1,\n    "b": 2\n  }\n}\n' % COMMIT
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert sorted(os.listdir(os.path.dirname(path))) == ["m.json"]
    assert hub.read_manifest(path) == json.loads(text)
    hub.write_manifest(path, {"files": {}})  # replacing an existing manifest
    assert hub.read_manifest(path) == {"files": {}}
