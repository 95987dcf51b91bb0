# -*- coding: utf-8 -*-
"""model_cache: folder verification on a real (tiny) safetensors model, fetch planning, sizes and disk space,
progress parsing and formatting, manifests and file modes.

The model folder is the one the hub stand-in serves (tools/standins/hub make-model): three real safetensors
shards and their index, so the header arithmetic is checked against files in the real format.
"""

from __future__ import annotations

import json
import os
import stat
import struct
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import hub, progress, space, verify

ROOT = Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT / "tools" / "standins" / "hub"))
import hub_standin  # noqa: E402  pylint: disable=wrong-import-position

SHARD1 = "model-00001-of-00003.safetensors"
SHARD2 = "model-00002-of-00003.safetensors"
SHARD3 = "model-00003-of-00003.safetensors"


@pytest.fixture
def model(tmp_path):
    """A complete tiny model folder; returns (path, {file: size})."""
    folder = tmp_path / "model"
    sizes = hub_standin.make_model(folder)
    return folder, sizes


# ------------------------------------------------------------------------------------------------ safetensors

def test_header_of_a_real_shard_gives_its_exact_size(model):
    folder, sizes = model
    for shard in (SHARD1, SHARD2, SHARD3):
        want, names = verify.inspect_safetensors(str(folder / shard))
        assert want == sizes[shard]
        assert names and "__metadata__" not in names


def test_header_parse_errors_say_why():
    with pytest.raises(ValueError, match="shorter than the 8-byte"):
        verify.parse_safetensors_header(b"\x01\x00")
    with pytest.raises(ValueError, match="not a safetensors file"):
        verify.parse_safetensors_header(struct.pack("<Q", 0))
    with pytest.raises(ValueError, match="cut inside its header"):
        verify.parse_safetensors_header(struct.pack("<Q", 100) + b"{}")
    with pytest.raises(ValueError, match="unreadable safetensors header"):
        verify.parse_safetensors_header(struct.pack("<Q", 4) + b"nope")
    length, header = verify.parse_safetensors_header(struct.pack("<Q", 2) + b"{}")
    assert (length, header) == (2, {})


def test_data_end_is_the_largest_offset():
    header = {"__metadata__": {"format": "pt"}, "a": {"data_offsets": [0, 10]}, "b": {"data_offsets": [10, 64]}}
    assert verify.safetensors_data_end(header) == 64


# ------------------------------------------------------------------------------------------------ verify

def test_complete_model_passes(model):
    folder, sizes = model
    report = verify.verify_model_dir(str(folder), expected=sizes)
    assert report["ok"], report["problems"]
    assert report["shards"] == [SHARD1, SHARD2, SHARD3]
    assert report["total_bytes"] == sum(sizes.values())


def test_truncated_shard_is_named_with_both_sizes(model):
    folder, sizes = model
    with open(folder / SHARD2, "r+b") as handle:
        handle.truncate(4096)
    report = verify.verify_model_dir(str(folder))
    assert not report["ok"]
    assert report["problems"] == [{"file": SHARD2, "kind": "truncated",
                                   "detail": "truncated: 4096 of %d bytes (its header says the tensors end at byte %d)"
                                   % (sizes[SHARD2], sizes[SHARD2])}]
    message = verify.describe_problems(report["problems"], str(folder))
    assert SHARD2 in message and "1 problem)" in message


def test_shard_cut_inside_its_header_is_truncated(model):
    folder, _sizes = model
    with open(folder / SHARD3, "r+b") as handle:
        handle.truncate(20)
    problems = verify.verify_model_dir(str(folder))["problems"]
    assert [(p["file"], p["kind"]) for p in problems] == [(SHARD3, "truncated")]
    assert "cut inside its header" in problems[0]["detail"]


def test_missing_shard_is_named_as_named_in_the_index(model):
    folder, _sizes = model
    (folder / SHARD3).unlink()
    problems = verify.verify_model_dir(str(folder))["problems"]
    assert problems == [{"file": SHARD3, "kind": "missing", "detail": "missing (named in model.safetensors.index.json)"}]


