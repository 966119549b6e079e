"""Requests run eagerly (``sqsqueue.server._eager``): a coroutine's first step
runs in the caller's callback, and only one that suspends goes on in a task,
from where it stopped, with what the task sends or throws in passed on."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from sqsqueue.server._eager import in_task, start_eagerly

where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="caller")


async def eagerly(coro: Any) -> asyncio.Task[Any] | None:
    """start_eagerly(coro) called as the server calls it: from a callback of
    the loop (a protocol's), outside any task."""
    loop = asyncio.get_running_loop()
    started: asyncio.Future[asyncio.Task[Any] | None] = loop.create_future()
    loop.call_soon(lambda: started.set_result(start_eagerly(loop, coro)))
    return await started


def test_a_coroutine_that_never_suspends_finishes_without_a_task() -> None:
    ran: list[object] = []

    async def answer() -> None:
        ran.append(asyncio.current_task())

    async def main() -> asyncio.Task[Any] | None:
        return await eagerly(answer())

    assert asyncio.run(main()) is None
    assert ran == [None]  # it ran at once, outside any task


def test_a_coroutine_that_suspends_goes_on_in_a_task_with_its_results() -> None:
    steps: list[str] = []

    async def poll(fut: asyncio.Future[str]) -> str:
        steps.append("first step")
        got = await fut  # suspends: the rest runs in the task
        steps.append(f"woken with {got}")
        await asyncio.sleep(0)  # bare yields pass through too
        return got.upper()

    async def main() -> str:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[str] = loop.create_future()
        task = await eagerly(poll(fut))
        assert task is not None and steps == ["first step"]
        fut.set_result("message")
        return await task

    assert asyncio.run(main()) == "MESSAGE"
    assert steps == ["first step", "woken with message"]


def test_cancelling_the_task_reaches_the_suspended_coroutine() -> None:
    seen: list[str] = []

    async def poll() -> None:
        try:
            await asyncio.get_running_loop().create_future()  # never resolved
        except asyncio.CancelledError:
            seen.append("cancelled inside")
            raise
        finally:
            seen.append("cleaned up")

    async def main() -> None:
        task = await eagerly(poll())
        assert task is not None
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert seen == ["cancelled inside", "cleaned up"]


def test_in_task_moves_an_eager_step_into_its_task() -> None:
    tasks: list[object] = []

    async def needs_its_task() -> None:
        tasks.append(asyncio.current_task())
        tasks.append(await in_task())

    async def main() -> asyncio.Task[Any] | None:
        task = await eagerly(needs_its_task())
        if task is not None:
            await task
        return task

    task = asyncio.run(main())
    assert task is not None and tasks == [None, task]


def test_in_a_task_in_task_is_that_task_at_once() -> None:
    async def main() -> bool:
        return await in_task() is asyncio.current_task()

    assert asyncio.run(main())


def test_the_eager_step_has_its_own_context_kept_by_its_task() -> None:
    seen: list[str] = []

    async def request(fut: asyncio.Future[None]) -> None:
        where.set("request")
        await fut
        seen.append(where.get())

    async def main() -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        task = await eagerly(request(fut))
        seen.append(where.get())  # the caller's context is left alone
        fut.set_result(None)
        assert task is not None
        await task

    asyncio.run(main())
    assert seen == ["caller", "request"]


def test_a_coroutine_that_fails_at_once_is_reported_as_a_failed_task_is() -> None:
    reported: list[dict[str, Any]] = []

    async def broken() -> None:
        raise ValueError("a bug")

    async def main() -> asyncio.Task[Any] | None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: reported.append(ctx))
        return await eagerly(broken())

    assert asyncio.run(main()) is None
    assert [type(ctx["exception"]) for ctx in reported] == [ValueError]
