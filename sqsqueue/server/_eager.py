"""Running a request's coroutine eagerly: its first step in the event loop's
current callback, and the rest (only if it waits) in an asyncio task.

Most SQS requests never wait: started in a task, each would cost a task, a
step of the event loop to start it and another for its done-callback, more
than the request's own work on a small message. :func:`start_eagerly` runs
the coroutine at once instead and makes a task only for a coroutine that
suspends (a long poll), continuing it from where it stopped; asyncio's own
``eager_start`` (Python 3.12+) does the same, and Python 3.11 has none.

The first step runs outside any task: :func:`asyncio.current_task` is None
there. Code that needs its task (the Endpoint's long polls register theirs so
that stopping the server can answer them) checks for that and yields once
first (:func:`in_task`), continuing inside the task.

Cost: O(1) beyond the coroutine's own, one context copy per request.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["continue_in_task", "in_task", "start_eagerly"]

T = TypeVar("T")


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], yielded: Any) -> Generator[Any, Any, T]:
    """Continue ``coro``, suspended on ``yielded``, as if awaited from the start:
    what the task sends or throws in (a result, a cancellation) goes on to it."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                yielded = coro.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            continue
        try:
            yielded = coro.send(sent)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


async def continue_in_task(coro: Coroutine[Any, Any, T], yielded: Any) -> T:
    """``coro``, already started and suspended on ``yielded``, awaited to its end."""
    return await _resume(coro, yielded)


def start_eagerly(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]
) -> asyncio.Task[Any] | None:
    """Run ``coro`` now until it finishes or first suspends; a task continuing
    it when it suspended, None when it finished. Its context is a copy of the
    caller's, as a task's would be, kept by the task that continues it. An
    exception it ends with goes to the loop's exception handler, as a failed
    task's would (an ASGI cycle catches its application's own). Call it from
    a callback of ``loop`` (a protocol's), outside any task."""
    context = contextvars.copy_context()
    try:
        yielded = context.run(coro.send, None)
    except StopIteration:
        return None
    except Exception as exc:
        loop.call_exception_handler({"message": "a request's coroutine failed", "exception": exc})
        return None
    return loop.create_task(continue_in_task(coro, yielded), context=context)


@types.coroutine
def _one_step() -> Generator[None, None, None]:
    yield  # a bare yield: the task (or start_eagerly's) resumes it at once


async def in_task() -> asyncio.Task[Any]:
    """The running task; when called in an eager first step, outside any task,
    suspend once so that the rest runs in the task that continues it."""
    task = asyncio.current_task()
    if task is None:
        await _one_step()
        task = asyncio.current_task()
    assert task is not None, "awaited outside a task and outside start_eagerly"
    return task
