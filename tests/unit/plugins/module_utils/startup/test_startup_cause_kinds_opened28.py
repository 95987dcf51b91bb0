# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-eighth test split's miss (corpus split ``opened28``).

679: ``RuntimeError: No backend type associated with device type cpu`` at the end of a traceback through SGLang's
``broadcast_pyobj``: the process group the ranks share was made (by the framework that runs SGLang, verl here) with
NCCL alone, and SGLang sends Python objects over CPU tensors - the ranks cannot talk, distributed_init_failed, with a
hint that names the mixed backend.
"""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

SITE = "/opt/venv/lib/python3.10/site-packages"
NO_CPU_BACKEND = (
    "Traceback (most recent call last):\n"
    f'  File "{SITE}/sglang/srt/utils.py", line 868, in broadcast_pyobj\n'
    "    dist.broadcast(tensor_size, src=src, group=dist_group)\n"
    f'  File "{SITE}/torch/distributed/distributed_c10d.py", line 2726, in broadcast\n'
    "    work = group.broadcast([tensor], opts)\n"
    "RuntimeError: No backend type associated with device type cpu\n")


def test_a_process_group_without_a_cpu_backend_is_the_ranks_not_meeting():
    result = scan_startup_log(NO_CPU_BACKEND, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "distributed_init_failed")
    assert result["error_message"] == "RuntimeError: No backend type associated with device type cpu"


def test_its_hint_names_the_mixed_backend():
    hint = scan_startup_log(NO_CPU_BACKEND, ended=True)["hint"]
    assert "'cpu:gloo,cuda:nccl'" in hint
    assert hint.startswith("The process group the ranks used has no backend for the device of the tensors sent over it")


def test_the_same_words_for_another_device_are_read_the_same_way():
    result = scan_startup_log(NO_CPU_BACKEND.replace("device type cpu", "device type cuda"), ended=True)
    assert result["cause"] == "distributed_init_failed"
    assert "'cpu:gloo,cuda:nccl'" in result["hint"]
