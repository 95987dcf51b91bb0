# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a converged host looks like, observed in one go, and whether it still looks that way.

Why: on a host where the whole deploy chain changes nothing, each of its tasks is one SSH round trip that only
confirms a file, a package or a service is still right. After a chain that ended well, the state it left is
observed once and recorded on the host with a fingerprint of the run's inputs (computed on the controller).
The next run sends its fingerprint and asks the host, in one module call, to observe the same items again: the
same inputs and the same state mean the chain would change nothing; anything else (a file edited by hand, a
package removed, a stopped service, a reboot, a new input) means the whole chain runs as before.

The observations are of kinds (:data:`KINDS`): ``paths`` (type, mode, owner, and a file's sha256), ``trees``
(every file below a folder with its size, mode and owner), ``listings`` (the names in a folder, for a venv's
site-packages), ``commands`` (exit status and output of a read-only command), ``units`` (a systemd unit's state
and the files it runs with, which are observed as paths too) and ``http`` (a readiness URL that must answer 200).
Observations are compared by digest, item by item, so a miss names what drifted.

Runs on the target's Python (>= 3.9), standard library only. What reaches outside (commands, HTTP) comes in as
callables, so tests hand in fakes.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shlex
import stat
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

RECORD_VERSION = 1
KINDS = ("paths", "trees", "listings", "commands", "units", "http")
# Files above this size are observed by size and modification time, not by content (a model shard, a wheel).
HASH_LIMIT = 16 * 1024 * 1024
# Below a folder (a model, the launch's records) only small files are read: configs, tokenizers, manifests.
TREE_HASH_LIMIT = 1024 * 1024
UNIT_PROPERTIES = ("LoadState", "ActiveState", "UnitFileState", "NeedDaemonReload", "FragmentPath", "EnvironmentFiles",
                   "ExecStart", "User", "Group", "WorkingDirectory")

RunCommand = Callable[[List[str]], Tuple[int, str, str]]
HttpStatus = Callable[[str, float], Optional[int]]


def digest(value: Any) -> str:
    """A stable sha256 of a JSON-able value (keys sorted)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def empty_items() -> Dict[str, List[Any]]:
    return {kind: [] for kind in KINDS}


def merge_items(*groups: Optional[Mapping[str, Any]]) -> Dict[str, List[Any]]:
    """The items of several roles as one set: each kind's entries in order, without repeats, empty ones dropped."""
    merged = empty_items()
    for group in groups:
        for kind in KINDS:
            for entry in (group or {}).get(kind) or []:
                if entry in (None, "", []) or entry in merged[kind]:
                    continue
                merged[kind].append(entry)
    return merged


def file_sha256(path: str) -> Optional[str]:
    """The sha256 of a file's content (links followed); None when it cannot be read."""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
    except OSError:
        return None
    return sha.hexdigest()


def observe_path(path: str) -> Dict[str, Any]:
    """Type, mode, owner and group of a path (not following a last link); a regular file's sha256 up to HASH_LIMIT."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {"exists": False}
    except OSError as err:
        return {"error": err.__class__.__name__}
    seen: Dict[str, Any] = {"exists": True, "mode": stat.S_IMODE(info.st_mode), "uid": info.st_uid, "gid": info.st_gid,
                            "type": stat.S_IFMT(info.st_mode)}
    if stat.S_ISLNK(info.st_mode):
        seen["target"] = os.readlink(path)
    elif stat.S_ISREG(info.st_mode):
        seen["size"] = info.st_size
        if info.st_size <= HASH_LIMIT:
            seen["sha256"] = file_sha256(path)
        else:
            seen["mtime_ns"] = info.st_mtime_ns
    return seen


def observe_tree(root: str) -> Dict[str, Any]:
    """Every entry below root (links followed, as a loader reads them): relative path -> size, mode, owner, and a
    file's sha256 up to TREE_HASH_LIMIT or its modification time above (a shard edited in place keeps its size)."""
    if not os.path.isdir(root):
        return {"exists": False}
    entries: Dict[str, Any] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files) + [d + "/" for d in dirs]:
            full = os.path.join(folder, name.rstrip("/"))
            try:
                info = os.stat(full)
            except OSError:
                entries[os.path.relpath(full, root)] = "broken"
                continue
            entry = [info.st_size if stat.S_ISREG(info.st_mode) else 0, stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid]
            if stat.S_ISREG(info.st_mode):
                # small files by content (through a link, as a hub snapshot's are), large ones by modification time
                entry.append(file_sha256(full) if info.st_size <= TREE_HASH_LIMIT else info.st_mtime_ns)
            entries[os.path.relpath(full, root) + ("/" if name.endswith("/") else "")] = entry
    return {"exists": True, "entries": entries}


