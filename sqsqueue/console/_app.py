"""The console's ASGI application: what the endpoint hands it (every path
under :data:`PREFIXES`), routed to the JSON API, the LocalStack peek, the
Prometheus page or the console's static files.

Security (``docs/console.md`` says why each):

* **Credentials.** When the endpoint has credentials, every route but
  ``/_sqsqueue/health`` needs them: HTTP Basic with an access key id and its
  secret (what a browser can send; the browser asks once and remembers), or a
  Signature V4 signature as SDKs send (a boto3 client pointed at the peek).
  The key's account is the caller queue policies check, as on the SQS
  endpoint. Without credentials (a loopback bind, or ``allow_anonymous``)
  requests act as the broker's account.
* **Accounts and regions.** On an endpoint serving every account and region
  (``sqsqueue serve``: ``brokers``), the queue list and ``/metrics`` cover
  every broker, the peek finds a queue in the broker its URL names, and
  reset empties them all. With credentials a key sees its own account's
  queues in every region (as ListQueues would list them), acts on another
  account's only as that queue's policy allows, and only the default
  account's key may reset.
* **Cross-site requests.** Every state-changing request (POST) must carry the
  header ``X-Sqsqueue-Console: 1``: an HTML form cannot set it and a
  cross-origin script cannot send it without a CORS preflight, which is
  never granted; a request whose ``Origin`` is not the endpoint's is refused.
  The peek's POSTs (SDK requests, which change nothing) are exempt.
* **DNS rebinding.** Without credentials, a request must name the endpoint
  by an IP address or ``localhost`` in its Host header, so a page of another
  site whose name was rebound to 127.0.0.1 cannot read it.
* **Pages.** Static files only, with a Content-Security-Policy that allows
  the console's own script and nothing inline; the script builds the page
  with ``textContent`` (message bodies are user data and never HTML).
* **Errors.** A refused request gets a JSON error naming the reason; a bug
  answers 500 ``InternalError`` and is logged with its traceback, which
  never reaches the client.

Every request is logged to ``sqsqueue.access`` (INFO): method and route,
queue, status, duration.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

from sqsqueue.console import _peek, _prometheus
from sqsqueue.console._api import Api, queue_path
from sqsqueue.console._asgi import respond
from sqsqueue.console._broker import ConsoleBroker, ConsoleBrokers
from sqsqueue.errors import QueueDoesNotExist, SQSError

__all__ = ["CONSOLE_PATH", "PREFIXES", "Console", "handles"]

logger = logging.getLogger("sqsqueue.console")
access_log = logging.getLogger("sqsqueue.access")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Answer = tuple[int, dict[str, str], bytes]

#: Where the console's page is served.
CONSOLE_PATH = "/_sqsqueue/console/"
#: The paths the console owns; no SQS request can take one (a queue URL's
#: path is ``/<12-digit account>/<name>``, the JSON protocol posts to ``/``).
PREFIXES = ("/_sqsqueue/", "/_aws/sqs/messages", "/metrics")
#: The console's own POST bodies are small JSON documents (a message of 1 MiB
#: at most, escaped); the peek's are ReceiveMessage requests.
MAX_BODY = 4 * 1024 * 1024
#: The header every state-changing console request carries (CSRF guard).
CSRF_HEADER = "x-sqsqueue-console"

_STATIC = Path(__file__).with_name("static")
_FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "console.js": ("console.js", "text/javascript; charset=utf-8"),
    "console.css": ("console.css", "text/css; charset=utf-8"),
    "favicon.svg": ("favicon.svg", "image/svg+xml"),
}
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def handles(path: str) -> bool:
    """Whether ``path`` is the console's (see :data:`PREFIXES`)."""
    return path in {"/metrics", "/_sqsqueue"} or path.startswith(PREFIXES)


def _json(status: int, doc: object, extra: Mapping[str, str] | None = None) -> Answer:
    headers = {"Content-Type": "application/json", **_SECURITY_HEADERS, **(extra or {})}
    return status, headers, json.dumps(doc).encode("utf-8")


def _error(status: int, code: str, message: str, extra: Mapping[str, str] | None = None) -> Answer:
    return _json(status, {"error": code, "message": message}, extra)


class _Refused(Exception):
    def __init__(self, answer: Answer) -> None:
        self.answer = answer


