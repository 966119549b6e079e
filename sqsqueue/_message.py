"""Messages: the stored record, the values callers get back, and the MD5s.

Values out, records in (``docs/design.md`` principle 7): callers receive frozen
``attrs`` classes (:class:`Message`, :class:`SendResult`, ...); a queue keeps a
plain tuple per message (``_Record``), which the cyclic garbage collector
stops tracking, and replaces it on each change (see "the stored record").
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import attrs

__all__ = [
    "BatchFailure",
    "BatchResult",
    "ChangeVisibilityEntry",
    "DeleteEntry",
    "Message",
    "MessageAttributeValue",
    "MessagePage",
    "SendEntry",
    "SendResult",
]

#: The shared, read-only empty mapping of a message without attributes.
_EMPTY: Mapping[str, Any] = MappingProxyType({})

#: Bits reserved for the per-queue sequence number in packed index keys.
SEQ_BITS = 40
SEQ_MASK = (1 << SEQ_BITS) - 1


# -- packed index keys ----------------------------------------------------------
#
# An index key packs a time (integer microseconds) above a message's sequence
# number: ``time << SEQ_BITS | seq``. Keys are unique plain ints that order by
# time, then by send order. These four helpers say what the arithmetic means;
# the per-message transitions of ``_lifecycle`` and ``_ordering`` inline them
# (a call costs about 5% of a send+receive+delete cycle), and every inlined
# copy names the helper it stands for in a comment.


def key_at(t: int, seq: int) -> int:
    """The key of message ``seq`` at time ``t``."""
    return (t << SEQ_BITS) | seq


def last_key(t: int) -> int:
    """The largest key at time ``t``: every key ``<= last_key(t)`` is due by ``t``."""
    return (t << SEQ_BITS) | SEQ_MASK


def key_time(key: int) -> int:
    """The time a key holds."""
    return key >> SEQ_BITS


def key_seq(key: int) -> int:
    """The sequence number a key holds."""
    return key & SEQ_MASK


@attrs.frozen
class MessageAttributeValue:
    """A message attribute: ``String``, ``Number`` or ``Binary``, with an
    optional custom suffix (``Number.int``, ``Binary.gif``), section 6.

    >>> MessageAttributeValue("String", string_value="foobar")
    MessageAttributeValue(data_type='String', string_value='foobar', binary_value=None)
    """

    data_type: str
    string_value: str | None = None
    binary_value: bytes | None = None

    def to_aws(self) -> dict[str, object]:
        """The boto3 shape: ``{"DataType": ..., "StringValue": ...}``."""
        out: dict[str, object] = {"DataType": self.data_type}
        if self.string_value is not None:
            out["StringValue"] = self.string_value
        if self.binary_value is not None:
            out["BinaryValue"] = self.binary_value
        return out

    @property
    def value(self) -> str | bytes:
        """The string value, or the bytes of a Binary attribute."""
        if self.binary_value is not None:
            return self.binary_value
        assert self.string_value is not None
        return self.string_value


#: A stored attribute: (name, data type, value); value is str or bytes.
StoredAttribute = tuple[str, str, "str | bytes"]


def _utf16_key(name: str) -> bytes:
    # Java's String.compareTo orders by UTF-16 code units; the SDKs that check
    # MD5s sort that way (section 7.2, step 1).
    return name.encode("utf-16-be", "surrogatepass")


def sort_attributes(attrs_: list[StoredAttribute]) -> tuple[StoredAttribute, ...]:
    """Order attributes as the MD5 algorithm requires."""
    return tuple(sorted(attrs_, key=lambda a: _utf16_key(a[0])))


_LEN = struct.Struct(">I").pack


def md5_of_attributes(attributes: tuple[StoredAttribute, ...]) -> str:
    """MD5OfMessageAttributes exactly as AWS computes it (section 7.2).

    ``attributes`` must already be in :func:`sort_attributes` order.

    >>> md5_of_attributes((("MyAttribute", "String", "foobar"),))
    'adb59cd4678ea5a855436b949cd07ab6'
    """
    buf = bytearray()
    for name, data_type, value in attributes:
        encoded_name = name.encode("utf-8")
        encoded_type = data_type.encode("utf-8")
        buf += _LEN(len(encoded_name))
        buf += encoded_name
        buf += _LEN(len(encoded_type))
        buf += encoded_type
        if isinstance(value, str):
            raw = value.encode("utf-8")
            buf += b"\x01"
        else:
            raw = value
            buf += b"\x02"
        buf += _LEN(len(raw))
        buf += raw
    return hashlib.md5(bytes(buf), usedforsecurity=False).hexdigest()


#: Bodies up to this many bytes are hashed by CPython's own MD5, larger ones
#: by OpenSSL's: the built-in costs about 300 ns a 100-byte body against
#: OpenSSL's 470 (whose context set-up dominates), and is slower per byte,
#: so OpenSSL wins past about a kilobyte. Where the interpreter was built
#: without its own hashes, OpenSSL hashes every body.
SMALL_MD5 = 1024


def _openssl_md5(raw: bytes) -> Any:
    return hashlib.md5(raw, usedforsecurity=False)


try:
    # No type stub: CPython's own MD5 module, absent where it was built without.
    from _md5 import md5 as _builtin_md5  # type: ignore[import-not-found]
except ImportError:
    _builtin_md5 = None
#: The MD5 of a body of at most SMALL_MD5 bytes.
small_md5: Callable[[bytes], Any] = _builtin_md5 or _openssl_md5


def md5_of_body(body: str) -> str:
    """MD5OfMessageBody: lower-case hex MD5 of the UTF-8 body (section 7.1).

    >>> md5_of_body("test")
    '098f6bcd4621d373cade4e832627b4f6'
    """
    raw = body.encode("utf-8")
    if len(raw) <= SMALL_MD5:
        return small_md5(raw).hexdigest()  # type: ignore[no-any-return]
    return hashlib.md5(raw, usedforsecurity=False).hexdigest()


def system_attributes_md5(trace_header: str | None) -> str | None:
    """MD5OfMessageSystemAttributes (section 7.3)."""
    if trace_header is None:
        return None
    return md5_of_attributes((("AWSTraceHeader", "String", trace_header),))


def to_value(stored: StoredAttribute) -> MessageAttributeValue:
    _name, data_type, value = stored
    if isinstance(value, str):
        return MessageAttributeValue(data_type, string_value=value)
    return MessageAttributeValue(data_type, binary_value=value)


#: Every stored field of a message, declared once: ``(name, SQLite column
#: type)`` in the order of the durable store's ``messages`` columns, which
#: ``_durable.py`` derives its table, statements and restore from, and by which
#: ``tests/_mirror.py`` compares records. ``seq`` and ``sent`` are the two
#: halves of a record's ``skey`` and ``due`` the time in its ``vkey``
#: (:data:`KEY_COLUMNS`); every other name is a field a record holds, read by
#: :func:`fields_of` in this order and given back by :func:`record_of`.
#: Adding a field here changes the store's schema (``_durable.SCHEMA_VERSION``).
FIELDS: tuple[tuple[str, str], ...] = (
    ("seq", "INTEGER NOT NULL"),
    ("message_id", "TEXT NOT NULL"),
    ("body", "TEXT NOT NULL"),
    ("size", "INTEGER NOT NULL"),
    ("attributes", "TEXT"),  # a tuple of StoredAttribute, stored as JSON
    ("attributes_md5", "TEXT"),
    ("sender_id", "TEXT NOT NULL"),
    ("sent", "INTEGER NOT NULL"),
    ("due", "INTEGER NOT NULL"),
    ("receive_count", "INTEGER NOT NULL"),
    ("receive_base", "INTEGER NOT NULL"),
    ("first_receive", "INTEGER NOT NULL"),
    ("receipt_no", "INTEGER NOT NULL"),
    ("receive_cap", "INTEGER NOT NULL"),
    ("rehides", "INTEGER NOT NULL"),
    ("token", "BLOB"),
    ("group_id", "TEXT"),
    ("dedup_id", "TEXT"),
    ("sequence_number", "TEXT"),  # an int of 20 digits, past SQLite's 64-bit integers
    ("trace_header", "TEXT"),
    ("dlq_source_arn", "TEXT"),
)
#: The columns of :data:`FIELDS` that the record packs into its keys.
KEY_COLUMNS = ("seq", "sent", "due")
#: The record's own fields of :data:`FIELDS`, in :func:`fields_of`'s order.
RECORD_FIELDS = tuple(name for name, _ in FIELDS if name not in KEY_COLUMNS)


# -- the stored record ------------------------------------------------------------
#
# One stored message is a plain ``tuple`` (the alias ``_Record``), never
# mutated: a transition builds the next one and puts it where the last one
# was (the lifecycle's ``_records`` and the index the message moves into).
# Why a tuple (``docs/architecture.md``, "What the collector sees"): CPython's
# cyclic collector untracks an exact tuple whose items are all untracked or
# of types it never tracks (str, int, bytes, None, and such tuples) the first
# time a collection examines it, so a stored message costs the collector
# nothing after its first young collection, where an instance of a class
# (slotted or not) stays tracked for life and every full collection walks it.
# So a record holds only atoms and such tuples: never a list, dict or object
# (the FIFO ordering's chains name records by sequence number, not by
# reference to anything the record holds).
#
# The fields, by index (every hot path reads them as ``rec[R_...]``, with
# these constants: ``rec[1]`` would be no faster and unreadable):
#
# * ``R_SKEY``: ``key_at(enqueue time, seq)`` (retention counts from it).
# * ``R_VKEY``: ``key_at(t, seq)`` where t is when the message becomes
#   receivable: the end of its delay before its first receive, the end of
#   its visibility timeout after.
# * ``R_ID``, ``R_BODY``, ``R_SIZE``, ``R_SENDER``: message id, body, size
#   counted against MaximumMessageSize, SenderId. The id is None in a FIFO
#   message sent here and not yet received: its id and its sequence number
#   are functions of its sequence number (``Lifecycle._realized`` gives the
#   record with both; a receive stores them), 120 bytes a message less.
# * ``R_COUNT``, ``R_RECEIPT``, ``R_TOKEN``, ``R_FIRST``, ``R_CAP``,
#   ``R_REHIDES``: the receive state: receive count (0: never received,
#   the state checks call "fresh"), latest receipt number and its token
#   (None before the first receive), first receive time (a dead letter
#   keeps its source's), the 12-hour visibility cap, visibility changes.
# * ``R_EXTRA``: None for a plain message (the common case: no attributes,
#   trace header, group, stored sequence number or dead-letter past), else a
#   tuple indexed by ``X_...``: (attributes, attributes_md5, trace_header,
#   sequence_number, receive_base, dlq_source_arn). A message whose only
#   field beyond the plain ones is its group (and a FIFO message's
#   deduplication id) holds ``NO_EXTRA``, the one shared tuple of defaults:
#   so "R_EXTRA is None" alone tells the receive views a message is plain,
#   at no cost a message.
# * ``R_GROUP``, ``R_DEDUP``: a FIFO message's group id and deduplication id
#   (None in a standard queue's).
#
# Folding the rare fields into one optional tuple keeps a plain message at 15
# items (160 bytes) where the slotted class took 200; the receive state is
# flat, so a receive builds one tuple, and a collection untracks a plain
# record the first time it sees it. A FIFO message's two ids are fields of
# their own: in the optional tuple, every FIFO message would carry one (88
# bytes more than two slots).
(
    R_SKEY,
    R_VKEY,
    R_ID,
    R_BODY,
    R_SIZE,
    R_SENDER,
    R_COUNT,
    R_RECEIPT,
    R_TOKEN,
    R_FIRST,
    R_CAP,
    R_REHIDES,
    R_EXTRA,
    R_GROUP,
    R_DEDUP,
) = range(15)
X_ATTRS, X_ATTRS_MD5, X_TRACE, X_SEQNO, X_BASE, X_DLQ_ARN = range(6)

#: A stored message (see above): a tuple of atoms and atom tuples.
_Record = tuple[Any, ...]

#: The extra fields of a message that has none (shared: see R_EXTRA above).
NO_EXTRA = (None, None, None, None, 0, None)


def make_extra(
    attributes: tuple[StoredAttribute, ...] | None = None,
    attributes_md5: str | None = None,
    trace_header: str | None = None,
    sequence_number: int | None = None,
    receive_base: int = 0,
    dlq_source_arn: str | None = None,
) -> tuple[Any, ...] | None:
    """A record's ``R_EXTRA``: None when every field is unset."""
    extra = (
        attributes,
        attributes_md5,
        trace_header,
        sequence_number,
        receive_base,
        dlq_source_arn,
    )
    return None if extra == NO_EXTRA else extra


