#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A short NCCL all-reduce over the visible GPUs, run by gpufleet.sglang.gpu_tuning to prove its decision.

Why a measurement: ``nvidia-smi topo -m`` tells the type of a path, not its quality (two PHB pairs measured 13.2
vs 6.5 GB/s when one card sat on chipset lanes), and ACS or a translated IOMMU can break P2P that the driver
reports as OK. NCCL's own log (NCCL_DEBUG=INFO, set by the role) names the transport each channel uses
(``via P2P/...`` or ``via SHM/...``); this script adds the bus bandwidth, computed as nccl-tests does for
all-reduce: algorithm bandwidth x 2(n-1)/n. It prints one line ``<marker> {json}`` from rank 0.

Runs with the service venv's python (torch with CUDA), one process per visible GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time


def free_port() -> int:
    """A free TCP port on loopback for the process group's rendezvous."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bus_bandwidth_gbps(size_bytes: int, seconds_per_iteration: float, world: int) -> float:
    """nccl-tests' all-reduce bus bandwidth in GB/s: what each link carries, comparable across GPU counts."""
    algbw = size_bytes / seconds_per_iteration / 1e9
    return algbw * 2.0 * (world - 1) / world


def nccl_version(torch) -> str:
    """NCCL's version as torch reports it: a tuple in current releases, an int like 2708 in old ones."""
    version = torch.cuda.nccl.version()
    return ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)


def worker(rank: int, world: int, port: int, size_bytes: int, iterations: int, results) -> None:
    """One rank: join the group, check one all-reduce for correctness, then time ``iterations`` of them."""
    import torch  # pylint: disable=import-outside-toplevel
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    tensor = torch.ones(size_bytes // 4, dtype=torch.float32, device="cuda")
    dist.all_reduce(tensor)
    torch.cuda.synchronize()
    correct = bool(torch.all(tensor == float(world)).item())
    tensor.zero_()
    for _warmup in range(5):
        dist.all_reduce(tensor)
    torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _iteration in range(iterations):
        dist.all_reduce(tensor)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    if rank == 0:
        results.put({"correct": correct, "seconds": elapsed})
    dist.destroy_process_group()


def main() -> int:
    """Spawn one rank per GPU, print the result line, and exit non-zero when the all-reduce was wrong."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, required=True, help="ranks to spawn, one per visible GPU")
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--marker", default="GPUFLEET_ALLREDUCE")
    args = parser.parse_args()

    import torch  # pylint: disable=import-outside-toplevel
    import torch.multiprocessing as mp  # pylint: disable=import-outside-toplevel

    visible = torch.cuda.device_count()
    if visible < args.gpus:
        print("%s %s" % (args.marker, json.dumps({"error": "%d GPUs visible, %d needed" % (visible, args.gpus)})), flush=True)
        return 2
    size_bytes = args.size_mib * 1024 * 1024
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    mp.spawn(worker, args=(args.gpus, free_port(), size_bytes, args.iterations, results), nprocs=args.gpus, join=True)
    measured = results.get()
    per_iteration = measured["seconds"] / args.iterations
    report = {
        "gpus": args.gpus, "size_mib": args.size_mib, "iterations": args.iterations, "correct": measured["correct"],
        "seconds_per_iteration": round(per_iteration, 6),
        "algbw_gbps": round(size_bytes / per_iteration / 1e9, 2),
        "busbw_gbps": round(bus_bandwidth_gbps(size_bytes, per_iteration, args.gpus), 2),
        "nccl_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
        "torch": torch.__version__, "nccl": nccl_version(torch),
    }
    print("%s %s" % (args.marker, json.dumps(report)), flush=True)
    return 0 if measured["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
