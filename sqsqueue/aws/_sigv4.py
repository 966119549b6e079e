"""Verify AWS Signature Version 4 on requests to the HTTP endpoint.

The signature is recomputed with botocore's own signer (``SigV4Auth``: the
canonical request, the string to sign, the derived key and the HMAC), fed with
exactly the headers the client says it signed, and compared in constant time.
The credential scope must be ``<date>/<region>/sqs/aws4_request``, its region
the broker's (a signature for another region is AWS's SignatureDoesNotMatch,
"Credential should be scoped to a valid region"), its date the request's
``X-Amz-Date`` day, and the request no more than 15 minutes away
from the wall clock (AWS's window). A ``X-Amz-Content-SHA256`` header must
match the body. Presigned URLs (signature in the query string) are not
accepted: SQS clients sign headers.

Cost: one SHA-256 pass over the body and four HMACs per request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqsqueue._clock import SystemClock
from sqsqueue.aws._errors import (
    IncompleteSignature,
    InvalidClientTokenId,
    MissingAuthenticationToken,
    SignatureDoesNotMatch,
)

__all__ = ["MAX_SKEW_SECONDS", "verify"]

MAX_SKEW_SECONDS = 15 * 60
_AUTH = re.compile(
    r"AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/,\s]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)"
    r"/(?P<service>[a-z0-9-]+)/aws4_request\s*,\s*SignedHeaders=(?P<signed>[a-z0-9;._-]+)"
    r"\s*,\s*Signature=(?P<signature>[0-9a-f]{64})\s*"
)
_CLOCK = SystemClock()


def _signer(key: str, secret: str, region: str, signed: list[str]) -> Any:
    from botocore.auth import SigV4Auth
    from botocore.credentials import Credentials

    class _Verifier(SigV4Auth):  # type: ignore[misc]
        """botocore's signer, signing exactly the headers the client signed."""

        def headers_to_sign(self, request: Any) -> Any:
            from botocore.awsrequest import HTTPHeaders

            out = HTTPHeaders()
            for name in signed:
                for value in request.headers.get_all(name) or ():
                    out.add_header(name, value)
            return out

    return _Verifier(Credentials(key, secret), "sqs", region)


def verify(
    credentials: Mapping[str, tuple[str, str]],
    method: str,
    url: str,
    headers: Sequence[tuple[bytes, bytes]],
    body: bytes,
    region: str,
) -> str:
    """The account id of the key that signed the request for ``region`` (the
    endpoint's); raises AWS's 4xx error (403 for an unknown key, a wrong
    signature or a credential scoped to another region) otherwise."""
    from botocore.awsrequest import AWSRequest, HTTPHeaders

    fields = HTTPHeaders()
    for name, value in headers:
        fields.add_header(name.decode("latin-1"), value.decode("latin-1"))
    authorization = fields.get("authorization")
    if authorization is None:
        raise MissingAuthenticationToken()
    match = _AUTH.fullmatch(authorization.strip())
    if match is None:
        raise IncompleteSignature(
            "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' "
            "parameters of an AWS4-HMAC-SHA256 signature."
        )
    key = match["key"]
    if key not in credentials:
        raise InvalidClientTokenId()
    secret, account = credentials[key]
    amz_date = fields.get("x-amz-date")
    if amz_date is None or not re.fullmatch(r"\d{8}T\d{6}Z", amz_date):
        raise IncompleteSignature("The request must carry a valid X-Amz-Date header.")
    # AWS's texts for a scope that does not fit (SDK issues quote the region one).
    if match["region"] != region:
        raise SignatureDoesNotMatch(
            f"Credential should be scoped to a valid region, not '{match['region']}'. "
        )
    if match["service"] != "sqs":
        raise SignatureDoesNotMatch("Credential should be scoped to correct service: 'sqs'. ")
    if amz_date[:8] != match["date"]:
        raise SignatureDoesNotMatch(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
            f"from HTTP: '{match['date']}' != '{amz_date[:8]}', from '{amz_date}'."
        )
    signed = match["signed"].split(";")
    if "host" not in signed or any(fields.get(name) is None for name in signed):
        raise IncompleteSignature("SignedHeaders must include host and name only headers sent.")
    try:
        when = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise IncompleteSignature("The request must carry a valid X-Amz-Date header.") from None
    now = _CLOCK.now()
    if abs(now - when) > MAX_SKEW_SECONDS:
        raise SignatureDoesNotMatch(
            f"Signature expired: {amz_date} is now earlier or later than the 15 minutes "
            f"around {datetime.fromtimestamp(now, UTC):%Y%m%dT%H%M%SZ}."
        )
    declared = fields.get("x-amz-content-sha256")
    if declared is not None and declared != hashlib.sha256(body).hexdigest():
        raise SignatureDoesNotMatch(
            "The provided 'x-amz-content-sha256' header does not match what was computed."
        )
    request = AWSRequest(method=method, url=url, data=body, headers=fields)
    request.context["timestamp"] = amz_date
    signer = _signer(key, secret, match["region"], signed)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, match["signature"]):
        raise SignatureDoesNotMatch()
    return account
