"""An SQS endpoint over HTTP: every SQS client reaches a :class:`~sqsqueue.Broker`.

``python -m sqsqueue serve`` (or ``sqsqueue serve``, :mod:`._cli`), :meth:`Broker.serve
<sqsqueue.Broker.serve>` and the ``sqsqueue_endpoint_url`` pytest fixture all serve
:class:`Endpoint`, an ASGI application, with uvicorn (extra
``sqsqueue[server]``, :mod:`._run`). The application is a transport and nothing more: it
reads a request, hands the bytes to a protocol codec and the codec's
operation to the broker's :class:`~sqsqueue.aws._client.Client`, and writes the
answer back. No SQS rule lives here.

* **Protocols.** AWS JSON 1.0 (``X-Amz-Target: AmazonSQS.<Action>``, what
  current SDKs speak; codec :mod:`sqsqueue.aws._wire`) and the query protocol
  (form-encoded ``Action=...``, XML answers; codec :mod:`sqsqueue.aws._query`)
  on ``/`` and on queue URLs (``POST /<account>/<queue>``, GET too). Each bad
  request gets AWS's 4xx error in its own protocol; a bug answers 500
  ``InternalError`` and is logged with its traceback, which never reaches the
  client.
* **Queue URLs** point at the endpoint (``http://<Host header>/<account>/<name>``)
  and are accepted back, as are AWS-style ones.
* **Long polls** await ``Queue.receive_async``: a waiting ReceiveMessage costs a
  suspended task and its connection (about 18 KiB of RSS, measured with 1,000
  held: ``benchmarks/RESULTS.md``), never a thread, and never delays other
  requests. Closing the endpoint answers open polls
  with an empty ReceiveMessage at once.
* **Security.** Binds 127.0.0.1 by default. ``credentials`` turns on AWS
  Signature V4 verification (:mod:`sqsqueue.aws._sigv4`, botocore's
  signature computed directly); the verified key's account is the caller the
  queue policy checks.
  A non-loopback address is refused without credentials unless
  ``allow_anonymous``. Request bodies, header bytes and header counts are
  bounded. A request's head must arrive within ``idle_timeout`` seconds of
  the connection opening (or of the previous answer), and its body within
  ``idle_timeout`` more, or the connection is closed and the request
  abandoned (:mod:`sqsqueue.server._httptools` where httptools is
  installed, :mod:`sqsqueue.server._http` on h11 otherwise); a request whose
  body never arrives whole is never run. Bytes that are not HTTP get AWS's 400
  ``InvalidHttpRequest`` in the request's protocol.

* **Two ways in, one answer.** The ASGI call (``__call__``) serves every
  request under h11 and, under httptools, the console's paths and what is
  not a POST; a whole SQS POST on httptools is answered through
  :meth:`Endpoint.answer_whole`, with no ASGI messages, and the protocol
  writes the answer (:mod:`sqsqueue.server._httptools`). Both run
  ``_respond``, which gives (status, headers, body).

Cost: each request costs its operation's cost plus parsing (linear in the
body), a few µs of glue around a SendMessage (``benchmarks/RESULTS.md``,
"Over HTTP: sqsqueue's endpoint against the floor"); the server runs every
operation on its event loop thread (none but a long poll waits, and a long
poll never blocks the loop).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping, Sequence
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qsl

from sqsqueue.aws import _errors, _query, _wire
from sqsqueue.aws._client import BrokerAPI, Client
from sqsqueue.console import Console, handles
from sqsqueue.console._asgi import respond
from sqsqueue.errors import SQSError
from sqsqueue.server._credentials import Credentials, check_credentials
from sqsqueue.server._eager import continue_in_task, in_task

__all__ = [
    "DEFAULT_PORT",
    "MAX_HEADERS",
    "MAX_HEADER_BYTES",
    "AccountsAPI",
    "Endpoint",
    "caller_scope",
    "credential_of",
    "is_loopback",
]

logger = logging.getLogger("sqsqueue.server")
#: One INFO line per request (action, queue, status, duration); off unless configured.
access_log = logging.getLogger("sqsqueue.access")

#: ElasticMQ's port, which SQS tooling already knows.
DEFAULT_PORT = 9324
#: More headers than any SDK sends (botocore sends about 10) are refused.
MAX_HEADERS = 64
#: Bytes of header names and values together, checked by the Endpoint. h11
#: buffers at most twice that of a head arriving in pieces (request line and
#: syntax included), so a head somewhat over the bound still gets the
#: Endpoint's answer in its own protocol, and a larger one InvalidHttpRequest.
MAX_HEADER_BYTES = 16 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: An answer: HTTP status, headers (latin-1 text, no Content-Length), body.
Answer = tuple[int, dict[str, str], bytes]

_RECEIVE_TARGET = _wire.TARGET_PREFIX + "ReceiveMessage"
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")


class AccountsAPI(Protocol):
    """What the endpoint needs of every account and region it serves
    (:class:`sqsqueue.server._accounts.Accounts`, typed by this protocol so
    that this module, which ``Broker.serve()`` imports, never imports the
    engine's broker)."""

    @property
    def default(self) -> BrokerAPI: ...
    def acting(self, account: str, region: str) -> tuple[BrokerAPI, str | None]: ...
    def broker_for(self, account: str, region: str) -> BrokerAPI: ...
    def anonymous(self, authorization: str | None) -> tuple[BrokerAPI, str | None, str]: ...


#: ``Credential=<key>/<date>/<region>/<service>/aws4_request`` in an Authorization header.
_CREDENTIAL = "Credential="


def credential_of(authorization: str | None) -> str:
    """The ``Credential=`` text of a Signature V4 Authorization header
    (``<key>/<date>/<region>/<service>/aws4_request``), "" without one. A
    client sends the same text with every request of a day. O(len(header))."""
    if not authorization:
        return ""
    start = authorization.find(_CREDENTIAL)
    if start < 0:
        return ""
    start += len(_CREDENTIAL)
    end = authorization.find(",", start)
    return authorization[start : end if end >= 0 else None]


def caller_scope(authorization: str | None) -> tuple[str, str] | None:
    """(access key id, region) of a Signature V4 Authorization header's
    credential scope; None for a request that carries none (or a malformed
    one: the request then acts in the defaults). O(len(header))."""
    credential = credential_of(authorization)
    if not credential:
        return None
    # A client signs every request of a day with the same credential: read once.
    found = _SCOPES.get(credential, _UNREAD)
    if found is _UNREAD:
        parts = credential.strip().split("/")
        found = None
        if len(parts) == 5 and parts[0] and _SCOPE_REGION.fullmatch(parts[2]):
            found = (parts[0], parts[2])
        if len(_SCOPES) >= 1024:
            _SCOPES.clear()  # bounded: any client may send any credential
        _SCOPES[credential] = found
    return found  # type: ignore[return-value]


#: A region name in a credential scope.
_SCOPE_REGION = re.compile(r"[a-z0-9-]{1,32}")
#: Credential scopes read (:func:`caller_scope`), by their text.
_SCOPES: dict[str, tuple[str, str] | None] = {}
_UNREAD = object()


class _RequestTooLarge(Exception):
    pass


class _Abandoned(Exception):
    """The request's body never arrived whole: the client went away (or was cut
    off at its read deadline) first. Nothing runs and nothing is answered: a
    truncated form is still a well-formed form, and running it would store a
    truncated message."""


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


#: What a ReceiveMessage's coroutine gives: a response dict or the messages.
T = TypeVar("T")


class Endpoint:
    """The ASGI application serving one broker (see the module docstring).

    ``credentials`` maps access key ids to secrets (the key acts as the
    broker's own account) or to ``(secret, account_id)`` pairs (the key acts as
    that account, which the queue's policy must then allow). Without them
    requests are not authenticated and act as the broker's account.
    """

    def __init__(
        self,
        broker: BrokerAPI,
        *,
        credentials: Credentials | None = None,
        max_request_bytes: int = _wire.MAX_REQUEST_BYTES,
        max_headers: int = MAX_HEADERS,
        max_header_bytes: int = MAX_HEADER_BYTES,
        accounts: AccountsAPI | None = None,
    ) -> None:
        self.broker = broker
        #: Every account and region (``sqsqueue serve``, :mod:`._accounts`);
        #: None serves ``broker`` alone, as ``Broker.serve()`` does.
        self.accounts = accounts
        self.credentials: dict[str, tuple[str, str]] | None = None
        if credentials is not None:
            self.credentials = check_credentials(
                credentials, broker.account_id, key_accounts=accounts is not None
            )
        self.max_request_bytes = max_request_bytes
        self.max_headers = max_headers
        self.max_header_bytes = max_header_bytes
        self.default_endpoint_url = "http://127.0.0.1"
        self._polls: set[asyncio.Task[Any]] = set()
        self._closing = False
        #: The operational paths (``sqsqueue.console``): health, the peek,
        #: /metrics, the web console. Set by ``serve``; None serves SQS alone.
        self.console: Console | None = None
        self._host_url = ("", self.default_endpoint_url)  # the last Host header's URL

    # -- lifecycle ------------------------------------------------------------------

    def close_polls(self) -> None:
        """Answer every open long poll now (empty), and any later one at once.
        Call on the server's event loop. O(open polls)."""
        self._closing = True
        for task in list(self._polls):
            task.cancel()

    # -- ASGI -----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await _lifespan(receive, send)
            return  # websockets are refused by the server itself
        # The one dispatch point before SQS: the operational paths (health, the
        # peek, /metrics, the web console) go to sqsqueue.console with this
        # scope, receive and send; everything below is the SQS endpoint.
        if self.console is not None and handles(scope["path"]):
            await self.console(scope, receive, send)
            return
        await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one SQS request (either protocol), errors included."""
        answer = await self._respond(scope, receive, None)
        if answer is not None:
            await respond(send, *answer)

    def answer_whole(self, scope: Scope, body: bytes) -> Coroutine[Any, Any, Answer | None] | None:
        """For a server holding a request's whole body: the coroutine answering
        it, or None for a path the ASGI call serves (the console's). What the
        ASGI call would answer, without its messages: the httptools protocol
        writes the answer itself (:mod:`sqsqueue.server._httptools`)."""
        if self.console is not None and handles(scope["path"]):
            return None
        return self._respond(scope, None, body)

    async def _respond(
        self, scope: Scope, receive: Receive | None, whole: bytes | None
    ) -> Answer | None:
        """(status, headers, body) of one SQS request, errors included; None
        for a request abandoned before its body arrived whole. The body is
        ``whole``, or read from ``receive``."""
        logged = access_log.isEnabledFor(logging.INFO)
        started = time.perf_counter() if logged else 0.0
        request_id = _wire.new_request_id()
        json_protocol = False
        # (operation, params) once decoded, for the access log; empty when it is off.
        call: list[Any] = ["-", {}] if logged else []
        try:
            raw_headers: Sequence[tuple[bytes, bytes]] = scope["headers"]
            headers: dict[str, str] = {}
            header_bytes = 0
            for name, value in raw_headers:
                header_bytes += len(name) + len(value)
                key = name.decode("latin-1").lower()
                text = value.decode("latin-1")
                headers[key] = f"{headers[key]},{text}" if key in headers else text
            json_protocol = "x-amz-target" in headers or headers.get("content-type", "").startswith(
                "application/x-amz-json"
            )
            if len(raw_headers) > self.max_headers:
                raise _errors.InvalidRequest(
                    f"The request has {len(raw_headers)} headers; at most "
                    f"{self.max_headers} are accepted."
                )
            # The parsers bound a head that arrives in pieces; one read can carry more.
            if header_bytes > self.max_header_bytes:
                raise _errors.InvalidRequest(
                    f"The request's headers are {header_bytes} bytes; at most "
                    f"{self.max_header_bytes} are accepted."
                )
            if whole is None:
                assert receive is not None
                body = await self._body(receive, headers)
            elif len(whole) > self.max_request_bytes:
                raise _RequestTooLarge
            else:
                body = whole
            status, out_headers, payload = await self._answer(
                scope, headers, body, json_protocol, request_id, call
            )
        except _Abandoned:
            return None
        except _RequestTooLarge:
            err: SQSError = _errors.RequestTooLarge(
                f"The request body is larger than {self.max_request_bytes} bytes."
            )
            status, out_headers, payload = self._error(err, json_protocol, request_id)
        except SQSError as exc:
            status, out_headers, payload = self._error(exc, json_protocol, request_id)
        except Exception as exc:
            logger.exception("internal error on %s %s", scope.get("method"), scope.get("path"))
            internal = _wire.internal_error(exc)
            status, out_headers, payload = self._error(internal, json_protocol, request_id)
        if logged:
            operation, params = call
            queue = params.get("QueueUrl") or params.get("QueueName") or "-"
            access_log.info(
                "%s queue=%s status=%d duration_ms=%.2f",
                operation,
                queue,
                status,
                (time.perf_counter() - started) * 1000,
            )
        return status, out_headers, payload

    async def _body(self, receive: Receive, headers: Mapping[str, str]) -> bytes:
        """The whole body; raises :class:`_Abandoned` if the client disconnects
        first or fewer bytes than its Content-Length arrived."""
        declared = headers.get("content-length")
        expected = int(declared) if declared is not None and declared.isdigit() else None
        if expected is not None and expected > self.max_request_bytes:
            raise _RequestTooLarge
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Abandoned
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_request_bytes:
                raise _RequestTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        if expected is not None and size != expected:
            raise _Abandoned
        return b"".join(chunks)

    def _error(self, err: SQSError, json_protocol: bool, request_id: str) -> Answer:
        if json_protocol:
            return _wire.encode_error(err, request_id)
        return _query.encode_error(err, request_id)

    def _endpoint_url(self, headers: Mapping[str, str]) -> str:
        host = headers.get("host", "")
        last, url = self._host_url
        if host == last and host:  # clients send the same Host on every request
            return url
        if _HOST.fullmatch(host):
            self._host_url = (host, f"http://{host}")
            return f"http://{host}"
        return self.default_endpoint_url

    async def _answer(
        self,
        scope: Scope,
        headers: Mapping[str, str],
        body: bytes,
        json_protocol: bool,
        request_id: str,
        call: list[Any],
    ) -> Answer:
        method = scope.get("method", "")
        endpoint_url = self._endpoint_url(headers)
        principal = None
        accounts = self.accounts
        region = self.broker.region
        if self.credentials is not None:
            if accounts is not None:
                # The request's region is its signature's scope (any region is served).
                signed = caller_scope(headers.get("authorization"))
                if signed is not None:
                    region = signed[1]
            # Lazy: _sigv4 needs botocore, which an anonymous endpoint never loads.
            from sqsqueue.aws import _sigv4

            query = scope.get("query_string", b"").decode("latin-1")
            path = scope.get("raw_path") or scope.get("path", "/").encode()
            url = f"{endpoint_url}{path.decode('latin-1')}" + (f"?{query}" if query else "")
            principal = _sigv4.verify(self.credentials, method, url, scope["headers"], body, region)
        if accounts is None:
            client = Client(self.broker, principal=principal, endpoint_url=endpoint_url)
        elif principal is None:
            caller, principal, region = accounts.anonymous(headers.get("authorization"))
            client = Client(
                caller,
                principal=principal,
                endpoint_url=endpoint_url,
                default_region=accounts.default.region,
            )
        else:
            client = self._client_of(accounts, principal, region, endpoint_url)
        if json_protocol:
            if method != "POST":
                raise _errors.InvalidRequest(f"The JSON protocol takes POST, not {method}.")
            target = headers.get("x-amz-target")
            if not call:  # the access log needs the params: it takes the general path
                # The hot operations of the usual shape: the engine called and
                # the answer written without a response dict.
                if target == _RECEIVE_TARGET:
                    # Written from the delivered records, no Message views. A
                    # stopping endpoint takes the general path, which does not wait.
                    receiving = None if self._closing else _wire.receive_short(client, body)
                    if receiving is not None:
                        return _wire.ok(
                            await self._receive(receiving, _wire.NO_MESSAGES), request_id
                        )
                else:
                    payload = _wire.answer_short(target, client, body, headers)
                    if payload is not None:
                        return _wire.ok(payload, request_id)
            operation, params = _wire.decode(target, body, headers)
            if call:
                call[:] = operation, params
            if operation == "ReceiveMessage":
                # The answer written from the engine's messages: no response dict.
                if self._closing:
                    params = {**params, "WaitTimeSeconds": 0}
                messages = await self._receive(client.receive_messages_async(**params), [])
                return _wire.encode_received(messages, request_id)
            result = await self._call(client, operation, params)
            return _wire.encode(result, request_id)
        if method not in ("POST", "GET"):
            raise _errors.InvalidRequest(f"The query protocol takes POST or GET, not {method}.")
        form = _form(scope.get("query_string", b""))
        if method == "POST" and body:
            form += _form(body)
        operation, params = _query.decode(form, scope.get("path", "/"), endpoint_url, method)
        _wire.add_trace_header(operation, params, headers)
        if call:
            call[:] = operation, params
        result = await self._call(client, operation, params)
        accept = headers.get("accept", "").split(",")[0].split(";")[0].strip().lower()
        if accept == "application/json":  # what API Gateway's SQS integrations ask for
            return _query.encode_json(operation, result, request_id)
        return _query.encode(operation, result, request_id)

    def _client_of(
        self,
        accounts: AccountsAPI,
        account: str,
        region: str,
        endpoint_url: str,
    ) -> Client:
        """The client of a signed request (``account`` is the verified key's)
        to an endpoint serving every account and region (:mod:`._accounts`;
        an anonymous request's is ``Accounts.anonymous``). O(1)."""
        caller, principal = accounts.acting(account, region)
        return Client(
            caller,
            principal=principal,
            endpoint_url=endpoint_url,
            default_region=accounts.default.region,
        )

    async def _call(self, client: Client, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation != "ReceiveMessage":
            return client.call(operation, params)
        if self._closing:
            params = {**params, "WaitTimeSeconds": 0}
        return await self._receive(client.call_async(operation, params), {})

    async def _receive(self, receive: Coroutine[Any, Any, T], closed: T) -> T:
        """Await a ReceiveMessage's coroutine; a long poll still waiting when the
        endpoint stops is answered with ``closed`` (no messages)."""
        task = asyncio.current_task()
        if task is None:
            # Started eagerly, outside a task (server._eager): a receive that
            # finds messages, or need not wait, is answered in this step; one
            # that waits goes on in the task made for it.
            try:
                waiting_on = receive.send(None)
            except StopIteration as done:
                answer: T = done.value
                return answer
            task = await in_task()
            receive = continue_in_task(receive, waiting_on)
            if self._closing:
                task.cancel()  # the endpoint began to stop before the poll's task ran
        self._polls.add(task)
        try:
            return await receive
        except asyncio.CancelledError:
            if not self._closing:
                raise
            # The endpoint is stopping: answer the poll as its deadline would
            # (no messages; none was taken, the engine takes them without awaiting).
            task.uncancel()
            return closed
        finally:
            self._polls.discard(task)


#: A ``%`` that does not start a two-digit hex escape.
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _form(raw: bytes) -> list[tuple[str, str]]:
    """The pairs of a query string or form body, decoded strictly: a malformed
    ``%`` escape or bytes that are not UTF-8 (raw or escaped) raise AWS's
    MalformedQueryString rather than reaching a queue as U+FFFD."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _errors.MalformedQueryString("The request is not UTF-8 form data.") from None
    bad = _BAD_ESCAPE.search(text)
    if bad is not None:
        raise _errors.MalformedQueryString(
            f"The query string has a malformed escape at character {bad.start()}: "
            "% must be followed by two hexadecimal digits."
        )
    try:
        return parse_qsl(
            text,
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=10_000,
            errors="strict",
        )
    except UnicodeDecodeError:
        raise _errors.MalformedQueryString(
            "The query string has percent-escapes that are not UTF-8."
        ) from None
    except ValueError:
        raise _errors.MalformedQueryString("The request has too many parameters.") from None


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
