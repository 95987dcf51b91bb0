# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL / SGLang all-reduce policy: GPU facts in, environment and flag adjustments out.

One pure function, ``decide_nccl_policy``, encodes rules R1-R8 of ``reference/nccl-pcie.md`` so the
gpu_tuning role (and its tests) can see exactly which rule fired and why. It takes the facts that
the ``gpu_facts`` module returns and never touches the host.

Every decision carries its rule number and a one-line basis naming the source, as nccl-pcie.md does.
Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import (
    is_nvlink,
    nvlink_full_mesh,
    pair_key,
)

# Sources, cited once so each rule's basis stays one line.
BASIS = {
    "R1": "nccl-pcie.md R1: NVLink pairs already use P2P; NVSwitch boards need nvidia-fabricmanager at the driver's version",
    "R2": "nccl-pcie.md R2: NCCL drops P2P when the driver status is not OK (src/graph/paths.cc); GeForce has no P2P "
          "(nccl-tests #287); SGLang custom all-reduce crashes without P2P (sglang #4814)",
    "R3": "nccl-pcie.md R3: PIX/PXB are within NCCL's default P2P cutoff (PXB since 2.23.4); ACS redirect breaks it "
          "(NCCL troubleshooting docs, nccl #199)",
    "R4": "nccl-pcie.md R4: since NCCL 2.23.4 the default cutoff is PXB, so PHB/NODE pairs need NCCL_P2P_LEVEL=PHB "
          "(src/graph/paths.cc)",
    "R5": "nccl-pcie.md R5: SYS crosses the socket interconnect (~10 GB/s vs ~21-26 GB/s one socket, flashinfer #4870)",
    "R6": "nccl-pcie.md R6: iommu=pt and ACS off only on bare metal, by explicit opt-in, never on a hypervisor",
    "R7": "nccl-pcie.md R7: NCCL docs say debugging variables (NCCL_ALGO, NCCL_PROTO, ...) do not belong in production",
    "R8": "nccl-pcie.md R8 / design.md: the environment goes into the SGLang unit's environment file, not /etc/nccl.conf",
}

# Variables NCCL documents as debugging/tuning knobs: never emitted by default (R7).
DEBUG_KNOBS = (
    "NCCL_ALGO", "NCCL_PROTO", "NCCL_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE",
    "NCCL_NTHREADS", "NCCL_SHM_DISABLE", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL",
    "NCCL_IB_DISABLE", "NCCL_CUMEM_ENABLE", "NCCL_NVLS_ENABLE",
)


class _Decision:
    """What the rules decide, accumulated rule by rule; ``as_dict`` is the policy's public shape."""

    def __init__(self, group: List[int]) -> None:
        self.group = group
        self.env: Dict[str, str] = {}
        self.server_args: Dict[str, Any] = {}
        self.warnings: List[str] = []
        self.errors: List[str] = []
        self.notes: List[str] = []
        self.rules: List[Dict[str, str]] = []
        self.requirements: List[str] = []
        self.suggestion: Optional[str] = None
        self.tagged_warnings: List[str] = []
        self.tagged_errors: List[str] = []

    def warn(self, tag: str, message: str) -> None:
        """A warning, kept verbatim in ``warnings`` and as ``"<tag>: message"`` in ``tagged_warnings``.

        The tag is the rule that raised it (or ``facts`` for missing input), so an operator reading the
        role's output knows which rule of nccl-pcie.md to look up without parsing the prose.
        """
        self.warnings.append(message)
        self.tagged_warnings.append("%s: %s" % (tag, message))

    def error(self, tag: str, message: str) -> None:
        """An error, like ``warn`` but for ``errors`` / ``tagged_errors``."""
        self.errors.append(message)
        self.tagged_errors.append("%s: %s" % (tag, message))

    def fire(self, rule: str, why: str) -> None:
        """Record that ``rule`` fired, why, and its one-line basis."""
        self.rules.append({"rule": rule, "why": why, "basis": BASIS[rule]})

    def as_dict(self) -> Dict[str, Any]:
        """The policy result (see decide_nccl_policy)."""
        return {"env": self.env, "server_args": self.server_args, "warnings": self.warnings, "errors": self.errors,
                "notes": self.notes, "rules": self.rules, "requirements": self.requirements,
                "suggested_cuda_visible_devices": self.suggestion, "tp_gpus": self.group,
                "tagged_warnings": self.tagged_warnings, "tagged_errors": self.tagged_errors}


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


