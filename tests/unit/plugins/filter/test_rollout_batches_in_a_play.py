# -*- coding: utf-8 -*-
"""rollout.yml's batches as Ansible runs them: a serving group is one unit, whole in one batch (the canary and
rollout_batch count units), and a --limit that cuts a group is refused before the rolling play starts.

Runs the real playbooks/rollout.yml with ansible-playbook against an inventory of ansible_connection=local hosts
that nothing connects to for real: --tags rollout_batches runs only the planning play and each batch's first task,
which says the batch's hosts and units (the deploy chain is not run)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")

INVENTORY = """
all:
  vars:
    ansible_connection: local
  hosts:
    s1: {}
  children:
    rest:
      hosts:
        s2: {}
    pair:
      vars:
        sglang_server_serving_group: pair
      hosts:
        pb: {}
    quad:
      vars:
        sglang_server_serving_group: quad
      hosts:
        q1: {}
        q2: {}
        q3: {}
    late:
      hosts:
        s9: {}
        pa: {}
        s3: {}
"""


def run_rollout(tmp_path, env, *extra):
    inventory = tmp_path / "hosts.yml"
    # pa is in group pair too (a second inventory source), but comes late in the inventory's order: the plan puts
    # it next to pb
    inventory.write_text(textwrap.dedent(INVENTORY), encoding="utf-8")
    groups = tmp_path / "groups.yml"
    groups.write_text("all:\n  children:\n    pair:\n      hosts:\n        pa: {}\n", encoding="utf-8")
    return subprocess.run([PLAYBOOK, "-i", str(inventory), "-i", str(groups), str(ROOT / "playbooks" / "rollout.yml"),
                           "--tags", "rollout_batches", *extra], cwd=tmp_path, env=dict(env, ANSIBLE_CALLBACK_RESULT_FORMAT="json"),
                          capture_output=True, text=True, check=False, timeout=300)


def batches(stdout):
    return re.findall(r'"msg": "Batch (\d+) of (\d+) \(([^)]*)\): ([^"]*)"', stdout)


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")
def test_a_group_is_one_unit_in_one_batch(tmp_path, ansible_env):
    result = run_rollout(tmp_path, ansible_env, "-e", "rollout_canary=1", "-e", "rollout_batch=1")
    assert result.returncode == 0, result.stdout + result.stderr
    got = batches(result.stdout)
    assert [(b[2], b[3]) for b in got] == [
        ("s1", "s1"), ("s2", "s2"), ("pb, pa", "pair (pb, pa)"), ("q1, q2, q3", "quad (q1, q2, q3)"), ("s9", "s9"), ("s3", "s3")], got
    assert {b[1] for b in got} == {"6"}


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")
def test_a_batch_of_two_units_holds_the_whole_group(tmp_path, ansible_env):
    result = run_rollout(tmp_path, ansible_env, "-e", "rollout_canary=1", "-e", "rollout_batch=50%")
    assert result.returncode == 0, result.stdout + result.stderr
    got = batches(result.stdout)
    # 6 units: the canary s1, then 3 units per batch (50%): the second batch has 6 hosts
    assert [b[2] for b in got] == ["s1", "s2, pb, pa, q1, q2, q3", "s9, s3"], got
    assert "3 batch(es) of units" in result.stdout


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")
def test_a_limit_that_cuts_a_group_is_refused_before_any_host(tmp_path, ansible_env):
    result = run_rollout(tmp_path, ansible_env, "--limit", "s1,q1,q2")
    assert result.returncode == 2, result.stdout + result.stderr
    text = result.stdout
    assert "Rollout refused before any host was touched: serving group quad: q3 is left out of this rollout" in text
    assert "--limit s1,q1,q2,q3" in text and "all:!quad" in text
    assert "PLAY [Roll out, canary first]" not in result.stdout
    assert not batches(result.stdout)


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")
def test_a_limit_that_keeps_whole_groups_runs(tmp_path, ansible_env):
    result = run_rollout(tmp_path, ansible_env, "--limit", "quad,s3", "-e", "rollout_batch=1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [b[2] for b in batches(result.stdout)] == ["q1, q2, q3", "s3"]