def extra_of(rec: _Record) -> tuple[Any, ...]:
    """``rec``'s extra fields, the defaults when it has none."""
    extra: tuple[Any, ...] | None = rec[R_EXTRA]
    return NO_EXTRA if extra is None else extra


# Readers for the paths that are not hot (the hot ones index the tuple).


def attributes_of(rec: _Record) -> tuple[StoredAttribute, ...] | None:
    extra = rec[R_EXTRA]
    return None if extra is None else extra[X_ATTRS]


def attributes_md5_of(rec: _Record) -> str | None:
    extra = rec[R_EXTRA]
    return None if extra is None else extra[X_ATTRS_MD5]


def trace_header_of(rec: _Record) -> str | None:
    extra = rec[R_EXTRA]
    return None if extra is None else extra[X_TRACE]


def group_id_of(rec: _Record) -> str | None:
    group: str | None = rec[R_GROUP]
    return group


def dedup_id_of(rec: _Record) -> str | None:
    dedup: str | None = rec[R_DEDUP]
    return dedup


def sequence_number_of(rec: _Record) -> int | None:
    extra = rec[R_EXTRA]
    return None if extra is None else extra[X_SEQNO]


def receive_base_of(rec: _Record) -> int:
    extra = rec[R_EXTRA]
    base: int = 0 if extra is None else extra[X_BASE]
    return base