def test_dangling_link_says_where_it_pointed(model):
    folder, _sizes = model
    blob = folder.parent / "blob"
    os.replace(folder / SHARD1, blob)
    os.symlink(str(blob), str(folder / SHARD1))
    assert verify.verify_model_dir(str(folder))["ok"]  # a link to a good blob is fine (the hub cache layout)
    blob.unlink()
    problems = verify.verify_model_dir(str(folder))["problems"]
    assert problems[0]["file"] == SHARD1 and "a link to %s that does not exist" % blob in problems[0]["detail"]


def test_wrong_size_against_the_listing(model):
    folder, sizes = model
    (folder / "vocab.json").write_text("{}")
    problems = verify.verify_model_dir(str(folder), expected=sizes)["problems"]
    assert problems == [{"file": "vocab.json", "kind": "truncated", "detail": "truncated: 2 of %d bytes" % sizes["vocab.json"]}]
    missing = dict(sizes, **{"extra.json": 5})
    problems = verify.verify_model_dir(str(folder), expected=missing)["problems"]
    assert {"file": "extra.json", "kind": "missing", "detail": "missing"} in problems


def test_shard_longer_than_its_header(model):
    folder, sizes = model
    with open(folder / SHARD3, "ab") as handle:
        handle.write(b"x" * 10)
    problems = verify.verify_model_dir(str(folder))["problems"]
    assert problems == [{"file": SHARD3, "kind": "size", "detail": "%d bytes, 10 more than its header accounts for"
                         % (sizes[SHARD3] + 10)}]


def test_tensor_in_the_wrong_shard(model):
    folder, _sizes = model
    index = json.loads((folder / verify.INDEX_FILE).read_text())
    index["weight_map"]["model.norm.weight"] = SHARD1
    (folder / verify.INDEX_FILE).write_text(json.dumps(index))
    problems = verify.verify_model_dir(str(folder))["problems"]
    assert [(p["file"], p["kind"]) for p in problems] == [(SHARD1, "tensors")]
    assert "model.norm.weight" in problems[0]["detail"]


def test_config_and_tokenizer_are_required(model):
    folder, _sizes = model
    (folder / "config.json").unlink()
    for name in ("tokenizer.json", "vocab.json"):
        (folder / name).unlink()
    kinds = {(p["file"], p["kind"]) for p in verify.verify_model_dir(str(folder))["problems"]}
    assert kinds == {("config.json", "missing"), ("tokenizer", "missing")}
    kinds = {(p["file"], p["kind"]) for p in verify.verify_model_dir(str(folder), require_tokenizer=False)["problems"]}
    assert kinds == {("config.json", "missing")}


def test_bad_config_and_bad_index(model):
    folder, _sizes = model
    (folder / "config.json").write_text("{not json")
    (folder / verify.INDEX_FILE).write_text('{"weight_map": {}}')
    kinds = {(p["file"], p["kind"]) for p in verify.verify_model_dir(str(folder))["problems"]}
    assert kinds == {("config.json", "unreadable"), (verify.INDEX_FILE, "unreadable")}


def test_single_file_model_and_no_weights(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "tokenizer.json").write_text("{}")
    problems = verify.verify_model_dir(str(tmp_path))["problems"]
    assert problems == [{"file": verify.INDEX_FILE, "kind": "missing",
                         "detail": "no model.safetensors.index.json and no model.safetensors: no safetensors weights"}]
    (tmp_path / "model.safetensors").write_bytes(hub_standin.safetensors_bytes([("w", [4, 4])], "seed"))
    assert verify.verify_model_dir(str(tmp_path))["ok"]
    assert verify.verify_model_dir(str(tmp_path / "absent"))["problems"][0]["kind"] == "missing"


def test_checksums_read_every_byte(model):
    folder, _sizes = model
    good = verify.sha256_file(str(folder / SHARD3))
    assert verify.verify_model_dir(str(folder), checksums={SHARD3: good})["ok"]
    problems = verify.verify_model_dir(str(folder), checksums={SHARD3: "0" * 64})["problems"]
    assert problems == [{"file": SHARD3, "kind": "checksum", "detail": "sha256 %s, expected %s" % (good, "0" * 64)}]


