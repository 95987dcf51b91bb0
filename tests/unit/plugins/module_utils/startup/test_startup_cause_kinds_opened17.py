# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the seventeenth test split's misses (corpus split ``opened17``).

Each kind is a rule in causes.py with its hint; the lines are small ones built from the wording of the corpus logs and
of other phrasings of the same family: 579 an Ascend operator whose kernel the installed CANN kernels cannot set up on
this SoC; 582 kernels an image ships built for other GPU architectures than the one running, before a crash in a
capture. Every kind has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

ASCEND = ("RuntimeError: arange_out_op_api:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:36 NPU function error: call "
          "aclnnArange failed, error code is 561103\n"
          "EZ9999: [PID: 5625] 2025-09-19-14:34:08.166.059 Parse dynamic kernel config fail.\n"
          "       AclOpKernelInit failed opType\n")
OTHER_ARCH = "[aiter] [module_quant] prebuilt .so targets ['gfx942'] but not the running arch gfx1201; rebuilding for gfx1201"


@pytest.mark.parametrize("evidence,cause", [
    (ASCEND, "package_mismatch"),
    ("EZ9999: AclOpKernelInit failed opType ArangeAiCore", "package_mismatch"),
    # an Ascend operator failing for its inputs is not the kernels' build
    ("EZ1001: The self tensor cannot be larger than 8 dimensions.", "unknown"),
    (OTHER_ARCH, "unsupported_gpu"),
    ("[aiter] [module_moe] prebuilt targets ['gfx942', 'gfx950'] but not the running arch gfx1100", "unsupported_gpu"),
    # a build for the running arch says nothing
    ("[aiter] start build [module_quant] for gfx942", "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_the_kinds_hints_say_what_to_do():
    ascend = hint_for("package_mismatch", "RuntimeError: ... aclnnArange failed", None, ASCEND)
    assert ascend.startswith("An Ascend operator's kernel could not be set up from the installed CANN kernels") and "A3" in ascend
    arch = hint_for("unsupported_gpu", OTHER_ARCH, None, OTHER_ARCH)
    assert arch.startswith("The image's GPU kernels are built for other architectures than this GPU's")


def test_a_crash_in_the_capture_after_kernels_of_another_arch_is_the_gpu():
    """582's order: the kernels of another arch rebuilt while capturing, a segfault, the scheduler dead."""
    log = ("Capturing batches (bs=1 avail_mem=15.96 GB):   0%|          | 0/1 [00:00<?, ?it/s]" + OTHER_ARCH + "\n"
           "Fatal Python error: Segmentation fault\n"
           "RuntimeError: Rank 0 scheduler died during initialization (exit code: -11).\n")
    assert scan_startup_log(log, ended=True)["cause"] == "unsupported_gpu"