def _r1_nvlink(facts: Dict[str, Any], dec: _Decision, pairs: Dict[str, Optional[str]]) -> None:
    count = int(facts.get("gpu_count") or 0)
    if not nvlink_full_mesh(facts.get("links") or {}, count, dec.group):
        return
    dec.fire("R1", "every GPU pair in %s is NVLink (%s): no P2P variables" % (dec.group, ", ".join(sorted(set(pairs.values())))))
    if facts.get("nvswitch"):
        version = facts.get("driver_version") or "the installed driver"
        dec.requirements.append("nvidia-fabricmanager %s running" % version)
        dec.notes.append("NVSwitch board: nvidia-fabricmanager must run at driver version %s, or CUDA init fails" % version)


def _r2_reasons(facts: Dict[str, Any], group: List[int], pairs: Dict[str, Optional[str]]) -> List[str]:
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


def _r3_r4_pcie(facts: Dict[str, Any], dec: _Decision, pairs: Dict[str, Optional[str]], strict_acs: bool) -> None:
    """PCIe pairs with P2P granted: R3 (switch), R4 (host bridge), and the ACS/IOMMU check both need (R6 remedy)."""
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
        dec.fire("R3", "pairs %s are PIX/PXB: NCCL's default already uses P2P there" % near)
    if problems:
        msg = ("%s: peer traffic goes through the root complex, slow or hanging at the first all-reduce even though "
               "topo -p2p says OK; measure an all-reduce, or set NCCL_P2P_DISABLE=1 via the explicit pass-through" % "; ".join(problems))
        (dec.error if strict_acs else dec.warn)("R3" if near else "R4", msg)
        dec.fire("R6", "remedy (iommu=pt, ACS off at boot) exists as an opt-in for bare metal only; never on a hypervisor")
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
        dec.fire("R4", why)


def _r5_sockets(facts: Dict[str, Any], dec: _Decision, pairs: Dict[str, Optional[str]]) -> None:
    far = sorted(k for k, v in pairs.items() if v == "SYS")
    if not far:
        return
    group = dec.group
    local = _suggest_local_group(facts, len(group))
    spread = ", ".join("NUMA %s: %s" % (k if k is not None else "?", v)
                       for k, v in sorted(_numa_groups(facts, group).items(), key=lambda kv: str(kv[0])))
    if local and local != group:
        dec.suggestion = ",".join(str(i) for i in local)
        dec.warn("R5", "TP group %s spans sockets (SYS pairs %s; %s): set CUDA_VISIBLE_DEVICES=%s to keep it on one NUMA node"
                 % (group, far, spread, dec.suggestion))
        dec.fire("R5", "pairs %s cross the socket interconnect; GPUs %s share one socket" % (far, local))
    else:
        dec.warn("R5", "TP group %s spans sockets (SYS pairs %s; %s) and no %d GPUs share one socket: expect ~10 GB/s all-reduce"
                 % (group, far, spread, len(group)))
        dec.fire("R5", "pairs %s cross the socket interconnect and no same-socket group of %d exists" % (far, len(group)))


