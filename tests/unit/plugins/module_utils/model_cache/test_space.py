# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache/space: every size unit, margins at their edges, byte counts as people read them, the space check."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache import space


@pytest.mark.parametrize("text, expected", [
    ("1", 1), ("1B", 1), ("1K", 1000), ("1KB", 1000), ("1M", 1000 ** 2), ("1MB", 1000 ** 2),
    ("1G", 1000 ** 3), ("1GB", 1000 ** 3), ("1T", 1000 ** 4), ("1TB", 1000 ** 4),
    ("1KiB", 1024), ("1MiB", 1024 ** 2), ("1GiB", 1024 ** 3), ("1TiB", 1024 ** 4),
    ("3tib", 3 * 1024 ** 4), (" 55 GiB ", 55 * 1024 ** 3), ("0.5KiB", 512), ("2.25k", 2250),
    (123, 123), (1.9, 1), (0, 0),
])
def test_parse_size_every_unit(text, expected):
    """Decimal units are powers of 1000, *iB ones of 1024, any case, spaces around; numbers are bytes."""
    assert space.parse_size(text) == expected


@pytest.mark.parametrize("value", ["1 PB", "1.5.5G", "-1G", "1e3", "G", "", "1 G B", True, False])
def test_parse_size_rejects_with_the_units_it_takes(value):
    """Anything else is refused with the value and the units that would do."""
    with pytest.raises(ValueError) as err:
        space.parse_size(value)
    if isinstance(value, bool):
        assert str(err.value) == "not a size: %r" % value
    else:
        assert str(err.value) == ("not a size: %r (use bytes, or a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
                                  % value)


@pytest.mark.parametrize("margin, needed, expected", [
    ("10%", 1000, 100), (" 10% ", 1000, 100), ("33%", 1000, 330), ("12.5%", 1000, 125), ("0%", 1000, 0),
    ("100%", 7, 7), ("150%", 1000, 1500), ("2GiB", 1000, 2 * 1024 ** 3), (0, 1000, 0), (4096, 10, 4096),
])
def test_margin_bytes(margin, needed, expected):
    """A percentage of what is fetched (0% allowed), or an absolute size."""
    assert space.margin_bytes(margin, needed) == expected


@pytest.mark.parametrize("margin", ["-1%", "-0.5%", "x%", "%"])
def test_margin_bytes_rejects(margin):
    """Negative or unreadable percentages are refused, naming the margin."""
    with pytest.raises(ValueError) as err:
        space.margin_bytes(margin, 1000)
    assert str(err.value) == "not a margin: %r" % margin


@pytest.mark.parametrize("count, expected", [
    (0, "0 B"), (999, "999 B"), (999.7, "999 B"), (1000, "1.0 KB"), (1049, "1.0 KB"), (1050, "1.1 KB"),
    (999_999, "1000.0 KB"), (1_000_000, "1.0 MB"), (1_234_567, "1.2 MB"), (10 ** 9, "1.0 GB"),
    (10 ** 12, "1.0 TB"), (5 * 10 ** 15, "5000.0 TB"), (-1500, "-1.5 KB"), (-999, "-999 B"),
])
def test_human_bytes(count, expected):
    """Decimal units, one decimal from KB up, whole bytes below 1000, TB the largest unit."""
    assert space.human_bytes(count) == expected


def test_existing_ancestor(tmp_path, monkeypatch):
    """The nearest existing folder at or above a path, relative paths read from the working folder."""
    assert space.existing_ancestor(str(tmp_path / "a" / "b" / "c")) == str(tmp_path)
    assert space.existing_ancestor(str(tmp_path)) == str(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert space.existing_ancestor("x/y") == str(tmp_path)
    assert space.existing_ancestor("/") == "/"


def test_free_bytes_is_what_an_unprivileged_writer_may_use(tmp_path, monkeypatch):
    """f_bavail blocks of f_frsize bytes (not f_bfree, not f_bsize), measured on the nearest existing folder."""
    asked = []

    def statvfs(path):
        asked.append(path)
        return os.statvfs_result((8192, 4096, 100, 90, 7, 50, 40, 30, 0, 255))  # f_bsize 8192, f_frsize 4096, f_bavail 7

    monkeypatch.setattr(space.os, "statvfs", statvfs)
    assert space.free_bytes(str(tmp_path / "not" / "yet")) == 7 * 4096
    assert asked == [str(tmp_path)]


def test_check_space_at_the_boundary():
    """Needed plus margin may use every free byte, not one more; nothing needed always fits."""
    assert space.check_space(100, 110, "10%", "/c") is None
    assert space.check_space(100, 109, "10%", "/c") == (
        "not enough disk space in /c for the model: it needs 100 B (100 bytes) plus a margin of 10 B (10%), "
        "110 B (110 bytes) in all, but only 109 B (109 bytes) are free. Free some space, point model_cache_dir at "
        "a bigger file system, or lower model_cache_min_free_margin.")
    assert space.check_space(0, 0, "5GB", "/c") is None
    assert space.check_space(-1, 0, 0, "/c") is None
    assert space.check_space(1, 0, 0, "/c", "Qwen/Qwen3-0.6B") == (
        "not enough disk space in /c for Qwen/Qwen3-0.6B: it needs 1 B (1 bytes) plus a margin of 0 B (0), "
        "1 B (1 bytes) in all, but only 0 B (0 bytes) are free. Free some space, point model_cache_dir at "
        "a bigger file system, or lower model_cache_min_free_margin.")
