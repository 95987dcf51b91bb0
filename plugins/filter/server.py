# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the sglang_server role and the playbooks around it: instances, arguments, records, summaries.

Each filter is a thin adapter over pure, unit-tested functions in plugin_utils/ (named in its docstring);
errors become filter errors through plugin_utils/filter_adapter.py. Each filter's documentation is the
``<filter name>.yml`` file beside this one.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import split_secret_args as _split_secret_args
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.deploy_summary import gateway_line as _gateway_line
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.deploy_summary import server_summary as _server_summary
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.failure_summary import failure_summary as _failure_summary
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.filter_adapter import expect_mapping, filter_errors
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import ServerInstancesError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import server_instances as _server_instances
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import server_instances_check as _server_instances_check
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import ServerLaunchError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import launch_record as _launch_record
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import preflight_facts as _preflight_facts
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import server_args_merge as _server_args_merge
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.sglang_venv import sglang_venv as _sglang_venv


@filter_errors("server_instances", ServerInstancesError)
def server_instances(instances: Any, name: Any, args: Any, env: Any, api_key: Any) -> List[Any]:
    """``sglang_server_instances | gpufleet.sglang.server_instances(sglang_server_instance, sglang_server_args,
    sglang_server_env, sglang_server_api_key)`` (plugin_utils/server_instances.py)."""
    return _server_instances(instances, name, args, env, api_key)


def server_instances_check(instances: Any, name: Any, args: Any, env: Any, user: Any = None, uid: Any = None,
                           paths: Any = None) -> List[str]:
    """``sglang_server_instances | gpufleet.sglang.server_instances_check(sglang_server_instance, sglang_server_args,
    sglang_server_env, user=..., uid=..., paths=...)``: one message per problem, [] when usable
    (plugin_utils/server_instances.py)."""
    return _server_instances_check(instances, name, args, env, user=user, uid=uid, paths=paths)


@filter_errors("server_args_merge", ServerLaunchError)
def server_args_merge(base: Any, tuning_args: Any = None, instance_args: Any = None, extra_args: Any = None,
                      model_path: Any = None, served_model_name: Any = None) -> Dict[str, Any]:
    """``__sglang_server_base_args | gpufleet.sglang.server_args_merge(tuning_args=..., instance_args=..., ...)``
    (plugin_utils/server_launch.py)."""
    return _server_args_merge(base, tuning_args=tuning_args, instance_args=instance_args, extra_args=extra_args,
                              model_path=model_path, served_model_name=served_model_name)


@filter_errors("split_secret_args", ValueError)
def split_secret_args(args: Any) -> Dict[str, Dict[str, Any]]:
    """``args | gpufleet.sglang.split_secret_args``: ``{plain, secret}`` by the one secrets policy
    (module_utils/secrets.py), so only the secret part travels in a no_log option."""
    plain, secret = _split_secret_args(expect_mapping(args, "the input is a dict of SGLang options"))
    return {"plain": plain, "secret": secret}


@filter_errors("preflight_facts", ValueError)
def preflight_facts(gpu_facts: Any, service_user: Any) -> Dict[str, Any]:
    """``gpu_tuning_gpu_facts | default(none) | gpufleet.sglang.preflight_facts(sglang_server_user)``
    (plugin_utils/server_launch.py)."""
    if gpu_facts is not None:
        expect_mapping(gpu_facts, "the input is gpu_tuning_gpu_facts (a dict) or none")
    return _preflight_facts(gpu_facts, service_user)


@filter_errors("launch_record", ServerLaunchError, ValueError)
def launch_record(launch: Any, unit: Any, port: Any, sglang_version: Any, check_mode: Any = False,
                  written: Optional[Dict[str, Any]] = None, findings: Optional[Dict[str, Any]] = None,
                  security: Any = "") -> Dict[str, Any]:
    """``__sglang_server_launch | gpufleet.sglang.launch_record(unit=..., port=..., sglang_version=..., ...)``
    (plugin_utils/server_launch.py)."""
    if written is not None:
        expect_mapping(written, "written is a dict of path: changed")
    return _launch_record(launch, unit, port, sglang_version, check_mode=check_mode, written=written, findings=findings,
                          security=security)


@filter_errors("failure_summary", ValueError)
def failure_summary(result: Any) -> Dict[str, Any]:
    """``ansible_failed_result | gpufleet.sglang.failure_summary`` (plugin_utils/failure_summary.py)."""
    return _failure_summary(expect_mapping(result, "the input is ansible_failed_result (a dict)"))


@filter_errors("server_summary", ValueError)
def server_summary(results: Any, nccl_env: Optional[Dict[str, Any]] = None) -> List[str]:
    """``sglang_server_results | gpufleet.sglang.server_summary(gpu_tuning_env)`` (plugin_utils/deploy_summary.py)."""
    if results is not None:
        expect_mapping(results, "the input is sglang_server_results (a dict per instance)")
    if nccl_env is not None:
        expect_mapping(nccl_env, "nccl_env is gpu_tuning_env (a dict)")
    return _server_summary(results, nccl_env)


@filter_errors("gateway_summary", ValueError)
def gateway_summary(gateway: Any) -> str:
    """``{'url': ..., 'summary': pool.summary, 'drained': [...]} | gpufleet.sglang.gateway_summary``
    (plugin_utils/deploy_summary.py)."""
    return _gateway_line(gateway)


def sglang_venv(root: Any, source: Any, version: Any) -> str:
    """``sglang_install_root | gpufleet.sglang.sglang_venv(sglang_install_source, sglang_install_version)``
    (plugin_utils/sglang_venv.py)."""
    return _sglang_venv(root, source, version)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the server role and its playbooks."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"server_instances": server_instances, "server_instances_check": server_instances_check,
                "server_args_merge": server_args_merge, "split_secret_args": split_secret_args,
                "preflight_facts": preflight_facts, "launch_record": launch_record, "failure_summary": failure_summary,
                "server_summary": server_summary, "gateway_summary": gateway_summary, "sglang_venv": sglang_venv}