def decide_nccl_policy(facts: Dict[str, Any], tp_gpus: Optional[List[int]] = None, *, tp_size: Optional[int] = None,
                       strict_acs: bool = False, passthrough_env: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Apply rules R1-R8 of nccl-pcie.md to GPU facts.

    ``facts``: the ``gpu_facts`` result (``gpu_count``, ``gpus``, ``links``, ``p2p_read``, ``nvswitch``,
    ``iommu``, ``acs``, ``cpu_vendor``, ``driver_version``). ``tp_gpus``: indices of the tensor-parallel
    group (as the host numbers them); default: the first ``tp_size`` GPUs, or all of them. ``strict_acs``:
    turn the ACS/IOMMU warnings of R3/R4 into errors. ``passthrough_env``: debugging knobs the operator
    asked for explicitly (R7); they are copied verbatim and override what the rules chose.

    Returns ``{"env", "server_args", "warnings", "errors", "notes", "rules", "requirements",
    "suggested_cuda_visible_devices", "tp_gpus", "tagged_warnings", "tagged_errors"}``: ``env`` is meant
    for the SGLang unit's environment file (R8), ``server_args`` uses SGLang's option names
    (``disable_custom_all_reduce``), every entry of ``rules`` is ``{"rule", "why", "basis"}``, in the
    order the rules fired, and ``tagged_warnings``/``tagged_errors`` repeat ``warnings``/``errors`` as
    ``"R5: ..."`` (``facts: ...`` for missing input) so each names the rule that raised it.
    """
    count = int(facts.get("gpu_count") or 0)
    dec = _Decision(_choose_group(count, tp_gpus, tp_size))
    unknown = [i for i in dec.group if i < 0 or i >= count]
    if count == 0:
        dec.notes.append("no NVIDIA GPU found (source: %s): no NCCL environment needed" % facts.get("source", "none"))
    elif unknown:
        dec.error("facts", "tp_gpus %s not present on this host (it has GPUs 0-%d)" % (unknown, count - 1))
    elif len(dec.group) < 2:
        dec.notes.append("tensor-parallel group %s has one GPU: no inter-GPU traffic, no NCCL environment needed" % dec.group)
    else:
        links = facts.get("links") or {}
        pairs = {pair_key(i, j): links.get(pair_key(i, j)) for i, j in itertools.combinations(dec.group, 2)}
        missing = sorted(k for k, v in pairs.items() if v is None)
        if missing:
            dec.warn("facts", "no topology class for pairs %s: nvidia-smi topo -m gave no answer for them" % missing)
        _r1_nvlink(facts, dec, pairs)
        reasons = _r2_reasons(facts, dec.group, pairs)
        if reasons:
            dec.env["NCCL_P2P_DISABLE"] = "1"
            dec.server_args["disable_custom_all_reduce"] = True
            dec.fire("R2", "; ".join(reasons) + ": NCCL_P2P_DISABLE=1 and SGLang custom all-reduce off")
        else:
            _r3_r4_pcie(facts, dec, {k: v for k, v in pairs.items() if v and not is_nvlink(v)}, strict_acs)
        _r5_sockets(facts, dec, pairs)
    _apply_passthrough(dec, passthrough_env)
    dec.fire("R8", "write env to the SGLang unit's environment file, never host-wide")
    return dec.as_dict()


def _apply_passthrough(dec: _Decision, passthrough_env: Optional[Dict[str, Any]]) -> None:
    """R7: debugging knobs only when the operator names them; they win over the rules' choices."""
    passthrough_env = passthrough_env or {}
    for key, value in sorted(passthrough_env.items()):
        value = str(value)
        if key in dec.env and dec.env[key] != value:
            dec.warn("R7", "pass-through %s=%s overrides the rules' %s=%s" % (key, value, key, dec.env[key]))
        if key == "NCCL_SHM_DISABLE" and value == "1":
            dec.warn("R7", "NCCL_SHM_DISABLE=1 pushes single-host traffic to sockets (nccl-pcie.md): almost never wanted")
        dec.env[key] = value
    if passthrough_env:
        dec.fire("R7", "explicit pass-through of %s" % ", ".join(sorted(passthrough_env)))
        if any(k in DEBUG_KNOBS and k not in ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL") for k in passthrough_env):
            dec.notes.append("debugging knobs in the pass-through: remove them once the investigation is over")
    else:
        dec.fire("R7", "no debugging knobs requested, none set")
