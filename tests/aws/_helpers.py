"""Assertions shared by the boto3 facade tests."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

ACCOUNT = "123456789012"
REGION = "us-east-1"
#: Where the ``sqs`` fixture's queue URLs point: None for AWS's (in process),
#: the endpoint URL while the suite runs over HTTP (set by the fixture).
ENDPOINT: list[str] = []


def url_of(name: str, region: str = REGION) -> str:
    """The queue URL ``name`` has (section 2.1): AWS's in process, the
    endpoint's over HTTP."""
    if ENDPOINT:
        return f"{ENDPOINT[-1]}/{ACCOUNT}/{name}"
    return f"https://sqs.{region}.amazonaws.com/{ACCOUNT}/{name}"


def arn_of(name: str, region: str = REGION) -> str:
    """The queue ARN AWS gives ``name`` (section 5)."""
    return f"arn:aws:sqs:{region}:{ACCOUNT}:{name}"


def assert_aws_error(
    err: ClientError,
    *,
    code: str,
    query_code: str,
    message: str,
    status: int = 400,
    operation: str | None = None,
) -> None:
    """Assert an error exactly as boto3 users see one from AWS (section 1.4):
    the Error dict, the HTTP status, a request id, and ``str(e)``."""
    assert err.response["Error"] == {
        "Message": message,
        "Code": code,
        "QueryErrorCode": query_code,
        "Type": "Sender",
    }
    meta = err.response["ResponseMetadata"]
    assert meta["HTTPStatusCode"] == status
    assert meta["RequestId"]
    assert meta["HTTPHeaders"]["x-amzn-query-error"] == f"{code};Sender"
    assert meta["HTTPHeaders"]["x-amzn-requestid"] == meta["RequestId"]
    if operation is not None:
        assert err.operation_name == operation
        assert str(err) == (
            f"An error occurred ({code}) when calling the {operation} operation: {message}"
        )


def strip_metadata(response: dict[str, Any]) -> dict[str, Any]:
    """A boto3 response without ResponseMetadata (what broker.client() returns)."""
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


def reference_md5_of_attributes(attrs: dict[str, dict[str, Any]]) -> str:
    """The reference implementation printed in section 7.2, verbatim in effect."""
    import hashlib
    import struct

    buf = bytearray()
    for name in sorted(attrs, key=lambda s: s.encode("utf-16-be")):
        a = attrs[name]
        for part in (name, a["DataType"]):
            b = part.encode("utf-8")
            buf += struct.pack(">I", len(b)) + b
        if a.get("StringValue") is not None:
            v = a["StringValue"].encode("utf-8")
            buf += b"\x01"
        else:
            v = bytes(a["BinaryValue"])
            buf += b"\x02"
        buf += struct.pack(">I", len(v)) + v
    return hashlib.md5(bytes(buf)).hexdigest()
