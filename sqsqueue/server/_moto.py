"""``sqsqueue serve --with-moto``: one local AWS endpoint whose SQS is sqsqueue.

One port, one process: SQS requests go to the :class:`~sqsqueue.server._app.Endpoint`,
every other AWS request to moto's server application (a WSGI app, run on a
worker thread). moto's services reach the endpoint's broker through
:mod:`sqsqueue.moto` (an SNS subscription's queue, an S3 notification's,
EventBridge's), so ``aws sns publish`` lands in the sqsqueue queue.

Requests are routed by what AWS routes them by, never by guessing from a
body: SigV4's credential scope names the service (``.../us-east-1/sqs/
aws4_request``, in the ``Authorization`` header or a presigned URL's
``X-Amz-Credential``); an unsigned request goes by its JSON target prefix
(``AmazonSQS.``), its query path (a queue URL, ``/<account>/<name>``) or its
query ``Action`` when only SQS has that action. Anything else is moto's.

Needs moto's server extra (``pip install 'moto[server]'``, flask); moto's
requests are not authenticated, so a non-loopback address is refused unless
``allow_anonymous``. Cost per request: the routing reads headers (and, for an
unsigned form, the form's ``Action``); moto's requests cost a thread hop.
"""

from __future__ import annotations

import asyncio
import io
import re
import sys
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, unquote

from sqsqueue.aws._client import OPERATIONS, BrokerAPI
from sqsqueue.console import handles
from sqsqueue.server._app import AccountsAPI, Endpoint

__all__ = ["NEEDS_MOTO", "MotoRouter", "check_moto", "provider"]

#: What serving with moto without moto's server says.
NEEDS_MOTO = (
    "--with-moto needs moto and its server: pip install 'sqsqueue[server,moto]' 'moto[server]'"
)
#: SigV4's credential scope: <key>/<date>/<region>/<service>/aws4_request.
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request")
_QUEUE_PATH = re.compile(r"(/queue/[a-z0-9-]{1,32})?/[0-9]{12}/[A-Za-z0-9_.-]{1,80}/?")
#: Query actions only SQS has (SNS has its own AddPermission and RemovePermission).
_SQS_ONLY = frozenset(OPERATIONS) - {"AddPermission", "RemovePermission"}
#: moto's requests are read whole before they run (S3 uploads included).
MAX_MOTO_REQUEST_BYTES = 512 * 1024 * 1024

Scope = MutableMapping[str, Any]
Receive = Callable[[], Any]
Send = Callable[[MutableMapping[str, Any]], Any]


def check_moto() -> None:
    """ImportError naming the extras when moto or its server is missing."""
    try:
        import flask  # noqa: F401
        import moto  # noqa: F401
    except ImportError as exc:
        raise ImportError(NEEDS_MOTO) from exc


class _Provider:
    """The endpoint's brokers, offered to moto: the one broker's own account
    and region (``Broker.serve()``), or every account and region a
    ``sqsqueue serve`` holds (``accounts``), so what moto's SNS, S3 and
    EventBridge deliver reaches the queue of the account and region its ARN
    names (a broker is made there on moto's first look-up, as moto makes a
    backend)."""

    def __init__(self, broker: BrokerAPI, accounts: AccountsAPI | None = None) -> None:
        self.broker = broker
        self.accounts = accounts

    def broker_for(self, account: str, region: str) -> BrokerAPI | None:
        if self.accounts is not None:
            return self.accounts.broker_for(account, region)
        if (account, region) == (self.broker.account_id, self.broker.region):
            return self.broker
        return None


def provider(broker: BrokerAPI, accounts: AccountsAPI | None = None) -> _Provider:
    """What :func:`sqsqueue.moto.activate` is given for a served broker (and,
    for ``sqsqueue serve``, every account and region it holds)."""
    return _Provider(broker, accounts)


def is_sqs(scope: Scope, headers: dict[str, str], form: Callable[[], dict[str, str]]) -> bool:
    """Whether a request is SQS's (see the module docstring). ``form`` reads
    the request's query parameters (and form body), called only for an
    unsigned query request off a queue path. O(headers)."""
    query = scope.get("query_string", b"").decode("latin-1")
    signed = _SCOPE.search(headers.get("authorization", "")) or _SCOPE.search(
        unquote(query).replace("X-Amz-Credential=", "Credential=")
    )
    if signed:
        return signed.group(2) == "sqs"
    target = headers.get("x-amz-target")
    if target is not None:
        return target.startswith("AmazonSQS.")
    if _QUEUE_PATH.fullmatch(scope.get("path", "/")):
        return True
    return form().get("Action") in _SQS_ONLY


