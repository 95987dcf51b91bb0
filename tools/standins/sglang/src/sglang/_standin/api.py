"""SGLang's HTTP API as the collection uses it: health, info, OpenAI and native generation, metrics.

Response shapes follow ``sglang/srt/entrypoints/http_server.py`` and the OpenAI
serving code (docs/reference/sglang.md#completions-and-chat-streaming): SSE ``data: {...}\\n\\n`` chunks ending with
``data: [DONE]``, a final usage chunk with ``stream_options.include_usage``, native
``/generate`` chunks with cumulative text and ``meta_info``. Auth is SGLang's: a
Bearer key on everything except ``/health*``, ``/ready*`` and ``/metrics*``.
"""

import asyncio
import json
import os
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import logs, releases, tokens
from .engine import GenRequest, Scheduler, Stats
from .http import Request, Response, StreamResponse, Writer, json_response
from .metrics import render_metrics

OPEN_PREFIXES = ("/health", "/ready", "/metrics")
ADMIN_OPTIONAL = ("/flush_cache",)
FLUSH_TEXT = ("Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting "
              "requests, the operation will not be performed.)\n")


def sse(obj: Any) -> bytes:
    """One server-sent event as SGLang writes it."""
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def openai_error(message: str, status: int = 400) -> Response:
    """SGLang's OpenAI-style error body."""
    kind = "BadRequestError" if status == 400 else "InternalServerError"
    return json_response({"object": "error", "message": message, "type": kind, "param": None, "code": status}, status)


def usage(prompt: int, completion: int, cached: int, with_cache_report: bool) -> Dict[str, Any]:
    """OpenAI usage as SGLang reports it (``prompt_tokens_details`` only with --enable-cache-report)."""
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": cached} if with_cache_report else None, "reasoning_tokens": 0}


def json_object(request: Request) -> Optional[Dict[str, Any]]:
    """The request's JSON body when it is an object, else None (the handler answers 400, as SGLang does)."""
    try:
        body = request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


