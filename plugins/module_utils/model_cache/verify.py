# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a model folder complete: safetensors headers, shard sizes, the index, config and tokenizer.

Why this exists: a 27B model is ~55 GB in a dozen safetensors shards, and the first thing that goes wrong on
a real host is a shard that is missing or cut short (an interrupted copy, a full disk, a half-synced NFS
export). SGLang only notices when it maps that shard, minutes into its start, with an error that names a
tensor, not a file. These checks run before the server starts and name the file. They are cheap on purpose
(file sizes and the few KB of each safetensors header, no hashing unless asked), so they can run on every
deploy and make "nothing to do" the fast path.

Everything here works on paths and plain values, so the modules stay thin and the logic is unit-tested.
Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
# Any one of these makes a tokenizer that transformers can load (fast, sentencepiece, BPE vocab, WordPiece, tiktoken).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model",
                   "sentencepiece.bpe.model", "tiktoken.model", "qwen.tiktoken")
# A safetensors header is JSON of a few KB to a few MB; anything claiming more is not a safetensors file.
MAX_HEADER_BYTES = 100 * 1024 * 1024


class Problem(dict):
    """One defect of a model folder, as a dict (so modules can return it): file, kind, detail."""

    def __init__(self, file: str, kind: str, detail: str) -> None:
        super().__init__(file=file, kind=kind, detail=detail)


# ---------------------------------------------------------------------------------------------------------------
# safetensors
# ---------------------------------------------------------------------------------------------------------------


