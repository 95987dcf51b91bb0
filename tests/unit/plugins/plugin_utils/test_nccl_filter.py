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
