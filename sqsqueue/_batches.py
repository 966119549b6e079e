"""Batch requests: entry coercion, whole-request checks, per-entry results.

The batch operations (``SendMessageBatch``, ``DeleteMessageBatch``,
``ChangeMessageVisibilityBatch``) take :class:`~sqsqueue.SendEntry` and friends,
plain values, or boto3-shaped dicts. Request-level problems (no entries, more
than 10, bad or repeated ids) raise and do nothing (``docs/aws-behaviour.md``
§2.1); each entry's own failure is reported with its Id. This module also holds
the boto3 vocabulary of a message (``MESSAGE_MEMBERS``) that the boto3-shaped
client (``sqsqueue.aws._client``) shares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter, itemgetter
from typing import Any, NoReturn

from sqsqueue import _validate
from sqsqueue._limits import BATCH_ENTRIES_MAX
from sqsqueue._message import (
    BatchFailure,
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    SendEntry,
    SendResult,
)
from sqsqueue._validate import kind_name, show
from sqsqueue.errors import (
    BatchEntryIdsNotDistinct,
    EmptyBatchRequest,
    InvalidBatchEntryId,
    InvalidParameterValue,
    SQSError,
    TooManyEntriesInBatchRequest,
)


class FailsWholeBatch(Exception):
    """Raised by an entry's validation for an error that fails the whole batch
    request rather than that entry (FIFO, section 2.1): send_batch raises
    ``error``, the AWS error, instead of reporting it in ``failed``."""

    def __init__(self, error: SQSError) -> None:
        super().__init__(error)
        self.error = error


def rough_size(entry: SendEntry) -> int:
    """Size of an invalid batch entry toward the 1 MiB batch total."""
    body = entry.body if isinstance(entry.body, str) else ""
    return len(body.encode("utf-8", "surrogatepass"))


def _fail(message: str) -> NoReturn:
    raise InvalidParameterValue(message)


#: Member types of boto3-shaped batch entries; a wrong type fails the whole
#: request, as botocore's own parameter validation does.
_ENTRY_TYPES: dict[str, type] = {
    "Id": str,
    "MessageBody": str,
    "DelaySeconds": int,
    "MessageAttributes": Mapping,
    "MessageSystemAttributes": Mapping,
    "MessageDeduplicationId": str,
    "MessageGroupId": str,
    "ReceiptHandle": str,
    "VisibilityTimeout": int,
}
#: The members that describe a message in SendMessage and in a
#: SendMessageBatchRequestEntry (the entry adds Id, the request QueueUrl).
MESSAGE_MEMBERS = (
    "MessageBody",
    "DelaySeconds",
    "MessageAttributes",
    "MessageSystemAttributes",
    "MessageDeduplicationId",
    "MessageGroupId",
)
_SEND_KEYS = ("Id", *MESSAGE_MEMBERS)


def _aws_entry(raw: Mapping[str, Any], allowed: tuple[str, ...]) -> Mapping[str, Any]:
    """Check a boto3-shaped batch entry: known members of the right types."""
    unknown = [k for k in raw if k not in allowed]
    if unknown:
        _fail(f"Unknown parameter {unknown[0]} in a batch entry.")
    for key, value in raw.items():
        kind = _ENTRY_TYPES[key]
        if value is not None and (
            not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        ):
            wanted = "a structure" if kind is Mapping else kind_name(kind)
            _fail(f"Value {show(value)} for parameter {key} is invalid. Reason: must be {wanted}.")
        if isinstance(value, Mapping):
            for name, item in value.items():
                if not isinstance(item, Mapping):
                    _fail(
                        f"Value {show(item)} for parameter {key}.{name} is invalid. Reason: "
                        "must be a structure."
                    )
    return raw


def system_trace(system: Mapping[str, Any] | None) -> Any:
    """The AWSTraceHeader of a MessageSystemAttributes map, the only key SQS
    accepts (section 2.1)."""
    if not system:
        return None
    unknown = set(system) - {"AWSTraceHeader"}
    if unknown:
        _fail(
            f"Value {sorted(unknown)[0]} for parameter MessageSystemAttributes is invalid. "
            "Reason: only AWSTraceHeader is supported."
        )
    return system.get("AWSTraceHeader")


#: A batch entry as the batch operations use it: (Id, the arguments of the
#: per-entry action). Plain tuples: building an attrs entry per item would cost
#: more than the action on the hot path.
Item = tuple[Any, tuple[Any, ...]]


def _not_an_entry(raw: object) -> NoReturn:
    _fail(f"Value {show(raw)} for parameter Entries is invalid. Reason: not a batch entry.")


def coerce_send(index: int, raw: object) -> Item:
    if isinstance(raw, SendEntry):
        return raw.id, (raw,)
    if isinstance(raw, str):
        return str(index), (SendEntry(str(index), raw),)
    if isinstance(raw, Mapping):
        e = _aws_entry(raw, _SEND_KEYS)
        entry = SendEntry(
            e.get("Id"),  # type: ignore[arg-type]
            e.get("MessageBody"),  # type: ignore[arg-type]
            e.get("DelaySeconds"),
            e.get("MessageAttributes"),
            e.get("MessageGroupId"),
            e.get("MessageDeduplicationId"),
            system_trace(e.get("MessageSystemAttributes")),
        )
        return entry.id, (entry,)
    _not_an_entry(raw)


def coerce_delete(index: int, raw: object) -> Item:
    if isinstance(raw, str):
        return str(index), (raw,)
    if isinstance(raw, DeleteEntry):
        return raw.id, (raw.receipt_handle,)
    if isinstance(raw, Mapping):
        e = _aws_entry(raw, ("Id", "ReceiptHandle"))
        return e.get("Id"), (e.get("ReceiptHandle"),)
    _not_an_entry(raw)


def coerce_change(index: int, raw: object) -> Item:
    if isinstance(raw, ChangeVisibilityEntry):
        return raw.id, (raw.receipt_handle, raw.visibility_timeout)
    if isinstance(raw, Mapping):
        e = _aws_entry(raw, ("Id", "ReceiptHandle", "VisibilityTimeout"))
        return e.get("Id"), (e.get("ReceiptHandle"), e.get("VisibilityTimeout", 0))
    _not_an_entry(raw)


#: The Ids of plain receipt handles in a delete batch: their positions.
_INDEX_IDS = tuple(str(i) for i in range(BATCH_ENTRIES_MAX))
_PLAIN_HANDLES = {str}
_SEND_ENTRIES = {SendEntry}
_ENTRY_ID = attrgetter("id")
_BODY = attrgetter("body")
_STR = {str}
_DICTS = {dict}
_TWO = {2}
_GET_ID = itemgetter("Id")
_GET_HANDLE = itemgetter("ReceiptHandle")
_GET_BODY = itemgetter("MessageBody")


def _listed(entries: object, entry_name: str) -> list[Any]:
    """The entries of a batch request as a list, after the whole-request
    checks on their number (section 2.1)."""
    if type(entries) is list:
        raw = entries.copy()
    elif isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
        _fail(f"Value {show(entries)} for parameter Entries is invalid. Reason: must be a list.")
    else:
        raw = list(entries)
    if not raw:
        raise EmptyBatchRequest(f"There should be at least one {entry_name} in the request.")
    if len(raw) > BATCH_ENTRIES_MAX:
        raise TooManyEntriesInBatchRequest(
            f"Maximum number of entries per request are 10. You have sent {len(raw)}."
        )
    return raw


#: The last Ids found valid and distinct: clients mostly send the same ones.
_last_valid_ids: list[tuple[Any, ...]] = [()]


def _check_ids(ids: list[Any]) -> None:
    """Whole-request checks on the entries' Ids: valid, distinct (section 2.1)."""
    key = tuple(ids)
    if key == _last_valid_ids[0]:
        return
    if not _validate.batch_entry_ids(ids):
        raise InvalidBatchEntryId()
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for entry_id in ids:
            if entry_id in seen:
                raise BatchEntryIdsNotDistinct(f"Id {entry_id} repeated.")
            seen.add(entry_id)
    _last_valid_ids[0] = key