def dlq_source_arn_of(rec: _Record) -> str | None:
    extra = rec[R_EXTRA]
    return None if extra is None else extra[X_DLQ_ARN]


def receive_count_of(rec: _Record) -> int:
    count: int = rec[R_COUNT]
    return count


def receipt_no_of(rec: _Record) -> int:
    receipt_no: int = rec[R_RECEIPT]
    return receipt_no


def token_of(rec: _Record) -> bytes | None:
    token: bytes | None = rec[R_TOKEN]
    return token


def first_receive_of(rec: _Record) -> int:
    """When ``rec`` was first received (here, or, for a dead letter not yet
    received here, in the queue it came from); 0 if never."""
    first: int = rec[R_FIRST]
    return first


def receive_cap_of(rec: _Record) -> int:
    cap: int = rec[R_CAP]
    return cap


def rehides_of(rec: _Record) -> int:
    rehides: int = rec[R_REHIDES]
    return rehides


def seq_of(rec: _Record) -> int:
    seq: int = rec[R_SKEY] & SEQ_MASK
    return seq


def record_fields(rec: _Record) -> tuple[Any, ...]:
    """The fields of :data:`RECORD_FIELDS` of ``rec``, in that order (a test
    holds the two together). O(1)."""
    x = rec[R_EXTRA] or NO_EXTRA
    return (
        rec[R_ID],
        rec[R_BODY],
        rec[R_SIZE],
        x[X_ATTRS],
        x[X_ATTRS_MD5],
        rec[R_SENDER],
        rec[R_COUNT],
        x[X_BASE],
        rec[R_FIRST],
        rec[R_RECEIPT],
        rec[R_CAP],
        rec[R_REHIDES],
        rec[R_TOKEN],
        rec[R_GROUP],
        rec[R_DEDUP],
        x[X_SEQNO],
        x[X_TRACE],
        x[X_DLQ_ARN],
    )


