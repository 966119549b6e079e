"""Verify AWS Signature Version 4 on requests to the HTTP endpoint.

The signature is recomputed as botocore's own signer (``SigV4Auth``) computes
it: the canonical request (:func:`canonical_request`, checked against
botocore's on generated requests by tests/endpoint/test_sigv4.py), the string
to sign, the derived key (cached per secret, day and region) and the HMAC, fed
with exactly the headers the client says it signed, and compared in constant
time.
The credential scope must be ``<date>/<region>/sqs/aws4_request``, its region
the broker's (a signature for another region is AWS's SignatureDoesNotMatch,
"Credential should be scoped to a valid region"), its date the request's
``X-Amz-Date`` day, and the request no more than 15 minutes away
from the wall clock (AWS's window). A ``X-Amz-Content-SHA256`` header must
match the body. Presigned URLs (signature in the query string) are not
accepted: SQS clients sign headers.

Cost: one SHA-256 pass over the body and over the canonical request, and one
HMAC per request (four more on a key's first request of a day); a URL's
canonical path and query are computed once (a bounded cache).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

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
_DATE = re.compile(r"\d{8}T\d{6}Z")
_CLOCK = SystemClock()


#: Derived signing keys by (secret, date, region): four HMACs saved per request.
_KEYS: dict[tuple[str, str, str], bytes] = {}


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.digest(key, text.encode("utf-8"), "sha256")


def _signing_key(secret: str, date: str, region: str) -> bytes:
    found = _KEYS.get((secret, date, region))
    if found is None:
        if len(_KEYS) >= 256:
            _KEYS.clear()
        k_region = _hmac(_hmac(f"AWS4{secret}".encode(), date), region)
        found = _KEYS[(secret, date, region)] = _hmac(_hmac(k_region, "sqs"), "aws4_request")
    return found


def canonical_request(
    method: str,
    path: str,
    query: str,
    fields: Mapping[str, list[str]],
    signed: Sequence[str],
    payload_hash: str,
) -> str:
    """SigV4's canonical request as botocore's ``SigV4Auth.canonical_request``
    builds it for SQS (a non-S3 service): the path with dot segments removed
    and quoted again (``/`` and ``~`` kept), the query's pairs sorted as sent,
    each signed header's values (in the order sent, once per time the header
    is named in SignedHeaders) with runs of whitespace made one space and
    joined by commas. ``fields`` maps lower-cased names to their values.
    tests/endpoint/test_sigv4.py checks it against botocore's on generated
    requests. O(request size)."""
    target = _canonical_path(path), _canonical_query(query)
    return _canonical(method, target, fields, signed, payload_hash)


def _canonical(
    method: str,
    target: tuple[str, str],
    fields: Mapping[str, list[str]],
    signed: Sequence[str],
    payload_hash: str,
) -> str:
    """The canonical request of a target's canonical (path, query)."""
    path, query = target
    return "\n".join(
        (method.upper(), path, query, _canonical_headers(fields, signed), payload_hash)
    )


def _canonical_path(path: str) -> str:
    from botocore.utils import normalize_url_path

    return quote(normalize_url_path(path), safe="/~")


def _canonical_query(query: str) -> str:
    pairs = sorted(pair.partition("=")[::2] for pair in query.split("&")) if query else []
    return "&".join(f"{k}={v}" for k, v in pairs)


def _canonical_headers(fields: Mapping[str, list[str]], signed: Sequence[str]) -> str:
    """The canonical headers, a blank line, and the signed names joined by ``;``."""
    names = sorted(set(signed))
    if len(names) == len(signed) and all(len(fields.get(name, ())) == 1 for name in names):
        # Each signed header named once and sent once: an SDK's request.
        headers = "".join([f"{name}:{' '.join(fields[name][0].split())}\n" for name in names])
        return f"{headers}\n{';'.join(names)}"
    counts = {name: signed.count(name) for name in names}
    headers = "".join(
        f"{name}:{','.join(' '.join(v.split()) for v in fields.get(name, ()) * counts[name])}\n"
        for name in names
    )
    return f"{headers}\n{';'.join(names)}"