class Console:
    """The ASGI application of the console's paths over one broker.

    ``credentials`` are the endpoint's (access key id -> (secret, account));
    ``ui`` serves the web console and its actions (off: health, reset, the
    peek and ``/metrics`` only); ``allow_reset`` lets a durable broker be
    reset. ``brokers`` are every broker of an endpoint serving every account
    and region (``broker`` is their default); without them, ``broker`` alone.
    """

    def __init__(
        self,
        broker: ConsoleBroker,
        *,
        credentials: Mapping[str, tuple[str, str]] | None = None,
        ui: bool = True,
        allow_reset: bool = False,
        brokers: ConsoleBrokers | None = None,
    ) -> None:
        self.broker = broker
        self.credentials = dict(credentials) if credentials else None
        self.ui = ui
        self.api = Api(broker, allow_reset=allow_reset, brokers=brokers)
        self.brokers = self.api.brokers
        #: Whether the endpoint serves every account and region.
        self.multi = brokers is not None
        self.endpoint_url = "http://127.0.0.1"

    # -- ASGI -------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        path = scope.get("path", "/")
        method = scope.get("method", "GET")
        headers = _headers(scope.get("headers", ()))
        queue = None
        try:
            body = await _body(receive, headers)
            if body is None:
                return  # the client went away: nothing runs
            answer, queue = self._answer(scope, method, path, headers, body)
        except _Refused as refused:
            answer = refused.answer
        except Exception:
            logger.exception("internal error on %s %s", method, path)
            answer = _error(500, "InternalError", "The console failed; the server log says why.")
        status, out_headers, payload = answer
        if access_log.isEnabledFor(logging.INFO):  # before answering: the client may look
            access_log.info(
                "%s %s queue=%s status=%d duration_ms=%.2f",
                method,
                path,
                queue or "-",
                status,
                (time.perf_counter() - started) * 1000,
            )
        await respond(send, status, out_headers, payload)

    # -- routing ----------------------------------------------------------------------

    def _answer(
        self, scope: Scope, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[Answer, str | None]:
        query = scope.get("query_string", b"").decode("latin-1")
        form = _form(query)
        if path == "/_sqsqueue/health":
            # Any Host: a compose service checks http://sqs:9324/_sqsqueue/health
            # by its service name, and the document holds nothing a page could
            # misuse (version, defaults, counts), so the rebinding guard is not needed.
            status, doc = self.api.health(None, {})
            return _json(status, doc), None
        if path.startswith(_peek.PREFIX):
            self._check_host(headers)
            try:
                principal = self._signed_principal(scope, method, headers, body, query)
            except SQSError as err:  # answered as the peek answers, in its protocol
                return _peek.refuse(err, headers), None
            if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
                form += _form(body.decode("utf-8", "replace"))
            answer = _peek.peek(
                self._peek_finder(principal, headers, query),
                principal,
                method,
                path,
                form,
                headers,
                body,
                self.endpoint_url,
            )
            return answer, dict(form).get("QueueUrl")
        if path == "/metrics":
            self._check_host(headers)
            principal = self._principal(scope, method, headers, body, query)
            if not self.multi and principal is not None and principal != self.broker.account_id:
                return _error(403, "AccessDenied", "/metrics is the broker account's."), None
            if method != "GET":
                return _error(405, "MethodNotAllowed", "GET /metrics"), None
            return (200, {"Content-Type": _prometheus.CONTENT_TYPE}, self._metrics(principal)), None
        if path in ("/_sqsqueue", "/_sqsqueue/", "/_sqsqueue/console"):
            return (308, {"Location": CONSOLE_PATH, **_SECURITY_HEADERS}, b""), None
        if path.startswith(CONSOLE_PATH):
            if not self.ui:
                return self._ui_off(), None
            self._check_host(headers)
            self._principal(scope, method, headers, body, query)
            return self._static(method, path[len(CONSOLE_PATH) :]), None
        parts = [unquote(p) for p in path[len("/_sqsqueue/") :].strip("/").split("/")]
        handler = self.api.route(method, parts)
        if handler is None:
            return _error(404, "NotFound", f"No console route for {method} {path}."), None
        if parts[:1] == ["api"] and not self.ui:
            return self._ui_off(), None
        self._check_host(headers)
        principal = self._principal(scope, method, headers, body, query)
        params: dict[str, Any] = dict(form)
        if method == "POST":
            self._check_csrf(headers)
            params.update(_json_body(body))
        queue = None
        if len(parts) > 2 and parts[1] == "queues":
            found = queue_path(parts[2:])
            if found is not None:
                region, account, name, _action = found
                queue = name if region is None else f"{region}/{account}/{name}"
        try:
            status, doc = handler(principal, params)
        except SQSError as err:
            status, doc = err.http_status, {"error": err.code, "message": err.message}
        return _json(status, doc), queue

    def _metrics(self, principal: str | None) -> bytes:
        """``/metrics``: the broker's queues; on an endpoint of every account
        and region, those of every broker the caller sees, each sample
        labelled with its ``account`` and ``region``. O(queues)."""
        if not self.multi:
            extra = [
                "# HELP sqsqueue_queues Queues in the broker.",
                "# TYPE sqsqueue_queues gauge",
                f"sqsqueue_queues {len(self.broker)}",
            ]
            return _prometheus.render(self.broker.metrics(), extra)
        brokers = self.api.visible(principal)
        scopes = [({"account": b.account_id, "region": b.region}, b.metrics()) for b in brokers]
        extra = [
            "# HELP sqsqueue_queues Queues in each account and region.",
            "# TYPE sqsqueue_queues gauge",
        ]
        extra += [
            f"sqsqueue_queues{_prometheus.labels(labels)} {len(metrics)}"
            for labels, metrics in scopes
        ]
        return _prometheus.render({}, extra, scopes=scopes)

    def _peek_finder(
        self, principal: str | None, headers: Mapping[str, str], query: str
    ) -> _peek.Finder:
        """How the peek finds the queue a request names: on one broker, that
        broker; on every account and region, the broker its URL or ARN (or
        path's region and account) names, a bare name being the caller's
        (the request's region is its signature's, else the default)."""
        brokers = self.brokers
        if not self.multi:
            broker = self.broker

            def one(ref: str, account: str | None, region: str | None) -> Any:
                if account is not None and (account, region) != (
                    broker.account_id,
                    broker.region,
                ):
                    raise QueueDoesNotExist()
                return broker.get_queue(ref)

            return one
        default = brokers.default
        scope = _scope(headers.get("authorization"), query)
        caller = principal or default.account_id
        region = default.region
        if scope is not None:
            key, region = scope
            if principal is None and len(key) == 12 and key.isdigit():
                caller = key  # LocalStack's convention: a 12-digit key id is the account

        def find(ref: str, account: str | None, in_region: str | None) -> Any:
            if account is not None and in_region is not None:
                broker = brokers.get(account, in_region)
            elif "/" not in ref and not ref.startswith("arn:"):
                broker = brokers.get(caller, region)  # a bare name: the caller's own queue
            else:
                broker = brokers.route(ref, region)
            if broker is None:
                raise QueueDoesNotExist()
            return broker.get_queue(ref)

        return find

    def _ui_off(self) -> Answer:
        return _error(
            404,
            "ConsoleOff",
            "The console is off on this endpoint: a non-loopback address serves it only "
            "with credentials (or when asked for with --console).",
        )

    def _static(self, method: str, name: str) -> Answer:
        if method != "GET":
            return _error(405, "MethodNotAllowed", "The console's files are read with GET.")
        found = _FILES.get(name)
        if found is None:
            return _error(404, "NotFound", f"No console file {name!r}.")
        filename, content_type = found
        payload = (_STATIC / filename).read_bytes()
        headers = {"Content-Type": content_type, **_SECURITY_HEADERS}
        if filename == "index.html":
            headers["Content-Security-Policy"] = _CSP
        return 200, headers, payload

    # -- security ---------------------------------------------------------------------

    def _check_host(self, headers: Mapping[str, str]) -> None:
        """Without credentials, only an IP address or ``localhost`` may be
        the Host a request names (a DNS-rebinding guard)."""
        if self.credentials is not None:
            return
        host = headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        name = name.strip("[]")
        if name == "localhost":
            return
        try:
            ipaddress.ip_address(name)
        except ValueError:
            raise _Refused(
                _error(
                    403,
                    "HostRefused",
                    f"Host {host!r} is not an IP address or localhost: an endpoint without "
                    "credentials answers only those (a DNS-rebinding guard).",
                )
            ) from None

    def _check_csrf(self, headers: Mapping[str, str]) -> None:
        if headers.get(CSRF_HEADER) != "1":
            raise _Refused(
                _error(
                    403,
                    "CsrfRefused",
                    "A console action must carry the header X-Sqsqueue-Console: 1 (it "
                    "proves the request is not a cross-site form).",
                )
            )
        origin = headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1] != headers.get("host"):
            raise _Refused(
                _error(403, "CsrfRefused", f"A console action from origin {origin} is refused.")
            )

    def _principal(
        self,
        scope: Scope,
        method: str,
        headers: Mapping[str, str],
        body: bytes,
        query: str,
    ) -> str | None:
        """:meth:`_signed_principal`, a refused signature answered as JSON."""
        try:
            return self._signed_principal(scope, method, headers, body, query)
        except SQSError as err:
            raise _Refused(_error(err.http_status, err.code, err.message)) from None

    def _signed_principal(
        self,
        scope: Scope,
        method: str,
        headers: Mapping[str, str],
        body: bytes,
        query: str,
    ) -> str | None:
        """The caller's account, from HTTP Basic (key id and secret) or a
        Signature V4 signature; None without credentials configured."""
        credentials = self.credentials
        if credentials is None:
            return None
        authorization = headers.get("authorization", "")
        challenge = {"WWW-Authenticate": 'Basic realm="sqsqueue", charset="UTF-8"'}
        if authorization.startswith("Basic "):
            try:
                decoded = base64.b64decode(authorization[6:], validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            key, _, secret = decoded.partition(":")
            known = credentials.get(key)
            if known is not None and hmac.compare_digest(known[0].encode(), secret.encode()):
                return known[1]
            raise _Refused(
                _error(401, "InvalidCredentials", "Unknown access key or wrong secret.", challenge)
            )
        if authorization.startswith("AWS4-HMAC-SHA256") or "X-Amz-Signature=" in query:
            from sqsqueue.aws import _sigv4

            raw_path = scope.get("raw_path") or scope.get("path", "/").encode()
            url = f"{_origin(headers, self.endpoint_url)}{raw_path.decode('latin-1')}"
            url += f"?{query}" if query else ""
            # A refused signature raises AWS's error (SQSError): the caller
            # answers it in the request's protocol.
            # Every region is served on an endpoint of every account and region.
            region = None if self.multi else self.broker.region
            return _sigv4.verify(credentials, method, url, scope["headers"], body, region)
        raise _Refused(
            _error(
                401,
                "MissingAuthentication",
                "This endpoint requires credentials: HTTP Basic with an access key id and "
                "its secret, or a Signature V4 signature.",
                challenge,
            )
        )


def _scope(authorization: str | None, query: str) -> tuple[str, str] | None:
    """(access key id, region) of a request's Signature V4 credential scope,
    from its Authorization header or a presigned URL's ``X-Amz-Credential``;
    None without one. O(len(header) + len(query))."""
    if authorization and "Credential=" in authorization:
        start = authorization.index("Credential=") + len("Credential=")
        credential = authorization[start:].split(",", 1)[0].strip()
    else:
        credential = dict(parse_qsl(query)).get("X-Amz-Credential", "") if query else ""
    parts = credential.split("/")
    if len(parts) != 5 or not parts[0] or not parts[2]:
        return None
    return parts[0], parts[2]


def _origin(headers: Mapping[str, str], default: str) -> str:
    host = headers.get("host")
    return f"http://{host}" if host else default


def _headers(raw: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]},{text}" if key in out else text
    return out


async def _body(receive: Receive, headers: Mapping[str, str]) -> bytes | None:
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        raise _Refused(_error(413, "RequestTooLarge", f"At most {MAX_BODY} bytes."))
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _Refused(_error(413, "RequestTooLarge", f"At most {MAX_BODY} bytes."))
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _form(text: str) -> list[tuple[str, str]]:
    try:
        return parse_qsl(text, keep_blank_values=True, max_num_fields=1000)
    except ValueError:
        raise _Refused(_error(400, "MalformedQueryString", "Too many parameters.")) from None


def _json_body(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        raise _Refused(_error(400, "MalformedJson", "The body is not a JSON object.")) from None
    if not isinstance(doc, dict):
        raise _Refused(_error(400, "MalformedJson", "The body is not a JSON object."))
    return doc
