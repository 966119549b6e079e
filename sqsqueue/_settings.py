"""A queue's settings: identity, attributes, tags and permissions, and the
steps every operation starts with; history and inspection. The base of
``_operations._BaseQueue``, on top of the lifecycle.

``GetQueueAttributes`` and ``SetQueueAttributes`` follow AWS's rules
(``_attributes.py`` parses and renders each value); a RedrivePolicy is checked
against its dead-letter queue (``_deadletter.py``). Tags follow section 4's
rules (``_admin.py``); permissions are statements of the queue's Policy
(``_policy.py``), which also decides who may call what (``_authorize``).
History is a lifecycle observer (``_lifecycle.History``); ``inspect`` lists
every stored message, ``browse`` a page of them, ``metrics`` reads the
CloudWatch metrics (``_metrics.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from sqsqueue import _attributes, _deadletter, _policy
from sqsqueue._admin import TAGS_MAX, validate_tags
from sqsqueue._clock import Clock
from sqsqueue._lenient import FIFO_QUEUE_FALSE, STRICT, Leniency
from sqsqueue._lifecycle import History, Lifecycle, by_send_order
from sqsqueue._limits import US
from sqsqueue._message import (
    R_BODY,
    R_COUNT,
    R_DEDUP,
    R_GROUP,
    R_ID,
    R_SIZE,
    R_SKEY,
    R_VKEY,
    SEQ_BITS,
    SEQ_MASK,
    X_ATTRS,
    X_ATTRS_MD5,
    X_BASE,
    X_SEQNO,
    HistoryEvent,
    MessageInfo,
    MessagePage,
    _Record,
    extra_of,
    key_time,
    last_key,
    receive_count_of,
    to_value,
)
from sqsqueue._metrics import QueueMetrics
from sqsqueue._validate import show
from sqsqueue._views import system_attributes
from sqsqueue.errors import (
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameterValue,
    QueueDoesNotExist,
    ServiceClosed,
)

#: The default of every AttributeNames-style parameter; ``names_of`` knows it by
#: identity, so the common call pays no validation.
ALL: tuple[str, ...] = ("All",)
#: A message's states, as ``inspect`` and ``browse`` name them.
STATES = ("visible", "in_flight", "delayed")
#: The most messages one ``browse`` call returns.
BROWSE_MAX = 1000


class Operating(Protocol):
    """What every operation uses of a queue (:class:`QueueSettings` gives it):
    its lock, the steps each starts with and the wake-up of long polls. The
    protocols of the operation modules (``_send.Sendable``,
    ``_receive.Receivable``, ``_acknowledge.Acknowledgeable``,
    ``_state.Stateful``) add what each uses besides."""

    _lock: threading.RLock

    def _begin(self) -> int: ...

    def _notify(self, count: int | None = None) -> None: ...

    def _authorize(
        self, principal: str | None, action: str, sender_id: str | None = None
    ) -> str | None: ...


class QueueSettings(Lifecycle):
    """Identity, attributes, tags, permissions, history and inspection of one queue."""

    #: A FIFO queue (FifoQueue) or a standard one (Queue).
    FIFO: ClassVar[bool] = False
    #: The AWS rules relaxed: its broker's (``Broker(lenient=...)``, set when
    #: the broker makes the queue); a standalone queue is strict.
    _leniency: Leniency = STRICT
    # Fields the queue's constructor sets (``_operations._BaseQueue.__init__``):
    _name: str
    _region: str
    _clock: Clock
    _lock: threading.RLock
    _values: dict[str, object]
    _tags: dict[str, str]
    _created: int
    _modified: int
    _last_now: int
    _deleted: bool
    _closed: bool
    # Fields kept from the attribute values (``_apply_config``, ``_apply_update``):
    _max_size: int
    _wait_s: int
    _visibility_us: int
    _max_receive_count: int

    # -- identity --------------------------------------------------------------

    @property
    def name(self) -> str:
        """The queue name."""
        return self._name

    @property
    def arn(self) -> str:
        """``arn:aws:sqs:<region>:<account>:<name>``."""
        return f"arn:aws:sqs:{self._region}:{self._account_id}:{self._name}"

    @property
    def url(self) -> str:
        """``https://sqs.<region>.amazonaws.com/<account>/<name>``."""
        return f"https://sqs.{self._region}.amazonaws.com/{self._account_id}/{self._name}"

    @property
    def clock(self) -> Clock:
        """The clock every deadline of this queue is measured on."""
        return self._clock

    # -- the steps every operation starts with --------------------------------

    def _now_us(self) -> int:
        # Queue time never runs backwards, even if a SystemClock is stepped
        # back: deadlines already issued keep their meaning.
        now = round(self._clock.now() * US)
        if now < self._last_now:
            return self._last_now
        self._last_now = now
        return now

    def _check_alive(self) -> None:
        if self._deleted:
            raise QueueDoesNotExist()
        if self._closed:
            raise ServiceClosed(f"The queue {self._name} is closed.")

    def _begin(self) -> int:
        """Start an operation, under the lock: the queue must exist and be open,
        and every deadline up to now is applied first. Returns now."""
        if self._deleted or self._closed:
            self._check_alive()
        # _now_us, inlined: every operation runs it. ``round(t)`` is
        # ``t.__round__()``: called directly, without the builtin's lookup of
        # it (a third of the reading's cost).
        now = (self._clock.now() * US).__round__()
        if now < self._last_now:
            now = self._last_now
        else:
            self._last_now = now
        # _advance acts only for a retention period that may have ended (the
        # expiry floor, or a record out of order), a lane deadline that
        # passed, a move task or a time window: tested on times (key_time),
        # no record looked up.
        if (
            self._expiry_floor > now
            and self._lane_min >> SEQ_BITS > now
            and self._tick is None
            and not self._windows
            and not self._out_of_order._len  # SortedList's length, without a call
        ):
            return now
        self._advance(now)
        return now

    def _authorize(
        self, principal: str | None, action: str, sender_id: str | None = None
    ) -> str | None:
        """Refuse ``action`` unless ``principal`` owns the queue or a policy
        statement grants it (see ``_policy.py``). Returns the SenderId to record."""
        if principal is None:
            return sender_id
        if principal == self._account_id:  # the owner, named by its account id
            return sender_id if sender_id is not None else principal
        account = _policy.caller_account(principal)
        if account != self._account_id:
            with self._lock:
                doc = self._values.get("Policy")
            if not _policy.is_allowed(doc, account, action, self.arn):  # type: ignore[arg-type]
                raise _policy.access_denied(self.url)
        return sender_id if sender_id is not None else account

    # -- attributes ----------------------------------------------------------

    def _apply_config(self) -> None:
        """Copy attribute values into the fields the hot path reads."""
        v = self._values
        self._visibility_us = _int(v["VisibilityTimeout"]) * US
        self._delay_s = _int(v["DelaySeconds"])
        self._retention_us = _int(v["MessageRetentionPeriod"]) * US
        self._expiry_floor = 0  # from the new period: _advance sets it
        self._max_size = _int(v["MaximumMessageSize"])
        self._wait_s = _int(v["ReceiveMessageWaitTimeSeconds"])

    def get_attributes(
        self, names: Iterable[str] = ALL, *, principal: str | None = None
    ) -> dict[str, str]:
        """Queue attributes as AWS's strings (GetQueueAttributes).

        ``names`` may hold ``"All"``; no names gives ``{}``. Unknown names raise
        InvalidAttributeName. Runtime complexity: O(log n).
        """
        self._authorize(principal, "GetQueueAttributes")
        wanted = names_of("AttributeNames", names)
        with self._lock:
            now = self._begin()
            if not wanted:
                return {}
            everything = "All" in wanted
            for name in wanted:
                if name == "All":
                    continue
                if name not in _attributes.READ_ONLY and name not in self._values:
                    raise InvalidAttributeName(f"Unknown Attribute {name}.")
            visible, in_flight, delayed = self._counts(now)
            computed = {
                "ApproximateNumberOfMessages": visible,
                "ApproximateNumberOfMessagesNotVisible": in_flight,
                "ApproximateNumberOfMessagesDelayed": delayed,
                "CreatedTimestamp": self._created,
                "LastModifiedTimestamp": self._modified,
                "QueueArn": self.arn,
            }
            out: dict[str, str] = {}
            for name in _attributes.ALL_NAMES:
                if not everything and name not in wanted:
                    continue
                value = computed[name] if name in computed else self._values.get(name)
                if value is None:
                    continue  # Policy, RedrivePolicy, Kms* are absent until set
                out[name] = _attributes.render(name, value)
            return out

    def set_attributes(
        self,
        attributes: Mapping[str, object] | None = None,
        /,
        *,
        principal: str | None = None,
        **kwargs: object,
    ) -> None:
        """Change queue attributes (SetQueueAttributes).

        Accepts AWS names (``{"VisibilityTimeout": "60"}``) or keywords
        (``visibility_timeout=60``). Everything is validated before anything
        changes. A shorter retention period applies to stored messages at once;
        a new DelaySeconds applies to stored messages on FIFO queues only.
        Runtime complexity: O(1), plus the messages it expires.
        """
        self._authorize(principal, "SetQueueAttributes")
        requested = attribute_map(attributes)
        requested.update(kwargs)
        relaxed = False
        if (
            not self.FIFO
            and ("FifoQueue" in requested or "fifo_queue" in requested)
            and self._leniency.allows(FIFO_QUEUE_FALSE)
        ):
            relaxed = _drop_fifo_false(requested)
        with self._lock:
            self._check_alive()
            now = self._now_us()
            update = _attributes.parse(
                requested, fifo=self.FIFO, creating=False, current=self._values
            )
            _deadletter.check_redrive_policy(self, update)  # type: ignore[arg-type]
            self._advance(now)
            self._values.update(update)
            _attributes.apply_sse(self._values, update)
            self._apply_config()
            self._apply_update(update)
            self._modified = now // US
            self._queue_changed("settings")
            self._notify()
        if relaxed:
            self._leniency.count(FIFO_QUEUE_FALSE)

    def _apply_update(self, update: Mapping[str, object]) -> None:
        """Effects of an applied update beyond the stored values."""
        if "RedrivePolicy" in update:
            policy = update["RedrivePolicy"]
            self._max_receive_count = policy["maxReceiveCount"] if isinstance(policy, dict) else 0

    @property
    def attributes(self) -> dict[str, str]:
        """All queue attributes (``get_attributes(["All"])``)."""
        return self.get_attributes()

    # -- tags and permissions ------------------------------------------------

    def _set_tags(self, tags: Mapping[str, str]) -> None:
        if len({**self._tags, **tags}) > TAGS_MAX:
            raise InvalidParameterValue(f"Too many tags added for queue {self._name}.")
        self._tags.update(tags)

    def tag(self, tags: Mapping[str, str], *, principal: str | None = None) -> None:
        """Add or overwrite tags (TagQueue); at most 50 per queue. O(t)."""
        self._authorize(principal, "TagQueue")
        clean = validate_tags(tags)
        with self._lock:
            self._check_alive()
            self._set_tags(clean)
            self._queue_changed("settings")

    def untag(self, keys: Iterable[str], *, principal: str | None = None) -> None:
        """Remove tags (UntagQueue); unknown keys are ignored (AWS-obs). O(t)."""
        self._authorize(principal, "UntagQueue")
        if isinstance(keys, str) or not isinstance(keys, Iterable):
            raise InvalidParameterValue(
                f"Value {show(keys)} for parameter TagKeys is invalid. Reason: must be a list."
            )
        key_list = list(keys)
        if not all(isinstance(k, str) for k in key_list):
            raise InvalidParameterValue(
                "Value for parameter TagKeys is invalid. Reason: keys must be strings."
            )
        with self._lock:
            self._check_alive()
            for key in key_list:
                self._tags.pop(key, None)
            self._queue_changed("settings")

    def list_tags(self, *, principal: str | None = None) -> dict[str, str]:
        """The queue's tags (ListQueueTags). O(t)."""
        self._authorize(principal, "ListQueueTags")
        with self._lock:
            self._check_alive()
            return dict(self._tags)

    def add_permission(
        self,
        label: str,
        account_ids: Sequence[str],
        actions: Sequence[str],
        *,
        principal: str | None = None,
    ) -> None:
        """Grant ``actions`` on this queue to ``account_ids`` (AddPermission).

        Adds a statement labelled ``label`` to the queue's Policy. O(s) for s
        statements.
        """
        self._authorize(principal, "AddPermission")
        with self._lock:
            self._check_alive()
            current: Any = self._values.get("Policy")
            self._values["Policy"] = _policy.add_statement(
                current, self.arn, label, account_ids, actions
            )
            self._queue_changed("settings")

    def remove_permission(self, label: str, *, principal: str | None = None) -> None:
        """Remove the statement labelled ``label`` (RemovePermission). O(s)."""
        self._authorize(principal, "RemovePermission")
        with self._lock:
            self._check_alive()
            current: Any = self._values.get("Policy")
            self._values["Policy"] = _policy.remove_statement(current, label)
            self._queue_changed("settings")

    # -- history and inspection ----------------------------------------------

    @property
    def keep_history(self) -> bool:
        """Record every message's history (see :meth:`history`); off by default
        because it costs memory per message."""
        return self._history() is not None

    @keep_history.setter
    def keep_history(self, value: bool) -> None:
        with self._lock:
            history = self._history()
            if value and history is None:
                self._add_observer(History())
            elif not value and history is not None:
                self._observers = tuple(o for o in self._observers if o is not history)

    def _history(self) -> History | None:
        for observer in self._observers:
            if isinstance(observer, History):
                return observer
        return None

    def history(self, message_id: str) -> list[HistoryEvent]:
        """What happened to one message in this queue, oldest first: ``sent``,
        ``received``, ``visibility_changed``, ``deleted``, ``expired``,
        ``dead_lettered``, ``dead_letter_arrived``, ``moved``, ``purged``.
        Needs :attr:`keep_history`. O(e) for e events."""
        with self._lock:
            history = self._history()
            if history is None:
                raise InvalidParameterValue(
                    "History is not recorded for this queue: set keep_history = True first."
                )
            if not isinstance(message_id, str):
                raise InvalidParameterValue(
                    f"Value {show(message_id)} for parameter message_id is invalid. "
                    "Reason: must be a MessageId string."
                )
            self._advance(self._now_us())
            return list(history.events.get(message_id, ()))

    def inspect(self) -> list[MessageInfo]:
        """Every stored message with its state, receive count and deadlines,
        without receiving or changing anything. For tests and debugging: this
        one call is O(n log n) in the queue's depth, as it must list it all
        (:meth:`browse` pages instead)."""
        with self._lock:
            now = self._begin()
            fresh_bound = self._ordering.fresh_bound(now)
            bound = last_key(now)
            return [
                self._info(rec, now, fresh_bound, bound)
                for rec in by_send_order(self._records.values())
            ]

    def browse(
        self,
        after: int | None = None,
        limit: int = 100,
        *,
        states: Iterable[str] | None = None,
        principal: str | None = None,
    ) -> MessagePage:
        """A page of stored messages in arrival order, without receiving or
        changing any: no visibility, receive count or first-receive time moves
        (a peek, for consoles and tests).

        ``after`` is the ``position`` of the last message of the previous page
        (``MessagePage.next_after``); ``limit`` 1..1000; ``states`` keeps only
        messages in those states (``visible``, ``in_flight``, ``delayed``).
        Expired messages go first, as with any operation. Runtime complexity:
        O(limit + s) for s positions skipped: messages deleted between two on
        the page and, with ``states``, messages in other states; never the
        whole queue for a page of a queue in one state. ``principal`` (an
        account id) needs ReceiveMessage on the queue, as a receive would.
        """
        self._authorize(principal, "ReceiveMessage")
        if after is not None and (isinstance(after, bool) or not isinstance(after, int)):
            raise InvalidParameterValue(
                f"Value {show(after)} for parameter after is invalid. Reason: must be a "
                "position (an integer) or None."
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= BROWSE_MAX:
            raise InvalidParameterValue(
                f"Value {show(limit)} for parameter limit is invalid. Reason: must be an "
                f"integer from 1 to {BROWSE_MAX}."
            )
        wanted = None
        if states is not None:
            wanted = frozenset(names_of("states", states))
            unknown = sorted(wanted - set(STATES))
            if unknown:
                raise InvalidParameterValue(
                    f"Value {show(unknown[0])} for parameter states is invalid. Reason: a "
                    f"state is one of {', '.join(STATES)}."
                )
        with self._lock:
            now = self._begin()
            records = self._records
            if not records:
                return MessagePage(())
            fresh_bound = self._ordering.fresh_bound(now)
            bound = last_key(now)
            # Positions are the records' sequence numbers: the dict holds them
            # in arrival order, so its first key is the lowest live one.
            seq = next(iter(records))
            if after is not None and after >= seq:
                seq = after + 1
            last = self._seq
            out: list[MessageInfo] = []
            while seq <= last and len(out) < limit:
                rec = records.get(seq)
                seq += 1
                if rec is None:
                    continue
                info = self._info(rec, now, fresh_bound, bound)
                if wanted is None or info.state in wanted:
                    out.append(info)
            return MessagePage(tuple(out), seq - 1 if seq <= last else None)

    def _info(self, rec: _Record, now: int, fresh_bound: int, bound: int) -> MessageInfo:
        """What inspect and browse say of one record at ``now``. O(a) for a attributes."""
        vkey = rec[R_VKEY]
        if not rec[R_COUNT]:
            state = "delayed" if vkey > fresh_bound else "visible"
            # fresh_bound is shifted back by the FIFO queue delay, if any.
            shift = now - key_time(fresh_bound)
            visible_at = (key_time(vkey) + shift) / US
        else:
            state = "in_flight" if vkey > bound else "visible"
            visible_at = key_time(vkey) / US
        rec = self._realized(rec)
        extra = extra_of(rec)
        number = extra[X_SEQNO]
        return MessageInfo(
            message_id=rec[R_ID],
            body=rec[R_BODY],
            state=state,
            receive_count=extra[X_BASE] + receive_count_of(rec),
            sent_at=key_time(rec[R_SKEY]) / US,
            visible_at=visible_at,
            group_id=rec[R_GROUP],
            deduplication_id=rec[R_DEDUP],
            sequence_number=None if number is None else str(number),
            position=rec[R_SKEY] & SEQ_MASK,
            attributes=system_attributes(rec, ALL),
            message_attributes={a[0]: to_value(a) for a in extra[X_ATTRS] or ()},
            md5_of_message_attributes=extra[X_ATTRS_MD5],
            size=rec[R_SIZE],
        )

    def metrics(self) -> QueueMetrics:
        """This queue's CloudWatch metrics now (``_metrics.py``): counters
        since the queue was made in this process, exact gauges, the age of
        the message that arrived first. Changes no message. O(log n)."""
        with self._lock:
            now = self._begin()
            visible, in_flight, delayed = self._counts(now)
            first = self._oldest_arrival()
            age = 0 if first is None else max(0, now - first) // US
            tally = self._tally
            if tally is None:
                return QueueMetrics(self._name, 0, 0, 0, 0, 0, visible, in_flight, delayed, age)
            return QueueMetrics(
                self._name,
                tally.sent,
                tally.received,
                tally.deleted,
                tally.empty_receives,
                tally.sent_bytes,
                visible,
                in_flight,
                delayed,
                age,
                tally.deduplicated if self.FIFO else None,
            )


def names_of(param: str, value: object) -> tuple[str, ...]:
    """An AttributeNames-style list of strings, or AWS's error."""
    if value is ALL or value is None:
        return ALL if value is ALL else ()  # the defaults: nothing to check
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        out = tuple(value)
        if all(isinstance(v, str) for v in out):
            return out
    raise InvalidParameterValue(
        f"Value {show(value)} for parameter {param} is invalid. Reason: must be a list of strings."
    )


def attribute_map(value: object) -> dict[str, object]:
    """A queue-attribute request: a mapping (or None), never a bare TypeError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter Attributes is invalid. Reason: must be a "
            "mapping of attribute name to value."
        )
    return dict(value)


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _drop_fifo_false(requested: dict[str, object]) -> bool:
    """Take ``FifoQueue=false`` out of a standard queue's SetQueueAttributes
    (leniency ``fifo-queue-false``): whether it was there. Another FifoQueue
    value stays, for the attribute rules to refuse. O(1)."""
    dropped = False
    for key in ("FifoQueue", "fifo_queue"):
        if key in requested:
            try:
                value = _attributes.ATTRIBUTES["FifoQueue"].parse("FifoQueue", requested[key])
            except InvalidAttributeValue:
                continue
            if value is False:
                del requested[key]
                dropped = True
    return dropped
