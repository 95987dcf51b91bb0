# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Startup-log scanner for SGLang: follow the phases of a start and decide ready / failed / starting.

Why a pure scanner: the launch module follows the unit's journal and must give a verdict within half a
second of the process's exit, with the whole traceback, a cause label and a concrete hint
(docs/reference/sglang.md#launch-contract). The state machine that reads a start lives here, away from systemd and
HTTP, so it is tested on real SGLang logs: the verbatim corpus in ``tests/data/startup_corpus`` and the test logs in
``tests/unit/plugins/module_utils/data/startup_logs``. What a line is made of lives in :mod:`.lines`, what a
failure means (labels, rules, hints) in :mod:`.causes`.

What it knows about SGLang logs (docs/reference/sglang.md#startup-log-lines, #fatal-markers-and-exit):

* records look like ``[2026-11-30 09:01:58 TP1] message`` (older: ``[09:01:58 TP1]``); scheduler ranks add
  ``DP<n> PP<n> TP<n> EP<n>`` tags, only for dimensions > 1; continuation lines (tracebacks, multi-line
  messages) carry no prefix;
* phases are recognised by stable prefixes that survive version drift (``Init torch distributed`` /
  ``Init parallel``, ``Load weight``, ``KV Cache is allocated`` / ``Memory pool end``, ``Capture ... graph``,
  ``Uvicorn running on``, warmup requests, ``The server is fired up and ready to roll!``);
* a traceback alone is not fatal (a retried hub download, a failed request after ready, shutdown noise);
  fatal are: an argparse error, ``Scheduler hit an exception``, ``Initialization failed. warmup error``,
  ``Received sigquit from a child process``, an uncaught top-level exception, and a few unmistakable
  lines (``Failed: Cuda error ...``, uvicorn's bind error, systemd's ``Main process exited``);
* ``Received sigquit`` often arrives *before* the scheduler's traceback (two processes race on one pipe),
  so a generic fatal marker waits, boundedly, for the traceback that explains it (``pending``);
* serving is ready too: decode batches with running requests, or generation requests answered 200 beyond the one
  warmup request, mean the server was up, so a traceback after them is a runtime error, not a failed start, even
  when the excerpt does not hold the ready line.

What real logs look like, and what the scanner does about it: a traceback without its header (a tail, a UI that
keeps the last error, lost indentation) is collected from its first frame or chain separator; a decisive line
alone (a CUDA OOM, a gated repository, an undefined symbol) is kept as evidence for when the start has failed;
Python 3.11 caret lines and elided frames (``...``) stay inside the traceback; an exception message ends at a line
of another process or at a line that starts something else, also without the blank line that journald drops;
an argparse rejection whose ``error:`` line was lost still shows its ``usage:`` banner. Pasted text may have moved
its lines: a terminal broke them at its width (joined again, :class:`.lines.Rewrapper`), or the paste quoted or
indented every line (read unshifted, :class:`.lines.PasteMargin`), a page escaped it as HTML or a UI flattened a
traceback into one line (read as the program wrote it, :func:`.lines.restore_pasted`); journal entries are read as
they are.

Two inputs, one state machine: :meth:`StartupLogScanner.feed_entry` takes the journal's structured entries
as the launch module follows them; :meth:`StartupLogScanner.feed` (and :func:`scan_startup_log`) takes pasted
text, with or without a relay's prefix (:mod:`.lines`). Tracebacks of different ranks are kept apart by rank tag
and journal PID. Every text field of the result passes through :func:`redact.redact`.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import collections
import re
from typing import Any, Deque, Dict, Iterable, List, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import find_secrets, may_contain_secret, redact
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import cause_in_tiers, hint_for, is_notable
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import (
    WRAP_MIN_WIDTH, LogLine, PasteMargin, Rewrapper, from_journal, is_systemd_exit, is_systemd_line, is_systemd_start, parse_line,
    restore_pasted, starts_line, wrap_width)

# Startup phases in the order SGLang goes through them (docs/reference/sglang.md#startup-phases).
PHASES = (
    "process_started",
    "parallel_init",
    "weights_loading",
    "kv_cache_allocated",
    "cuda_graph_capture",
    "http_up",
    "warmup",
    "ready",
)
_PHASE_ORDER = {name: index for index, name in enumerate(PHASES)}

# Bounds that keep feed() O(1) amortised and the wait for a late traceback finite.
AWAIT_TRACEBACK_LINES = 200  # after a generic fatal marker, lines to wait for the traceback that explains it
STALE_TRACEBACK_LINES = 200  # an open traceback that got no line for this long is closed
CANDIDATE_WINDOW_LINES = 50  # a plain traceback closed this close to a fatal marker is taken as its cause
TRACEBACK_HEAD_LINES = 1000  # very long tracebacks keep their head and tail, with a count of what was left out
TRACEBACK_TAIL_LINES = 1000
TAIL_BUFFER_LINES = 40  # lines held while deciding whether text after a blank line still belongs to an exception
MAX_TRACEBACKS = 16  # tracebacks returned whole (``tracebacks``): the first ones, then a count of the rest
LAST_LINES = 20  # last log lines returned for the failure report
CONTEXT_LINES = 20  # notable lines outside tracebacks kept as evidence (the newest)
SYSTEMD_LINES = 8  # systemd's own lines about the unit's end, returned beside SGLang's message
MAX_LEARNED_SECRETS = 64  # values learned from secret-looking fields of the log, masked in everything returned
REVERSED_GAP_LINES = 3  # an exception line at most this many lines above a headerless traceback's first frame: maybe its own
USAGE_WINDOW_LINES = 100  # an ``error:`` line this close after a ``usage:`` banner is the parser's
_NO_HEADER = "(the log holds no 'Traceback (most recent call last):' line above this)"

# SGLang's report that its own warmup request failed: the start failed, whatever the warmup's request looked like.
_WARMUP_FAILED_RE = re.compile(r"Initialization failed\. warmup error")
_TB_START_RE = re.compile(r"^(?P<pre>.*?)Traceback \(most recent call last\):\s*$")
# Headers SGLang prints before a traceback on its fatal paths (scheduler, detokenizer, DP controller, warmup; 0.3-era
# ``Exception in run_tp_server:``). Not uvicorn's per-request ``Exception in ASGI application`` nor asyncio's callbacks.
_FATAL_HEADER_RE = re.compile(
    r"hit an exception|warmup error|Initialization failed"
    r"|Exception in (?:run_tp_server|ControllerSingle|ControllerMulti|ModelRpcClient|ModelTpServer|run_\w+_process)",
    re.IGNORECASE,
)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]*)", line \d+(?:, in (?P<func>.+))?')
_CHAIN_RE = re.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)\s*$"
)
# torch.compile (dynamo) ends its exception message with the model's own frames under this line.
_USER_CODE_RE = re.compile(r"^from user code:$")
# Python 3.11+ caret lines under a frame's code, and the elisions people put into pasted frames.
_CODE_MARK_RE = re.compile(r"^[\s^~]*[\^~][\s^~]*$|^(?:\.{3,}|…+|\[\.\.\.\]|。+|\[Previous line repeated \d+ more times?\])$")
# Used only to tell an unindented exception line from an unindented code line (pasted logs lose indentation).
_EXC_LIKE_RE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Timeout)\b(?::|$)"
    r"|^(?:[A-Za-z_]\w*\.)*[A-Z]\w*: "
)
# Of those, the ones that name an error ("RuntimeError: ...", a bare "Error: ..."): a later line of the other kind
# ("Shape: 192 ...", a field of the dump the error printed) does not replace one as the last exception seen.
_EXC_NAMED_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Timeout)\b(?::|$)")
# Lines that are log records of some program, hence never part of a Python exception message. Not a build tool's
# progress line ("[1/2] /opt/rocm/bin/hipcc ..."): a failed build's output is what its exception's message carries
# (tvm_ffi's "ninja exited with status 127" then "stdout:", torch's "Error building extension"), with the tool's own
# words about why further down.
_LOGLIKE_RE = re.compile(
    r"^(?:\[(?:\d(?!\d*/\d+\] )|Gloo\]|rank\d)|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b[: ]|[IWEF]\d{4} \d\d:\d\d:\d\d"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\S+:\d+:\d+ \[\d+\] NCCL |Killed\b|Loading (?:safetensors|pt) checkpoint"
    r"|Capturing (?:batches|CUDA graph)|usage: |[\w./-]+(?: serve)?: error: |error: unrecognized arguments: |[\w@.\\-]+\.(?:service|scope): )"
)
# faulthandler's lines around its thread dump (a segfault, an abort): a dump has frames but no exception line.
_FAULT_DUMP_RE = re.compile(r"^(?:Thread 0x[0-9a-f]+ \(most recent call first\):|Current thread 0x[0-9a-f]+|Extension modules: )")
# Lines that start something new: never more of an exception message, even without the blank line between them
# (journald drops empty lines, so a journal has none).
_MESSAGE_BREAK_RE = re.compile(
    r"^(?:Exception ignored in|Process [\w-]+:$|Fatal Python error:|Thread 0x|Current thread 0x|Extension modules:"
    r"|Special tokens have been added|Initialization failed\.|Received sigquit|--- Logging error ---|Call stack:"
    r"|Failed: Cuda error|srun: |\S+\.sh: line \d+:|frame #\d+:|Exception raised from )"
)
# An uncaught exception at the top of a process: the interpreter is exiting.
_TOPLEVEL_FUNCS = frozenset(("<module>", "_run_module_as_main", "_run_code"))
# Exceptions SGLang only raises while starting, and always fatally.
_FATAL_EXCEPTION_RE = re.compile("|".join((
    r"Capture cuda graph failed", r"Not enough memory\. Please try to increase --mem-fraction-static",
    r"Not enough memory to allocate KV cache",
)), re.IGNORECASE)

