# -*- coding: utf-8 -*-
"""The shipped inventories: ct129 (the story's real box, never connected to) and the lab fleet.

ct129 is only ever syntax-checked and linted on the controller: the preflight playbook delegates to localhost,
and every other playbook is run with --syntax-check. Its vaulted API key is never decrypted (no password given).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
INVENTORY = shutil.which("ansible-inventory", path=str(BIN)) or shutil.which("ansible-inventory")
CT129 = ROOT / "inventory" / "ct129"
LAB = ROOT / "inventory" / "lab"

pytestmark = pytest.mark.skipif(PLAYBOOK is None or INVENTORY is None, reason="ansible-core is not installed")


def run(env, *args):
    return subprocess.run(list(args), cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)


@pytest.mark.parametrize("play", ["deploy.yml", "playbooks/rollout.yml", "playbooks/tune.yml", "playbooks/probe.yml", "playbooks/preflight.yml"])
def test_every_playbook_passes_the_syntax_check_against_ct129(ansible_env, play):
    result = run(ansible_env, PLAYBOOK, "-i", str(CT129), play, "--syntax-check", "-e", "tune_host=ct129")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ct129_launch_flags_are_clean_for_its_release_linted_without_connecting(ansible_env):
    result = run(ansible_env, PLAYBOOK, "-i", str(CT129), "playbooks/preflight.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok: [ct129 -> localhost]" in result.stdout
    assert re.search(r"SGLang 0\.5\.23 launch flags: 0 errors, 0 warnings", result.stdout), result.stdout
    assert "ct129.example.internal" not in result.stdout + result.stderr  # nothing tried to reach it


def test_ct129_is_the_story_box_and_its_key_stays_in_the_vault():
    host = yaml.safe_load((CT129 / "host_vars" / "ct129" / "main.yml").read_text())
    args = host["sglang_server_args"]
    assert (args["tp_size"], args["speculative_algorithm"], args["speculative_num_steps"]) == (2, "NEXTN", 3)
    assert host["sglang_server_env"]["CUDA_VISIBLE_DEVICES"] == "0,1" and host["sglang_server_probe"]["min_decode_tps"] > 0
    assert host["sglang_server_api_key"] == "{{ vault_sglang_api_key }}" and "api_key" not in args
    vault = (CT129 / "host_vars" / "ct129" / "vault.yml").read_text()
    assert "$ANSIBLE_VAULT;1.1;AES256" in vault and "sk-ct129" not in vault


def test_lab_fleet_has_four_hosts_of_three_kinds_each_with_its_model(ansible_env):
    listed = json.loads(run(ansible_env, INVENTORY, "-i", str(LAB), "--list").stdout)
    hostvars = listed["_meta"]["hostvars"]
    assert sorted(hostvars) == ["lab1", "lab2", "lab3", "lab4"]
    profiles = {name: hostvars[name]["lab_gpu_profile"] for name in hostvars}
    assert profiles == {"lab1": "a6000x2-pcie-phb", "lab2": "a6000x2-pcie-phb", "lab3": "rtx4090x2-pcie-nop2p", "lab4": "l40sx4-pcie-sys"}
    models = {name: hostvars[name]["sglang_server_args"]["model_path"] for name in hostvars}
    assert models["lab1"] == models["lab2"] == "Qwen/Qwen3.6-27B" and len(set(models.values())) == 3


def test_lab_fleet_launch_flags_are_clean(ansible_env):
    result = run(ansible_env, PLAYBOOK, "-i", str(LAB), "playbooks/preflight.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(re.findall(r"SGLang 0\.5\.23 launch flags: 0 errors", result.stdout)) == 4, result.stdout
