"""Exceptions named after Amazon SQS error codes.

Every error sqsqueue raises for a bad request is an :class:`SQSError`. Each
subclass carries, as class attributes, what AWS sends on the wire for that error
(``docs/aws-behaviour.md`` §§1.4 and 3):

``code``
    The error's name as the JSON protocol spells it and boto3 raises it: the
    modelled shape name (``QueueDoesNotExist``) or, for the generic errors SQS
    does not model, the legacy code (``InvalidParameterValue``).
``query_code``
    The legacy Query code, which boto3 reports as ``Error.Code``
    (``AWS.SimpleQueueService.NonExistentQueue``).
``wire_type``
    The suffix of the JSON ``__type`` (boto3's ``Error.QueryErrorCode``).
``http_status``
    The HTTP status AWS answers with under ``x-amzn-query-mode``.
``sender_fault``
    True when the caller is at fault (every error here except ``InternalError``).

Like attrs' exceptions, each error also subclasses the builtin that matches its
meaning (``ValueError`` for bad values, ``LookupError`` for missing things,
``PermissionError`` for refusals), so generic ``except ValueError`` code keeps
working.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AccessDenied",
    "BatchEntryIdsNotDistinct",
    "BatchRequestTooLong",
    "EmptyBatchRequest",
    "InternalError",
    "InvalidAction",
    "InvalidAddress",
    "InvalidAttributeName",
    "InvalidAttributeValue",
    "InvalidBatchEntryId",
    "InvalidMessageContents",
    "InvalidParameterValue",
    "InvalidSecurity",
    "MessageNotInflight",
    "MissingParameter",
    "OverLimit",
    "PurgeQueueInProgress",
    "QueueDeletedRecently",
    "QueueDoesNotExist",
    "QueueNameExists",
    "ReceiptHandleIsInvalid",
    "RequestThrottled",
    "ResourceNotFoundException",
    "SQSError",
    "ServiceClosed",
    "ServiceUnavailable",
    "TooManyEntriesInBatchRequest",
    "UnsupportedOperation",
    "error_for_code",
]


class SQSError(Exception):
    """Root of every error sqsqueue raises for a request SQS would refuse.

    >>> err = InvalidParameterValue("Value 11 for parameter MaxNumberOfMessages is invalid.")
    >>> err.code, err.http_status, err.sender_fault
    ('InvalidParameterValue', 400, True)
    """

    code: ClassVar[str] = "InternalError"
    query_code: ClassVar[str] = "InternalError"
    wire_type: ClassVar[str] = "InternalError"
    http_status: ClassVar[int] = 500
    sender_fault: ClassVar[bool] = False
    default_message: ClassVar[str] = ""

    def __init__(self, message: str | None = None) -> None:
        self.message: str = self.default_message if message is None else message
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.message else self.code

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __reduce__(self) -> tuple[type[SQSError], tuple[str]]:
        return (type(self), (self.message,))


class InternalError(SQSError):
    """An internal failure (HTTP 500, receiver's fault)."""


# -- modelled errors (docs/aws-behaviour.md §3.1) ------------------------------
#
# One class per error, alike in shape on purpose: each declares its facts (codes,
# status, fault, message) where callers except it by name.


class QueueDoesNotExist(SQSError, LookupError):
    """The queue named by a URL, name or ARN does not exist."""

    code = "QueueDoesNotExist"
    query_code = "AWS.SimpleQueueService.NonExistentQueue"
    wire_type = "QueueDoesNotExist"
    http_status = 400
    sender_fault = True
    default_message = "The specified queue does not exist."


class QueueNameExists(SQSError, ValueError):
    """CreateQueue with a name in use and a different attribute value."""

    code = "QueueNameExists"
    query_code = "QueueAlreadyExists"
    wire_type = "QueueNameExists"
    http_status = 400
    sender_fault = True


class QueueDeletedRecently(SQSError, ValueError):
    """A queue is re-created less than 60 seconds after its deletion."""

    code = "QueueDeletedRecently"
    query_code = "AWS.SimpleQueueService.QueueDeletedRecently"
    wire_type = "QueueDeletedRecently"
    http_status = 400
    sender_fault = True
    default_message = (
        "You must wait 60 seconds after deleting a queue before you can create "
        "another with the same name."
    )


class PurgeQueueInProgress(SQSError, PermissionError):
    """A second PurgeQueue within 60 seconds (HTTP 403)."""

    code = "PurgeQueueInProgress"
    query_code = "AWS.SimpleQueueService.PurgeQueueInProgress"
    wire_type = "PurgeQueueInProgress"
    http_status = 403
    sender_fault = True


class ReceiptHandleIsInvalid(SQSError, ValueError):
    """A malformed, forged or foreign receipt handle (HTTP 404)."""

    code = "ReceiptHandleIsInvalid"
    query_code = "ReceiptHandleIsInvalid"
    wire_type = "ReceiptHandleIsInvalid"
    http_status = 404
    sender_fault = True


class MessageNotInflight(SQSError, ValueError):
    """Modelled by AWS for ChangeMessageVisibility but never observed (section 3.1)."""

    code = "MessageNotInflight"
    query_code = "AWS.SimpleQueueService.MessageNotInflight"
    wire_type = "MessageNotInflight"
    http_status = 400
    sender_fault = True


class OverLimit(SQSError, PermissionError):
    """A limit was reached: in-flight messages, permissions or policy size (HTTP 403)."""

    code = "OverLimit"
    query_code = "OverLimit"
    wire_type = "OverLimit"
    http_status = 403
    sender_fault = True


class InvalidAttributeName(SQSError, ValueError):
    """An unknown or inapplicable queue attribute name."""

    code = "InvalidAttributeName"
    query_code = "InvalidAttributeName"
    wire_type = "InvalidAttributeName"
    http_status = 400
    sender_fault = True


class InvalidAttributeValue(SQSError, ValueError):
    """A queue attribute value out of range or malformed."""

    code = "InvalidAttributeValue"
    query_code = "InvalidAttributeValue"
    wire_type = "InvalidAttributeValue"
    http_status = 400
    sender_fault = True


class InvalidMessageContents(SQSError, ValueError):
    """A message body with characters outside the allowed set."""

    code = "InvalidMessageContents"
    query_code = "InvalidMessageContents"
    wire_type = "InvalidMessageContents"
    http_status = 400
    sender_fault = True
    default_message = (
        "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | "
        "#x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
    )


class EmptyBatchRequest(SQSError, ValueError):
    """A batch request with no entries."""

    code = "EmptyBatchRequest"
    query_code = "AWS.SimpleQueueService.EmptyBatchRequest"
    wire_type = "EmptyBatchRequest"
    http_status = 400
    sender_fault = True


class TooManyEntriesInBatchRequest(SQSError, ValueError):
    """A batch request with more than 10 entries."""

    code = "TooManyEntriesInBatchRequest"
    query_code = "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"
    wire_type = "TooManyEntriesInBatchRequest"
    http_status = 400
    sender_fault = True


class BatchEntryIdsNotDistinct(SQSError, ValueError):
    """Two entries of a batch share an Id."""

    code = "BatchEntryIdsNotDistinct"
    query_code = "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
    wire_type = "BatchEntryIdsNotDistinct"
    http_status = 400
    sender_fault = True


class InvalidBatchEntryId(SQSError, ValueError):
    """A batch entry Id that is not ``[A-Za-z0-9_-]{1,80}``."""

    code = "InvalidBatchEntryId"
    query_code = "AWS.SimpleQueueService.InvalidBatchEntryId"
    wire_type = "InvalidBatchEntryId"
    http_status = 400
    sender_fault = True
    default_message = (
        "A batch entry id can only contain alphanumeric characters, hyphens and "
        "underscores. It can be at most 80 letters long."
    )


class BatchRequestTooLong(SQSError, ValueError):
    """A SendMessageBatch whose entries add up to more than 1 MiB."""

    code = "BatchRequestTooLong"
    query_code = "AWS.SimpleQueueService.BatchRequestTooLong"
    wire_type = "BatchRequestTooLong"
    http_status = 400
    sender_fault = True


class UnsupportedOperation(SQSError, ValueError):
    """An operation SQS does not support for this request."""

    code = "UnsupportedOperation"
    query_code = "AWS.SimpleQueueService.UnsupportedOperation"
    wire_type = "UnsupportedOperation"
    http_status = 400
    sender_fault = True
    default_message = "Unsupported operation."


class InvalidAddress(SQSError, ValueError):
    """The specified ID is invalid (HTTP 404)."""

    code = "InvalidAddress"
    query_code = "InvalidAddress"
    wire_type = "InvalidAddress"
    http_status = 404
    sender_fault = True
    default_message = "The specified ID is invalid."


class InvalidSecurity(SQSError, PermissionError):
    """The request was not made over HTTPS or not signed with SigV4 (HTTP 403)."""

    code = "InvalidSecurity"
    query_code = "InvalidSecurity"
    wire_type = "InvalidSecurity"
    http_status = 403
    sender_fault = True


class RequestThrottled(SQSError, PermissionError):
    """The request exceeded a rate quota (HTTP 403)."""

    code = "RequestThrottled"
    query_code = "RequestThrottled"
    wire_type = "RequestThrottled"
    http_status = 403
    sender_fault = True


class ResourceNotFoundException(SQSError, LookupError):
    """A move task's source, destination or task does not exist (HTTP 404)."""

    code = "ResourceNotFoundException"
    query_code = "ResourceNotFoundException"
    wire_type = "ResourceNotFoundException"
    http_status = 404
    sender_fault = True


# -- generic errors SQS does not model (section 3.2) ----------------------------


class InvalidParameterValue(SQSError, ValueError):
    """A parameter value out of range or malformed (generic, unmodelled)."""

    code = "InvalidParameterValue"
    query_code = "InvalidParameterValue"
    wire_type = "InvalidParameterValueException"
    http_status = 400
    sender_fault = True


class MissingParameter(SQSError, ValueError):
    """A required parameter is missing or empty (generic, unmodelled)."""

    code = "MissingParameter"
    query_code = "MissingParameter"
    wire_type = "MissingRequiredParameterException"
    http_status = 400
    sender_fault = True


class InvalidAction(SQSError, ValueError):
    """The action or operation requested is invalid (generic, unmodelled)."""

    code = "InvalidAction"
    query_code = "InvalidAction"
    wire_type = "InvalidAction"
    http_status = 400
    sender_fault = True


class AccessDenied(SQSError, PermissionError):
    """The caller is not allowed to perform the action (generic, unmodelled)."""

    code = "AccessDenied"
    query_code = "AccessDenied"
    wire_type = "AccessDeniedException"
    http_status = 400  # section 3.2 (doc)
    sender_fault = True


class StorageError(InternalError):
    """A durable broker's data directory cannot be used (HTTP 500): it is in use
    by another process, damaged, foreign, or a write failed. The message names
    the file. Nothing in the directory was changed.

    sqsqueue's own error (AWS has no data directory): an internal error, but
    named ``StorageError`` on the wire and in messages, so an HTTP client sees
    what the Python API raises."""

    code = "StorageError"
    query_code = "StorageError"
    wire_type = "StorageError"


class ServiceUnavailable(SQSError, RuntimeError):
    """The service cannot take the request (HTTP 503, the receiver's fault)."""

    code = "ServiceUnavailable"
    query_code = "ServiceUnavailable"
    wire_type = "ServiceUnavailable"
    http_status = 503
    sender_fault = False
    default_message = "The request has failed due to a temporary failure of the server."


class ServiceClosed(ServiceUnavailable):
    """Every call on a queue or broker after ``close()`` (sqsqueue's own code:
    AWS has no closed state).

    A :class:`ServiceUnavailable`, but answered on the wire with HTTP 400:
    SDKs retry a 503 with backoff for seconds (botocore: up to 10 s), while a
    closed broker never comes back, so a client (a boto3 worker, an HTTP one)
    sees at once that it should stop.
    """

    code = "ServiceClosed"
    query_code = "ServiceClosed"
    wire_type = "ServiceClosed"
    http_status = 400
    default_message = "The queue service is closed."


_BY_CODE: dict[str, type[SQSError]] = {}
for _cls in list(globals().values()):
    if isinstance(_cls, type) and issubclass(_cls, SQSError):
        _BY_CODE[_cls.code] = _cls
        _BY_CODE[_cls.query_code] = _cls


def error_for_code(code: str) -> type[SQSError]:
    """Return the exception class for an AWS error code or legacy query code.

    >>> error_for_code("AWS.SimpleQueueService.NonExistentQueue").__name__
    'QueueDoesNotExist'
    """
    return _BY_CODE.get(code, InternalError)
