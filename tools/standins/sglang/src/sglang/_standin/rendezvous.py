"""Several nodes, one instance: the rendezvous at ``--dist-init-addr`` and what a lost peer does.

SGLang runs one instance over ``--nnodes`` hosts: every node runs the same command with its own ``--node-rank``,
and torch.distributed's TCP store on node 0 (``tcp://<dist_init_addr>``) is where every scheduler rank meets
(docs/reference/sglang.md#multi-node). What the stand-in rehearses, on one asyncio loop with the phases:

- rank 0 listens at the port of ``dist_init_addr`` (on every local address, as the TCP store does) and waits for
  every rank (``tp_size * pp_size`` processes, ``tp*pp/nnodes`` per node) until ``--dist-timeout`` (torch's
  default 600 s when unset; scaled by ``SGLANG_STANDIN_TIME_SCALE``); past it, torch's own message:
  ``torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 2/4 clients joined.``
  (as quoted in sgl-project/sglang#507), in the scheduler's traceback, then SGLang's SIGQUIT line and the kill;
- a follower connects (retrying while rank 0 is not there yet) and, when rank 0 never answers,
  ``torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect
  to (HOST, PORT).``;
- once all joined, each side keeps its connection: a node that dies (SIGKILL closes its sockets) makes the other
  side lose its peer: Gloo's ``Connection closed by peer [ADDR]:PORT`` in a scheduler traceback, the SIGQUIT
  line, the kill. The stand-in notices at once; real SGLang notices at its next collective (the KV pool sizing
  all-reduce, or NCCL's watchdog), seconds later;
- rank 0 ending without a crash (SIGTERM after its drain) sends every follower the ShutdownReq; a follower
  exits 0 on it, as SGLang's followers do on rank 0's broadcast.

The wire protocol between the stand-in's nodes is its own (one line each way); only the log lines are SGLang's.
"""

import asyncio
import atexit
import os
import socket
import time
from typing import Any, Dict, List, Optional, Tuple

from . import faults as faultmod
from .background import spawn
from . import logs

DEFAULT_TIMEOUT_S = 600.0  # torch.distributed's default for the TCP store when --dist-timeout is unset

INIT_FRAMES: List[faultmod.Frame] = [
    ("srt/model_executor/model_runner.py", 391, "__init__", "min_per_gpu_memory = self.init_torch_distributed()"),
    ("srt/model_executor/model_runner.py", 774, "init_torch_distributed", "init_distributed_environment("),
    ("srt/distributed/parallel_state.py", 1555, "init_distributed_environment", "torch.distributed.init_process_group("),
    ("torch/distributed/distributed_c10d.py", 1710, "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
    ("torch/distributed/rendezvous.py", 238, "_tcp_rendezvous_handler", "store = _create_c10d_store("),
    ("torch/distributed/rendezvous.py", 189, "_create_c10d_store", "return TCPStore("),
]
PEER_FRAMES: List[faultmod.Frame] = [
    ("srt/managers/scheduler.py", 3169, "run_scheduler_process", "scheduler = Scheduler("),
    ("srt/managers/scheduler.py", 367, "__init__", "self.init_model_worker()"),
    ("srt/model_executor/model_runner.py", 601, "initialize", "self.init_memory_pool(min_per_gpu_memory)"),
    ("srt/utils/common.py", 512, "get_available_gpu_memory", "torch.distributed.all_reduce("),
    ("torch/distributed/distributed_c10d.py", 2806, "all_reduce", "work.wait()"),
]


def parse_addr(value: str) -> Tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as SGLang's ``--dist-init-addr`` takes it."""
    host, _colon, port = str(value).rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"sglang stand-in: --dist-init-addr {value!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def traceback_text(frames: List[faultmod.Frame], last: str, root) -> str:
    """A traceback in the scheduler's form, ending with ``last``."""
    return "Traceback (most recent call last):\n" + faultmod._format_frames(frames, root) + "\n" + last + "\n"  # pylint: disable=protected-access


def c10d_stamp() -> str:
    """torch's c10d warning prefix time (``W1201 15:30:00.123456789``)."""
    now = time.time()
    return time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int((now % 1) * 1e9):09d}"


