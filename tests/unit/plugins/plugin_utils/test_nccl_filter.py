# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where SGLang puts an instance's ranks, as the nccl_policy filter reads it from the server's arguments.

The expected CUDA devices are SGLang 0.5.23's own formula worked by hand: rank ``i`` of pipeline stage ``s`` of
data-parallel replica ``k`` runs on ``base_gpu_id + k*tp*pp*gpu_id_step + s*tp_per_node + i*gpu_id_step``.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.nccl_filter import (
    NcclFilterError,
    cuda_device_groups,
    placement,
    visible_devices,
)

FACTS = {"gpu_count": 4, "gpus": [{"index": i, "uuid": "GPU-%d1e2f7a0-0000" % i} for i in range(4)]}


@pytest.mark.parametrize("args,groups,how", [
    ({}, [[0]], "tp_size 1, base_gpu_id 0, gpu_id_step 1"),
    ({"tp_size": 4}, [[0, 1, 2, 3]], "tp_size 4, base_gpu_id 0, gpu_id_step 1"),
    ({"tp_size": 2, "base_gpu_id": 4, "gpu_id_step": 2}, [[4, 6]], "tp_size 2, base_gpu_id 4, gpu_id_step 2"),
    ({"tp_size": "2", "base_gpu_id": "1"}, [[1, 2]], "tp_size 2, base_gpu_id 1, gpu_id_step 1"),
    ({"tp_size": 2, "dp_size": 3}, [[0, 1], [2, 3], [4, 5]], "tp_size 2, dp_size 3, base_gpu_id 0, gpu_id_step 1"),
    ({"tp_size": 2, "dp_size": 2, "gpu_id_step": 2}, [[0, 2], [4, 6]], "tp_size 2, dp_size 2, base_gpu_id 0, gpu_id_step 2"),
    ({"tp_size": 2, "dp_size": 2, "enable_dp_attention": "true"}, [[0, 1]], "tp_size 2, dp_size 2, base_gpu_id 0, gpu_id_step 1"),
    ({"tp_size": 2, "pp_size": 2}, [[0, 1, 2, 3]], "tp_size 2, pp_size 2, base_gpu_id 0, gpu_id_step 1"),
    ({"tp_size": 8, "nnodes": 2}, [[0, 1, 2, 3]], "tp_size 8, nnodes 2, base_gpu_id 0, gpu_id_step 1"),
    ({"tp_size": 2, "pp_size": 2, "nnodes": 2}, [[0, 1]], "tp_size 2, pp_size 2, nnodes 2, base_gpu_id 0, gpu_id_step 1"),
])
def test_cuda_devices_follow_sglangs_placement(args, groups, how):
    assert cuda_device_groups(args) == (groups, how)


def test_placement_reads_dashes_and_long_names_and_keeps_defaults():
    opts = placement({"tensor-parallel-size": 2, "pipeline_parallel_size": 3, "data-parallel-size": 4, "gpu-id-step": None,
                      "model_path": "x"})
    assert opts == {"tp_size": 2, "pp_size": 3, "dp_size": 4, "nnodes": 1, "base_gpu_id": 0, "gpu_id_step": 1,
                    "enable_dp_attention": False}


@pytest.mark.parametrize("args,match", [
    ({"tp_size": 0}, "tp_size must be a whole number >= 1, not 0"),
    ({"tp_size": 2.5}, "tp_size must be a whole number >= 1, not 2.5"),
    ({"tp_size": True}, "tp_size must be a whole number >= 1, not True"),
    ({"base_gpu_id": -1}, "base_gpu_id must be a whole number >= 0, not -1"),
    ({"tp_size": 3, "nnodes": 2}, "tp_size 3 does not split over 2 nodes"),
])
def test_values_sglang_refuses_are_refused(args, match):
    with pytest.raises(NcclFilterError, match=match):
        cuda_device_groups(args)


