# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A serving group: the hosts of one inventory group that run ONE SGLang instance together (docs/serving-groups.md).

Why a pure function: SGLang runs one instance over several hosts with ``--nnodes``, ``--node-rank`` and
``--dist-init-addr``, and every node must get the same command apart from its rank. What operators get wrong
again and again (a rank twice, a group size that does not divide ``tp_size * pp_size``, the rendezvous address
of the wrong node, NCCL picking the wrong interface) is decided here, from the group's hosts and their facts,
before anything on a host changes, with the variable at fault named.

What it decides, for every host of the group:

- ``nnodes``: the group's size;
- ``node_rank``: the host's place in a stable order (hostnames in natural order: ``lab2`` before ``lab10``),
  overridden per host with ``sglang_server_serving_group_node_rank``; the hosts without an override fill the
  ranks left, in that order;
- ``dist_init_addr``: rank 0's address (``sglang_server_serving_group_address`` of rank 0, else its default IPv4
  address from the facts) and ``sglang_server_serving_group_port``;
- ``env``: ``NCCL_SOCKET_IFNAME`` and ``GLOO_SOCKET_IFNAME``, the host's own interface on the subnet of the
  interface that carries rank 0's address (each node names its own device; the devices may differ by name).

The inputs are plain data (the playbook hands over each member's facts), so the unit tests drive every rule.
Runs on the controller (filter ``gpufleet.sglang.serving_group``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import is_secret_name

GROUP_VAR = "sglang_server_serving_group"
PORT_VAR = "sglang_server_serving_group_port"
RANK_VAR = "sglang_server_serving_group_node_rank"
ADDRESS_VAR = "sglang_server_serving_group_address"
ARGS_VAR = "sglang_server_args"
# What playbooks/tasks/serving_group.yml registers: the host's ``ip -o -4 addr show`` (see interfaces_from_ip).
IP_ADDR_FACT = "__gpufleet_sglang_ip_addr"
# Set by the group, never by hand: a hand-set value would differ between nodes or from the group.
GROUP_ARGS = ("nnodes", "node_rank", "dist_init_addr", "nccl_init_addr")


class ServingGroupError(ValueError):
    """The serving group cannot be formed; the message names the variable and what to do."""


def natural_key(name: str) -> Tuple[Any, ...]:
    """``lab2`` before ``lab10``: digits compare as numbers, the rest as text."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _whole(value: Any) -> Optional[int]:
    """A whole number given as int or digits; None for anything else (a bool is not a number here)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def interfaces_from_facts(facts: Mapping) -> List[Dict[str, Any]]:
    """The IPv4 addresses of a host's interfaces, from Ansible's network facts (``ansible_facts``).

    Each ``{device, address, network}`` (network as ``ipaddress.IPv4Network``); the primary address and the
    secondaries. Ansible keys an interface's facts by its name with ``-`` and ``:`` made ``_``.
    """
    found: List[Dict[str, Any]] = []
    for name in facts.get("interfaces") or []:
        entry = facts.get(str(name).replace("-", "_").replace(":", "_"))
        if not isinstance(entry, Mapping):
            continue
        device = str(entry.get("device") or name)
        addresses = [entry.get("ipv4")] + list(entry.get("ipv4_secondaries") or [])
        for item in addresses:
            if not isinstance(item, Mapping) or not item.get("address"):
                continue
            try:
                network = ipaddress.IPv4Network("%s/%s" % (item["address"], item.get("netmask") or "32"), strict=False)
                address = ipaddress.IPv4Address(str(item["address"]))
            except ValueError:
                continue
            found.append({"device": device, "address": address, "network": network})
    return found


def interfaces_from_ip(text: Any) -> List[Dict[str, Any]]:
    """The IPv4 addresses in ``ip -o -4 addr show`` output (``2: host0    inet 10.213.82.10/24 brd ... host0``).

    Why besides the facts: Ansible lists interfaces from /sys/class/net, which a container sharing its host's sysfs
    (systemd-nspawn with a network namespace, the lab's hosts) shows for the wrong namespace; ``ip`` asks the kernel
    for the host's own namespace.
    """
    found: List[Dict[str, Any]] = []
    for line in str(text or "").splitlines():
        match = re.match(r"^\s*\d+:\s+(\S+?)(?:@\S+)?\s+inet\s+(\d+\.\d+\.\d+\.\d+)(?:/(\d+))?", line)
        if not match:
            continue
        try:
            network = ipaddress.IPv4Network("%s/%s" % (match.group(2), match.group(3) or "32"), strict=False)
        except ValueError:
            continue
        found.append({"device": match.group(1), "address": ipaddress.IPv4Address(match.group(2)), "network": network})
    return found


def _interfaces(member: Mapping) -> List[Dict[str, Any]]:
    """A member's addresses: what ``ip`` said (when the play asked it), then the facts."""
    seen = set()
    result = []
    for item in interfaces_from_ip(member.get("ip_addr")) + interfaces_from_facts(member.get("facts") or {}):
        key = (item["device"], item["address"])
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def _host_address(host: str, member: Mapping) -> str:
    """The address a member takes part in the group with: its own setting, else its default IPv4 address."""
    given = member.get("address")
    if given:
        return str(given)
    default = (member.get("facts") or {}).get("default_ipv4") or {}
    if isinstance(default, Mapping) and default.get("address"):
        # The host's own `ip` list (read in this play, on the host) wins over facts that disagree with it. Seen on
        # lab hosts (Molecule multinode: rollout.yml after the idempotence run and a failed deploy; cause not found):
        # rank 0's default_ipv4 held the other node's address, which is on none of its interfaces. Then the
        # default interface's address as `ip` lists it.
        listed = interfaces_from_ip(member.get("ip_addr"))
        if listed and not any(str(item["address"]) == str(default["address"]) for item in listed):
            same_device = [item for item in listed if item["device"] == default.get("interface")]
            if same_device:
                return str(same_device[0]["address"])
        return str(default["address"])
    raise ServingGroupError(
        "%s: host %s has no address for the serving group: set %s on it (the address the other nodes reach it at) "
        "or gather its network facts" % (ADDRESS_VAR, host, ADDRESS_VAR))


def _ranks(hosts: List[str], members: Mapping) -> Dict[str, int]:
    """Every host's node_rank: the overrides first, then the stable order fills the ranks left."""
    size = len(hosts)
    taken: Dict[int, str] = {}
    ranks: Dict[str, int] = {}
    for host in hosts:
        raw = members[host].get("node_rank")
        if raw is None or raw == "":
            continue
        rank = _whole(raw)
        if rank is None or not 0 <= rank < size:
            raise ServingGroupError("%s on host %s is %r: a whole number from 0 to %d (the group has %d hosts)"
                                    % (RANK_VAR, host, raw, size - 1, size))
        if rank in taken:
            raise ServingGroupError("%s: rank %d is set on both %s and %s; every host of the group needs its own rank"
                                    % (RANK_VAR, rank, taken[rank], host))
        taken[rank] = host
        ranks[host] = rank
    free = iter(r for r in range(size) if r not in taken)
    for host in hosts:
        if host not in ranks:
            ranks[host] = next(free)
    return ranks


def _divisibility(args: Mapping, size: int) -> None:
    """SGLang's own rules for several nodes: (tp*pp) % nnodes == 0, no data-parallel replicas across nodes."""
    tp, pp, dp = (_whole(args.get(key, 1)) for key in ("tp_size", "pp_size", "dp_size"))
    for key, value in (("tp_size", tp), ("pp_size", pp), ("dp_size", dp)):
        if value is None or value < 1:
            raise ServingGroupError("%s.%s is %r: a whole number of at least 1" % (ARGS_VAR, key, args.get(key)))
    if (tp * pp) % size:  # type: ignore[operator]
        raise ServingGroupError(
            "%s.tp_size * pp_size is %d, which the serving group's %d hosts do not divide (SGLang: tp_size must be "
            "divisible by number of nodes): make tp_size * pp_size a multiple of %d or change the group"
            % (ARGS_VAR, tp * pp, size, size))  # type: ignore[operator]
    if dp > 1:  # type: ignore[operator]
        raise ServingGroupError(
            "%s.dp_size is %d: SGLang does not run data-parallel replicas across nodes; use attn_dp_size, or one "
            "serving group per replica" % (ARGS_VAR, dp))


def _interface(host: str, member: Mapping, network: ipaddress.IPv4Network) -> str:
    """The device of ``host`` with an address in ``network`` (rank 0's subnet)."""
    for item in _interfaces(member):
        if item["address"] in network:
            return str(item["device"])
    raise ServingGroupError(
        "%s: host %s has no interface on %s, the subnet of rank 0's address; NCCL and Gloo would pick another one: "
        "connect it to that network or set %s on rank 0 to an address on a network every node shares"
        % (GROUP_VAR, host, network, ADDRESS_VAR))


def serving_group(group: Any, members: Any, port: Any, args: Any) -> Dict[str, Dict[str, Any]]:
    """The group's launch settings per host.

    ``group``: the inventory group's name (``sglang_server_serving_group``). ``members``: host name -> ``{facts,
    node_rank, address}`` for every host of the group (``facts``: the host's ``ansible_facts``; ``node_rank`` and
    ``address``: its own ``sglang_server_serving_group_node_rank`` / ``_address`` or none). ``port``:
    ``sglang_server_serving_group_port``. ``args``: the group's ``sglang_server_args``.

    Returns host -> ``{group, nnodes, node_rank, dist_init_addr, leader, members, args, env}`` with ``args`` the
    three SGLang options and ``members`` the hosts in rank order. Raises :class:`ServingGroupError` naming the
    variable at fault.
    """
    if not isinstance(group, str) or not group.strip():
        raise ServingGroupError("%s is %r: the name of the inventory group whose hosts run one instance" % (GROUP_VAR, group))
    if not isinstance(members, Mapping) or not members:
        raise ServingGroupError("%s is %r, a group with no hosts in this inventory: add its hosts or fix the name"
                                % (GROUP_VAR, group))
    number = _whole(port)
    if number is None or not 1 <= number <= 65535:
        raise ServingGroupError("%s is %r: the TCP port rank 0 listens at for the rendezvous (1-65535, e.g. 20000), "
                                "the same for every host of group %s" % (PORT_VAR, port, group))
    if not isinstance(args, Mapping):
        raise ServingGroupError("%s is a %s: a mapping of SGLang options" % (ARGS_VAR, type(args).__name__))
    hand_set = [key for key in GROUP_ARGS if key in args]
    if hand_set:
        raise ServingGroupError("%s sets %s: the serving group %s sets them on every node; remove them"
                                % (ARGS_VAR, ", ".join(hand_set), group))
    hosts = sorted((str(h) for h in members), key=natural_key)
    size = len(hosts)
    _divisibility(args, size)
    ranks = _ranks(hosts, members)
    ordered = sorted(hosts, key=lambda h: ranks[h])
    leader = ordered[0]
    address = _host_address(leader, members[leader])
    try:
        leader_ip = ipaddress.IPv4Address(address)
    except ValueError:
        raise ServingGroupError("%s on %s is %r: an IPv4 address (the rendezvous address every node connects to)"
                                % (ADDRESS_VAR, leader, address)) from None
    carrying = [i for i in _interfaces(members[leader]) if i["address"] == leader_ip]
    if not carrying:
        raise ServingGroupError(
            "%s: rank 0 (%s) has no interface with the address %s in its facts: set %s on %s to one of its own "
            "addresses" % (GROUP_VAR, leader, address, ADDRESS_VAR, leader))
    network = carrying[0]["network"]
    dist_init_addr = "%s:%d" % (address, number)
    result: Dict[str, Dict[str, Any]] = {}
    for host in hosts:
        device = carrying[0]["device"] if host == leader else _interface(host, members[host], network)
        result[host] = {
            "group": group, "nnodes": size, "node_rank": ranks[host], "dist_init_addr": dist_init_addr,
            "leader": leader, "members": ordered, "subnet": str(network),
            "args": {"nnodes": size, "node_rank": ranks[host], "dist_init_addr": dist_init_addr},
            "env": {"NCCL_SOCKET_IFNAME": device, "GLOO_SOCKET_IFNAME": device},
        }
    return result


def serving_group_mismatches(settings: Any) -> List[str]:
    """What differs between the nodes of a group apart from their rank: one message per difference, [] when none.

    ``settings``: host name -> ``{release, args}`` (``sglang_install_version`` and the merged SGLang options of the
    host). Every node must run the same release with the same options, or the ranks disagree at the rendezvous or,
    worse, after it (a different ``mem_fraction_static`` or attention backend on one rank). Compared against rank
    order's first host as given (the caller passes rank 0 first when it knows the ranks).
    """
    if not isinstance(settings, Mapping) or not settings:
        return []
    hosts = list(settings)
    first = hosts[0]
    base = settings[first] or {}
    messages: List[str] = []
    for host in hosts[1:]:
        other = settings[host] or {}
        if str(other.get("release")) != str(base.get("release")):
            messages.append("sglang_install_version: %s runs %s but %s runs %s; every node of a serving group needs the "
                            "same SGLang release" % (host, other.get("release"), first, base.get("release")))
        mine = {k: v for k, v in (base.get("args") or {}).items() if k not in GROUP_ARGS}
        theirs = {k: v for k, v in (other.get("args") or {}).items() if k not in GROUP_ARGS}
        for key in sorted(set(mine) | set(theirs)):
            # set on one node only differs too, whatever its value (even the text "<unset>" the message shows)
            if (key in mine) != (key in theirs) or mine.get(key) != theirs.get(key):
                if is_secret_name(key):  # the one secrets policy: a secret's value is never in a message
                    messages.append("%s.%s differs between %s and %s (a secret: values not shown); every node of a "
                                    "serving group needs the same options apart from its rank" % (ARGS_VAR, key, host, first))
                    continue
                messages.append("%s.%s: %s has %r but %s has %r; every node of a serving group needs the same options "
                                "apart from its rank" % (ARGS_VAR, key, host, theirs.get(key, "<unset>"), first,
                                                         mine.get(key, "<unset>")))
    return messages


def members_from_hostvars(hosts: Any, hostvars: Any) -> Dict[str, Dict[str, Any]]:
    """What the two functions above read of each host of the group, from Ansible's ``hostvars``.

    ``{facts, node_rank, address, release, args, ip_addr}``: the host's ``ansible_facts``, its own
    ``sglang_server_serving_group_node_rank`` and ``_address``, ``sglang_install_version`` and its
    ``sglang_server_args`` with ``sglang_server_extra_args`` over them (a rollout's change reaches every node), and
    the ``ip -o -4 addr show`` output the play registered (``IP_ADDR_FACT``).
    """
    members: Dict[str, Dict[str, Any]] = {}
    for host in hosts or []:
        values = hostvars[host]
        args = dict(values.get("sglang_server_args") or {})
        args.update(values.get("sglang_server_extra_args") or {})
        ip_addr = values.get(IP_ADDR_FACT) or {}
        members[str(host)] = {"facts": values.get("ansible_facts") or {}, "node_rank": values.get(RANK_VAR),
                              "address": values.get(ADDRESS_VAR), "release": values.get("sglang_install_version"), "args": args,
                              "ip_addr": ip_addr.get("stdout", "") if isinstance(ip_addr, Mapping) else ""}
    return members


# A node that only saw its peer go away (the scanner's cause, docs/startup-failure-causes.md): the reason is elsewhere.
SECONDARY_CAUSES = ("peer_rank_lost",)
RENDEZVOUS_CAUSES = ("distributed_init_failed",)


def _failure_of(result: Any) -> Optional[Dict[str, Any]]:
    """The diagnosis of a node's launch, None when it reached ready (and a stand-in one when it never launched)."""
    if not isinstance(result, Mapping):
        return {"cause": "not_launched", "reason": "this node never reached its launch (it failed earlier in the play)"}
    failure = result.get("failure")
    if isinstance(failure, Mapping):
        return dict(failure)
    if result.get("failed"):
        return {"cause": "unknown", "reason": str(result.get("msg") or "the launch task failed")}
    return None


def _serving_again(result: Any) -> str:
    if not isinstance(result, Mapping):
        return "not launched"
    if result.get("rolled_back"):
        return "rolled back, serving its last good config again" if result.get("rollback_ready") else "rolled back, NOT ready again"
    if result.get("stopped"):
        return "stopped (nothing good to go back to)"
    if result.get("ready") and result.get("failure") is None and result.get("restarted") and result.get("changed_files"):
        # Its own launch passed before the group failed (a follower's soak ended before rank 0's probe gate missed).
        if result.get("pending"):
            # the group's verdict has not been given on it yet: it goes back with the group (sglang_launch group_failed)
            return "ready with the NEW config, kept pending until the group's verdict rolls it back"
        return "ready with the NEW config, not rolled back (sglang_server_rollback is off)"
    return "not rolled back (its files were already the last good ones)"


def serving_group_verdict(members: Any, group: Any, results: Any) -> Dict[str, Any]:
    """The launch of a serving group as one verdict: a node's failure fails the group with that node's diagnosis.

    ``members``: the hosts in rank order; ``results``: host -> the node's ``sglang_launch`` result (none for a node
    that never got to its launch). The node named first is the one whose failure explains the others: not one that
    only lost its peer (``peer_rank_lost``), and of those the first by the time its failure was seen. A rendezvous
    that timed out on rank 0 names the nodes whose journal never said they joined.

    A node whose own launch passed keeps its files as pending (``pending`` in its result) until this verdict: a failed
    group with such a node restores it, and every node restarts with its last good files together
    (``group_restart``, given to ``sglang_launch`` ``state: group_failed``). The message is meant for after that step,
    with its ``after_group`` laid over each node's result.

    Returns ``{failed, msg, first, cause, never_joined, nodes, group_restart}``; ``msg`` is empty when every node is
    ready.
    """
    hosts = [str(h) for h in members or []]
    results = results if isinstance(results, Mapping) else {}
    rank = {host: index for index, host in enumerate(hosts)}
    failures = {host: _failure_of(results.get(host)) for host in hosts}
    failed = [host for host in hosts if failures[host] is not None]
    nodes = {host: {"node_rank": rank[host], "failed": failures[host] is not None,
                    "cause": (failures[host] or {}).get("cause"), "after": _serving_again(results.get(host)),
                    "pending": bool(isinstance(results.get(host), Mapping) and results[host].get("pending"))} for host in hosts}
    if not failed:
        return {"failed": False, "msg": "", "first": None, "cause": None, "never_joined": [], "nodes": nodes, "group_restart": False}
    primary = [h for h in failed if failures[h].get("cause") not in SECONDARY_CAUSES] or failed

    def seen(host: str) -> Tuple[float, int]:
        when = failures[host].get("failure_seen_at") or failures[host].get("verdict_at")
        return (float(when) if isinstance(when, (int, float)) else float("inf"), rank[host])
    first = min(primary, key=seen)
    why = failures[first]
    never_joined: List[str] = []
    if why.get("cause") in RENDEZVOUS_CAUSES and rank[first] == 0:
        for host in hosts[1:]:
            result = results.get(host)
            joined = (result.get("joined") if result.get("failure") is None else result["failure"].get("joined")) \
                if isinstance(result, Mapping) else False
            if not joined:
                never_joined.append(host)
    text = "serving group %s: %s (node_rank %d) failed: %s" % (group, first, rank[first], why.get("cause") or "unknown")
    if why.get("phase"):
        text += " in phase %s" % why["phase"]
    if why.get("reason"):
        text += " (%s)" % why["reason"]
    if why.get("error_message"):
        first_line = str(why["error_message"]).splitlines()[0]
        text += ": %s" % (first_line if len(first_line) <= 300 else first_line[:294].rstrip() + " [...]")
    if never_joined:
        text = text.rstrip(". ") + "; the ranks that never joined: %s" % ", ".join("%s (node_rank %d)" % (h, rank[h]) for h in never_joined)
    text = text.rstrip(". ")
    if why.get("hint"):
        text += ". Hint: %s" % str(why["hint"]).rstrip(". ")
    others = [h for h in failed if h != first]
    if others:
        said = ["%s (node_rank %d) %s" % (h, rank[h], "lost its peer" if failures[h].get("cause") in SECONDARY_CAUSES
                                          else "failed: %s" % failures[h].get("cause")) for h in others]
        text += ". Then: %s" % "; ".join(said)
    text += ". Every node: %s." % "; ".join("%s %s" % (h, nodes[h]["after"]) for h in hosts)
    return {"failed": True, "msg": text, "first": first, "cause": why.get("cause"), "never_joined": never_joined, "nodes": nodes,
            "group_restart": any(node["pending"] for node in nodes.values())}
