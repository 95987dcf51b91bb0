# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The batches of a rollout, counted in units: a host on its own, or a serving group with all its hosts.

Why a function of its own: Ansible's ``serial`` counts hosts, in the play's host order. A serving group
(docs/serving-groups.md) is ONE SGLang instance over several hosts, and a group updated in part is a broken
instance (its ranks would run different configs). So ``rollout.yml`` decides the batches here, on the controller,
before any host is touched: the play's hosts are put in the order of their units (a group's hosts next to each
other) and ``serial`` becomes the list of host counts per batch, so that no batch ends inside a group. The canary
is the first unit(s), ``rollout_batch`` (N or N%) counts units, and the failure budget counts failed units.

A ``--limit`` that cuts a group in half is refused here, naming the group and the hosts left out.

Runs on the controller (filter ``gpufleet.sglang.rollout_plan``); plain data in, plain data out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Dict, List, Optional

GROUP_VAR = "sglang_server_serving_group"


class RolloutPlanError(ValueError):
    """The rollout cannot be batched; the message names the variable or the hosts and says what to do."""


def _count(value: Any, units: int, variable: str, allow_zero: bool) -> int:
    """``rollout_canary``/``rollout_batch`` as a number of units: N, or N% of ``units`` (rounded down, at least 1)."""
    text = str(value).strip()
    match = re.fullmatch(r"([0-9]+)(%?)", text)
    if isinstance(value, bool) or not match:
        raise RolloutPlanError("%s is %r: a whole number%s or a percentage 1-100%% of the units, e.g. 25%%"
                               % (variable, value, " >= 0" if allow_zero else " >= 1"))
    number = int(match.group(1))
    if match.group(2):
        if not 1 <= number <= 100:
            raise RolloutPlanError("%s is %r: a percentage from 1%% to 100%%" % (variable, value))
        return max(1, int(math.floor(number * units / 100.0)))
    if number < (0 if allow_zero else 1):
        raise RolloutPlanError("%s is %r: a whole number%s" % (variable, value, " >= 0" if allow_zero else " >= 1"))
    return number


def rollout_units(hosts: Any, groups: Any, serving_groups: Any) -> List[Dict[str, Any]]:
    """The play's hosts as units, in the order of each unit's first host in ``hosts``.

    ``hosts``: the play's hosts in their order (``ansible_play_hosts_all``: the inventory's order, after
    ``--limit``). ``groups``: Ansible's ``groups`` (inventory group -> its hosts). ``serving_groups``: host ->
    its ``sglang_server_serving_group`` (none or '' for a host on its own), for every host in ``hosts``.

    Returns ``[{name, group, hosts}]``: ``group`` true for a serving group (``name`` is the group's name, ``hosts``
    its hosts in the play's order), false for a single host (``name`` is the host). Raises
    :class:`RolloutPlanError` when a group is only partly in the play (``--limit``), or a host names a group it is
    not in, or a group's hosts name different groups.
    """
    order = [str(host) for host in hosts or []]
    groups = groups if isinstance(groups, Mapping) else {}
    serving_groups = serving_groups if isinstance(serving_groups, Mapping) else {}
    in_play = set(order)
    units: List[Dict[str, Any]] = []
    placed: Dict[str, Dict[str, Any]] = {}
    for host in order:
        name = serving_groups.get(host)
        if name is None or (isinstance(name, str) and not name.strip()):
            units.append({"name": host, "group": False, "hosts": [host]})
            continue
        name = str(name)
        if name in placed:
            continue
        members = [str(member) for member in groups.get(name) or []]
        if host not in members:
            raise RolloutPlanError(
                "%s: host %s names serving group %s, but %s is not one of its hosts in this inventory (%s); put the host "
                "in that inventory group or fix the name" % (GROUP_VAR, host, name, host,
                                                             ", ".join(members) if members else "no such group"))
        others = sorted({str(serving_groups.get(m) or "none") for m in members if m in in_play and serving_groups.get(m) != name})
        if others:
            raise RolloutPlanError(
                "%s: the hosts of inventory group %s name different serving groups (%s and %s); every host of a "
                "serving group names the same group, and a host on its own is in no serving group's inventory group (set it in "
                "the group's group_vars)" % (GROUP_VAR, name, name, ", ".join(others)))
        left_out = [member for member in members if member not in in_play]
        if left_out:
            raise RolloutPlanError(
                "serving group %s: %s %s left out of this rollout (--limit), but a serving group is ONE instance and is "
                "never half updated. Add %s to --limit (e.g. --limit %s), or leave the whole group "
                "out (e.g. --limit 'all:!%s')"
                % (name, ", ".join(left_out), "is" if len(left_out) == 1 else "are", "it" if len(left_out) == 1 else "them",
                   _limit_hint(order, members), name))
        unit = {"name": name, "group": True, "hosts": [member for member in order if member in set(members)]}
        placed[name] = unit
        units.append(unit)
    return units