class Group:  # pylint: disable=too-many-instance-attributes
    """This node's side of the rendezvous and of the connections kept afterwards."""

    def __init__(self, launcher, package_root) -> None:
        args = launcher.args
        self.launcher = launcher
        self.root = package_root
        self.nnodes = max(int(args.get("nnodes") or 1), 1)
        self.node_rank = int(args.get("node_rank") or 0)
        tp, pp = int(args.get("tp_size") or 1), int(args.get("pp_size") or 1)
        self.world = tp * pp
        self.per_node = max(self.world // self.nnodes, 1)
        addr = args.get("dist_init_addr") or args.get("nccl_init_addr") or f"{args.get('host') or '127.0.0.1'}:{args.get('nccl_port') or 0}"
        self.host, self.port = parse_addr(addr)
        given = args.get("dist_timeout")
        self.timeout_s = float(given) if given else DEFAULT_TIMEOUT_S
        self.peers: List[Tuple[asyncio.StreamReader, asyncio.StreamWriter, str]] = []
        self.joined = self.per_node
        self.all_joined = asyncio.Event()
        self.server: Optional[asyncio.base_events.Server] = None
        self.shutdown_socks: List[socket.socket] = []

    # --- shared -----------------------------------------------------------------------------

    def fail(self, frames: List[faultmod.Frame], last: str) -> None:
        """A scheduler's exception, SGLang's SIGQUIT line, then the kill of the whole tree (status=9/KILL)."""
        logs.error(f"Scheduler hit an exception: {traceback_text(frames, last, self.root)}", self.launcher.prefixes()[0])
        logs.error("Received sigquit from a child process. It usually means the child failed.")
        self.launcher.die()

    def lost_peer(self, writer: asyncio.StreamWriter) -> None:
        """The other side went away without a ShutdownReq: torch's c10d warning, Gloo's error, the kill."""
        sock = writer.get_extra_info("socket")
        local = writer.get_extra_info("sockname") or ("?", 0)
        remote = writer.get_extra_info("peername") or ("?", 0)
        fd = sock.fileno() if sock is not None else -1
        rank = self.node_rank * self.per_node
        print(f"[rank{rank}]:[W{c10d_stamp()} TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd={fd}, "
              f"addr=[{local[0]}]:{local[1]}, remote=[{remote[0]}]:{remote[1]}): Connection reset by peer", flush=True)
        self.fail(PEER_FRAMES, "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:538] "
                               f"Connection closed by peer [{remote[0]}]:{remote[1]}")

    async def watch(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Follow one kept connection: a ShutdownReq stops a follower cleanly, an end without one kills."""
        while True:
            line = await reader.readline()
            if not line:
                self.lost_peer(writer)
                return
            if line.strip() == b"SHUTDOWN" and self.node_rank > 0:
                logs.info(f"Received ShutdownReq from node_rank 0; node_rank {self.node_rank} exits.")
                import sys  # pylint: disable=import-outside-toplevel
                sys.stdout.flush()
                os._exit(0)  # pylint: disable=protected-access

    # --- rank 0 -----------------------------------------------------------------------------

    async def on_follower(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One follower's connection: its JOIN line counts its ranks; the GO goes out when all are in."""
        line = (await reader.readline()).decode(errors="replace").split()
        if len(line) != 3 or line[0] != "JOIN":
            writer.close()
            return
        self.joined += int(line[2])
        self.peers.append((reader, writer, line[1]))
        sock = writer.get_extra_info("socket")
        if sock is not None:
            self.shutdown_socks.append(socket.socket(fileno=os.dup(sock.fileno())))
        if self.joined >= self.world:
            self.all_joined.set()

    async def lead(self) -> None:
        """Listen, wait for every rank (or time out as torch does), send GO, keep watching."""
        try:
            self.server = await asyncio.start_server(self.on_follower, host=None, port=self.port, reuse_address=True)
        except OSError as exc:
            self.fail(INIT_FRAMES, "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
                                   f"network address. The server socket has failed to bind to [::]:{self.port} (errno: "
                                   f"{exc.errno} - {os.strerror(exc.errno or 98)}). The server socket has failed to bind "
                                   f"to 0.0.0.0:{self.port} (errno: {exc.errno} - {os.strerror(exc.errno or 98)}).")
            return
        try:
            await asyncio.wait_for(self.all_joined.wait(), self.timeout_s * self.launcher.scale)
        except asyncio.TimeoutError:
            self.fail(INIT_FRAMES, f"torch.distributed.DistStoreError: Timed out after {int(self.timeout_s) + 1} seconds "
                                   f"waiting for clients. {self.joined}/{self.world} clients joined.")
            return
        self.server.close()  # a restarted follower meets the next rank 0, not this one
        for reader, writer, _rank in self.peers:
            writer.write(b"GO\n")
            await writer.drain()
            spawn(self.watch(reader, writer))
        atexit.register(self.send_shutdown)

    def send_shutdown(self) -> None:
        """Rank 0 ends without a crash: the ShutdownReq to every follower (a SIGKILL never gets here)."""
        for sock in self.shutdown_socks:
            try:
                sock.sendall(b"SHUTDOWN\n")
                sock.close()
            except OSError:
                pass

    # --- followers ----------------------------------------------------------------------------

    async def follow(self) -> None:
        """Connect to rank 0 (retrying while it is not there), JOIN, wait for GO, keep watching."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s * self.launcher.scale
        connection = None
        while connection is None:
            try:
                connection = await asyncio.open_connection(self.host, self.port)
            except OSError:
                if loop.time() >= deadline:
                    self.fail(INIT_FRAMES, "torch.distributed.DistNetworkError: The client socket has timed out after "
                                           f"{int(self.timeout_s * 1000)}ms while trying to connect to ({self.host}, {self.port}).")
                    return
                await asyncio.sleep(0.1)
        reader, writer = connection
        writer.write(f"JOIN {self.node_rank} {self.per_node}\n".encode())
        await writer.drain()
        try:
            line = await asyncio.wait_for(reader.readline(), max(deadline - loop.time(), 0.01))
        except asyncio.TimeoutError:
            self.fail(INIT_FRAMES, f"torch.distributed.DistStoreError: Timed out after {int(self.timeout_s) + 1} seconds "
                                   "waiting for clients.")
            return
        if line.strip() != b"GO":
            self.lost_peer(writer)
            return
        spawn(self.watch(reader, writer))


async def join(launcher, package_root) -> Optional[Group]:
    """The hook of the init phase: nothing for one node; rank 0 leads, the others follow."""
    if max(int(launcher.args.get("nnodes") or 1), 1) <= 1:
        return None
    group = Group(launcher, package_root)
    if group.node_rank == 0:
        await group.lead()
    else:
        await group.follow()
    return group


def describe(group: Optional[Group]) -> Dict[str, Any]:
    """What ``/server_info``'s standin section may say about the group (tests read it)."""
    if group is None:
        return {}
    return {"nnodes": group.nnodes, "node_rank": group.node_rank, "world": group.world, "joined": group.joined}
