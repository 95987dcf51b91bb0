"""The stand-in's scheduler: continuous batching paced by the profile.

Like SGLang's scheduler it runs one decode step for the whole running batch at a
time, so every running request gets its tokens in the same step and a larger
batch makes each step a little slower. New requests are prefilled in batches
(time to first token = overhead + uncached prompt tokens / prefill rate) and join
the decode batch; beyond ``max_running_requests`` they queue. One timer per step,
not per stream, is what keeps 16 streams at 5,000 tokens/s on one core.

Steps follow an absolute schedule (no drift); a loop that falls far behind
re-anchors instead of bursting. Tokens are handed to each request's ``sink``
synchronously, which writes them to the client's socket.
"""

import asyncio
import bisect
import random
import time
from typing import Callable, Dict, List, Optional

from . import logs
from .profile import Pace

TTFT_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 120.0, 160.0)
ITL_BUCKETS = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080,
               0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0)
E2E_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 150.0, 200.0)


class Histogram:  # pylint: disable=too-few-public-methods
    """A Prometheus-style cumulative histogram without a dependency."""

    def __init__(self, buckets):
        self.buckets = tuple(buckets)
        self.counts = [0] * (len(self.buckets) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        """Record one value."""
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value
        self.count += 1


class Stats:  # pylint: disable=too-many-instance-attributes,too-few-public-methods
    """Counters behind /metrics and /server_info; spec totals are cumulative since start, as in SGLang."""

    def __init__(self):
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.cached_tokens = 0
        self.requests = 0
        self.spec_accept_tokens = 0
        self.spec_forward_ct = 0
        self.spec_correct_drafts = 0
        self.spec_proposed_drafts = 0
        self.spec_verify_calls = 0
        self.last_gen_throughput = 0.0
        self.ttft = Histogram(TTFT_BUCKETS)
        self.itl = Histogram(ITL_BUCKETS)
        self.e2e = Histogram(E2E_BUCKETS)

    def avg_accept_length(self) -> float:
        """Tokens per request per verify step, bonus token included (0 before any step)."""
        return self.spec_accept_tokens / self.spec_forward_ct if self.spec_forward_ct else 0.0


class GenRequest:  # pylint: disable=too-many-instance-attributes,too-few-public-methods
    """One generation in flight."""

    def __init__(self, rid: str, prompt_tokens: int, target: int,  # pylint: disable=too-many-arguments,too-many-positional-arguments
                 finish: Dict, seed: int, sink: Callable[["GenRequest", int, bool], None], cached_tokens: int = 0, count_stats: bool = True):
        self.rid = rid
        self.prompt_tokens = prompt_tokens
        self.cached_tokens = cached_tokens
        self.target = target            # tokens this request will produce
        self.finish = finish            # SGLang's finish_reason dict for when it ends
        self.seed = seed
        self.sink = sink
        self.count_stats = count_stats
        self.generated = 0
        self.verify_ct = 0
        self.correct_drafts = 0
        self.created = time.perf_counter()
        self.first_token_at: Optional[float] = None
        self.last_token_at: Optional[float] = None
        self.finished_at: Optional[float] = None
        self.aborted = False
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()

    @property
    def finished(self) -> bool:
        """Whether every token has been produced."""
        return self.generated >= self.target


class Scheduler:  # pylint: disable=too-many-instance-attributes
    """Batches requests and paces their tokens."""

    def __init__(self, pace: Pace, pace_scale: float,  # pylint: disable=too-many-arguments,too-many-positional-arguments
                 max_running: int, max_total_tokens: int, log_prefix: str, decode_log_interval: int, seed: int, stats: Stats, cuda_graph: bool):
        self.pace = pace
        self.scale = pace_scale
        self.max_running = max(max_running, 1)
        self.max_total_tokens = max(max_total_tokens, 1)
        self.prefix = log_prefix
        self.log_interval = max(decode_log_interval, 1)
        self.rng = random.Random(seed)
        self.stats = stats
        self.cuda_graph = cuda_graph
        self.running: List[GenRequest] = []
        self.prefilling: List[GenRequest] = []
        self.waiting: List[GenRequest] = []
        self.paused = False               # a hung scheduler (fault): no progress at all
        self._wake = asyncio.Event()
        self._prefill_busy = False
        self._steps = 0
        self._window_tokens = 0
        self._window_start = time.perf_counter()
        self._task: Optional[asyncio.Task] = None

    # --- public --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the decode loop task."""
        self._task = asyncio.get_running_loop().create_task(self._decode_loop())

    def submit(self, req: GenRequest) -> None:
        """Queue a request; it is prefilled as soon as the batch has room."""
        self.waiting.append(req)
        self._admit()

    def abort(self, req: GenRequest) -> None:
        """Drop a request whose client went away."""
        req.aborted = True
        for queue in (self.waiting, self.running):
            if req in queue:
                queue.remove(req)
        self._resolve(req)
        self._admit()

    @property
    def num_running(self) -> int:
        """Requests prefilling or decoding."""
        return len(self.running) + len(self.prefilling)

    @property
    def num_waiting(self) -> int:
        """Requests queued for lack of room."""
        return len(self.waiting)

    def token_count(self) -> int:
        """KV tokens held by the running batch."""
        return sum(r.prompt_tokens + r.generated for r in self.running)

    # --- prefill ------------------------------------------------------------------------------

    def _admit(self) -> None:
        if self.paused or self._prefill_busy or not self.waiting:
            return
        room = self.max_running - self.num_running
        if room <= 0:
            return
        batch, self.waiting = self.waiting[:room], self.waiting[room:]
        self.prefilling.extend(batch)
        self._prefill_busy = True
        new_tokens = sum(r.prompt_tokens - r.cached_tokens for r in batch)
        cached = sum(r.cached_tokens for r in batch)
        logs.info(f"Prefill batch, #new-seq: {len(batch)}, #new-token: {new_tokens}, #cached-token: {cached}, "
                  f"token usage: {self.token_count() / self.max_total_tokens:.2f}, #running-req: {len(self.running)}, "
                  f"#queue-req: {len(self.waiting)}, ", self.prefix)
        delay = self.pace.ttft(new_tokens) * self.scale
        asyncio.get_running_loop().call_later(delay, self._prefill_done, batch)

    def _prefill_done(self, batch: List[GenRequest]) -> None:
        self._prefill_busy = False
        now = time.perf_counter()
        for req in batch:
            if req in self.prefilling:
                self.prefilling.remove(req)
            if req.aborted:
                continue
            req.first_token_at = now
            if req.count_stats:
                self.stats.ttft.observe(now - req.created)
            if not self._emit(req, 1, now):
                self.running.append(req)
        self._wake.set()
        self._admit()

    # --- decode ---------------------------------------------------------------------------

    def _tokens_this_step(self) -> int:
        """1 without speculation; with it, the bonus token plus a chain of accepted drafts."""
        accepted = 0
        while accepted < self.pace.draft_depth and self.rng.random() < self.pace.draft_accept_rate:
            accepted += 1
        return 1 + accepted

    def _step_seconds(self, batch: int) -> float:
        step = self.pace.step_time(batch) * self.scale
        if self.pace.jitter:
            step *= 1.0 + self.pace.jitter * (2.0 * self.rng.random() - 1.0)
        return step

    async def _decode_loop(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            if not self.running or self.paused:
                self._wake.clear()
                await self._wake.wait()
                due = loop.time()
            due += self._step_seconds(len(self.running))
            delay = due - loop.time()
            if delay < -0.25:   # starved (a blocked loop): re-anchor rather than burst
                due = loop.time()
            await asyncio.sleep(max(delay, 0.0))  # always yield, even at absurd time scales
            if not self.paused:
                self._step()

    def _step(self) -> None:
        now = time.perf_counter()
        spec = self.pace.draft_depth > 0
        for req in list(self.running):
            n = self._tokens_this_step() if spec else 1
            n = min(n, req.target - req.generated)
            if spec and req.count_stats:
                self.stats.spec_accept_tokens += n
                self.stats.spec_forward_ct += 1
                self.stats.spec_correct_drafts += n - 1
                self.stats.spec_proposed_drafts += self.pace.num_draft_tokens - 1
                self.stats.spec_verify_calls += 1
            req.verify_ct += 1
            req.correct_drafts += n - 1
            if self._emit(req, n, now) and req in self.running:
                self.running.remove(req)
        self._steps += 1
        if self._steps % self.log_interval == 0:
            self._log_decode(now)
        self._admit()

    def _emit(self, req: GenRequest, n: int, now: float) -> bool:
        """Hand ``n`` new tokens to the request; returns whether it is over (finished or client gone)."""
        if req.count_stats and req.last_token_at is not None:
            self.stats.itl.observe(now - req.last_token_at)
        req.last_token_at = now
        req.generated += n
        self._window_tokens += n
        if req.count_stats:
            self.stats.generation_tokens += n
        done = req.finished
        try:
            req.sink(req, n, done)
        except ConnectionError:
            req.aborted = True
            done = True
        if done:
            req.finished_at = now
            if req.count_stats and not req.aborted:
                self.stats.e2e.observe(now - req.created)
            self._resolve(req)
        return done

    @staticmethod
    def _resolve(req: GenRequest) -> None:
        if not req.done.done():
            req.done.set_result(req)

    def _log_decode(self, now: float) -> None:
        elapsed = max(now - self._window_start, 1e-9)
        self.stats.last_gen_throughput = self._window_tokens / elapsed
        spec = ""
        if self.pace.draft_depth > 0 and self.stats.spec_forward_ct:
            rate = self.stats.spec_correct_drafts / max(self.stats.spec_proposed_drafts, 1)
            spec = f"accept len: {self.stats.avg_accept_length():.2f}, accept rate: {rate:.2f}, "
        logs.info(f"Decode batch, #running-req: {len(self.running)}, #token: {self.token_count()}, "
                  f"token usage: {self.token_count() / self.max_total_tokens:.2f}, {spec}cuda graph: {self.cuda_graph}, "
                  f"gen throughput (token/s): {self.stats.last_gen_throughput:.2f}, #queue-req: {len(self.waiting)}, ",
                  self.prefix)
        self._window_tokens = 0
        self._window_start = now
