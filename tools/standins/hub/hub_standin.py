"""hub-standin: a TEST STAND-IN for the few Hugging Face Hub endpoints that `huggingface_hub` downloads use.

It is not the Hugging Face Hub and not a mirror. It serves model folders from the local disk with the HTTP
interface `snapshot_download` / `hf_hub_download` really call (read from huggingface_hub 2.4.0's source), so the
`gpufleet.sglang.model_cache` role can be tested end to end on lab hosts, without the internet:

  GET  /api/models/{repo}[/revision/{rev}]          model info: `sha`, `siblings` (sizes and LFS with ?blobs=true)
  GET  /api/models/{repo}/tree/{rev}[/{path}]       tree listing (recursive), as `list_repo_tree` pages it
  GET  /api/models/{repo}/refs                      branches and tags, as `list_repo_refs` reads them
  HEAD /{repo}/resolve/{rev}/{file}                 X-Repo-Commit, ETag / X-Linked-Etag, X-Linked-Size, Content-Length
  GET  /{repo}/resolve/{rev}/{file}                 the bytes; `Range: bytes=N-` answers 206 (resumed downloads)

Errors carry the `X-Error-Code` header huggingface_hub turns into its exceptions (RepoNotFound, RevisionNotFound,
EntryNotFound). With a token configured every request needs `Authorization: Bearer <token>` (401 otherwise, as
the Hub answers for a private repo). Every request is logged as one JSON line, so tests can prove what was (not)
downloaded. It binds only to loopback or to the lab bridge's subnet, and exits by itself after --max-lifetime.

Subcommands:
  make-model DIR          write the tiny Qwen2-shaped model folder the tests serve (config, tokenizer, 3 shards)
  serve --repo ORG/NAME=DIR [--tag NAME]... [--bind ADDR|lab] [--port N] [--token-file F] [--state-dir D]
        [--log F] [--max-lifetime S] [--throttle-bps N]
  stop --state-dir D      SIGTERM the server of that state folder (its pid file), SIGKILL after --timeout
Standard library only (Python >= 3.9).
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import os
import signal
import struct
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlsplit

STANDIN_NOTICE = "hub-standin: a test stand-in for the Hugging Face Hub download endpoints (not the Hub)"
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf", ".model")  # served as LFS files, as the Hub does
LAB_SUBNET = os.environ.get("GPUFLEET_LAB_SUBNET", "10.213.%d.0/24" % (77 + int(os.environ.get("GPUFLEET_LAB_INSTANCE") or 0)))


# ---------------------------------------------------------------------------------------------------------------
# The tiny model
# ---------------------------------------------------------------------------------------------------------------

TINY_CONFIG: Dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 32,
    "initializer_range": 0.02,
    "intermediate_size": 64,
    "max_position_embeddings": 4096,
    "max_window_layers": 2,
    "model_type": "qwen2",
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "sliding_window": 4096,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.57.1",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 128,
}


def _tensor_plan(config: Dict[str, Any]) -> List[List[Tuple[str, List[int]]]]:
    """Tensor names and shapes of a Qwen2 checkpoint of this config, split into three shards."""
    hidden, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    head_dim = hidden // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * head_dim

    def layer(i: int) -> List[Tuple[str, List[int]]]:
        p = "model.layers.%d." % i
        return [(p + "input_layernorm.weight", [hidden]),
                (p + "mlp.down_proj.weight", [hidden, inter]),
                (p + "mlp.gate_proj.weight", [inter, hidden]),
                (p + "mlp.up_proj.weight", [inter, hidden]),
                (p + "post_attention_layernorm.weight", [hidden]),
                (p + "self_attn.k_proj.bias", [kv]), (p + "self_attn.k_proj.weight", [kv, hidden]),
                (p + "self_attn.o_proj.weight", [hidden, hidden]),
                (p + "self_attn.q_proj.bias", [hidden]), (p + "self_attn.q_proj.weight", [hidden, hidden]),
                (p + "self_attn.v_proj.bias", [kv]), (p + "self_attn.v_proj.weight", [kv, hidden])]

    last = layer(1)
    mlp = [t for t in last if ".mlp." in t[0]]
    return [[("model.embed_tokens.weight", [vocab, hidden])] + layer(0), [t for t in last if t not in mlp],
            mlp + [("model.norm.weight", [hidden])]]


def safetensors_bytes(tensors: List[Tuple[str, List[int]]], seed: str) -> bytes:
    """A valid safetensors file (bf16 tensors, deterministic filler data): 8-byte header length, JSON, data."""
    header: Dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in tensors:
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header to 8 bytes
    data = bytearray()
    block = hashlib.sha256(seed.encode()).digest()
    while len(data) < offset:
        block = hashlib.sha256(block).digest()
        data += block
    return struct.pack("<Q", len(raw)) + raw + bytes(data[:offset])


def make_model(folder: Path) -> Dict[str, int]:
    """Write the tiny model folder; returns {file: size}. Deterministic: the same bytes every time."""
    folder.mkdir(parents=True, exist_ok=True)
    files: Dict[str, bytes] = {}
    shards = _tensor_plan(TINY_CONFIG)
    weight_map: Dict[str, str] = {}
    total = 0
    for index, tensors in enumerate(shards, start=1):
        name = "model-%05d-of-%05d.safetensors" % (index, len(shards))
        files[name] = safetensors_bytes(tensors, name)
        for tensor, shape in tensors:
            weight_map[tensor] = name
            size = 2
            for dim in shape:
                size *= dim
            total += size
    files["model.safetensors.index.json"] = _json({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    files["config.json"] = _json(TINY_CONFIG)
    files["generation_config.json"] = _json({"bos_token_id": 1, "eos_token_id": 2, "max_new_tokens": 2048,
                                             "transformers_version": TINY_CONFIG["transformers_version"]})
    words = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + ["tok%d" % i for i in range(TINY_CONFIG["vocab_size"] - 3)]
    vocab = {word: i for i, word in enumerate(words)}
    files["vocab.json"] = _json(vocab)
    files["merges.txt"] = b"#version: 0.2\nt o\nto k\n"
    files["tokenizer.json"] = _json({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": w, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, w in enumerate(words[:3])],
        "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                              "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": ["t o", "to k"]}})
    files["tokenizer_config.json"] = _json({
        "add_prefix_space": False, "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "model_max_length": TINY_CONFIG["max_position_embeddings"], "tokenizer_class": "Qwen2Tokenizer",
        "chat_template": "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"})
    files["README.md"] = (STANDIN_NOTICE + "\n\nA tiny Qwen2-shaped model with filler weights, for tests only.\n").encode()
    sizes = {}
    for name, content in files.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
        sizes[name] = len(content)
    return sizes


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=False) + "\n").encode()


# ---------------------------------------------------------------------------------------------------------------
# Repositories
# ---------------------------------------------------------------------------------------------------------------

class Repo:
    """One served repository: its files with git/LFS ids, a commit id derived from them, branches and tags."""

    def __init__(self, repo_id: str, folder: Path, tags: List[str]) -> None:
        self.repo_id = repo_id
        self.folder = folder
        self.files: Dict[str, Dict[str, Any]] = {}
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not _hidden(p.relative_to(folder))):
            rel = path.relative_to(folder).as_posix()
            content = path.read_bytes()
            info: Dict[str, Any] = {"size": len(content), "path": path,
                                    "oid": hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()}
            if rel.endswith(LFS_SUFFIXES):
                info["lfs"] = {"oid": hashlib.sha256(content).hexdigest(), "size": len(content), "pointerSize": 134}
            self.files[rel] = info
        listing = "".join("%s %s\n" % (rel, info["oid"]) for rel, info in self.files.items())
        self.sha = hashlib.sha1((repo_id + "\n" + listing).encode()).hexdigest()
        self.branches = {"main": self.sha}
        self.tags = {tag: self.sha for tag in tags}

    def resolve(self, revision: str) -> Optional[str]:
        """Commit id of a branch, a tag or the commit id itself; None when unknown."""
        if revision == self.sha:
            return self.sha
        return self.branches.get(revision) or self.tags.get(revision)

    def etag(self, rel: str) -> str:
        """The id the Hub sends: the LFS sha256 for LFS files, the git blob id for the others."""
        info = self.files[rel]
        return info["lfs"]["oid"] if "lfs" in info else info["oid"]


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


# ---------------------------------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------------------------------

class HubHandler(BaseHTTPRequestHandler):
    """Routes the Hub download endpoints; every response logged as one JSON line."""

    server_version = "hub-standin/1.0"
    protocol_version = "HTTP/1.1"
    server: "HubServer"

    def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
        """Silence the default stderr access log; `_log` writes JSON lines instead."""

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's naming)
        """HEAD: only file metadata (resolve) is meaningful."""
        self._route(head=True)

    def do_GET(self) -> None:  # noqa: N802
        """GET: API calls and file bytes."""
        self._route(head=False)

    # -- routing --------------------------------------------------------------------------------------------------
    def _route(self, head: bool) -> None:
        self._sent = 0
        self._status = 0
        self._range: Optional[str] = None
        try:
            if not self._authorized():
                self._error(HTTPStatus.UNAUTHORIZED, "RepoNotFound", "Invalid credentials in Authorization header")
                return
            split = urlsplit(self.path)
            parts = [unquote(p) for p in split.path.split("/")[1:]]
            query = parse_qs(split.query)
            if len(parts) >= 4 and parts[0] == "api" and parts[1] == "models":
                self._api(parts[2:], query, head)
            elif len(parts) >= 5 and parts[2] == "resolve":
                self._resolve("/".join(parts[0:2]), parts[3], "/".join(parts[4:]), head)
            else:
                self._error(HTTPStatus.NOT_FOUND, None, "Not found: " + split.path)
        except (BrokenPipeError, ConnectionResetError):
            self._status = self._status or 499
        finally:
            self._log()

    def _authorized(self) -> bool:
        token = self.server.token
        if not token:
            return True
        return self.headers.get("Authorization", "") == "Bearer " + token

    def _repo(self, repo_id: str) -> Optional[Repo]:
        repo = self.server.repos.get(repo_id)
        if repo is None:
            self._error(HTTPStatus.NOT_FOUND, "RepoNotFound", "Repository not found")
        return repo

    def _api(self, rest: List[str], query: Dict[str, List[str]], head: bool) -> None:
        repo_id = "/".join(rest[0:2])
        tail = rest[2:]
        repo = self._repo(repo_id)
        if repo is None:
            return
        if not tail or tail[0] == "revision":
            revision = tail[1] if len(tail) > 1 else "main"
            sha = repo.resolve(revision)
            if sha is None:
                self._error(HTTPStatus.NOT_FOUND, "RevisionNotFound", "Invalid rev id: " + revision)
                return
            blobs = query.get("blobs", ["false"])[0].lower() in ("1", "true")
            siblings = []
            for rel, info in repo.files.items():
                sibling: Dict[str, Any] = {"rfilename": rel}
                if blobs:
                    sibling.update({"size": info["size"], "blobId": info["oid"]})
                    if "lfs" in info:
                        sibling["lfs"] = {"sha256": info["lfs"]["oid"], "size": info["size"],
                                          "pointerSize": info["lfs"]["pointerSize"]}
                siblings.append(sibling)
            self._json({"_id": repo.sha[:24], "id": repo_id, "modelId": repo_id, "author": repo_id.split("/", maxsplit=1)[0],
                        "sha": sha, "private": bool(self.server.token), "gated": False, "disabled": False,
                        "library_name": "transformers", "tags": ["transformers", "safetensors", "qwen2", "standin"],
                        "pipeline_tag": "text-generation", "siblings": siblings,
                        "usedStorage": sum(i["size"] for i in repo.files.values())}, head)
        elif tail[0] == "tree" and len(tail) >= 2:
            sha = repo.resolve(tail[1])
            if sha is None:
                self._error(HTTPStatus.NOT_FOUND, "RevisionNotFound", "Invalid rev id: " + tail[1])
                return
            prefix = "/".join(tail[2:]).strip("/")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            self._json(self._tree(repo, prefix, recursive), head)
        elif tail[0] == "refs":
            def ref(kind: str, name: str, target: str) -> Dict[str, str]:
                return {"name": name, "ref": "refs/%s/%s" % (kind, name), "targetCommit": target}
            self._json({"branches": [ref("heads", n, s) for n, s in repo.branches.items()],
                        "tags": [ref("tags", n, s) for n, s in repo.tags.items()], "converts": []}, head)
        else:
            self._error(HTTPStatus.NOT_FOUND, None, "Not found")

    @staticmethod
    def _tree(repo: Repo, prefix: str, recursive: bool) -> List[Dict[str, Any]]:
        entries: List[Dict[str, Any]] = []
        folders = set()
        for rel, info in repo.files.items():
            if prefix and not rel.startswith(prefix + "/"):
                continue
            below = rel[len(prefix) + 1:] if prefix else rel
            if "/" in below and not recursive:
                folders.add((prefix + "/" if prefix else "") + below.split("/")[0])
                continue
            parents = rel.split("/")[:-1]
            for depth in range(1, len(parents) + 1):
                folder = "/".join(parents[:depth])
                if not prefix or folder.startswith(prefix + "/"):
                    folders.add(folder)
            entry: Dict[str, Any] = {"type": "file", "oid": info["oid"], "size": info["size"], "path": rel}
            if "lfs" in info:
                entry["lfs"] = dict(info["lfs"])
            entries.append(entry)
        dirs = [{"type": "directory", "oid": hashlib.sha1(f.encode()).hexdigest(), "size": 0, "path": f}
                for f in sorted(folders)]
        return dirs + entries

    def _resolve(self, repo_id: str, revision: str, rel: str, head: bool) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        sha = repo.resolve(revision)
        if sha is None:
            self._error(HTTPStatus.NOT_FOUND, "RevisionNotFound", "Invalid rev id: " + revision)
            return
        info = repo.files.get(rel)
        if info is None:
            self._error(HTTPStatus.NOT_FOUND, "EntryNotFound", "Entry not found", commit=sha)
            return
        size = info["size"]
        start = 0
        status = HTTPStatus.OK
        self._range = self.headers.get("Range")
        if self._range and not head:
            start = _range_start(self._range)
            if start is None or start >= size:
                self.send_response(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
                self._status = 416
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = HTTPStatus.PARTIAL_CONTENT
        self.send_response(status)
        self._status = int(status)
        self.send_header("X-Repo-Commit", sha)
        self.send_header("ETag", '"%s"' % repo.etag(rel))
        if "lfs" in info:
            self.send_header("X-Linked-Etag", '"%s"' % info["lfs"]["oid"])
            self.send_header("X-Linked-Size", str(size))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        if status == HTTPStatus.PARTIAL_CONTENT:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
        self.end_headers()
        if head:
            return
        with open(info["path"], "rb") as handle:
            handle.seek(start)
            self._stream(handle, size - start)

    def _stream(self, handle: Any, length: int) -> None:
        """Send the bytes, at --throttle-bps when set (so tests can watch progress), else as fast as possible."""
        throttle = self.server.throttle_bps
        chunk = 64 * 1024 if not throttle else max(1024, throttle // 10)
        while length > 0:
            data = handle.read(min(chunk, length))
            if not data:
                break
            self.wfile.write(data)
            self._sent += len(data)
            length -= len(data)
            if throttle:
                time.sleep(len(data) / throttle)

    # -- responses ------------------------------------------------------------------------------------------------
    def _json(self, value: Any, head: bool) -> None:
        body = json.dumps(value).encode()
        self.send_response(HTTPStatus.OK)
        self._status = 200
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)
            self._sent += len(body)

    def _error(self, status: HTTPStatus, code: Optional[str], message: str, commit: Optional[str] = None) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self._status = int(status)
        if code:
            self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        if commit:
            self.send_header("X-Repo-Commit", commit)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _log(self) -> None:
        record = {"t": round(time.time(), 3), "client": self.client_address[0], "method": self.command,
                  "path": urlsplit(self.path).path, "status": self._status, "bytes": self._sent,
                  "range": self._range, "auth": "Authorization" in self.headers}
        self.server.write_log(record)


def _range_start(header: str) -> Optional[int]:
    """Start offset of `bytes=N-` or `bytes=N-M` (the only forms huggingface_hub sends); None when unparsable."""
    if not header.startswith("bytes="):
        return None
    first = header[len("bytes="):].split(",")[0].strip()
    start, _sep, _end = first.partition("-")
    return int(start) if start.isdigit() else None


class HubServer(ThreadingHTTPServer):
    """Threading server holding the repositories, the token and the request log."""

    daemon_threads = True

    def __init__(self, address: Tuple[str, int], repos: Dict[str, Repo], token: str, log_path: Optional[Path],
                 throttle_bps: int) -> None:
        super().__init__(address, HubHandler)
        self.repos = repos
        self.token = token
        self.throttle_bps = throttle_bps
        self._log_lock = threading.Lock()
        self._log_path = log_path

    def write_log(self, record: Dict[str, Any]) -> None:
        """Append one request record (a JSON line); stdout when no log file was given."""
        line = json.dumps(record) + "\n"
        with self._log_lock:
            if self._log_path:
                with open(self._log_path, "a", encoding="utf-8") as handle:
                    handle.write(line)
            else:
                sys.stdout.write(line)
                sys.stdout.flush()


def bind_address(value: str) -> str:
    """`lab` means the lab bridge's own address (the first host of GPUFLEET_LAB_SUBNET, as tools/lab/lab makes it)."""
    if value == "lab":
        return str(next(ipaddress.ip_network(LAB_SUBNET).hosts()))
    return value


