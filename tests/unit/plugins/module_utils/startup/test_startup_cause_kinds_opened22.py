# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-second test split's misses (corpus split ``opened22``).

625: ``AttributeError: type object 'CompressionFormat' has no attribute 'nvfp4_pack_quantized'``: SGLang reads a member
of another package's class (compressed-tensors' enum) that the installed version does not have, the class's twin of
``module '...' has no attribute``: a weak sign of a package of another version (package_mismatch), after every rule
that names something more specific.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

OLD_ENUM = (
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/compressed_tensors/utils.py", line 17, in '
    "is_activation_quantization_format\n"
    "    CompressionFormat.nvfp4_pack_quantized.value,\n"
    "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "AttributeError: type object 'CompressionFormat' has no attribute 'nvfp4_pack_quantized'. Did you mean: 'pack_quantized'?")


def test_a_class_of_another_package_without_the_member_sglang_reads_is_a_package_mismatch():
    result = scan_startup_log(OLD_ENUM, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "package_mismatch")
    assert result["error_message"] == OLD_ENUM.splitlines()[-1]
    assert result["hint"].startswith("Installed packages do not fit each other")


@pytest.mark.parametrize("text, cause", [
    ("AttributeError: type object 'QuantizationType' has no attribute 'FP4'", "package_mismatch"),
    ("AttributeError: 'NoneType' object has no attribute 'value'", "unknown"),
])
def test_what_the_sign_takes_and_what_it_leaves(text, cause):
    assert classify(text) == cause
