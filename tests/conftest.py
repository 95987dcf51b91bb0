# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by the tests that run ansible-playbook against this checkout."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(name="ansible_env")
def ansible_environment(tmp_path):
    """An environment in which ansible-playbook finds this checkout as gpufleet.sglang and writes only under tmp_path.

    No ansible.cfg and no vault password file from the caller's environment: the tests say everything they need.
    """
    tree = tmp_path / "collections" / "ansible_collections" / "gpufleet"
    tree.mkdir(parents=True)
    os.symlink(ROOT, tree / "sglang")
    env = dict(os.environ)
    env.update(ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"), ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "home" / "tmp"), ANSIBLE_REMOTE_TEMP=str(tmp_path / "home" / "rtmp"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_HOST_KEY_CHECKING="0",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_RETRY_FILES_ENABLED="0")
    for name in ("ANSIBLE_CONFIG", "ANSIBLE_VAULT_PASSWORD_FILE"):
        env.pop(name, None)
    return env
