# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's half of the converged check: the run's inputs as one digest, and the record of what runs as a
run that restarts nothing reports it.

Why: the host can tell whether its state is what the last good chain left (module converged_state), but only
the controller knows whether this run asks for the same thing. Its inputs are every variable the inventory and
the command line give the host (what ``hostvars`` holds, less Ansible's own and the private ``_`` names, which are
set during a play) and the collection's code (its roles, playbooks, plugins and data: role defaults and templates
are inputs too). Variables are read one by one, so one that cannot be templated yet only marks itself.

Runs on the controller (filters ``gpufleet.sglang.converged_fingerprint`` and ``converged_results``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any, Dict, Iterable, Optional

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import probe_figures
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.nccl_filter import placement

# Folders of the collection whose files are inputs of the chain.
CODE_FOLDERS = ("roles", "playbooks", "plugins", "data", "meta")
# Ansible's magic variables and others a play sets that say nothing about what the host should run.
MAGIC = frozenset((
    "groups", "group_names", "hostvars", "inventory_dir", "inventory_file", "inventory_hostname",
    "inventory_hostname_short", "omit", "play_hosts", "playbook_dir", "role_names", "environment", "vars",
    "ansible_play_batch", "ansible_play_hosts", "ansible_play_hosts_all",
))
# Facts the chain itself sets: a second pass of the chain in one play sees them, and they are its outputs.
OUTPUTS = (
    "nvidia_driver_installed_version", "nvidia_driver_plan",
    "gpu_tuning_gpu_facts", "gpu_tuning_policy", "gpu_tuning_env", "gpu_tuning_server_args", "gpu_tuning_warnings",
    "gpu_tuning_verify_results", "gpu_tuning_verify_result",
    "sglang_install_venv", "sglang_install_installed_version",
    "model_cache_model_path", "model_cache_served_model_name", "model_cache_env",
    "sglang_server_results",
)
STATE_ITEMS_SUFFIX = "_state_items"
# Roles whose ``<role>_state_items`` (what they left on the host) the record keeps with the outputs.
STATE_ITEM_ROLES = ("nvidia_driver", "gpu_tuning", "model_cache")
# Prefixes of names that are not inputs of the chain: Ansible's own, private names set during a play, the run
# parameters of rollout.yml (its report folder differs every run; rollout_restart reaches the chain as
# sglang_server_state, which the playbook adds itself) and the controller-side settings of the playbooks.
NOT_INPUTS = ("ansible_", "_", "rollout_", "gpufleet_sglang_")
# The server phase's own variables: the host phases read only where the servers run (server_placements).
SERVER_PREFIX = "sglang_server_"
# What a fingerprint covers: the whole chain, or only its host phases (driver, tuning, install, weights).
PARTS = ("all", "host")
LAST_LAUNCH = "at the last launch, "


def code_digest(root: str, folders: Iterable[str] = CODE_FOLDERS) -> str:
    """sha256 over the relative path and content of every file below root's folders (caches and bytecode left out)."""
    sha = hashlib.sha256()
    for folder in folders:
        for base, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                full = os.path.join(base, name)
                sha.update(os.path.relpath(full, root).encode("utf-8") + b"\0")
                with open(full, "rb") as handle:
                    sha.update(hashlib.sha256(handle.read()).digest())
    return sha.hexdigest()


def input_names(names: Iterable[str]) -> list:
    """The variable names that are inputs: not Ansible's, not private, not a playbook's run parameter or setting,
    not an output or state list of the chain."""
    return sorted(str(n) for n in names
                  if not str(n).startswith(NOT_INPUTS) and str(n) not in MAGIC and str(n) not in OUTPUTS
                  and not str(n).endswith(STATE_ITEMS_SUFFIX))


def output_names() -> tuple:
    """The names the converged record keeps and a skipped phase hands back: the outputs and the state lists."""
    return OUTPUTS + tuple(role + STATE_ITEMS_SUFFIX for role in STATE_ITEM_ROLES)


def converged_outputs(host_vars: Any) -> Dict[str, Any]:
    """The outputs and state lists this run set, by name, for the record; one it did not set is left out, so a
    later run that takes the record back leaves it unset too."""
    names = set(host_vars.keys())
    return {name: host_vars[name] for name in output_names() if name in names}


def _plain(value: Any) -> Any:
    """A JSON-able copy (mappings and sequences walked; anything else as its string)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _templated(host_vars: Any, name: str) -> Any:
    """One variable, templated on its own; one that cannot be templated yet marks itself instead of failing."""
    try:
        return _plain(host_vars[name])
    except Exception as err:  # pylint: disable=broad-exception-caught  # any templating error marks the variable
        return "(cannot be templated: %s)" % err.__class__.__name__


def fingerprint(host_vars: Any, code: str, extra: Optional[Mapping] = None, part: str = "all") -> str:
    """The digest of a run's inputs: the host's input variables (each templated on its own; facts left out), extra,
    and code.

    ``part="host"`` is the digest of what the host phases (driver, tuning, SGLang install, weights) read: the same
    without the server's variables (``sglang_server_*``) and ``extra``, but with where each server runs on the GPUs
    (:func:`server_placements`), which the NCCL tuning decides from. A change of launch arguments that keeps the
    servers on their GPUs leaves it as it was, so those phases need not run again (docs/converged.md).
    """
    if part not in PARTS:
        raise ValueError("part must be one of %s, not %r" % (", ".join(PARTS), part))
    values: Dict[str, Any] = {}
    # Facts a module returned are vars too (gpu_facts, getent_passwd, ...): they are the host's, not inputs.
    try:
        facts = set(host_vars["ansible_facts"])
    except Exception:  # pylint: disable=broad-exception-caught  # no facts at all
        facts = set()
    for name in input_names(n for n in host_vars.keys() if n not in facts):
        if part == "host" and name.startswith(SERVER_PREFIX):
            continue
        values[name] = _templated(host_vars, name)
    if part == "host":
        payload = {"vars": values, "placements": server_placements(host_vars), "code": code, "part": part}
    else:
        payload = {"vars": values, "extra": _plain(extra or {}), "code": code}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def server_placements(host_vars: Any) -> Any:
    """Where each server runs, as the NCCL tuning reads it from the server's variables: per instance its name, its
    placement options (tp/pp/dp size, nodes, first GPU and step; role gpu_tuning, ``nccl_policy``) and its
    environment (CUDA_VISIBLE_DEVICES, NCCL settings), with ``sglang_server_extra_args`` and ``sglang_server_env``
    applied as sglang_server applies them. Anything unexpected is kept as it is templated, so it still counts."""
    names = ("sglang_server_instances", "sglang_server_instance", "sglang_server_args", "sglang_server_extra_args",
             "sglang_server_env")
    given = {name: _templated(host_vars, name) for name in names if name in host_vars}
    instances = given.get("sglang_server_instances") or []
    if not instances and "sglang_server_args" in given:
        instances = [{"name": given.get("sglang_server_instance") or "main", "args": given["sglang_server_args"]}]
    extra, common = given.get("sglang_server_extra_args") or {}, given.get("sglang_server_env") or {}
    if not isinstance(instances, list) or not isinstance(extra, Mapping) or not isinstance(common, Mapping):
        return given
    out = []
    for item in instances:
        if not isinstance(item, Mapping) or not isinstance(item.get("args") or {}, Mapping) \
                or not isinstance(item.get("env") or {}, Mapping):
            return given
        args = dict(item.get("args") or {}, **extra)
        out.append({"name": item.get("name"), "placement": placement(args),
                    "env": dict(common, **(item.get("env") or {}))})
    return out


def converged_results(results: Any, check_mode: bool = False) -> Dict[str, Any]:
    """``sglang_server_results`` as a run that finds every instance ready on unchanged files reports it.

    Such a run restarts nothing, writes nothing and measures nothing: the figures are those kept with the last
    good launch (measured by the run that made it), and there is no time to ready or baseline of this run.
    Applying it twice gives the same result.
    """
    if not isinstance(results, Mapping):
        return {}
    out: Dict[str, Any] = {}
    for name, record in results.items():
        if not isinstance(record, Mapping):
            continue
        item = dict(record)
        measured = str(record.get("probe_measured") or "never")
        if measured == "this run":
            figures = probe_figures(record.get("probe"))
            item["probe"] = figures
            item["probe_measured"] = (LAST_LAUNCH + str(figures.get("started_at", "?"))) if figures else "never"
        item.update(restarted=False, check_mode=bool(check_mode), changed_files=[], time_to_ready_s=None,
                    probe_baseline=None)
        out[str(name)] = item
    return out


def _release(version: Any) -> tuple:
    """A release string as numbers for comparing (``0.5.23`` -> (0, 5, 23)); unknown parts count as 0."""
    parts = []
    for part in str(version or "").split(".")[:3]:
        digits = re.match(r"\d*", part).group(0)  # leading digits: 0.5.2rc1 is 0.5.2, not 0.5.21
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))


def converged_readiness(record: Any) -> Dict[str, Any]:
    """The readiness check of one server for the converged check, from its ``sglang_server_results`` entry.

    The same endpoint and wait the launch asks when it restarts nothing: ``/ready`` (answered at once) from
    SGLang 0.5.20, else ``/health`` (which runs one generation, hence the longer wait). The host comes from the
    unit's --config file on the target.
    """
    if not isinstance(record, Mapping):
        return {}
    ready = _release(record.get("sglang_version")) >= (0, 5, 20)
    return {"unit": record.get("unit"), "port": record.get("port"), "path": "/ready" if ready else "/health",
            "timeout": 2.0 if ready else 25.0}
