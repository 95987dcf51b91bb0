# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL / SGLang all-reduce policy: GPU facts in, environment and flag adjustments out.

One pure function, ``decide_nccl_policy``, applies the rules of ``docs/reference/nccl-over-pcie.md`` so the gpu_tuning
role (and its tests) can see exactly which rule fired and why. It takes the facts that the ``gpu_facts`` module
returns and never touches the host. Rules are named by what they say (``host-bridge-needs-p2p-level``), the same
names as the reference's headings, so a decision, a warning or a line of the environment file leads straight to
the section that explains it.

The rules look at one tensor-parallel group at a time: all-reduce traffic flows between the GPUs of a group, never
between two groups. A host that runs several groups (several SGLang instances) still has one environment file, so
``decide_nccl_policy`` can also decide for several groups and merge their environments, refusing a merge that
would change how NCCL talks inside any one of them.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import (
    is_nvlink,
    nvlink_full_mesh,
    pair_key,
)

REFERENCE = "docs/reference/nccl-over-pcie.md"

# The rules, in the order the reference gives them (and the order they are applied in).
NVLINK_USES_P2P = "nvlink-uses-p2p"
DISABLE_P2P_WHEN_UNUSABLE = "disable-p2p-when-unusable"
PCIE_SWITCH_WITHIN_CUTOFF = "pcie-switch-within-cutoff"
HOST_BRIDGE_NEEDS_P2P_LEVEL = "host-bridge-needs-p2p-level"
KEEP_TP_ON_ONE_SOCKET = "keep-tp-on-one-socket"
IOMMU_ACS_OPT_IN = "iommu-acs-opt-in"
DEBUG_KNOBS_OPT_IN = "debug-knobs-opt-in"
ENV_IN_UNIT_FILE = "env-in-unit-file"
RULES = (NVLINK_USES_P2P, DISABLE_P2P_WHEN_UNUSABLE, PCIE_SWITCH_WITHIN_CUTOFF, HOST_BRIDGE_NEEDS_P2P_LEVEL,
         KEEP_TP_ON_ONE_SOCKET, IOMMU_ACS_OPT_IN, DEBUG_KNOBS_OPT_IN, ENV_IN_UNIT_FILE)
# Tags of warnings and errors that no rule raised: missing facts, and a TP group that cannot be settled.
FACTS = "facts"
TP_GROUP = "tp-group"

# What each rule rests on, cited once so each decision's basis stays one line.
_SOURCES = {
    NVLINK_USES_P2P: "NVLink pairs already use P2P; NVSwitch boards need nvidia-fabricmanager at the driver's version",
    DISABLE_P2P_WHEN_UNUSABLE: "NCCL drops P2P when the driver status is not OK (src/graph/paths.cc); GeForce has no P2P "
                               "(nccl-tests #287); SGLang custom all-reduce crashes without P2P (sglang #4814)",
    PCIE_SWITCH_WITHIN_CUTOFF: "PIX/PXB are within NCCL's default P2P cutoff (PXB since 2.23.4); ACS redirect breaks it "
                               "(NCCL troubleshooting docs, nccl #199)",
    HOST_BRIDGE_NEEDS_P2P_LEVEL: "since NCCL 2.23.4 the default cutoff is PXB, so PHB/NODE pairs need NCCL_P2P_LEVEL=PHB "
                                 "(src/graph/paths.cc)",
    KEEP_TP_ON_ONE_SOCKET: "SYS crosses the socket interconnect (~10 GB/s vs ~21-26 GB/s one socket, flashinfer #4870)",
    IOMMU_ACS_OPT_IN: "iommu=pt and ACS off only on bare metal, by explicit opt-in, never on a hypervisor",
    DEBUG_KNOBS_OPT_IN: "NCCL docs say debugging variables (NCCL_ALGO, NCCL_PROTO, ...) do not belong in production",
    ENV_IN_UNIT_FILE: "the environment goes into the SGLang unit's environment file, not /etc/nccl.conf",
}
BASIS = {rule: "%s#%s: %s" % (REFERENCE, rule, _SOURCES[rule]) for rule in RULES}

