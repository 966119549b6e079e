"""An SQS endpoint over HTTP: every SQS client reaches a :class:`~sqsqueue.Broker`.

``python -m sqsqueue serve`` (or ``sqsqueue serve``), :meth:`Broker.serve
<sqsqueue.Broker.serve>` and the ``sqs_endpoint_url`` pytest fixture all serve
:class:`Endpoint`, an ASGI application, with uvicorn (extra
``sqsqueue[server]``). The application is a transport and nothing more: it
reads a request, hands the bytes to a protocol codec and the codec's
operation to the broker's :class:`~sqsqueue._client.Client`, and writes the
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
  Signature V4 verification (:mod:`sqsqueue.aws._sigv4`, on botocore's
  signer); the verified key's account is the caller the queue policy checks.
  A non-loopback address is refused without credentials unless
  ``allow_anonymous``. Request bodies, header bytes and header counts are
  bounded. A request's head must arrive within ``idle_timeout`` seconds of
  the connection opening (or of the previous answer), and its body within
  ``idle_timeout`` more, or the connection is closed and the request
  abandoned (:mod:`sqsqueue.aws._http`); a request whose body never arrives
  whole is never run. Bytes that are not HTTP get AWS's 400
  ``InvalidHttpRequest`` in the request's protocol.

Cost: each request costs its operation's cost plus parsing (linear in the
body); the server runs every operation on its event loop thread (none but a
long poll waits, and a long poll never blocks the loop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import logging
import math
import re
import signal
import socket
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl

from sqsqueue._broker import Broker
from sqsqueue._client import Client
from sqsqueue._ports import ServedEndpoint
from sqsqueue.aws import _errors, _query, _wire
from sqsqueue.errors import SQSError

__all__ = [
    "DEFAULT_PORT",
    "Endpoint",
    "EndpointHandle",
    "load_credentials",
    "main",
    "serve",
]

logger = logging.getLogger("sqsqueue.server")

#: ElasticMQ's port, which SQS tooling already knows.
DEFAULT_PORT = 9324
#: More headers than any SDK sends (botocore sends about 10) are refused.
MAX_HEADERS = 64
#: Bytes of header names and values together, checked by the Endpoint. h11
#: buffers at most twice that of a head arriving in pieces (request line and
#: syntax included), so a head somewhat over the bound still gets the
#: Endpoint's answer in its own protocol, and a larger one InvalidHttpRequest.
MAX_HEADER_BYTES = 16 * 1024
#: Seconds a connection may take to send a request's head (or stay idle between
#: requests), then as long again for its body (sqsqueue.aws._http).
IDLE_TIMEOUT = 30
#: Seconds open requests are given to finish when the server stops.
SHUTDOWN_GRACE = 3

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Credentials = Mapping[str, "str | tuple[str, str]"]

_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")


class _RequestTooLarge(Exception):
    pass


class _Abandoned(Exception):
    """The request's body never arrived whole: the client went away (or was cut
    off at its read deadline) first. Nothing runs and nothing is answered: a
    truncated form is still a well-formed form, and running it would store a
    truncated message."""


def _is_loopback(host: str) -> bool:
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


class Endpoint:
    """The ASGI application serving one broker (see the module docstring).

    ``credentials`` maps access key ids to secrets (the key acts as the
    broker's own account) or to ``(secret, account_id)`` pairs (the key acts as
    that account, which the queue's policy must then allow). Without them
    requests are not authenticated and act as the broker's account.
    """

    def __init__(
        self,
        broker: Broker[Any],
        *,
        credentials: Credentials | None = None,
        max_request_bytes: int = _wire.MAX_REQUEST_BYTES,
        max_headers: int = MAX_HEADERS,
        max_header_bytes: int = MAX_HEADER_BYTES,
    ) -> None:
        self.broker = broker
        self.credentials: dict[str, tuple[str, str]] | None = None
        if credentials is not None:
            self.credentials = _check_credentials(credentials, broker.account_id)
        self.max_request_bytes = max_request_bytes
        self.max_headers = max_headers
        self.max_header_bytes = max_header_bytes
        self.default_endpoint_url = "http://127.0.0.1"
        self._polls: set[asyncio.Task[Any]] = set()
        self._closing = False

    # -- lifecycle ------------------------------------------------------------------

    def close_polls(self) -> None:
        """Answer every open long poll now (empty), and any later one at once.
        Call on the server's event loop. O(open polls)."""
        self._closing = True
        for task in list(self._polls):
            task.cancel()

    # -- ASGI -----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":  # websockets are refused by the server itself
            return
        request_id = str(uuid.uuid4())
        headers: dict[str, str] = {}
        json_protocol = False
        try:
            raw_headers: Sequence[tuple[bytes, bytes]] = scope["headers"]
            for name, value in raw_headers:
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
            # h11 bounds only a head that arrives in pieces; one read can carry more.
            header_bytes = sum(len(name) + len(value) for name, value in raw_headers)
            if header_bytes > self.max_header_bytes:
                raise _errors.InvalidRequest(
                    f"The request's headers are {header_bytes} bytes; at most "
                    f"{self.max_header_bytes} are accepted."
                )
            body = await self._body(receive, headers)
            answer = await self._answer(scope, headers, body, json_protocol, request_id)
        except _Abandoned:
            return
        except _RequestTooLarge:
            err: SQSError = _errors.RequestTooLarge(
                f"The request body is larger than {self.max_request_bytes} bytes."
            )
            answer = self._error(err, json_protocol, request_id)
        except SQSError as exc:
            answer = self._error(exc, json_protocol, request_id)
        except Exception as exc:
            logger.exception("internal error on %s %s", scope.get("method"), scope.get("path"))
            answer = self._error(_wire.internal_error(exc), json_protocol, request_id)
        status, out_headers, payload = answer
        out_headers["Content-Length"] = str(len(payload))
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (k.encode("latin-1"), v.encode("latin-1")) for k, v in out_headers.items()
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

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

    def _error(
        self, err: SQSError, json_protocol: bool, request_id: str
    ) -> tuple[int, dict[str, str], bytes]:
        if json_protocol:
            return _wire.encode_error(err, request_id)
        return _query.encode_error(err, request_id)

    def _endpoint_url(self, headers: Mapping[str, str]) -> str:
        host = headers.get("host", "")
        if _HOST.fullmatch(host):
            return f"http://{host}"
        return self.default_endpoint_url

    async def _answer(
        self,
        scope: Scope,
        headers: Mapping[str, str],
        body: bytes,
        json_protocol: bool,
        request_id: str,
    ) -> tuple[int, dict[str, str], bytes]:
        method = scope.get("method", "")
        endpoint_url = self._endpoint_url(headers)
        principal = None
        if self.credentials is not None:
            # Lazy: _sigv4 needs botocore, which an anonymous endpoint never loads.
            from sqsqueue.aws import _sigv4

            query = scope.get("query_string", b"").decode("latin-1")
            path = scope.get("raw_path") or scope.get("path", "/").encode()
            url = f"{endpoint_url}{path.decode('latin-1')}" + (f"?{query}" if query else "")
            principal = _sigv4.verify(
                self.credentials, method, url, scope["headers"], body, self.broker.region
            )
        client = Client(self.broker, principal=principal, endpoint_url=endpoint_url)
        if json_protocol:
            if method != "POST":
                raise _errors.InvalidRequest(f"The JSON protocol takes POST, not {method}.")
            operation, params = _wire.decode(headers.get("x-amz-target"), body, headers)
            result = await self._call(client, operation, params)
            return _wire.encode(result, request_id)
        if method not in ("POST", "GET"):
            raise _errors.InvalidRequest(f"The query protocol takes POST or GET, not {method}.")
        form = _form(scope.get("query_string", b""))
        if method == "POST" and body:
            form += _form(body)
        operation, params = _query.decode(form, scope.get("path", "/"), endpoint_url)
        result = await self._call(client, operation, params)
        return _query.encode(operation, result, request_id)

    async def _call(self, client: Client, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation != "ReceiveMessage":
            return client.call(operation, params)
        if self._closing:
            params = {**params, "WaitTimeSeconds": 0}
        task = asyncio.current_task()
        assert task is not None
        self._polls.add(task)
        try:
            return await client.call_async(operation, params)
        except asyncio.CancelledError:
            if not self._closing:
                raise
            # The endpoint is stopping: answer the poll as its deadline would
            # (no messages; none was taken, the engine takes them without awaiting).
            task.uncancel()
            return {}
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


def _check_credentials(credentials: Credentials, account_id: str) -> dict[str, tuple[str, str]]:
    if not isinstance(credentials, Mapping) or not credentials:
        raise ValueError("credentials must be a non-empty mapping of access key id to secret")
    out: dict[str, tuple[str, str]] = {}
    for key, value in credentials.items():
        if isinstance(value, str):
            secret, account = value, account_id
        elif (
            isinstance(value, tuple | list)
            and len(value) == 2
            and all(isinstance(v, str) for v in value)
        ):
            secret, account = value[0], value[1]
        else:
            raise ValueError(
                f"credentials[{key!r}] must be a secret or a (secret, account_id) pair"
            )
        if not isinstance(key, str) or not key or not secret:
            raise ValueError("access key ids and secrets must be non-empty strings")
        if not re.fullmatch(r"[0-9]{12}", account):
            raise ValueError(f"credentials[{key!r}]: an AWS account id is 12 digits")
        out[key] = (secret, account)
    return out


def load_credentials(path: str | Path) -> dict[str, str | tuple[str, str]]:
    """Read a credentials file: a JSON object mapping access key ids to secrets
    or to ``{"secret": ..., "account_id": ...}`` objects. A key without an
    ``account_id`` acts as the broker's own account, as a bare secret does."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of access key id -> secret")
    out: dict[str, str | tuple[str, str]] = {}
    for key, value in data.items():
        if isinstance(value, str):
            out[key] = value
            continue
        if not isinstance(value, dict):
            raise ValueError(f"{path}: {key!r} must map to a secret or an object")
        unknown = sorted(set(value) - {"secret", "account_id"})
        if unknown:
            raise ValueError(
                f"{path}: {key!r} has unknown fields {unknown}; expected secret and account_id"
            )
        secret = value.get("secret")
        if not isinstance(secret, str) or not secret:
            raise ValueError(f'{path}: {key!r} needs a non-empty "secret" string')
        account = value.get("account_id")
        if account is None:
            out[key] = secret  # the broker's own account
        elif isinstance(account, str):
            out[key] = (secret, account)
        else:
            raise ValueError(
                f"{path}: {key!r} has account_id {account!r}; an AWS account id is a "
                "string of 12 digits"
            )
    return out


# -- the server -------------------------------------------------------------------------


def _uvicorn_server(endpoint: Endpoint, idle_timeout: float) -> Any:
    import uvicorn

    from sqsqueue.aws._http import protocol_class

    class _Server(uvicorn.Server):
        """uvicorn's server, answering open long polls first when it stops."""

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            endpoint.close_polls()
            await super().shutdown(sockets)

    config = uvicorn.Config(
        endpoint,
        lifespan="off",
        # h11 (bounds a head's bytes: h11_max_incomplete_event_size),
        # with a read deadline and AWS-shaped 400s (sqsqueue.aws._http).
        http=protocol_class(idle_timeout),
        ws="none",
        log_config=None,  # leave the application's logging alone
        access_log=False,
        timeout_keep_alive=max(1, math.ceil(idle_timeout)),  # the read deadline comes first
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        h11_max_incomplete_event_size=2 * MAX_HEADER_BYTES,
        server_header=False,
        proxy_headers=False,
    )
    return _Server(config)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not the default 0: accepted sockets inherit the listener's
    # proto, and asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # sockets whose proto says TCP. With it on, a response written as headers
    # then body waits for the client's delayed ACK: about 40 ms per request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _refuse_open(host: str, credentials: object, allow_anonymous: bool) -> None:
    if credentials is None and not allow_anonymous and not _is_loopback(host):
        raise PermissionError(
            f"refusing to serve on {host} without credentials: anyone who can reach that "
            "address could read, send and delete messages. Give credentials "
            "(--credentials FILE, or serve(credentials={key: secret})) to require signed "
            "requests, or --allow-anonymous (allow_anonymous=True) if the network is yours."
        )


class EndpointHandle(ServedEndpoint):
    """A running endpoint: ``.endpoint_url``, ``.close()``, a context manager."""

    def __init__(self, server: Any, endpoint: Endpoint, sock: socket.socket, host: str) -> None:
        self._server = server
        self.endpoint = endpoint
        self._socket = sock
        port = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        #: ``http://<host>:<port>``: give it to any SQS client as its endpoint URL.
        self.endpoint_url = f"http://{shown}:{port}"
        self.port: int = port
        endpoint.default_endpoint_url = self.endpoint_url
        self._thread = threading.Thread(
            target=self._run, name=f"sqsqueue-endpoint-{port}", daemon=True
        )
        self._failed: BaseException | None = None

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as exc:  # reported by start()
            self._failed = exc
            logger.exception("the endpoint stopped on an error")

    def start(self, timeout: float = 10.0) -> EndpointHandle:
        """Start the server thread; return once it accepts connections."""
        self._thread.start()
        tick = threading.Event()
        for _ in range(int(timeout / 0.005)):
            if self._server.started or not self._thread.is_alive():
                break
            tick.wait(0.005)
        if not self._server.started:
            self.close()
            raise RuntimeError(f"the endpoint did not start: {self._failed!r}")
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Stop serving: open long polls are answered (empty), connections closed,
        the thread joined. Returns within ``SHUTDOWN_GRACE`` seconds or so."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self._socket.close()

    def __enter__(self) -> EndpointHandle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EndpointHandle({self.endpoint_url!r})"


def serve(
    broker: Broker[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    credentials: Credentials | None = None,
    allow_anonymous: bool = False,
    idle_timeout: float = IDLE_TIMEOUT,
) -> EndpointHandle:
    """Serve ``broker`` over HTTP from a background thread; see :meth:`Broker.serve`.

    Raises ``PermissionError`` for a non-loopback ``host`` without
    ``credentials`` (unless ``allow_anonymous``), ``ValueError`` for a port
    outside 0..65535 or an ``idle_timeout`` not above 0, and ``OSError`` when
    the address cannot be bound.
    """
    _check_serve_options(port, idle_timeout)
    _refuse_open(host, credentials, allow_anonymous)
    endpoint = Endpoint(broker, credentials=credentials)
    sock = _bind(host, port)
    return EndpointHandle(_uvicorn_server(endpoint, idle_timeout), endpoint, sock, host).start()


# -- the command line --------------------------------------------------------------------


def _port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: use 0 (any) to 65535")
    return port


def _seconds(text: str) -> float:
    """``--idle-timeout``: a number of seconds greater than 0."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"{text} seconds: the timeout must be greater than 0")
    return seconds


def _check_serve_options(port: object, idle_timeout: object) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be 0 (any free port) to 65535, not {port!r}")
    if (
        isinstance(idle_timeout, bool)
        or not isinstance(idle_timeout, int | float)
        or not (idle_timeout > 0 and math.isfinite(idle_timeout))
    ):
        raise ValueError(f"idle_timeout must be a number of seconds > 0, not {idle_timeout!r}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sqsqueue", description="sqsqueue: Amazon SQS semantics, in process."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve", help="serve an SQS endpoint over HTTP")
    serve_cmd.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve_cmd.add_argument("--port", type=_port, default=DEFAULT_PORT, help="port (9324; 0: any)")
    serve_cmd.add_argument("--region", default="us-east-1", help="the broker's region")
    serve_cmd.add_argument(
        "--account-id", default="000000000000", help="the broker's account id (12 digits)"
    )
    serve_cmd.add_argument(
        "--credentials",
        metavar="FILE",
        help='JSON {"<access key id>": "<secret>", ...}: require Signature V4 requests',
    )
    serve_cmd.add_argument(
        "--allow-anonymous",
        action="store_true",
        help="serve a non-loopback address without credentials",
    )
    serve_cmd.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=IDLE_TIMEOUT,
        help="seconds a connection may take to send a request's head, then its body, "
        "or stay idle (30)",
    )
    serve_cmd.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep queues and messages in DIR and restore them on the next start (SQLite)",
    )
    serve_cmd.add_argument(
        "--durability",
        choices=("process", "machine"),
        default="process",
        help="with --data-dir: a returned call survives a crash of the process (default) "
        "or also power loss (fsync per call); see docs/guarantees.md",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``sqsqueue serve``: serve a fresh broker until SIGINT or SIGTERM."""
    args = _parser().parse_args(argv)
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        print("sqsqueue serve needs uvicorn: pip install 'sqsqueue[server]'", file=sys.stderr)
        return 2
    try:
        credentials = load_credentials(args.credentials) if args.credentials else None
        broker = Broker(
            region=args.region,
            account_id=args.account_id,
            data_dir=args.data_dir,
            durability=args.durability,
        )
        _refuse_open(args.host, credentials, args.allow_anonymous)
        endpoint = Endpoint(broker, credentials=credentials)
        sock = _bind(args.host, args.port)
    except (OSError, ValueError, SQSError) as exc:
        print(f"sqsqueue serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    handle = EndpointHandle(_uvicorn_server(endpoint, args.idle_timeout), endpoint, sock, args.host)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    handle.start()
    auth = "Signature V4 required" if credentials else "no authentication"
    kept = f"kept in {broker.data_dir}" if broker.data_dir else "in memory"
    print(
        f"sqsqueue: serving SQS at {handle.endpoint_url} (region {broker.region}, "
        f"account {broker.account_id}, {auth}, {kept}); Ctrl-C stops",
        flush=True,
    )
    while not stop.wait(0.5):
        if not handle._thread.is_alive():
            return 1
    handle.close()
    broker.close()
    print("sqsqueue: stopped", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