def test_list_files_skips_dot_folders(model):
    folder, sizes = model
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x").write_text("x")
    assert verify.list_files(str(folder)) == sizes


# ------------------------------------------------------------------------------------------------ hub listing

def test_repo_names_and_commits():
    assert hub.repo_folder_name("Qwen/Qwen3-0.6B") == "models--Qwen--Qwen3-0.6B"
    assert hub.snapshot_path("/c", "a/b", "f" * 40) == "/c/models--a--b/snapshots/" + "f" * 40
    assert hub.is_commit("0123456789abcdef0123456789abcdef01234567")
    assert not hub.is_commit("main") and not hub.is_commit("v1.0") and not hub.is_commit("0123ABCD" * 5)


def test_patterns_follow_huggingface_hub():
    paths = ["config.json", "model-00001.safetensors", "pytorch_model.bin", "original/consolidated.pth",
             "original/params.json", "README.md", "tokenizer.model"]
    assert hub.filter_patterns(paths, list(hub.DEFAULT_ALLOW_PATTERNS)) == [
        "config.json", "model-00001.safetensors", "original/params.json", "tokenizer.model"]
    assert hub.filter_patterns(paths, ["original/"]) == ["original/consolidated.pth", "original/params.json"]
    assert hub.filter_patterns(paths, None, ["*.bin", "original/"]) == [
        "config.json", "model-00001.safetensors", "README.md", "tokenizer.model"]


def test_plan_fetch(model):
    folder, sizes = model
    plan = hub.plan_fetch(sizes, str(folder))
    assert plan["fetch"] == {} and plan["damaged"] == [] and plan["present_bytes"] == sum(sizes.values())
    (folder / SHARD3).unlink()
    with open(folder / SHARD2, "r+b") as handle:
        handle.truncate(10)
    plan = hub.plan_fetch(sizes, str(folder))
    assert plan["fetch"] == {SHARD2: sizes[SHARD2], SHARD3: sizes[SHARD3]}
    assert plan["fetch_bytes"] == sizes[SHARD2] + sizes[SHARD3]
    assert plan["damaged"] == [{"file": SHARD2, "kind": "truncated", "detail": "truncated: 10 of %d bytes" % sizes[SHARD2]}]
    plan = hub.plan_fetch(sizes, str(folder), was_complete=True)
    assert [(p["file"], p["kind"]) for p in plan["damaged"]] == [(SHARD2, "truncated"), (SHARD3, "missing")]


def test_plan_of_an_empty_snapshot(tmp_path):
    plan = hub.plan_fetch({"config.json": 10, SHARD1: 100}, str(tmp_path / "absent"))
    assert plan["fetch_bytes"] == 110 and plan["damaged"] == []


# ------------------------------------------------------------------------------------------------ sizes, disk

@pytest.mark.parametrize("text,expected", [
    (123, 123), ("123", 123), ("55GB", 55 * 10 ** 9), ("55 GiB", 55 * 2 ** 30), ("1.5T", 1500 * 10 ** 9),
    ("0", 0), ("20gib", 20 * 2 ** 30), ("7 kb", 7000)])
def test_parse_size(text, expected):
    assert space.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "GB", "12 parsecs", "-5", True])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        space.parse_size(text)


def test_margin():
    assert space.margin_bytes("10%", 1000) == 100
    assert space.margin_bytes("0%", 1000) == 0
    assert space.margin_bytes("2GiB", 1000) == 2 * 2 ** 30
    assert space.margin_bytes(0, 1000) == 0
    for bad in ("-5%", "x%"):
        with pytest.raises(ValueError):
            space.margin_bytes(bad, 1000)


def test_check_space_gives_both_numbers():
    assert space.check_space(100, 111, "10%", "/c") is None
    assert space.check_space(0, 0, "10%", "/c") is None
    message = space.check_space(55_000_000_000, 41_000_000_000, "10%", "/var/lib/sglang/models", "Qwen/Qwen3-27B")
    assert "not enough disk space in /var/lib/sglang/models for Qwen/Qwen3-27B" in message
    assert "55.0 GB (55000000000 bytes)" in message
    assert "60.5 GB (60500000000 bytes) in all" in message
    assert "41.0 GB (41000000000 bytes) are free" in message
    assert space.check_space(100, 105, "10%", "/c") is not None


