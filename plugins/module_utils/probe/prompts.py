# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped probe prompts: realistic coding requests of three lengths, and the loader for a user's own file.

Why realistic prompts: prefill time (and so TTFT) depends on prompt length, and speculative decoding accepts more
drafts on code than on random tokens, so a probe fed random token ids reports a TTFT and an accept length no
coding assistant will see. These were written for this collection: short questions (roughly 30-60 tokens), medium
tasks with a specification or a snippet (roughly 150-300 tokens) and long reviews that paste real-looking code
(roughly 600-1,000 tokens; counts by common BPE tokenisers, code tokenises denser than prose). They live in a Python module, not a data file, because Ansible
ships module_utils with the module to the target and nothing else.

A user file (``prompts_file``) is JSON (a list of strings, or of objects with ``prompt``/``text``), JSON Lines
(one such string or object per line), or plain text with prompts separated by a line holding only ``---``.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence

SHORT = (
    "Write a Python function that returns the n-th Fibonacci number using an iterative loop. Include type hints "
    "and a docstring, and raise ValueError for negative n.",

    "In Go, how do I read a large file line by line without loading it all into memory? Show a complete example "
    "with bufio.Scanner and explain how to handle lines longer than 64 KB.",

    "Explain the difference between `git rebase` and `git merge` for a feature branch, and say when each one is "
    "the better choice on a shared team repository.",

    "Write a SQL query that returns, for each customer, the date of their most recent order and the total amount "
    "they spent in 2024. Tables: customers(id, name), orders(id, customer_id, created_at, amount).",

    "Give me a bash one-liner that finds the ten largest files under the current directory, including hidden "
    "ones, and prints their sizes in human-readable form.",

    "What does the `static` keyword mean on a method in Rust's trait system compared with Java? Answer briefly "
    "and show one small code example in each language.",
)

MEDIUM = (
    """I am building a small HTTP rate limiter in Python for an internal API gateway. Requirements:

1. Token bucket per client key (the value of the X-Api-Client header), capacity 20 tokens, refill 5 tokens per
   second.
2. It must be safe to call from many threads at once; the gateway runs a ThreadPoolExecutor with 64 workers.
3. Memory must stay bounded: buckets that have been idle for more than 10 minutes should be evicted, but the
   eviction must not take a global lock for longer than a few microseconds.
4. The public API is a single method `allow(client_key: str, cost: int = 1) -> bool`.
5. Time must be injectable so the class can be unit tested without sleeping.

Please write the class with type hints and docstrings, then a pytest module with at least five tests covering
refill, burst, cost greater than one, eviction, and concurrent access. Explain your locking strategy in a short
paragraph after the code, including why you chose it over a single global lock.""",

    """Refactor the following TypeScript function so that it is easier to test and no longer mixes I/O with
business logic. Keep the behaviour identical.

```ts
export async function syncInvoices(db: Db, api: BillingApi, since: Date): Promise<number> {
  const rows = await db.query("SELECT id, external_id, total, status FROM invoices WHERE updated_at > $1", [since]);
  let changed = 0;
  for (const row of rows) {
    const remote = await api.getInvoice(row.external_id);
    if (!remote) { console.warn(`missing ${row.external_id}`); continue; }
    if (remote.total !== row.total || remote.status !== row.status) {
      await db.query("UPDATE invoices SET total = $1, status = $2 WHERE id = $3", [remote.total, remote.status, row.id]);
      changed++;
    }
  }
  return changed;
}
```

Split it into a pure function that decides which rows need updating and a thin function that does the I/O.
Add unit tests for the pure part with vitest, and say how you would batch the API calls if the billing API
allowed fetching up to 100 invoices per request.""",

    """Design a PostgreSQL schema for a multi-tenant task tracker. Each tenant has projects; projects have tasks;
tasks have an assignee (a user of the same tenant), a status from a fixed set (todo, doing, review, done), a
priority from 1 to 4, optional due dates, and free-form labels. Users can belong to several tenants with a role
per tenant (owner, member, viewer).

Requirements:
- Every query from the application is scoped by tenant_id; show how row level security enforces that.
- Listing the open tasks of one project ordered by priority then due date must stay fast with ten million tasks.
- Labels must be searchable ("all tasks with label X in tenant T").
- Deleting a project must not leave orphaned tasks.

Give the CREATE TABLE statements, the indexes with a one-line reason each, the RLS policies, and two example
queries with the plan you expect. Mention one trade-off you made.""",

    """Our Kubernetes deployment of a Java service restarts every few hours with OOMKilled, although the JVM heap
is capped at 2 GiB and the container limit is 3 GiB. Here is what we know:

- Java 21, G1 GC, `-Xmx2g -XX:MaxMetaspaceSize=256m`, about 400 threads at peak.
- The service uses Netty with direct buffers for an HTTP client, and a JNI library for image resizing.
- Heap dumps taken just before the kill show 1.3 GiB used.
- `kubectl top` shows memory climbing steadily by roughly 100 MiB per hour.

Walk me through how to find where the non-heap memory goes: which JVM flags and tools (Native Memory Tracking,
jcmd, async-profiler, pmap) to use, in what order, what each output would look like for a direct-buffer leak
versus a native library leak, and how to size the container limit once the cause is fixed.""",

    """Write a command-line tool in Rust that tails a JSON-lines log file (like `tail -f`) and prints a live summary
every five seconds: requests per second, the p50 and p99 of the `duration_ms` field, and the top five values of
the `path` field by count in the last minute. Requirements: it must handle the file being rotated (renamed and
recreated), tolerate malformed lines by counting them instead of crashing, and use bounded memory no matter how
long it runs. Use only the standard library plus serde_json and clap. Show the full main.rs, explain the data
structure you use for the sliding window, and list the edge cases you tested.""",
)

