"""``mock_sqs``: real boto3 code talks to a Broker, in process, no network.

botocore's own request path runs unchanged up to the moment it would send
bytes: a ``before-send.sqs`` handler answers with the bytes AWS would send
back, so botocore parses our responses exactly as it parses AWS's (section 1.5)
and raises ``client.exceptions.QueueDoesNotExist`` and friends itself. A
``choose-signer.sqs`` handler turns request signing off while a mock is
active, so no AWS credentials are needed. Requests to other services pass
through untouched, and SQS requests pass through too when no mock is active.

The handlers are registered once, when this module is imported: by
``import sqsqueue.testing`` or by loading sqsqueue's pytest plugin, whichever
comes first. botocore copies its handler list into a session when the session
is created, so every client created after that point is served while a mock
is active, and one created earlier (before sqsqueue was imported) is not.

aiobotocore (and aioboto3, built on it): aiobotocore sessions copy the same
handler list, and its event emitter awaits a handler's answer when it is
awaitable. Which clients are aiobotocore's is decided once per client, when
it is made: a ``creating-client-class.sqs`` handler gives every SQS client
class built on aiobotocore's ``AioBaseClient`` a base (:class:`_AioServed`)
whose ``__init__`` swaps, on that client's own copy of the handlers, the
``before-send`` handler for :func:`_before_send_async`. That one answers with
a coroutine awaiting the engine through
:func:`~sqsqueue.aws._wire.handle_async`: a ReceiveMessage long poll suspends
the calling task, never the event loop, and is woken by a send from another
task or thread. The response is aiobotocore's own ``AioAWSResponse``, whose
body it awaits. This holds on aiobotocore 2.x (botocore 1.40, whose prepared
requests carry no context to tell a client by) and 3.x alike; a request whose
context names an ``AioConfig`` is also recognised, for a client made before
the handlers were installed in its session.

moto: inside moto's ``mock_aws``, botocore would run moto's handler after
ours on every request, so moto would execute each SQS call a second time
(a long poll would wait twice). While a ``mock_sqs`` is active, SQS is
therefore one of moto's passthrough services: moto leaves SQS to sqsqueue and
keeps serving every other service. See :func:`_defer_moto`. What moto's other
services send to SQS (SNS, S3, EventBridge, ...) reaches the mock's brokers
through :mod:`sqsqueue.moto`, which the mock activates with these handlers.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Coroutine
from typing import Any, Protocol

import botocore
import botocore.awsrequest
import botocore.handlers
from botocore.awsrequest import AWSResponse, HeadersDict

from sqsqueue.aws._client import Client
from sqsqueue.aws._wire import (
    encode_error,
    handle,
    handle_async,
    internal_error,
    new_request_id,
)

__all__ = ["Served", "activate", "current", "deactivate", "install"]

_HOST = re.compile(r"https?://sqs\.([a-z0-9-]+)\.amazonaws\.com")
#: The region of each endpoint URL seen (a client sends to one URL): the
#: regular expression ran on every request otherwise. Bounded.
_REGIONS: dict[str, str | None] = {}
_REGIONS_MAX = 256

class Served(Protocol):
    """What the hooks need of an active mock: the client serving a region."""

    def client_for(self, region: str | None) -> Client: ...


_active: list[Served] = []
_active_lock = threading.Lock()
_installed: list[bool] = []  # non-empty once the handlers are registered


class _RawBody:
    """The ``raw`` of an AWSResponse: botocore reads it with ``stream()``."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body

    def read(self, *_: Any) -> bytes:
        body, self._body = self._body, b""
        return body


class _AsyncRawBody:
    """The ``raw`` of an aiobotocore ``AioAWSResponse``: it awaits ``read()``;
    aiobotocore before 2.14 also reads the headers from ``raw.raw_headers``
    (aiohttp's pairs of bytes)."""

    def __init__(self, body: bytes, headers: dict[str, str]) -> None:
        self._body = body
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]

    async def read(self, *_: Any) -> bytes:
        body, self._body = self._body, b""
        return body


def current() -> Served | None:
    """The innermost active mock, or None."""
    with _active_lock:
        return _active[-1] if _active else None


def _defer_moto() -> None:
    """Make moto leave SQS to an active mock_sqs (nothing if moto is not loaded).

    moto asks ``passthrough_service(name)`` of its botocore handler module for
    every request; wrapping it to answer True for ``"sqs"`` while a mock_sqs is
    active uses moto's own passthrough setting (``mock_aws(config={"core":
    {"passthrough": {"services": ["sqs"]}}})``) without touching the user's
    configuration. If a moto version lacks that hook, an active moto refuses
    loudly instead of executing SQS calls twice.
    """
    module = sys.modules.get("moto.core.botocore_stubber")
    if module is None:
        return
    original = getattr(module, "passthrough_service", None)
    if original is None:
        models = sys.modules.get("moto.core.models")
        stubber = getattr(models, "botocore_stubber", None)
        if getattr(stubber, "enabled", False):
            raise RuntimeError(
                "moto's mock_aws is active and this moto version cannot be told to leave "
                "SQS to sqsqueue's mock_sqs; start mock_aws with "
                "config={'core': {'passthrough': {'services': ['sqs']}}}"
            )
        return
    if getattr(original, "_sqsqueue_defers", False):
        return

    def passthrough_service(service: str) -> bool:
        if service == "sqs" and current() is not None:
            return True
        return bool(original(service))

    passthrough_service._sqsqueue_defers = True  # type: ignore[attr-defined]
    setattr(module, "passthrough_service", passthrough_service)  # noqa: B010


