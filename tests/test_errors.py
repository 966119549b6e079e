"""The error classes: AWS codes, query codes, HTTP statuses (docs/aws-behaviour.md §§1.4, 3)."""

from __future__ import annotations

import copy

import pytest

from sqsqueue import errors

#: (class, code, query code, wire type, HTTP status) from sections 1.4 and 3.
TABLE = [
    (
        errors.QueueDoesNotExist,
        "QueueDoesNotExist",
        "AWS.SimpleQueueService.NonExistentQueue",
        "QueueDoesNotExist",
        400,
    ),
    (errors.QueueNameExists, "QueueNameExists", "QueueAlreadyExists", "QueueNameExists", 400),
    (
        errors.QueueDeletedRecently,
        "QueueDeletedRecently",
        "AWS.SimpleQueueService.QueueDeletedRecently",
        "QueueDeletedRecently",
        400,
    ),
    (
        errors.PurgeQueueInProgress,
        "PurgeQueueInProgress",
        "AWS.SimpleQueueService.PurgeQueueInProgress",
        "PurgeQueueInProgress",
        403,
    ),
    (
        errors.ReceiptHandleIsInvalid,
        "ReceiptHandleIsInvalid",
        "ReceiptHandleIsInvalid",
        "ReceiptHandleIsInvalid",
        404,
    ),
    (
        errors.MessageNotInflight,
        "MessageNotInflight",
        "AWS.SimpleQueueService.MessageNotInflight",
        "MessageNotInflight",
        400,
    ),
    (errors.OverLimit, "OverLimit", "OverLimit", "OverLimit", 403),
    (
        errors.InvalidAttributeName,
        "InvalidAttributeName",
        "InvalidAttributeName",
        "InvalidAttributeName",
        400,
    ),
    (
        errors.InvalidAttributeValue,
        "InvalidAttributeValue",
        "InvalidAttributeValue",
        "InvalidAttributeValue",
        400,
    ),
    (
        errors.InvalidMessageContents,
        "InvalidMessageContents",
        "InvalidMessageContents",
        "InvalidMessageContents",
        400,
    ),
    (
        errors.EmptyBatchRequest,
        "EmptyBatchRequest",
        "AWS.SimpleQueueService.EmptyBatchRequest",
        "EmptyBatchRequest",
        400,
    ),
    (
        errors.TooManyEntriesInBatchRequest,
        "TooManyEntriesInBatchRequest",
        "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
        "TooManyEntriesInBatchRequest",
        400,
    ),
    (
        errors.BatchEntryIdsNotDistinct,
        "BatchEntryIdsNotDistinct",
        "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
        "BatchEntryIdsNotDistinct",
        400,
    ),
    (
        errors.InvalidBatchEntryId,
        "InvalidBatchEntryId",
        "AWS.SimpleQueueService.InvalidBatchEntryId",
        "InvalidBatchEntryId",
        400,
    ),
    (
        errors.BatchRequestTooLong,
        "BatchRequestTooLong",
        "AWS.SimpleQueueService.BatchRequestTooLong",
        "BatchRequestTooLong",
        400,
    ),
    (
        errors.UnsupportedOperation,
        "UnsupportedOperation",
        "AWS.SimpleQueueService.UnsupportedOperation",
        "UnsupportedOperation",
        400,
    ),
    (errors.InvalidAddress, "InvalidAddress", "InvalidAddress", "InvalidAddress", 404),
    (errors.InvalidSecurity, "InvalidSecurity", "InvalidSecurity", "InvalidSecurity", 403),
    (errors.RequestThrottled, "RequestThrottled", "RequestThrottled", "RequestThrottled", 403),
    (
        errors.ResourceNotFoundException,
        "ResourceNotFoundException",
        "ResourceNotFoundException",
        "ResourceNotFoundException",
        404,
    ),
    (
        errors.InvalidParameterValue,
        "InvalidParameterValue",
        "InvalidParameterValue",
        "InvalidParameterValueException",
        400,
    ),
    (
        errors.MissingParameter,
        "MissingParameter",
        "MissingParameter",
        "MissingRequiredParameterException",
        400,
    ),
]