# Variables NCCL documents as debugging/tuning knobs: never emitted by default (debug-knobs-opt-in).
DEBUG_KNOBS = (
    "NCCL_ALGO", "NCCL_PROTO", "NCCL_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE",
    "NCCL_NTHREADS", "NCCL_SHM_DISABLE", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL",
    "NCCL_IB_DISABLE", "NCCL_CUMEM_ENABLE", "NCCL_NVLS_ENABLE",
)

# NCCL_P2P_LEVEL values in order of reach (NCCL's src/graph/paths.cc); LOC means no P2P at all.
_P2P_REACH = {"LOC": 0, "NVL": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 4, "SYS": 5}
_LINK_REACH = {"PIX": 2, "PXB": 3, "PHB": 4, "NODE": 4, "SYS": 5}
DEFAULT_P2P_LEVEL = "PXB"  # NCCL >= 2.23.4


class _Decision:
    """What the rules decide for one group (or a merge of groups), accumulated rule by rule.

    ``as_dict`` is the policy's public shape. Warnings and errors are kept as (tag, message) pairs so a merge can
    prefix the message with the group's name and still keep the tag in front.
    """

    def __init__(self, group: List[int]) -> None:
        self.group = group
        self.env: Dict[str, str] = {}
        self.server_args: Dict[str, Any] = {}
        self.warned: List[Tuple[str, str]] = []
        self.failed: List[Tuple[str, str]] = []
        self.notes: List[str] = []
        self.rules: List[Dict[str, str]] = []
        self.requirements: List[str] = []
        self.suggestion: Optional[str] = None
        self.groups: List[Dict[str, Any]] = []

    def warn(self, tag: str, message: str) -> None:
        """A warning, tagged with the rule that raised it (``facts``/``tp-group`` for input problems).

        The tag leads ``tagged_warnings`` (``"<tag>: message"``) so an operator reading the role's output knows
        which section of the reference to look up without parsing the prose.
        """
        self.warned.append((tag, message))

    def error(self, tag: str, message: str) -> None:
        """An error, like ``warn`` but for ``errors`` / ``tagged_errors``."""
        self.failed.append((tag, message))

    def fire(self, rule: str, why: str) -> None:
        """Record that ``rule`` fired, why, and its one-line basis."""
        self.rules.append({"rule": rule, "why": why, "basis": BASIS[rule]})

    def as_dict(self) -> Dict[str, Any]:
        """The policy result (see decide_nccl_policy)."""
        return {"env": self.env, "server_args": self.server_args,
                "warnings": [msg for _tag, msg in self.warned], "errors": [msg for _tag, msg in self.failed],
                "notes": self.notes, "rules": self.rules, "requirements": self.requirements,
                "suggested_cuda_visible_devices": self.suggestion, "tp_gpus": self.group,
                "tagged_warnings": ["%s: %s" % tm for tm in self.warned],
                "tagged_errors": ["%s: %s" % tm for tm in self.failed],
                "groups": self.groups, "expected_transport": _common_transport(self)}


def expected_transport(facts: Dict[str, Any], group: List[int], env: Dict[str, Any]) -> Optional[str]:
    """The transport NCCL should log for ``group`` under ``env`` (``P2P`` or ``SHM``), or None for one GPU.

    NCCL uses P2P for a pair when P2P is not disabled and the pair's path is within the P2P level (``env``'s
    NCCL_P2P_LEVEL, else NCCL's default PXB cutoff); NVLink pairs qualify at every level but LOC ("never P2P").
    One pair outside is enough for NCCL to route that hop through host memory (SHM), so the group expects P2P only
    if every pair qualifies.
    """
    if len(group) < 2:
        return None
    if str(env.get("NCCL_P2P_DISABLE", "")) == "1":
        return "SHM"
    level = _P2P_REACH.get(str(env.get("NCCL_P2P_LEVEL", DEFAULT_P2P_LEVEL)).upper(), _P2P_REACH[DEFAULT_P2P_LEVEL])
    links = facts.get("links") or {}
    for i, j in itertools.combinations(group, 2):
        link = links.get(pair_key(i, j))
        reach = _P2P_REACH["NVL"] if is_nvlink(link) else _LINK_REACH.get(link or "", 99)
        if reach > level:
            return "SHM"
    return "P2P"


