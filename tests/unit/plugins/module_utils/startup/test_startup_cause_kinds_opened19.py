# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the nineteenth test split's misses (corpus split ``opened19``).

588: SGLang's own file importing a name another of its modules lacks (``unknown``: its files disagree, no package to
change). The rule that says so had matched, but the scanner's second reading, which joins lines a terminal may have
broken at its width, took two frame lines of the same length for broken ones, glued each to its code line, and then
found the import error alone (``package_mismatch``). The second reading is for evidence no rule read; a rule that names
no cause is a reading.
"""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import cause_in_tiers, classify, unwrap

FRAME_A = '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py", line 2278, in init_backend'
FRAME_B = '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py", line 2323, in get_backend'
OWN_IMPORT = (
    "Traceback (most recent call last):\n"
    + FRAME_A + "\n    self.attn_backend = self._get_attention_backend()\n"
    + FRAME_B + "\n    return TritonAttnBackend(self)\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/mem_cache/memory_pool.py", line 1208, in _get_value_buffer\n'
    "    from sglang.srt.layers.quantization.kvfp4_tensor import KVFP4QuantizeUtil\n"
    "ImportError: cannot import name 'KVFP4QuantizeUtil' from 'sglang.srt.layers.quantization.kvfp4_tensor' "
    "(/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/quantization/kvfp4_tensor.py)")


def test_joining_lines_glues_frames_to_their_code_and_finds_another_cause():
    """What the second reading does to such a traceback: the frame lines, the longest, read as a terminal's width, each
    glued to its code line; the no-cause rule no longer matches and the import error alone reads as a package's."""
    joined = unwrap(OWN_IMPORT)
    assert FRAME_B + "    return TritonAttnBackend(self)" in joined
    assert classify(joined) == "package_mismatch"


def test_sglangs_own_import_failure_names_no_cause_in_any_reading():
    assert classify(OWN_IMPORT) == "unknown"
    assert cause_in_tiers([OWN_IMPORT, "", ""]) == ("unknown", None, -1)


def test_the_same_import_from_another_package_still_reads_as_one():
    """What the guard must not take: a package importing a name SGLang no longer has is still package_mismatch, and
    a broken decisive line without any rule's reading is still joined."""
    other = OWN_IMPORT.replace("sglang/srt/mem_cache/memory_pool.py", "flashinfer/jit/attention.py")
    assert cause_in_tiers([other, "", ""])[0] == "package_mismatch"
    broken = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capac\nity; 21.10 GiB already allocated)"
    assert cause_in_tiers([broken, "", ""])[0] == "gpu_out_of_memory"