class TestErrorCodes:
    """Each error class carries AWS's code, query code, __type and HTTP status."""

    @pytest.mark.parametrize(("cls", "code", "query_code", "wire_type", "status"), TABLE)
    def test_codes(
        self, cls: type[errors.SQSError], code: str, query_code: str, wire_type: str, status: int
    ) -> None:
        """Sections 1.4 and 3: code, legacy query code, __type suffix and HTTP status."""
        assert cls.code == code
        assert cls.query_code == query_code
        assert cls.wire_type == wire_type
        assert cls.http_status == status
        assert cls.sender_fault is True

    @pytest.mark.parametrize(("cls", "code", "query_code", "wire_type", "status"), TABLE)
    def test_lookup_by_code(
        self, cls: type[errors.SQSError], code: str, query_code: str, wire_type: str, status: int
    ) -> None:
        """Section 1.4: error_for_code maps both the code and the query code to the class."""
        assert errors.error_for_code(code) is cls
        assert errors.error_for_code(query_code) is cls

    def test_unknown_code_is_internal_error(self) -> None:
        """Section 1.4: An unknown code maps to InternalError (HTTP 500, receiver's fault)."""
        cls = errors.error_for_code("NoSuchThing")
        assert cls is errors.InternalError
        assert cls.http_status == 500
        assert cls.sender_fault is False

    def test_purge_in_progress_is_403(self) -> None:
        """Section 1.4: a second purge within 60 s is HTTP 403 (AWS-observed)."""
        assert errors.PurgeQueueInProgress("x").http_status == 403


class TestErrorBehaviour:
    """Messages, builtin bases, str/repr and copying."""

    @pytest.mark.parametrize("cls", [row[0] for row in TABLE])
    def test_all_are_sqs_errors(self, cls: type[errors.SQSError]) -> None:
        """Section 3: Every error is an SQSError and an Exception."""
        assert issubclass(cls, errors.SQSError)
        assert issubclass(cls, Exception)

    def test_builtin_bases(self) -> None:
        """docs/design.md anchors: Errors also subclass the matching builtin (attrs' habit)."""
        assert issubclass(errors.InvalidParameterValue, ValueError)
        assert issubclass(errors.MissingParameter, ValueError)
        assert issubclass(errors.ReceiptHandleIsInvalid, ValueError)
        assert issubclass(errors.QueueDoesNotExist, LookupError)
        assert issubclass(errors.ResourceNotFoundException, LookupError)
        assert issubclass(errors.PurgeQueueInProgress, PermissionError)
        assert issubclass(errors.OverLimit, PermissionError)
        assert issubclass(errors.AccessDenied, PermissionError)

    def test_message_and_str(self) -> None:
        """Section 3: The message is kept verbatim; str() is 'Code: message'."""
        err = errors.InvalidParameterValue("Value 11 for parameter X is invalid.")
        assert err.message == "Value 11 for parameter X is invalid."
        assert str(err) == "InvalidParameterValue: Value 11 for parameter X is invalid."
        assert repr(err) == "InvalidParameterValue('Value 11 for parameter X is invalid.')"
        assert err.args == ("Value 11 for parameter X is invalid.",)

    def test_default_messages(self) -> None:
        """Section 3: errors with a fixed AWS text use it by default."""
        assert errors.QueueDoesNotExist().message == "The specified queue does not exist."
        assert errors.InvalidBatchEntryId().message == (
            "A batch entry id can only contain alphanumeric characters, hyphens and "
            "underscores. It can be at most 80 letters long."
        )
        assert errors.QueueDeletedRecently().message == (
            "You must wait 60 seconds after deleting a queue before you can create another "
            "with the same name."
        )
        assert errors.InvalidMessageContents().message.startswith("Invalid characters found.")

    def test_no_message_str_is_code(self) -> None:
        """Section 3: An error without a message prints its code."""
        assert str(errors.MessageNotInflight()) == "MessageNotInflight"

    def test_copy_keeps_class_and_message(self) -> None:
        """Section 3: Errors survive copying (the __reduce__ protocol) with class and message
        intact."""
        err = errors.ReceiptHandleIsInvalid('The input receipt handle "x" is not valid.')
        clone = copy.copy(err)
        assert type(clone) is errors.ReceiptHandleIsInvalid
        assert clone.message == err.message

    def test_all_exports_exist(self) -> None:
        """Section 3: Every name in errors.__all__ exists."""
        for name in errors.__all__:
            assert hasattr(errors, name), name