def parse_safetensors_header(head: bytes) -> Tuple[int, Dict[str, Any]]:
    """Parse the start of a safetensors file: 8-byte little-endian header length, then that much JSON.

    Returns (header length, header dict). Raises ValueError with a reason a person can act on.
    """
    if len(head) < 8:
        raise ValueError("shorter than the 8-byte safetensors header length")
    (length,) = struct.unpack("<Q", head[:8])
    if length <= 0 or length > MAX_HEADER_BYTES:
        raise ValueError("not a safetensors file (header length %d)" % length)
    if len(head) < 8 + length:
        raise ValueError("cut inside its header (%d of %d header bytes)" % (len(head) - 8, length))
    try:
        header = json.loads(head[8:8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError("unreadable safetensors header: %s" % exc) from exc
    if not isinstance(header, dict):
        raise ValueError("unreadable safetensors header: not a JSON object")
    return length, header


def safetensors_data_end(header: Mapping[str, Any]) -> int:
    """Bytes of tensor data the header promises: the largest end offset of any tensor."""
    end = 0
    for name, entry in header.items():
        if name == "__metadata__" or not isinstance(entry, dict):
            continue
        offsets = entry.get("data_offsets") or [0, 0]
        end = max(end, int(offsets[1]))
    return end


def inspect_safetensors(path: str) -> Tuple[int, List[str]]:
    """Read only the header of a safetensors file; returns (the file size it must have, tensor names).

    Why the header: it says where every tensor ends, so a truncated shard is found from its first few KB,
    without hashing gigabytes and without knowing the hub's listing (path and copy sources have none).
    """
    with open(path, "rb") as handle:
        first = handle.read(8)
        if len(first) < 8:
            raise ValueError("shorter than the 8-byte safetensors header length")
        (length,) = struct.unpack("<Q", first)
        if length <= 0 or length > MAX_HEADER_BYTES:
            raise ValueError("not a safetensors file (header length %d)" % length)
        rest = handle.read(length)
    length, header = parse_safetensors_header(first + rest)
    names = sorted(k for k in header if k != "__metadata__")
    return 8 + length + safetensors_data_end(header), names


# ---------------------------------------------------------------------------------------------------------------
# Folder verification
# ---------------------------------------------------------------------------------------------------------------


def file_present(path: str) -> bool:
    """A regular file, or a link that resolves to one (the hub cache's snapshot folders are links to blobs)."""
    return os.path.isfile(path)


def describe_absent(root: str, rel: str) -> str:
    path = os.path.join(root, rel)
    if os.path.islink(path):
        return "missing: a link to %s that does not exist" % os.readlink(path)
    return "missing"


def weight_files(root: str) -> Tuple[Dict[str, List[str]], List[Problem]]:
    """The safetensors shards the folder must hold, each with the tensors it must hold.

    From the index's weight_map when there is an index, else the single model.safetensors. A folder with
    neither is a problem: SGLang would find no weights (or fall back to .bin files this cache does not fetch).
    """
    index_path = os.path.join(root, INDEX_FILE)
    if file_present(index_path):
        try:
            with open(index_path, "rb") as handle:
                index = json.loads(handle.read().decode("utf-8"))
            weight_map = index["weight_map"]
            if not isinstance(weight_map, dict) or not weight_map:
                raise ValueError("empty weight_map")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return {}, [Problem(INDEX_FILE, "unreadable", "not a usable safetensors index: %s" % exc)]
        shards: Dict[str, List[str]] = {}
        for tensor, shard in weight_map.items():
            shards.setdefault(str(shard), []).append(str(tensor))
        return shards, []
    if os.path.islink(index_path):
        return {}, [Problem(INDEX_FILE, "missing", describe_absent(root, INDEX_FILE))]
    if file_present(os.path.join(root, SINGLE_FILE)) or os.path.islink(os.path.join(root, SINGLE_FILE)):
        return {SINGLE_FILE: []}, []
    return {}, [Problem(INDEX_FILE, "missing", "no %s and no %s: no safetensors weights" % (INDEX_FILE, SINGLE_FILE))]


def verify_model_dir(root: str, expected: Optional[Mapping[str, int]] = None, require_tokenizer: bool = True,
                     checksums: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """Check a model folder: config, tokenizer, every shard the index names, present with the right size.

    ``expected`` maps relative paths to sizes from a trusted listing (the hub's, or the copy source's): every
    one must be there with exactly that size. ``checksums`` maps relative paths to sha256 digests (the hub's
    LFS ids) and costs a full read. Returns {"ok", "problems", "files", "total_bytes", "shards"}; problems
    name the file and say what is wrong with it, in a stable order (sorted by file).
    """
    problems: List[Problem] = []
    if not os.path.isdir(root):
        return {"ok": False, "problems": [Problem(".", "missing", "%s is not a folder" % root)],
                "files": {}, "total_bytes": 0, "shards": []}

    config = os.path.join(root, CONFIG_FILE)
    if not file_present(config):
        problems.append(Problem(CONFIG_FILE, "missing", describe_absent(root, CONFIG_FILE)))
    else:
        try:
            with open(config, "rb") as handle:
                if not isinstance(json.loads(handle.read().decode("utf-8")), dict):
                    raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            problems.append(Problem(CONFIG_FILE, "unreadable", "not valid JSON: %s" % exc))

    if require_tokenizer and not any(file_present(os.path.join(root, name)) for name in TOKENIZER_FILES):
        problems.append(Problem("tokenizer", "missing", "no tokenizer file (one of %s)" % ", ".join(TOKENIZER_FILES)))

    shards, shard_problems = weight_files(root)
    problems.extend(shard_problems)
    for shard, tensors in sorted(shards.items()):
        path = os.path.join(root, shard)
        if not file_present(path):
            named = " (named in %s)" % INDEX_FILE if shard != SINGLE_FILE else ""
            problems.append(Problem(shard, "missing", describe_absent(root, shard) + named))
            continue
        size = os.path.getsize(path)
        try:
            want, names = inspect_safetensors(path)
        except (OSError, ValueError) as exc:
            if "cut" in str(exc) or "shorter" in str(exc):
                problems.append(Problem(shard, "truncated", "truncated: %d bytes, %s" % (size, exc)))
            else:
                problems.append(Problem(shard, "unreadable", "%s (%d bytes)" % (exc, size)))
            continue
        if size < want:
            problems.append(Problem(shard, "truncated", "truncated: %d of %d bytes (its header says the tensors end at "
                                    "byte %d)" % (size, want, want)))
        elif size > want:
            problems.append(Problem(shard, "size", "%d bytes, %d more than its header accounts for" % (size, size - want)))
        absent = sorted(set(tensors) - set(names))
        if absent:
            problems.append(Problem(shard, "tensors", "lacks %d tensor(s) the index puts there, e.g. %s"
                                    % (len(absent), ", ".join(absent[:3]))))

    seen = {p["file"] for p in problems}
    for rel, size in sorted((expected or {}).items()):
        if rel in seen:
            continue
        path = os.path.join(root, rel)
        if not file_present(path):
            problems.append(Problem(rel, "missing", describe_absent(root, rel)))
            seen.add(rel)
        elif os.path.getsize(path) != int(size):
            actual = os.path.getsize(path)
            kind = "truncated" if actual < int(size) else "size"
            label = "truncated" if kind == "truncated" else "wrong size"
            problems.append(Problem(rel, kind, "%s: %d of %d bytes" % (label, actual, int(size))))
            seen.add(rel)

    for rel, digest in sorted((checksums or {}).items()):
        path = os.path.join(root, rel)
        if rel in seen or not file_present(path):
            continue
        actual = sha256_file(path)
        if actual != digest:
            problems.append(Problem(rel, "checksum", "sha256 %s, expected %s" % (actual, digest)))

    files = list_files(root)
    problems.sort(key=lambda p: (p["file"], p["kind"]))
    return {"ok": not problems, "problems": problems, "files": files, "total_bytes": sum(files.values()),
            "shards": sorted(shards)}


def list_files(root: str) -> Dict[str, int]:
    """Relative path -> size of every file under root (links followed, dangling ones and dot-folders skipped)."""
    files: Dict[str, int] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                files[os.path.relpath(path, root).replace(os.sep, "/")] = os.path.getsize(path)
    return files


def normalize_modes(root: str, file_mode: int = 0o644, dir_mode: int = 0o755) -> int:
    """Give every folder under root dir_mode and every file file_mode (links untouched); returns how many changed.

    Why: huggingface_hub writes some of its bookkeeping with mkstemp (0600), and an operator's umask may be
    tighter than 022; the service user, created later by sglang_server, must read everything.
    """
    changed = 0
    for folder, dirs, names in os.walk(root):
        for name, mode in [(d, dir_mode) for d in dirs] + [(n, file_mode) for n in names]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            if (os.lstat(path).st_mode & 0o7777) != mode:
                os.chmod(path, mode)
                changed += 1
    if not os.path.islink(root) and os.path.isdir(root) and (os.lstat(root).st_mode & 0o7777) != dir_mode:
        os.chmod(root, dir_mode)
        changed += 1
    return changed


def sha256_file(path: str, chunk: int = 8 * 1024 * 1024) -> str:
    """sha256 of a file, read in chunks (shards are GBs)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def describe_problems(problems: Sequence[Mapping[str, str]], where: str) -> str:
    """One message naming every bad file, e.g. for fail_json: 'model-00002-of-00003.safetensors: truncated ...'."""
    lines = ["%s: %s" % (p["file"], p["detail"]) for p in problems]
    return "%s is not a complete model (%d problem%s): %s" % (where, len(lines), "" if len(lines) == 1 else "s",
                                                              "; ".join(lines))
