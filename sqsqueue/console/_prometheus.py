"""``GET /metrics``: every queue's CloudWatch metrics in Prometheus's text
exposition format (version 0.0.4).

Written here rather than with ``prometheus_client``: the format is a few
lines of text per metric, stable and fully specified ("Exposition formats" in
Prometheus's documentation), the numbers come from ``Broker.metrics()`` on
each scrape (no registry to keep in step with queues being created and
deleted), and the ``server`` extra stays uvicorn and botocore alone. The tests
parse the page with ``prometheus_client``'s own parser.

Names: the AWS name in Prometheus's style, prefixed ``sqsqueue_``, with the
queue as the ``queue`` label; on ``sqsqueue serve``, which holds every account
and region, each sample also carries ``account`` and ``region`` labels
(``docs/console.md`` has the table).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import attrs

from sqsqueue._metrics import QueueMetrics

__all__ = ["CONTENT_TYPE", "FAMILIES", "labels", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: (Prometheus name, type, QueueMetrics field, help): one family per metric.
FAMILIES: tuple[tuple[str, str, str, str], ...] = (
    (
        "sqsqueue_number_of_messages_sent_total",
        "counter",
        "number_of_messages_sent",
        "NumberOfMessagesSent: messages added to the queue.",
    ),
    (
        "sqsqueue_number_of_messages_received_total",
        "counter",
        "number_of_messages_received",
        "NumberOfMessagesReceived: messages returned by ReceiveMessage.",
    ),
    (
        "sqsqueue_number_of_messages_deleted_total",
        "counter",
        "number_of_messages_deleted",
        "NumberOfMessagesDeleted: successful deletes with a valid receipt handle, "
        "duplicates included.",
    ),
    (
        "sqsqueue_number_of_empty_receives_total",
        "counter",
        "number_of_empty_receives",
        "NumberOfEmptyReceives: ReceiveMessage calls that returned no message.",
    ),
    (
        "sqsqueue_sent_message_size_bytes",
        "summary",
        "sent_message_size_sum",
        "SentMessageSize: the size of the messages added to the queue.",
    ),
    (
        "sqsqueue_approximate_number_of_messages_visible",
        "gauge",
        "approximate_number_of_messages_visible",
        "ApproximateNumberOfMessagesVisible: messages available for retrieval.",
    ),
    (
        "sqsqueue_approximate_number_of_messages_not_visible",
        "gauge",
        "approximate_number_of_messages_not_visible",
        "ApproximateNumberOfMessagesNotVisible: messages in flight.",
    ),
    (
        "sqsqueue_approximate_number_of_messages_delayed",
        "gauge",
        "approximate_number_of_messages_delayed",
        "ApproximateNumberOfMessagesDelayed: messages delayed, not yet available.",
    ),
    (
        "sqsqueue_approximate_age_of_oldest_message_seconds",
        "gauge",
        "approximate_age_of_oldest_message",
        "ApproximateAgeOfOldestMessage: age of the message that arrived first.",
    ),
    (
        "sqsqueue_number_of_deduplicated_sent_messages_total",
        "counter",
        "number_of_deduplicated_sent_messages",
        "NumberOfDeduplicatedSentMessages (FIFO): sends dropped as duplicates.",
    ),
)

_ESCAPE = re.compile(r'[\\"\n]')


def _label(value: str) -> str:
    return _ESCAPE.sub(lambda m: {"\\": "\\\\", '"': '\\"', "\n": "\\n"}[m.group()], value)


def render(
    metrics: Mapping[str, QueueMetrics],
    extra: Iterable[str] = (),
    *,
    scopes: Sequence[tuple[Mapping[str, str], Mapping[str, QueueMetrics]]] | None = None,
) -> bytes:
    """The exposition page for ``metrics`` (``Broker.metrics()``): one family
    per metric, one sample per queue (FIFO's deduplication counter for FIFO
    queues only), labelled ``queue``. With ``scopes`` (``(labels, metrics)``
    for each broker of an endpoint serving every account and region)
    ``metrics`` is ignored and every broker's queues are written, each sample
    carrying its broker's labels (``account``, ``region``) before ``queue``.
    O(queues)."""
    lines: list[str] = list(extra)
    groups = [({}, metrics)] if scopes is None else scopes
    queues = [
        (
            "".join(f'{key}="{_label(value)}",' for key, value in labels.items())
            + f'queue="{_label(name)}"',
            attrs.asdict(values, recurse=False),
        )
        for labels, group in groups
        for name, values in sorted(group.items())
    ]
    for name, kind, field, text in FAMILIES:
        lines.append(f"# HELP {name} {text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels_text, values in queues:
            value = values[field]
            if value is None:
                continue
            label = f"{{{labels_text}}}"
            if kind == "summary":
                lines.append(f"{name}_sum{label} {value}")
                lines.append(f"{name}_count{label} {values['number_of_messages_sent']}")
            else:
                lines.append(f"{name}{label} {value}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def labels(pairs: Mapping[str, str]) -> str:
    """``{name="value",...}`` with Prometheus's escapes ("" for no labels)."""
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in pairs.items()) + "}"
