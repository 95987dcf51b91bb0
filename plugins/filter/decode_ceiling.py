# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.decode_ceiling: the batch-1 decode bound of a model on a GPU box and the expected figure.

The model lives in module_utils/gpu/ceiling.py (shared with the sglang_probe module); this file only adapts
it to Jinja. Documentation: decode_ceiling.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import CeilingError
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import decode_ceiling as _decode_ceiling
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.filter_adapter import as_number, filter_errors

_KEYWORDS = ("gpu", "tp", "link", "pcie_gen", "pcie_width", "accept_length", "bandwidth_gbs", "gpu_facts", "p2p", "params_b",
             "active_params_b", "dtype", "bytes_per_param", "num_layers", "hidden_size", "allreduce_latency_us", "achievable_fraction",
             "cuda_graphs", "custom_allreduce", "torch_compile", "speculative", "sustained_fraction", "server_args",
             "nnodes", "internode_bus_gbs", "internode_latency_us")


@filter_errors("decode_ceiling", CeilingError, ValueError)
def decode_ceiling(model: Any, **kwargs: Any) -> Dict[str, Any]:
    """``model_config | gpufleet.sglang.decode_ceiling(gpu=..., tp=..., link=..., ...)``; errors become filter errors."""
    unknown = sorted(set(kwargs) - set(_KEYWORDS))
    if unknown:
        raise AnsibleFilterError("decode_ceiling: unknown argument(s) %s; known: %s" % (", ".join(unknown), ", ".join(_KEYWORDS)))
    model = as_number(model, "the input is a config.json dict or a parameter count in billions, not %r")
    return _decode_ceiling(model, **kwargs)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the decode ceiling."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"decode_ceiling": decode_ceiling}
