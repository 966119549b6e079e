"""Hypothesis strategies for SQS values: every valid character class, and the
invalid ones to prove rejection (rules from ``docs/aws-behaviour.md`` §§2.1,
4 and 6).

>>> from hypothesis import given
>>> from sqsqueue.testing import strategies as sqs_st
>>> @given(sqs_st.message_bodies())
... def test_roundtrip(body): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from sqsqueue import _limits
from sqsqueue._message import MessageAttributeValue, SendEntry

__all__ = [
    "batch_entry_ids",
    "deduplication_ids",
    "group_ids",
    "invalid_bodies",
    "message_attribute_names",
    "message_attribute_values",
    "message_attributes",
    "message_bodies",
    "queue_attributes",
    "queue_names",
    "send_batches",
]

#: The characters SQS accepts in bodies and String attributes: #x9 | #xA | #xD |
#: #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
valid_characters = st.one_of(
    st.sampled_from("\t\n\r"),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),  # ASCII, drawn often
    st.characters(min_codepoint=0x20, max_codepoint=0xD7FF),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFD),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
)
#: Characters SQS rejects: C0 controls, lone surrogates, U+FFFE/U+FFFF.
invalid_characters = st.one_of(
    st.characters(min_codepoint=0x0, max_codepoint=0x8),
    st.sampled_from("\x0b\x0c\x0e\x1f"),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.sampled_from("\ufffe\uffff"),
)


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def message_bodies(min_size: int = 1, max_size: int = 200) -> st.SearchStrategy[str]:
    """Valid message bodies (non-empty, allowed characters only, at most the
    1 MiB SQS takes: a ``max_size`` over 262,144 characters is held to that in
    UTF-8 bytes)."""
    bodies = st.text(valid_characters, min_size=max(1, min_size), max_size=max_size)
    if max_size * 4 <= _limits.MESSAGE_SIZE_MAX:  # even 4-byte characters fit
        return bodies
    return bodies.filter(lambda body: _utf8_size(body) <= _limits.MESSAGE_SIZE_MAX)


def invalid_bodies(max_size: int = 50) -> st.SearchStrategy[str]:
    """Bodies with at least one character SQS rejects (InvalidMessageContents)."""
    return st.tuples(
        st.text(valid_characters, max_size=max_size),
        invalid_characters,
        st.text(valid_characters, max_size=max_size),
    ).map("".join)


_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def message_attribute_names() -> st.SearchStrategy[str]:
    """Valid attribute names: ``[A-Za-z0-9_.-]``, no leading/trailing/double dot,
    no ``AWS.``/``Amazon.`` prefix, at most 256 characters."""
    segment = st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=20)
    return (
        st.lists(segment, min_size=1, max_size=4)
        .map(".".join)
        .filter(lambda n: len(n) <= 256 and not n.lower().startswith(("aws.", "amazon.")))
    )


def message_attribute_values() -> st.SearchStrategy[MessageAttributeValue]:
    """String, Number and Binary values, sometimes with a custom type suffix;
    every value is one SQS accepts (Numbers within 38 significant digits)."""
    suffix = st.one_of(st.just(""), segment_suffix())
    strings = st.builds(
        lambda s, v: MessageAttributeValue("String" + s, string_value=v),
        suffix,
        st.text(valid_characters, min_size=1, max_size=50),
    )
    numbers = st.builds(
        lambda s, v: MessageAttributeValue("Number" + s, string_value=v),
        suffix,
        st.one_of(
            # SQS keeps 38 significant digits (docs/aws-behaviour.md §4): the
            # integers have at most 38, the decimals at most 21 + 6.
            st.integers(min_value=-(10**38 - 1), max_value=10**38 - 1).map(str),
            st.decimals(
                min_value=-(10**20),
                max_value=10**20,
                allow_nan=False,
                allow_infinity=False,
                places=6,
            ).map(str),
        ),
    )
    binaries = st.builds(
        lambda s, v: MessageAttributeValue("Binary" + s, binary_value=v),
        suffix,
        st.binary(min_size=1, max_size=50),
    )
    return st.one_of(strings, numbers, binaries)


def segment_suffix() -> st.SearchStrategy[str]:
    """A custom DataType suffix such as ``.int`` or ``.java.lang.Long``."""
    return st.text(st.sampled_from(_NAME_CHARS + "."), min_size=1, max_size=12).map(
        lambda s: "." + s
    )


def message_attributes(max_size: int = 10) -> st.SearchStrategy[dict[str, MessageAttributeValue]]:
    """Up to 10 (SQS's limit) valid message attributes."""
    return st.dictionaries(
        message_attribute_names(), message_attribute_values(), max_size=min(max_size, 10)
    )


_FIFO_ID_CHARS = _NAME_CHARS + "!\"#$%&'()*+,./:;<=>?@[\\]^`{|}~"


def group_ids() -> st.SearchStrategy[str]:
    """Valid MessageGroupId values: 1..128 alphanumerics and punctuation."""
    return st.text(st.sampled_from(_FIFO_ID_CHARS), min_size=1, max_size=128)


deduplication_ids = group_ids


def batch_entry_ids() -> st.SearchStrategy[str]:
    """Valid batch entry ids: 1..80 of ``[A-Za-z0-9_-]``."""
    return st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=80)