def test_visible_devices_keep_cudas_order_and_take_uuid_prefixes():
    assert visible_devices("3, 1", FACTS) == [3, 1]
    assert visible_devices("GPU-21e2,0", FACTS) == [2, 0]
    with pytest.raises(NcclFilterError, match="'GPU-' is not a GPU index or the UUID of one GPU"):
        visible_devices("GPU-", FACTS)  # a prefix of every UUID names no single GPU


# ---------------------------------------------------------------------------------------------------------------------
# The environment file, the filter's option checks and the groups of several instances, exactly (make mutation).

from ansible_collections.gpufleet.sglang.plugins.plugin_utils import nccl_filter  # noqa: E402 (grouped with its tests)

HEADER = ("# Managed by Ansible (gpufleet.sglang.gpu_tuning): edits here are overwritten.\n"
          "# NCCL environment for every SGLang unit (EnvironmentFile=), decided from this host's GPU topology by the\n"
          "# rules of docs/reference/nccl-over-pcie.md. Host-wide /etc/nccl.conf is never used (env-in-unit-file).\n")


def test_env_file_exact_text():
    """Header, the rules that fired (each once), each why on one line, then KEY=value sorted, quoted as needed."""
    policy = {"rules": [{"rule": "a-rule", "why": "one\n  two"}, {"rule": "b", "why": 3}, {"rule": "a-rule", "why": "again"}],
              "env": {"Z": "1", "A": 'x y"$`\\', "NCCL_P2P_LEVEL": "PHB"}}
    assert nccl_filter.render_env_file(policy) == HEADER + (
        "# Rules that fired: a-rule, b\n# a-rule: one two\n# b: 3\n# a-rule: again\n"
        'A="x y\\"\\$\\`\\\\"\nNCCL_P2P_LEVEL=PHB\nZ=1\n')
    assert nccl_filter.render_env_file({}) == HEADER + "# Rules that fired: none\n"


@pytest.mark.parametrize("value, quoted", [
    ("", ""), ("a-b_c.d,e:f/g@h%i+j=k", "a-b_c.d,e:f/g@h%i+j=k"), ("a b", '"a b"'), ("\u00e9", '"\u00e9"'),
    ('q"', '"q\\""'), ("$x", '"\\$x"'), ("`x`", '"\\`x\\`"'), ("\\", '"\\\\"'), ("a'b", '"a\'b"'),
])
def test_quote_only_what_systemd_would_misread(value, quoted):
    """Plain values stay bare; others are double-quoted with \\ " $ ` escaped."""
    assert nccl_filter.quote(value) == quoted


@pytest.mark.parametrize("value, text", [(True, "1"), (False, "0"), (2, "2"), ("INFO", "INFO"), (0.5, "0.5")])
def test_env_values(value, text):
    """Booleans as NCCL's 1/0, everything else as text."""
    assert nccl_filter.env_value("K", value) == text


@pytest.mark.parametrize("value", ["a\nb", "a\rb"])
def test_env_values_refuse_line_breaks(value):
    """A line break would end the line in the file: refused, naming the variable."""
    with pytest.raises(NcclFilterError) as err:
        nccl_filter.env_value("NCCL_DEBUG", value)
    assert str(err.value) == "the value of NCCL_DEBUG contains a line break, which an environment file cannot hold"


@pytest.mark.parametrize("value, gpus", [(None, None), ("", None), ([], None), ([0, "2"], [0, 2]), ((3,), [3])])
def test_tp_gpus_option(value, gpus):
    """Empty means 'not given'; a list is read as integers."""
    assert nccl_filter.tp_gpus_option(value) == gpus