def _from_aiobotocore(request: Any) -> bool:
    """Whether ``request`` was made by an aiobotocore client, whose emitter
    awaits what a handler answers. Every aiobotocore client's config is an
    ``AioConfig`` (aiobotocore makes one when given a plain ``Config``), and
    botocore puts the client's config in each request's context. O(1)."""
    config_type = getattr(sys.modules.get("aiobotocore.config"), "AioConfig", None)
    if config_type is None:  # aiobotocore never imported: no aiobotocore client exists
        return False
    context = getattr(request, "context", None)
    return isinstance(context, dict) and isinstance(context.get("client_config"), config_type)


# -- botocore's headers, read and built without a key object per header -------------
#
# botocore's HeadersDict keeps a dict of case-insensitive key objects, and
# builds one per header read or written (about half a microsecond each, a
# tenth of the mock's own time per call). The few names the mock reads and
# writes get their key object once, and a response's table is filled
# directly; this is checked against the botocore installed, once, and the
# public HeadersDict interface is used instead where it does not hold.

_HeaderKey: Any = getattr(botocore.awsrequest, "_HeaderKey", None)


def _table_usable() -> bool:
    """Whether this botocore's HeadersDict is a ``_dict`` of ``_HeaderKey``s,
    read and iterated as one built through its public interface."""
    if _HeaderKey is None:
        return False
    try:
        public = HeadersDict({"X-Amz-Target": "t", "Content-Length": "1"})
        built = HeadersDict.__new__(HeadersDict)
        built._dict = {_HeaderKey("X-Amz-Target"): "t", _HeaderKey("Content-Length"): "1"}
        return (
            type(public._dict) is dict
            and public._dict.get(_HeaderKey("x-amz-target")) == "t"
            and built.get("content-length") == "1"
            and list(built.items()) == list(public.items())
            and dict(built) == dict(public)
        )
    except Exception:  # another botocore: its public interface it is
        return False


_TABLE = _table_usable()
#: header name -> its _HeaderKey: the names the codecs answer with, and the
#: two the mock reads.
_KEYS: dict[str, Any] = (
    {
        name: _HeaderKey(name)
        for name in (
            "x-amzn-RequestId",
            "Content-Type",
            "Content-Length",
            "x-amzn-query-error",
            "X-Amz-Target",
            "X-Amzn-Trace-Id",
        )
    }
    if _TABLE
    else {}
)


def _key(name: str) -> Any:
    key = _KEYS.get(name)
    if key is None:
        key = _KEYS[name] = _HeaderKey(name)
    return key


def _read_headers(headers: Any) -> tuple[str | None, str | None]:
    """(X-Amz-Target, X-Amzn-Trace-Id) of a request, as text or None."""
    if _TABLE and type(headers) is HeadersDict:
        table = headers._dict
        target, trace = table.get(_KEYS["X-Amz-Target"]), table.get(_KEYS["X-Amzn-Trace-Id"])
    else:
        target, trace = headers.get("X-Amz-Target"), headers.get("X-Amzn-Trace-Id")
    if isinstance(target, bytes):
        target = target.decode()
    if isinstance(trace, bytes):
        trace = trace.decode()
    return target, trace


def _response_headers(headers: dict[str, str]) -> HeadersDict:
    if not _TABLE:
        return HeadersDict(headers)
    out = HeadersDict.__new__(HeadersDict)
    out._dict = {_KEYS.get(name) or _key(name): value for name, value in headers.items()}
    return out


def _init_usable() -> bool:
    """Whether this botocore's AWSResponse holds only what ``__init__`` is
    given and an unread body (so :class:`_Response` may set them itself)."""
    try:
        probe = AWSResponse("u", 200, {}, None)
        return set(vars(probe)) == {"url", "status_code", "headers", "raw", "_content"} and (
            probe._content is None
        )
    except Exception:  # another botocore: its own __init__ it is
        return False


_INIT = _TABLE and _init_usable()


class _Response(AWSResponse):  # type: ignore[misc]  # botocore is untyped
    """botocore's AWSResponse, its headers built by :func:`_response_headers`
    and its body already in hand (``content`` reads ``raw`` only if this
    botocore keeps the body elsewhere)."""

    def __init__(self, url: str, status: int, headers: dict[str, str], payload: bytes) -> None:
        if _INIT:
            self.url = url
            self.status_code = status
            self.raw = _RawBody(payload)
        else:
            super().__init__(url, status, (), _RawBody(payload))
        self.headers = _response_headers(headers)
        self._content = payload


