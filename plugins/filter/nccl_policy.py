# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.nccl_policy: GPU facts in, the NCCL environment and SGLang flag adjustments out.

The rules live in module_utils/gpu/nccl.py (pure, unit-tested rule by rule); which GPUs each SGLang instance's
tensor-parallel group runs on, the environment file's text and the input checks live in
plugin_utils/nccl_filter.py. This file only adapts them to Jinja for the gpu_tuning role. A filter rather than a
module because the decision needs nothing from the host but the gpu_facts result the role already has: it runs on
the controller, identically under --check, with no round trip. Documentation: nccl_policy.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import decide_nccl_policy
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.nccl_filter import (
    HEADER,
    NcclFilterError,
    passthrough_option,
    render_env_file,
    server_groups,
    tp_gpus_option,
)

__all__ = ["HEADER", "FilterModule", "nccl_policy"]


def _groups(facts: Dict[str, Any], tp_gpus: Optional[List[int]], size: Optional[int], servers: Any, extra_args: Any,
            server_env: Any) -> Dict[str, Any]:
    """Where the TP group(s) come from: ``tp_gpus``, else ``tp_size``, else the servers' arguments, else all GPUs."""
    if tp_gpus is not None:
        return {"groups": None, "sources": {"tp_gpus": "tp_gpus: GPUs %s, given explicitly" % sorted(set(tp_gpus))}}
    if size:
        return {"groups": None, "sources": {"tp_size": "tp_size: the first %d GPUs" % size}}
    if servers is not None and int(facts.get("gpu_count") or 0) > 0:
        found = server_groups(facts, servers, extra_args, server_env)
        if found["groups"]:
            return found
        if found["errors"]:
            return dict(found, groups=None, sources={"all GPUs": "all GPUs: every GPU of the host (no instance's TP group could be found)"})
    return {"groups": None, "sources": {"all GPUs": "all GPUs: every GPU of the host (no server arguments given)"}}


def nccl_policy(facts: Any, tp_gpus: Any = None, tp_size: Any = None, strict_acs: bool = False,
                passthrough_env: Any = None, servers: Any = None, server_extra_args: Any = None,
                server_env: Any = None) -> Dict[str, Any]:
    """``gpu_facts | gpufleet.sglang.nccl_policy(servers=[...], strict_acs=false, passthrough_env={})``.

    Returns decide_nccl_policy's result, each group with its ``source``, plus ``env_file`` (the file's text).
    Problems finding an instance's group are ``tp-group`` warnings and errors of the result, like the rules' own.
    """
    if not isinstance(facts, dict) or "gpu_count" not in facts:
        raise AnsibleFilterError("nccl_policy: the input must be the gpufleet.sglang.gpu_facts result (a dict with gpu_count, gpus, links)")
    try:
        passthrough = passthrough_option(passthrough_env)
        explicit = tp_gpus_option(tp_gpus)
        size = int(tp_size) if tp_size not in (None, "", 0) else None
        found = _groups(facts, explicit, size, servers, server_extra_args, server_env)
    except (NcclFilterError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("nccl_policy: %s" % exc) from exc
    policy = decide_nccl_policy(facts, explicit, tp_size=size, groups=found["groups"] or None,
                                strict_acs=bool(strict_acs), passthrough_env=passthrough)
    for group in policy["groups"]:
        group["source"] = found["sources"].get(group["name"], group["name"])
    warnings, errors = found.get("warnings", []), found.get("errors", [])
    policy["warnings"][:0] = [msg for _tag, msg in warnings]
    policy["tagged_warnings"][:0] = ["%s: %s" % tm for tm in warnings]
    policy["errors"][:0] = [msg for _tag, msg in errors]
    policy["tagged_errors"][:0] = ["%s: %s" % tm for tm in errors]
    if errors:
        policy["expected_transport"] = None
        for group in policy["groups"]:
            group["expected_transport"] = None
    policy["env_file"] = render_env_file(policy)
    return policy


class FilterModule:
    """Jinja filters of gpufleet.sglang for the NCCL policy."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"nccl_policy": nccl_policy}
