# -*- coding: utf-8 -*-
"""meta/runtime.yml's action group: every module of the collection is in it, and module_defaults reaches them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")


def test_the_all_group_lists_every_module_once():
    runtime = yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text(encoding="utf-8"))
    modules = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
    assert runtime["action_groups"]["all"] == modules


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")
def test_module_defaults_for_the_group_set_a_modules_option(ansible_env, tmp_path):
    progress = tmp_path / "progress.jsonl"
    progress.write_text('{"event": "start", "run_id": "r1", "files_total": 3, "bytes_total": 300}\n', encoding="utf-8")
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False,
        "module_defaults": {"group/gpufleet.sglang.all": {"path": str(progress)}},
        "tasks": [{"name": "Read the progress with the path from module_defaults",
                   "gpufleet.sglang.model_cache_progress": {"wait": 0},
                   "register": "progress"},
                  {"name": "Show it", "ansible.builtin.debug": {"msg": "files_total={{ progress.files_total }}"}}],
    }]), encoding="utf-8")
    result = subprocess.run([PLAYBOOK, "-i", "localhost,", "-c", "local", str(play)], cwd=tmp_path, env=ansible_env,
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "files_total=3" in result.stdout
