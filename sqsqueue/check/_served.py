"""The broker a check serves, and what it records of every request.

:class:`CheckEndpoint` is the server's :class:`~sqsqueue.server._app.Endpoint`
with one step before and after each SQS request (the ``_respond`` both of the
server's ways in run, ASGI and httptools' whole-body path alike):

* **Who asked.** Each incarnation of the consumer is started with its own
  access key id (:func:`incarnation_key`), which its SDK puts in every
  request's Signature V4 ``Credential=`` scope; the endpoint reads it back
  (:func:`~sqsqueue.server._app.credential_of`) and so knows which process
  made each call. This was chosen over mapping a connection's source port to
  a pid through ``/proc/net/tcp`` and ``/proc/<pid>/fd``: that needs Linux,
  races with short-lived connections, and misattributes a connection a
  killed process's child inherited; a key in the environment is read by every
  SDK, survives any connection pool, and costs a dictionary lookup. A
  consumer's own children (a Celery prefork pool, ``npm`` starting ``node``)
  share their parent's key: their calls are the incarnation's.
* **Faults at the door.** On requests about the consumed queue (its
  ``QueueUrl``, or its ``QueueName`` for GetQueueUrl), ``slow`` delays the
  answer; ``throttle`` answers
  instead with SQS's throttling error (:class:`~sqsqueue.errors.RequestThrottled`,
  HTTP 403, ``RequestThrottled``: the code of SQS's Smithy model and of
  botocore's SQS retry policy in ``_retry.json``; AWS's message text is
  UNCONFIRMED), encoded in the request's own protocol, so the SDK's retry
  code runs. Requests about other queues (the effects queue, queues the
  consumer makes for itself) are never faulted.
* **What happened.** Receives (from the answer: message ids and receipt
  handles), deletes and visibility changes (from the request, receipt handles
  mapped back to messages), and each effect (a send to the effects queue,
  its body naming the processed message), as :class:`Event` records.

Cost: one extra decode of each request (O(body)) and, for a receive, one
regular-expression pass over its answer; the recorder holds O(events).
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import attrs

from sqsqueue.aws import _query, _wire
from sqsqueue.aws._client import BrokerAPI
from sqsqueue.errors import RequestThrottled
from sqsqueue.server._app import Answer, Endpoint, Receive, Scope, credential_of

__all__ = ["CheckEndpoint", "Event", "Recorder", "incarnation_key"]

#: The access key id prefix of the consumer's incarnations (20 characters in all, as AWS's).
KEY_PREFIX = "AKIACHECK"

#: AWS's text is not published; sqsqueue's choice (UNCONFIRMED).
THROTTLED = "Request is throttled."

_ID = re.compile(r'(?:<MessageId>|"MessageId"\s*:\s*")([^<"]+)')
_RECEIPT = re.compile(r'(?:<ReceiptHandle>|"ReceiptHandle"\s*:\s*")([^<"]+)')
_FAILED_XML = re.compile(r"<BatchResultErrorEntry>.*?<Id>([^<]*)</Id>", re.S)


def incarnation_key(n: int) -> str:
    """The access key id of the consumer's ``n``-th incarnation."""
    return f"{KEY_PREFIX}{n:011d}"


def incarnation_of(key: str) -> int | None:
    """The incarnation an access key id names; None for any other key."""
    if key.startswith(KEY_PREFIX) and key[len(KEY_PREFIX) :].isdigit():
        return int(key[len(KEY_PREFIX) :])
    return None


@attrs.frozen
class Event:
    """One thing that happened in a run, as the broker (or the supervisor) saw it.

    ``kind`` is ``sent``, ``received``, ``deleted``, ``visibility``,
    ``effect``, ``dead_lettered``, ``throttled``, ``started``, ``killed``,
    ``exited`` or ``stopped``; ``incarnation`` the consumer incarnation that
    made the call (None for the checker's own); ``detail`` what the kind adds
    (a receive's count, a visibility timeout, an unknown effect's body).
    """

    time: float
    kind: str
    message_id: str | None = None
    incarnation: int | None = None
    detail: str = ""


class Recorder:
    """Every :class:`Event` of one run, appended by the server's thread and
    read by the supervisor's (appends and reads of whole values only)."""

    def __init__(self, now: Callable[[], float], effects_name: str) -> None:
        self.now = now
        self.effects_name = effects_name
        self.events: list[Event] = []
        self.id_of_body: dict[str, str] = {}
        self._message_of_receipt: dict[str, str] = {}
        #: Effects per message id, and when the last effect arrived.
        self.effects: Counter[str] = Counter()
        self.last_effect = 0.0

    def add(self, kind: str, message_id: str | None, who: int | None, detail: str = "") -> None:
        self.events.append(Event(self.now(), kind, message_id, who, detail))

    def received(self, payload: bytes, who: int | None) -> None:
        text = payload.decode("utf-8", "replace")
        ids = _ID.findall(text)
        receipts = _RECEIPT.findall(text)
        for message_id, escaped in zip(ids, receipts, strict=False):
            self._message_of_receipt[html.unescape(escaped)] = message_id
            self.add("received", message_id, who)

    def handled(self, kind: str, receipt: object, who: int | None, detail: str = "") -> None:
        message_id = self._message_of_receipt.get(receipt) if isinstance(receipt, str) else None
        self.add(kind, message_id, who, detail if message_id is not None else f"{detail} ?")

    def effect(self, body: object, who: int | None) -> None:
        text = body if isinstance(body, str) else repr(body)
        message_id = self.id_of_body.get(text)
        self.add("effect", message_id, who, "" if message_id is not None else text[:200])
        if message_id is not None:
            self.effects[message_id] += 1
        self.last_effect = self.now()


