# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.nccl_policy: GPU facts in, the NCCL environment and SGLang flag adjustments out.

The rules live in module_utils/nccl_policy.py (pure, unit-tested rule by rule); this file only adapts them to
Jinja for the gpu_tuning role. A filter rather than a module because the decision needs nothing from the host
but the gpu_facts result the role already has: it runs on the controller, identically under --check, with no
round trip. It adds the two things the role needs beside the decision itself: the text of the environment
file (so its format is tested here, not in a template) and the transport the verification all-reduce must log.
Documentation: nccl_policy.yml beside this file.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import is_nvlink, pair_key
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import decide_nccl_policy

_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Values systemd's EnvironmentFile= parser takes verbatim; anything else is double-quoted and escaped.
_PLAIN_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:/@%+=-]*$")
# NCCL_P2P_LEVEL values in order of reach (NCCL's src/graph/paths.cc); LOC means no P2P at all.
_P2P_REACH = {"LOC": 0, "NVL": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 4, "SYS": 5}
_LINK_REACH = {"PIX": 2, "PXB": 3, "PHB": 4, "NODE": 4, "SYS": 5}
_DEFAULT_P2P_LEVEL = "PXB"  # NCCL >= 2.23.4 (nccl-pcie.md, Facts)
HEADER = ("# Managed by Ansible (gpufleet.sglang.gpu_tuning): edits here are overwritten.",
          "# NCCL environment for every SGLang unit (EnvironmentFile=), decided from this host's GPU topology by",
          "# rules R1-R8 of the collection's NCCL-over-PCIe reference. Host-wide /etc/nccl.conf is never used (R8).")


def _env_value(key: str, value: Any) -> str:
    """One value as the environment gets it: booleans as NCCL's 1/0, never a newline."""
    if isinstance(value, bool):
        value = "1" if value else "0"
    text = str(value)
    if "\n" in text or "\r" in text:
        raise AnsibleFilterError("nccl_policy: the value of %s contains a line break, which an environment file cannot hold" % key)
    return text


def _quote(value: str) -> str:
    """Quote a value for systemd's EnvironmentFile= parser only when it needs it."""
    if _PLAIN_VALUE_RE.match(value):
        return value
    return '"%s"' % re.sub(r'([\\"$`])', r"\\\1", value)


def render_env_file(policy: Dict[str, Any]) -> str:
    """The environment file: a header naming the rules that fired and why, then KEY=value lines sorted by key.

    Sorted and free of timestamps so the same decision gives byte-identical content: sglang_server restarts
    the service when the file's hash changes, so any churn here would mean a needless restart.
    """
    fired = []
    for entry in policy.get("rules", []):
        if entry["rule"] not in fired:
            fired.append(entry["rule"])
    lines = list(HEADER)
    lines.append("# Rules that fired: %s" % (", ".join(fired) or "none"))
    for entry in policy.get("rules", []):
        lines.append("# %s: %s" % (entry["rule"], " ".join(str(entry["why"]).split())))
    for key in sorted(policy.get("env", {})):
        lines.append("%s=%s" % (key, _quote(policy["env"][key])))
    return "\n".join(lines) + "\n"


def expected_transport(facts: Dict[str, Any], policy: Dict[str, Any]) -> Optional[str]:
    """The transport NCCL should log for the TP group (``P2P`` or ``SHM``), or None without inter-GPU traffic.

    NCCL uses P2P for a pair when P2P is not disabled and the pair's path is within the P2P level (the policy's
    NCCL_P2P_LEVEL, else NCCL's default PXB cutoff); NVLink pairs always qualify. One pair outside is enough for
    NCCL to route that hop through host memory (SHM), so the group expects P2P only if every pair qualifies.
    """
    group = policy.get("tp_gpus") or []
    if len(group) < 2 or policy.get("errors"):
        return None
    env = policy.get("env", {})
    if env.get("NCCL_P2P_DISABLE") == "1":
        return "SHM"
    level = _P2P_REACH.get(str(env.get("NCCL_P2P_LEVEL", _DEFAULT_P2P_LEVEL)).upper(), _P2P_REACH[_DEFAULT_P2P_LEVEL])
    links = facts.get("links") or {}
    for pos, i in enumerate(group):
        for j in group[pos + 1:]:
            link = links.get(pair_key(i, j))
            if is_nvlink(link):
                continue
            if link is None or _LINK_REACH.get(link, 99) > level:
                return "SHM"
    return "P2P"


def _tp_gpus(value: Any) -> Optional[List[int]]:
    if value in (None, "", []):
        return None
    if not isinstance(value, (list, tuple)):
        raise AnsibleFilterError("nccl_policy: tp_gpus must be a list of GPU indexes, not %r" % (value,))
    try:
        return [int(i) for i in value]
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("nccl_policy: tp_gpus must hold GPU indexes (integers), got %r" % (value,)) from exc


def nccl_policy(facts: Any, tp_gpus: Any = None, tp_size: Any = None, strict_acs: bool = False,
                passthrough_env: Any = None) -> Dict[str, Any]:
    """``gpu_facts | gpufleet.sglang.nccl_policy(tp_gpus=[0, 1], strict_acs=false, passthrough_env={})``.

    Returns decide_nccl_policy's result plus ``env_file`` (the file's text) and ``expected_transport``.
    Passthrough values are stringified here (booleans as 1/0) because everything ends in an environment.
    """
    if not isinstance(facts, dict) or "gpu_count" not in facts:
        raise AnsibleFilterError("nccl_policy: the input must be the gpufleet.sglang.gpu_facts result (a dict with gpu_count, gpus, links)")
    passthrough = passthrough_env or {}
    if not isinstance(passthrough, dict):
        raise AnsibleFilterError("nccl_policy: passthrough_env must be a dict of environment variables")
    bad = sorted(str(k) for k in passthrough if not _ENV_NAME_RE.match(str(k)))
    if bad:
        raise AnsibleFilterError("nccl_policy: passthrough_env has names that are not environment variables: %s" % ", ".join(bad))
    passthrough = {str(k): _env_value(str(k), v) for k, v in passthrough.items()}
    size = int(tp_size) if tp_size not in (None, "", 0) else None
    policy = decide_nccl_policy(facts, _tp_gpus(tp_gpus), tp_size=size, strict_acs=bool(strict_acs), passthrough_env=passthrough)
    policy["env_file"] = render_env_file(policy)
    policy["expected_transport"] = expected_transport(facts, policy)
    return policy


class FilterModule:
    """Jinja filters of gpufleet.sglang for the NCCL policy."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"nccl_policy": nccl_policy}
