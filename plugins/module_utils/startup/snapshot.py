# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a server runs with, and the last set of files that reached ready.

A launch is decided by the files that define it (the ``--config`` YAML, the environment files, the unit),
whoever wrote them: the server role, gpu_tuning or an operator. Their hashes are compared with the set that
last reached ready, so a second run restarts nothing, and any change (from any role) restarts exactly once.
The same set is kept as a snapshot, byte for byte with owner and mode, so a failed launch can put it back.

A way back that does not work is worse than none, because the launch relies on it: the manifest carries the
sha256 of every stored copy and a checksum of its own file list, :func:`snapshot_problems` checks both before a
launch starts, and :func:`restore_snapshot` checks every copy again before it puts anything back.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 2  # 2: with a checksum of the file list ("files_sha256")


class SnapshotError(Exception):
    """The snapshot cannot be trusted (a stored copy is missing or differs from its checksum): nothing was restored."""


def file_digest(path: str) -> Optional[str]:
    """sha256 of a file's bytes, or None when it does not exist (absence is part of the state too)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return None


def current_state(paths: List[str]) -> Dict[str, Optional[str]]:
    """Digest of every file that defines the launch."""
    return {path: file_digest(path) for path in paths}


def load_manifest(snapshot_dir: str) -> Optional[Dict[str, Any]]:
    """The last-good manifest, or None when no launch has reached ready yet (or the folder is unreadable)."""
    try:
        with open(os.path.join(snapshot_dir, MANIFEST), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None


def files_checksum(files: Dict[str, Any]) -> str:
    """sha256 of the manifest's file list, written canonically (sorted keys): a hand-edited or truncated manifest shows."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def snapshot_exists(snapshot_dir: str) -> bool:
    """Whether a snapshot was ever written here (its folder is there, readable or not)."""
    return os.path.lexists(snapshot_dir)


def snapshot_problems(snapshot_dir: str) -> List[str]:
    """What is wrong with the snapshot in words, [] when it can be restored as it is (or none was ever written).

    Checked: the manifest parses and has a file list whose checksum matches; every stored copy exists and has the
    sha256 the manifest recorded for it. A manifest of format 1 (no list checksum) is checked by its copies alone.
    """
    if not snapshot_exists(snapshot_dir):
        return []
    path = os.path.join(snapshot_dir, MANIFEST)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return ["the snapshot has no %s" % MANIFEST]
    except (OSError, ValueError) as exc:
        return ["%s cannot be read: %s" % (MANIFEST, exc)]
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return ["%s has no file list" % MANIFEST]
    problems = []
    recorded = data.get("files_sha256")
    if recorded is not None and recorded != files_checksum(data["files"]):
        problems.append("%s: its file list does not match its checksum (edited or damaged)" % MANIFEST)
    for name, entry in sorted(data["files"].items()):
        if entry is None:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("stored"), str) or not isinstance(entry.get("sha256"), str):
            problems.append("%s: the entry of %s is damaged" % (MANIFEST, name))
            continue
        stored = os.path.join(snapshot_dir, entry["stored"])
        digest = file_digest(stored)
        if digest is None:
            problems.append("the stored copy of %s is missing" % name)
        elif digest != entry["sha256"]:
            problems.append("the stored copy of %s differs from its checksum" % name)
    return problems


def changed_files(state: Dict[str, Optional[str]], manifest: Optional[Dict[str, Any]]) -> List[str]:
    """Files whose content differs from the last good launch (all of them when there is none)."""
    if manifest is None:
        return sorted(state)
    recorded = {path: (entry or {}).get("sha256") for path, entry in manifest["files"].items()}
    return sorted(path for path in set(state) | set(recorded) if state.get(path) != recorded.get(path))