def entries_of(entries: object, entry_name: str, coerce: Any) -> list[Item]:
    """Whole-request batch checks (section 2.1): nothing is done if one fails."""
    raw = _listed(entries, entry_name)
    items: list[Item] = [coerce(i, e) for i, e in enumerate(raw)]
    _check_ids([item[0] for item in items])
    return items


#: The last ids given to none_for_each, and its answer for them (never handed out).
_last_none_for_each: list[tuple[list[str], dict[str, None]]] = [([], {})]


def none_for_each(entry_ids: list[str]) -> dict[str, None]:
    """``dict.fromkeys(entry_ids)``: a batch's successful entries with no
    result each. Clients send the same Ids batch after batch, and copying the
    last answer costs a sixth of building it (a dict built key by key resizes
    on the way). Thread-safe: the last answer is replaced whole, never changed."""
    ids, answer = _last_none_for_each[0]
    if entry_ids == ids:
        return answer.copy()
    answer = dict.fromkeys(entry_ids)
    _last_none_for_each[0] = (entry_ids.copy(), answer.copy())
    return answer


def delete_entries_of(entries: object) -> tuple[list[str], list[Any]]:
    """:func:`entries_of` for a delete batch: the entries' Ids and receipt
    handles. Plain handles are taken as they are: their Ids, their
    positions, are valid and distinct. Nothing is done if a check fails."""
    raw = _listed(entries, "DeleteMessageBatchRequestEntry")
    types = {*map(type, raw)}
    if types == _PLAIN_HANDLES:
        return list(_INDEX_IDS[: len(raw)]), raw
    if types == _DICTS and {*map(len, raw)} == _TWO:
        # boto3-shaped entries with both members as strings and nothing else
        # (what _aws_entry accepts unchanged), read without a call per entry.
        try:
            ids = list(map(_GET_ID, raw))
            handles = list(map(_GET_HANDLE, raw))
        except KeyError:
            pass  # another member: the entries are checked one by one
        else:
            if {*map(type, ids)} == _STR == {*map(type, handles)}:
                _check_ids(ids)
                return ids, handles
    items = [coerce_delete(i, e) for i, e in enumerate(raw)]
    ids = [item[0] for item in items]
    _check_ids(ids)
    return ids, [item[1][0] for item in items]


