# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the converged check in playbooks/tasks/deploy_host.yml: the run's inputs as one digest, and the
server record a run that restarts nothing reports (plugin_utils/converged.py). Each filter's documentation is
the ``<filter name>.yml`` file beside this one.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import code_digest
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import converged_outputs as _converged_outputs
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import converged_readiness as _converged_readiness
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import converged_results as _converged_results
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import fingerprint as _fingerprint

# The collection's root: plugins/filter/ is two folders below it.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def converged_fingerprint(host_vars: Any, extra: Optional[Dict[str, Any]] = None, part: str = "all") -> str:
    """``hostvars[inventory_hostname] | gpufleet.sglang.converged_fingerprint({...}[, part='host'])``: digest of the
    inputs of the whole chain, or of its host phases only."""
    try:
        return _fingerprint(host_vars, code_digest(COLLECTION_ROOT), extra, part)
    except ValueError as exc:
        raise AnsibleFilterError("converged_fingerprint: %s" % exc) from exc


def converged_outputs(host_vars: Any) -> Dict[str, Any]:
    """``hostvars[inventory_hostname] | gpufleet.sglang.converged_outputs``: the chain's outputs this run set."""
    return _converged_outputs(host_vars)


def converged_results(results: Any, check_mode: Any = False) -> Dict[str, Any]:
    """``sglang_server_results | gpufleet.sglang.converged_results(ansible_check_mode)``."""
    return _converged_results(results, bool(check_mode))


def converged_readiness(record: Any) -> Dict[str, Any]:
    """``sglang_server_results[name] | gpufleet.sglang.converged_readiness``: unit, port, path and wait."""
    return _converged_readiness(record)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the converged check."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"converged_fingerprint": converged_fingerprint, "converged_outputs": converged_outputs,
                "converged_results": converged_results,
                "converged_readiness": converged_readiness}
