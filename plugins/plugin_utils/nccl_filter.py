# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side helpers of the gpufleet.sglang.nccl_policy filter.

Three things the pure policy (module_utils/gpu/nccl.py) does not know and the filter needs:

- **Which GPUs each SGLang instance's tensor-parallel group runs on.** SGLang places TP rank ``i`` on CUDA device
  ``base_gpu_id + i * gpu_id_step`` (pipeline stage ``s`` adds ``s * tp_per_node``, data-parallel replica ``k``
  starts ``k * tp_size * pp_size * gpu_id_step`` further; ``engine.py::_launch_scheduler_processes`` and
  ``_calculate_rank_ranges``, ``managers/data_parallel_controller.py``), and CUDA device ``c`` is the ``c``-th entry
  of ``CUDA_VISIBLE_DEVICES`` when that is set. The policy must look at exactly those GPUs: the lab's L40S host runs
  TP 1 on one of four GPUs and needs no NCCL variable at all, while deciding for all four would set one and warn
  about sockets the server never crosses. So the group comes from the server's own arguments (``tp_size``,
  ``base_gpu_id``, ``gpu_id_step``, ``pp_size``, ``dp_size``, ``nnodes``; SGLang's defaults when unset) and its
  environment, the same way SGLang reads them.
- **The environment file's text**, so its format is tested here, not in a template.
- **The checks on the filter's input**, raised as ``NcclFilterError`` and turned into filter errors by the filter.

Runs on the controller only; standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import ENV_IN_UNIT_FILE, REFERENCE, TP_GROUP

_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Values systemd's EnvironmentFile= parser takes verbatim; anything else is double-quoted and escaped.
_PLAIN_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:/@%+=-]*$")
HEADER = ("# Managed by Ansible (gpufleet.sglang.gpu_tuning): edits here are overwritten.",
          "# NCCL environment for every SGLang unit (EnvironmentFile=), decided from this host's GPU topology by the",
          "# rules of %s. Host-wide /etc/nccl.conf is never used (%s)." % (REFERENCE, ENV_IN_UNIT_FILE))

# SGLang's placement options by their dest names, with SGLang's defaults, which are also the least value each
# takes; the long spellings are aliases.
PLACEMENT_DEFAULTS = {"tp_size": 1, "pp_size": 1, "dp_size": 1, "nnodes": 1, "base_gpu_id": 0, "gpu_id_step": 1}
_ALIASES = {"tensor_parallel_size": "tp_size", "pipeline_parallel_size": "pp_size", "data_parallel_size": "dp_size"}
_TRUE = ("1", "true", "yes", "on")

Messages = List[Tuple[str, str]]


class NcclFilterError(ValueError):
    """Input the filter cannot work with; the filter raises it again as an AnsibleFilterError."""


def env_value(key: str, value: Any) -> str:
    """One value as the environment gets it: booleans as NCCL's 1/0, never a newline."""
    if isinstance(value, bool):
        value = "1" if value else "0"
    text = str(value)
    if "\n" in text or "\r" in text:
        raise NcclFilterError("the value of %s contains a line break, which an environment file cannot hold" % key)
    return text


def quote(value: str) -> str:
    """Quote a value for systemd's EnvironmentFile= parser only when it needs it."""
    if _PLAIN_VALUE_RE.match(value):
        return value
    return '"%s"' % re.sub(r'([\\"$`])', r"\\\1", value)


def render_env_file(policy: Dict[str, Any]) -> str:
    """The environment file: a header naming the rules that fired and why, then KEY=value lines sorted by key.

    Sorted and free of timestamps so the same decision gives byte-identical content: sglang_server restarts
    the service when the file's hash changes, so any churn here would mean a needless restart.
    """
    fired: List[str] = []
    for entry in policy.get("rules", []):
        if entry["rule"] not in fired:
            fired.append(entry["rule"])
    lines = list(HEADER)
    lines.append("# Rules that fired: %s" % (", ".join(fired) or "none"))
    for entry in policy.get("rules", []):
        lines.append("# %s: %s" % (entry["rule"], " ".join(str(entry["why"]).split())))
    for key in sorted(policy.get("env", {})):
        lines.append("%s=%s" % (key, quote(policy["env"][key])))
    return "\n".join(lines) + "\n"


def tp_gpus_option(value: Any) -> Optional[List[int]]:
    """The ``tp_gpus`` option as GPU indexes; None when empty (the group then comes from elsewhere)."""
    if value in (None, "", []):
        return None
    if not isinstance(value, (list, tuple)):
        raise NcclFilterError("tp_gpus must be a list of GPU indexes, not %r" % (value,))
    try:
        return [int(i) for i in value]
    except (TypeError, ValueError) as exc:
        raise NcclFilterError("tp_gpus must hold GPU indexes (integers), got %r" % (value,)) from exc


