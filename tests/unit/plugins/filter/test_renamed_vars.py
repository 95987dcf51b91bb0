# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Renamed role variables: the gpufleet.sglang.renamed_vars filter, and gpu_tuning honouring its old names.

The play runs gpu_tuning's preflight tasks on localhost (they read settings and the OS family, and change
nothing): an old name's value reaches the new name, Ansible prints a deprecation warning naming the new one, and a
new name that is set wins.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.filter import renamed_vars as plugin
from ansible_collections.gpufleet.sglang.plugins.filter.renamed_vars import FilterModule, deprecation_message, renamed_vars

ROOT = Path(__file__).resolve().parents[4]
PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")
NEW = ("gpu_tuning_iommu_acs_enable", "gpu_tuning_iommu_acs_kernel_args", "gpu_tuning_iommu_acs_disable_acs",
       "gpu_tuning_iommu_acs_reboot")


def test_each_old_name_set_is_returned_and_deprecated_once(monkeypatch):
    calls = []
    monkeypatch.setattr(plugin.display, "deprecated", lambda msg, version=None, **kw: calls.append((msg, version)))
    renames = {"old_b": "new_b", "old_a": "new_a", "old_c": "new_c"}
    assert FilterModule().filters()["renamed_vars"] is renamed_vars
    assert renamed_vars(renames, ["old_b", "unrelated", "old_a", "old_a"]) == ["old_a", "old_b"]
    assert calls == [(deprecation_message("old_a", "new_a"), "1.0.0"), (deprecation_message("old_b", "new_b"), "1.0.0")]
    assert deprecation_message("old_a", "new_a") == ("the variable old_a is deprecated: use new_a (until old_a is removed, new_a "
                                                     "takes its value; when both are set, new_a wins)")
    calls.clear()
    assert renamed_vars(renames, []) == [] and calls == []


@pytest.mark.parametrize("renames,defined,match", [
    (["old"], [], "must map old variable names to new ones"),
    ({"old": 1}, [], "must map old variable names to new ones"),
    ({"old": "new"}, "old", "must be the list of defined variable names"),
])
def test_bad_input_is_a_filter_error(renames, defined, match):
    with pytest.raises(AnsibleFilterError, match=match):
        renamed_vars(renames, defined)


def test_gpu_tuning_maps_every_old_name_to_a_documented_new_one():
    renames = yaml.safe_load((ROOT / "roles" / "gpu_tuning" / "vars" / "main.yml").read_text())["__gpu_tuning_renamed_vars"]
    assert renames == dict(zip(("gpu_tuning_r6_enable", "gpu_tuning_r6_kernel_args", "gpu_tuning_r6_acs_off",
                                "gpu_tuning_r6_reboot"), NEW))
    spec = yaml.safe_load((ROOT / "roles" / "gpu_tuning" / "meta" / "argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    defaults = yaml.safe_load((ROOT / "roles" / "gpu_tuning" / "defaults" / "main.yml").read_text())
    for old, new in renames.items():
        assert options[old]["description"].startswith("Deprecated, use O(%s)" % new) and "default" not in options[old]
        assert defaults[new].startswith("{{ %s | default(" % old) and old not in defaults


PLAY = """
- name: gpu_tuning's settings under old and new names
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Read the settings the way the role does
      ansible.builtin.include_role:
        name: gpufleet.sglang.gpu_tuning
        tasks_from: preflight
        public: true

    - name: Keep what the role would use
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'old_names': __gpu_tuning_old_names, 'values': values} | to_json }}"
        mode: "0600"
      vars:
        values:
          gpu_tuning_iommu_acs_enable: "{{ gpu_tuning_iommu_acs_enable }}"
          gpu_tuning_iommu_acs_kernel_args: "{{ gpu_tuning_iommu_acs_kernel_args }}"
          gpu_tuning_iommu_acs_disable_acs: "{{ gpu_tuning_iommu_acs_disable_acs }}"
          gpu_tuning_iommu_acs_reboot: "{{ gpu_tuning_iommu_acs_reboot }}"
"""


def run_play(env, tmp_path, extra):
    play = tmp_path / "play.yml"
    play.write_text(PLAY)
    out = tmp_path / "out.json"
    result = subprocess.run([PLAYBOOK, "-i", "localhost,", str(play), "-e", json.dumps(dict(extra, out=str(out)))],
                            cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(out.read_text()), " ".join((result.stdout + result.stderr).split())


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")
def test_old_names_still_work_with_a_deprecation_warning(ansible_env, tmp_path):
    got, output = run_play(ansible_env, tmp_path, {"gpu_tuning_r6_enable": True, "gpu_tuning_r6_kernel_args": ["iommu=pt", "pcie_acs_override=x"],
                                                   "gpu_tuning_r6_reboot": False})
    assert got["old_names"] == ["gpu_tuning_r6_enable", "gpu_tuning_r6_kernel_args", "gpu_tuning_r6_reboot"]
    assert got["values"] == {"gpu_tuning_iommu_acs_enable": True, "gpu_tuning_iommu_acs_kernel_args": ["iommu=pt", "pcie_acs_override=x"],
                             "gpu_tuning_iommu_acs_disable_acs": True, "gpu_tuning_iommu_acs_reboot": False}
    for old, new in (("gpu_tuning_r6_enable", "gpu_tuning_iommu_acs_enable"), ("gpu_tuning_r6_reboot", "gpu_tuning_iommu_acs_reboot")):
        assert "[DEPRECATION WARNING]: " + deprecation_message(old, new) in output, output
    assert "removed from collection 'gpufleet.sglang' version 1.0.0" in output
    assert "gpu_tuning_r6_acs_off is deprecated" not in output


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed")
def test_new_names_win_and_alone_warn_nothing(ansible_env, tmp_path):
    both, output = run_play(ansible_env, tmp_path, {"gpu_tuning_r6_enable": True, "gpu_tuning_iommu_acs_enable": False})
    assert both["values"]["gpu_tuning_iommu_acs_enable"] is False and both["old_names"] == ["gpu_tuning_r6_enable"]
    alone, output = run_play(ansible_env, tmp_path, {"gpu_tuning_iommu_acs_disable_acs": False})
    assert alone["old_names"] == [] and "DEPRECATION" not in output
    assert alone["values"] == {"gpu_tuning_iommu_acs_enable": False, "gpu_tuning_iommu_acs_kernel_args": ["iommu=pt"],
                               "gpu_tuning_iommu_acs_disable_acs": False, "gpu_tuning_iommu_acs_reboot": True}