def observe_listing(pattern: str) -> Dict[str, Any]:
    """The names in each folder the glob pattern matches (a venv's lib/python*/site-packages: its dist-info names)."""
    folders = sorted(glob.glob(pattern))
    return {folder: sorted(os.listdir(folder)) if os.path.isdir(folder) else None for folder in folders}


def observe_command(argv: Sequence[str], run: RunCommand) -> Dict[str, Any]:
    """Exit status and output of a read-only command (its lines sorted when argv starts with the marker 'sorted')."""
    argv = list(argv)
    sort = bool(argv) and argv[0] == "sorted"
    if sort:
        argv = argv[1:]
    try:
        rc, out, _err = run(argv)
    except OSError as err:  # the program is not there
        return {"error": err.__class__.__name__}
    lines = out.splitlines()
    return {"rc": rc, "out": sorted(lines) if sort else lines}


def parse_show(text: str) -> Dict[str, str]:
    """``systemctl show -p ...`` output as a dict."""
    props: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            props[key] = value
    return props


def unit_files(props: Mapping[str, str]) -> List[str]:
    """The files a unit runs with: its unit file, its EnvironmentFile= files and the --config file of ExecStart."""
    files: List[str] = []
    if props.get("FragmentPath"):
        files.append(props["FragmentPath"])
    # EnvironmentFiles=/etc/sglang/main.env (ignore_errors=no)
    for match in re.finditer(r"(/[^\s;]+) \(ignore_errors=(?:yes|no)\)", props.get("EnvironmentFiles", "")):
        files.append(match.group(1))
    argv = re.search(r"argv\[\]=([^;]*)", props.get("ExecStart", ""))
    if argv:
        words = argv.group(1).split()
        for index, word in enumerate(words[:-1]):
            if word == "--config":
                files.append(words[index + 1])
    return list(dict.fromkeys(files))


def observe_unit(name: str, run: RunCommand) -> Dict[str, Any]:
    """A unit's state (active, enabled, reload pending) and its files, folders, user and group as they are now."""
    rc, out, _err = run(["systemctl", "show", "--no-pager", "-p", ",".join(UNIT_PROPERTIES), name])
    props = parse_show(out) if rc == 0 else {}
    keys = ("LoadState", "ActiveState", "UnitFileState", "NeedDaemonReload", "User", "Group")
    seen: Dict[str, Any] = {"props": {key: props.get(key, "") for key in keys}}
    files = unit_files(props)
    seen["files"] = {path: observe_path(path) for path in files}
    folder = props.get("WorkingDirectory", "").lstrip("!-")
    if folder:
        # its state folder, the state root above it, and the launch's records beside (last good files, figures)
        parent = os.path.dirname(folder.rstrip("/"))
        seen["folders"] = {path: observe_path(path) for path in (folder, parent)}
        seen["launch_state"] = observe_tree(os.path.join(parent, ".launch"))
    for path in files:
        if path.endswith((".yaml", ".yml")) and os.path.dirname(path) not in seen.setdefault("folders", {}):
            seen["folders"][os.path.dirname(path)] = observe_path(os.path.dirname(path))
    for key, database in (("User", "passwd"), ("Group", "group")):
        if props.get(key):
            seen[database] = observe_command(["getent", database, props[key]], run)
    if props.get("User"):
        seen["groups_of_user"] = observe_command(["id", "-nG", props["User"]], run)
    return seen


def config_host(path: str) -> str:
    """The address a server's YAML --config file names (``host: ...``), as a local client reaches it."""
    try:
        with open(path, encoding="utf-8") as handle:
            match = re.search(r"^host:\s*['\"]?([^'\"\s#]+)", handle.read(), re.MULTILINE)
    except OSError:
        match = None
    host = match.group(1) if match else "127.0.0.1"
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return "[%s]" % host if ":" in host else host


def ready_url(entry: Mapping[str, Any], run: RunCommand) -> str:
    """The URL of an http item: its own, or the unit's server (host from its --config file, port and path given)."""
    if entry.get("url"):
        return str(entry["url"])
    rc, out, _err = run(["systemctl", "show", "--no-pager", "-p", "ExecStart,FragmentPath", str(entry.get("unit"))])
    configs = [f for f in unit_files(parse_show(out) if rc == 0 else {}) if f.endswith((".yaml", ".yml"))]
    host = config_host(configs[0]) if configs else "127.0.0.1"
    return "http://%s:%s%s" % (host, entry.get("port"), entry.get("path", "/health"))


