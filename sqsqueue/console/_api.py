"""The console's JSON API under ``/_sqsqueue/``: health, reset, and what the
web console reads and does (``docs/console.md`` lists every route).

Each handler takes the caller's principal (None: the broker's own account, or
on ``sqsqueue serve`` without credentials every account's) and the request's
parameters, and returns ``(status, document)``.

An endpoint serving every account and region (``sqsqueue serve``) has one
broker per (account, region). The queue list then covers every broker the
caller sees (all of them without credentials; with credentials, the key's
own account in every region), default first; a queue of the default
(account, region) keeps its path ``/_sqsqueue/api/queues/NAME/...`` and any
other's is ``/_sqsqueue/api/queues/REGION/ACCOUNT/NAME/...`` (the order of
its queue URL, ``/queue/REGION/ACCOUNT/NAME``). Reset empties every broker.
Reads never receive: message pages come from ``Queue.browse``. Every action
is an engine operation with the caller as principal, so a queue policy
governs the console as it governs the SQS endpoint. Costs: a page of queues
is O(page x log n); a page of messages O(page); an action its operation's.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqsqueue._clock import ManualClock
from sqsqueue._fifo import FifoQueue
from sqsqueue._message import MessageInfo
from sqsqueue._standard import Queue
from sqsqueue._version import __version__
from sqsqueue.console._broker import ConsoleBroker, ConsoleBrokers, OneBroker
from sqsqueue.errors import InvalidParameterValue, QueueDoesNotExist, SQSError

__all__ = ["Api", "Reply"]

Reply = tuple[int, dict[str, Any]]
#: The most queues one page of the queue list holds.
QUEUES_PAGE_MAX = 200
#: The longest body the console's send form accepts, as SQS does (1 MiB).
SEND_BODY_MAX = 1024 * 1024
#: An AWS account id: what tells ``queues/REGION/ACCOUNT/NAME`` from
#: ``queues/NAME/ACTION`` (no action is 12 digits).
_ACCOUNT = re.compile(r"[0-9]{12}")


def queue_path(parts: list[str]) -> tuple[str | None, str | None, str, list[str]] | None:
    """``(region, account, name, action parts)`` of the path parts after
    ``queues`` (region and account None for the default's ``NAME/...``);
    None when there is no queue name. O(len(parts))."""
    if len(parts) >= 3 and _ACCOUNT.fullmatch(parts[1]):
        return parts[0], parts[1], parts[2], parts[3:]
    if parts:
        return None, None, parts[0], parts[1:]
    return None


def _arn_name(arn: object) -> str | None:
    return arn.rsplit(":", 1)[-1] if isinstance(arn, str) else None


def _number(params: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or isinstance(raw, bool) or not low <= value <= high:
        raise InvalidParameterValue(
            f"Value {raw} for parameter {name} is invalid. Reason: must be an integer from "
            f"{low} to {high}."
        )
    return value


def _text(params: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise InvalidParameterValue(f"The request must contain the parameter {name}.")
        return None
    if not isinstance(value, str):
        raise InvalidParameterValue(
            f"Value for parameter {name} is invalid. Reason: must be a string."
        )
    return value


def message_document(info: MessageInfo) -> dict[str, Any]:
    """One message as the console shows it: JSON values only (a Binary
    attribute as base64), nothing received."""
    attributes = {}
    for name, value in info.message_attributes.items():
        shown: str
        if value.binary_value is not None:
            shown = base64.b64encode(value.binary_value).decode("ascii")
        else:
            shown = value.string_value or ""
        attributes[name] = {"type": value.data_type, "value": shown}
    return {
        "position": info.position,
        "message_id": info.message_id,
        "state": info.state,
        "receive_count": info.receive_count,
        "sent_at": info.sent_at,
        "visible_at": info.visible_at,
        "group_id": info.group_id,
        "deduplication_id": info.deduplication_id,
        "sequence_number": info.sequence_number,
        "size": info.size,
        "body": info.body,
        "attributes": dict(info.attributes),
        "message_attributes": attributes,
    }


class Api:
    """The routes of ``/_sqsqueue/`` over one broker, or over every broker of
    an endpoint serving every account and region (``brokers``)."""

    def __init__(
        self,
        broker: ConsoleBroker,
        *,
        allow_reset: bool = False,
        brokers: ConsoleBrokers | None = None,
    ) -> None:
        #: The default broker: health, the clock.
        self.broker = broker
        self.allow_reset = allow_reset
        #: Whether the endpoint serves every account and region.
        self.multi = brokers is not None
        self.brokers: ConsoleBrokers = OneBroker(broker) if brokers is None else brokers

    def visible(self, principal: str | None) -> list[ConsoleBroker]:
        """The brokers ``principal`` sees, the default first: every one without
        credentials (None), else those of its own account (as ListQueues
        lists the caller's own queues). O(brokers)."""
        return [b for b in self.brokers if principal is None or b.account_id == principal]

    def _broker(self, region: str | None, account: str | None) -> ConsoleBroker:
        if region is None or account is None:
            return self.broker
        broker = self.brokers.get(account, region)
        if broker is None:
            raise QueueDoesNotExist()
        return broker

    def ref(self, broker: ConsoleBroker, name: str) -> str:
        """The console's path of a queue under ``queues/``: its name in the
        default broker, ``REGION/ACCOUNT/NAME`` in any other."""
        if broker is self.broker:
            return name
        return f"{broker.region}/{broker.account_id}/{name}"

    # -- dispatch -------------------------------------------------------------------

    def route(self, method: str, parts: list[str]) -> Callable[..., Reply] | None:
        """The handler for ``method`` on ``/_sqsqueue/<parts...>``, bound to
        its path arguments; None when no route matches."""
        if parts == ["health"] and method == "GET":
            return self.health
        if parts == ["reset"] and method == "POST":
            return self.reset
        if parts[:1] != ["api"]:
            return None
        rest = parts[1:]
        if rest == ["queues"] and method == "GET":
            return self.queues
        if rest == ["clock", "advance"] and method == "POST":
            return self.advance
        found = queue_path(rest[1:]) if rest[:1] == ["queues"] else None
        if found is not None:
            region, account, name, tail = found
            action = "/".join(tail)
            table: dict[tuple[str, str], Callable[..., Reply]] = {
                ("GET", ""): self.queue,
                ("GET", "messages"): self.messages,
                ("GET", "history"): self.history,
                ("POST", "send"): self.send,
                ("POST", "delete"): self.delete,
                ("POST", "purge"): self.purge,
                ("POST", "redrive"): self.redrive,
                ("POST", "redrive/cancel"): self.cancel_redrive,
            }
            handler = table.get((method, action))
            if handler is None:
                return None

            def bound(principal: str | None, params: Mapping[str, Any]) -> Reply:
                return handler(principal, params, self._broker(region, account), name)

            return bound
        return None

    # -- operational ------------------------------------------------------------------

    def health(self, principal: str | None, params: Mapping[str, Any]) -> Reply:
        """``GET /_sqsqueue/health``: up, version, region, account, durability,
        queue count, the clock, and ``lenient``: for each leniency on, the
        requests it let through that AWS would have refused (``{}`` when the
        broker is strict), summed over every account and region. The rest is
        the default (account, region)'s. O(brokers x leniencies)."""
        broker = self.broker
        clock = broker.clock
        return 200, {
            "status": "up",
            "version": __version__,
            "region": broker.region,
            "account_id": broker.account_id,
            "durable": broker.data_dir is not None,
            "queues": len(broker),
            "clock": type(clock).__name__,
            "now": clock.now(),
            "reset_allowed": self.reset_allowed,
            "lenient": self.brokers.lenient_counts(),
        }

    @property
    def reset_allowed(self) -> bool:
        """A broker in memory may always be reset; a durable one only when
        serving was started with ``allow_reset``."""
        return self.allow_reset or all(b.data_dir is None for b in self.brokers)

    def reset(self, principal: str | None, params: Mapping[str, Any]) -> Reply:
        """``POST /_sqsqueue/reset``: every queue and move task forgotten, the
        configured queues made again, empty (``Broker.reset``), in every
        account and region; only the default account may. O(queues)."""
        if principal is not None and principal != self.broker.account_id:
            return 403, {
                "error": "AccessDenied",
                "message": "Only the broker's own account may reset it.",
            }
        if not self.reset_allowed:
            return 403, {
                "error": "ResetRefused",
                "message": "This broker is durable: reset erases its data directory's queues. "
                "Start serving with --allow-reset (allow_reset=True) to permit it.",
            }
        brokers = list(self.brokers)
        for broker in brokers:
            broker.reset()
        return 200, {"reset": True, "queues": sum(len(b) for b in brokers)}

    # -- reading ----------------------------------------------------------------------

    def _summary(self, broker: ConsoleBroker, queue: Queue | FifoQueue) -> dict[str, Any]:
        m = queue.metrics()
        policy = queue.get_attributes(["RedrivePolicy"]).get("RedrivePolicy")
        redrive = json.loads(policy) if policy else None
        return {
            "name": queue.name,
            "ref": self.ref(broker, queue.name),
            "account_id": broker.account_id,
            "region": broker.region,
            "url": queue.url,
            "arn": queue.arn,
            "fifo": queue.FIFO,
            "visible": m.approximate_number_of_messages_visible,
            "in_flight": m.approximate_number_of_messages_not_visible,
            "delayed": m.approximate_number_of_messages_delayed,
            "age": m.approximate_age_of_oldest_message,
            "sent": m.number_of_messages_sent,
            "received": m.number_of_messages_received,
            "deleted": m.number_of_messages_deleted,
            "dead_letter_queue": _arn_name(redrive["deadLetterTargetArn"]) if redrive else None,
            "max_receive_count": redrive["maxReceiveCount"] if redrive else None,
        }

    def queues(self, principal: str | None, params: Mapping[str, Any]) -> Reply:
        """``GET /_sqsqueue/api/queues?prefix=&token=&limit=``: a page of
        queues in name order with their live counts (ListQueues' paging); on
        an endpoint of every account and region, the brokers the caller sees
        one after the other (``brokers``: each one's account, region and
        queue count)."""
        limit = _number(params, "limit", 50, 1, QUEUES_PAGE_MAX)
        prefix = _text(params, "prefix")
        token = _text(params, "token")
        if not self.multi:
            if principal is not None and principal != self.broker.account_id:
                # As ListQueues: a key of another account lists its own queues, none here.
                return 200, {"queues": [], "next_token": None, "total": 0}
            page = self.broker.list_queues(prefix, max_results=limit, next_token=token)
            queues = self._summaries(self.broker, page.queue_urls)
            return 200, {
                "queues": queues,
                "next_token": page.next_token,
                "total": len(self.broker),
            }
        brokers = self.visible(principal)
        index, inner = _start(brokers, token)
        out: list[dict[str, Any]] = []
        next_token = None
        while index < len(brokers) and len(out) < limit:
            broker = brokers[index]
            page = broker.list_queues(prefix, max_results=limit - len(out), next_token=inner)
            out += self._summaries(broker, page.queue_urls)
            if page.next_token is not None:
                next_token = _token(broker, page.next_token)
                break
            index, inner = index + 1, None
        else:
            # The page is full at a broker's end: the next page starts at the
            # next broker holding a queue of the prefix (none: no next page).
            while index < len(brokers):
                if brokers[index].list_queues(prefix, max_results=1).queue_urls:
                    next_token = _token(brokers[index], None)
                    break
                index += 1
        return 200, {
            "queues": out,
            "next_token": next_token,
            "total": sum(len(b) for b in brokers),
            "brokers": [
                {"account_id": b.account_id, "region": b.region, "queues": len(b)} for b in brokers
            ],
        }

    def _summaries(self, broker: ConsoleBroker, urls: Iterable[str]) -> list[dict[str, Any]]:
        out = []
        for url in urls:
            try:
                out.append(self._summary(broker, broker.get_queue(url)))
            except SQSError:
                continue  # deleted meanwhile
        return out

    @staticmethod
    def _queue(broker: ConsoleBroker, name: str) -> Queue | FifoQueue:
        return broker.get_queue(name)

    def queue(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``GET /_sqsqueue/api/queues/<name>``: attributes, tags, counts, the
        queues that use it as their DLQ and its move tasks."""
        queue = self._queue(broker, name)
        attributes = queue.get_attributes(principal=principal)
        doc = self._summary(broker, queue)
        sources = broker.list_dead_letter_source_queues(
            queue.url, max_results=1000, principal=principal
        )
        doc["sources"] = [url.rsplit("/", 1)[-1] for url in sources.queue_urls]
        doc["move_tasks"] = (
            broker.list_message_move_tasks(queue.arn, max_results=10, principal=principal)
            if doc["sources"]
            else []
        )
        doc["attributes"] = attributes
        doc["tags"] = queue.list_tags(principal=principal)
        doc["keep_history"] = queue.keep_history
        doc["metrics"] = queue.metrics().as_cloudwatch()
        return 200, doc

    def messages(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``GET .../messages?after=&limit=&state=``: a page of messages in
        arrival order, read without receiving (``Queue.browse``)."""
        queue = self._queue(broker, name)
        after_raw = _text(params, "after")
        after = None if after_raw is None else _number(params, "after", 0, 0, 1 << 62)
        limit = _number(params, "limit", 50, 1, 1000)
        state = _text(params, "state")
        page = queue.browse(
            after, limit, states=None if state is None else [state], principal=principal
        )
        return 200, {
            "messages": [message_document(info) for info in page.messages],
            "next_after": page.next_after,
        }

    def history(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``GET .../history?message_id=``: one message's lifecycle events,
        when the queue keeps history."""
        queue = self._queue(broker, name)
        message_id = _text(params, "message_id", required=True)
        assert message_id is not None
        if not queue.keep_history:
            return 200, {"kept": False, "events": []}
        queue.get_attributes([], principal=principal)  # the caller may read this queue
        events = [
            {"time": e.time, "event": e.event, "detail": {k: str(v) for k, v in e.detail.items()}}
            for e in queue.history(message_id)
        ]
        return 200, {"kept": True, "events": events}

    # -- actions ----------------------------------------------------------------------

    def send(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``POST .../send`` ``{body, delay_seconds?, group_id?,
        deduplication_id?, attributes?: {name: string}}``: SendMessage."""
        queue = self._queue(broker, name)
        body = params.get("body")
        if not isinstance(body, str):
            raise InvalidParameterValue("The request must contain the parameter body (a string).")
        attributes = params.get("attributes") or None
        if attributes is not None and (
            not isinstance(attributes, dict)
            or not all(isinstance(v, str) for v in attributes.values())
        ):
            raise InvalidParameterValue(
                "Value for parameter attributes is invalid. Reason: must map names to strings."
            )
        delay = params.get("delay_seconds")
        result = queue.send(
            body,
            delay_seconds=None
            if delay in (None, "")
            else _number(params, "delay_seconds", 0, 0, 900),
            message_attributes=attributes,
            group_id=_text(params, "group_id"),
            deduplication_id=_text(params, "deduplication_id"),
            principal=principal,
        )
        return 200, {"message_id": result.message_id, "sequence_number": result.sequence_number}

    def delete(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``POST .../delete`` ``{position, message_id}``: delete one stored
        message, whatever its state (``Queue.remove``)."""
        queue = self._queue(broker, name)
        position = _number(params, "position", 0, 0, 1 << 62)
        message_id = _text(params, "message_id", required=True)
        assert message_id is not None
        deleted = queue.remove(position, message_id, principal=principal)
        return (200 if deleted else 404), {"deleted": deleted}

    def purge(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``POST .../purge``: PurgeQueue (once a minute, as SQS allows)."""
        self._queue(broker, name).purge(principal=principal)
        return 200, {"purged": True}

    def redrive(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``POST .../redrive`` ``{destination?, rate?}``: StartMessageMoveTask
        from this dead-letter queue, to its sources or to ``destination``."""
        queue = self._queue(broker, name)
        destination = _text(params, "destination")
        rate = params.get("rate")
        handle = broker.start_message_move_task(
            queue.arn,
            destination_arn=None if destination is None else self._queue(broker, destination).arn,
            max_number_of_messages_per_second=None
            if rate in (None, "")
            else _number(params, "rate", 1, 1, 500),
            principal=principal,
        )
        return 200, {"task_handle": handle}

    def cancel_redrive(
        self, principal: str | None, params: Mapping[str, Any], broker: ConsoleBroker, name: str
    ) -> Reply:
        """``POST .../redrive/cancel`` ``{task_handle}``: CancelMessageMoveTask."""
        handle = _text(params, "task_handle", required=True)
        assert handle is not None
        moved = broker.cancel_message_move_task(handle, principal=principal)
        return 200, {"moved": moved}

    def advance(self, principal: str | None, params: Mapping[str, Any]) -> Reply:
        """``POST /_sqsqueue/api/clock/advance`` ``{seconds}``: move a
        ``ManualClock`` forward (refused on any other clock)."""
        clock = self.broker.clock
        if not isinstance(clock, ManualClock):
            return 409, {
                "error": "NotAManualClock",
                "message": f"This broker runs on a {type(clock).__name__}: only a ManualClock "
                "can be advanced.",
            }
        if principal is not None and principal != self.broker.account_id:
            return 403, {
                "error": "AccessDenied",
                "message": "Only the broker's own account may move its clock.",
            }
        raw = params.get("seconds")
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= 86_400 * 30:
            raise InvalidParameterValue(
                f"Value {raw} for parameter seconds is invalid. Reason: must be a number of "
                "seconds above 0, at most 30 days."
            )
        now = clock.advance(raw)
        return 200, {"now": now}


def _token(broker: ConsoleBroker, inner: str | None) -> str:
    """The queue list's token on an endpoint of every account and region:
    the broker to go on in and its own ListQueues token."""
    doc = {"account": broker.account_id, "region": broker.region, "token": inner}
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode("ascii")


def _start(brokers: list[ConsoleBroker], token: str | None) -> tuple[int, str | None]:
    """Where a page of the queue list starts: (index in ``brokers``, the
    broker's ListQueues token). O(brokers)."""
    if token is None:
        return 0, None
    try:
        doc = json.loads(base64.urlsafe_b64decode(token.encode()))
        key = (doc["account"], doc["region"])
        inner = doc["token"]
        if not isinstance(inner, str | None):
            raise TypeError
        for index, broker in enumerate(brokers):
            if (broker.account_id, broker.region) == key:
                return index, inner
    except (ValueError, KeyError, TypeError, binascii.Error, RecursionError):
        pass
    raise InvalidParameterValue("Invalid token value.")