def test_human_bytes():
    assert [space.human_bytes(n) for n in (0, 999, 1000, 57116, 55 * 10 ** 9, 3 * 10 ** 15)] == [
        "0 B", "999 B", "1.0 KB", "57.1 KB", "55.0 GB", "3000.0 TB"]


def test_free_bytes_measures_the_nearest_existing_folder(tmp_path):
    assert space.existing_ancestor(str(tmp_path / "a" / "b")) == str(tmp_path)
    assert space.free_bytes(str(tmp_path / "a" / "b")) > 0


# ------------------------------------------------------------------------------------------------ progress

def lines(*records):
    return "\n".join(json.dumps(r) for r in records) + "\n"


def test_progress_folds_to_the_latest_state():
    text = lines({"event": "start", "pid": 7, "run_id": "r1", "bytes_total": 100},
                 {"event": "progress", "run_id": "r1", "files_done": 1, "files_total": 3, "bytes_done": 40,
                  "bytes_total": 100, "rate_bps": 2_000_000, "eta_s": 30}) + "garbage {\n"
    state = progress.parse_progress(text)
    assert state["started"] and not state["finished"] and state["bytes_done"] == 40 and state["pid"] == 7
    assert progress.format_progress(state) == "1/3 files, 40 B of 100 B (40%), 2.0 MB/s, 30 s left"


def test_progress_done_and_error():
    start = {"event": "start", "run_id": "r", "bytes_total": 10}
    done = progress.parse_progress(lines(start, {"event": "done", "files_done": 3, "files_total": 3, "bytes_done": 55 * 10 ** 9,
                                                 "elapsed_s": 1260}))
    assert done["finished"] and not done["failed"]
    assert progress.format_progress(done) == "download complete: 3/3 files, 55.0 GB in 21 min"
    error = progress.parse_progress(lines(start, {"event": "error", "error": "disk full"}))
    assert error["finished"] and error["failed"] and progress.format_progress(error).endswith(": disk full")


def test_a_new_start_forgets_the_previous_run():
    state = progress.parse_progress(lines({"event": "start", "run_id": "a"}, {"event": "done"}, {"event": "start", "run_id": "b"}))
    assert state["run_id"] == "b" and not state["finished"]


def test_progress_before_any_line():
    assert progress.format_progress(progress.parse_progress("")) == "waiting for the download to start"


def test_long_eta_reads_in_hours():
    state = {"started": True, "event": "progress", "files_done": 0, "files_total": 12, "bytes_done": 10 ** 9,
             "bytes_total": 55 * 10 ** 9, "rate_bps": 5 * 10 ** 6, "eta_s": 10800}
    assert progress.format_progress(state) == "0/12 files, 1.0 GB of 55.0 GB (1%), 5.0 MB/s, 3.0 h left"
    assert progress.format_progress(dict(state, eta_s=None)).endswith("unknown left")


# ------------------------------------------------------------------------------------------------ manifests, modes

def test_manifest_roundtrip(tmp_path):
    path = hub.manifest_path(str(tmp_path), "a/b", "c" * 40)
    assert path.endswith("manifests/models--a--b--%s.json" % ("c" * 40))
    assert hub.read_manifest(path) is None
    hub.write_manifest(path, {"files": {"config.json": 3}, "commit": "c" * 40})
    assert hub.read_manifest(path)["files"] == {"config.json": 3}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    Path(path).write_text('{"files": []}')
    assert hub.read_manifest(path) is None


def test_normalize_modes(tmp_path):
    (tmp_path / "d").mkdir(mode=0o700)
    (tmp_path / "d" / "f").write_text("x")
    os.chmod(tmp_path / "d" / "f", 0o600)
    os.symlink("f", str(tmp_path / "d" / "link"))
    assert verify.normalize_modes(str(tmp_path)) >= 2
    assert stat.S_IMODE(os.stat(tmp_path / "d").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(tmp_path / "d" / "f").st_mode) == 0o644
    assert verify.normalize_modes(str(tmp_path)) == 0
