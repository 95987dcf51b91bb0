# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of rollout.yml's batches, counted in units (a host, or a serving group with all its hosts): thin
adapters over plugin_utils/rollout_plan.py; errors become filter errors through plugin_utils/filter_adapter.py.
Each filter's documentation is the ``<filter name>.yml`` file beside this one."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.filter_adapter import filter_errors
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import GROUP_VAR, RolloutPlanError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import failed_units as _failed_units
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import plan_problem as _plan_problem
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import rollout_plan as _rollout_plan
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.rollout_plan import unit_summary as _unit_summary


@filter_errors("rollout_plan", RolloutPlanError)
def rollout_plan(hosts: Any, groups: Any, hostvars: Any, canary: Any = 1, batch: Any = "25%") -> Dict[str, Any]:
    """``ansible_play_hosts_all | gpufleet.sglang.rollout_plan(groups, hostvars, rollout_canary, rollout_batch)``:
    the play's hosts in batch order and the host count of each batch, a serving group never split."""
    return _rollout_plan(hosts, groups, _serving_groups(hosts, hostvars), canary, batch)


def rollout_plan_problem(hosts: Any, groups: Any, hostvars: Any, canary: Any = 1, batch: Any = "25%") -> str:
    """As ``rollout_plan``, but the reason it cannot be planned ('' when it can), for an assert's message."""
    return _plan_problem(hosts, groups, _serving_groups(hosts, hostvars), canary, batch)


def _serving_groups(hosts: Any, hostvars: Any) -> Dict[str, Any]:
    return {str(host): hostvars[host].get(GROUP_VAR) for host in hosts or []}


def rollout_failed_units(failed_hosts: Any, unit_of: Any) -> List[str]:
    """``failed hosts | gpufleet.sglang.rollout_failed_units(plan.unit_of)``: each failed unit once."""
    return _failed_units(failed_hosts, unit_of)


def rollout_unit_summary(units: Any, statuses: Any) -> List[Dict[str, Any]]:
    """``plan.units | gpufleet.sglang.rollout_unit_summary({host: status})``: each unit's outcome."""
    return _unit_summary(units, statuses)


class FilterModule:  # pylint: disable=too-few-public-methods
    """The rollout plan filters."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"rollout_plan": rollout_plan, "rollout_plan_problem": rollout_plan_problem, "rollout_failed_units": rollout_failed_units,
                "rollout_unit_summary": rollout_unit_summary}
