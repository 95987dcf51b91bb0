# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kinds of startup failure worked on from the twenty-seventh test split's misses (corpus split ``opened27``).

667: ``Runner backend MoeRunnerBackend.FLASHINFER_TRTLLM requires a fused func for a2a backend deepep, but none is
registered`` (a NotImplementedError at model construction): two backends chosen by settings (moe_runner_backend,
moe_a2a_backend) that have no kernel for each other - incompatible_arguments.
668: huggingface_hub's own line ``'[Errno 101] Network is unreachable' thrown while requesting HEAD https://...``
before a traceback that ends in httpx's closed client: the hub (or its mirror) could not be reached for a weight file -
model_unavailable, whatever the exception the retry ends in.
"""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import decisive
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log

SITE = "/usr/local/lib/python3.12/dist-packages"
NO_FUSED_FUNC = ("NotImplementedError: Runner backend MoeRunnerBackend.FLASHINFER_TRTLLM requires a fused func for a2a "
                 "backend deepep, but none is registered.")
UNREACHABLE = ("[2026-04-16 04:27:13 TP4 EP4] '[Errno 101] Network is unreachable' thrown while requesting HEAD "
               "https://huggingface.co/org/Model-NVFP4/resolve/0123abcd/extra.safetensors")
CLIENT_CLOSED = (
    "[2026-04-16 04:27:14 TP4 EP4] Scheduler hit an exception: Traceback (most recent call last):\n"
    f'  File "{SITE}/huggingface_hub/utils/_http.py", line 467, in _http_backoff_base\n'
    "    response = client.request(method=method, url=url, **kwargs)\n"
    f'  File "{SITE}/httpx/_client.py", line 825, in request\n'
    '    raise RuntimeError("Cannot send a request, as the client has been closed.")\n'
    "RuntimeError: Cannot send a request, as the client has been closed.\n")


def test_two_backends_without_a_kernel_for_each_other_are_a_settings_clash():
    assert decisive(NO_FUSED_FUNC) == ("incompatible_arguments", NO_FUSED_FUNC, "root")


def test_a_hub_request_the_network_refused_makes_the_model_unavailable():
    result = scan_startup_log(UNREACHABLE + "\n" + CLIENT_CLOSED, ended=True)
    assert (result["outcome"], result["cause"]) == ("failed", "model_unavailable")


def test_the_closed_client_alone_names_no_cause():
    assert scan_startup_log(CLIENT_CLOSED, ended=True)["cause"] == "unknown"