def fields_of(rec: _Record) -> dict[str, Any]:
    """Every field of :data:`RECORD_FIELDS` of ``rec``, by name."""
    return dict(zip(RECORD_FIELDS, record_fields(rec), strict=True))


def record_state(rec: _Record) -> tuple[Any, ...]:
    """``(skey, vkey, *fields in RECORD_FIELDS order)``: everything the
    durable store keeps of ``rec`` (``tests/_mirror.py`` compares these)."""
    return (rec[R_SKEY], rec[R_VKEY], *record_fields(rec))


class RecordView(NamedTuple):
    """A record's fields by name (:func:`view`): for tests, checks and
    debugging, never a hot path. ``skey``, ``vkey``, then :data:`RECORD_FIELDS`."""

    skey: int
    vkey: int
    message_id: str
    body: str
    size: int
    attributes: tuple[StoredAttribute, ...] | None
    attributes_md5: str | None
    sender_id: str
    receive_count: int
    receive_base: int
    first_receive: int
    receipt_no: int
    receive_cap: int
    rehides: int
    token: bytes | None
    group_id: str | None
    dedup_id: str | None
    sequence_number: int | None
    trace_header: str | None
    dlq_source_arn: str | None

    @property
    def seq(self) -> int:
        return key_seq(self.skey)

    @property
    def sent(self) -> int:
        return key_time(self.skey)

    @property
    def due(self) -> int:
        return key_time(self.vkey)