LONG = (
    """Please review this Python module from our data pipeline. It downloads daily CSV exports from an S3-compatible
store, validates them, and loads them into PostgreSQL. It works, but it is slow (about 40 minutes for 200 files)
and it sometimes loads a file twice. I would like a prioritised list of problems (correctness first, then
performance, then style), each with the line or function it concerns and a concrete fix, and then a rewritten
version of the two functions you consider most important.

```python
import csv
import datetime
import io
import logging
import os
import time

import boto3
import psycopg2

log = logging.getLogger("loader")

BUCKET = os.environ.get("EXPORT_BUCKET", "exports")
PREFIX = "daily/"
DSN = os.environ["LOADER_DSN"]
REQUIRED = ["order_id", "customer_id", "created_at", "amount", "currency"]


def list_new_files(s3, since):
    files = []
    token = None
    while True:
        kwargs = {"Bucket": BUCKET, "Prefix": PREFIX}
        if token:
            kwargs["ContinuationToken"] = token
        resp = s3.list_objects_v2(**kwargs)
        for obj in resp.get("Contents", []):
            if obj["LastModified"].replace(tzinfo=None) > since:
                files.append(obj["Key"])
        if not resp.get("IsTruncated"):
            break
        token = resp["NextContinuationToken"]
    return files


def already_loaded(conn, key):
    cur = conn.cursor()
    cur.execute("SELECT 1 FROM loaded_files WHERE key = '%s'" % key)
    return cur.fetchone() is not None


def validate_row(row):
    for col in REQUIRED:
        if col not in row or row[col] == "":
            return False
    try:
        float(row["amount"])
        datetime.datetime.strptime(row["created_at"], "%Y-%m-%d %H:%M:%S")
    except Exception:
        return False
    return True


def load_file(s3, conn, key):
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode("utf-8")
    reader = csv.DictReader(io.StringIO(body))
    good, bad = 0, 0
    cur = conn.cursor()
    for row in reader:
        if not validate_row(row):
            bad += 1
            continue
        cur.execute(
            "INSERT INTO orders (order_id, customer_id, created_at, amount, currency) VALUES (%s, %s, %s, %s, %s)",
            (row["order_id"], row["customer_id"], row["created_at"], row["amount"], row["currency"]),
        )
        conn.commit()
        good += 1
    cur.execute("INSERT INTO loaded_files (key, loaded_at) VALUES (%s, now())", (key,))
    conn.commit()
    log.info("loaded %s: %d rows, %d rejected", key, good, bad)
    return good, bad


def main():
    s3 = boto3.client("s3")
    conn = psycopg2.connect(DSN)
    since = datetime.datetime.utcnow() - datetime.timedelta(days=2)
    start = time.time()
    total = 0
    for key in list_new_files(s3, since):
        if already_loaded(conn, key):
            continue
        try:
            good, _ = load_file(s3, conn, key)
            total += good
        except Exception as exc:
            log.error("failed %s: %s", key, exc)
            conn.rollback()
    log.info("done: %d rows in %.1fs", total, time.time() - start)


if __name__ == "__main__":
    main()
```

Context you may need: the orders table has a primary key on order_id; two instances of this loader can run at
the same time when a cron run overlaps the previous one; files are between 5 and 80 MB; the database is on the
same network, with about 1 ms round-trip time.""",

    """I maintain a small Go HTTP service and a colleague says the handler below has a data race and a goroutine leak.
I can't see either. Please explain both precisely (which lines, what interleaving triggers them, what the race
detector would print), then give a corrected version, and finally suggest how to test for the leak in CI.

```go
package cache

import (
    "context"
    "encoding/json"
    "net/http"
    "sync"
    "time"
)

type Entry struct {
    Value     json.RawMessage
    FetchedAt time.Time
}

type Cache struct {
    mu      sync.Mutex
    entries map[string]*Entry
    fetch   func(ctx context.Context, key string) (json.RawMessage, error)
    ttl     time.Duration
}

func New(fetch func(ctx context.Context, key string) (json.RawMessage, error), ttl time.Duration) *Cache {
    return &Cache{entries: map[string]*Entry{}, fetch: fetch, ttl: ttl}
}

func (c *Cache) get(ctx context.Context, key string) (*Entry, error) {
    c.mu.Lock()
    e, ok := c.entries[key]
    c.mu.Unlock()
    if ok && time.Since(e.FetchedAt) < c.ttl {
        return e, nil
    }
    result := make(chan *Entry)
    errs := make(chan error)
    go func() {
        v, err := c.fetch(ctx, key)
        if err != nil {
            errs <- err
            return
        }
        entry := &Entry{Value: v, FetchedAt: time.Now()}
        c.entries[key] = entry
        result <- entry
    }()
    select {
    case entry := <-result:
        return entry, nil
    case err := <-errs:
        return nil, err
    case <-time.After(2 * time.Second):
        return e, nil
    }
}

func (c *Cache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
    key := r.URL.Query().Get("key")
    if key == "" {
        http.Error(w, "missing key", http.StatusBadRequest)
        return
    }
    e, err := c.get(r.Context(), key)
    if err != nil {
        http.Error(w, err.Error(), http.StatusBadGateway)
        return
    }
    if e == nil {
        http.Error(w, "timeout", http.StatusGatewayTimeout)
        return
    }
    w.Header().Set("Content-Type", "application/json")
    e.FetchedAt = e.FetchedAt.UTC()
    json.NewEncoder(w).Encode(e)
}
```

Extra constraints for the fix: the upstream fetch is expensive, so concurrent requests for the same key should
share one in-flight fetch (like singleflight, but please do not add a dependency); a slow upstream must not be
able to pile up unbounded goroutines; and the stale entry should still be served when the fetch times out.""",

    """We are moving a React class component to hooks and TypeScript. Please convert it, keeping the behaviour, then
list any bugs in the original that you fixed along the way (there are at least three), and explain how you would
test the debounced search with React Testing Library and fake timers.

```jsx
import React from "react";
import PropTypes from "prop-types";
import { searchUsers } from "../api";

export default class UserPicker extends React.Component {
  constructor(props) {
    super(props);
    this.state = { query: "", results: [], loading: false, error: null, highlighted: 0 };
    this.timer = null;
    this.onChange = this.onChange.bind(this);
    this.onKeyDown = this.onKeyDown.bind(this);
  }

  componentDidUpdate(prevProps, prevState) {
    if (prevState.query !== this.state.query) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.search(this.state.query), 300);
    }
  }

  search(query) {
    if (query.length < 2) {
      this.setState({ results: [] });
      return;
    }
    this.setState({ loading: true });
    searchUsers(query, this.props.tenantId)
      .then((results) => this.setState({ results, loading: false, highlighted: 0 }))
      .catch((error) => this.setState({ error, loading: false }));
  }

  onChange(event) {
    this.setState({ query: event.target.value });
  }

  onKeyDown(event) {
    const { results, highlighted } = this.state;
    if (event.key === "ArrowDown") {
      this.setState({ highlighted: highlighted + 1 });
    } else if (event.key === "ArrowUp") {
      this.setState({ highlighted: highlighted - 1 });
    } else if (event.key === "Enter") {
      this.props.onSelect(results[highlighted]);
    }
  }

  render() {
    const { query, results, loading, error, highlighted } = this.state;
    return (
      <div className="user-picker">
        <input value={query} onChange={this.onChange} onKeyDown={this.onKeyDown} placeholder="Search users" />
        {loading && <span className="spinner" />}
        {error && <p className="error">{error.message}</p>}
        <ul>
          {results.map((user, i) => (
            <li key={i} className={i === highlighted ? "active" : ""} onClick={() => this.props.onSelect(user)}>
              {user.name} <small>{user.email}</small>
            </li>
          ))}
        </ul>
      </div>
    );
  }
}

UserPicker.propTypes = {
  tenantId: PropTypes.string.isRequired,
  onSelect: PropTypes.func.isRequired,
};
```

The API module exports `searchUsers(query: string, tenantId: string, signal?: AbortSignal): Promise<User[]>`
where `User` is `{ id: string; name: string; email: string }`. We use React 18 in strict mode.""",

    """Below is a C function from an embedded project that parses a length-prefixed binary message from a UART ring
buffer. A fuzzer found crashes. Please find every memory-safety problem (give the input that triggers each one),
explain any undefined behaviour even where it does not crash today, and rewrite the function safely without
dynamic allocation. Keep it C99 and keep the function signature.

```c
#include <stdint.h>
#include <string.h>

#define RING_SIZE 256
#define MAX_PAYLOAD 64

typedef struct {
    uint8_t buf[RING_SIZE];
    uint8_t head;   /* next byte to read */
    uint8_t tail;   /* next byte to write */
} ring_t;

typedef struct {
    uint8_t type;
    uint8_t len;
    uint8_t payload[MAX_PAYLOAD];
    uint16_t crc;
} msg_t;

static uint16_t crc16(const uint8_t *data, int len) {
    uint16_t crc = 0xFFFF;
    for (int i = 0; i <= len; i++) {
        crc ^= data[i] << 8;
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
    }
    return crc;
}

static int ring_count(const ring_t *r) {
    return r->tail - r->head;
}

/* Returns 1 when a full message was parsed into *out, 0 when more bytes are needed, -1 on a bad message. */
int parse_message(ring_t *r, msg_t *out) {
    if (ring_count(r) < 4)
        return 0;
    uint8_t start = r->buf[r->head];
    if (start != 0xA5) {
        r->head++;
        return -1;
    }
    out->type = r->buf[r->head + 1];
    out->len = r->buf[r->head + 2];
    if (ring_count(r) < out->len + 5)
        return 0;
    memcpy(out->payload, &r->buf[r->head + 3], out->len);
    out->crc = r->buf[r->head + 3 + out->len] << 8 | r->buf[r->head + 4 + out->len];
    if (crc16(&r->buf[r->head + 1], out->len + 2) != out->crc) {
        r->head++;
        return -1;
    }
    r->head += out->len + 5;
    return 1;
}
```

The writer side is an interrupt handler that stores a byte at `buf[tail]` and then increments `tail`; it runs
on the same core. The CRC covers the type, length and payload bytes. Messages never legitimately exceed 64 bytes
of payload, and a corrupted stream must resynchronise on the next 0xA5 byte rather than stall.""",
)