@pytest.mark.parametrize("value, message", [
    ("0,1", "tp_gpus must be a list of GPU indexes, not '0,1'"),
    ({"a": 1}, "tp_gpus must be a list of GPU indexes, not {'a': 1}"),
    (["x"], "tp_gpus must hold GPU indexes (integers), got ['x']"),
    ([None], "tp_gpus must hold GPU indexes (integers), got [None]"),
])
def test_tp_gpus_option_refuses(value, message):
    """Anything but a list of integers is refused with the value."""
    with pytest.raises(NcclFilterError) as err:
        nccl_filter.tp_gpus_option(value)
    assert str(err.value) == message


def test_passthrough_option():
    """Names must be environment variable names; values become text; None and {} are no pass-through."""
    assert nccl_filter.passthrough_option(None) == {}
    assert nccl_filter.passthrough_option({}) == {}
    assert nccl_filter.passthrough_option({"NCCL_DEBUG": "INFO", "_X1": True, "n": 3}) == {
        "NCCL_DEBUG": "INFO", "_X1": "1", "n": "3"}
    with pytest.raises(NcclFilterError) as err:
        nccl_filter.passthrough_option(["NCCL_DEBUG=INFO"])
    assert str(err.value) == "passthrough_env must be a dict of environment variables"
    with pytest.raises(NcclFilterError) as err:
        nccl_filter.passthrough_option({"1X": 1, "A-B": 2, "OK": 3, "A B": 4})
    assert str(err.value) == "passthrough_env has names that are not environment variables: 1X, A B, A-B"


@pytest.mark.parametrize("args, message", [
    ({"pp_size": 0}, "pp_size must be a whole number >= 1, not 0"),
    ({"dp_size": "two"}, "dp_size must be a whole number >= 1, not 'two'"),
    ({"nnodes": None, "gpu_id_step": [1]}, "gpu_id_step must be a whole number >= 1, not [1]"),
    ({"tp_size": "2", "base_gpu_id": "0.5"}, "base_gpu_id must be a whole number >= 0, not '0.5'"),
    ({"tp_size": "2.0"}, "tp_size must be a whole number >= 1, not '2.0'"),
    ({"dp_size": 2, "nnodes": 2, "tp_size": 2}, "dp_size 2 across 2 nodes: SGLang refuses --dp-size > 1 across nodes "
                                                "(docs/reference/sglang.md#multi-node-and-shutdown)"),
    ({"tp_size": 3, "nnodes": 2}, "tp_size 3 does not split over 2 nodes (SGLang refuses it)"),
])
def test_placement_values_refused_exactly(args, message):
    """Each option below its least value or not a whole number, and DP across nodes."""
    with pytest.raises(NcclFilterError) as err:
        cuda_device_groups(args)
    assert str(err.value) == message


@pytest.mark.parametrize("args, groups", [
    ({"tp_size": 2.0, "base_gpu_id": "3"}, [[3, 4]]),
    ({"tp_size": 2, "dp_size": 2, "enable_dp_attention": True}, [[0, 1]]),
    ({"tp_size": 2, "dp_size": 2, "enable_dp_attention": " On "}, [[0, 1]]),
    ({"tp_size": 2, "dp_size": 2, "enable_dp_attention": "1"}, [[0, 1]]),
    ({"tp_size": 2, "dp_size": 2, "enable_dp_attention": "YES"}, [[0, 1]]),
    ({"tp_size": 2, "dp_size": 2, "enable_dp_attention": "no"}, [[0, 1], [2, 3]]),
    ({"tp_size": 4, "pp_size": 4, "nnodes": 2}, [[0, 1, 2, 3, 4, 5, 6, 7]]),
    ({"tp_size": 2, "nnodes": 4, "pp_size": 2}, [[0]]),
])
def test_placement_edges(args, groups):
    """Whole floats and text count; DP attention in any spelling keeps one group; stages over nodes."""
    assert cuda_device_groups(args)[0] == groups