def _common_transport(dec: _Decision) -> Optional[str]:
    """The transport every group with inter-GPU traffic expects; None when none has traffic, they differ, or on errors."""
    if dec.failed:
        return None
    seen = {g["expected_transport"] for g in dec.groups if g["expected_transport"] is not None}
    return seen.pop() if len(seen) == 1 else None


def _gpu_map(facts: Dict[str, Any]) -> Dict[Any, Dict[str, Any]]:
    return {g.get("index"): g for g in facts.get("gpus") or []}


def _numa_groups(facts: Dict[str, Any], candidates: List[int]) -> Dict[Any, List[int]]:
    groups: Dict[Any, List[int]] = {}
    by_index = _gpu_map(facts)
    for idx in candidates:
        node = (by_index.get(idx) or {}).get("numa_node")
        groups.setdefault(node, []).append(idx)
    return groups


def _suggest_local_group(facts: Dict[str, Any], size: int) -> Optional[List[int]]:
    """A set of ``size`` GPUs with no SYS pair among them (same socket), lowest indices first, or None."""
    links = facts.get("links") or {}
    count = int(facts.get("gpu_count") or 0)
    for combo in itertools.combinations(range(count), size):
        if all(links.get(pair_key(i, j)) != "SYS" for i, j in itertools.combinations(combo, 2)):
            return list(combo)
    return None


def _choose_group(count: int, tp_gpus: Optional[List[int]], tp_size: Optional[int]) -> List[int]:
    if tp_gpus is not None:
        return sorted(set(int(i) for i in tp_gpus))
    return list(range(min(tp_size, count))) if tp_size else list(range(count))


def _nvlink_uses_p2p(facts: Dict[str, Any], dec: _Decision, pairs: Dict[str, Optional[str]]) -> None:
    count = int(facts.get("gpu_count") or 0)
    if not nvlink_full_mesh(facts.get("links") or {}, count, dec.group):
        return
    dec.fire(NVLINK_USES_P2P, "every GPU pair in %s is NVLink (%s): no P2P variables" % (dec.group, ", ".join(sorted(set(pairs.values())))))
    if facts.get("nvswitch"):
        version = facts.get("driver_version") or "the installed driver"
        dec.requirements.append("nvidia-fabricmanager %s running" % version)
        dec.notes.append("NVSwitch board: nvidia-fabricmanager must run at driver version %s, or CUDA init fails" % version)