def observe(items: Mapping[str, Any], run: RunCommand, http: HttpStatus) -> Dict[str, Dict[str, Any]]:
    """Observe every item; kind -> item key -> observation. http items are observed as up (True) or not."""
    seen: Dict[str, Dict[str, Any]] = {kind: {} for kind in KINDS}
    for path in items.get("paths") or []:
        seen["paths"][path] = observe_path(path)
    for root in items.get("trees") or []:
        seen["trees"][root] = observe_tree(root)
    for pattern in items.get("listings") or []:
        seen["listings"][pattern] = observe_listing(pattern)
    for argv in items.get("commands") or []:
        seen["commands"][" ".join(shlex.quote(str(a)) for a in argv)] = observe_command([str(a) for a in argv], run)
    for unit in items.get("units") or []:
        seen["units"][unit] = observe_unit(unit, run)
    for entry in items.get("http") or []:
        url = ready_url(entry, run)
        seen["http"][url] = http(url, float(entry.get("timeout", 2.0))) == 200
    return seen


def digests(seen: Mapping[str, Mapping[str, Any]]) -> Dict[str, str]:
    """One digest per observed item, keyed ``kind:item``."""
    return {"%s:%s" % (kind, key): digest(value) for kind, values in seen.items() for key, value in values.items()}


def problems_now(seen: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """What is wrong whatever the record says: a unit not active, a readiness URL not answering 200."""
    problems = ["units:%s is %s" % (unit, value["props"].get("ActiveState") or "unknown")
                for unit, value in seen.get("units", {}).items() if value["props"].get("ActiveState") != "active"]
    problems += ["units:%s needs a daemon-reload" % unit for unit, value in seen.get("units", {}).items()
                 if value["props"].get("NeedDaemonReload") == "yes"]
    problems += ["http:%s does not answer 200" % url for url, up in seen.get("http", {}).items() if not up]
    return problems


def item_keys(items: Mapping[str, Any]) -> List[str]:
    """The ``kind:item`` keys the items are observed under (as :func:`digests` names them), without observing."""
    keys = ["paths:%s" % p for p in items.get("paths") or []] + ["trees:%s" % t for t in items.get("trees") or []]
    keys += ["listings:%s" % p for p in items.get("listings") or []]
    keys += ["commands:%s" % " ".join(shlex.quote(str(a)) for a in argv) for argv in items.get("commands") or []]
    return sorted(keys)


def make_record(fingerprint: str, items: Mapping[str, Any], seen: Mapping[str, Mapping[str, Any]],
                outputs: Mapping[str, Any], host_fingerprint: str = "",
                host_items: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The record a good run leaves on the host; with a host fingerprint, also which of its items the host phases
    (driver, tuning, install, weights) left, so a run that changes only the server can skip them. Units and
    readiness URLs are the server's: they never belong to the host part."""
    record = {"version": RECORD_VERSION, "fingerprint": fingerprint, "items": dict(items), "digests": digests(seen),
              "outputs": dict(outputs)}
    if host_fingerprint:
        record["host"] = {"fingerprint": host_fingerprint, "keys": item_keys(host_items or {})}
    return record


def compare(record: Optional[Mapping[str, Any]], fingerprint: str, seen: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Why the host is not as its record says ([] when it is): no record, new inputs, or the items that drifted."""
    if not isinstance(record, Mapping) or record.get("version") != RECORD_VERSION:
        return ["no record of a converged run"]
    drift: List[str] = []
    if record.get("fingerprint") != fingerprint:
        drift.append("the run's inputs changed (variables or the collection's code)")
    want = record.get("digests") or {}
    have = digests(seen)
    drift += ["%s changed" % key for key in sorted(want) if have.get(key) != want[key]]
    drift += ["%s is new" % key for key in sorted(have) if key not in want]
    return drift + problems_now(seen)


def compare_host(record: Optional[Mapping[str, Any]], host_fingerprint: str,
                 seen: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Why the host phases' part of the host is not as its record says ([] when it is): no host part recorded, new
    inputs of those phases, or one of their items that drifted. The server's units and URLs are not looked at."""
    if not isinstance(record, Mapping) or record.get("version") != RECORD_VERSION:
        return ["no record of a converged run"]
    part = record.get("host")
    if not isinstance(part, Mapping) or not host_fingerprint:
        return ["no record of the host phases"]
    drift: List[str] = []
    if part.get("fingerprint") != host_fingerprint:
        drift.append("the inputs of the host phases changed (variables or the collection's code)")
    want, have = record.get("digests") or {}, digests(seen)
    keys = part.get("keys") or []
    if not keys:
        return ["no record of the host phases' items"]
    drift += ["%s changed" % key for key in keys if key not in want or have.get(key) != want[key]]
    return drift


def load_record(path: str) -> Optional[Dict[str, Any]]:
    """The record at path; None when it is missing or unreadable (both mean: run the chain)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def save_record(path: str, record: Mapping[str, Any]) -> None:
    """Write the record atomically, readable by root only (it holds the chain's outputs)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