def check_bind(address: str) -> None:
    """Refuse any address that is not loopback or in the lab bridge's subnet: tests never listen elsewhere."""
    ip = ipaddress.ip_address(address)
    if ip.is_loopback or ip in ipaddress.ip_network(LAB_SUBNET):
        return
    raise SystemExit("hub-standin: refusing to bind %s: only loopback or the lab subnet %s" % (address, LAB_SUBNET))


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT or --max-lifetime; write pid and endpoint into --state-dir when given."""
    args.bind = bind_address(args.bind)
    check_bind(args.bind)
    repos: Dict[str, Repo] = {}
    for spec in args.repo:
        repo_id, sep, folder = spec.partition("=")
        if not sep or repo_id.count("/") != 1 or not Path(folder).is_dir():
            raise SystemExit("hub-standin: --repo wants ORG/NAME=FOLDER (an existing folder), got %r" % spec)
        repos[repo_id] = Repo(repo_id, Path(folder), args.tag)
    token = Path(args.token_file).read_text(encoding="utf-8").strip() if args.token_file else ""
    server = HubServer((args.bind, args.port), repos, token, Path(args.log) if args.log else None, args.throttle_bps)
    host, port = server.server_address[0], server.server_address[1]
    endpoint = "http://%s:%d" % (host if ":" not in str(host) else "[%s]" % host, port)
    if args.state_dir:
        state = Path(args.state_dir)
        state.mkdir(parents=True, exist_ok=True)
        (state / "repos.json").write_text(json.dumps({r.repo_id: {"sha": r.sha, "tags": list(r.tags),
                                                                  "files": {k: v["size"] for k, v in r.files.items()}}
                                                      for r in repos.values()}, indent=2) + "\n")
        (state / "pid").write_text("%d\n" % os.getpid())
        (state / "endpoint").write_text(endpoint + "\n")  # written last: its presence means "serving"

    def stop(_signum: int, _frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deadline = threading.Timer(args.max_lifetime, server.shutdown)
    deadline.daemon = True
    deadline.start()
    print("%s, serving %s on %s" % (STANDIN_NOTICE, ", ".join(sorted(repos)), endpoint), file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        deadline.cancel()
        server.server_close()
        if args.state_dir:
            for name in ("endpoint", "pid"):
                try:
                    (Path(args.state_dir) / name).unlink()
                except FileNotFoundError:
                    pass
    return 0


def stop(state_dir: Path, timeout: float) -> int:
    """End the server whose pid is in state_dir: SIGTERM, wait (bounded), SIGKILL. Nothing running is fine."""
    try:
        pid = int((state_dir / "pid").read_text().strip())
    except (OSError, ValueError):
        print("hub-standin: not running (no pid file in %s)" % state_dir)
        return 0
    try:
        cmdline = Path("/proc/%d/cmdline" % pid).read_bytes()
    except OSError:
        cmdline = b""
    if b"hub_standin" not in cmdline:  # a stale pid file: never signal a process that is not ours
        print("hub-standin: pid %d is not a hub stand-in (stale pid file); nothing to stop" % pid)
        (state_dir / "pid").unlink()
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path("/proc/%d" % pid).exists():
            print("hub-standin: stopped pid %d" % pid)
            return 0
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    print("hub-standin: pid %d did not stop within %.0f s, killed" % (pid, timeout))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Command line: make-model or serve."""
    parser = argparse.ArgumentParser(prog="hub_standin", description=STANDIN_NOTICE)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make-model", help="write the tiny test model folder")
    make.add_argument("folder")
    run = sub.add_parser("serve", help="serve model folders with the Hub's download endpoints")
    run.add_argument("--repo", action="append", required=True, help="ORG/NAME=FOLDER (repeatable)")
    run.add_argument("--tag", action="append", default=[], help="a tag pointing at the commit (repeatable)")
    run.add_argument("--bind", default="127.0.0.1", help="loopback, an address of the lab subnet, or 'lab' (the bridge)")
    run.add_argument("--port", type=int, default=0, help="0 picks a free port (see <state-dir>/endpoint)")
    run.add_argument("--token-file", help="require 'Authorization: Bearer <token in this file>'")
    run.add_argument("--state-dir", help="write pid, endpoint and repos.json here")
    run.add_argument("--log", help="append one JSON line per request to this file (default stdout)")
    run.add_argument("--max-lifetime", type=float, default=1800.0, help="exit after this many seconds")
    run.add_argument("--throttle-bps", type=int, default=0, help="send file bytes at most this fast")
    halt = sub.add_parser("stop", help="stop the server started with --state-dir")
    halt.add_argument("--state-dir", required=True)
    halt.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args(argv)
    if args.command == "stop":
        return stop(Path(args.state_dir), args.timeout)
    if args.command == "make-model":
        for name, size in sorted(make_model(Path(args.folder)).items()):
            print("%8d %s" % (size, name))
        return 0
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