class MotoRouter:
    """The ASGI application of ``--with-moto``: SQS to ``endpoint``, the rest
    to moto's WSGI server application."""

    def __init__(self, endpoint: Endpoint, moto_app: Any | None = None) -> None:
        self.endpoint = endpoint
        if moto_app is None:
            from moto.moto_server.werkzeug_app import (
                DomainDispatcherApplication,
                create_backend_app,
            )

            moto_app = DomainDispatcherApplication(create_backend_app)
        self.moto_app = moto_app

    def close_polls(self) -> None:
        self.endpoint.close_polls()

    @property
    def default_endpoint_url(self) -> str:
        return self.endpoint.default_endpoint_url

    @default_endpoint_url.setter
    def default_endpoint_url(self, url: str) -> None:
        self.endpoint.default_endpoint_url = url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or handles(scope.get("path", "/")):
            # The console's paths (health, the peek, /metrics) are sqsqueue's.
            await self.endpoint(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            headers[name.decode("latin-1").lower()] = value.decode("latin-1")
        buffered: list[MutableMapping[str, Any]] = []

        async def body() -> bytes:
            chunks = []
            size = 0
            while True:
                message = await receive()
                buffered.append(message)
                if message["type"] != "http.request":
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_MOTO_REQUEST_BYTES:
                    raise ValueError("request body too large")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            return b"".join(chunks)

        form_cache: list[dict[str, str]] = []
        raw_body: list[bytes] = []

        def form() -> dict[str, str]:
            if not form_cache:
                pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                if raw_body and headers.get("content-type", "").startswith(
                    "application/x-www-form-urlencoded"
                ):
                    pairs += parse_qsl(raw_body[0].decode("utf-8", "replace"))
                form_cache.append(dict(pairs))
            return form_cache[0]

        signed_or_targeted = (
            "authorization" in headers
            or "x-amz-target" in headers
            or b"X-Amz-Credential" in scope.get("query_string", b"")
            or bool(_QUEUE_PATH.fullmatch(scope.get("path", "/")))
        )
        if not signed_or_targeted and scope.get("method") == "POST":
            raw_body.append(await body())
        if is_sqs(scope, headers, form):
            await self.endpoint(scope, _replay(buffered, receive), send)
            return
        data = raw_body[0] if raw_body else await body()
        await self._moto(scope, headers, data, send)

    async def _moto(self, scope: Scope, headers: dict[str, str], data: bytes, send: Send) -> None:
        status, out_headers, payload = await asyncio.to_thread(
            _call_wsgi, self.moto_app, scope, headers, data
        )
        await send({"type": "http.response.start", "status": status, "headers": out_headers})
        await send({"type": "http.response.body", "body": payload})


def _replay(buffered: list[MutableMapping[str, Any]], receive: Receive) -> Receive:
    """A ``receive`` giving back the messages already read, then the rest."""
    pending = list(buffered)

    async def replayed() -> MutableMapping[str, Any]:
        if pending:
            return pending.pop(0)
        message: MutableMapping[str, Any] = await receive()
        return message

    return replayed


def _call_wsgi(
    app: Any, scope: Scope, headers: dict[str, str], data: bytes
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Run one request through a WSGI application (on a worker thread)."""
    server = scope.get("server") or ("127.0.0.1", 80)
    raw_path = scope.get("raw_path") or scope.get("path", "/").encode("utf-8")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope.get("method", "GET"),
        "SCRIPT_NAME": "",
        "PATH_INFO": scope.get("path", "/").encode("utf-8").decode("latin-1"),
        "RAW_URI": raw_path.decode("latin-1"),
        "REQUEST_URI": raw_path.decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "REMOTE_ADDR": (scope.get("client") or ("127.0.0.1", 0))[0],
        "CONTENT_LENGTH": str(len(data)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in headers.items():
        key = name.upper().replace("-", "_")
        if key == "CONTENT_TYPE":
            environ["CONTENT_TYPE"] = value
        elif key != "CONTENT_LENGTH":
            environ[f"HTTP_{key}"] = value
    started: list[Any] = []

    def start_response(
        status: str, response_headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Any:
        started[:] = [status, response_headers]
        return lambda chunk: None

    result: Iterable[bytes] = app(environ, start_response)
    try:
        payload = b"".join(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    status_line, response_headers = started
    out = [
        (k.encode("latin-1"), v.encode("latin-1"))
        for k, v in response_headers
        if k.lower() not in ("content-length", "transfer-encoding", "connection")
    ]
    out.append((b"content-length", str(len(payload)).encode()))
    return int(status_line.split(" ", 1)[0]), out, payload
