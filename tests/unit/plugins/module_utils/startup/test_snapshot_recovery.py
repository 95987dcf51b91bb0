# -*- coding: utf-8 -*-
"""startup.snapshot: a crash between the two renames that replace the last good snapshot leaves it only as
``<dir>.old``; recover_snapshot puts it back, and never takes a leftover over a snapshot that is in place."""

from __future__ import annotations

import os

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import (
    load_manifest, promote_snapshot, recover_snapshot, save_snapshot)


def config(tmp_path, text):
    path = tmp_path / "main.yaml"
    path.write_text(text)
    return str(path)


def test_a_snapshot_left_only_as_old_comes_back(tmp_path):
    snapshot_dir = str(tmp_path / "state" / "last-good")
    good = save_snapshot(snapshot_dir, [config(tmp_path, "good")])
    os.rename(snapshot_dir, snapshot_dir + ".old")  # the crash: the first rename done, the second not
    assert load_manifest(snapshot_dir) is None
    assert recover_snapshot(snapshot_dir) is True
    assert load_manifest(snapshot_dir)["files"] == good["files"]
    assert not os.path.exists(snapshot_dir + ".old")
    assert recover_snapshot(snapshot_dir) is False


def test_a_leftover_old_never_replaces_the_snapshot_in_place(tmp_path):
    snapshot_dir = str(tmp_path / "state" / "last-good")
    save_snapshot(snapshot_dir, [config(tmp_path, "old")])
    os.rename(snapshot_dir, snapshot_dir + ".old")
    newer = save_snapshot(snapshot_dir + ".pending", [config(tmp_path, "new")])
    os.rename(snapshot_dir + ".pending", snapshot_dir)  # the crash: both renames done, .old not yet removed
    assert recover_snapshot(snapshot_dir) is False
    assert load_manifest(snapshot_dir)["files"] == newer["files"]
    assert os.path.isdir(snapshot_dir + ".old")


def test_nothing_to_recover_without_a_snapshot_or_with_a_file_named_old(tmp_path):
    snapshot_dir = str(tmp_path / "last-good")
    assert recover_snapshot(snapshot_dir) is False
    (tmp_path / "last-good.old").write_text("not a folder")
    assert recover_snapshot(snapshot_dir) is False
    assert not os.path.exists(snapshot_dir)


def test_promote_and_save_leave_no_old_behind(tmp_path):
    snapshot_dir = str(tmp_path / "last-good")
    save_snapshot(snapshot_dir, [config(tmp_path, "one")])
    save_snapshot(snapshot_dir, [config(tmp_path, "two")])
    assert not os.path.exists(snapshot_dir + ".old")
    pending = save_snapshot(str(tmp_path / "pending"), [config(tmp_path, "three")])
    promote_snapshot(str(tmp_path / "pending"), snapshot_dir)
    assert load_manifest(snapshot_dir)["files"] == pending["files"]
    assert not os.path.exists(snapshot_dir + ".old") and not os.path.exists(str(tmp_path / "pending"))
