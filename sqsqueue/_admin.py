"""Queue administration that does not touch messages: tags and permissions.

Mixed into every queue; the :class:`~sqsqueue.Broker` methods of the same
names delegate here. Tag rules are section 4's; permission statements are built
by ``_policy.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqsqueue import _policy
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

__all__ = ["QueueAdmin"]

TAGS_MAX = 50
TAG_KEY_MAX = 128
TAG_VALUE_MAX = 256
_TAG_PUNCTUATION = frozenset("_.:/=+-@")


def _tag_text_ok(text: str) -> bool:
    """Unicode letters and digits, whitespace and ``_ . : / = + - @`` (section 4)."""
    return all(c.isalnum() or c.isspace() or c in _TAG_PUNCTUATION for c in text)


def validate_tags(tags: object) -> dict[str, str]:
    """Tag keys and values by section 4's rules; messages UNCONFIRMED."""
    if not isinstance(tags, Mapping):
        raise InvalidParameterValue(
            f"Value {show(tags)} for parameter Tags is invalid. Reason: must be a mapping."
        )
    out: dict[str, str] = {}
    for key, value in tags.items():
        if not isinstance(key, str) or not 1 <= len(key) <= TAG_KEY_MAX or not _tag_text_ok(key):
            raise InvalidParameterValue(
                f"Value {show(key)} for parameter TagKey is invalid. Reason: Tag keys must be "
                "1 to 128 Unicode letters, digits, white space, or _ . : / = + - @."
            )
        if key.lower().startswith("aws:"):
            raise InvalidParameterValue(
                f"Value {key} for parameter TagKey is invalid. Reason: The prefix aws: "
                "is reserved for AWS use."
            )
        if not isinstance(value, str) or len(value) > TAG_VALUE_MAX or not _tag_text_ok(value):
            raise InvalidParameterValue(
                f"Value {show(value)} for parameter TagValue is invalid. Reason: Tag values "
                "must be at most 256 Unicode letters, digits, white space, or _ . : / = + - @."
            )
        out[key] = value
    return out


class QueueAdmin:
    """Tags and permissions of one queue."""

    _lock: threading.RLock
    _values: dict[str, object]
    _name: str
    _tags: dict[str, str]

    @property
    def arn(self) -> str:
        raise NotImplementedError

    def _authorize(
        self, principal: str | None, action: str, sender_id: str | None = None
    ) -> str | None:
        raise NotImplementedError

    def _check_alive(self) -> None:
        raise NotImplementedError

    def _queue_changed(self, event: str) -> None:
        raise NotImplementedError

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