def queue_names(*, fifo: bool = False) -> st.SearchStrategy[str]:
    """Valid queue names; FIFO names end ``.fifo`` within 80 characters."""
    if fifo:
        return st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=75).map(
            lambda n: n + ".fifo"
        )
    return st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=80)


def queue_attributes(*, fifo: bool = False) -> st.SearchStrategy[dict[str, str]]:
    """Valid CreateQueue/SetQueueAttributes maps, with AWS names and string values."""
    fields: dict[str, st.SearchStrategy[str]] = {
        "DelaySeconds": st.integers(0, 900).map(str),
        "MaximumMessageSize": st.integers(1024, 1_048_576).map(str),
        "MessageRetentionPeriod": st.integers(60, 1_209_600).map(str),
        "ReceiveMessageWaitTimeSeconds": st.integers(0, 20).map(str),
        "VisibilityTimeout": st.integers(0, 43_200).map(str),
    }
    if fifo:
        fields["ContentBasedDeduplication"] = st.sampled_from(["true", "false"])
        fields["DeduplicationScope"] = st.sampled_from(["queue", "messageGroup"])
    chosen = st.fixed_dictionaries({}, optional=fields)
    if not fifo:
        return chosen

    def throughput(attrs: dict[str, Any]) -> st.SearchStrategy[dict[str, str]]:
        choices = ["perQueue"]
        if attrs.get("DeduplicationScope") == "messageGroup":
            choices.append("perMessageGroupId")
        return st.sampled_from(choices).map(lambda t: {**attrs, "FifoThroughputLimit": t})

    return chosen.flatmap(throughput)


def send_batches(
    *, fifo: bool = False, max_entries: int = 10, max_body: int = 100
) -> st.SearchStrategy[list[SendEntry]]:
    """1..10 :class:`~sqsqueue.SendEntry` with distinct ids (group and
    deduplication ids on FIFO). Bodies are held to a tenth of the 1 MiB a
    batch may carry, less room for attributes, whatever ``max_body`` says."""
    max_body = min(max_body, (_limits.BATCH_PAYLOAD_MAX // 10 - 2_048) // 4)

    def entry(entry_id: str) -> st.SearchStrategy[SendEntry]:
        if fifo:
            return st.builds(
                SendEntry,
                id=st.just(entry_id),
                body=message_bodies(max_size=max_body),
                group_id=st.sampled_from(["g1", "g2", "g3"]),
                deduplication_id=deduplication_ids(),
            )
        return st.builds(
            SendEntry,
            id=st.just(entry_id),
            body=message_bodies(max_size=max_body),
            delay_seconds=st.one_of(st.none(), st.integers(0, 900)),
            message_attributes=st.one_of(st.none(), message_attributes(max_size=3)),
        )

    ids = st.lists(batch_entry_ids(), min_size=1, max_size=min(max_entries, 10), unique=True)
    return ids.flatmap(lambda xs: st.tuples(*(entry(i) for i in xs)).map(list))