# A record whose only text before a traceback's header is a logging level: a logger that relays each line of it.
_RELAY_LEVEL_RE = re.compile(r"^(?:ERROR|WARNING|CRITICAL|INFO|DEBUG):$")

_USAGE_RE = re.compile(r"^usage: \S")
_ARGPARSE_RE = re.compile(
    r"^(?P<prog>(?:[\w.-]*/)*(?:sglang(?: serve)?|launch_server(?:\.py)?|__main__\.py|serve\.py)): error: (?P<msg>.+)$"
)
# argparse's own words for a refused command line, under any program name or none (a paste that kept only the
# ``error:`` line; the diffusion server's parser, ``sglang serve``'s, any entry point's): only argparse says these.
_ARGPARSE_MSG_RE = re.compile(
    r"^(?:(?P<prog>[\w./-]+(?: [\w.-]+)?): )?error: (?P<msg>(?:unrecognized arguments: |the following arguments are required: "
    r"|ambiguous option: |one of the arguments [^\n]* is required|argument -{1,2}[\w-]+(?:/-{1,2}[\w-]+)*: (?:invalid \w+ value: "
    r"|invalid choice: |expected (?:one|at least one|\d+) arguments?|ignored explicit argument|not allowed with argument ))[^\n]*)$"
)
_ARGPARSE_ANY_RE = re.compile(r"^(?P<prog>[\w./-]+(?: [\w.-]+)?): error: (?P<msg>.+)$")
# The same refusal glued to the end of its usage banner (a chat or UI that flattened the output into one line): the
# banner's last option in brackets, then the program's error.
_ARGPARSE_FLATTENED_RE = re.compile(
    r"\[--[\w-]+(?: [A-Z_]+)?\] (?P<prog>(?:[\w.-]*/)*(?:sglang(?: serve)?|launch_server(?:\.py)?|__main__\.py|serve\.py)): error: ")

# Fatal markers outside tracebacks. ``intrinsic`` ones explain themselves (no traceback will follow).
_MARKERS = (
    (re.compile(r"Received sigquit from a child proces"), False),
    (re.compile(r"SIGQUIT received"), False),
    (re.compile(r"scheduler died during initialization"), False),
    (re.compile(r"Initialization failed\. Please see the error messages above"), False),
    (re.compile(r"Subprocess \S+ \(pid=\d+\) crashed with exit code"), False),
    (re.compile(r"Child process unexpectedly failed with an exit code"), False),
    (re.compile(r"Rank \d+ scheduler is dead"), False),
    (re.compile(r"^Killed$"), False),
    (re.compile(r"^Failed: Cuda error"), True),
    (re.compile(r"error while attempting to bind on address"), True),
)
# A new start of the server in a pasted log (SGLang prints its arguments first): what came before was another start.
_NEW_START_RE = re.compile(r"^server_args=")

