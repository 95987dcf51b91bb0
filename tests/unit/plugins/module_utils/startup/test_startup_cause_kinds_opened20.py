# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twentieth test split's misses (corpus split ``opened20``).

607: ROCm's own words for a GPU page fault (``Memory access fault by GPU node-4 ... Reason: Unknown.``, printed by the
HSA runtime, glued to the capture's progress bar): the illegal memory access of an AMD GPU, with no Python traceback.
613: SGLang's import-time call of a transformers API that the installed transformers takes with another signature
(``TypeError: AutoImageProcessor.register() got multiple values for argument 'exist_ok'``): a package of another
version. Its frames pass through server_args.py only because that module was being imported, which is not an argument
check: the argument-check rule now wants a frame inside a function of those files, not their ``<module>`` line.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 607, as stored (a progress bar's frames before it; the carriage returns between them are the bar's)
FAULT = "Memory access fault by GPU node-4 (Agent handle: 0x560adb1966e0) on address 0x7f9d7a3bb000. Reason: Unknown."
BAR = "Capturing batches (bs=248 avail_mem=71.30 GB):   3%|\u258e         | 1/36 [00:25<14:48, 25.38s/it]"
# 613, whole
IMPORT_TIME_SIGNATURE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
    "    return _run_code(code, main_globals, None,\n"
    '  File "/sgl-workspace/sglang/python/sglang/launch_server.py", line 7, in <module>\n'
    "    from sglang.srt.server_args import prepare_server_args\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 67, in <module>\n'
    "    from sglang.srt.utils.hf_transformers_utils import check_gguf_file\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/configs/utils.py", line 18, in register_image_processor\n'
    "    AutoImageProcessor.register(config, None, image_processor, None, exist_ok=True)\n"
    "TypeError: AutoImageProcessor.register() got multiple values for argument 'exist_ok'")


@pytest.mark.parametrize("text", [
    FAULT, BAR + "\r" + FAULT, BAR + FAULT,
    "Memory access fault by GPU node-2 (Agent handle: 0x55d1) on address 0x7f00. Reason: Page not present or supervisor privilege.",
])
def test_rocm_s_memory_access_fault_is_an_illegal_memory_access(text):
    assert classify(text) == "illegal_memory_access"
    assert is_notable(text)


def test_rocm_s_memory_access_fault_alone_fails_the_start_with_its_cause_and_hint():
    result = scan_startup_log(BAR + "\r" + FAULT + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "illegal_memory_access")
    assert result["hint"].startswith("A GPU kernel read or wrote memory it does not own: a kernel bug, not a memory setting.")


@pytest.mark.parametrize("text", ["hipErrorMemoryAllocation: out of memory", "Memory access to the GPU node is slow",
                                  "[2025-11-26 12:16:09] Memory usage: 71.30 GB"])
def test_other_memory_words_are_not_a_fault(text):
    assert classify(text) != "illegal_memory_access"


def test_a_signature_error_at_import_time_is_a_package_of_another_version():
    assert classify(IMPORT_TIME_SIGNATURE) == "package_mismatch"
    result = scan_startup_log(IMPORT_TIME_SIGNATURE, ended=True)
    assert (result["cause"], result["error_message"]) == (
        "package_mismatch", "TypeError: AutoImageProcessor.register() got multiple values for argument 'exist_ok'")
    hint = hint_for("package_mismatch", result["error_message"], None, IMPORT_TIME_SIGNATURE)
    assert "got multiple values for argument 'exist_ok'" in hint


@pytest.mark.parametrize("message", ["got an unexpected keyword argument 'exist_ok'", "got multiple values for argument 'exist_ok'"])
def test_a_signature_error_inside_the_argument_checks_is_still_an_argument_error(message):
    """What the narrower argument-check rule must still take: a TypeError raised in a function of server_args.py."""
    text = ("Traceback (most recent call last):\n"
            '  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 612, in __post_init__\n'
            "    self._handle_deprecated_args()\n"
            '  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 700, in _handle_deprecated_args\n'
            "    check(**options)\n"
            "TypeError: _handle_deprecated_args() " + message)
    assert classify(text) == "incompatible_arguments"


def test_an_import_of_server_args_that_fails_otherwise_is_no_argument_error():
    text = ("Traceback (most recent call last):\n"
            '  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 67, in <module>\n'
            "    from sglang.srt.utils import something\n"
            "ValueError: could not read the platform")
    assert classify(text) == "unknown"