def test_visible_devices_refusals():
    """Empty, a GPU past the host's last, and an unknown UUID each say what to do."""
    with pytest.raises(NcclFilterError) as err:
        visible_devices(" ", FACTS)
    assert str(err.value) == "CUDA_VISIBLE_DEVICES is empty: SGLang would see no GPU"
    with pytest.raises(NcclFilterError) as err:
        visible_devices("0,4", FACTS)
    assert str(err.value) == "CUDA_VISIBLE_DEVICES=0,4 names GPU 4, which this host lacks (it has GPUs 0-3)"
    with pytest.raises(NcclFilterError) as err:
        visible_devices("MIG-1234", FACTS)
    assert str(err.value) == ("CUDA_VISIBLE_DEVICES=MIG-1234: 'MIG-1234' is not a GPU index or the UUID of one GPU of "
                              "this host (MIG instances cannot be placed on the topology): set gpu_tuning_tp_gpus")
    assert visible_devices("GPU-31e2f7a0-0000", FACTS) == [3]
    assert visible_devices("3", FACTS) == [3]


L40S4 = {"gpu_count": 4, "gpus": [{"index": i, "uuid": "GPU-%d1e2f7a0-0000" % i, "name": "NVIDIA L40S"} for i in range(4)]}


def test_server_groups_exact():
    """Instances on the same GPUs are one group (labels joined), DP replicas groups of their own, unnamed instances
    numbered, CUDA_VISIBLE_DEVICES mapped, extra args over every instance, and a group past the host an error."""
    servers = [{"name": "a", "args": {"tp_size": 2}},
               {"args": {"tp_size": 2, "base_gpu_id": 2}, "env": {"CUDA_VISIBLE_DEVICES": "3,2,1,0"}},
               {"name": "c", "args": {"tp_size": 2, "gpu_id_step": 2}},
               {"name": "d", "args": {"tp_size": 8}},
               {"name": "e", "args": {"tp_size": 2, "dp_size": 2}}]
    assert nccl_filter.server_groups(L40S4, servers, extra_args={"gpu_id_step": 1}, server_env={"X": "1"}) == {
        "groups": {"a, c, e dp0": [0, 1], "instance 1": [1, 0], "e dp1": [2, 3]},
        "sources": {"a, c, e dp0": "a: GPUs [0, 1] from tp_size 2, base_gpu_id 0, gpu_id_step 1; "
                                   "c: GPUs [0, 1] from tp_size 2, base_gpu_id 0, gpu_id_step 1; "
                                   "e dp0: GPUs [0, 1] from tp_size 2, dp_size 2, base_gpu_id 0, gpu_id_step 1",
                    "instance 1": "instance 1: CUDA devices [2, 3] = GPUs [1, 0] (CUDA_VISIBLE_DEVICES=3,2,1,0) from "
                                  "tp_size 2, base_gpu_id 2, gpu_id_step 1",
                    "e dp1": "e dp1: GPUs [2, 3] from tp_size 2, dp_size 2, base_gpu_id 0, gpu_id_step 1"},
        "warnings": [],
        "errors": [("tp-group", "d: tp_size 8, base_gpu_id 0, gpu_id_step 1 needs GPUs [0, 1, 2, 3, 4, 5, 6, 7], but "
                                "this host has GPUs 0-3")]}


def test_groups_past_the_last_gpu():
    """A group that ends one GPU past the host's last is refused; facts without a GPU count mean no GPU."""
    out = nccl_filter.server_groups(L40S4, [{"name": "a", "args": {"tp_size": 2, "base_gpu_id": 3}}])
    assert out["errors"] == [("tp-group", "a: tp_size 2, base_gpu_id 3, gpu_id_step 1 needs GPUs [3, 4], but this "
                                          "host has GPUs 0-3")]
    out = nccl_filter.server_groups({"gpus": []}, [{"name": "a"}])
    assert out["groups"] == {} and out["errors"][0][1].startswith("a: tp_size 1, base_gpu_id 0, gpu_id_step 1 needs "
                                                                  "GPUs [0], but this host has GPUs")
    with pytest.raises(NcclFilterError, match="^CUDA_VISIBLE_DEVICES=0 names GPU 0, which this host lacks"):
        visible_devices("0", {"gpus": []})