# One search per line finds the phase a line announces; the first matching group wins.
_PHASE_RE = re.compile(
    r"(?P<parallel_init>Init (?:torch distributed|parallel) (?:begin|ends)|sglang is using nccl|\bNCCL INFO\b"
    r"|^\[Gloo\] Rank|Setup Custom allreduce|Custom ?allreduce is disabled)"
    r"|(?P<weights_loading>Load weight (?:begin|end)|Loading (?:safetensors|pt) checkpoint shards"
    r"|Using model weights format|Found local HF snapshot)"
    r"|(?P<kv_cache_allocated>KV Cache is allocated|Memory pool end|KV cache allocated|KV Cache VA upper bound)"
    r"|(?P<cuda_graph_capture>Capture (?:[\w-]+ )*(?:cuda|CUDA) graph (?:begin|end|bs)|Capturing batches"
    r"|Capture (?:piecewise|prefill|decode) )"
    r"|(?P<http_up>Uvicorn running on|Listening at: http|Listening on http)"
    r"|(?P<warmup>\"(?:GET /(?:get_)?model_info|POST /generate|POST /v1/chat/completions)|Prefill batch)"
    # SGLang's sentence, not a harness quoting it ("ready   : grep 'fired up and ready to roll' serve.log")
    r"|(?P<ready>server is fired up and ready to roll|fired up and ready to roll!)",
    re.IGNORECASE,
)
# Serving: a decode batch with requests running, a prefill batch (more than the warmup's one per rank), a
# generation request answered 200 (more than the warmup's one, or any before the log showed the server come up).
_DECODE_SERVING_RE = re.compile(r"Decode batch[.,] #running-req: [1-9]")
_PREFILL_RE = re.compile(r"Prefill batch[.,] ")
# A batch line with requests waiting in the scheduler's queue: the warmup is one request, taken out of the queue by the
# batch that runs it, so a queued one is a client's.
_QUEUED_RE = re.compile(r"(?:Prefill|Decode) batch[.,][^\n]*#queue-req: [1-9]")
_GENERATION_OK_RE = re.compile(r'"POST /(?:generate|v1/chat/completions|v1/completions|v1/embeddings|encode)\b[^"]*" 200\b')
# A PD prefill server's bootstrap server answering a decode server's GET /route: the decode side asks where to fetch a
# request's KV cache from when a real request arrives (the warmup's request carries a fake bootstrap host and
# transfers nothing, and a prefill rank registers itself with PUT, not GET).
_PD_ROUTE_OK_RE = re.compile(r'"GET /route\?[^"]*" 200\b')
# In PD disaggregation, the KV transfer engine's own metric of bytes moved (Mooncake: "[Metrics] Transfer Engine
# Throughput: 113.07 MB/s (over last 5s)"): KV caches of requests went between the prefill and decode servers. The warmup
# transfers nothing (its request carries a fake bootstrap host), so more than zero is real requests; 0.00 says nothing.
_KV_TRANSFERRED_RE = re.compile(r"Transfer Engine Throughput: (?!0+(?:\.0+)? )\d+(?:\.\d+)? [KMGT]?i?B/s")
# An RL trainer's progress bar over its training steps (verl's "Training Progress", a "Train step" bar) past a first
# step: the trainer starts its loop only once its rollout engines are up, and each step it finished generated rollouts
# through them, so an engine of that run had been serving. A bar still at 0 says nothing; a line of the server itself
# never looks like this (pasted RL logs only).
_TRAINER_STEPS_RE = re.compile(r"^(?:Training|Train)\b[\w ]{0,30}: +\d+%\|[^|\n]*\| *[1-9]\d*/\d+ \[")
# Serving, read from what only a request does (docs/startup-failure-causes.md#serving-or-starting): a request's own
# error (an input longer than the context, SGLang's "Error in request:"), frames of code that runs for a client and
# never for the warmup (the OpenAI-compatible handlers; the warmup posts to /generate), of the weight-update and
# memory-release API calls, of SGLang's benchmark client (its traceback is a client's view of a serving server), or of
# decoding options only a client's request sets (the warmup is a greedy /generate of a few tokens without a grammar or
# logprobs), or of two requests in flight at once (a batch merged into a running one; the warmup is one request).
# Not evidence: the scheduler's event loop, the model's forward, the draft worker, the detokenizer, /generate's
# handler and a single prefill: the warmup runs through all of them.
_CLIENT_INPUT_RE = re.compile(  # an input longer than the context: the warmup's is a few tokens
    r"Input length \(\d+ tokens\) exceeds the maximum allowed length|The input \(\d+ tokens\) is longer than the model's context length")
_REQUEST_ERROR = r"\bError in request:"  # SGLang's OpenAI-compatible handlers logging a request's exception
_REQUEST_SERVED_RE = re.compile(_CLIENT_INPUT_RE.pattern + "|" + _REQUEST_ERROR)
_OPENAI_HANDLER_FILE = r"(?:/entrypoints/openai/serving_\w+\.py|/openai_api/adapter\.py)"
_SERVING_FRAME_RE = re.compile(
    r'^\s*File "[^"]*(?:' + _OPENAI_HANDLER_FILE + r'|/bench_serving\.py)", line \d+, in (?!<module>)\w+'
    r'|^\s*File "[^"]*", line \d+, in (?:update_weights_from_\w+|init_weights_update_group|release_memory_occupation'
    r'|resume_memory_occupation)\s*$'
    # a request's own decoding options, which the warmup (greedy, no grammar) never sets: a grammar's matcher
    # (constrained decoding: json_schema, regex, ebnf), min_p sampling, a custom logit processor
    r'|^\s*File "[^"]*/constrained/[^"]*", line \d+, in (?:accept_token|fill_vocab_mask|apply_vocab_mask|move_vocab_mask'
    r'|try_jump_forward|jump_forward\w*|jump_and_retokenize|build_regex_from_\w+)\s*$'
    r'|^\s+[^\n]*\breq\.grammar\.(?:accept_token|fill_vocab_mask|try_jump_forward|jump_forward\w*)\('
    r'|^\s+[^\n]*\bmin_p_sampling_from_probs\(|^\s*File "[^"]*", line \d+, in _?apply_custom_logit_processor\s*$'
    # the top or token-id logprobs a request asked for (top_logprobs_num, token_ids_logprob; the warmup asks none):
    # code that builds or converts them runs only for such a request
    r'|^\s+[^\n]*\b(?:next_token|input|output)_(?:top|token_ids)_logprobs_(?:val|idx)\b[^\n]*='
    r'|^\s*File "[^"]*", line \d+, in (?:get_top_logprobs|get_token_ids_logprobs)\s*$'
    # a prefill batch merged into a decode batch that was already running: two requests at once (the warmup is one
    # request, whose decode batch takes the prefill batch over instead of merging it)
    r'|^\s*File "[^"]*", line \d+, in merge_batch\s*$')
# Of that evidence, what a multimodal model's warmup also leaves: it posts a chat completion with an image through the
# OpenAI-compatible handlers, so its error is logged as a request's ("Error in request:") with their frames. Ready read
# from these alone is provisional: it holds while the server lives, and is taken back when the process ends before
# any other sign of serving or SGLang's ready line (a client's failed request does not end a server; a failed
# warmup does).
_WARMUP_ALIKE_RE = re.compile(_REQUEST_ERROR + r'|^\s*File "[^"]*' + _OPENAI_HANDLER_FILE + '"')


# The C++ source location a compiled extension prints on the line after its exception (sgl-kernel's CUDA checks:
# ``RuntimeError: invalid argument`` then ``/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:350``): part of the error.
_SOURCE_LOCATION_RE = re.compile(r"^\S*\.(?:cuh?|cpp|cc|cxx|hpp|h):\d+\b")


class _Traceback:  # pylint: disable=too-many-instance-attributes
    """A traceback being collected: its lines, whose it is (journal PID, rank tags) and where parsing stands.

    Plain state, no behaviour beyond storing lines: the scanner drives it (many small fields, one per fact).
    """

    __slots__ = ("head", "rest", "omitted", "pid", "tags", "header_line", "fatal", "state", "blanks", "tail",
                 "tail_lines", "last_kind", "exception_line", "part_frames", "last_line", "closed", "closed_at", "headerless",
                 "user_code", "relay")

    def __init__(self, pid: Optional[str], tags: Optional[str], header_line: Optional[str], line_no: int,
                 headerless: bool = False) -> None:
        self.head: List[str] = [] if headerless else ["Traceback (most recent call last):"]
        self.rest: Deque[str] = collections.deque(maxlen=TRACEBACK_TAIL_LINES)
        self.omitted = 0
        self.pid = pid
        self.tags = tags
        self.header_line = header_line
        self.headerless = headerless
        self.fatal = False
        self.state = "frames"  # frames | exception | tail | chain
        self.blanks = 0
        self.tail: List[str] = []
        self.tail_lines: List[LogLine] = []
        self.last_kind = "header"
        self.exception_line: Optional[str] = None
        self.part_frames = 0  # frames of the current part of a chained traceback
        self.last_line = line_no
        self.closed = False
        self.closed_at = 0
        self.user_code = False  # the message holds torch.compile's "from user code:" frames
        self.relay: Optional[str] = None  # "ERROR: ": a logger relays each of its lines as a record of its own (see _relayed)

    def append(self, text: str) -> None:
        """Add a line, first any blank lines held back; very long tracebacks keep head and tail."""
        for _blank in range(self.blanks):
            self._store("")
        self.blanks = 0
        self._store(text)

    def _store(self, text: str) -> None:
        text = text.rstrip()
        if len(self.head) < TRACEBACK_HEAD_LINES:
            self.head.append(text)
            return
        if len(self.rest) == self.rest.maxlen:
            self.omitted += 1
        self.rest.append(text)

    def text(self) -> str:
        """The traceback as one string, without trailing blank lines; a headerless one says so in its first line."""
        lines = [_NO_HEADER] if self.headerless else []
        lines.extend(self.head)
        if self.omitted:
            lines.append(f"... {self.omitted} traceback lines omitted ...")
        lines.extend(self.rest)
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines)

    def owns(self, line: LogLine) -> bool:
        """Whether a record line comes from the same process/rank (it then ends this traceback's message)."""
        same_tags = (self.tags or "") == (line.tags or "")
        same_pid = self.pid is None or line.pid is None or self.pid == line.pid
        return same_tags and same_pid

    def other_process(self, line: LogLine) -> bool:
        """Whether the journal says the line comes from another process than this traceback's."""
        return self.pid is not None and line.pid is not None and self.pid != line.pid