#: The canonical path and query of each request URL seen (clients send the
#: same few again and again): urlsplit, botocore's normalisation and the
#: quoting run once per URL.
_TARGETS: dict[str, tuple[str, str]] = {}
#: The last X-Amz-Date read and its time: an SDK's requests within one second
#: share it.
_LAST_DATE: list[tuple[str, float]] = [("", 0.0)]


def _canonical_target(url: str) -> tuple[str, str]:
    found = _TARGETS.get(url)
    if found is None:
        parts = urlsplit(url)
        if len(_TARGETS) >= 256:
            _TARGETS.clear()
        found = _TARGETS[url] = (_canonical_path(parts.path), _canonical_query(parts.query))
    return found


def _timestamp(d: str) -> float:
    """The epoch time of an X-Amz-Date (``YYYYMMDDTHHMMSSZ``, already matched
    by _DATE); ValueError for a date that does not exist."""
    last, when = _LAST_DATE[0]
    if d != last:
        when = datetime(
            int(d[0:4]),
            int(d[4:6]),
            int(d[6:8]),
            int(d[9:11]),
            int(d[11:13]),
            int(d[13:15]),
            tzinfo=UTC,
        ).timestamp()
        _LAST_DATE[0] = (d, when)
    return when


def verify(
    credentials: Mapping[str, tuple[str, str]],
    method: str,
    url: str,
    headers: Sequence[tuple[bytes, bytes]],
    body: bytes,
    region: str | None,
) -> str:
    """The account id of the key that signed the request for ``region`` (the
    endpoint's; None accepts a credential scoped to any region, for an
    endpoint serving every region); raises AWS's 4xx error (403 for an
    unknown key, a wrong signature or a credential scoped to another region)
    otherwise."""
    fields: dict[str, list[str]] = {}
    for raw_name, raw_value in headers:
        fields.setdefault(raw_name.decode("latin-1").lower(), []).append(
            raw_value.decode("latin-1")
        )
    authorization = _first(fields, "authorization")
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
    amz_date = _first(fields, "x-amz-date")
    if amz_date is None or not _DATE.fullmatch(amz_date):
        raise IncompleteSignature("The request must carry a valid X-Amz-Date header.")
    # AWS's texts for a scope that does not fit (SDK issues quote the region one).
    if region is None:
        region = match["region"]
    elif match["region"] != region:
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
    if "host" not in signed or any(name not in fields for name in signed):
        raise IncompleteSignature("SignedHeaders must include host and name only headers sent.")
    try:
        when = _timestamp(amz_date)
    except ValueError:
        raise IncompleteSignature("The request must carry a valid X-Amz-Date header.") from None
    now = _CLOCK.now()
    if abs(now - when) > MAX_SKEW_SECONDS:
        raise SignatureDoesNotMatch(
            f"Signature expired: {amz_date} is now earlier or later than the 15 minutes "
            f"around {datetime.fromtimestamp(now, UTC):%Y%m%dT%H%M%SZ}."
        )
    computed = hashlib.sha256(body).hexdigest()
    declared = _first(fields, "x-amz-content-sha256")
    if declared is not None and declared != computed:
        raise SignatureDoesNotMatch(
            "The provided 'x-amz-content-sha256' header does not match what was computed."
        )
    canonical = _canonical(method, _canonical_target(url), fields, signed, computed)
    scope = f"{match['date']}/{region}/sqs/aws4_request"
    to_sign = "\n".join(
        ("AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest())
    )
    expected = _hmac(_signing_key(secret, match["date"], region), to_sign).hex()
    if not hmac.compare_digest(expected, match["signature"]):
        raise SignatureDoesNotMatch()
    return account


def _first(fields: Mapping[str, list[str]], name: str) -> str | None:
    """The first value of a header, as botocore's ``HTTPHeaders.get`` reads it."""
    values = fields.get(name)
    return values[0] if values else None