def view(rec: _Record) -> RecordView:
    """``rec``'s fields by name. O(1)."""
    return RecordView(*record_state(rec))


def record_of(skey: int, vkey: int, **fields: Any) -> _Record:
    """The record with keys ``skey``, ``vkey`` and the named fields of
    :data:`RECORD_FIELDS` (the rest take their defaults): the durable
    store's restore, a dead letter's arrival. Not for the send path."""
    extra = make_extra(
        fields.get("attributes"),
        fields.get("attributes_md5"),
        fields.get("trace_header"),
        fields.get("sequence_number"),
        fields.get("receive_base", 0),
        fields.get("dlq_source_arn"),
    )
    group_id = fields.get("group_id")
    if extra is None and group_id is not None:
        extra = NO_EXTRA  # see R_EXTRA
    return (
        skey,
        vkey,
        fields.get("message_id", ""),
        fields["body"],
        fields["size"],
        fields.get("sender_id", ""),
        fields.get("receive_count", 0),
        fields.get("receipt_no", 0),
        fields.get("token"),
        fields.get("first_receive", 0),
        fields.get("receive_cap", 0),
        fields.get("rehides", 0),
        extra,
        group_id,
        fields.get("dedup_id"),
    )


def show_record(rec: _Record) -> str:
    """A short description of ``rec`` for assertion messages."""
    return (
        f"record(seq={seq_of(rec)}, id={rec[R_ID]!r}, due={key_time(rec[R_VKEY])}, "
        f"receives={receive_count_of(rec)})"
    )


def draft(
    body: str,
    size: int,
    attributes: tuple[StoredAttribute, ...] | None,
    attributes_md5: str | None,
    trace_header: str | None,
    group_id: str | None,
    dedup_id: str | None,
) -> _Record:
    """A validated message ready to send: a record without sequence number, id,
    sender or times yet (``Lifecycle._stamp`` makes the stored record from
    it, under the lock)."""
    extra: tuple[Any, ...] | None
    if attributes is None and attributes_md5 is None and trace_header is None:
        extra = None if group_id is None else NO_EXTRA
    else:
        extra = (attributes, attributes_md5, trace_header, None, 0, None)
    return (0, 0, "", body, size, "", 0, 0, None, 0, 0, 0, extra, group_id, dedup_id)


class Message(NamedTuple):
    """A received message (the ``Message`` shape of ReceiveMessage).

    ``attributes`` holds the message system attributes that were asked for
    (``SentTimestamp``, ``ApproximateReceiveCount``, ...), as AWS's strings;
    ``message_attributes`` the user attributes that were asked for, with
    ``md5_of_message_attributes`` covering exactly those.

    An immutable named tuple rather than an attrs class: one is built per
    message received, and a tuple costs half as much to make.
    """

    message_id: str
    receipt_handle: str
    body: str
    attributes: Mapping[str, str] = _EMPTY
    message_attributes: Mapping[str, MessageAttributeValue] = _EMPTY
    md5_of_message_attributes: str | None = None

    @property
    def md5_of_body(self) -> str:
        """MD5OfBody (section 7.1), computed when read: most in-process
        consumers never read it."""
        return md5_of_body(self.body)

    def to_aws(self) -> dict[str, object]:
        """The boto3 ``Message`` dict: empty collections omitted, as AWS does."""
        out: dict[str, object] = {
            "MessageId": self.message_id,
            "ReceiptHandle": self.receipt_handle,
            "MD5OfBody": self.md5_of_body,
            "Body": self.body,
        }
        if self.attributes:
            out["Attributes"] = dict(self.attributes)
        if self.message_attributes:
            out["MD5OfMessageAttributes"] = self.md5_of_message_attributes
            out["MessageAttributes"] = {k: v.to_aws() for k, v in self.message_attributes.items()}
        return out


@attrs.frozen
class HistoryEvent:
    """One step in a message's life (see ``Queue.history``)."""

    time: float
    event: str
    detail: Mapping[str, object] = attrs.field(factory=dict)


