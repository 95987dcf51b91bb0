"""Background tasks that live until they finish.

asyncio keeps only a weak reference to a task: one created and not kept can be garbage-collected while it waits
(the warmup of a server polled hard by a client was, under load: "Task was destroyed but it is pending!"), and
the server then never becomes ready. Every fire-and-forget task of the stand-in goes through :func:`spawn`.
"""

import asyncio
from typing import Any, Coroutine, Set

_RUNNING: Set["asyncio.Task[Any]"] = set()


def spawn(coro: Coroutine[Any, Any, Any]) -> "asyncio.Task[Any]":
    """Start ``coro`` on the running loop and hold it until it is done."""
    task = asyncio.get_running_loop().create_task(coro)
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    return task
