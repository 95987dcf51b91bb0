# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-fifth test split's misses (corpus split ``opened25``).

656: ``ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable ... only supported for the 'flashinfer'
backend`` raised by ServerArgs' own ``_handle_speculative_decoding``: the word "speculative" in the frames made it a
speculative-decoding failure, but nothing of the draft model ran; the argument checks refused a combination of
settings (incompatible_arguments), with a hint on speculative_eagle_topk and page_size. A speculative failure raised
anywhere else (the draft worker, its weights) stays speculative_decoding_error.
"""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

SITE = "/usr/local/lib/python3.11/site-packages/sglang/srt"
REFUSED = (
    "Traceback (most recent call last):\n"
    f'  File "{SITE}/server_args.py", line 4944, in prepare_server_args\n'
    "    return ServerArgs.from_cli_args(raw_args)\n"
    f'  File "{SITE}/server_args.py", line 702, in __post_init__\n'
    "    self._handle_speculative_decoding()\n"
    f'  File "{SITE}/server_args.py", line 2041, in _handle_speculative_decoding\n'
    "    raise ValueError(\n"
    "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for paged "
    "attention backends. This combination is only supported for the 'flashinfer' backend.\n")

DRAFT = (
    "Traceback (most recent call last):\n"
    f'  File "{SITE}/speculative/eagle_worker.py", line 120, in __init__\n'
    "    super().__init__(server_args, gpu_id)\n"
    f'  File "{SITE}/server_args.py", line 702, in get_hf_config\n'
    "    return self.model_config\n"
    f'  File "{SITE}/speculative/eagle_utils.py", line 40, in load\n'
    "    raise ValueError(msg)\n"
    "ValueError: draft config has no hidden_size\n")


def test_speculative_settings_refused_by_the_argument_checks_are_incompatible_arguments():
    result = scan_startup_log(REFUSED, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "incompatible_arguments")
    assert result["hint"].startswith("The speculative settings do not fit the KV cache's layout: a speculative_eagle_topk "
                                     "above 1 with a page_size above 1")


def test_a_failure_raised_by_the_draft_worker_stays_speculative():
    assert classify(DRAFT) == "speculative_decoding_error"
