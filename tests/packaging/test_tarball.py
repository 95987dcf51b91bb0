# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Galaxy tarball carries what runs and what documents it, nothing else (galaxy.yml build_ignore).

One `ansible-galaxy collection build` of this checkout into tmp_path (about a second), then its member list.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GALAXY = shutil.which("ansible-galaxy", path=str(BIN)) or shutil.which("ansible-galaxy")

# Code and data read at run time, the documents, and the two files ansible-galaxy writes.
EXPECTED_TOP = {"plugins", "roles", "playbooks", "meta", "docs", "data",
                "README.md", "COPYING", "CHANGELOG.md", "MANIFEST.json", "FILES.json"}
if (ROOT / "changelogs").is_dir():
    EXPECTED_TOP.add("changelogs")
NEVER_UNDER = ("tests/", "tools/", "molecule/", "benchmarks/", "inventory/", "build/")
NEVER_IN = ("__pycache__", ".egg-info", ".pyc")

pytestmark = pytest.mark.skipif(GALAXY is None, reason="ansible-core is not installed")


@pytest.fixture(name="members", scope="module")
def built_tarball_members(tmp_path_factory):
    """The member names of a freshly built collection tarball."""
    out = tmp_path_factory.mktemp("galaxy")
    env = dict(os.environ, ANSIBLE_HOME=str(out / "home"), ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CONFIG", None)
    subprocess.run([GALAXY, "collection", "build", "--force", "--output-path", str(out / "dist"), str(ROOT)],
                   env=env, cwd=str(out), check=True, capture_output=True, text=True, timeout=120)
    tarball = next((out / "dist").glob("gpufleet-sglang-*.tar.gz"))
    with tarfile.open(tarball) as tar:
        return [m.name for m in tar.getmembers()]


def test_top_level_entries(members):
    assert {name.split("/", 1)[0] for name in members} == EXPECTED_TOP


def test_nothing_for_development_or_build_output(members):
    assert not [n for n in members if n.startswith(NEVER_UNDER) or any(part in n for part in NEVER_IN)]
    assert not [n for n in members if any(part.startswith(".") for part in n.split("/"))]  # no dotfiles anywhere


def test_flag_tables_ship(members):
    """plugins/action/sglang_preflight.py reads data/sglang_flags/<release>.json at run time."""
    tables = {n.rsplit("/", 1)[1] for n in members if n.startswith("data/sglang_flags/") and n.endswith(".json")}
    assert tables == {p.name for p in (ROOT / "data" / "sglang_flags").glob("*.json")}