@attrs.frozen
class MessageInfo:
    """A stored message as ``Queue.inspect`` reports it, without receiving it.

    ``state`` is ``"delayed"``, ``"visible"`` or ``"in_flight"``; ``visible_at``
    the epoch time it becomes (or became) receivable.
    """

    message_id: str
    body: str
    state: str
    receive_count: int
    sent_at: float
    visible_at: float
    group_id: str | None = None
    deduplication_id: str | None = None
    sequence_number: str | None = None
    #: Its place in the queue: positions grow in arrival order and are never
    #: reused by the queue (``Queue.browse`` pages by them, ``Queue.remove``
    #: takes one).
    position: int = 0
    #: The system attributes a receive asking for ``All`` would show now
    #: (``ApproximateReceiveCount`` as it stands: nothing was received).
    attributes: Mapping[str, str] = attrs.field(factory=dict)
    message_attributes: Mapping[str, MessageAttributeValue] = attrs.field(factory=dict)
    md5_of_message_attributes: str | None = None
    #: The size SQS counts against MaximumMessageSize: body and attributes, in bytes.
    size: int = 0


@attrs.frozen
class MessagePage:
    """A page of :meth:`Queue.browse <sqsqueue.Queue.browse>`: the messages,
    and the position to pass as ``after`` for the next page (None: no more)."""

    messages: tuple[MessageInfo, ...]
    next_after: int | None = None


class SendResult(NamedTuple):
    """What SendMessage returns.

    ``sequence_number`` is set on FIFO queues only. On a FIFO queue a send that
    is a duplicate within the deduplication window returns the *original*
    message's id and sequence number. ``body`` is the body that was sent.
    An immutable named tuple, for the same reason as :class:`Message`.
    """

    message_id: str
    body: str
    md5_of_message_attributes: str | None = None
    md5_of_message_system_attributes: str | None = None
    sequence_number: str | None = None

    @property
    def md5_of_body(self) -> str:
        """MD5OfMessageBody of the body sent (section 7.1), computed when read."""
        return md5_of_body(self.body)


@attrs.frozen
class SendEntry:
    """One entry of :meth:`Queue.send_batch` (``SendMessageBatchRequestEntry``)."""

    id: str
    body: str
    delay_seconds: int | None = None
    message_attributes: Mapping[str, object] | None = None
    group_id: str | None = None
    deduplication_id: str | None = None
    trace_header: str | None = None


@attrs.frozen
class DeleteEntry:
    """One entry of :meth:`Queue.delete_batch`."""

    id: str
    receipt_handle: str


@attrs.frozen
class ChangeVisibilityEntry:
    """One entry of :meth:`Queue.change_visibility_batch`."""

    id: str
    receipt_handle: str
    visibility_timeout: int = 0


@attrs.frozen
class BatchFailure:
    """A failed batch entry (``BatchResultErrorEntry``)."""

    id: str
    code: str
    message: str
    sender_fault: bool = True

    def to_aws(self) -> dict[str, object]:
        return {
            "Id": self.id,
            "SenderFault": self.sender_fault,
            "Code": self.code,
            "Message": self.message,
        }


@attrs.frozen
class BatchResult:
    """Per-entry outcome of a batch call.

    ``successful`` maps entry ids to the per-entry result: a :class:`SendResult`
    for :meth:`Queue.send_batch`, ``None`` for deletes and visibility changes.
    """

    successful: Mapping[str, SendResult | None]
    failed: tuple[BatchFailure, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every entry succeeded."""
        return not self.failed


_new_object = object.__new__
_set_successful = BatchResult.__dict__["successful"].__set__  # the slots' own setters
_set_failed = BatchResult.__dict__["failed"].__set__


def batch_result(
    successful: Mapping[str, SendResult | None], failed: tuple[BatchFailure, ...] = ()
) -> BatchResult:
    """``BatchResult(successful, failed)`` for the batch operations' hot paths:
    attrs' frozen ``__init__`` binds ``object.__setattr__`` and calls it per
    field, a third of the cost; this sets the slots directly (no validator or
    converter is skipped: the class has none)."""
    result: BatchResult = _new_object(BatchResult)
    _set_successful(result, successful)
    _set_failed(result, failed)
    return result