class App:  # pylint: disable=too-many-instance-attributes
    """Routes and state of the served API."""

    def __init__(self, args: Dict[str, Any], release: str,  # pylint: disable=too-many-arguments,too-many-positional-arguments
                 profile: Dict[str, Any], scheduler: Scheduler, stats: Stats, time_scale: float, server_info_extra: Dict[str, Any]):
        self.args = args
        self.release = release
        self.profile = profile
        self.scheduler = scheduler
        self.stats = stats
        self.time_scale = time_scale
        self.info_extra = server_info_extra
        self.status = "Starting"
        self.shutting_down = False
        self.hung = False                # injected 'unhealthy': the scheduler stopped answering
        self.started = time.time()
        self.prompt_cache: set = set()
        self.eos = int(profile["model"].get("eos_token_id", 2))
        self.routes: Dict[Tuple[str, str], Callable] = {}
        for methods, path, handler in (
                (("GET", "POST"), "/health", self.health), (("GET", "POST"), "/health_generate", self.health),
                (("GET",), "/model_info", self.model_info), (("GET",), "/get_model_info", self.model_info),
                (("GET",), "/server_info", self.server_info), (("GET",), "/get_server_info", self.server_info),
                (("GET",), "/v1/models", self.models), (("POST",), "/v1/completions", self.completions),
                (("POST",), "/v1/chat/completions", self.chat), (("POST", "PUT"), "/generate", self.generate),
                (("GET", "POST"), "/flush_cache", self.flush_cache)):
            for method in methods:
                self.routes[(method, path)] = handler
        if releases.has_ready_endpoint(release):
            self.routes[("GET", "/ready")] = self.ready
        if args.get("enable_metrics"):
            self.routes[("GET", "/metrics")] = self.metrics

    # --- dispatch ---------------------------------------------------------------------------

    def _auth_error(self, request: Request) -> Optional[Response]:
        """SGLang's API-key middleware: 401 unless the Bearer key matches; health/ready/metrics stay open."""
        if request.path.startswith(OPEN_PREFIXES):
            return None
        api_key, admin_key = self.args.get("api_key"), self.args.get("admin_api_key")
        expected = admin_key if (admin_key and request.path in ADMIN_OPTIONAL) else api_key
        if not expected:
            return None
        given = request.headers.get("authorization", "")
        if given != f"Bearer {expected}":
            return json_response({"error": "Unauthorized"}, 401)
        return None

    async def handle(self, request: Request):
        """Route one request."""
        denied = self._auth_error(request)
        if denied is not None:
            return denied
        handler = self.routes.get((request.method, request.path))
        if handler is None:
            known = any(path == request.path for _m, path in self.routes)
            return json_response({"detail": "Method Not Allowed" if known else "Not Found"}, 405 if known else 404)
        if request.path.startswith("/get_"):
            logs.warning(f"Endpoint '{request.path}' is deprecated and will be removed in a future version. "
                         f"Please use '{request.path.replace('/get_', '/')}' instead.")
        return await handler(request)

    # --- health and info --------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """503 while starting or shutting down; otherwise a 1-token generation must come back."""
        if self.shutting_down or self.status == "Starting":
            return Response(503, content_type="")
        if self.hung:
            timeout = float(os.environ.get("SGLANG_HEALTH_CHECK_TIMEOUT", "20"))
            tic = time.strftime("%H:%M:%S")
            await asyncio.sleep(timeout * self.time_scale)
            logs.error(f"Health check failed. Server couldn't get a response from detokenizer for last "
                       f"{int(timeout)} seconds. tic start time: {tic}. last_heartbeat time: {tic}")
            self.status = "UnHealthy"
            return Response(503, content_type="")
        gen_flag = os.environ.get("SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION", "true").lower()
        if request.path == "/health" and gen_flag in ("0", "false", "no"):
            return Response(200, content_type="")
        probe = GenRequest(f"HEALTH_CHECK_{uuid.uuid4().hex}", 1, 1, {"type": "length", "length": 1}, 0,
                           lambda *_: None, count_stats=False)
        self.scheduler.submit(probe)
        await asyncio.sleep(1.0 * self.time_scale)
        await probe.done
        self.status = "Up"
        return Response(200, content_type="")

    async def ready(self, _request: Request) -> Response:
        """0.5.20+: 200 iff the server is up and not shutting down; no generation."""
        ok = self.status == "Up" and not self.shutting_down
        return Response(200 if ok else 503, content_type="")

    def model_facts(self) -> Dict[str, Any]:
        """The ``/model_info`` body."""
        model = self.profile["model"]
        return {"model_path": self.args.get("model_path"), "tokenizer_path": self.args.get("tokenizer_path"),
                "is_generation": True, "preferred_sampling_params": self.args.get("preferred_sampling_params"),
                "weight_version": self.args.get("weight_version", "default"),
                "has_image_understanding": bool(model.get("multimodal")), "has_audio_understanding": False,
                "model_type": model["architecture"].split("For")[0].lower(), "architectures": [model["architecture"]],
                "served_model_name": self.args.get("served_model_name"), "load_format": self.args.get("load_format", "auto"),
                "reasoning_parser": self.args.get("reasoning_parser"), "tool_call_parser": self.args.get("tool_call_parser"),
                "disaggregation_mode": self.args.get("disaggregation_mode", "null")}

    async def model_info(self, _request: Request) -> Response:
        """Model facts."""
        return json_response(self.model_facts())

    async def server_info(self, _request: Request) -> Response:
        """Resolved args (api_key in clear, as SGLang does), startup times and cumulative internal states."""
        state: Dict[str, Any] = {"last_gen_throughput": self.stats.last_gen_throughput,
                                 "memory_usage": {"weight": self.info_extra.get("weights_gib"),
                                                  "kvcache": self.info_extra.get("kv_gib"),
                                                  "token_capacity": self.scheduler.max_total_tokens}}
        if self.args.get("speculative_algorithm"):
            state["avg_spec_accept_length"] = self.stats.avg_accept_length()
        body = {**{k: v for k, v in self.args.items() if not k.startswith("_")},
                "launch_command": self.info_extra.get("launch_command", ""),
                "max_total_num_tokens": self.scheduler.max_total_tokens,
                "internal_states": [state], "startup_time": self.info_extra.get("startup_time", {}),
                "version": self.release, "frontend": "python", "standin": self.info_extra.get("standin", {})}
        return json_response(body)

    async def models(self, _request: Request) -> Response:
        """``/v1/models`` with the served model."""
        name = self.args.get("served_model_name")
        return json_response({"object": "list", "data": [{
            "id": name, "object": "model", "created": int(self.started), "owned_by": "sglang",
            "root": name, "parent": None, "max_model_len": self.args.get("context_length")}]})

    async def flush_cache(self, _request: Request) -> Response:
        """Forget cached prefixes; refused (400) while requests run, as SGLang does."""
        busy = self.scheduler.num_running or self.scheduler.num_waiting
        if not busy:
            self.prompt_cache.clear()
            logs.info("Cache flushed successfully!", self.scheduler.prefix)
        return Response(400 if busy else 200, FLUSH_TEXT.encode(), "text/plain; charset=utf-8")

    async def metrics(self, _request: Request) -> Response:
        """Prometheus text with SGLang's metric names."""
        body = render_metrics(self.args, self.scheduler, self.stats, self.info_extra)
        return Response(200, body.encode(), "text/plain; version=0.0.4; charset=utf-8")

    # --- generation -----------------------------------------------------------------------------

    def _plan(self, prompt_key: str, prompt_tokens: int, max_new: Optional[int], ignore_eos: bool) -> Tuple[int, Dict, int, int]:
        """(target tokens, finish_reason, seed, cached tokens) of a new request."""
        seed = tokens.seed_of(prompt_key)
        limit = max_new if max_new is not None else max(int(self.args.get("context_length") or 4096) - prompt_tokens, 1)
        limit = max(int(limit), 1)
        target, finish = limit, {"type": "length", "length": limit}
        if not ignore_eos:
            natural = tokens.natural_length(seed, limit)
            if natural < limit:
                target, finish = natural, {"type": "stop", "matched": self.eos}
        cached = max(prompt_tokens - 1, 0) if prompt_key in self.prompt_cache else 0
        self.prompt_cache.add(prompt_key)
        return target, finish, seed, cached

    def _refuse(self) -> Optional[Response]:
        if self.shutting_down:
            return openai_error("The server is shutting down.", 503)
        return None

    def _context_error(self, prompt: int, max_new: Optional[int], what: str) -> Optional[Response]:
        ctx = int(self.args.get("context_length") or 0)
        if ctx and prompt + (max_new or 0) > ctx:
            return openai_error(
                f"Requested token count exceeds the model's maximum context length of {ctx} tokens. You requested a "
                f"total of {prompt + (max_new or 0)} tokens: {prompt} tokens from the input {what} and {max_new or 0} "
                "tokens for the completion. Please reduce the number of tokens in the input messages or the completion "
                "to fit within the limit.")
        return None

    def _count(self, req: GenRequest) -> None:
        if req.count_stats:
            self.stats.requests += 1
            self.stats.prompt_tokens += req.prompt_tokens
            self.stats.cached_tokens += req.cached_tokens

    async def _run(self, req: GenRequest) -> GenRequest:
        """Submit and wait; a cancelled handler (client gone) aborts the request."""
        self._count(req)
        self.scheduler.submit(req)
        try:
            return await req.done
        except asyncio.CancelledError:
            self.scheduler.abort(req)
            raise

    def _include_usage(self, body: Dict[str, Any]) -> Tuple[bool, bool]:
        options = body.get("stream_options") or {}
        include = bool(options.get("include_usage")) or bool(self.args.get("stream_response_default_include_usage"))
        return include, bool(options.get("continuous_usage_stats"))

    async def completions(self, request: Request):  # pylint: disable=too-many-locals  # one request's closures
        """``/v1/completions``, streaming or not."""
        refused = self._refuse()
        if refused:
            return refused
        body = json_object(request)
        if body is None:
            return openai_error("Invalid JSON body")
        prompt = body.get("prompt", "")
        prompt_text = prompt if isinstance(prompt, str) else " ".join(map(str, prompt))
        prompt_tokens = len(prompt) if isinstance(prompt, list) and prompt and isinstance(prompt[0], int) \
            else tokens.count_text(prompt_text)
        max_new = body.get("max_tokens", 16)
        error = self._context_error(prompt_tokens, max_new, "prompt")
        if error:
            return error
        target, finish, seed, cached = self._plan(prompt_text, prompt_tokens, max_new, bool(body.get("ignore_eos")))
        rid, created = uuid.uuid4().hex, int(time.time())
        model = body.get("model") or self.args.get("served_model_name")
        cache_report = bool(self.args.get("enable_cache_report"))
        reason = "length" if finish["type"] == "length" else "stop"
        matched = finish.get("matched")

        def chunk(text: str, done: bool, gen: Optional[GenRequest], continuous: bool) -> Dict[str, Any]:
            return {"id": rid, "object": "text_completion", "created": created, "model": model,
                    "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": reason if done else None,
                                 "matched_stop": matched if done else None}],
                    "usage": usage(prompt_tokens, gen.generated, cached, cache_report) if continuous and gen else None}

        if not body.get("stream"):
            req = await self._run(GenRequest(rid, prompt_tokens, target, finish, seed, lambda *_: None, cached))
            return json_response({"id": rid, "object": "text_completion", "created": created, "model": model,
                                  "choices": [{"index": 0, "text": tokens.words(seed, 0, req.generated), "logprobs": None,
                                               "finish_reason": reason, "matched_stop": matched}],
                                  "usage": usage(prompt_tokens, req.generated, cached, cache_report)})
        include, continuous = self._include_usage(body)

        async def produce(write: Writer) -> None:
            def sink(gen: GenRequest, n: int, done: bool) -> None:
                write(sse(chunk(tokens.words(seed, gen.generated - n, n), done, gen, continuous)))
            req = await self._run(GenRequest(rid, prompt_tokens, target, finish, seed, sink, cached))
            if req.aborted:
                return
            if include:
                write(sse({"id": rid, "object": "text_completion", "created": created, "model": model, "choices": [],
                           "usage": usage(prompt_tokens, req.generated, cached, cache_report)}))
            write(b"data: [DONE]\n\n")
        return StreamResponse(produce)

    async def chat(self, request: Request):  # pylint: disable=too-many-locals  # one request's closures
        """``/v1/chat/completions``, streaming or not."""
        refused = self._refuse()
        if refused:
            return refused
        body = json_object(request)
        if body is None or not isinstance(body.get("messages"), list):
            return openai_error("Invalid request: 'messages' must be a list")
        messages: List[Dict[str, Any]] = body["messages"]
        prompt_tokens = tokens.count_chat(messages)
        max_new = body.get("max_completion_tokens", body.get("max_tokens"))
        error = self._context_error(prompt_tokens, max_new, "messages")
        if error:
            return error
        key = json.dumps(messages, sort_keys=True)
        target, finish, seed, cached = self._plan(key, prompt_tokens, max_new, bool(body.get("ignore_eos")))
        rid, created = uuid.uuid4().hex, int(time.time())
        model = body.get("model") or self.args.get("served_model_name")
        cache_report = bool(self.args.get("enable_cache_report"))
        reason = "length" if finish["type"] == "length" else "stop"
        matched = finish.get("matched")

        def chunk(delta: Dict[str, Any], done: bool, gen: Optional[GenRequest], continuous: bool) -> Dict[str, Any]:
            return {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason if done else None,
                                 "matched_stop": matched if done else None}],
                    "usage": usage(prompt_tokens, gen.generated, cached, cache_report) if continuous and gen else None}

        def delta(role: Optional[str], content: Optional[str]) -> Dict[str, Any]:
            return {"role": role, "content": content, "reasoning_content": None, "tool_calls": None}

        if not body.get("stream"):
            req = await self._run(GenRequest(rid, prompt_tokens, target, finish, seed, lambda *_: None, cached))
            message = delta("assistant", tokens.words(seed, 0, req.generated))
            return json_response({"id": rid, "object": "chat.completion", "created": created, "model": model,
                                  "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason,
                                               "matched_stop": matched}],
                                  "usage": usage(prompt_tokens, req.generated, cached, cache_report)})
        include, continuous = self._include_usage(body)

        async def produce(write: Writer) -> None:
            write(sse(chunk(delta("assistant", ""), False, None, False)))

            def sink(gen: GenRequest, n: int, _done: bool) -> None:
                write(sse(chunk(delta(None, tokens.words(seed, gen.generated - n, n)), False, gen, continuous)))
            req = await self._run(GenRequest(rid, prompt_tokens, target, finish, seed, sink, cached))
            if req.aborted:
                return
            write(sse(chunk(delta(None, None), True, req, continuous)))
            if include:
                write(sse({"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [], "usage": usage(prompt_tokens, req.generated, cached, cache_report)}))
            write(b"data: [DONE]\n\n")
        return StreamResponse(produce)

    def _meta(self, req: GenRequest, final: bool) -> Dict[str, Any]:
        meta: Dict[str, Any] = {"id": req.rid, "finish_reason": req.finish if final else None,
                                "prompt_tokens": req.prompt_tokens, "weight_version": "default", "total_retractions": 0,
                                "completion_tokens": req.generated, "cached_tokens": req.cached_tokens}
        if self.args.get("speculative_algorithm"):
            meta["spec_verify_ct"] = req.verify_ct
            if final:
                proposed = req.verify_ct * max(self.scheduler.pace.num_draft_tokens - 1, 1)
                meta.update(spec_accept_length=req.generated / max(req.verify_ct, 1),
                            spec_accept_rate=req.correct_drafts / proposed,
                            spec_num_correct_drafts=req.correct_drafts, spec_num_proposed_drafts=proposed)
        if final:
            meta["e2e_latency"] = (req.finished_at or time.perf_counter()) - req.created
        return meta

    async def generate(self, request: Request):  # pylint: disable=too-many-locals  # one request's closures
        """Native ``/generate``: one prompt or a batch, streaming cumulative text or not."""
        refused = self._refuse()
        if refused:
            return refused
        body = json_object(request)
        if body is None:
            return openai_error("Invalid JSON body")
        texts = body.get("text")
        ids = body.get("input_ids")
        batch = isinstance(texts, list) or (isinstance(ids, list) and ids and isinstance(ids[0], list))
        prompts: List[Tuple[str, int]] = []
        if texts is not None:
            for text in (texts if isinstance(texts, list) else [texts]):
                prompts.append((str(text), tokens.count_text(str(text))))
        elif ids is not None:
            for seq in (ids if batch else [ids]):
                prompts.append((json.dumps(seq), len(seq)))
        else:
            return openai_error("Either text or input_ids should be provided.")
        params = body.get("sampling_params") or {}
        if isinstance(params, list):
            params = params[0] if params else {}
        max_new = params.get("max_new_tokens", 128)
        ignore_eos = bool(params.get("ignore_eos"))
        incremental = bool(self.args.get("incremental_streaming_output"))

        def make(key: str, count: int, sink) -> GenRequest:
            target, finish, seed, cached = self._plan(key, count, max_new, ignore_eos)
            return GenRequest(body.get("rid") if isinstance(body.get("rid"), str) and not batch else uuid.uuid4().hex,
                              count, target, finish, seed, sink, cached)

        def out(req: GenRequest, index: int, new: int, final: bool) -> Dict[str, Any]:
            text = tokens.words(req.seed, req.generated - new, new) if incremental else tokens.words(req.seed, 0, req.generated)
            result = {"text": text, "meta_info": self._meta(req, final)}
            if batch:
                result["index"] = index
            return result

        if not body.get("stream"):
            reqs = [make(key, count, lambda *_: None) for key, count in prompts]
            done = await asyncio.gather(*(self._run(r) for r in reqs))
            results = [out(r, i, r.generated, True) for i, r in enumerate(done)]
            return json_response(results if batch else results[0])

        async def produce(write: Writer) -> None:
            reqs: List[GenRequest] = []
            for i, (key, count) in enumerate(prompts):
                def sink(gen: GenRequest, n: int, final: bool, index: int = i) -> None:
                    write(sse(out(gen, index, n, final)))
                reqs.append(make(key, count, sink))
            done = await asyncio.gather(*(self._run(r) for r in reqs))
            if any(r.aborted for r in done):
                return
            write(b"data: [DONE]\n\n")
        return StreamResponse(produce)