def test_server_env_under_the_instances_env():
    """The common env is the base; an instance's own env wins over it."""
    servers = [{"name": "a", "args": {"tp_size": 2}, "env": {"CUDA_VISIBLE_DEVICES": "2,3"}}, {"name": "b"}]
    out = nccl_filter.server_groups(L40S4, servers, server_env={"CUDA_VISIBLE_DEVICES": "1"})
    assert out["groups"] == {"a": [2, 3], "b": [1]}


def test_visible_devices_that_show_too_few_gpus():
    """Ranks on CUDA devices that CUDA_VISIBLE_DEVICES does not show are an error for that instance only."""
    out = nccl_filter.server_groups(L40S4, [{"name": "a", "args": {"tp_size": 2}, "env": {"CUDA_VISIBLE_DEVICES": "1"}}])
    assert out["errors"] == [("tp-group", "a: its TP ranks run on CUDA devices [0, 1], but CUDA_VISIBLE_DEVICES=1 "
                                          "shows 1 GPU(s)")]
    assert out["groups"] == {}


MIXED = {"gpu_count": 2, "gpus": [{"index": 0, "name": "NVIDIA L40S", "uuid": "GPU-a"},
                                  {"index": 1, "name": "NVIDIA RTX A6000", "uuid": "GPU-b"}]}
ORDER_WARNING = ("a: GPU models differ on this host and CUDA_DEVICE_ORDER is not PCI_BUS_ID, so CUDA numbers the "
                 "fastest GPU first, not as nvidia-smi does: set CUDA_DEVICE_ORDER=PCI_BUS_ID in its env, or its TP "
                 "group may not be the GPUs decided for")


@pytest.mark.parametrize("env, warned", [
    ({}, True), ({"CUDA_DEVICE_ORDER": " PCI_BUS_ID "}, False), ({"CUDA_DEVICE_ORDER": "FASTEST_FIRST"}, True),
    ({"CUDA_VISIBLE_DEVICES": "1,0"}, True), ({"CUDA_VISIBLE_DEVICES": "GPU-b,GPU-a"}, False),
])
def test_mixed_models_warn_only_when_cuda_numbering_may_differ(env, warned):
    """By-index placement on mixed models needs PCI_BUS_ID order; UUIDs do not."""
    out = nccl_filter.server_groups(MIXED, [{"name": "a", "args": {"tp_size": 2}, "env": env}])
    assert out["warnings"] == ([("tp-group", ORDER_WARNING)] if warned else [])


@pytest.mark.parametrize("kwargs, message", [
    ({"servers": {"name": "a"}}, "servers must be a list of SGLang instances ({name, args, env}), not dict"),
    ({"servers": ["a"]}, "servers[0] must be a dict ({name, args, env}), not str"),
    ({"servers": [{"name": "a", "args": [1]}]}, "the args of a must be a dict, not list"),
    ({"servers": [{"name": "a", "env": "X=1"}]}, "the env of a must be a dict, not str"),
    ({"servers": [], "extra_args": "x"}, "server_extra_args must be a dict, not str"),
    ({"servers": [], "server_env": 3}, "server_env must be a dict, not int"),
])
def test_server_groups_refuse_bad_input(kwargs, message):
    """Every input of the wrong shape, named."""
    with pytest.raises(NcclFilterError) as err:
        nccl_filter.server_groups(L40S4, **kwargs)
    assert str(err.value) == message


def test_placement_defaults_are_sglangs():
    """SGLang's defaults, which are also the least value of each option."""
    assert nccl_filter.PLACEMENT_DEFAULTS == {"tp_size": 1, "pp_size": 1, "dp_size": 1, "nnodes": 1, "base_gpu_id": 0,
                                              "gpu_id_step": 1}