def _unpack(request: Any) -> tuple[bytes, str | None, dict[str, str] | None, str | None]:
    """(body, X-Amz-Target, the other headers the codec reads, region) of a
    botocore request to SQS's AWS endpoint."""
    body = request.body
    if body is None:
        body = b""
    elif isinstance(body, str):
        body = body.encode("utf-8")
    elif not isinstance(body, bytes):
        body = body.read()
    # Only the headers the codec reads: copying all of botocore's cost a tenth
    # of sqsqueue's share of a call.
    target, trace = _read_headers(request.headers)
    url = request.url or ""
    try:
        region = _REGIONS[url]
    except KeyError:
        match = _HOST.match(url)
        region = match.group(1) if match else None
        if len(_REGIONS) < _REGIONS_MAX:
            _REGIONS[url] = region
    return body, target, {"X-Amzn-Trace-Id": trace} if trace is not None else None, region


async def _answer_async(
    mock: Served,
    url: str,
    body: bytes,
    target: str | None,
    headers: dict[str, str] | None,
    region: str | None,
) -> Any:
    """The aiobotocore response to one request: a long poll awaits the engine."""
    from aiobotocore.awsrequest import AioAWSResponse

    try:
        status, out_headers, payload = await handle_async(
            mock.client_for(region), target, body, headers
        )
    except Exception as exc:  # a bug: answer as AWS answers its own (500, Receiver)
        status, out_headers, payload = encode_error(internal_error(exc), new_request_id())
    out_headers["Content-Length"] = str(len(payload))
    return AioAWSResponse(url, status, out_headers, _AsyncRawBody(payload, out_headers))


def _before_send_async(request: Any, **_: Any) -> Coroutine[Any, Any, Any] | None:
    """The ``before-send`` handler of an aiobotocore client: aiobotocore's
    emitter awaits the coroutine it answers on the caller's event loop."""
    mock = current()
    if mock is None:
        return None
    _defer_moto()
    body, target, headers, region = _unpack(request)
    return _answer_async(mock, request.url, body, target, headers, region)


def _before_send(request: Any, **_: Any) -> AWSResponse | Coroutine[Any, Any, Any] | None:
    try:
        mock = _active[-1]  # current() without its lock: one read of a list
    except IndexError:
        return None
    if _from_aiobotocore(request):
        return _before_send_async(request)
    # Runs before moto's handler (botocore calls "before-send.sqs" handlers
    # before "before-send" ones), so moto is told to pass SQS through in time.
    _defer_moto()
    body, target, headers, region = _unpack(request)
    status, out_headers, payload = handle(lambda: mock.client_for(region), target, body, headers)
    out_headers["Content-Length"] = str(len(payload))
    return _Response(request.url, status, out_headers, payload)


def _choose_signer(**_: Any) -> Any:
    return botocore.UNSIGNED if current() is not None else None


class _AioServed:
    """A base given to aiobotocore's SQS client classes (see the module
    docstring): each client answers its requests through the awaitable handler."""

    meta: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        events = self.meta.events  # this client's own copy of its session's handlers
        events.unregister("before-send.sqs", _before_send)
        events.register("before-send.sqs", _before_send_async)


def _creating_client_class(base_classes: list[type], **_: Any) -> None:
    """Give every SQS client class built on aiobotocore's base the
    :class:`_AioServed` base. O(1) per client."""
    aio_base = getattr(sys.modules.get("aiobotocore.client"), "AioBaseClient", None)
    if aio_base is None or _AioServed in base_classes:
        return
    if any(issubclass(base, aio_base) for base in base_classes):
        base_classes.insert(0, _AioServed)


def install() -> None:
    """Register the handlers once, for every botocore session old and new."""
    with _active_lock:
        if _installed:
            return
        handlers = [
            ("creating-client-class.sqs", _creating_client_class),
            ("before-send.sqs", _before_send),
            ("choose-signer.sqs", _choose_signer),
        ]
        botocore.handlers.BUILTIN_HANDLERS.extend(handlers)
        # boto3's default session, if one exists already, was created before
        # this; boto3 itself is not imported just to look.
        boto3 = sys.modules.get("boto3")
        if boto3 is not None and boto3.DEFAULT_SESSION is not None:
            session = boto3.DEFAULT_SESSION._session
            for event, handler in handlers:
                session.register(event, handler)
        _installed.append(True)


def activate(mock: Served) -> None:
    """Serve SQS requests from ``mock`` until :func:`deactivate` (innermost wins)."""
    install()
    with _active_lock:
        _active.append(mock)


def deactivate(mock: Served) -> None:
    """Stop serving from ``mock``; a mock not active is ignored."""
    with _active_lock:
        if mock in _active:
            _active.remove(mock)
