# -*- coding: utf-8 -*-
"""plugin_utils.report_file: copy-with-content semantics (changed only on a difference, nothing written in check
mode, the diff, the mode, a missing folder an error)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.report_file import ReportFileError, parse_mode, write_report


def test_a_new_report_is_written_with_its_mode_and_a_diff(tmp_path):
    dest = str(tmp_path / "h1.json")
    out = write_report(dest, '{"a": 1}\n')
    assert out["changed"] is True
    assert out["diff"]["before"] == "" and out["diff"]["after"] == '{"a": 1}\n'
    assert (tmp_path / "h1.json").read_text(encoding="utf-8") == '{"a": 1}\n'
    assert os.stat(dest).st_mode & 0o777 == 0o644
    assert sorted(os.listdir(tmp_path)) == ["h1.json"]  # no temporary file left


def test_the_same_content_and_mode_is_no_change(tmp_path):
    dest = str(tmp_path / "h1.json")
    write_report(dest, "x")
    assert write_report(dest, "x")["changed"] is False


def test_another_mode_or_content_is_a_change(tmp_path):
    dest = str(tmp_path / "h1.json")
    write_report(dest, "x")
    assert write_report(dest, "x", mode="0600")["changed"] is True
    assert os.stat(dest).st_mode & 0o777 == 0o600
    out = write_report(dest, "y", mode="0600")
    assert (out["changed"], out["diff"]["before"], out["diff"]["after"]) == (True, "x", "y")


def test_check_mode_writes_nothing_but_says_what_would_change(tmp_path):
    dest = str(tmp_path / "h1.json")
    assert write_report(dest, "x", check_mode=True)["changed"] is True
    assert not os.path.exists(dest)


def test_a_missing_folder_is_an_error_as_with_copy(tmp_path):
    with pytest.raises(ReportFileError, match="does not exist"):
        write_report(str(tmp_path / "none" / "h1.json"), "x")


def test_parse_mode():
    assert parse_mode("0644") == 0o644
    assert parse_mode("600") == 0o600
    assert parse_mode(0o640) == 0o640
    for bad in ("0x1", "", "rw-r--r--", "06444", True):
        with pytest.raises(ReportFileError):
            parse_mode(bad)
