"""The endpoint's HTTP/1.1 connections: uvicorn's h11 protocol, with a read
deadline and AWS-shaped answers to bytes that are not HTTP.

uvicorn bounds how long an idle keep-alive connection lives only once a
response has been sent, and answers bytes h11 refuses with a plain-text
``Invalid HTTP request received.``. :class:`EndpointProtocol` changes three
things and nothing else:

* **Read deadline.** A request's head must arrive whole within
  ``read_timeout`` seconds of the connection opening (or of the previous
  answer on a keep-alive connection), and its body within ``read_timeout``
  more. The deadline counts from the start of each phase, not from the last
  byte, so a client trickling a byte at a time is cut off too. A connection
  past its deadline is closed without an answer; a request whose body was cut
  off this way is abandoned by the application (nothing runs). The deadline
  does not run while a complete request is being served, so a 20-second long
  poll is never cut short.
* **Refused bytes** (a bad chunk size, a malformed Content-Length, a TLS
  ClientHello, a garbage request line, HTTP/1.1 without Host, header sections
  over the bound) get AWS's 400 ``InvalidHttpRequest`` (SQS API Reference,
  Common Errors: ``Invalid HTTP request. Reason: <reason>.``) in the request's
  protocol: JSON when a parsed head named an ``X-Amz-Target``, else the query
  protocol's XML ``ErrorResponse`` (the protocol cannot be known), then the
  connection closes.
* **Shutdown** closes a connection whose request body is still being read,
  so that request is abandoned at once instead of being cancelled after the
  grace period (which uvicorn logs as a CancelledError traceback).

Cost: one timer per connection, re-armed at most twice per request.
"""

from __future__ import annotations

import asyncio
import sys

import h11
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol

from sqsqueue.aws import _errors, _query, _wire

__all__ = ["EndpointProtocol", "ReadDeadline", "protocol_class", "refusal"]


#: How early asyncio may run a timer (its clock's resolution, rounded up).
_EARLY = 1e-3


class ReadDeadline:
    """The read deadline both shipped protocols keep (this module's h11 one and
    :mod:`._httptools`'s): each phase of a request (its head, its body) must end
    within ``read_timeout`` seconds of its start, or the connection is closed. A
    protocol calls :meth:`_arm` with the phase it is in (None once the request
    is whole) after every event; it provides ``loop`` and ``transport``, as
    uvicorn's protocols do.

    One timer per connection, armed lazily: a phase's start only notes its
    deadline, and the timer, when it fires, closes the connection if the phase
    it finds has passed its own deadline, else sleeps until that deadline. So a
    request costs two clock reads, not a timer armed and cancelled per phase,
    and the timer wakes at most once per ``read_timeout`` on a busy connection."""

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    #: Seconds a request's head, then its body, may take to arrive.
    read_timeout: float = 30.0
    _deadline: asyncio.TimerHandle | None = None  # the connection's one timer
    _phase: object = None  # the phase being read, None while none is
    _phase_ends = 0.0  # loop time by which the phase must end

    def _arm(self, phase: object) -> None:
        """Keep the deadline of ``phase`` (a new phase starts a new one);
        None means no phase is being read. O(1)."""
        if phase is None:
            self._phase = None
        elif self._phase is not phase:
            self._phase = phase
            self._phase_ends = self.loop.time() + self.read_timeout
            if self._deadline is None:
                self._deadline = self.loop.call_at(self._phase_ends, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._phase = None

    def _expire(self) -> None:
        self._deadline = None
        if self._phase is None:
            return  # no phase read now: the next one arms the timer again
        ends = self._phase_ends
        if self.loop.time() < ends - _EARLY:
            self._deadline = self.loop.call_at(ends, self._expire)  # a later phase's deadline
            return
        self._phase = None
        if not self.transport.is_closing():
            self.transport.close()  # an unread body reaches the application as a disconnect


class EndpointProtocol(ReadDeadline, H11Protocol):
    """uvicorn's h11 protocol with a read deadline and AWS-shaped 400s."""

    # -- the read deadline ------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._track()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _track(self) -> None:
        """Arm the deadline when a phase starts (waiting for a head, reading a
        body), keep it while the phase lasts, drop it once the request is whole."""
        if self.transport is None or self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        self._arm(state if state is h11.IDLE or state is h11.SEND_BODY else None)

    def shutdown(self) -> None:
        if self.conn.their_state is h11.SEND_BODY:
            self._disarm()
            self.transport.close()
            return
        super().shutdown()

    # -- bytes h11 refuses --------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """Answer AWS's InvalidHttpRequest in the request's protocol, then close.
        Called by uvicorn inside its ``except h11.RemoteProtocolError``."""
        self._disarm()
        refused = sys.exc_info()[1]
        # h11's reason, without the refused bytes it may quote.
        reason = str(refused).split(": bytearray(")[0] if refused is not None else ""
        status, headers, body = refusal(reason or msg.rstrip("."), self._json_request())
        try:
            response = h11.Response(
                status_code=status,
                headers=[(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
                reason=STATUS_PHRASES[status],
            )
            for event in (response, h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event) or b"")
        except h11.LocalProtocolError:
            pass  # an answer was already under way: the connection just closes
        self.transport.close()

    def _json_request(self) -> bool:
        """Whether the request being read had a parsed head naming X-Amz-Target."""
        if self.cycle is None or self.cycle.response_complete or self.headers is None:
            return False
        return any(name == b"x-amz-target" for name, _ in self.headers)


def refusal(reason: str, json_request: bool) -> tuple[int, dict[str, str], bytes]:
    """AWS's 400 InvalidHttpRequest for bytes the parser refused, in the
    request's protocol, with the headers that close the connection."""
    err = _errors.InvalidHttpRequest(f"Invalid HTTP request. Reason: {reason[:200]}.")
    request_id = _wire.new_request_id()
    if json_request:
        status, headers, body = _wire.encode_error(err, request_id)
    else:
        status, headers, body = _query.encode_error(err, request_id)
    headers["Content-Length"] = str(len(body))
    headers["Connection"] = "close"
    return status, headers, body


def protocol_class(read_timeout: float) -> type[EndpointProtocol]:
    """:class:`EndpointProtocol` with its read deadline set (uvicorn makes one
    instance per connection from the class it is given)."""
    return type("EndpointProtocol", (EndpointProtocol,), {"read_timeout": float(read_timeout)})
