# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the second test split's misses (corpus split ``opened2``, 127-156).

Each kind is a rule in causes.py with its hint; the lines here are verbatim from the corpus logs (127: uvicorn's
log-level lookup behind a refused warmup; 139 and 156: GPU capability refusals by Triton and FlashInfer; 155: a
name from an optional dependency that is not installed) and from wordings of the same kinds, and every kind also
has a line it must not take.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

# 127, the decisive launch traceback's last frames (the warmup traceback before it only follows from it)
UVICORN_LOG_LEVEL = (
    '  File "/usr/local/lib/python3.10/dist-packages/uvicorn/config.py", line 385, in configure_logging\n'
    "    log_level = LOG_LEVELS[self.log_level]\n"
    "KeyError: 'INFO'"
)
WARMUP_REFUSED = (
    "Initialization failed. warmup error: HTTPConnectionPool(host='0.0.0.0', port=30000): Max retries exceeded with url: "
    "/generate (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f655bc34400>: Failed to "
    "establish a new connection: [Errno 111] Connection refused'))\n"
    "Exception in thread Thread-1 (_wait_and_warmup):\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/server.py", line 339, in _wait_and_warmup\n'
    "    res = requests.post(\n"
    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='0.0.0.0', port=30000): Max retries exceeded with url: "
    "/generate (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f655bc34400>: Failed to "
    "establish a new connection: [Errno 111] Connection refused'))"
)
# 139, a lone line as posted (with its stray quote)
TRITON_FP8 = "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\""
# 156, the FlashInfer refusal
FLASHINFER_TILING = ("RuntimeError: Error in function 'BatchPrefillWithRaggedKVCacheDispatched' at /usr/local/lib/python3.10/"
                     "dist-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh:2215: Unsupported max_mma_kv: 0")
# 155, the last frame and the NameError
UNDEFINED_NAME = (
    '  File "/home/tiger/.pyenv/versions/3.11.2/lib/python3.11/site-packages/sglang/srt/layers/quantization/gptq.py", '
    "line 328, in is_gptq_marlin_compatible\n"
    "    return check_marlin_supported(\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^\n"
    "NameError: name 'check_marlin_supported' is not defined"
)


@pytest.mark.parametrize("evidence, cause", [
    (UVICORN_LOG_LEVEL, "invalid_arguments"),
    ("ValueError: Unknown level: 'VERBOSE'", "invalid_arguments"),
    ("KeyError: 'INFO'", "unknown"),  # a KeyError alone says nothing
    (TRITON_FP8, "unsupported_gpu"),
    ("ptxas /tmp/x.ptx, line 124; error   : Feature 'wgmma' requires .target sm_90a or higher", "unsupported_gpu"),
    (FLASHINFER_TILING, "unsupported_gpu"),
    ("RuntimeError: Error in function 'BatchPrefillWithRaggedKVCacheDispatched': Unsupported max_mma_kv: 2", "unknown"),
    (UNDEFINED_NAME, "package_mismatch"),
    # a user's own script: no package's code, no sign of a missing dependency
    ('  File "/home/me/run.py", line 3, in <module>\n    main()\nNameError: name \'main\' is not defined', "unknown"),
])
def test_each_kind_and_what_it_must_not_take(evidence, cause):
    assert classify(evidence) == cause


def test_a_launch_traceback_explains_the_refused_warmup_before_it():
    """127's shape: the warmup's refused connection is logged first (SGLang's line, then the warmup thread's traceback),
    the launch traceback that explains it after."""
    result = scan_startup_log(WARMUP_REFUSED + "\nTraceback (most recent call last):\n" + UVICORN_LOG_LEVEL + "\n", ended=True)
    assert (result["outcome"], result["cause"], result["error_message"]) == ("failed", "invalid_arguments", "KeyError: 'INFO'")
    assert "log_level" in result["hint"] and "info, not INFO" in result["hint"]


def test_a_lone_capability_refusal_is_evidence_once_the_start_failed():
    assert is_notable(TRITON_FP8) and is_notable(FLASHINFER_TILING)
    result = scan_startup_log(TRITON_FP8 + "\n", ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "unsupported_gpu")
    assert "8.9" in result["hint"] and "BF16" in result["hint"]
    assert scan_startup_log(TRITON_FP8 + "\n", ended=False)["outcome"] != "failed"  # a line alone fails nothing


@pytest.mark.parametrize("cause, message, evidence, fragment", [
    ("unsupported_gpu", TRITON_FP8, TRITON_FP8, "compute capability 8.9"),
    ("unsupported_gpu", FLASHINFER_TILING, FLASHINFER_TILING, "attention_backend: triton"),
    ("package_mismatch", "NameError: name 'check_marlin_supported' is not defined", UNDEFINED_NAME, "check_marlin_supported"),
    ("invalid_arguments", "KeyError: 'INFO'", UVICORN_LOG_LEVEL, "lower-case"),
])
def test_each_kind_has_its_hint(cause, message, evidence, fragment):
    assert fragment in hint_for(cause, message, None, evidence)


def test_other_capability_refusals_keep_the_general_hint():
    hint = hint_for("unsupported_gpu", "RuntimeError: FlashAttention only supports Ampere GPUs or newer.", None,
                    "RuntimeError: FlashAttention only supports Ampere GPUs or newer.")
    assert "attention_backend" in hint and "8.9" not in hint
