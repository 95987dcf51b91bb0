# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for the launch's file state: digests, the last-good manifest, changed files, snapshot save and restore."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import (
    MANIFEST,
    SnapshotError,
    SwapError,
    changed_files,
    current_state,
    file_digest,
    files_checksum,
    load_manifest,
    pending_swaps,
    restore_snapshot,
    save_snapshot,
    snapshot_exists,
    snapshot_problems,
    swap_in,
)

CONFIG = b"model_path: /srv/models/Qwen3-8B\nport: 30000\napi_key: sk-gpufleet-9d8c7b6a5f4e3d2c1b0a\n"
ENV = b"NCCL_P2P_DISABLE=1\n"


def _sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def launch(tmp_path):
    """Three launch files: a config (0640), an env file (0644) and a tuning env file that does not exist yet."""
    etc = tmp_path / "etc"
    etc.mkdir()
    config, env, tuning = etc / "main.yaml", etc / "main.env", etc / "gpu-tuning.env"
    config.write_bytes(CONFIG)
    config.chmod(0o640)
    env.write_bytes(ENV)
    env.chmod(0o644)
    paths = [str(config), str(env), str(tuning)]
    return paths, str(tmp_path / "state" / "last-good")


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


# ------------------------------------------------------------------------------------------------ digests
def test_file_digest_is_the_sha256_of_the_bytes_or_none(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert file_digest(str(path)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert file_digest(str(tmp_path / "missing")) is None


def test_current_state_maps_every_path(launch):
    paths = launch[0]
    assert current_state(paths) == {paths[0]: _sha(CONFIG), paths[1]: _sha(ENV), paths[2]: None}


# ------------------------------------------------------------------------------------------------ manifest
def test_load_manifest_is_none_without_a_good_launch(tmp_path):
    assert load_manifest(str(tmp_path / "never")) is None


@pytest.mark.parametrize("content", ["{not json", "[]", '{"files": []}', '{"ready_at": 1}'], ids=["broken", "list", "files-list", "no-files"])
def test_load_manifest_is_none_for_an_unusable_manifest(tmp_path, content):
    (tmp_path / MANIFEST).write_text(content)
    assert load_manifest(str(tmp_path)) is None


def test_changed_files_without_a_manifest_is_every_file(launch):
    paths = launch[0]
    assert changed_files(current_state(paths), None) == sorted(paths)


def test_changed_files_after_save_is_empty_then_names_exactly_what_changed(launch):
    paths, snap = launch
    manifest = save_snapshot(snap, paths)
    assert changed_files(current_state(paths), manifest) == []
    assert changed_files(current_state(paths), load_manifest(snap)) == []

    with open(paths[1], "ab") as handle:
        handle.write(b"NCCL_IB_DISABLE=1\n")
    assert changed_files(current_state(paths), manifest) == [paths[1]]

    with open(paths[2], "wb") as handle:  # absent at the last good launch, present now
        handle.write(b"X=1\n")
    os.unlink(paths[0])  # present at the last good launch, gone now
    assert changed_files(current_state(paths), manifest) == sorted(paths)


def test_changed_files_counts_a_file_dropped_from_the_list(launch):
    paths, snap = launch
    manifest = save_snapshot(snap, paths)
    assert changed_files(current_state(paths[:2]), manifest) == []  # the dropped file was absent: nothing differs
    assert changed_files(current_state(paths[1:]), manifest) == [paths[0]]


# ------------------------------------------------------------------------------------------------ save
def test_save_snapshot_copies_the_files_with_digest_mode_and_owner(launch):
    paths, snap = launch
    manifest = save_snapshot(snap, paths, {"ready_at": 1764493405.5, "unit": "sglang-main.service"})
    assert manifest["ready_at"] == 1764493405.5 and manifest["unit"] == "sglang-main.service"
    assert manifest["files"][paths[2]] is None
    for path, data, mode in ((paths[0], CONFIG, 0o640), (paths[1], ENV, 0o644)):
        entry = manifest["files"][path]
        assert entry["sha256"] == _sha(data) and entry["mode"] == mode
        assert (entry["uid"], entry["gid"]) == (os.stat(path).st_uid, os.stat(path).st_gid)
        assert _read(os.path.join(snap, entry["stored"])) == data
    assert load_manifest(snap) == json.loads(json.dumps(manifest))
    assert _mode(snap) == 0o700  # the snapshot holds the config with its secrets


def test_save_snapshot_keeps_files_with_the_same_name_apart(tmp_path):
    one, two = tmp_path / "a", tmp_path / "b"
    one.mkdir()
    two.mkdir()
    (one / "x.env").write_bytes(b"A=1\n")
    (two / "x.env").write_bytes(b"B=2\n")
    snap = str(tmp_path / "snap")
    manifest = save_snapshot(snap, [str(one / "x.env"), str(two / "x.env")])
    stored = [manifest["files"][str(d / "x.env")]["stored"] for d in (one, two)]
    assert len(set(stored)) == 2
    assert [_read(os.path.join(snap, name)) for name in stored] == [b"A=1\n", b"B=2\n"]


def test_save_snapshot_replaces_the_previous_one_whole_and_leaves_nothing_behind(launch):
    paths, snap = launch
    save_snapshot(snap, paths, {"ready_at": 1.0})
    with open(paths[0], "wb") as handle:
        handle.write(b"model_path: /srv/models/other\n")
    manifest = save_snapshot(snap, paths[:1], {"ready_at": 2.0})
    assert load_manifest(snap) == manifest and manifest["ready_at"] == 2.0
    assert sorted(manifest["files"]) == [paths[0]]
    assert sorted(os.listdir(snap)) == sorted([MANIFEST, manifest["files"][paths[0]]["stored"]])
    assert os.listdir(os.path.dirname(snap)) == ["last-good"]  # no staging folder, no .old copy


# ------------------------------------------------------------------------------------------------ restore
def test_restore_snapshot_puts_back_content_mode_and_absence(launch):
    paths, snap = launch
    config, env, tuning = paths
    manifest = save_snapshot(snap, paths)
    env_inode = os.stat(env).st_ino

    with open(config, "wb") as handle:
        handle.write(b"model_path: /srv/models/broken\n")
    os.chmod(config, 0o644)
    with open(tuning, "wb") as handle:
        handle.write(b"NCCL_P2P_LEVEL=SYS\n")

    restored = restore_snapshot(snap, load_manifest(snap))
    assert restored == sorted([config, tuning])
    assert _read(config) == CONFIG
    assert _mode(config) == 0o640
    assert (os.stat(config).st_uid, os.stat(config).st_gid) == (manifest["files"][config]["uid"], manifest["files"][config]["gid"])
    assert not os.path.exists(tuning)  # it did not exist at the last good launch
    assert os.stat(env).st_ino == env_inode  # unchanged files are not rewritten
    assert changed_files(current_state(paths), manifest) == []
    assert sorted(os.listdir(os.path.dirname(config))) == ["main.env", "main.yaml"]  # no temporary file left


def test_restore_snapshot_recreates_a_deleted_file_and_is_a_no_op_when_nothing_changed(launch):
    paths, snap = launch
    manifest = save_snapshot(snap, paths)
    assert restore_snapshot(snap, manifest) == []
    os.unlink(paths[1])
    assert restore_snapshot(snap, manifest) == [paths[1]]
    assert _read(paths[1]) == ENV
    assert _mode(paths[1]) == 0o644


def test_restore_snapshot_replaces_atomically(launch):
    """The file is swapped by rename: a reader holding the old file sees the old bytes whole, never a mix."""
    paths, snap = launch
    save_snapshot(snap, paths)
    with open(paths[0], "wb") as handle:
        handle.write(b"broken: true\n")
    with open(paths[0], "rb") as reader:
        restore_snapshot(snap, load_manifest(snap))
        assert reader.read() == b"broken: true\n"
    assert _read(paths[0]) == CONFIG


# ------------------------------------------------------------------------------------------------ verification
def test_a_fresh_snapshot_verifies_and_its_manifest_carries_checksums(launch):
    paths, snap = launch
    manifest = save_snapshot(snap, paths)
    assert snapshot_problems(snap) == []
    assert manifest["files_sha256"] == files_checksum(manifest["files"]) and manifest["format"] == 2


def test_no_snapshot_at_all_is_not_a_problem(tmp_path):
    assert snapshot_problems(str(tmp_path / "last-good")) == [] and not snapshot_exists(str(tmp_path / "last-good"))


@pytest.mark.parametrize("damage, words", [
    ("copy", "the stored copy of {config} differs from its checksum"),
    ("missing", "the stored copy of {config} is missing"),
    ("manifest", "manifest.json cannot be read"),
    ("no-manifest", "the snapshot has no manifest.json"),
    ("list", "manifest.json: its file list does not match its checksum (edited or damaged)"),
])
def test_each_kind_of_damage_is_named(launch, damage, words):
    paths, snap = launch
    manifest = save_snapshot(snap, paths)
    stored = os.path.join(snap, manifest["files"][paths[0]]["stored"])
    if damage == "copy":
        with open(stored, "ab") as handle:
            handle.write(b"# half a write\n")
    elif damage == "missing":
        os.unlink(stored)
    elif damage == "manifest":
        with open(os.path.join(snap, MANIFEST), "w", encoding="utf-8") as handle:
            handle.write('{"files": {')
    elif damage == "no-manifest":
        os.unlink(os.path.join(snap, MANIFEST))
    else:
        manifest["files"][paths[0]]["mode"] = 0o4777  # a restore would put this mode back
        with open(os.path.join(snap, MANIFEST), "w", encoding="utf-8") as handle:
            json.dump(manifest, handle)
    problems = snapshot_problems(snap)
    assert len(problems) == 1 and problems[0].startswith(words.format(config=paths[0]))


def test_restore_checks_every_copy_first_and_puts_nothing_back_on_a_mismatch(launch):
    paths, snap = launch
    manifest = save_snapshot(snap, paths)
    with open(paths[0], "wb") as handle:
        handle.write(b"port: 1\n")
    with open(paths[1], "wb") as handle:
        handle.write(b"X=1\n")
    with open(os.path.join(snap, manifest["files"][paths[1]]["stored"]), "wb") as handle:
        handle.write(b"damaged\n")
    with pytest.raises(SnapshotError, match="the stored copy of %s" % paths[1]):
        restore_snapshot(snap, manifest)
    with open(paths[0], "rb") as handle:
        assert handle.read() == b"port: 1\n"  # not even the good copy was put back: half a restore is a config nobody chose


# ------------------------------------------------------------------------------------------------ staged swap
@pytest.fixture
def staged(tmp_path):
    """Live files and their staged copies: the config changes, the env file does not, the unit is new."""
    live, stage = tmp_path / "etc", tmp_path / "staged"
    live.mkdir()
    stage.mkdir()
    (live / "main.yaml").write_bytes(CONFIG)
    (live / "main.env").write_bytes(ENV)
    (stage / "main.yaml").write_bytes(CONFIG.replace(b"30000", b"30001"))
    (stage / "main.env").write_bytes(ENV)
    (stage / "unit.service").write_bytes(b"[Service]\n")
    for path in (live / "main.yaml", live / "main.env", stage / "main.yaml", stage / "main.env", stage / "unit.service"):
        path.chmod(0o640)
    return [(str(stage / name), str(live / live_name)) for name, live_name in
            (("main.yaml", "main.yaml"), ("main.env", "main.env"), ("unit.service", "unit.service"))]


def test_pending_swaps_are_the_copies_that_differ_from_their_live_file(staged):
    assert pending_swaps(staged) == [staged[0], staged[2]]
    os.chmod(staged[1][1], 0o644)  # the same bytes, another mode: it differs too
    assert pending_swaps(staged) == staged


def test_a_missing_staged_copy_is_an_error_before_anything_is_put_in_place(staged):
    os.unlink(staged[2][0])
    with pytest.raises(SwapError, match="is missing; nothing was put in place"):
        pending_swaps(staged)


def test_swap_in_puts_the_whole_set_in_place_with_mode_and_keeps_the_staged_copies(staged):
    written = swap_in(pending_swaps(staged))
    assert written == [staged[0][1], staged[2][1]]
    for src, dest in staged:
        assert _read(src) == _read(dest) and _mode(dest) == 0o640
    assert pending_swaps(staged) == []  # a second run finds nothing to write
    assert sorted(os.listdir(os.path.dirname(staged[0][1]))) == ["main.env", "main.yaml", "unit.service"]  # no temporaries left


def test_a_failed_rename_puts_back_what_was_already_swapped(staged, monkeypatch):
    real = os.replace

    def refuse_the_unit(src, dest):
        if str(dest).endswith("unit.service"):
            raise PermissionError(1, "Operation not permitted")
        return real(src, dest)
    monkeypatch.setattr(os, "replace", refuse_the_unit)
    with pytest.raises(SwapError, match="cannot put .*unit.service in place: .*Operation not permitted; the files put in place "
                                        "before it were put back"):
        swap_in(pending_swaps(staged))
    assert _read(staged[0][1]) == CONFIG and not os.path.exists(staged[2][1])  # the old set, whole
    assert sorted(os.listdir(os.path.dirname(staged[0][1]))) == ["main.env", "main.yaml"]


def test_a_failed_staging_write_leaves_the_live_files_untouched(staged, monkeypatch):
    def full_disk(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(shutil, "copyfile", full_disk)
    with pytest.raises(SwapError, match="cannot stage .*No space left on device; nothing was put in place"):
        swap_in(pending_swaps(staged))
    assert _read(staged[0][1]) == CONFIG and sorted(os.listdir(os.path.dirname(staged[0][1]))) == ["main.env", "main.yaml"]