def passthrough_option(value: Any) -> Dict[str, str]:
    """The ``passthrough_env`` option as environment text: valid names, values stringified, no line breaks."""
    passthrough = value or {}
    if not isinstance(passthrough, Mapping):
        raise NcclFilterError("passthrough_env must be a dict of environment variables")
    bad = sorted(str(k) for k in passthrough if not _ENV_NAME_RE.match(str(k)))
    if bad:
        raise NcclFilterError("passthrough_env has names that are not environment variables: %s" % ", ".join(bad))
    return {str(k): env_value(str(k), v) for k, v in passthrough.items()}


def _mapping(value: Any, what: str) -> Mapping:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise NcclFilterError("%s must be a dict, not %s" % (what, type(value).__name__))
    return value


def placement(args: Mapping) -> Dict[str, Any]:
    """SGLang's placement options of one instance (dest names; ``tp-size`` and ``tensor_parallel_size`` alike).

    Values are returned as given (validated by ``_whole``); options not set get SGLang's defaults.
    """
    out: Dict[str, Any] = dict(PLACEMENT_DEFAULTS, enable_dp_attention=False)
    for key, value in args.items():
        dest = str(key).replace("-", "_")
        dest = _ALIASES.get(dest, dest)
        if dest in out and value is not None:
            out[dest] = value
    return out


def _whole(options: Dict[str, Any], key: str) -> int:
    """An option as a whole number at or above its minimum (``"2"`` from a template counts as 2)."""
    value = options[key]
    try:
        if isinstance(value, bool) or int(value) != float(value):
            raise ValueError(value)
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < PLACEMENT_DEFAULTS[key]:
        raise NcclFilterError("%s must be a whole number >= %d, not %r" % (key, PLACEMENT_DEFAULTS[key], value))
    return number


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in _TRUE


