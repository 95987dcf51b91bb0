"""The launch sequence: SGLang's startup phases, HTTP, warmup, ready, faults and graceful stop.

Order and texts follow docs/reference/sglang.md#startup-phases: resolved ``server_args=`` line,
parallel init, weight loading, KV cache, CUDA graph capture, scheduler summary,
startup timings, uvicorn's lines (HTTP binds only now: connection refused before),
warmup through the server's own HTTP (``/health`` answers 503 meanwhile), then
``The server is fired up and ready to roll!``. Every duration is the profile's
times ``SGLANG_STANDIN_TIME_SCALE``. Everything runs on one asyncio loop, so a
hung phase still reacts to signals.
"""

import asyncio
import errno
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import sglang

from . import faults as faultmod
from . import logs, releases, rendezvous, settings
from .api import App
from .background import spawn
from .engine import Scheduler, Stats
from .http import HttpServer, Request, Response, json_response
from .profile import MODEL_NOT_FOUND, memory_plan, pace_for, startup_seconds

PACKAGE_ROOT = Path(sglang.__file__).resolve().parent
WARMUP_PROMPT = "The capital city of France is"


async def http_call(host: str, port: int, method: str, path: str,  # pylint: disable=too-many-arguments,too-many-positional-arguments
                    body: Optional[Dict[str, Any]] = None, headers: Optional[Dict[str, str]] = None) -> int:
    """A tiny HTTP/1.1 client for the warmup requests SGLang sends to itself; returns the status."""
    reader, writer = await asyncio.open_connection(host, port)
    payload = json.dumps(body).encode() if body is not None else b""
    head = [f"{method} {path} HTTP/1.1", f"host: {host}:{port}", "connection: close",
            f"content-length: {len(payload)}", "content-type: application/json"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    await reader.read()
    writer.close()
    return status


def connect_host(host: str) -> str:
    """Where to reach a server bound to ``host`` from the same machine."""
    return {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)


def graph_batch_sizes(max_bs: int) -> List[int]:
    """Decode batch sizes captured, like SGLang's default list."""
    sizes = [b for b in (1, 2, 4, 8) if b <= max_bs] + list(range(16, max_bs + 1, 8))
    return sizes or [1]


class Launcher:  # pylint: disable=too-many-instance-attributes,too-many-public-methods
    """One server process from resolved args to exit."""

    def __init__(self, server_args):
        self.sa = server_args
        self.release = settings.release()
        self.faults = faultmod.from_settings()
        self.scale = settings.time_scale()
        if "slow_start" in self.faults.kinds:
            self.scale *= self.faults.slow_factor
        self.args: Dict[str, Any] = {}
        self.profile: Dict[str, Any] = {}
        self.stop = None
        self.app: Optional[App] = None
        self.http: Optional[HttpServer] = None
        self.timings: Dict[str, float] = {}
        self.memory: Dict[str, float] = {}
        self.phase_seconds: Dict[str, float] = {}
        self.graph: Dict[str, str] = {}

    # --- helpers -----------------------------------------------------------------------------

    def prefixes(self) -> List[str]:
        """Log prefixes of this node's scheduler ranks (`` TP0``, `` TP1``...)."""
        tp, pp = int(self.args.get("tp_size") or 1), int(self.args.get("pp_size") or 1)
        nnodes, node = max(int(self.args.get("nnodes") or 1), 1), int(self.args.get("node_rank") or 0)
        per_node = max(tp * pp // nnodes, 1)
        ranks = range(node * per_node, node * per_node + per_node)
        return [logs.rank_prefix(r % tp, tp, r // tp, pp) for r in ranks][:8]

    def each_rank(self, message: str) -> None:
        """A startup line as every local scheduler rank prints it."""
        for prefix in self.prefixes():
            logs.info(message, prefix)

    async def pause(self, phase: str, share: float = 1.0) -> float:
        """Spend a phase's scaled duration; returns the unscaled seconds it stands for."""
        seconds = self.phase_seconds.get(phase, 0.0) * share
        await asyncio.sleep(seconds * self.scale)
        return seconds

    def die(self) -> None:
        """SGLang's fatal path: kill the whole process tree, the launcher included (status=9/KILL)."""
        sys.stdout.flush()
        sys.stderr.flush()
        if self.faults.exit_code is not None:
            os._exit(self.faults.exit_code)  # pylint: disable=protected-access
        os.kill(os.getpid(), signal.SIGKILL)

    def fault_context(self) -> Dict[str, str]:
        """Numbers the traceback texts quote."""
        return {"gpu_gib": str(self.profile["gpu"]["memory_gib"]), "architecture": self.profile["model"]["architecture"],
                "mem_fraction_static": str(self.args.get("mem_fraction_static")),
                "model_not_found": MODEL_NOT_FOUND.format(path=self.args.get("model_path"))}

    async def scheduler_crash(self, phase: str, cause: str) -> None:
        """A scheduler subprocess dies: its traceback, the launcher's SIGQUIT line, then the kill."""
        await self.pause(phase, 0.5)
        trace = faultmod.scheduler_traceback(cause, phase, self.fault_context(), PACKAGE_ROOT)
        logs.error(f"Scheduler hit an exception: {trace}", self.prefixes()[0])
        logs.error("Received sigquit from a child process. It usually means the child failed.")
        self.die()

    async def checkpoint(self, phase: str, hang_here: bool = True) -> None:
        """Injected faults at the start of ``phase``: crash (this never returns) or hang."""
        if self.faults.crash_in(phase):
            await self.scheduler_crash(phase, self.faults.cause)
        if hang_here:
            await self.hang_point(phase)

    async def hang_point(self, phase: str) -> None:
        """Hang here when asked to; a capture hangs after its ``begin`` line, as a stuck capture does in SGLang."""
        if self.faults.hang_in(phase):
            await asyncio.Event().wait()

    # --- startup phases ---------------------------------------------------------------------------

    async def phase_init(self) -> None:
        """NCCL / parallel init; custom all-reduce on GPUs without P2P dies here."""
        word = releases.parallel_init_word(self.release)
        self.each_rank(f"{word} begin.")
        await self.checkpoint("init")
        self.group = await rendezvous.join(self, PACKAGE_ROOT)  # several nodes: meet at --dist-init-addr (rendezvous.py)
        gpu = self.profile["gpu"]
        tp = int(self.args.get("tp_size") or 1)
        if tp > 1 and not gpu.get("p2p", True) and not self.args.get("disable_custom_all_reduce"):
            await self.scheduler_crash("init", "p2p")  # custom all-reduce on GPUs without P2P
        spent = await self.pause("init")
        if word == "Init parallel":
            self.each_rank(f"Init parallel ends. elapsed={spent:.2f} s")
        else:
            self.each_rank("Init torch distributed ends. mem usage=0.00 GB")

    async def phase_load(self) -> None:
        """Weight loading: the longest phase on a real box."""
        avail = self.memory["avail_start_gib"]
        self.each_rank(f"Load weight begin. avail mem={avail:.2f} GB")
        await self.checkpoint("load")
        spent = await self.pause("load")
        self.timings["load_weight"] = spent
        weights = self.memory["weights_gib"]
        self.each_rank(f"Load weight end. elapsed={spent:.2f} s, type={self.profile['model']['architecture']}, "
                       f"avail mem={avail - weights:.2f} GB, mem usage={weights:.2f} GB.")

    async def phase_kv(self) -> None:
        """KV cache allocation; a memory fraction that leaves no room fails here as in SGLang."""
        await self.checkpoint("kv")
        plan = self.memory
        if plan["fraction"] > 0.98:
            await self.scheduler_crash("kv", "oom_kv")
        if plan["tokens"] <= 0:
            await self.scheduler_crash("kv", "not_enough_memory")
        spent = await self.pause("kv")
        self.timings["kv_cache_allocation"] = spent
        half = plan["kv_gib"] / 2
        dtype = "dtype: torch.bfloat16, " if releases.kv_line_has_dtype(self.release) else ""
        self.each_rank(f"KV Cache is allocated. {dtype}#tokens: {plan['tokens']}, K size: {half:.2f} GB, V size: {half:.2f} GB")
        self.each_rank(f"Memory pool end. avail mem={self.avail_after_kv():.2f} GB")

    def avail_after_kv(self) -> float:
        """Free memory once weights and KV are in."""
        plan = self.memory
        return plan["total_gib"] * (1 - plan["fraction"]) + float(self.profile["gpu"].get("graph_reserve_gib", 0.5))

    async def phase_graphs(self) -> None:
        """CUDA graph capture: prefill (piecewise/breakable) first, then decode or verify."""
        await self.checkpoint("graph", hang_here=False)
        graph = self.graph
        avail = self.avail_after_kv()
        new_style = releases.phase_graph_lines(self.release)
        spent_prefill = spent_decode = 0.0
        if graph["prefill"] != "disabled":
            if new_style:
                self.each_rank(f"Capture target prefill CUDA graph begin. backend={graph['prefill']}, "
                               f"num_tokens=[4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], avail mem={avail:.2f} GB")
                await self.hang_point("graph")
            else:
                self.each_rank(f"Capture piecewise CUDA graph begin. avail mem={avail:.2f} GB")
                await self.hang_point("graph")
            spent_prefill = await self.pause("graph_prefill")
            avail -= 0.12
            if new_style:
                self.each_rank(f"Capture target prefill CUDA graph end. elapsed={spent_prefill:.2f} s, mem usage=0.12 GB, "
                               f"avail mem={avail:.2f} GB.")
            else:
                self.each_rank(f"Capture piecewise CUDA graph end. Time elapsed: {spent_prefill:.2f} s. mem usage=0.12 GB. "
                               f"avail mem={avail:.2f} GB.")
        if graph["decode"] != "disabled":
            sizes = graph_batch_sizes(int(self.args.get("cuda_graph_max_bs_decode") or self.args.get("cuda_graph_max_bs") or 32))
            spec = self.args.get("speculative_algorithm")
            kind = "target verify" if spec else "target decode"
            per_req = int(self.args.get("speculative_num_draft_tokens") or 1) if spec else 1
            if new_style:
                self.each_rank(f"Capture {kind} CUDA graph begin. backend={graph['decode']}, num_tokens_per_req={per_req}, "
                               f"avail mem={avail:.2f} GB")
                await self.hang_point("graph")
            else:
                self.each_rank(f"Capture cuda graph begin. This can take up to several minutes. avail mem={avail:.2f} GB")
                await self.hang_point("graph")
            spent_decode = await self.pause("graph_decode")
            if new_style:
                self.each_rank(f"Capture {kind} CUDA graph end. bs={sizes}, elapsed={spent_decode:.2f} s, "
                               f"mem usage=0.52 GB, avail mem={avail - 0.52:.2f} GB.")
                if spec:
                    self.each_rank(f"Capture draft decode CUDA graph end. bs={sizes}, elapsed=0.00 s, mem usage=0.10 GB, "
                                   f"avail mem={avail - 0.62:.2f} GB.")
            else:
                self.each_rank(f"Capture cuda graph end. Time elapsed: {spent_decode:.2f} s. mem usage=0.52 GB. "
                               f"avail mem={avail - 0.52:.2f} GB.")
        self.timings["cuda_graph_prefill"] = spent_prefill
        self.timings["cuda_graph_decode"] = spent_decode

    # --- serving --------------------------------------------------------------------------------

    def max_running(self) -> int:
        """``--max-running-requests`` or SGLang's memory-derived default."""
        given = self.args.get("max_running_requests")
        return int(given) if given else min(max(self.memory["tokens"] // 2, 1), 4096)

    async def bind(self, handler) -> bool:
        """Uvicorn's startup: lines, bind (or its bind error), 'Uvicorn running on'."""
        host, port = self.args.get("host") or "127.0.0.1", int(self.args.get("port") or 30000)
        logs.UVICORN.info("Started server process [%d]", os.getpid())
        logs.UVICORN.info("Waiting for application startup.")
        logs.UVICORN.info("Application startup complete.")
        self.http = HttpServer(handler, keep_alive_s=float(os.environ.get("SGLANG_TIMEOUT_KEEP_ALIVE", "5")))
        try:
            if "port_in_use" in self.faults.kinds:
                raise OSError(errno.EADDRINUSE, f"error while attempting to bind on address {(host, port)!r}: "
                                                "address already in use")
            await self.http.start(host, port)
        except OSError as exc:
            logs.UVICORN.error("%s", exc)
            logs.UVICORN.info("Waiting for application shutdown.")
            logs.UVICORN.info("Application shutdown complete.")
            return False
        shown = f"[{host}]" if ":" in host else host
        logs.UVICORN.info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", shown, port)
        return True

    async def warmup(self) -> None:
        """SGLang's ``_wait_and_warmup``: model_info, one /generate, then the ready line."""
        await self.pause("warmup")
        if self.faults.crash_in("warmup"):
            trace = faultmod.warmup_traceback(self.fault_context(), PACKAGE_ROOT, self.faults.cause)
            logs.error(f"Initialization failed. warmup error: {trace}")
            self.die()
        if self.faults.hang_in("warmup"):
            return
        host, port = connect_host(self.args.get("host") or "127.0.0.1"), int(self.args.get("port") or 30000)
        headers = {"authorization": f"Bearer {self.args['api_key']}"} if self.args.get("api_key") else {}
        if not self.args.get("skip_server_warmup"):
            await http_call(host, port, "GET", "/model_info", headers=headers)
            await http_call(host, port, "POST", "/generate", headers=headers, body={
                "text": WARMUP_PROMPT, "sampling_params": {"temperature": 0, "max_new_tokens": 8}})
        self.app.status = "Up"
        logs.info("The server is fired up and ready to roll!")
        self.timings["ready_at"] = time.time()
        spawn(self.after_ready())

    async def after_ready(self) -> None:
        """Faults that strike once the server is up: exit N s after ready, or health turning 503."""
        kinds = self.faults.kinds
        if not kinds & {"exit_after_ready", "unhealthy"}:
            return
        await asyncio.sleep(self.faults.after_s * self.scale)
        if "unhealthy" in kinds:
            self.app.hung = True
            self.app.scheduler.paused = True
        if "exit_after_ready" in kinds:
            logs.error(f"Subprocess scheduler_0 (pid={os.getpid() + 1}) crashed with exit code -9. "
                       "Triggering SIGQUIT for cleanup...")
            logs.error("SIGQUIT received. signum=None, frame=None. It usually means one child failed.")
            self.die()

    def on_sigterm(self) -> None:
        """Graceful exit: health turns 503, requests drain, then exit 0."""
        if self.app is not None and not self.app.shutting_down:
            self.app.shutting_down = True
            logs.info("SIGTERM received. signum=15 frame=None. Draining requests and shutting down...")
        self.stop.set()

    async def drain(self) -> None:
        """Wait for running and queued requests, reporting like SGLang every 5 (scaled) seconds."""
        scheduler = self.app.scheduler
        last_report = 0.0
        while scheduler.num_running or scheduler.num_waiting:
            now = time.monotonic()
            if now - last_report >= 5.0 * max(self.scale, 0.01):
                logs.info(f"Gracefully exiting... Remaining number of requests {scheduler.num_running + scheduler.num_waiting}.")
                last_report = now
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # let the last chunks reach their sockets

    async def follower(self) -> int:
        """Node rank >= 1: no API, SGLang's dummy health server (always 200) until stopped."""
        async def dummy(request: Request) -> Response:
            if request.path in ("/health", "/health_generate", "/ping"):
                return Response(200, content_type="")
            return json_response({"detail": "Not Found"}, 404)
        if not await self.bind(dummy):
            return 1
        loop = asyncio.get_running_loop()
        node = int(self.args.get("node_rank") or 0)

        def on_term() -> None:
            logs.info(f"SIGTERM received on node_rank {node}; waiting for the rank-0 ShutdownReq broadcast to stop "
                      "the schedulers.")
            self.stop.set()
        loop.add_signal_handler(signal.SIGTERM, on_term)
        await self.stop.wait()
        return 0

    # --- main ----------------------------------------------------------------------------------

    async def main(self) -> int:
        """Run the server; returns the exit status."""
        self.stop = asyncio.Event()
        logs.configure_server(getattr(self.sa, "log_level", "info"), getattr(self.sa, "log_level_http", None))
        if not releases.validates_in_prepare(self.release):
            self.sa.resolve_once()
        self.sa.check_server_args()
        self.args = self.sa.fields()
        self.graph = self.sa.__dict__.get("_cuda_graph", {"decode": "full", "prefill": "disabled"})
        self.profile = self.sa.profile
        if self.faults.crash_in("args"):  # a main-process failure: Python's own traceback, exit status 1
            if self.faults.cause == "model_not_found":
                raise OSError(MODEL_NOT_FOUND.format(path=self.args.get("model_path")))
            raise RuntimeError(f"stand-in injected failure ({self.faults.cause}) in phase args")
        if self.faults.hang_in("args"):
            await asyncio.Event().wait()
        logs.info(f"server_args={self.sa!r}")
        self.memory = memory_plan(self.profile, self.args)
        self.phase_seconds = startup_seconds(self.profile, self.args)
        started = time.monotonic()
        await self.phase_init()
        await self.phase_load()
        await self.phase_kv()
        await self.phase_graphs()
        prefix0 = self.prefixes()[0]
        logs.info(f"max_total_num_tokens={self.memory['tokens']}, chunked_prefill_size={self.args.get('chunked_prefill_size')}, "
                  f"max_prefill_tokens={self.args.get('max_prefill_tokens')}, max_running_requests={self.max_running()}, "
                  f"context_len={self.args.get('context_length')}, available_gpu_mem={self.avail_after_kv() - 0.52:.2f} GB",
                  prefix0)
        if int(self.args.get("node_rank") or 0) > 0:
            return await self.follower()
        return await self.serve(started, prefix0)

    async def serve(self, started: float, prefix0: str) -> int:
        """Rank 0: startup timings, HTTP, warmup, serve until SIGTERM."""
        timings = {k: round(v, 2) for k, v in self.timings.items()}
        if releases.at_least(self.release, "0.5.22"):
            logs.info(f"Engine startup timings (s): load_weight={timings.get('load_weight', 0):.2f}, "
                      f"kv_cache_allocation={timings.get('kv_cache_allocation', 0):.2f}, "
                      f"scheduler_e2e={(time.monotonic() - started) / max(self.scale, 1e-9):.2f}, "
                      f"cuda_graph={{prefill={timings.get('cuda_graph_prefill', 0):.2f},decode={timings.get('cuda_graph_decode', 0):.2f}}}, "
                      f"tokenizer_e2e={self.phase_seconds.get('http', 0):.2f}")
        pace = pace_for(self.profile, self.args)
        stats = Stats()
        graph = self.graph.get("decode", "full") != "disabled"
        scheduler = Scheduler(pace, settings.pace_scale(), self.max_running(), self.memory["tokens"], prefix0,
                              int(self.args.get("decode_log_interval") or 40), int(settings.get_float("seed", 0)),
                              stats, graph)
        extra = {"launch_command": getattr(self.sa, "_launch_command", ""), "startup_time": timings,
                 "weights_gib": round(self.memory["weights_gib"], 2), "kv_gib": round(self.memory["kv_gib"], 2),
                 "startup_total_s": time.monotonic() - started,
                 "standin": {"profile": self.profile.get("name"), "release": self.release,
                             "expected_stream_tok_s": round(pace.stream_tok_s(1) / settings.pace_scale(), 3),
                             "expected_accept_length": round(pace.accept_length, 3)}}
        self.app = App(self.args, self.release, self.profile, scheduler, stats, self.scale, extra)
        await self.pause("http")
        if not await self.bind(self.app.handle):
            return 1
        scheduler.start()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.on_sigterm)
        spawn(self.warmup())
        await self.stop.wait()
        await self.drain()
        self.http.close()
        logs.UVICORN.info("Shutting down")
        logs.UVICORN.info("Finished server process [%d]", os.getpid())
        return 0


def run_server(server_args) -> None:
    """Launch and block until the server stops; the exit status is SGLang's."""
    sys.stdout.reconfigure(line_buffering=True)
    code = asyncio.run(Launcher(server_args).main())
    if code:
        sys.exit(code)
