# -*- coding: utf-8 -*-
"""model_cache_verify: what the copy source compares, the disk check before a copy, manifests, failures that
name the file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import hub
from ansible_collections.gpufleet.sglang.plugins.modules import model_cache_verify

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tools" / "standins" / "hub"))
import hub_standin  # noqa: E402  pylint: disable=wrong-import-position

SHARD2 = "model-00002-of-00003.safetensors"


def params(**kwargs):
    base = {"path": "", "expected": {}, "manifest": None, "require_tokenizer": True, "verify_checksums": False,
            "fail_on_problems": True, "check_space": False, "min_free_margin": "10%"}
    base.update(kwargs)
    return base


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "source"
    return folder, hub_standin.make_model(folder)


def test_an_empty_destination_needs_everything(tmp_path, source):
    _folder, sizes = source
    result = model_cache_verify.run(params(path=str(tmp_path / "dest"), expected=sizes, fail_on_problems=False))
    assert "failed_msg" not in result
    assert result["missing"] == sizes and result["missing_bytes"] == sum(sizes.values())
    assert not result["ok"]


def test_a_complete_copy_needs_nothing(source):
    folder, sizes = source
    result = model_cache_verify.run(params(path=str(folder), expected=sizes, check_space=True))
    assert result["ok"] and result["missing"] == {} and "failed_msg" not in result
    assert result["free_bytes"] == 0  # nothing to copy: the disk is not even measured
    assert result["msg"].endswith("11 files, 3 shard(s), complete")


def test_a_truncated_file_is_copied_again_and_named(source):
    folder, sizes = source
    with open(folder / SHARD2, "r+b") as handle:
        handle.truncate(64)
    result = model_cache_verify.run(params(path=str(folder), expected=sizes, fail_on_problems=False))
    assert result["missing"] == {SHARD2: sizes[SHARD2]}
    assert [p["file"] for p in result["problems"]] == [SHARD2]
    failed = model_cache_verify.run(params(path=str(folder), expected=sizes))
    assert failed["failed_msg"].startswith(str(folder) + " is not a complete model (1 problem): " + SHARD2 + ": truncated")


def test_no_room_for_the_copy_fails_with_both_numbers(tmp_path, source, monkeypatch):
    _folder, sizes = source
    monkeypatch.setattr(model_cache_verify, "free_bytes", lambda path: 1000)
    result = model_cache_verify.run(params(path=str(tmp_path / "dest"), expected=sizes, check_space=True,
                                           fail_on_problems=False))
    total = sum(sizes.values())
    assert "not enough disk space in %s for the 11 file(s) to copy" % (tmp_path / "dest") in result["failed_msg"]
    assert "(%d bytes)" % total in result["failed_msg"] and "(1000 bytes) are free" in result["failed_msg"]
    assert result["free_bytes"] == 1000


def test_manifest_sizes_and_checksums(tmp_path, source):
    folder, sizes = source
    manifest = tmp_path / "m.json"
    hub.write_manifest(str(manifest), {"files": sizes, "sha256": {SHARD2: "0" * 64}})
    assert "failed_msg" not in model_cache_verify.run(params(path=str(folder), manifest=str(manifest)))
    failed = model_cache_verify.run(params(path=str(folder), manifest=str(manifest), verify_checksums=True))
    assert SHARD2 + ": sha256" in failed["failed_msg"]
    missing = model_cache_verify.run(params(path=str(folder), manifest=str(tmp_path / "absent.json")))
    assert missing == {"failed_msg": "the manifest %s is missing or unreadable" % (tmp_path / "absent.json")}


def test_main_reports_through_exit_json(source, capsys):
    from ansible.module_utils.testing import patch_module_args  # pylint: disable=import-outside-toplevel
    folder, _sizes = source
    with patch_module_args({"path": str(folder)}):
        with pytest.raises(SystemExit) as exc:
            model_cache_verify.main()
    assert exc.value.code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["changed"] is False and out["shards"][0] == "model-00001-of-00003.safetensors"
    (folder / "config.json").unlink()
    with patch_module_args({"path": str(folder)}):
        with pytest.raises(SystemExit) as exc:
            model_cache_verify.main()
    assert exc.value.code == 1
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] and "config.json: missing" in out["msg"]