def send_entries_of(
    entries: object, plain_max: int | None
) -> tuple[list[str], list[SendEntry], list[str] | None]:
    """:func:`entries_of` for a send batch, each entry read once: the entries'
    Ids, the entries as SendEntry objects, and, when ``plain_max`` is given
    (a standard queue's MaximumMessageSize), the batch's bodies if it is a
    plain one (:func:`plain_bodies`), else None. The library's own SendEntry
    objects are taken as they are, in C; boto3-shaped dicts of an Id and a
    MessageBody only (what code ported from boto3 writes) are read in C too,
    and make no SendEntry when their bodies are plain (the entries are then
    []). Nothing is done if a check fails."""
    raw = _listed(entries, "SendMessageBatchRequestEntry")
    types = {*map(type, raw)}
    if types == _SEND_ENTRIES:
        ids = list(map(_ENTRY_ID, raw))
    else:
        if types == _DICTS and plain_max is not None and {*map(len, raw)} == _TWO:
            # {"Id": ..., "MessageBody": ...}: both members strings and nothing
            # else is what _aws_entry accepts unchanged; plain bodies make the
            # SendEntry objects unneeded. Any other dict is read one by one.
            try:
                ids = list(map(_GET_ID, raw))
                bodies = list(map(_GET_BODY, raw))
            except KeyError:
                pass
            else:
                if {*map(type, ids)} == _STR and _plain(bodies, plain_max):
                    _check_ids(ids)
                    return ids, [], bodies
        items = [coerce_send(i, e) for i, e in enumerate(raw)]
        ids = [item[0] for item in items]
        raw = [item[1][0] for item in items]
    _check_ids(ids)
    return ids, raw, None if plain_max is None else plain_bodies(raw, plain_max)


def plain_bodies(entries: list[SendEntry], max_size: int) -> list[str] | None:
    """The bodies of a send batch whose every entry has a body only, ASCII,
    of allowed characters and at most ``max_size`` long: the common batch,
    which ``validate.body``'s ASCII path accepts entry by entry. None for any
    other batch (its entries are then validated one by one). Checked in C,
    a few calls for the whole batch. O(total size)."""
    for e in entries:
        if (
            e.delay_seconds is not None
            or e.message_attributes is not None
            or e.trace_header is not None
            or e.group_id is not None
            or e.deduplication_id is not None
        ):
            return None
    bodies = list(map(_BODY, entries))
    return bodies if _plain(bodies, max_size) else None


def _plain(bodies: list[Any], max_size: int) -> bool:
    """Whether every body is a non-empty string, ASCII, of allowed characters
    and at most ``max_size`` long. O(total size), in C."""
    try:
        joined = "".join(bodies)
    except TypeError:
        return False  # a body that is not a string
    # A character's class does not depend on its neighbours: the joined
    # bodies are ASCII and allowed when each one is.
    return not (
        not all(bodies)
        or not joined.isascii()
        or not _validate.ascii_allowed(joined)
        or (len(joined) > max_size and max(map(len, bodies)) > max_size)
    )


def each(items: list[Item], action: Callable[..., None], now: int) -> BatchResult:
    """``action(*args, now)`` for each entry, each failure reported with its Id."""
    successful: dict[str, SendResult | None] = {}
    failed: list[BatchFailure] = []
    for entry_id, args in items:
        try:
            action(*args, now)
        except SQSError as err:
            failed.append(BatchFailure(entry_id, err.code, err.message, err.sender_fault))
        else:
            successful[entry_id] = None
    return BatchResult(successful, tuple(failed))
