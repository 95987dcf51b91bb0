# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache/verify: header arithmetic at its limits and every problem a model folder can have, word for word.

Shards here are written by ``write_shard`` in the safetensors layout (8-byte little-endian header length, JSON
header, tensor bytes), small enough that every size in a message is known exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import verify

MAX = 100 * 1024 * 1024


def header_bytes(tensors):
    """The JSON header of a shard holding ``tensors`` ({name: byte count}, laid out in order)."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, size in tensors.items():
        header[name] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
        offset += size
    return json.dumps(header).encode(), offset


def write_shard(path, tensors, extra=0, cut=None):
    """Write a shard; ``extra`` bytes past the data, or ``cut`` it to that many bytes. Returns its full size."""
    raw, data = header_bytes(tensors)
    blob = struct.pack("<Q", len(raw)) + raw + b"\0" * (data + extra)
    with open(path, "wb") as handle:
        handle.write(blob if cut is None else blob[:cut])
    return 8 + len(raw) + data


def model(root, tokenizer="tokenizer.json", index=True):
    """A complete two-shard model folder; returns {shard: size}."""
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "config.json"), "w") as handle:
        handle.write('{"architectures": ["Qwen3ForCausalLM"]}')
    if tokenizer:
        with open(os.path.join(root, tokenizer), "w") as handle:
            handle.write("{}")
    sizes = {}
    if index:
        layout = {"model-00001-of-00002.safetensors": {"a.weight": 10, "b.weight": 6},
                  "model-00002-of-00002.safetensors": {"c.weight": 4}}
        weight_map = {t: shard for shard, ts in layout.items() for t in ts}
        with open(os.path.join(root, verify.INDEX_FILE), "w") as handle:
            json.dump({"metadata": {}, "weight_map": weight_map}, handle)
        for shard, tensors in layout.items():
            sizes[shard] = write_shard(os.path.join(root, shard), tensors)
    else:
        sizes[verify.SINGLE_FILE] = write_shard(os.path.join(root, verify.SINGLE_FILE), {"w": 8})
    return sizes


S1, S2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def problems(root, **kwargs):
    """(file, kind, detail) of each problem, in the order verify_model_dir gives them."""
    return [(p["file"], p["kind"], p["detail"]) for p in verify.verify_model_dir(str(root), **kwargs)["problems"]]


# ------------------------------------------------------------------------------------------------ headers

def test_the_names_and_limits():
    """File names transformers and SGLang look for, and the 100 MiB header limit."""
    assert (verify.INDEX_FILE, verify.SINGLE_FILE, verify.CONFIG_FILE) == (
        "model.safetensors.index.json", "model.safetensors", "config.json")
    assert verify.TOKENIZER_FILES == ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model",
                                      "sentencepiece.bpe.model", "tiktoken.model", "qwen.tiktoken")
    assert verify.MAX_HEADER_BYTES == MAX


@pytest.mark.parametrize("head, message", [
    (b"\x02\0\0\0\0\0\0", "shorter than the 8-byte safetensors header length"),
    (struct.pack("<Q", 0), "not a safetensors file (header length 0)"),
    (struct.pack("<Q", MAX + 1), "not a safetensors file (header length 104857601)"),
    (struct.pack("<Q", MAX), "cut inside its header (0 of 104857600 header bytes)"),
    (struct.pack("<Q", 3) + b"{}", "cut inside its header (2 of 3 header bytes)"),
    (struct.pack("<Q", 1) + b"{", "unreadable safetensors header: Expecting property name enclosed in double quotes: "
                                  "line 1 column 2 (char 1)"),
    (struct.pack("<Q", 2) + b"[]", "unreadable safetensors header: not a JSON object"),
    (struct.pack("<Q", 4) + b"nope", "unreadable safetensors header: Expecting value: line 1 column 1 (char 0)"),
])
def test_header_errors_exact(head, message):
    """Each way a header can be wrong, with the numbers a person needs."""
    with pytest.raises(ValueError) as err:
        verify.parse_safetensors_header(head)
    assert str(err.value) == message


def test_header_exact_length_and_bytes_after_it():
    """A header that fills the bytes exactly parses; bytes after it are tensor data, not header."""
    assert verify.parse_safetensors_header(struct.pack("<Q", 2) + b"{}") == (2, {})
    assert verify.parse_safetensors_header(struct.pack("<Q", 7) + b'{"a":1}\xff\xff') == (7, {"a": 1})
    with pytest.raises(ValueError, match="^unreadable safetensors header: 'utf-8' codec can't decode"):
        verify.parse_safetensors_header(struct.pack("<Q", 2) + b"\xff\xfe")


def test_data_end_is_the_largest_end_offset():
    """Metadata, non-dict entries and entries without offsets add nothing; order does not matter."""
    header = {"__metadata__": {"data_offsets": [0, 999]}, "b": {"data_offsets": [10, 30]},
              "a": {"data_offsets": [0, 10]}, "junk": "x", "none": {}, "null": {"data_offsets": None}}
    assert verify.safetensors_data_end(header) == 30
    assert verify.safetensors_data_end({}) == 0
    assert verify.safetensors_data_end({"a": {}, "b": {"data_offsets": []}}) == 0


def test_inspect_safetensors_reads_only_the_header(tmp_path):
    """The size a shard must have and its sorted tensor names, even when the data is cut off."""
    path = str(tmp_path / "s.safetensors")
    size = write_shard(path, {"z": 5, "a": 3})
    write_shard(path, {"z": 5, "a": 3}, cut=size - 7)
    assert verify.inspect_safetensors(path) == (size, ["a", "z"])


@pytest.mark.parametrize("blob, message", [
    (b"\x01\x02", "shorter than the 8-byte safetensors header length"),
    (struct.pack("<Q", 0) + b"{}", "not a safetensors file (header length 0)"),
    (struct.pack("<Q", MAX + 1) + b"{}", "not a safetensors file (header length 104857601)"),
    (struct.pack("<Q", 10) + b"{}", "cut inside its header (2 of 10 header bytes)"),
    (struct.pack("<Q", 1) + b"{", "unreadable safetensors header: Expecting property name enclosed in double quotes: "
                                  "line 1 column 2 (char 1)"),
    (struct.pack("<Q", MAX) + b"{}", "cut inside its header (2 of 104857600 header bytes)"),
])
def test_inspect_safetensors_errors(tmp_path, blob, message):
    """A file too short, of the wrong kind or cut in its header says so without reading further."""
    path = tmp_path / "s.safetensors"
    path.write_bytes(blob)
    with pytest.raises(ValueError) as err:
        verify.inspect_safetensors(str(path))
    assert str(err.value) == message


# ------------------------------------------------------------------------------------------------ folders

def test_a_complete_model_exact_result(tmp_path):
    """ok, no problems, every file with its size, the total and the shards."""
    sizes = model(str(tmp_path))
    out = verify.verify_model_dir(str(tmp_path))
    files = verify.list_files(str(tmp_path))
    assert out == {"ok": True, "problems": [], "files": files, "total_bytes": sum(files.values()),
                   "shards": [S1, S2]}
    assert {k: files[k] for k in sizes} == sizes
    assert sorted(files) == ["config.json", S1, S2, verify.INDEX_FILE, "tokenizer.json"]


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model",
                                  "sentencepiece.bpe.model", "tiktoken.model", "qwen.tiktoken"])
def test_each_tokenizer_file_is_enough(tmp_path, name):
    """Any one tokenizer file makes the folder complete."""
    model(str(tmp_path), tokenizer=name)
    assert problems(tmp_path) == []


def test_no_tokenizer(tmp_path):
    """Without one it is a problem naming them all, unless no tokenizer is required."""
    model(str(tmp_path), tokenizer=None)
    assert problems(tmp_path) == [("tokenizer", "missing", "no tokenizer file (one of tokenizer.json, tokenizer.model, "
                                   "vocab.json, vocab.txt, spiece.model, sentencepiece.bpe.model, tiktoken.model, "
                                   "qwen.tiktoken)")]
    assert problems(tmp_path, require_tokenizer=False) == []


def test_not_a_folder(tmp_path):
    """A path that is no folder: one problem, nothing else."""
    where = str(tmp_path / "absent")
    assert verify.verify_model_dir(where) == {"ok": False, "files": {}, "total_bytes": 0, "shards": [],
                                              "problems": [{"file": ".", "kind": "missing",
                                                            "detail": "%s is not a folder" % where}]}


def test_config_problems(tmp_path):
    """A missing config, a dangling one, and one that is JSON but not an object."""
    model(str(tmp_path))
    os.unlink(tmp_path / "config.json")
    assert problems(tmp_path) == [("config.json", "missing", "missing")]
    os.symlink("../blobs/c0ffee", str(tmp_path / "config.json"))
    assert problems(tmp_path) == [("config.json", "missing", "missing: a link to ../blobs/c0ffee that does not exist")]
    os.unlink(tmp_path / "config.json")
    (tmp_path / "config.json").write_text("[]")
    assert problems(tmp_path) == [("config.json", "unreadable", "not valid JSON: not a JSON object")]
    (tmp_path / "config.json").write_text("{")
    assert problems(tmp_path) == [("config.json", "unreadable", "not valid JSON: Expecting property name enclosed in "
                                   "double quotes: line 1 column 2 (char 1)")]


@pytest.mark.parametrize("content, detail", [
    ("{", "not a usable safetensors index: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ('{"metadata": {}}', "not a usable safetensors index: 'weight_map'"),
    ('{"weight_map": {}}', "not a usable safetensors index: empty weight_map"),
    ('{"weight_map": ["a"]}', "not a usable safetensors index: empty weight_map"),
    ("[1]", "not a usable safetensors index: list indices must be integers or slices, not str"),
])
def test_unusable_index(tmp_path, content, detail):
    """An index that does not say where the weights are is one problem, and no shard is checked."""
    model(str(tmp_path))
    (tmp_path / verify.INDEX_FILE).write_text(content)
    out = verify.verify_model_dir(str(tmp_path))
    assert (out["problems"], out["shards"]) == ([{"file": verify.INDEX_FILE, "kind": "unreadable", "detail": detail}], [])


def test_index_as_a_dangling_link_and_no_weights(tmp_path):
    """A dangling index link says where it pointed; a folder with neither index nor single file has no weights."""
    model(str(tmp_path))
    for shard in (S1, S2, verify.INDEX_FILE):
        os.unlink(tmp_path / shard)
    assert problems(tmp_path) == [(verify.INDEX_FILE, "missing", "no model.safetensors.index.json and no "
                                   "model.safetensors: no safetensors weights")]
    os.symlink("../blobs/1dx", str(tmp_path / verify.INDEX_FILE))
    assert problems(tmp_path) == [(verify.INDEX_FILE, "missing", "missing: a link to ../blobs/1dx that does not exist")]


def test_single_file_models(tmp_path):
    """model.safetensors alone is a model; its absence (as a dangling link) is not 'named in the index'."""
    sizes = model(str(tmp_path), index=False)
    out = verify.verify_model_dir(str(tmp_path))
    assert (out["ok"], out["shards"], out["files"][verify.SINGLE_FILE]) == (True, [verify.SINGLE_FILE],
                                                                            sizes[verify.SINGLE_FILE])
    os.unlink(tmp_path / verify.SINGLE_FILE)
    os.symlink("../blobs/5af", str(tmp_path / verify.SINGLE_FILE))
    assert problems(tmp_path) == [(verify.SINGLE_FILE, "missing", "missing: a link to ../blobs/5af that does not exist")]


def test_shard_problems_word_for_word(tmp_path):
    """Missing (named in the index), cut in its header, cut in its data, too long, not safetensors, wrong tensors."""
    root = str(tmp_path)
    sizes = model(root)
    os.unlink(os.path.join(root, S2))
    assert problems(tmp_path) == [(S2, "missing", "missing (named in model.safetensors.index.json)")]
    write_shard(os.path.join(root, S2), {"c.weight": 4}, cut=12)
    assert problems(tmp_path) == [(S2, "truncated", "truncated: 12 bytes, cut inside its header (4 of %d header bytes)"
                                   % (sizes[S2] - 8 - 4))]
    write_shard(os.path.join(root, S2), {"c.weight": 4}, cut=sizes[S2] - 1)
    assert problems(tmp_path) == [(S2, "truncated", "truncated: %d of %d bytes (its header says the tensors end at "
                                   "byte %d)" % (sizes[S2] - 1, sizes[S2], sizes[S2]))]
    write_shard(os.path.join(root, S2), {"c.weight": 4}, extra=3)
    assert problems(tmp_path) == [(S2, "size", "%d bytes, 3 more than its header accounts for" % (sizes[S2] + 3))]
    (tmp_path / S2).write_bytes(struct.pack("<Q", 0) + b"{}")
    assert problems(tmp_path) == [(S2, "unreadable", "not a safetensors file (header length 0) (10 bytes)")]
    (tmp_path / S2).write_bytes(b"\x01")
    assert problems(tmp_path) == [(S2, "truncated", "truncated: 1 bytes, shorter than the 8-byte safetensors header "
                                   "length")]
    write_shard(os.path.join(root, S2), {"other": 4})
    write_shard(os.path.join(root, S1), {"x1": 1, "x2": 1, "x3": 1, "a.weight": 7})
    assert problems(tmp_path) == [
        (S1, "tensors", "lacks 1 tensor(s) the index puts there, e.g. b.weight"),
        (S2, "tensors", "lacks 1 tensor(s) the index puts there, e.g. c.weight")]
    write_shard(os.path.join(root, S1), {"y": 1})
    assert problems(tmp_path)[0] == (S1, "tensors", "lacks 2 tensor(s) the index puts there, e.g. a.weight, b.weight")


def test_every_bad_shard_is_reported(tmp_path):
    """A missing or unreadable shard does not stop the check of the shards after it."""
    root = str(tmp_path)
    sizes = model(root)
    os.unlink(os.path.join(root, S1))
    write_shard(os.path.join(root, S2), {"c.weight": 4}, cut=sizes[S2] - 1)
    assert [(f, k) for f, k, d in problems(tmp_path) if d] == [(S1, "missing"), (S2, "truncated")]
    (tmp_path / S1).write_bytes(b"\x01")
    assert [(f, k) for f, k, d in problems(tmp_path) if d] == [(S1, "truncated"), (S2, "truncated")]


def test_many_absent_tensors_show_three(tmp_path):
    """The message names the first three missing tensors, sorted, and counts them all."""
    root = str(tmp_path)
    model(root)
    weight_map = {"t%d" % i: S1 for i in range(5)}
    weight_map["c.weight"] = S2
    with open(os.path.join(root, verify.INDEX_FILE), "w") as handle:
        json.dump({"weight_map": weight_map}, handle)
    assert problems(tmp_path) == [(S1, "tensors", "lacks 5 tensor(s) the index puts there, e.g. t0, t1, t2")]


def test_the_expected_listing(tmp_path):
    """Every listed file with its exact size; a file already reported is not reported twice."""
    root = str(tmp_path)
    sizes = model(root)
    (tmp_path / "merges.txt").write_bytes(b"abc")
    (tmp_path / "extra.txt").write_bytes(b"abcdef")
    expected = {"merges.txt": 5, "extra.txt": 4, "absent.json": 1, "config.json": 39, S1: sizes[S1] + 1}
    os.unlink(tmp_path / S2)
    assert problems(tmp_path, expected=expected) == [
        ("absent.json", "missing", "missing"),
        ("extra.txt", "size", "wrong size: 6 of 4 bytes"),
        ("merges.txt", "truncated", "truncated: 3 of 5 bytes"),
        (S1, "truncated", "truncated: %d of %d bytes" % (sizes[S1], sizes[S1] + 1)),
        (S2, "missing", "missing (named in model.safetensors.index.json)")]
    assert problems(tmp_path, expected={S2: 4, "merges.txt": "3", "zz.json": 1}) == [
        (S2, "missing", "missing (named in model.safetensors.index.json)"), ("zz.json", "missing", "missing")]


def test_checksums(tmp_path):
    """A digest that differs is a problem naming both; files missing or already reported are not hashed."""
    root = str(tmp_path)
    model(root)
    (tmp_path / "merges.txt").write_bytes(b"abc")
    good = hashlib.sha256(b"abc").hexdigest()
    assert problems(tmp_path, checksums={"merges.txt": good}) == []
    assert problems(tmp_path, checksums={"merges.txt": "0" * 64}) == [
        ("merges.txt", "checksum", "sha256 %s, expected %s" % (good, "0" * 64))]
    assert problems(tmp_path, checksums={"absent.txt": "0" * 64, "merges.txt": "1" * 64}) == [
        ("merges.txt", "checksum", "sha256 %s, expected %s" % (good, "1" * 64))]
    assert problems(tmp_path, expected={"merges.txt": 4}, checksums={"merges.txt": "0" * 64}) == [
        ("merges.txt", "truncated", "truncated: 3 of 4 bytes")]


def test_problems_are_sorted_by_file_then_kind(tmp_path):
    """A stable order whatever order the checks found them in."""
    root = str(tmp_path)
    model(root, tokenizer=None)
    os.unlink(tmp_path / "config.json")
    write_shard(os.path.join(root, S1), {"a.weight": 10})
    found = [(f, k) for f, k, detail in problems(tmp_path) if detail]
    assert found == [("config.json", "missing"), (S1, "tensors"), ("tokenizer", "missing")]


def test_list_files(tmp_path):
    """Relative '/'-paths and sizes, links followed, dangling links and dot-folders skipped, dot-files kept."""
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / ".cache" / "x").mkdir(parents=True)
    (tmp_path / "a.txt").write_bytes(b"12")
    (tmp_path / ".note").write_bytes(b"1")
    (tmp_path / "sub" / "deep" / "b.bin").write_bytes(b"123")
    (tmp_path / ".cache" / "x" / "c").write_bytes(b"1234")
    os.symlink("../a.txt", str(tmp_path / "sub" / "link"))
    os.symlink("gone", str(tmp_path / "sub" / "dangling"))
    assert verify.list_files(str(tmp_path)) == {".note": 1, "a.txt": 2, "sub/deep/b.bin": 3, "sub/link": 2}


def test_normalize_modes_counts_what_it_changed(tmp_path):
    """Folders to dir_mode, files to file_mode, the root too; links untouched; a second pass changes nothing."""
    root = tmp_path / "m"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_text("x")
    (root / "g").write_text("y")
    os.chmod(root / "d" / "f", 0o600)
    os.chmod(root / "g", 0o644)
    os.chmod(root / "d", 0o700)
    os.chmod(root, 0o700)
    os.symlink("g", str(root / "link"))
    assert verify.normalize_modes(str(root)) == 3
    for n in range(8):  # links are skipped, and the files beside them still done, whatever the listing order
        os.symlink("..", str(root / "d" / ("dirlink%d" % n)))
        (root / "d" / ("f%d" % n)).write_text("x")
        os.chmod(root / "d" / ("f%d" % n), 0o600)
    assert verify.normalize_modes(str(root)) == 8
    assert {stat.S_IMODE(os.stat(root / "d" / ("f%d" % n)).st_mode) for n in range(8)} == {0o644}
    modes = {p: stat.S_IMODE(os.stat(root / p).st_mode) for p in (".", "d", "d/f", "g")}
    assert modes == {".": 0o755, "d": 0o755, "d/f": 0o644, "g": 0o644}
    assert verify.normalize_modes(str(root)) == 0
    assert verify.normalize_modes(str(root), file_mode=0o640, dir_mode=0o750) == 12
    assert stat.S_IMODE(os.stat(root / "d" / "f").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o750


def test_sha256_in_chunks(tmp_path):
    """The digest is the same whatever the chunk size."""
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    want = hashlib.sha256(b"0123456789").hexdigest()
    assert verify.sha256_file(str(path)) == want
    assert verify.sha256_file(str(path), chunk=3) == want


def test_describe_problems():
    """One sentence naming every file, singular or plural."""
    one = [{"file": "a", "kind": "missing", "detail": "missing"}]
    assert verify.describe_problems(one, "/m") == "/m is not a complete model (1 problem): a: missing"
    two = one + [{"file": "b", "kind": "size", "detail": "wrong size: 1 of 2 bytes"}]
    assert verify.describe_problems(two, "/m") == ("/m is not a complete model (2 problems): a: missing; "
                                                   "b: wrong size: 1 of 2 bytes")
