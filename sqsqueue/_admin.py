"""The rules of queue tags (section 4): how many, and which keys and values.

A queue's tag and permission operations (``_settings.QueueSettings.tag``,
``add_permission``, ...) apply them; the :class:`~sqsqueue.Broker` methods of
the same names delegate there. Permission statements are built by ``_policy.py``.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

__all__ = ["TAGS_MAX", "validate_tags"]

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
