# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""execution-environment.yml: `ansible-builder create` writes a build context that builds its own collection tarball.

No container runtime here, so the image itself is not built; what the image's galaxy stage runs on the context's
copy of the sources (`ansible-galaxy collection build`, then `install`) is run here on the same copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BUILDER = shutil.which("ansible-builder", path=str(BIN)) or shutil.which("ansible-builder")
GALAXY = shutil.which("ansible-galaxy", path=str(BIN)) or shutil.which("ansible-galaxy")
STEP = "gpufleet.sglang: build the collection tarball"

pytestmark = pytest.mark.skipif(BUILDER is None or GALAXY is None, reason="ansible-builder or ansible-core is not installed")


@pytest.fixture(name="context", scope="module")
def build_context(tmp_path_factory):
    """The build context `ansible-builder create` writes for this checkout."""
    out = tmp_path_factory.mktemp("ee") / "context"
    result = subprocess.run([BUILDER, "create", "-c", str(out), "--output-filename", "Containerfile"], cwd=ROOT,
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_the_base_image_is_centos_stream_9_with_python_3_12(context):
    spec = yaml.safe_load((ROOT / "execution-environment.yml").read_text(encoding="utf-8"))
    assert spec["images"]["base_image"]["name"] == "quay.io/centos/centos:stream9"
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    assert 'ARG EE_BASE_IMAGE="quay.io/centos/centos:stream9"' in containerfile
    assert "python3.12-pip [platform:rpm]" in (context / "_build" / "bindep.txt").read_text(encoding="utf-8")


def test_the_galaxy_stage_builds_and_installs_the_tarball_in_a_named_step(context):
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    galaxy_stage = containerfile.split("FROM base AS galaxy", 1)[1].split("FROM base AS builder", 1)[0]
    assert "COPY _build/gpufleet-sglang /build/gpufleet-sglang" in galaxy_stage
    step = next(line for line in galaxy_stage.splitlines() if STEP in line)
    assert re.search(r"ansible-galaxy collection build /build/gpufleet-sglang --output-path /build/dist && "
                     r"ansible-galaxy collection install /build/dist/gpufleet-sglang-\*\.tar\.gz -p /usr/share/ansible/collections$",
                     step), step
    assert "COPY --from=galaxy /usr/share/ansible /usr/share/ansible" in containerfile.split("FROM base AS final", 1)[1]


def test_the_copied_sources_build_the_same_collection(context, tmp_path):
    """What the step does, on the context's copy: the tarball builds, installs and verifies."""
    sources = context / "_build" / "gpufleet-sglang"
    env = dict(os.environ, ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CONFIG", None)
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)

    def galaxy(*args):
        result = subprocess.run([GALAXY, "collection", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                                check=False, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    galaxy("build", str(sources), "--output-path", str(tmp_path / "dist"))
    tarball = next((tmp_path / "dist").glob("gpufleet-sglang-*.tar.gz"))
    galaxy("install", str(tarball), "-p", str(tmp_path / "collections"))
    installed = tmp_path / "collections" / "ansible_collections" / "gpufleet" / "sglang"
    version = yaml.safe_load((ROOT / "galaxy.yml").read_text(encoding="utf-8"))["version"]
    assert json.loads((installed / "MANIFEST.json").read_text(encoding="utf-8"))["collection_info"]["version"] == version
    assert sorted(p.name for p in (installed / "data" / "sglang_flags").glob("*.json")) == \
        sorted(p.name for p in (ROOT / "data" / "sglang_flags").glob("*.json"))
    env["ANSIBLE_COLLECTIONS_PATH"] = str(tmp_path / "collections")
    assert "Successfully verified that checksums for 'gpufleet.sglang:" in galaxy("verify", "--offline", "gpufleet.sglang")