def _failed_ids(payload: bytes) -> set[str]:
    """The Ids of a batch answer's failed entries (either protocol)."""
    if payload[:1] == b"{":
        try:
            data = json.loads(payload)
        except ValueError:
            return set()
        failed = data.get("Failed") if isinstance(data, dict) else None
        return {str(f.get("Id")) for f in failed or () if isinstance(f, dict)}
    return set(_FAILED_XML.findall(payload.decode("utf-8", "replace")))


def _queue_name(params: dict[str, Any]) -> str:
    url = params.get("QueueUrl")
    if isinstance(url, str):
        return url.rstrip("/").rsplit("/", 1)[-1]
    name = params.get("QueueName")
    return name if isinstance(name, str) else ""


async def _read(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class CheckEndpoint(Endpoint):
    """The endpoint of a check: faults at the door, every call recorded
    (module docstring). ``queue_name`` is the consumed queue's, the one
    faulted; ``rng`` draws the throttling, seeded per run."""

    def __init__(
        self,
        broker: BrokerAPI,
        recorder: Recorder,
        *,
        queue_name: str,
        slow_ms: int,
        throttle: float,
        rng: random.Random,
    ) -> None:
        super().__init__(broker)
        self.recorder = recorder
        self.queue_name = queue_name
        self.slow = slow_ms / 1000
        self.throttle = throttle
        self.rng = rng

    def _decode(
        self, scope: Scope, headers: dict[str, str], body: bytes, json_protocol: bool
    ) -> tuple[str, dict[str, Any]] | None:
        try:
            if json_protocol:
                return _wire.decode(headers.get("x-amz-target"), body, headers)
            text = scope.get("query_string", b"").decode("latin-1")
            form = parse_qsl(text, keep_blank_values=True)
            if scope.get("method") == "POST" and body:
                form += parse_qsl(body.decode("utf-8"), keep_blank_values=True)
            return _query.decode(form, scope.get("path", "/"), self.default_endpoint_url)
        except Exception:  # refused by the server itself, as it will say
            return None

    async def _respond(
        self, scope: Scope, receive: Receive | None, whole: bytes | None
    ) -> Answer | None:
        if whole is None:
            assert receive is not None
            whole = await _read(receive)
            if whole is None:
                return None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        key = credential_of(headers.get("authorization")).split("/", 1)[0]
        who = incarnation_of(key)
        json_protocol = "x-amz-target" in headers or headers.get("content-type", "").startswith(
            "application/x-amz-json"
        )
        call = self._decode(scope, headers, whole, json_protocol)
        recorder = self.recorder
        faulted = call is not None and _queue_name(call[1]) == self.queue_name
        if faulted and self.slow:
            await asyncio.sleep(self.slow)
        if faulted and self.throttle and self.rng.random() < self.throttle:
            assert call is not None
            operation, params = call
            receipts = [params.get("ReceiptHandle")] + [
                entry.get("ReceiptHandle") for entry in params.get("Entries") or ()
            ]
            receipts = [r for r in receipts if r is not None]
            if not receipts:
                recorder.add("throttled", None, who, operation)
            for receipt in receipts:  # a delete or visibility change: name its message
                recorder.handled("throttled", receipt, who, operation)
            return self._error(RequestThrottled(THROTTLED), json_protocol, _wire.new_request_id())
        answer = await super()._respond(scope, None, whole)
        if answer is None or call is None or answer[0] != 200:
            return answer
        operation, params = call
        payload = answer[2]
        if _queue_name(params) == recorder.effects_name:
            if operation == "SendMessage":
                recorder.effect(params.get("MessageBody"), who)
            elif operation == "SendMessageBatch":
                failed = _failed_ids(payload)
                for entry in params.get("Entries") or ():
                    if entry.get("Id") not in failed:
                        recorder.effect(entry.get("MessageBody"), who)
        elif operation == "ReceiveMessage":
            recorder.received(payload, who)
        elif operation == "DeleteMessage":
            recorder.handled("deleted", params.get("ReceiptHandle"), who)
        elif operation == "ChangeMessageVisibility":
            timeout = params.get("VisibilityTimeout")
            recorder.handled("visibility", params.get("ReceiptHandle"), who, f"{timeout}s")
        elif operation in ("DeleteMessageBatch", "ChangeMessageVisibilityBatch"):
            failed = _failed_ids(payload)
            kind = "deleted" if operation == "DeleteMessageBatch" else "visibility"
            for entry in params.get("Entries") or ():
                if entry.get("Id") not in failed:
                    timeout = entry.get("VisibilityTimeout")
                    detail = "" if timeout is None else f"{timeout}s"
                    recorder.handled(kind, entry.get("ReceiptHandle"), who, detail)
        return answer