PROMPT_SETS: Dict[str, Sequence[str]] = {"short": SHORT, "medium": MEDIUM, "long": LONG}
LENGTHS = ("short", "medium", "long")


def shipped_prompts(lengths: Sequence[str] = LENGTHS) -> List[str]:
    """The shipped prompts of the chosen lengths, interleaved (short, medium, long, short, ...).

    Interleaving spreads prompt lengths evenly over a run, so any prefix of the list (a level with few requests)
    has a similar mix of short and long prefills.
    """
    chosen = [PROMPT_SETS[name] for name in LENGTHS if name in lengths]
    unknown = sorted(set(lengths) - set(LENGTHS))
    if unknown or not chosen:
        raise ValueError("prompt lengths must be among %s (got %s)" % (", ".join(LENGTHS), ", ".join(lengths) or "none"))
    out: List[str] = []
    for i in range(max(len(group) for group in chosen)):
        for group in chosen:
            if i < len(group):
                out.append(group[i])
    return out


def _prompt_of(item: Any) -> str:
    """A prompt from a JSON item: a string, or an object's ``prompt``/``text``/``content``."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("prompt", "text", "content"):
            if isinstance(item.get(key), str):
                return item[key]
    raise ValueError("a prompt must be a string or an object with a 'prompt' string, got %r" % (item,))


def parse_prompts(text: str) -> List[str]:
    """Prompts from a file's text: JSON list, JSON Lines, or plain text split on ``---`` lines."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the prompts file is empty")
    if stripped[0] == "[":
        data = json.loads(stripped)
        prompts = [_prompt_of(item) for item in data]
    elif stripped[0] in "{\"":
        prompts = [_prompt_of(json.loads(line)) for line in stripped.splitlines() if line.strip()]
    else:
        prompts, current = [], []
        for line in stripped.splitlines():
            if line.strip() == "---":
                prompts.append("\n".join(current).strip())
                current = []
            else:
                current.append(line)
        prompts.append("\n".join(current).strip())
    prompts = [p for p in prompts if p.strip()]
    if not prompts:
        raise ValueError("the prompts file holds no prompt")
    return prompts


def load_prompts_file(path: str) -> List[str]:
    """Prompts from a file on the host where the module runs (see parse_prompts for the formats)."""
    with open(path, "r", encoding="utf-8") as handle:
        return parse_prompts(handle.read())
