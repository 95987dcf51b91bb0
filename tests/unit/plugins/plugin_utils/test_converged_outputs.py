# -*- coding: utf-8 -*-
"""plugin_utils.converged.converged_outputs: the one list of the chain's outputs, what the record keeps of it, and
that the converged check hands back every one of them when it skips the host phases."""

from __future__ import annotations

import os
import re

import yaml

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import converged_outputs, input_names, output_names

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def test_the_outputs_are_the_roles_facts_and_the_host_phases_state_lists():
    assert output_names() == (
        "nvidia_driver_installed_version", "nvidia_driver_plan",
        "gpu_tuning_gpu_facts", "gpu_tuning_policy", "gpu_tuning_env", "gpu_tuning_server_args", "gpu_tuning_warnings",
        "gpu_tuning_verify_results", "gpu_tuning_verify_result",
        "sglang_install_venv", "sglang_install_installed_version",
        "model_cache_model_path", "model_cache_served_model_name", "model_cache_env",
        "sglang_server_results",
        "nvidia_driver_state_items", "gpu_tuning_state_items", "model_cache_state_items")
    assert input_names(output_names()) == []


def test_only_the_outputs_this_run_set_are_kept_with_their_values():
    host_vars = {"nvidia_driver_plan": {"install_driver": False}, "sglang_server_results": {"main": {"port": 30000}},
                 "gpu_tuning_state_items": {"paths": ["/etc/x"]}, "sglang_server_args": {"tp_size": 2},
                 "ansible_host": "10.0.0.1", "model_cache_env": {}}
    assert converged_outputs(host_vars) == {
        "nvidia_driver_plan": {"install_driver": False}, "model_cache_env": {},
        "sglang_server_results": {"main": {"port": 30000}}, "gpu_tuning_state_items": {"paths": ["/etc/x"]}}
    assert not converged_outputs({"sglang_server_args": {}})


def test_the_converged_check_hands_back_every_output_it_records():
    with open(os.path.join(ROOT, "playbooks", "tasks", "deploy_host.yml"), encoding="utf-8") as handle:
        tasks = yaml.safe_load(handle)
    handed_back = set()
    for task in tasks:
        facts = task.get("ansible.builtin.set_fact") or {}
        if "__gpufleet_sglang_converged.outputs" in str(task.get("vars", {}).get("__out", "")):
            for name, value in facts.items():
                assert re.search(r"__out\.%s\b" % name, value), name
                handed_back.add(name)
    assert handed_back == set(output_names())
