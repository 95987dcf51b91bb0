# -*- coding: utf-8 -*-
"""plugin_utils.report_file, exactly (make mutation MODULES=report_file): the whole result and diff, the error
texts, a bare file name written in the current folder, the temporary file beside the report (hidden, named after
it) and a failed write that leaves the old report and no temporary file behind."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils import report_file
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.report_file import ReportFileError, parse_mode, write_report


def test_the_result_holds_changed_dest_and_copys_diff(tmp_path):
    dest = str(tmp_path / "h1.json")
    assert write_report(dest, "one\n") == {
        "changed": True, "dest": dest,
        "diff": {"before": "", "after": "one\n", "before_header": dest, "after_header": dest}}
    assert write_report(dest, "two\n", mode=0o600, check_mode=True) == {
        "changed": True, "dest": dest,
        "diff": {"before": "one\n", "after": "two\n", "before_header": dest, "after_header": dest}}
    assert (tmp_path / "h1.json").read_text(encoding="utf-8") == "one\n"  # check mode wrote nothing
    assert os.stat(dest).st_mode & 0o777 == 0o644


def test_the_same_content_with_another_mode_in_check_mode_is_a_change_that_is_not_made(tmp_path):
    dest = str(tmp_path / "h1.json")
    write_report(dest, "x", mode="0640")
    assert write_report(dest, "x", mode="0640")["changed"] is False
    assert write_report(dest, "x", mode="0644", check_mode=True)["changed"] is True
    assert os.stat(dest).st_mode & 0o777 == 0o640


def test_text_beyond_ascii_is_written_and_read_as_utf8(tmp_path):
    dest = str(tmp_path / "h1.json")
    write_report(dest, "Grüße ✓\n")
    assert (tmp_path / "h1.json").read_bytes() == "Grüße ✓\n".encode("utf-8")
    assert write_report(dest, "Grüße ✓\n")["changed"] is False


def test_a_bare_file_name_is_written_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert write_report("summary.json", "{}\n")["changed"] is True
    assert (tmp_path / "summary.json").read_text(encoding="utf-8") == "{}\n"
    assert sorted(os.listdir(tmp_path)) == ["summary.json"]


def test_the_missing_folder_is_named(tmp_path):
    folder = str(tmp_path / "none")
    with pytest.raises(ReportFileError) as info:
        write_report(folder + "/h1.json", "x")
    assert str(info.value) == "Destination directory %s does not exist" % folder


def test_a_bad_mode_is_named():
    with pytest.raises(ReportFileError) as info:
        parse_mode("rw-r--r--")
    assert str(info.value) == "mode must be octal like \"0644\", not 'rw-r--r--'"
    with pytest.raises(ReportFileError):
        parse_mode("   ")
    assert parse_mode(" 0755 ") == 0o755
    assert parse_mode("7777") == 0o7777
    assert parse_mode("0") == 0


def test_the_new_content_is_written_beside_the_report_as_a_hidden_file_then_renamed_in(tmp_path, monkeypatch):
    dest = str(tmp_path / "h1.json")
    seen = []
    real_replace = os.replace

    def watching_replace(src, dst):
        seen.append((os.path.dirname(src), os.path.basename(src), dst, open(src, encoding="utf-8").read(),
                     os.stat(src).st_mode & 0o777))
        real_replace(src, dst)

    monkeypatch.setattr(report_file.os, "replace", watching_replace)
    write_report(dest, "new\n", mode="0600")
    assert len(seen) == 1
    folder, name, target, content, mode = seen[0]
    assert (folder, target, content, mode) == (str(tmp_path), dest, "new\n", 0o600)
    assert name.startswith(".h1.json.") and len(name) > len(".h1.json.")
    assert sorted(os.listdir(tmp_path)) == ["h1.json"]


def test_a_failed_write_leaves_the_old_report_and_no_temporary_file(tmp_path, monkeypatch):
    dest = str(tmp_path / "h1.json")
    write_report(dest, "old\n")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(report_file.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_report(dest, "new\n")
    assert sorted(os.listdir(tmp_path)) == ["h1.json"]
    assert (tmp_path / "h1.json").read_text(encoding="utf-8") == "old\n"
