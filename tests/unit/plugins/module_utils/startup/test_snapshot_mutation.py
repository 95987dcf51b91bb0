# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""startup/snapshot, the exact words and values: each damage's message, owner and mode put back, the pending
snapshot's promotion and discard, where the temporary copies are made, and the probe figures a launch keeps."""

from __future__ import annotations

import json
import os
import stat
import tempfile

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup import snapshot
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import (
    SnapshotError, SwapError, discard_snapshot, files_checksum, pending_swaps, probe_figures, promote_snapshot, restore_snapshot,
    save_snapshot, snapshot_problems, swap_in)

OWNER = 4321  # neither root nor the test's user: a restored owner that is not the default shows


def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def _write(path, data):
    with open(path, "wb") as handle:
        handle.write(data)


def _manifest(snap, data):
    os.makedirs(snap, exist_ok=True)
    with open(os.path.join(snap, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(data, handle)


# ------------------------------------------------------------------------------------------------ the file list's checksum
def test_the_file_list_checksum_is_that_of_its_canonical_json():
    # a manifest of format 2 written by any earlier run must still verify: the checksum is the sha256 of
    # {"/etc/sglang/gpu-tuning.env":null,"/etc/sglang/main.yaml":{"gid":0,"mode":416,"sha256":"ab12","stored":"00-main.yaml","uid":0}}
    files = {"/etc/sglang/main.yaml": {"uid": 0, "stored": "00-main.yaml", "sha256": "ab12", "mode": 416, "gid": 0},
             "/etc/sglang/gpu-tuning.env": None}
    assert files_checksum(files) == "4ff009671d99ecb256ccbcf9dfaf217afa71fd747e11a07ddccc909cf1d2340c"


# ------------------------------------------------------------------------------------------------ the problems in words
@pytest.mark.parametrize("data", [[], ["files"], {"ready_at": 1}, {"files": []}, {"files": None}],
                         ids=["list", "list-of-names", "no-files", "files-list", "files-null"])
def test_a_manifest_without_a_file_list_says_so(tmp_path, data):
    snap = str(tmp_path / "last-good")
    _manifest(snap, data)
    assert snapshot_problems(snap) == ["manifest.json has no file list"]


@pytest.mark.parametrize("entry", ["00-main.yaml", ["00-main.yaml"], {"stored": "00-main.yaml"}, {"sha256": "ab"},
                                   {"stored": 1, "sha256": "ab"}, {"stored": "00-main.yaml", "sha256": None}],
                         ids=["text", "list", "no-sha", "no-stored", "stored-number", "sha-null"])
def test_a_damaged_entry_is_named_and_the_next_entries_are_still_checked(tmp_path, entry):
    snap = str(tmp_path / "last-good")
    _manifest(snap, {"files": {"/etc/a.yaml": entry, "/etc/b.env": {"stored": "01-b.env", "sha256": "ab"},
                               "/etc/c.env": None}})
    assert snapshot_problems(snap) == ["manifest.json: the entry of /etc/a.yaml is damaged", "the stored copy of /etc/b.env is missing"]


def test_a_damaged_copy_stops_a_restore_with_its_name(tmp_path):
    snap = str(tmp_path / "last-good")
    _manifest(snap, {"files": {}})
    manifest = {"files": {"/etc/a.yaml": {"stored": "00-a.yaml", "sha256": "ab"}}}
    with pytest.raises(SnapshotError) as raised:
        restore_snapshot(snap, manifest)
    assert str(raised.value) == "the stored copy of /etc/a.yaml is missing or differs from its checksum"


# ------------------------------------------------------------------------------------------------ save
def test_the_folder_that_holds_the_snapshot_is_made_private(tmp_path):
    old = os.umask(0o022)
    try:
        src = tmp_path / "main.yaml"
        src.write_bytes(b"port: 30000\n")
        snap = tmp_path / "state" / "nested" / "last-good"
        save_snapshot(str(snap), [str(src)])
    finally:
        os.umask(old)
    assert _mode(tmp_path / "state" / "nested") == 0o700  # the folder that holds the snapshots: configs carry secrets
    assert _mode(snap) == 0o700


def test_a_missing_file_is_recorded_and_the_files_after_it_are_still_copied(tmp_path):
    present = tmp_path / "main.yaml"
    present.write_bytes(b"port: 30000\n")
    snap = str(tmp_path / "last-good")
    manifest = save_snapshot(snap, [str(tmp_path / "gpu-tuning.env"), str(present)])
    assert manifest["files"][str(tmp_path / "gpu-tuning.env")] is None
    entry = manifest["files"][str(present)]
    assert _read(os.path.join(snap, entry["stored"])) == b"port: 30000\n"
    assert snapshot_problems(snap) == []


def test_a_stale_old_folder_from_an_interrupted_save_is_removed(tmp_path):
    src = tmp_path / "main.yaml"
    src.write_bytes(b"port: 30000\n")
    snap = str(tmp_path / "last-good")
    save_snapshot(snap, [str(src)])
    os.makedirs(snap + ".old")
    _write(os.path.join(snap + ".old", "manifest.json"), b"{}")
    save_snapshot(snap, [str(src)])
    assert sorted(os.listdir(str(tmp_path))) == ["last-good", "main.yaml"]


# ------------------------------------------------------------------------------------------------ promote and discard
def _snapshot(tmp_path, name, data):
    src = tmp_path / ("%s.yaml" % name)
    src.write_bytes(data)
    return save_snapshot(str(tmp_path / "state" / name), [str(src)], {"name": name})


def test_promote_makes_the_pending_snapshot_the_last_good_one_and_leaves_nothing_else(tmp_path):
    _snapshot(tmp_path, "last-good", b"port: 1\n")
    pending = _snapshot(tmp_path, "pending", b"port: 2\n")
    state = tmp_path / "state"
    os.makedirs(str(state / "last-good.old"))  # one an interrupted promotion left
    promote_snapshot(str(state / "pending"), str(state / "last-good"))
    assert sorted(os.listdir(str(state))) == ["last-good"]
    with open(str(state / "last-good" / "manifest.json"), encoding="utf-8") as handle:
        assert json.load(handle) == json.loads(json.dumps(pending))


def test_promote_without_a_last_good_one(tmp_path):
    pending = _snapshot(tmp_path, "pending", b"port: 2\n")
    state = tmp_path / "state"
    promote_snapshot(str(state / "pending"), str(state / "last-good"))
    assert sorted(os.listdir(str(state))) == ["last-good"]
    with open(str(state / "last-good" / "manifest.json"), encoding="utf-8") as handle:
        assert json.load(handle)["name"] == pending["name"] == "pending"


def test_discard_removes_a_snapshot_and_says_whether_there_was_one(tmp_path):
    _snapshot(tmp_path, "pending", b"port: 2\n")
    pending = str(tmp_path / "state" / "pending")
    assert discard_snapshot(pending) is True
    assert not os.path.lexists(pending)
    assert discard_snapshot(pending) is False


def test_discard_of_a_snapshot_it_cannot_remove_does_not_raise(tmp_path):
    # the verdict goes on (a pending snapshot left behind no longer matches the disk, and the next launch drops it)
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "pending"
    link.symlink_to(target)  # rmtree refuses a symlink
    assert discard_snapshot(str(link)) is True
    assert target.is_dir()


# ------------------------------------------------------------------------------------------------ restore
def _saved(tmp_path, mode=0o640, entry_update=None, drop=()):
    """A saved config, then changed on disk; the manifest entry edited as given (an older manifest's entry)."""
    config = tmp_path / "etc" / "main.yaml"
    config.parent.mkdir()
    config.write_bytes(b"port: 30000\n")
    config.chmod(mode)
    snap = str(tmp_path / "last-good")
    manifest = save_snapshot(snap, [str(config)])
    entry = manifest["files"][str(config)]
    entry.update(entry_update or {})
    for key in drop:
        del entry[key]
    config.write_bytes(b"port: 1\n")
    config.chmod(0o600)
    os.chown(str(config), OWNER + 1, OWNER + 1)
    return str(config), snap, manifest


@pytest.mark.skipif(os.geteuid() != 0, reason="setting another owner needs root")
def test_restore_puts_back_the_recorded_owner(tmp_path):
    config, snap, manifest = _saved(tmp_path, entry_update={"uid": OWNER, "gid": OWNER + 2})
    assert restore_snapshot(snap, manifest) == [config]
    info = os.stat(config)
    assert (info.st_uid, info.st_gid, _mode(config)) == (OWNER, OWNER + 2, 0o640)
    assert _read(config) == b"port: 30000\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="setting root as the owner needs root")
def test_an_entry_without_mode_or_owner_is_restored_as_root_0644(tmp_path):
    config, snap, manifest = _saved(tmp_path, drop=("mode", "uid", "gid"))
    assert restore_snapshot(snap, manifest) == [config]
    info = os.stat(config)
    assert (info.st_uid, info.st_gid, _mode(config)) == (0, 0, 0o644)


def _spy_mkstemp(monkeypatch):
    calls = []
    real = tempfile.mkstemp

    def spy(*args, **kwargs):
        calls.append(kwargs.get("dir"))
        return real(*args, **kwargs)
    monkeypatch.setattr(tempfile, "mkstemp", spy)
    return calls


def test_restore_writes_its_temporary_copy_beside_the_file(tmp_path, monkeypatch):
    # the copy is renamed over the file, so it must be on the same file system: in the file's own folder
    config, snap, manifest = _saved(tmp_path)
    calls = _spy_mkstemp(monkeypatch)
    monkeypatch.chdir(str(tmp_path))
    restore_snapshot(snap, manifest)
    assert calls == [os.path.dirname(config)]


def test_restore_of_a_relative_path_works_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(str(tmp_path))
    _write("main.yaml", b"port: 30000\n")
    snap = str(tmp_path / "last-good")
    manifest = save_snapshot(snap, ["main.yaml"])
    _write("main.yaml", b"port: 1\n")
    calls = _spy_mkstemp(monkeypatch)
    assert restore_snapshot(snap, manifest) == ["main.yaml"]
    assert calls == ["."]
    assert _read("main.yaml") == b"port: 30000\n"
    assert sorted(os.listdir(".")) == ["last-good", "main.yaml"]


# ------------------------------------------------------------------------------------------------ staged swap
@pytest.fixture
def pairs(tmp_path):
    live, stage = tmp_path / "etc", tmp_path / "staged"
    live.mkdir()
    stage.mkdir()
    for name, old, new in (("main.yaml", b"port: 1\n", b"port: 2\n"), ("unit.service", b"[Unit]\n", b"[Service]\n")):
        (live / name).write_bytes(old)
        (stage / name).write_bytes(new)
        (stage / name).chmod(0o640)
    return [(str(stage / name), str(live / name)) for name in ("main.yaml", "unit.service")]


def test_a_missing_staged_copy_names_both_files(pairs):
    os.unlink(pairs[1][0])
    with pytest.raises(SwapError) as raised:
        pending_swaps(pairs)
    assert str(raised.value) == "the staged copy %s of %s is missing; nothing was put in place" % pairs[1]


@pytest.mark.skipif(os.geteuid() != 0, reason="setting another owner needs root")
def test_swap_in_gives_each_file_its_staged_copy_s_owner(pairs):
    os.chown(pairs[0][0], OWNER, OWNER + 1)
    assert swap_in(pairs) == [dest for _src, dest in pairs]
    info = os.stat(pairs[0][1])
    assert (info.st_uid, info.st_gid, _mode(pairs[0][1])) == (OWNER, OWNER + 1, 0o640)
    assert _read(pairs[0][1]) == b"port: 2\n"


def test_swap_in_stages_beside_each_live_file(pairs, tmp_path, monkeypatch):
    calls = _spy_mkstemp(monkeypatch)
    monkeypatch.chdir(str(tmp_path))
    swap_in(pairs)
    assert calls == [os.path.dirname(dest) for _src, dest in pairs]


def test_swap_in_of_a_relative_path_stages_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(str(tmp_path))
    _write("staged.yaml", b"port: 2\n")
    _write("main.yaml", b"port: 1\n")
    calls = _spy_mkstemp(monkeypatch)
    assert swap_in([("staged.yaml", "main.yaml")]) == ["main.yaml"]
    assert calls == ["."]
    assert _read("main.yaml") == b"port: 2\n"


def test_a_failed_staging_write_names_the_file_and_the_error(pairs, monkeypatch):
    real = snapshot.shutil.copyfile

    def full_disk_on_the_unit(src, dst):
        if src.endswith("unit.service"):
            raise OSError(28, "No space left on device")
        return real(src, dst)
    monkeypatch.setattr(snapshot.shutil, "copyfile", full_disk_on_the_unit)
    with pytest.raises(SwapError) as raised:
        swap_in(pairs)
    assert str(raised.value) == ("cannot stage %s: [Errno 28] No space left on device; nothing was put in place, the live files "
                                 "are as they were" % pairs[1][1])
    assert sorted(os.listdir(os.path.dirname(pairs[0][1]))) == ["main.yaml", "unit.service"]


@pytest.mark.parametrize("which", [0, 1])
def test_a_folder_that_cannot_take_a_staged_copy_is_named(pairs, tmp_path, which):
    # the live file's folder is missing: the temporary copy cannot be made beside it, and that file is the one named
    gone = str(tmp_path / "gone" / os.path.basename(pairs[which][1]))
    pairs = [(src, gone if index == which else dest) for index, (src, dest) in enumerate(pairs)]
    with pytest.raises(SwapError) as raised:
        swap_in(pairs)
    assert str(raised.value).startswith("cannot stage %s: [Errno 2] No such file or directory" % gone)
    assert _read(pairs[1 - which][1]) == (b"port: 1\n", b"[Unit]\n")[1 - which]  # the other live file is untouched


def test_a_failed_rename_names_the_file_in_these_words(pairs, monkeypatch):
    real = os.replace

    def refuse_the_unit(src, dest):
        if str(dest).endswith("unit.service"):
            raise PermissionError(1, "Operation not permitted")
        return real(src, dest)
    monkeypatch.setattr(os, "replace", refuse_the_unit)
    with pytest.raises(SwapError) as raised:
        swap_in(pairs)
    assert str(raised.value) == ("cannot put %s in place: [Errno 1] Operation not permitted; the files put in place before it were "
                                 "put back, so the live set is the old one, whole" % pairs[1][1])


# ------------------------------------------------------------------------------------------------ probe figures
PROBE = {
    "started_at": 1764493405.5, "model": "Qwen/Qwen3-8B", "server_version": "0.5.4", "endpoint": "http://127.0.0.1:30000",
    "output_tokens": 256, "accept_length": 2.5, "ceiling": {"decode_tok_s": 90.0}, "efficiency": 0.81,
    "efficiency_concurrency": 16, "verdict": "pass",
    "markdown": "| level |", "passed": True, "report_file": "/var/lib/x.md",  # not kept
    "levels": [{"concurrency": 1, "ttft_ms": 40.0, "request_details": [{"id": 1}]}, "not a level",
               {"concurrency": 4, "ttft_ms": 55.0}],
}


def test_probe_figures_keep_exactly_the_baseline_fields():
    assert probe_figures(PROBE) == {
        "started_at": 1764493405.5, "model": "Qwen/Qwen3-8B", "server_version": "0.5.4", "endpoint": "http://127.0.0.1:30000",
        "output_tokens": 256, "accept_length": 2.5, "ceiling": {"decode_tok_s": 90.0}, "efficiency": 0.81,
        "efficiency_concurrency": 16, "verdict": "pass",
        "levels": [{"concurrency": 1, "ttft_ms": 40.0}, {"concurrency": 4, "ttft_ms": 55.0}],
    }
    assert PROBE["levels"][0]["request_details"] == [{"id": 1}]  # the caller's result is left as it was


@pytest.mark.parametrize("field", ["started_at", "model", "server_version", "endpoint", "output_tokens", "accept_length",
                                   "ceiling", "efficiency", "efficiency_concurrency", "verdict"])
def test_each_kept_field_alone_and_an_unset_one_is_left_out(field):
    probe = {field: PROBE[field], "levels": [{"concurrency": 1}]}
    assert probe_figures(probe) == {field: PROBE[field], "levels": [{"concurrency": 1}]}
    assert probe_figures({field: None, "levels": [{"concurrency": 1}]}) == {"levels": [{"concurrency": 1}]}


@pytest.mark.parametrize("probe", [None, "pass", [{"levels": [{"concurrency": 1}]}], {}, {"levels": []}, {"levels": None},
                                   {"levels": {"concurrency": 1}}, {"levels": "1,4"}, {"model": "m"}],
                         ids=["none", "text", "list", "empty", "no-levels", "levels-null", "levels-dict", "levels-text", "model-only"])
def test_nothing_measured_is_none(probe):
    assert probe_figures(probe) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="setting root as the owner needs root")
def test_a_staged_copy_whose_owner_cannot_be_read_goes_in_as_root_0644(pairs, monkeypatch):
    # its metadata gone between the copy and the look at it (another writer removed it): the file still goes in
    os.chown(pairs[0][0], OWNER, OWNER)
    monkeypatch.setattr(snapshot, "_meta", lambda path: None)
    swap_in(pairs[:1])
    info = os.stat(pairs[0][1])
    assert (info.st_uid, info.st_gid, _mode(pairs[0][1])) == (0, 0, 0o644)
    assert _read(pairs[0][1]) == b"port: 2\n"
