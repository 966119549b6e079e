"""ASGI plumbing shared by the console's application and the SQS endpoint
(``sqsqueue.server``, which imports this package; this module imports
nothing of sqsqueue): the one way either writes an answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["Send", "respond"]

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def respond(send: Send, status: int, headers: dict[str, str], body: bytes) -> None:
    """Write one whole answer: its status and ``headers`` (names and values
    latin-1 text; Content-Length is set here, in ``headers``), then ``body``
    as one message, which the server writes with the head (one send(2) on
    ``sqsqueue.server``'s httptools protocol). O(headers + body)."""
    headers["Content-Length"] = str(len(body))
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": body})