def _limit_hint(order: List[str], members: List[str]) -> str:
    """A --limit that keeps the play's hosts and adds the group's missing ones."""
    wanted = list(order) + [member for member in members if member not in order]
    return ",".join(wanted)


def rollout_plan(hosts: Any, groups: Any, serving_groups: Any, canary: Any = 1, batch: Any = "25%") -> Dict[str, Any]:
    """The rollout's batches in units, and what Ansible needs to run them.

    ``canary``: the first batch's number of units (``rollout_canary``, 0: no canary batch); ``batch``: the later
    batches' size (``rollout_batch``), N units or N% of all units (rounded down, at least 1), as Ansible computes a
    percentage of ``serial``. A serving group larger than what is left of a batch still goes whole into it: a batch
    counts units, so it may hold more hosts than N.

    Returns ``{hosts, serial, batches, units, unit_of, described, labels, batch_of}``: ``hosts`` the play's hosts in batch order (a group's
    hosts next to each other), ``serial`` the number of hosts of each batch (for the play's ``serial``),
    ``batches`` each batch's unit names, ``units`` as :func:`rollout_units`, ``unit_of`` host -> its unit's name, ``described`` each batch as
    text (``pair (pa, pb); s2``), ``labels`` unit -> its text, ``batch_of`` host -> its batch's number (from 1).
    """
    units = rollout_units(hosts, groups, serving_groups)
    canary_units = _count(canary, len(units), "rollout_canary", allow_zero=True)
    batch_units = _count(batch, len(units), "rollout_batch", allow_zero=False)
    batches: List[List[Dict[str, Any]]] = []
    rest = list(units)
    if canary_units and rest:
        batches.append(rest[:canary_units])
        rest = rest[canary_units:]
    while rest:
        batches.append(rest[:batch_units])
        rest = rest[batch_units:]
    return {
        "hosts": [host for chunk in batches for unit in chunk for host in unit["hosts"]],
        "serial": [sum(len(unit["hosts"]) for unit in chunk) for chunk in batches],
        "batches": [[unit["name"] for unit in chunk] for chunk in batches],
        "units": units,
        "unit_of": {host: unit["name"] for unit in units for host in unit["hosts"]},
        "described": ["; ".join(describe(unit) for unit in chunk) for chunk in batches],
        "labels": {unit["name"]: describe(unit) for unit in units},
        "batch_of": {host: number for number, chunk in enumerate(batches, 1) for unit in chunk for host in unit["hosts"]},
    }


def describe(unit: Mapping) -> str:
    """A unit as the reports name it: a host by its name, a serving group by its name with its hosts."""
    if unit.get("group"):
        return "%s (%s)" % (unit["name"], ", ".join(unit["hosts"]))
    return str(unit["name"])


def plan_problem(hosts: Any, groups: Any, serving_groups: Any, canary: Any = 1, batch: Any = "25%") -> str:
    """Why the rollout cannot be planned ('' when it can): the playbook refuses with this text before any host is
    touched (an assert's message reads better than a filter's error)."""
    try:
        rollout_plan(hosts, groups, serving_groups, canary, batch)
    except RolloutPlanError as exc:
        return str(exc)
    return ""


def failed_units(failed_hosts: Any, unit_of: Any) -> List[str]:
    """The units that failed, each once, in the order their first failed host is given: the failure budget counts
    these (a group whose follower failed is one failure, however many of its nodes failed with it)."""
    unit_of = unit_of if isinstance(unit_of, Mapping) else {}
    seen: List[str] = []
    for host in failed_hosts or []:
        name = str(unit_of.get(str(host), host))
        if name not in seen:
            seen.append(name)
    return seen


def unit_summary(units: Any, statuses: Any) -> List[Dict[str, Any]]:
    """Each unit's outcome from its hosts' (``statuses``: host -> updated/unchanged/failed; a host not in it was not
    touched): failed if any host failed, else updated if any was updated, else unchanged when every host was
    reached, untouched when none was, else partly reached (a host of a group never got its turn: unreachable).
    Returns ``[{unit, group, hosts, status}]`` in the rollout's order."""
    statuses = statuses if isinstance(statuses, Mapping) else {}
    out: List[Dict[str, Any]] = []
    for unit in units or []:
        seen = [statuses.get(host) for host in unit["hosts"]]
        status: Optional[str]
        if "failed" in seen:
            status = "failed"
        elif "updated" in seen:
            status = "updated"
        elif seen and all(item == "unchanged" for item in seen):
            status = "unchanged"
        elif any(seen):
            status = "partly reached"
        else:
            status = "untouched"
        out.append({"unit": unit["name"], "group": bool(unit["group"]), "hosts": list(unit["hosts"]), "status": status})
    return out
