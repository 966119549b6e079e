"""The endpoint's HTTP/1.1 connections on httptools (llhttp, in C): what
:mod:`._http` does for h11, for uvicorn's faster parser.

uvicorn serves with this protocol when httptools is installed (the ``server``
extra brings it) and with :mod:`._http`'s h11 protocol otherwise; both hold
the same hardening, and every hardening test runs against each:

* **Read deadline.** A request's head must arrive whole within
  ``read_timeout`` seconds of the connection opening (or of the previous
  answer), and its body within ``read_timeout`` more; the deadline counts from
  the start of each phase, so a client trickling bytes is cut off too. It does
  not run while a complete request is served (a long poll is never cut short).
  A connection past its deadline is closed without an answer, and a request
  whose body was cut off is abandoned by the application.
* **Head bound.** llhttp bounds neither the request line nor the header
  section: the bytes of the target, header names and values are counted as
  they arrive, and a head over ``max_head_bytes`` is refused (h11 refuses the
  same with ``h11_max_incomplete_event_size``), so memory per connection stays
  bounded. Heads under it reach the Endpoint, which answers its own, tighter
  bound in the request's protocol.
* **Refused bytes** (what llhttp refuses: a malformed Content-Length or chunk
  size, a TLS ClientHello, a request line that is not HTTP, a target with
  bytes that are not URL characters; and what h11 refuses that llhttp accepts:
  HTTP/1.1 without Host, a target that is not ASCII) get AWS's 400
  ``InvalidHttpRequest`` in the request's protocol (:func:`._http.refusal`),
  then the connection closes.
* **Shutdown** closes a connection whose request body is still being read, so
  that request is abandoned at once.

Beyond uvicorn's own protocol, a request's application starts once its body
is whole (botocore writes a head and its body in two sends: one step of the
loop, not two) and runs at once in the parser's callback; only one that
waits, a long poll, continues in an asyncio task (:mod:`._eager`). A request
pipelined behind one that waited starts in a task, as uvicorn starts it. The
read deadline of the next head closes an idle keep-alive connection, so
uvicorn's keep-alive timer is not armed.

A whole SQS POST skips the ASGI cycle: the Endpoint's answer
(:meth:`Endpoint.answer_whole <sqsqueue.server._app.Endpoint.answer_whole>`)
is written here as uvicorn's cycle would write it (its default headers,
names in lower case, ``connection: close`` when the connection ends). The
console's paths, other methods, and a connection whose client is not reading
its answers (the transport's buffer is full: the cycle waits for it) take the
ASGI call. Every answer leaves in one write; while other connections are
open, at the end of the event loop's step: written at once, inside the
parser's callback, the endpoint measured 10-20% fewer requests/s under wrk
at 8 connections (the next requests arrive one epoll round at a time instead
of together). A lone connection's answer leaves at once (held, it cost a
loop step: about 8% of a boto3 client's send+receive+delete cycle).

Cost: one lazy timer per connection (two clock reads per request), a length
sum per header, no task for a request that does not wait, and no ASGI
messages for an SQS POST.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from sqsqueue.server._app import Answer, Endpoint
from sqsqueue.server._eager import start_eagerly
from sqsqueue.server._http import ReadDeadline, refusal

__all__ = ["HttptoolsEndpointProtocol", "protocol_class"]

_HEAD, _BODY = "head", "body"


class _Refused(Exception):
    """Raised in a parser callback for a head h11 would refuse; httptools
    re-raises it from ``feed_data`` as the context of its callback error."""


class HttptoolsEndpointProtocol(ReadDeadline, HttpToolsProtocol):
    """uvicorn's httptools protocol with a read deadline, a bound on the head
    and AWS-shaped 400s."""

    #: Bytes of request target, header names and values a head may carry.
    max_head_bytes: int = 32 * 1024
    #: What the parser is reading: a head, a body, or nothing (the request is whole).
    _reading: str | None = _HEAD
    _head_bytes = 0
    #: A request's (cycle, app) whose body is still arriving: started when it is whole.
    _pending: tuple[Any, Any] | None = None
    #: The connection's answers, written in order (see _OneWrite).
    _out: _OneWrite
    #: The Endpoint whose whole POST requests are answered without an ASGI
    #: cycle (the same answer, written here); None serves all through ASGI.
    endpoint: Endpoint | None = None

    # -- the read deadline ------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        #: Every answer of the connection is written through it, in order.
        self._out = _OneWrite(transport, self.loop)
        self._track()

    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # uvicorn's own handling: the endpoint serves no websocket, so
            # this warns and the request is answered as HTTP/1.1.
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except httptools.HttpParserError:
            self.send_400_response("Invalid HTTP request received.")
            return
        self._track()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._reading = _HEAD
        self._head_bytes = 0

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        # uvicorn's own, inline (it runs for every header of every request).
        self._head_bytes += len(name) + len(value)
        if self._head_bytes > self.max_head_bytes:
            self._count(0)
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.parser.get_http_version() == "1.1" and not any(
            name == b"host" for name, _ in self.headers
        ):
            raise _Refused("HTTP/1.1 requests must have a Host header")
        if not self.url.isascii():
            raise _Refused("the request target is not ASCII")
        self._reading = _BODY
        super().on_headers_complete()

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        # The cycle writes through a transport that sends a response's head
        # and body in one write (one send(2) instead of two).
        cycle.transport = self._out
        if self._reading is _BODY and not cycle.waiting_for_100_continue:
            # The application starts once the body is whole (or too large to
            # hold), so a request whose head and body arrive apart (botocore
            # writes them in two sends) runs in one step, not two; a request
            # whose body never arrives whole never runs at all.
            self._pending = (cycle, app)
            return
        self._run(cycle, app)

    def _in_task(self, cycle: Any, app: Any) -> None:
        cycle.transport = self._out
        super()._start_asgi_task(cycle, app)

    def _run(self, cycle: Any, app: Any) -> None:
        if self._reading is not None:  # its body streams in as the application reads it
            super()._start_asgi_task(cycle, app)
            return
        # A whole request runs at once, in this callback: a task is made only
        # for one that waits (a long poll), see sqsqueue.server._eager.
        answering = self._answering(cycle, app)
        task = start_eagerly(self.loop, answering or cycle.run_asgi(app))
        if task is not None:
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

    # -- SQS requests answered without an ASGI cycle ----------------------------------

    def _answering(self, cycle: Any, app: Any) -> Coroutine[Any, Any, None] | None:
        """The coroutine answering a whole SQS request straight from the
        Endpoint (:meth:`Endpoint.answer_whole`), or None for one the ASGI
        cycle serves: a console path, a method other than POST, an
        application uvicorn swapped in (its 503 past ``limit_concurrency``),
        or a connection whose answers are not being read (the cycle's send
        waits for the client to catch up)."""
        endpoint = self.endpoint
        if (
            endpoint is None
            or app is not self.app
            or cycle.scope["method"] != "POST"
            or self.flow.write_paused
        ):
            return None
        answering = endpoint.answer_whole(cycle.scope, bytes(cycle.body))
        return None if answering is None else self._answer(cycle, answering)

    async def _answer(self, cycle: Any, answering: Coroutine[Any, Any, Answer | None]) -> None:
        try:
            answer = await answering
        except BaseException:
            # The Endpoint answers its own errors; this is a cancelled long
            # poll or an interpreter exit: no answer, the connection closes.
            if not cycle.response_complete:
                self.transport.close()
            raise
        if answer is not None:
            self._write_answer(cycle, *answer)

    def _write_answer(self, cycle: Any, status: int, headers: dict[str, str], body: bytes) -> None:
        """Write one answer as uvicorn's cycle writes an ASGI application's
        (its default headers first, names in lower case, ``connection: close``
        when the connection does not stay open), in one write; then what
        uvicorn does when a response completes. O(headers + body)."""
        if cycle.disconnected:  # the client left during a long poll
            return
        defaults = self.server_state.default_headers  # a new list each second (the date)
        cached = _DEFAULTS[0]  # one read: another server's thread may replace it
        if cached[0] is not defaults:
            cached = _DEFAULTS[0] = (defaults, b"".join(b"%s: %s\r\n" % h for h in defaults))
        lines = "".join([f"{_name(key)}: {text}\r\n" for key, text in headers.items()])
        head = b"%s%s%scontent-length: %d\r\n%s\r\n" % (
            STATUS_LINE[status],
            cached[1],
            lines.encode("latin-1"),
            len(body),
            b"" if cycle.keep_alive else b"connection: close\r\n",
        )
        cycle.response_started = cycle.response_complete = True
        out = self._out
        out.write(head + body)
        if not cycle.keep_alive:
            out.close()
        elif len(self.connections) == 1:
            # Held to the end of the loop's step only where other connections'
            # answers may leave with it; a lone connection's leaves at once
            # (after what it holds of earlier answers, in order).
            out.flush()
        self.on_response_complete()

    def _start_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            self._run(*pending)

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        if self._pending is not None and len(self.cycle.body) > HIGH_WATER_LIMIT:
            self._start_pending()  # it reads the rest as it arrives (uvicorn's flow control)

    def on_message_complete(self) -> None:
        self._reading = None
        # The request is whole: its read deadline ends here, so that the next
        # head's starts afresh even when this one is answered within this
        # callback (no _track in between).
        self._arm(None)
        super().on_message_complete()
        self._start_pending()

    def on_response_complete(self) -> None:
        """uvicorn's own, but no keep-alive timer is armed: the read deadline
        of the next head closes an idle connection."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:
            # A request pipelined behind one that waited: in a task, as uvicorn
            # starts it (run at once here, a chain of them would nest).
            cycle, app = self.pipeline.pop()
            self._in_task(cycle, app)
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _count(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > self.max_head_bytes:
            raise _Refused(f"the request's head is larger than {self.max_head_bytes} bytes")

    def _track(self) -> None:
        """Arm the deadline when a phase starts (waiting for a head, reading a
        body), keep it while the phase lasts, drop it once the request is whole
        and while it is served."""
        if self.transport is None or self.transport.is_closing():
            self._disarm()
            return
        if self._reading is _BODY:
            phase: str | None = _BODY
        elif self.cycle is not None and not self.cycle.response_complete:
            phase = None  # a whole request being served (a pipelined head waits too)
        else:
            phase = _HEAD
        self._arm(phase)

    def shutdown(self) -> None:
        if self._reading is _BODY:
            self._disarm()
            self._out.close()  # earlier answers still held leave first
            return
        self._out.flush()  # uvicorn may close the transport itself
        super().shutdown()

    # -- bytes the parser refuses -------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """Answer AWS's InvalidHttpRequest in the request's protocol, then close."""
        self._disarm()
        refused = sys.exc_info()[1]
        if refused is not None and isinstance(refused.__context__, _Refused):
            refused = refused.__context__
        reason = str(refused) if refused is not None else ""
        if self.cycle is None or not self.cycle.response_started or self.cycle.response_complete:
            status, headers, body = refusal(reason or msg.rstrip("."), self._json_request())
            head = [STATUS_LINE[status]]
            head.extend(f"{k}: {v}\r\n".encode("latin-1") for k, v in headers.items())
            self._out.flush()  # earlier answers still held leave first
            self.transport.write(b"".join(head) + b"\r\n" + body)
        # else an answer was already under way: the connection just closes
        self.transport.close()

    def _json_request(self) -> bool:
        """Whether the request being read had a parsed head naming X-Amz-Target."""
        if self._reading is not _BODY or self.headers is None:
            return False
        return any(name == b"x-amz-target" for name, _ in self.headers)


#: uvicorn's default headers (the date, changed each second) and their bytes.
_DEFAULTS: list[tuple[Any, bytes]] = [(None, b"")]
#: Answer header names in lower case, as uvicorn writes them.
_NAMES: dict[str, str] = {}


def _name(key: str) -> str:
    found = _NAMES.get(key)
    if found is None:
        if len(_NAMES) > 64:  # the Endpoint's answers name a handful
            _NAMES.clear()
        found = _NAMES[key] = key.lower()
    return found


class _OneWrite:
    """The transport as a connection's answers see it (one per connection, so
    they leave in the order written): what is written in one step of the
    event loop (an answer's head, then its body) leaves in one write at the
    end of that step, at once on ``flush``, or when the connection closes.
    A send on loopback costs as much as a small request's parsing: two of
    them per answer were a tenth of a request's time."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(data)

    def flush(self) -> None:
        if self._held:
            data = b"".join(self._held) if len(self._held) > 1 else self._held[0]
            self._held.clear()
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)


def protocol_class(
    read_timeout: float, max_head_bytes: int, endpoint: Endpoint | None = None
) -> type[HttptoolsEndpointProtocol]:
    """:class:`HttptoolsEndpointProtocol` with its read deadline, head bound
    and Endpoint set (uvicorn makes one instance per connection from the
    class it is given)."""
    return type(
        "HttptoolsEndpointProtocol",
        (HttptoolsEndpointProtocol,),
        {
            "read_timeout": float(read_timeout),
            "max_head_bytes": int(max_head_bytes),
            "endpoint": endpoint,
        },
    )