def _no_p2p_reasons(facts: Dict[str, Any], group: List[int], pairs: Dict[str, Optional[str]]) -> List[str]:
    """Why P2P cannot be used in this group: driver verdict, BAR1 size, mixed models, GeForce without a verdict."""
    p2p = facts.get("p2p_read") or {}
    gpus = _gpu_map(facts)
    reasons = []
    bad_pairs = {k: p2p[k] for k in pairs if p2p.get(k) not in (None, "OK")}
    if bad_pairs:
        reasons.append("driver P2P status not OK for %s" % ", ".join("%s=%s" % kv for kv in sorted(bad_pairs.items())))
    small_bar1 = []
    for idx in group:
        gpu = gpus.get(idx) or {}
        bar1, vram = gpu.get("bar1_total_mib"), gpu.get("memory_total_mib")
        if bar1 and vram and bar1 < vram / 2:
            small_bar1.append("GPU%d BAR1 %d MiB < VRAM/2 (%d MiB)" % (idx, bar1, vram // 2))
    if small_bar1:
        reasons.append("; ".join(small_bar1))
    names = {(gpus.get(i) or {}).get("name") for i in group} - {None}
    if len(names) > 1:
        reasons.append("different GPU models in one group (%s): P2P never works between them" % ", ".join(sorted(names)))
    geforce = [i for i in group if "GeForce" in ((gpus.get(i) or {}).get("name") or "")]
    if not p2p and geforce and not all(is_nvlink(v) for v in pairs.values()):
        reasons.append("GeForce GPUs %s and no driver P2P status: stock drivers grant no P2P" % geforce)
    return reasons


def _pcie_p2p(facts: Dict[str, Any], dec: _Decision, pairs: Dict[str, Optional[str]], strict_acs: bool) -> None:
    """PCIe pairs with P2P granted: the switch rule, the host-bridge rule, and the ACS/IOMMU check both need.

    The remedy for ACS redirect or a translated IOMMU is the opt-in boot change (``iommu-acs-opt-in``), so that
    rule is recorded where the problem is found, though the policy itself never applies it.
    """
    near = sorted(k for k, v in pairs.items() if v in ("PIX", "PXB"))
    bridge = sorted(k for k, v in pairs.items() if v in ("PHB", "NODE"))
    if not near and not bridge:
        return
    problems = []
    acs = facts.get("acs")
    if acs and acs.get("enabled"):
        devs = [r.get("device") or "(unnamed bridge)" for r in acs.get("redirecting", [])]
        problems.append("ACS redirect on %d PCIe bridge(s) %s" % (len(devs), ", ".join(devs)))
    if (facts.get("iommu") or {}).get("mode") == "translated":
        problems.append("IOMMU in translated DMA mode (no iommu=pt on the kernel command line)")
    if near:
        dec.fire(PCIE_SWITCH_WITHIN_CUTOFF, "pairs %s are PIX/PXB: NCCL's default already uses P2P there" % near)
    if problems:
        msg = ("%s: peer traffic goes through the root complex, slow or hanging at the first all-reduce even though "
               "topo -p2p says OK; measure an all-reduce, or set NCCL_P2P_DISABLE=1 via the explicit pass-through" % "; ".join(problems))
        (dec.error if strict_acs else dec.warn)(PCIE_SWITCH_WITHIN_CUTOFF if near else HOST_BRIDGE_NEEDS_P2P_LEVEL, msg)
        dec.fire(IOMMU_ACS_OPT_IN, "remedy (iommu=pt, ACS off at boot) exists as an opt-in for bare metal only; never on a hypervisor")
    elif acs is None:
        dec.notes.append("ACS state unknown (lspci missing or not run as root): not checked")
    if bridge:
        dec.env["NCCL_P2P_LEVEL"] = "PHB"
        why = "pairs %s are PHB/NODE with driver P2P OK: NCCL_P2P_LEVEL=PHB enables P2P over the host bridge" % bridge
        if facts.get("cpu_vendor") == "amd" and int(facts.get("gpu_count") or 0) <= 2:
            why += " (NCCL would already do so on this AMD host with <= 2 GPUs; set explicitly for clarity)"
        if len(dec.group) == 2:
            why += "; custom all-reduce stays on at TP=2"
        else:
            dec.notes.append("TP=%d over PCIe: SGLang turns its custom all-reduce off by itself and uses NCCL" % len(dec.group))
        dec.fire(HOST_BRIDGE_NEEDS_P2P_LEVEL, why)


def _keep_tp_on_one_socket(facts: Dict[str, Any], dec: _Decision, pairs: Dict[str, Optional[str]]) -> None:
    far = sorted(k for k, v in pairs.items() if v == "SYS")
    if not far:
        return
    group = dec.group
    local = _suggest_local_group(facts, len(group))
    spread = ", ".join("NUMA %s: %s" % (k if k is not None else "?", v)
                       for k, v in sorted(_numa_groups(facts, group).items(), key=lambda kv: str(kv[0])))
    if local and local != group:
        dec.suggestion = ",".join(str(i) for i in local)
        dec.warn(KEEP_TP_ON_ONE_SOCKET, "TP group %s spans sockets (SYS pairs %s; %s): set CUDA_VISIBLE_DEVICES=%s to keep it on one NUMA node"
                 % (group, far, spread, dec.suggestion))
        dec.fire(KEEP_TP_ON_ONE_SOCKET, "pairs %s cross the socket interconnect; GPUs %s share one socket" % (far, local))
    else:
        dec.warn(KEEP_TP_ON_ONE_SOCKET, "TP group %s spans sockets (SYS pairs %s; %s) and no %d GPUs share one socket: expect ~10 GB/s all-reduce"
                 % (group, far, spread, len(group)))
        dec.fire(KEEP_TP_ON_ONE_SOCKET, "pairs %s cross the socket interconnect and no same-socket group of %d exists" % (far, len(group)))


def _decide_group(facts: Dict[str, Any], group: List[int], strict_acs: bool) -> _Decision:
    """The per-group rules (nvlink-uses-p2p to keep-tp-on-one-socket) for one tensor-parallel group; nothing host-wide yet."""
    count = int(facts.get("gpu_count") or 0)
    dec = _Decision(group)
    unknown = [i for i in dec.group if i < 0 or i >= count]
    if count == 0:
        dec.notes.append("no NVIDIA GPU found (source: %s): no NCCL environment needed" % facts.get("source", "none"))
    elif unknown:
        dec.error(FACTS, "tp_gpus %s not present on this host (it has GPUs 0-%d)" % (unknown, count - 1))
    elif len(dec.group) < 2:
        dec.notes.append("tensor-parallel group %s has one GPU: no inter-GPU traffic, no NCCL environment needed" % dec.group)
    else:
        links = facts.get("links") or {}
        pairs = {pair_key(i, j): links.get(pair_key(i, j)) for i, j in itertools.combinations(dec.group, 2)}
        missing = sorted(k for k, v in pairs.items() if v is None)
        if missing:
            dec.warn(FACTS, "no topology class for pairs %s: nvidia-smi topo -m gave no answer for them" % missing)
        _nvlink_uses_p2p(facts, dec, pairs)
        reasons = _no_p2p_reasons(facts, dec.group, pairs)
        if reasons:
            dec.env["NCCL_P2P_DISABLE"] = "1"
            dec.server_args["disable_custom_all_reduce"] = True
            dec.fire(DISABLE_P2P_WHEN_UNUSABLE, "; ".join(reasons) + ": NCCL_P2P_DISABLE=1 and SGLang custom all-reduce off")
        else:
            _pcie_p2p(facts, dec, {k: v for k, v in pairs.items() if v and not is_nvlink(v)}, strict_acs)
        _keep_tp_on_one_socket(facts, dec, pairs)
    return dec


def _has_traffic(dec: _Decision) -> bool:
    """Whether the group's GPUs talk to each other at all (two GPUs or more, all of them on the host)."""
    return len(dec.group) >= 2 and not dec.failed


def _merge(facts: Dict[str, Any], parts: List[Tuple[str, _Decision]]) -> _Decision:
    """One host-wide decision from several groups' decisions, which share one environment file.

    The shared environment is the union of the groups' variables. It is refused (a ``tp-group`` error) when two
    groups set one variable differently, when the union would change the transport NCCL uses inside a group
    (NCCL_P2P_DISABLE=1 that one group needs would turn P2P off in another that has it), or when a group would get
    SGLang flags it does not need (the flags reach every instance). A group of one GPU has no inter-GPU traffic
    and fits any environment. Every message is prefixed with its group's name.
    """
    host = _Decision(sorted({i for _name, dec in parts for i in dec.group}))
    for name, dec in parts:
        host.warned.extend((tag, "%s: %s" % (name, msg)) for tag, msg in dec.warned)
        host.failed.extend((tag, "%s: %s" % (name, msg)) for tag, msg in dec.failed)
        host.notes.extend("%s: %s" % (name, note) for note in dec.notes)
        host.rules.extend(dict(entry, why="%s: %s" % (name, entry["why"])) for entry in dec.rules)
        host.requirements.extend(r for r in dec.requirements if r not in host.requirements)
    talking = [(name, dec) for name, dec in parts if _has_traffic(dec)]
    _union(host, talking)
    _refuse_changed_groups(facts, host, talking)
    return host


def _union(host: _Decision, talking: List[Tuple[str, _Decision]]) -> None:
    """The shared file's variables and the flags every instance gets: each group's, one value per variable."""
    owner: Dict[str, str] = {}
    for name, dec in talking:
        for key, value in sorted(dec.env.items()):
            if key not in host.env:
                host.env[key], owner[key] = value, name
            elif host.env[key] != value:
                host.error(TP_GROUP, "%s needs %s=%s but %s needs %s=%s, and all instances share one environment file: %s"
                           % (name, key, value, owner[key], key, host.env[key], _SEPARATE))
        host.server_args.update(dec.server_args)


def _refuse_changed_groups(facts: Dict[str, Any], host: _Decision, talking: List[Tuple[str, _Decision]]) -> None:
    """A ``tp-group`` error for each group the union would change: another transport, or flags it does not need."""
    for name, dec in talking:
        own, shared = expected_transport(facts, dec.group, dec.env), expected_transport(facts, dec.group, host.env)
        added = {k: v for k, v in host.env.items() if dec.env.get(k) != v}
        extra = {k: v for k, v in host.server_args.items() if dec.server_args.get(k) != v}
        if own == shared and not extra:
            continue
        others = [n for n, d in talking
                  if n != name and (any(added.get(k) == v for k, v in d.env.items())
                                    or any(extra.get(k) == v for k, v in d.server_args.items()))]
        effects = (["NCCL would use %s instead of %s in %s" % (shared, own, name)] if own != shared else []) + \
                  (["SGLang flags %s would reach it too" % _args_text(extra)] if extra else [])
        host.error(TP_GROUP, "%s (GPUs %s) needs %s, but %s add%s %s to the environment file all instances share: %s. %s"
                   % (name, dec.group, _env_text(dec.env), " and ".join(others), "" if len(others) > 1 else "s",
                      _env_text(added) if added else "nothing", ", and ".join(effects), _SEPARATE))


_SEPARATE = ("Run these instances on separate hosts, or set gpu_tuning_tp_gpus to decide once for the GPUs of all of "
             "them (docs/gpu-host.md#several-instances-on-one-host)")


def _env_text(env: Dict[str, Any]) -> str:
    """``A=1, B=2`` (sorted), or a phrase for an empty environment."""
    return ", ".join("%s=%s" % kv for kv in sorted(env.items())) or "no NCCL variable"


def _args_text(args: Dict[str, Any]) -> str:
    """``disable_custom_all_reduce: true``, the way the inventory would write it."""
    return ", ".join("%s: %s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in sorted(args.items()))


def decide_nccl_policy(facts: Dict[str, Any], tp_gpus: Optional[List[int]] = None, *, tp_size: Optional[int] = None,
                       groups: Optional[Dict[str, List[int]]] = None, strict_acs: bool = False,
                       passthrough_env: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Apply the rules of docs/reference/nccl-over-pcie.md to GPU facts.

    ``facts``: the ``gpu_facts`` result (``gpu_count``, ``gpus``, ``links``, ``p2p_read``, ``nvswitch``,
    ``iommu``, ``acs``, ``cpu_vendor``, ``driver_version``). The tensor-parallel group(s): ``groups``, a mapping
    of group names to GPU indices (as the host numbers them), when the host runs several; else ``tp_gpus``; else
    the first ``tp_size`` GPUs; else all of them. ``strict_acs``: turn the ACS/IOMMU warnings into errors.
    ``passthrough_env``: debugging knobs the operator asked for explicitly (debug-knobs-opt-in); they are copied
    verbatim and override what the rules chose.

    Returns ``{"env", "server_args", "warnings", "errors", "notes", "rules", "requirements",
    "suggested_cuda_visible_devices", "tp_gpus", "tagged_warnings", "tagged_errors", "groups",
    "expected_transport"}``: ``env`` is meant for the SGLang unit's environment file (env-in-unit-file),
    ``server_args`` uses SGLang's option names (``disable_custom_all_reduce``), every entry of ``rules`` is
    ``{"rule", "why", "basis"}``, in the order the rules fired, and ``tagged_warnings``/``tagged_errors`` repeat
    ``warnings``/``errors`` as ``"keep-tp-on-one-socket: ..."`` (``facts: ...`` for missing input, ``tp-group: ...``
    for groups that cannot share the file) so each names the rule that raised it. ``groups`` has one entry per
    group, ``{"name", "tp_gpus", "env", "server_args", "expected_transport", "suggested_cuda_visible_devices"}``
    (``env`` and ``server_args`` what that group alone needs, the transport under the final environment).
    With several groups, ``tp_gpus`` is their union, messages start with the group's name, and
    ``expected_transport`` is the one every group with traffic expects (else None).
    """
    count = int(facts.get("gpu_count") or 0)
    if not groups:
        name = "tp_gpus" if tp_gpus is not None else "tp_size" if tp_size else "all GPUs"
        groups = {name: _choose_group(count, tp_gpus, tp_size)}
    parts = [(name, _decide_group(facts, sorted(set(int(i) for i in gpus)), strict_acs)) for name, gpus in groups.items()]
    own = [(name, part, dict(part.env), dict(part.server_args)) for name, part in parts]
    dec = parts[0][1] if len(parts) == 1 else _merge(facts, parts)
    _apply_passthrough(dec, passthrough_env)
    dec.fire(ENV_IN_UNIT_FILE, "write env to the SGLang unit's environment file, never host-wide")
    dec.groups = [{"name": name, "tp_gpus": part.group, "env": env, "server_args": args,
                   "expected_transport": None if dec.failed else expected_transport(facts, part.group, dec.env),
                   "suggested_cuda_visible_devices": part.suggestion} for name, part, env, args in own]
    return dec.as_dict()


def _apply_passthrough(dec: _Decision, passthrough_env: Optional[Dict[str, Any]]) -> None:
    """debug-knobs-opt-in: debugging knobs only when the operator names them; they win over the rules' choices."""
    passthrough_env = passthrough_env or {}
    for key, value in sorted(passthrough_env.items()):
        value = str(value)
        if key in dec.env and dec.env[key] != value:
            dec.warn(DEBUG_KNOBS_OPT_IN, "pass-through %s=%s overrides the rules' %s=%s" % (key, value, key, dec.env[key]))
        if key == "NCCL_SHM_DISABLE" and value == "1":
            dec.warn(DEBUG_KNOBS_OPT_IN, "NCCL_SHM_DISABLE=1 pushes single-host traffic to sockets (%s#p2p-and-shm-variables): "
                     "almost never wanted" % REFERENCE)
        dec.env[key] = value
    if passthrough_env:
        dec.fire(DEBUG_KNOBS_OPT_IN, "explicit pass-through of %s" % ", ".join(sorted(passthrough_env)))
        if any(k in DEBUG_KNOBS and k not in ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL") for k in passthrough_env):
            dec.notes.append("debugging knobs in the pass-through: remove them once the investigation is over")
    else:
        dec.fire(DEBUG_KNOBS_OPT_IN, "no debugging knobs requested, none set")