def cuda_device_groups(args: Mapping) -> Tuple[List[List[int]], str]:
    """The CUDA devices of each tensor-parallel group one instance runs on this node, and how they were found.

    One group per data-parallel replica (replicas never talk to each other); the pipeline stages of a replica are
    one group, since stage ``s`` sends to stage ``s+1`` through NCCL too. Formulas of SGLang 0.5.23
    (``engine.py::_calculate_rank_ranges``): each node holds ``tp_size*pp_size/nnodes`` GPUs.
    """
    opts = placement(args)
    tp, pp, dp, nnodes = (_whole(opts, k) for k in ("tp_size", "pp_size", "dp_size", "nnodes"))
    base, step = _whole(opts, "base_gpu_id"), _whole(opts, "gpu_id_step")
    replicas = dp if dp > 1 and not _truthy(opts["enable_dp_attention"]) else 1
    if replicas > 1 and nnodes > 1:
        raise NcclFilterError("dp_size %d across %d nodes: SGLang refuses --dp-size > 1 across nodes "
                              "(docs/reference/sglang.md#multi-node-and-shutdown)" % (dp, nnodes))
    nnodes_per_tp_group = max(nnodes // pp, 1)
    if tp % nnodes_per_tp_group:
        raise NcclFilterError("tp_size %d does not split over %d nodes (SGLang refuses it)" % (tp, nnodes_per_tp_group))
    tp_per_node, pp_per_node = tp // nnodes_per_tp_group, max(pp // nnodes, 1)
    groups = [sorted({base + k * tp * pp * step + s * tp_per_node + i * step
                      for s in range(pp_per_node) for i in range(tp_per_node)}) for k in range(replicas)]
    how = ["tp_size %d" % tp]
    how += ["pp_size %d" % pp] if pp > 1 else []
    how += ["dp_size %d" % dp] if dp > 1 else []
    how += ["nnodes %d" % nnodes] if nnodes > 1 else []
    how += ["base_gpu_id %d" % base, "gpu_id_step %d" % step]
    return groups, ", ".join(how)


def visible_devices(value: Any, facts: Dict[str, Any]) -> List[int]:
    """``CUDA_VISIBLE_DEVICES`` as host GPU indexes, in CUDA's order (CUDA device ``c`` is entry ``c``).

    Entries are GPU indexes or UUIDs (a unique prefix is enough, as for CUDA); MIG instances and anything else
    cannot be placed on a GPU pair of the topology, and say so.
    """
    text = str(value).strip()
    if not text:
        raise NcclFilterError("CUDA_VISIBLE_DEVICES is empty: SGLang would see no GPU")
    gpus = facts.get("gpus") or []
    count = int(facts.get("gpu_count") or 0)
    out = []
    for entry in (e.strip() for e in text.split(",")):
        if entry.isdigit():
            index = int(entry)
            if index >= count:
                raise NcclFilterError("CUDA_VISIBLE_DEVICES=%s names GPU %d, which this host lacks (it has GPUs 0-%d)"
                                      % (text, index, count - 1))
            out.append(index)
            continue
        found = [g.get("index") for g in gpus if entry.startswith("GPU-") and str(g.get("uuid") or "").startswith(entry)]
        if len(found) != 1:
            raise NcclFilterError("CUDA_VISIBLE_DEVICES=%s: %r is not a GPU index or the UUID of one GPU of this host "
                                  "(MIG instances cannot be placed on the topology): set gpu_tuning_tp_gpus" % (text, entry))
        out.append(int(found[0]))
    return out


def _instance_groups(name: str, args: Mapping, env: Mapping, facts: Dict[str, Any]) -> Tuple[List[Tuple[str, List[int], str]], Messages]:
    """[(label, host GPU indexes, source)] of one instance, and warnings about how far they can be trusted."""
    groups, how = cuda_device_groups(args)
    warnings: Messages = []
    visible = env.get("CUDA_VISIBLE_DEVICES")
    models = {g.get("name") for g in facts.get("gpus") or []} - {None}
    by_index = visible is None or any(e.strip().isdigit() for e in str(visible).split(","))
    if len(models) > 1 and by_index and str(env.get("CUDA_DEVICE_ORDER", "")).strip() != "PCI_BUS_ID":
        warnings.append((TP_GROUP, "%s: GPU models differ on this host and CUDA_DEVICE_ORDER is not PCI_BUS_ID, so CUDA "
                                   "numbers the fastest GPU first, not as nvidia-smi does: set CUDA_DEVICE_ORDER=PCI_BUS_ID "
                                   "in its env, or its TP group may not be the GPUs decided for" % name))
    order = None if visible is None else visible_devices(visible, facts)
    count = int(facts.get("gpu_count") or 0)
    out = []
    for k, cuda in enumerate(groups):
        label = name if len(groups) == 1 else "%s dp%d" % (name, k)
        if order is None:
            host, where = cuda, "GPUs %s" % cuda
        else:
            beyond = [c for c in cuda if c >= len(order)]
            if beyond:
                raise NcclFilterError("its TP ranks run on CUDA devices %s, but CUDA_VISIBLE_DEVICES=%s shows %d GPU(s)"
                                      % (cuda, visible, len(order)))
            host = [order[c] for c in cuda]
            where = "CUDA devices %s = GPUs %s (CUDA_VISIBLE_DEVICES=%s)" % (cuda, host, visible)
        missing = sorted(i for i in host if i >= count)
        if missing:
            raise NcclFilterError("%s needs GPUs %s, but this host has GPUs 0-%d" % (how, host, count - 1))
        out.append((label, host, "%s: %s from %s" % (label, where, how)))
    return out, warnings


def server_groups(facts: Dict[str, Any], servers: Any, extra_args: Any = None, server_env: Any = None) -> Dict[str, Any]:
    """The tensor-parallel groups of the SGLang instances a host runs, for ``decide_nccl_policy(groups=...)``.

    ``servers``: the instances as sglang_server runs them, ``[{name, args, env}]`` (``sglang_server_instances``,
    or the single instance of ``sglang_server_args``); ``extra_args`` is merged over every instance's args last
    (``sglang_server_extra_args``), ``server_env`` under every instance's env (``sglang_server_env``), as
    sglang_server does. Instances on the same GPUs are one group (their labels joined), since the policy looks at
    GPU pairs. Returns ``{"groups": {label: [GPU]}, "sources": {label: text}, "warnings": [(tag, msg)],
    "errors": [(tag, msg)]}``; an instance whose group cannot be found is an error and left out.
    """
    if not isinstance(servers, (list, tuple)):
        raise NcclFilterError("servers must be a list of SGLang instances ({name, args, env}), not %s" % type(servers).__name__)
    extra, common = _mapping(extra_args, "server_extra_args"), _mapping(server_env, "server_env")
    by_gpus: Dict[Tuple[int, ...], List[Tuple[str, str]]] = {}
    warnings: Messages = []
    errors: Messages = []
    for position, item in enumerate(servers):
        if not isinstance(item, Mapping):
            raise NcclFilterError("servers[%d] must be a dict ({name, args, env}), not %s" % (position, type(item).__name__))
        name = str(item.get("name") or "instance %d" % position)
        args = dict(_mapping(item.get("args"), "the args of %s" % name))
        args.update(extra)
        env = dict(common)
        env.update(_mapping(item.get("env"), "the env of %s" % name))
        try:
            groups, notes = _instance_groups(name, args, env, facts)
        except NcclFilterError as exc:
            errors.append((TP_GROUP, "%s: %s" % (name, exc)))
            continue
        warnings.extend(notes)
        for label, gpus, source in groups:
            by_gpus.setdefault(tuple(gpus), []).append((label, source))
    result: Dict[str, Any] = {"groups": {}, "sources": {}, "warnings": warnings, "errors": errors}
    for gpus, members in by_gpus.items():
        label = ", ".join(m[0] for m in members)
        result["groups"][label] = list(gpus)
        result["sources"][label] = "; ".join(m[1] for m in members)
    return result