class StartupLogScanner:  # pylint: disable=too-many-instance-attributes,too-many-public-methods
    """Incremental scanner: feed journal entries (or pasted lines) as they arrive, ask for the verdict at any time.

    ``feed_entry`` and ``feed`` are O(1) amortised per line; ``result`` builds the report (cheap, call it when needed).
    ``is_final`` tells a verdict that can no longer change from "failed, but the traceback is still
    arriving" (``pending == "traceback_open"``) or "a fatal marker came first, its traceback may follow"
    (``pending == "awaiting_traceback"``): the caller waits a bounded time, then calls :meth:`close`.
    """

    def __init__(self, secrets: Iterable[str] = (), hostname: str = "localhost", forget_before_start: bool = True,
                 wrap_width: Optional[int] = None, margin: str = "") -> None:
        """``forget_before_start``: at systemd's first "Started"/"Starting" line, forget what came before (a pasted
        journal holds the old process's stop); a caller that tells the old process's lines itself turns it off.
        ``wrap_width``: the width a terminal broke the pasted text at, when the caller knows it (a whole text);
        otherwise :meth:`feed` learns it from the lines as they come. What a paste put before every line (a Markdown
        quote or indentation) is ``margin`` when the caller knows it (every line of a whole text carries it), otherwise
        learned from the first line (:class:`.lines.PasteMargin`)."""
        self._forget_before_start = forget_before_start
        self._rewrap = Rewrapper(wrap_width)
        self._margin = PasteMargin(margin=margin)
        self._pasted = True  # the line being read is pasted text (feed), not a journal entry, which nothing broke
        self._secrets: List[str] = [s for s in secrets if isinstance(s, str) and s]
        self._hostname = hostname  # shown in the last lines of followed journal entries, as journalctl shows it
        self._line_no = 0
        self._last_lines: Deque[str] = collections.deque(maxlen=LAST_LINES)
        self._closed = False
        self._started_seen = False
        self._reset()

    def _reset(self) -> None:
        """Forget the start seen so far: a new start begins (a pasted log of two starts, the old process's last words)."""
        self._systemd_exit = False
        self._phases: List[Dict[str, Any]] = []
        self._seen_phases: set = set()
        self._phase: Optional[str] = None
        self._ready = False
        self._ready_line: Optional[str] = None
        self._ready_inferred = False  # ready read from a request's traces, not SGLang's ready line: the warmup's own may look so
        self._ready_provisional = False  # ... and only from traces a multimodal warmup leaves too (_WARMUP_ALIKE_RE)
        self._request_error: Optional[str] = None  # SGLang's "Error in request: ..." that made it so
        self._failed = False
        self._failed_at = 0
        self._fatal_line: Optional[str] = None
        self._fatal_tb: Optional[_Traceback] = None
        self._marker_intrinsic = False
        self._markers: List[str] = []
        self._systemd_lines: Deque[str] = collections.deque(maxlen=SYSTEMD_LINES)
        self._argparse_line: Optional[str] = None
        self._usage_line: Optional[str] = None
        self._usage_at = -1000
        self._pending_header: Optional[Tuple[int, LogLine]] = None
        self._open: List[_Traceback] = []
        self._last_closed: Optional[_Traceback] = None
        self._all: List[_Traceback] = []
        self._tracebacks = 0
        self._context: Deque[str] = collections.deque(maxlen=CONTEXT_LINES)
        self._import_errors: Deque[str] = collections.deque(maxlen=4)
        self._orphan: Optional[str] = None  # the last exception line seen outside any traceback
        self._orphan_at = -1000
        self._after_orphan: List[str] = []  # the few lines after it (its code, in a paste of newest line first)
        self._orphan_source: Optional[str] = None  # the C++ source location on the line right after it
        self._reversed: List[str] = []  # exception, code and first frame of a traceback pasted newest line first
        self._long_line: Optional[str] = None  # the last line outside tracebacks, when long and no evidence: maybe broken
        self._exited = False
        self._frozen = False
        self._decision: Optional[Tuple[Optional[_Traceback], Optional[str], Optional[str], Optional[str], Optional[str]]] = None
        self._weights_loaded = False  # "Load weight end" seen: an OOM from here on is not about the weights
        self._prefills: Dict[str, int] = {}
        self._generations_ok = 0

    # ----------------------------------------------------------------------------------------------- input
    def feed(self, line: Any, timestamp: Any = None) -> None:
        """Take one line of pasted log text (bare or with any prefix); ``timestamp`` is recorded per phase.

        Tolerant on purpose: bytes are decoded, embedded newlines split, anything else is ignored rather than
        raised, because a scanner that throws would hide the very failure it is there to report.
        """
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode("utf-8", "replace")
        if not isinstance(line, str):
            return
        self._pasted = True
        for part in line.split("\n") if "\n" in line else (line,):
            for piece in restore_pasted(self._margin.strip(part.rstrip("\r"))):
                for text in self._rewrap.push(piece):
                    self._feed_line(parse_line(text), timestamp)

    def flush(self, timestamp: Any = None) -> None:
        """Read a line of pasted text held back as the first piece of a line a terminal broke (no more text comes now)."""
        for text in self._rewrap.flush():
            self._feed_line(parse_line(text), timestamp)

    def feed_entry(self, message: str, pid: Optional[int], identifier: str, timestamp: float) -> None:
        """Take one journal entry as journald gives it (``journalctl -o json``): its fields are read as they are.

        ``timestamp`` (seconds since the epoch) is the entry's time: recorded per phase and shown in the
        last lines.
        """
        self._pasted = False
        if isinstance(message, str) and ("&" in message or 'File "' in message):
            # what a page or a UI did to a pasted line cannot happen in the journal, but a relay's re-logged copy can
            # carry it: read the same way as pasted text, so both inputs give one verdict
            message = "\n".join(piece for part in message.split("\n") for piece in restore_pasted(part))
        for info in from_journal(message, pid, identifier, timestamp, self._hostname):
            self._feed_line(info, timestamp)

    def close(self, exited: bool = True) -> None:
        """No more lines will come: finish open tracebacks and make the verdict final.

        ``exited`` says the process ended (the unit left ``active``, the main PID is gone): a start that did
        not reach ready then failed, with the best evidence seen (a ``usage:`` banner alone is the argument
        parser's rejection). With ``exited=False`` (the caller only stops reading) a start without failure
        evidence stays "starting".
        """
        if self._closed:
            return
        self.flush()
        for tb in list(self._open):
            self._close_traceback(tb)
        if exited and self._ready_provisional:
            # the process ended: that request was the warmup's, and SGLang's line about its error is the fatal one
            self._revoke_ready()
            if self._request_error:
                self._fail(self._request_error)
        if exited and not self._ready and not self._failed:
            if self._usage_line is not None and self._fatal_tb is None and self._phase in (None, "process_started"):
                self._argparse_line = self._usage_line
            self._fail(None)
        self._exited = exited
        self._closed = True

    # ----------------------------------------------------------------------------------------------- verdict
    def result_outcome(self) -> str:
        """The outcome alone ("ready", "failed" or "starting"), cheap enough to ask after every line."""
        if self._ready:
            return "ready"
        return "failed" if self._failed else "starting"

    @property
    def systemd_exit_seen(self) -> bool:
        """Whether systemd logged the end of the unit's process: it logs that after the process's own last
        lines, so from here on the evidence is complete (counted even after the verdict froze)."""
        return self._systemd_exit

    @property
    def systemd_lines(self) -> List[str]:
        """systemd's own lines about the unit's end, redacted (for the caller's reason text, without a whole report)."""
        return [redact(line, self._secrets) for line in self._systemd_lines]

    def current_phase(self) -> Optional[str]:
        """The latest phase reached, without building the whole report."""
        return self._phase

    @property
    def is_final(self) -> bool:
        """Whether the verdict can no longer change."""
        return self._final_state()[0]

    def result(self) -> Dict[str, Any]:  # pylint: disable=too-many-locals
        """Return the verdict with its evidence; every text field is redacted."""
        final, pending = self._final_state()
        if self._ready:
            outcome = "ready"
        elif self._failed:
            outcome = "failed"
        else:
            outcome = "starting"
        tb, cause, error_message, fatal_line, evidence = self._decision or self._decide()
        phase = self._phase
        secrets = self._secrets
        hint_phase = "kv_cache_allocated" if (phase == "weights_loading" and self._weights_loaded) else phase
        failed = outcome == "failed"

        def red(text: Optional[str]) -> Optional[str]:
            return redact(text, secrets) if text else text

        return {
            "outcome": outcome,
            "cause": cause,
            "hint": red(hint_for(cause, error_message, hint_phase, evidence)),
            "phase": phase,
            "phases": [dict(entry, line=red(entry["line"])) for entry in self._phases],
            "traceback": red(tb.text()) if (tb is not None and failed) else None,
            "tracebacks": [red(each.text()) for each in self._all] if failed else [],
            "tracebacks_omitted": max(0, self._tracebacks - len(self._all)) if failed else 0,
            "fatal_line": red(fatal_line) if failed else None,
            "error_message": red(error_message) if failed else None,
            "systemd_line": red("\n".join(self._systemd_lines)) if (failed and self._systemd_lines) else None,
            "ready_line": red(self._ready_line),
            "rank": (tb.tags or None) if (tb is not None and failed) else None,
            "is_final": final,
            "pending": pending,
            "tracebacks_seen": self._tracebacks,
            "lines_seen": self._line_no,
            "last_lines": [red(text) for text in self._last_lines],
        }

    # ----------------------------------------------------------------------------------------------- internals
    def _decide(self) -> Tuple[Optional[_Traceback], Optional[str], Optional[str], Optional[str], str]:
        """(the traceback that explains the failure, cause, error message, fatal line, the evidence as one text)."""
        tb = self._evidence_traceback()
        tiers = self._tiers(tb)
        cause, decided_by = None, None
        if self._failed and not self._ready:
            if self._argparse_line is not None:
                cause = "invalid_arguments"
            else:
                cause, decided_by, tier = cause_in_tiers(tiers, "\n".join(self._import_errors))
                if tier == 1:
                    tb = self._traceback_with(decided_by) or tb
        return tb, cause, self._error_message(tb, decided_by), self._own_fatal_line(tb, decided_by), "\n".join(tiers)

    def _feed_line(self, info: LogLine, timestamp: Any) -> None:
        self._line_no += 1
        if info.raw:
            self._last_lines.append(info.raw)
        if may_contain_secret(info.raw):
            for value in find_secrets(info.raw):
                if len(value) >= 6 and value not in self._secrets and len(self._secrets) < MAX_LEARNED_SECRETS:
                    self._secrets.append(value)
        systemd = is_systemd_line(info)
        exit_line = systemd and is_systemd_exit(info)
        if exit_line:
            self._systemd_exit = True
        if systemd and (exit_line or is_notable(info.msg)) and not self._closed:
            self._systemd_lines.append(info.msg.strip())  # beside SGLang's own message, also after the verdict froze
        if self._closed:
            return
        if systemd and self._forget_before_start and not self._started_seen and is_systemd_start(info):
            # systemd starts the unit: what came before (the old process's stop, even a traceback it printed while
            # shutting down) is not this start's. Only the first such line: a later one is systemd restarting it.
            self._started_seen = True
            self._reset()
            self._enter_phase("process_started", info, timestamp)
            return
        if self._frozen:
            self._collect(info)
            return
        if self._ready:
            if self._ready_inferred and _WARMUP_FAILED_RE.search(info.body):
                self._revoke_ready()
            elif not self._ready_provisional:
                return
            # provisional: read on as before ready (tracebacks collected, other signs of serving), failing nothing
        if self._failed and self._final_state()[0]:
            self._decision = self._decide()  # the verdict can no longer change: later lines only add tracebacks
            self._frozen = True
            self._collect(info)
            return
        if self._phase is None and info.raw.strip():
            self._enter_phase("process_started", info, timestamp)
        if _SERVING_FRAME_RE.match(info.body):
            self._serve(info, timestamp)  # the frame still goes to its traceback, below
        for tb in list(self._open):
            if self._line_no - tb.last_line > STALE_TRACEBACK_LINES:
                self._close_traceback(tb)
        if systemd:
            self._systemd(info)
            return
        if self._open and self._route(info):
            return
        self._standalone(info, timestamp)

    def _collect(self, info: LogLine) -> None:
        """After the verdict froze: keep collecting the tracebacks that follow (other ranks fail too), nothing else."""
        if is_systemd_line(info):
            if is_systemd_exit(info):
                for tb in list(self._open):
                    self._close_traceback(tb)
            return
        for tb in list(self._open):
            if self._line_no - tb.last_line > STALE_TRACEBACK_LINES:
                self._close_traceback(tb)
        if self._open and self._route(info):
            return
        body = info.body
        start = _TB_START_RE.match(body)
        if start:
            self._start_traceback(info, start.group("pre").strip())
            return
        frame = _FRAME_RE.match(body)
        if frame or _CHAIN_RE.match(body.strip()):
            self._start_headerless(info, frame)

    def _systemd(self, info: LogLine) -> None:
        """systemd's own lines about the unit: an exit before ready is fatal; never part of a traceback.

        Open tracebacks stay open: journald can take in systemd's exit line while the dead process's last output is
        still in its stream, so lines of the traceback may follow; the caller closes them (:meth:`close`).
        """
        if is_systemd_exit(info):
            self._fail(None)

    def _route(self, info: LogLine) -> bool:
        """Give the line to the open traceback it continues; True if a traceback took it."""
        if info.record:
            info = self._relayed(info)
        if info.record:
            for tb in list(self._open):
                if tb.state in ("exception", "tail") or tb.owns(info):
                    self._close_traceback(tb)
            return False
        tb = None
        if info.pid is not None:
            for candidate in reversed(self._open):
                if candidate.pid == info.pid:
                    tb = candidate
                    break
        if tb is None:
            tb = self._open[-1]
        taken = self._continue(tb, info)
        if taken:
            tb.last_line = self._line_no
        return taken

    def _relayed(self, info: LogLine) -> LogLine:
        """A record that carries the next line of a traceback relayed line by line, as the line itself.

        Why: a logger that catches a child's stderr logs each of its lines as a record of its own, with the level that
        began the traceback (``[2026-02-26 15:56:59] ERROR: Traceback ...``, then ``... ERROR:   File ...``); a record
        otherwise ends a traceback. Only records of the same rank, with the same level and one space after its colon,
        while that traceback is open."""
        for tb in reversed(self._open):
            relay = tb.relay
            if relay and (tb.tags or "") == (info.tags or "") and (info.body.startswith(relay) or info.body == relay.rstrip()):
                line = info.body[len(relay):]
                return info._replace(msg=line, body=line, record=False)
        return info

    def _continue(self, tb: _Traceback, info: LogLine) -> bool:  # pylint: disable=too-many-return-statements,too-many-branches
        """Decide whether ``info`` continues ``tb`` (Python's traceback layout), closing ``tb`` when it ends.

        Returns True when ``tb`` took the line; False when the line is not part of it (and ``tb`` may have
        been closed), so the caller treats the line on its own.
        """
        if tb.state == "chain":
            return self._continue_chain(tb, info)
        if tb.state == "tail":
            return self._continue_tail(tb, info)
        msg = info.msg
        text = msg.strip()
        if not text:
            tb.blanks += 1
            return True
        if _CHAIN_RE.match(text):
            tb.append(text)
            tb.state, tb.last_kind = "chain", "sep"
            return True
        frame = _FRAME_RE.match(msg)
        if frame and tb.state == "exception" and tb.user_code:
            tb.append(msg)  # the model's frames that torch.compile's message names: still the message
            return True
        if frame:
            if tb.state == "exception":
                if tb.other_process(info):
                    self._close_traceback(tb)  # another process's traceback without its header
                    return False
                tb.exception_line = None  # an unindented paste fooled us: that "exception" was a code line
            tb.append(msg)
            tb.state, tb.last_kind = "frames", "frame"
            tb.part_frames += 1
            if tb.part_frames == 1 and self._is_toplevel(frame):
                self._make_fatal(tb)
            return True
        start = _TB_START_RE.match(msg)
        if start:
            pre = start.group("pre").strip()
            if tb.state == "frames" and pre and msg[:1] not in (" ", "\t") and _EXC_LIKE_RE.match(pre):
                # an exception whose message carries another process's traceback (``RuntimeError: Initialization
                # failed. controller_init_state: Traceback ...``): one traceback, read on into the nested one
                tb.append(msg)
                tb.exception_line = text
                tb.state, tb.last_kind, tb.part_frames = "frames", "header", 0
                return True
            self._close_traceback(tb)
            return False
        if tb.state == "frames":
            return self._continue_frames(tb, msg, text)
        # state "exception": more lines of a multi-line message, or the end of the traceback
        if _LOGLIKE_RE.match(text) or _MESSAGE_BREAK_RE.match(text) or tb.other_process(info):
            self._close_traceback(tb)
            return False
        user_code = bool(_USER_CODE_RE.match(text))
        if tb.blanks == 0 or user_code:
            tb.append(msg)  # (with the blank lines held before it)
            tb.last_kind = "message"
            tb.user_code = tb.user_code or user_code
            return True
        tb.tail, tb.tail_lines = [""] * tb.blanks + [msg], [info]
        tb.blanks = 0
        tb.state = "tail"
        return True

    def _continue_frames(self, tb: _Traceback, msg: str, text: str) -> bool:
        """Between frames: a code line, the exception line, or another process's line that is not ours."""
        indented = msg[:1] in (" ", "\t")
        if _CODE_MARK_RE.match(text):
            tb.append(msg)  # a caret line (Python 3.11+) or an elision the poster made: still inside the frames
            return True
        if not indented and _FAULT_DUMP_RE.match(text):
            # faulthandler's own lines: its thread dump (frames without an exception) ends here; what follows (the
            # extension modules, broken by a terminal into pieces) is never this dump's exception line
            self._close_traceback(tb)
            return False
        if not indented and (_LOGLIKE_RE.match(text) or _MESSAGE_BREAK_RE.match(text)):
            return False  # another process's line in the middle of this traceback
        if indented or (tb.last_kind == "frame" and not _EXC_LIKE_RE.match(text)):
            tb.append(msg)
            tb.last_kind = "code"
            return True
        tb.append(msg)
        tb.state, tb.last_kind, tb.exception_line = "exception", "exception", text
        if _FATAL_EXCEPTION_RE.search(text):
            self._make_fatal(tb)
        return True

    def _continue_chain(self, tb: _Traceback, info: LogLine) -> bool:
        """After "During handling ..." / "The above exception ...": blank lines, then the next part's header."""
        start = _TB_START_RE.match(info.msg)
        if not info.msg.strip():
            tb.blanks += 1
            return True
        if start and not start.group("pre").strip():
            tb.append(info.msg.strip())
            tb.state, tb.last_kind, tb.part_frames = "frames", "header", 0
            return True
        self._close_traceback(tb)
        return False

    def _continue_tail(self, tb: _Traceback, info: LogLine) -> bool:
        """Text after a blank line that follows an exception: more of the message if a chain separator follows."""
        msg = info.msg
        text = msg.strip()
        if not text:
            tb.tail.append("")
            tb.tail_lines.append(info)
            return True
        if _CHAIN_RE.match(text) or _USER_CODE_RE.match(text):
            for held in tb.tail:
                tb.append(held)
            tb.tail, tb.tail_lines = [], []
            tb.append(text)
            if _USER_CODE_RE.match(text):
                tb.state, tb.last_kind, tb.user_code = "exception", "message", True
            else:
                tb.state, tb.last_kind = "chain", "sep"
            return True
        if (_LOGLIKE_RE.match(text) or _MESSAGE_BREAK_RE.match(text) or _TB_START_RE.match(msg) or _FRAME_RE.match(msg)
                or len(tb.tail) >= TAIL_BUFFER_LINES):
            self._close_traceback(tb)
            return False
        tb.tail.append(msg)
        tb.tail_lines.append(info)
        return True

    @staticmethod
    def _is_toplevel(frame: "re.Match[str]") -> bool:
        func = (frame.group("func") or "").strip()
        if func in _TOPLEVEL_FUNCS:
            return True
        return func == "_bootstrap" and frame.group("file").endswith("multiprocessing/process.py")

    def _standalone(self, info: LogLine, timestamp: Any) -> None:  # pylint: disable=too-many-return-statements,too-many-branches
        """A line outside any traceback: a traceback start, an argparse error, a fatal marker or a phase line."""
        body = info.body
        text = body.strip()
        if not text:
            return
        start = _TB_START_RE.match(body)
        if start:
            self._start_traceback(info, start.group("pre").strip())
            return
        frame = _FRAME_RE.match(body)
        if frame or _CHAIN_RE.match(text):
            self._start_headerless(info, frame)
            return
        if 0 < self._line_no - self._orphan_at <= REVERSED_GAP_LINES and not info.record:
            self._after_orphan.append(text)
        if self._line_no - self._orphan_at == 1 and _SOURCE_LOCATION_RE.match(text):
            self._orphan_source = text
        if info.record and text.endswith(":") and _FATAL_HEADER_RE.search(text):
            self._pending_header = (self._line_no, info)
        if _USAGE_RE.match(text):
            self._usage_at = self._line_no
            self._usage_line = self._usage_line or text
            return
        argparse = _ARGPARSE_RE.match(text) or _ARGPARSE_MSG_RE.match(text)
        if argparse is None and self._line_no - self._usage_at < USAGE_WINDOW_LINES:
            argparse = _ARGPARSE_ANY_RE.match(text)
        if argparse is None:
            argparse = _ARGPARSE_FLATTENED_RE.search(text)
            text = text[argparse.start("prog"):] if argparse else text
        if argparse:
            if not self._failed or (self._fatal_tb is None and not self._markers):
                self._argparse_line = text
                self._fatal_line = text
                self._fail(text)
            return
        if self._failed and self._fatal_tb is None and _NEW_START_RE.match(text) and not self._final_state()[0]:
            self._reset()  # the failure seen so far was another start's (its last words came first)
            self._enter_phase("process_started", info, timestamp)
        for pattern, intrinsic in _MARKERS:
            if pattern.search(text):
                self._context.append(text)
                self._marker(info.msg.strip(), intrinsic, text)
                return
        self._note(info, text)
        if not self._failed:
            self._detect_phase(info, timestamp)

    def _note(self, info: LogLine, text: str) -> None:
        """Keep a line that may explain a failure later: a decisive line, an exception line outside a traceback."""
        broken, self._long_line = self._long_line, None
        joined = None
        if broken is not None and not starts_line(info.body) and text[:16] != broken[:16]:
            # maybe the rest of a long line that a terminal broke (one such line shows no width to learn)
            joined = (broken + info.body).strip()
        if "Ignore import error when loading" in text:
            self._import_errors.append(text)
        elif is_notable(text):
            self._context.append(text)
        elif joined is not None and is_notable(joined):
            self._context.append(joined)
            if self._orphan == broken.strip():
                self._orphan = joined
            return
        elif joined is None and self._pasted and len(info.raw) >= WRAP_MIN_WIDTH and not info.body.endswith("  "):
            self._long_line = info.body.lstrip()  # a break before a space leaves the space at the end of the piece
        if not info.record and _EXC_LIKE_RE.match(text) and not _LOGLIKE_RE.match(text):
            if self._orphan is not None and _EXC_NAMED_RE.match(self._orphan) and not _EXC_NAMED_RE.match(text):
                return  # "Shape: 192 ..." after "Error: Failed to ...": a dump's field, not a newer exception
            self._orphan = text
            self._orphan_at, self._after_orphan, self._orphan_source = self._line_no, [], None

    def _start_traceback(self, info: LogLine, header: str) -> None:
        header_line: Optional[str] = info.msg.strip() if header else None
        fatal = bool(header) and bool(_FATAL_HEADER_RE.search(header))
        pid, tags = info.pid, info.tags
        pending = self._pending_header
        if not header and pending is not None and self._line_no - pending[0] <= 1:
            header_line = pending[1].msg.strip()
            tags = pending[1].tags
            pid = pid or pending[1].pid
            fatal = True
        self._pending_header = None
        tb = _Traceback(pid, tags, header_line, self._line_no)
        if info.record and _RELAY_LEVEL_RE.match(header):
            tb.relay = header + " "  # the level alone before the header: a logger relaying the traceback's lines
        self._register(tb)
        if fatal:
            self._make_fatal(tb)

    def _start_headerless(self, info: LogLine, frame: "Optional[re.Match[str]]") -> None:
        """Frames (or a chain separator) outside any traceback: a traceback whose header the log does not hold."""
        tb = _Traceback(info.pid, info.tags, None, self._line_no, headerless=True)
        self._register(tb)
        if frame is None:
            tb.append(info.body.strip())
            tb.state, tb.last_kind = "chain", "sep"
            return
        tb.append(info.body)
        tb.last_kind, tb.part_frames = "frame", 1
        if (self._orphan is not None and 0 < self._line_no - self._orphan_at <= REVERSED_GAP_LINES
                and len(self._reversed) < MAX_TRACEBACKS):
            # an exception line, a line of code, then a frame: a traceback pasted newest line first (a UI that shows the
            # last line on top), whose exception belongs to this frame; kept as it was pasted, for the rules
            self._reversed.append("\n".join([self._orphan] + self._after_orphan + [info.body.strip()]))
        if self._is_toplevel(frame):
            self._make_fatal(tb)

    def _register(self, tb: _Traceback) -> None:
        self._open.append(tb)
        self._tracebacks += 1
        if len(self._all) < MAX_TRACEBACKS:
            self._all.append(tb)

    def _make_fatal(self, tb: _Traceback) -> None:
        tb.fatal = True
        if self._ready:
            return
        if self._fatal_tb is None:
            self._fatal_tb = tb
        self._fail(tb.header_line or "Traceback (most recent call last):")

    def _close_traceback(self, tb: _Traceback) -> None:
        if tb.closed:
            return
        tb.closed = True
        tb.closed_at = self._line_no
        if tb in self._open:
            self._open.remove(tb)
        held = tb.tail_lines
        tb.tail, tb.tail_lines = [], []
        if not tb.fatal:
            self._last_closed = tb
        for info in held:  # lines held after a blank turned out not to belong to the exception
            if info.msg.strip():
                if self._frozen:
                    self._collect(info)
                else:
                    self._standalone(info, None)

    def _marker(self, line: str, intrinsic: bool, message: str) -> None:
        """A fatal line outside tracebacks: ``line`` as logged, ``message`` without SGLang's record prefix."""
        if self._ready:
            return
        self._markers.append(message)
        if intrinsic:
            self._marker_intrinsic = True
        self._fail(line)

    def _fail(self, line: Optional[str]) -> None:
        """The start failed; ``line`` is SGLang's fatal line (None for systemd's exit or the end of the input)."""
        if self._fatal_line is None:
            self._fatal_line = line  # SGLang's own fatal line, even when systemd's exit line came first
        if self._failed:
            return
        self._failed = True
        self._failed_at = self._line_no

    def _detect_phase(self, info: LogLine, timestamp: Any) -> None:
        body = info.body
        if self._serving(info):
            self._serve(info, timestamp)
            return
        match = _PHASE_RE.search(body)
        if not match:
            return
        name = match.lastgroup
        if name == "warmup" and "http_up" not in self._seen_phases:
            return
        self._enter_phase(name, info, timestamp)
        if name == "weights_loading" and "Load weight end" in body:
            self._weights_loaded = True
        if name == "ready":
            self._ready = True
            self._ready_line = info.msg.strip()
            self._ready_inferred = self._ready_provisional = False

    def _serve(self, info: LogLine, timestamp: Any) -> None:
        """The server was serving (a line or a frame that only a client's request produces): ready, whatever follows,
        but SGLang's own report that the warmup failed (:meth:`_revoke_ready`) and, for evidence a multimodal warmup
        also leaves, the process's end (:meth:`close`)."""
        provisional = bool(_WARMUP_ALIKE_RE.search(info.body)) and not _CLIENT_INPUT_RE.search(info.body)
        if self._ready:
            self._ready_provisional = self._ready_provisional and provisional
            return
        self._enter_phase("ready", info, timestamp)
        self._ready = True
        self._ready_line = info.msg.strip()
        self._ready_inferred = True
        self._ready_provisional = provisional
        self._request_error = info.body.strip() if provisional and re.search(_REQUEST_ERROR, info.body) else None

    def _revoke_ready(self) -> None:
        """Ready was read from a request's traces, and SGLang then says its warmup failed: those traces were the
        warmup's own request (a multimodal model's warmup posts a chat completion with an image, through the
        OpenAI-compatible handlers), so the start is still going and this line fails it."""
        self._ready = self._ready_inferred = self._ready_provisional = False
        self._ready_line = None
        self._seen_phases.discard("ready")
        self._phases = [entry for entry in self._phases if entry["phase"] != "ready"]
        self._phase = max((entry["phase"] for entry in self._phases), key=_PHASE_ORDER.__getitem__, default=None)

    def _serving(self, info: LogLine) -> bool:
        """Whether the line shows the server serving real requests (not only its own warmup request)."""
        body = info.body
        if (_DECODE_SERVING_RE.search(body) or _REQUEST_SERVED_RE.search(body) or _PD_ROUTE_OK_RE.search(body)
                or _TRAINER_STEPS_RE.match(body) or _KV_TRANSFERRED_RE.search(body) or _QUEUED_RE.search(body)):
            return True
        if _PREFILL_RE.search(body):
            seen = self._prefills.get(info.tags or "", 0) + 1
            self._prefills[info.tags or ""] = seen
            return seen > 1
        if _GENERATION_OK_RE.search(body):
            self._generations_ok += 1
            return self._generations_ok > 1 or "http_up" not in self._seen_phases
        return False

    def _enter_phase(self, name: str, info: LogLine, timestamp: Any) -> None:
        if name in self._seen_phases:
            return
        self._seen_phases.add(name)
        self._phases.append({
            "phase": name,
            "first_seen": timestamp,
            "log_time": info.log_time or info.journal_time,
            "line_no": self._line_no,
            "line": info.msg.strip(),
        })
        if self._phase is None or _PHASE_ORDER[name] > _PHASE_ORDER[self._phase]:
            self._phase = name

    def _final_state(self) -> Tuple[bool, Optional[str]]:
        """(final, pending): why a failed verdict may still change, or None."""
        if (self._ready and not self._ready_provisional) or self._closed or self._frozen or self._argparse_line is not None:
            return True, None
        if not self._failed:
            return False, None
        if self._fatal_tb is not None:
            return (True, None) if self._fatal_tb.closed else (False, "traceback_open")
        if self._open:
            return False, "traceback_open"
        explained = self._marker_intrinsic or self._candidate() is not None
        if explained or self._line_no - self._failed_at > AWAIT_TRACEBACK_LINES:
            return True, None
        return False, "awaiting_traceback"

    def _candidate(self) -> Optional[_Traceback]:
        """A plain traceback that closed just before (or after) the fatal marker: the likely explanation."""
        tb = self._last_closed
        if tb is None or not self._failed:
            return None
        if self._exited or tb.closed_at >= self._failed_at - CANDIDATE_WINDOW_LINES:
            return tb
        return None

    def _evidence_traceback(self) -> Optional[_Traceback]:
        if self._fatal_tb is not None:
            return self._fatal_tb
        if not self._failed or self._argparse_line is not None:
            return None
        if self._open:
            return self._open[0]
        return self._candidate()

    def _traceback_with(self, line: Optional[str]) -> Optional[_Traceback]:
        """The traceback (of those kept) that holds ``line``, the one that decided the cause."""
        if not line:
            return None
        for tb in self._all:
            if line in tb.text():
                return tb
        return None

    def _tiers(self, tb: Optional[_Traceback]) -> Tuple[str, str, str]:
        """The evidence in tiers of trust: the fatal traceback with SGLang's fatal lines, the other tracebacks, the
        notable lines outside tracebacks (with systemd's own lines about the unit)."""
        first = [tb.text()] if tb is not None else []
        if self._fatal_line:
            first.append(self._fatal_line)
        first.extend(self._markers)
        others = "\n".join([each.text() for each in self._all if each is not tb] + self._reversed)
        context = list(self._context)
        if self._orphan and self._orphan not in context:
            # with the C++ source that raised it, printed on the next line: where the error came from
            context.append(self._orphan + ("\n" + self._orphan_source if self._orphan_source else ""))
        context.extend(self._systemd_lines)
        return "\n".join(first), others, "\n".join(context)

    def _error_message(self, tb: Optional[_Traceback], decided_by: Optional[str]) -> Optional[str]:
        """SGLang's own words for the failure: the exception line, else the line that decided the cause, else its fatal
        lines; systemd's words only when SGLang said nothing (they are returned beside it, as ``systemd_line``)."""
        if self._argparse_line is not None:
            return self._argparse_line
        if tb is not None and tb.exception_line and (decided_by is None or decided_by in tb.text()):
            return tb.exception_line
        lone = self._lone(decided_by)
        if lone:
            return lone
        if tb is not None and tb.exception_line:
            return tb.exception_line
        if self._orphan:
            return self._orphan
        if self._markers:
            return self._markers[0]
        if self._context:
            return self._context[-1]
        if decided_by:
            return decided_by.strip()
        return self._systemd_lines[0] if self._systemd_lines else None

    def _own_fatal_line(self, tb: Optional[_Traceback], decided_by: Optional[str]) -> Optional[str]:
        """The line that ended the wait, SGLang's own when it printed one; systemd's exit line only when it did not."""
        if self._fatal_line:
            return self._fatal_line
        if tb is not None and tb.header_line:
            return tb.header_line
        if self._markers:
            return self._markers[0]
        if tb is not None and tb.exception_line:
            return tb.exception_line
        lone = self._lone(decided_by)
        if lone:
            return lone
        if self._orphan:
            return self._orphan
        return self._systemd_lines[0] if self._systemd_lines else None

    def _lone(self, decided_by: Optional[str]) -> Optional[str]:
        """The line that decided the cause when SGLang logged it on its own (not a frame or code line of a traceback,
        not systemd's): a decisive line worth showing as the message."""
        if not decided_by or decided_by in self._systemd_lines or any(decided_by in tb.text() for tb in self._all):
            return None
        return decided_by.strip()


def scan_startup_log(text: str, ended: bool = False, secrets: Iterable[str] = ()) -> Dict[str, Any]:
    """Scan a whole log text; ``ended=True`` when the process is known to have exited after the last line.

    A thin wrapper over :class:`StartupLogScanner`, so batch and incremental scanning cannot disagree.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    lines = (text or "").splitlines()
    margin = PasteMargin(lines)
    scanner = StartupLogScanner(secrets=secrets, wrap_width=wrap_width([margin.strip(line) for line in lines]), margin=margin.margin)
    for line in lines:
        scanner.feed(line)
    scanner.flush()
    if ended:
        scanner.close(exited=True)
    return scanner.result()