def save_snapshot(snapshot_dir: str, paths: List[str], extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Copy the files that just reached ready into the snapshot folder (mode 0700: configs carry secrets).

    Written into a fresh folder and swapped in by rename, so a crash mid-copy never leaves half a snapshot.
    """
    parent = os.path.dirname(os.path.abspath(snapshot_dir))
    os.makedirs(parent, mode=0o700, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".snapshot-", dir=parent)
    files: Dict[str, Any] = {}
    for index, path in enumerate(paths):
        if not os.path.exists(path):
            files[path] = None
            continue
        stored = "%02d-%s" % (index, os.path.basename(path))
        shutil.copy2(path, os.path.join(staging, stored))
        info = os.stat(path)
        files[path] = {"stored": stored, "sha256": file_digest(path), "mode": info.st_mode & 0o7777, "uid": info.st_uid, "gid": info.st_gid}
    manifest: Dict[str, Any] = {}
    manifest.update(extra or {})
    manifest.update(files=files, files_sha256=files_checksum(files), format=MANIFEST_FORMAT)
    with open(os.path.join(staging, MANIFEST), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
    os.chmod(staging, 0o700)
    _replace_snapshot(staging, snapshot_dir)
    return manifest


def _replace_snapshot(new_dir: str, snapshot_dir: str) -> None:
    """Put a complete snapshot folder in the place of the last good one, by two renames: the previous one is kept as
    ``<snapshot_dir>.old`` until the new one is in place (:func:`recover_snapshot` reads a crash between them)."""
    old = snapshot_dir + ".old"
    shutil.rmtree(old, ignore_errors=True)
    if os.path.exists(snapshot_dir):
        os.rename(snapshot_dir, old)
    os.rename(new_dir, snapshot_dir)
    shutil.rmtree(old, ignore_errors=True)


def recover_snapshot(snapshot_dir: str) -> bool:
    """Bring the last good snapshot back from ``<snapshot_dir>.old`` when a crash between the two renames of a
    replacement left it only there; whether it did.

    Why: without this the next launch would find no last good snapshot and have nothing to roll back to.
    """
    old = snapshot_dir + ".old"
    if os.path.lexists(snapshot_dir) or not os.path.isdir(old):
        return False
    os.rename(old, snapshot_dir)
    return True


def promote_snapshot(pending_dir: str, snapshot_dir: str) -> None:
    """Make a pending snapshot (a serving group node's launch that passed, waiting for the group's verdict) the last
    good one, by rename: the previous last good one is removed only once the pending one is in its place."""
    _replace_snapshot(pending_dir, snapshot_dir)


def discard_snapshot(snapshot_dir: str) -> bool:
    """Remove a snapshot folder (a pending one the group did not approve); whether there was one."""
    if not os.path.lexists(snapshot_dir):
        return False
    shutil.rmtree(snapshot_dir, ignore_errors=True)
    return True


def restore_snapshot(snapshot_dir: str, manifest: Dict[str, Any]) -> List[str]:
    """Put the last-good files back (atomic replace per file, owner and mode kept); returns what changed.

    A file that did not exist at the last good launch is removed again. Every stored copy is checked against its
    checksum first: on a mismatch nothing is put back and :class:`SnapshotError` says which copy.
    """
    for path, entry in sorted(manifest["files"].items()):
        if entry is not None and file_digest(os.path.join(snapshot_dir, entry["stored"])) != entry.get("sha256"):
            raise SnapshotError("the stored copy of %s is missing or differs from its checksum" % path)
    restored = []
    for path, entry in sorted(manifest["files"].items()):
        if entry is None:
            if os.path.exists(path):
                os.unlink(path)
                restored.append(path)
            continue
        if file_digest(path) == entry.get("sha256"):
            continue
        directory = os.path.dirname(path) or "."
        fd, tmp = tempfile.mkstemp(prefix=".rollback-", dir=directory)
        os.close(fd)
        shutil.copyfile(os.path.join(snapshot_dir, entry["stored"]), tmp)
        os.chmod(tmp, entry.get("mode", 0o644))
        if hasattr(os, "chown"):
            os.chown(tmp, entry.get("uid", 0), entry.get("gid", 0))
        os.replace(tmp, path)
        restored.append(path)
    return restored


# ------------------------------------------------------------------------------------------------ staged swap
class SwapError(Exception):
    """The staged set could not be put in place; the live files are the old set, whole."""


def _meta(path: str) -> Optional[tuple]:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_mode & 0o7777, info.st_uid, info.st_gid)


def pending_swaps(pairs: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The (staged copy, live file) pairs whose live file differs from its staged copy (content, mode or owner).

    The role renders a launch's files into staged copies first; the launch puts them in place together. A staged
    copy that is missing is an error: its write failed, and the old set must stay.
    """
    pending = []
    for src, dest in pairs:
        if not os.path.isfile(src):
            raise SwapError("the staged copy %s of %s is missing; nothing was put in place" % (src, dest))
        if file_digest(src) != file_digest(dest) or _meta(src) != _meta(dest):
            pending.append((src, dest))
    return pending


def _discard(paths: List[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def swap_in(pairs: List[Tuple[str, str]]) -> List[str]:
    """Put every staged copy in place as one set; returns the live paths written.

    First every copy is staged beside its live file (same folder, so the final step is a rename) with the staged
    copy's mode and owner, and synced. Only then are they renamed over the live files, one after the other, each
    live file kept as a hard link until all are in. A failure at any point (a read-only or immutable file, a full
    disk) undoes what was done - the staged temporaries removed, the live files renamed back - so the live set stays
    the old one, whole, matching what runs, and :class:`SwapError` says which file failed and why.
    """
    temps: List[Tuple[str, str]] = []
    staging = ""  # the live file whose copy is being staged: the one a failure names
    try:
        for src, dest in pairs:
            staging = dest
            fd, tmp = tempfile.mkstemp(prefix=".%s.swap-" % os.path.basename(dest), dir=os.path.dirname(dest) or ".")
            os.close(fd)
            temps.append((tmp, dest))
            shutil.copyfile(src, tmp)
            mode, uid, gid = _meta(src) or (0o644, 0, 0)
            os.chmod(tmp, mode)
            if hasattr(os, "chown"):
                os.chown(tmp, uid, gid)
            with open(tmp, "rb") as handle:
                os.fsync(handle.fileno())
    except OSError as exc:
        _discard([tmp for tmp, _dest in temps])
        raise SwapError("cannot stage %s: %s; nothing was put in place, the live files are as they were" % (staging, exc)) from exc
    kept: List[Tuple[Optional[str], str]] = []
    current = ""
    try:
        for tmp, dest in temps:
            current = dest
            backup = None
            if os.path.lexists(dest):
                backup = tmp + ".old"
                os.link(dest, backup)
            try:
                os.replace(tmp, dest)
            except OSError:
                _discard([backup] if backup else [])
                raise
            kept.append((backup, dest))
    except OSError as exc:
        for backup, dest in reversed(kept):
            if backup:
                os.replace(backup, dest)
            else:
                os.unlink(dest)
        _discard([tmp for tmp, _dest in temps])
        raise SwapError("cannot put %s in place: %s; the files put in place before it were put back, so the live set is "
                        "the old one, whole" % (current, exc)) from exc
    _discard([backup for backup, _dest in kept if backup])
    return [dest for _tmp, dest in temps]


def probe_figures(probe: Any) -> Optional[Dict[str, Any]]:
    """The part of a probe result a launch keeps with its last good files: the next launch's baseline and what
    summaries (and a converged run's records) report. No Markdown, no per-request rows; None when nothing was measured."""
    if not isinstance(probe, Mapping) or not isinstance(probe.get("levels"), list) or not probe["levels"]:
        return None
    levels = [{k: v for k, v in level.items() if k != "request_details"} for level in probe["levels"] if isinstance(level, Mapping)]
    keep = ("started_at", "model", "server_version", "endpoint", "output_tokens", "accept_length", "ceiling", "efficiency",
            "efficiency_concurrency", "verdict")
    figures = {k: probe.get(k) for k in keep if probe.get(k) is not None}
    figures["levels"] = levels
    return figures
