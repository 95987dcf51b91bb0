# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One SGLang instance's launch, as data: its merged arguments, the host facts its preflight lints against, and
the record of what runs (``sglang_server_results``) that every play summary reads.

Why functions and not Jinja: the argument merge is a six-level precedence with one conditional level, and the
record has a check-mode list of files, a three-way "when were these figures measured" and a regular expression
over ``systemd-analyze`` output. In Jinja only Molecule ever reached them; here each case is unit-tested.

Runs on the controller (filters ``gpufleet.sglang.server_args_merge``, ``preflight_facts`` and
``launch_record``); standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Dict, List, Optional

# The order of server_args_merge, lowest first; a level of that name that is None is skipped.
ARGS_LEVELS = ("base", "tuning", "instance", "extra")
EXPOSURE_RE = re.compile(r"Overall exposure level for [^:]+: (?P<level>[0-9.]+)")
UNMEASURED = "never"


class ServerLaunchError(ValueError):
    """An input of the wrong shape (a level of arguments that is not a mapping)."""


def server_args_merge(base: Any, tuning_args: Any = None, instance_args: Any = None, extra_args: Any = None,
                      model_path: Any = None, served_model_name: Any = None) -> Dict[str, Any]:
    """An instance's SGLang arguments, each level over the one before (a shallow merge, like ``combine``):

    1. ``base``: the role's defaults (loopback, port 30000);
    2. ``tuning_args``: ``gpu_tuning_server_args``, what the GPU tuning rules adjust;
    3. ``instance_args``: the instance's own ``args`` (``sglang_server_args`` for a single instance);
    4. ``extra_args``: ``sglang_server_extra_args``, over every instance (a change tried from the command line, tune.yml);
    5. ``model_path``: ``model_cache_model_path`` when the model_cache role set it - the verified weights win;
    6. ``served_model_name``: ``model_cache_served_model_name``, unless the instance's own args name it.

    Why 6 yields to the instance only: the name clients use is the operator's choice per instance, while the
    path is a fact of the host. None for a level means "not set" and skips it. (Not ``instance=``: Ansible's
    filter call takes that keyword for itself.)
    """
    merged: Dict[str, Any] = {}
    for label, level in zip(ARGS_LEVELS, (base, tuning_args, instance_args, extra_args)):
        if level is None:
            continue
        if not isinstance(level, Mapping):
            raise ServerLaunchError("the %s arguments must be a mapping of SGLang options, not %s" % (label, type(level).__name__))
        merged.update(level)
    if model_path is not None:
        merged["model_path"] = model_path
    if served_model_name is not None and "served_model_name" not in (instance_args or {}):
        merged["served_model_name"] = served_model_name
    return merged


def _truthy(value: Any) -> bool:
    """What Ansible's ``bool`` filter makes of a value: True, 1, or yes/on/1/true in any case; otherwise False."""
    if isinstance(value, (str, int)):  # bool is an int: str(True) is "True"
        return str(value).lower() in ("yes", "on", "1", "true")
    return isinstance(value, float) and value == 1


def preflight_facts(gpu_facts: Any, service_user: str) -> Dict[str, Any]:
    """The host facts the preflight's cross-flag rules read.

    ``service_user`` always; ``gpu_p2p`` (every GPU pair reads peer to peer, ``p2p_read`` all ``OK``) and
    ``nvlink`` (``nvlink_full_mesh``) only when ``gpu_facts`` (``gpu_tuning_gpu_facts``) measured P2P at all: an
    unknown P2P state must not read as "no P2P" and refuse a flag that would work.
    """
    facts: Dict[str, Any] = {"service_user": service_user}
    p2p = gpu_facts.get("p2p_read") if isinstance(gpu_facts, Mapping) else None
    if isinstance(p2p, Mapping) and p2p:
        facts["gpu_p2p"] = all(value == "OK" for value in p2p.values())
        facts["nvlink"] = _truthy(gpu_facts.get("nvlink_full_mesh", False))
    return facts


def changed_files(launch: Mapping, written: Optional[Mapping], check_mode: bool) -> List[str]:
    """The files that changed since the last good launch, or that this check-mode run would write.

    The launch module compares the files on disk with its last good snapshot. In check mode the new files were
    never written, so it can only say "(files that this run would write)"; that placeholder is dropped and the
    files whose tasks reported a change (``written``: path -> changed) are named instead. Order kept, no repeats.
    """
    files = [str(path) for path in launch.get("changed_files") or [] if not str(path).startswith("(")]
    if check_mode:
        files += [str(path) for path, changed in (written or {}).items() if changed]
    return list(dict.fromkeys(files))


def probe_measured(launch: Mapping) -> str:
    """When the figures in the record were measured: ``this run``, ``at the last launch, <time>`` or ``never``."""
    if "probe" in launch:
        return "this run"
    if "last_good_probe" in launch:
        last = launch["last_good_probe"]
        started = last.get("started_at", "?") if isinstance(last, Mapping) else "?"
        return "at the last launch, %s" % started
    return UNMEASURED


def security_exposure(stdout: Any) -> Optional[str]:
    """The overall exposure level ``systemd-analyze security`` printed, as it printed it (``"1.8"``); None without one."""
    match = EXPOSURE_RE.search(stdout) if isinstance(stdout, str) else None
    return match.group("level") if match else None


def launch_record(launch: Mapping, unit: str, port: Any, sglang_version: Any, check_mode: bool = False,
                  written: Optional[Mapping] = None, findings: Optional[Mapping] = None, security: Any = "") -> Dict[str, Any]:
    """What runs as one instance after its launch, from the result of ``sglang_launch`` (``launch``).

    The keys the play summaries (``server_summary``) and rollout reports read: unit, port, sglang_version,
    restarted, check_mode, changed_files, time_to_ready_s, probe (this run's, else the last good launch's),
    probe_measured, probe_baseline, findings (the preflight's counts) and security_exposure.
    """
    if not isinstance(launch, Mapping):
        raise ServerLaunchError("the launch result must be the registered result of sglang_launch, not %s" % type(launch).__name__)
    check_mode = bool(check_mode)
    return {
        "unit": unit,
        "port": port,
        "sglang_version": sglang_version,
        "restarted": launch.get("restarted"),
        "check_mode": check_mode,
        "changed_files": changed_files(launch, written, check_mode),
        "time_to_ready_s": launch.get("time_to_ready_s"),
        "probe": launch["probe"] if "probe" in launch else launch.get("last_good_probe"),
        "probe_measured": probe_measured(launch),
        "probe_baseline": launch.get("probe_baseline"),
        "findings": {} if findings is None else findings,
        "security_exposure": security_exposure(security),
    }
