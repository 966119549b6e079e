"""Signature V4's canonical request, computed by sqsqueue.aws._sigv4 without
botocore's request objects, is botocore's: generated requests (paths with dot
segments and escapes, queries, repeated and padded headers, SignedHeaders
naming a header twice) give the same canonical request as botocore's
``SigV4Auth.canonical_request``, and a request botocore signs verifies."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqsqueue.aws import _sigv4
from sqsqueue.aws._errors import SignatureDoesNotMatch

NAMES = ["Host", "X-Amz-Date", "X-Amz-Target", "Content-Type", "X-Custom", "x-custom"]
PATHS = st.lists(
    st.sampled_from(["a", "Z9", ".", "..", "", "%2F", "%41", "~x", "a b", "é", "+=:", "%"]),
    max_size=5,
).map(lambda parts: "/" + "/".join(parts))
QUERIES = st.lists(
    st.tuples(
        st.sampled_from(["Action", "b", "a", "A", "%41", "x y", ""]),
        st.sampled_from(["", "=1", "=SendMessage", "=a%20b", "=z=z", "=é"]),
    ),
    max_size=4,
).map(lambda pairs: "&".join(k + v for k, v in pairs))
VALUES = st.text(alphabet="ab1 \t-=/,;", max_size=12)


def botocore_canonical(
    method: str, url: str, headers: list[tuple[str, str]], body: bytes, signed: list[str]
) -> str:
    """The canonical request botocore's signer builds, signing exactly ``signed``."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest, HTTPHeaders
    from botocore.credentials import Credentials

    class Verifier(SigV4Auth):  # type: ignore[misc]
        def headers_to_sign(self, request: Any) -> Any:
            out = HTTPHeaders()
            for name in signed:
                for value in request.headers.get_all(name) or ():
                    out.add_header(name, value)
            return out

    fields = HTTPHeaders()
    for name, value in headers:
        fields.add_header(name, value)
    request = AWSRequest(method=method, url=url, data=body, headers=fields)
    request.context["timestamp"] = "20260101T000000Z"
    return str(Verifier(Credentials("k", "s"), "sqs", "us-east-1").canonical_request(request))


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["POST", "GET", "post"]),
    path=PATHS,
    query=QUERIES,
    headers=st.lists(st.tuples(st.sampled_from(NAMES), VALUES), min_size=1, max_size=6),
    extra=st.lists(st.sampled_from(["x-amz-date", "x-custom", "content-type"]), max_size=3),
    body=st.binary(max_size=20),
)
def test_the_canonical_request_is_botocores(
    method: str,
    path: str,
    query: str,
    headers: list[tuple[str, str]],
    extra: list[str],
    body: bytes,
) -> None:
    headers = [("Host", "127.0.0.1:9324"), *headers]
    present = {name.lower() for name, _ in headers}
    signed = ["host", *(name for name in extra if name in present)]
    url = f"http://127.0.0.1:9324{path}" + (f"?{query}" if query else "")
    fields: dict[str, list[str]] = {}
    for name, value in headers:
        fields.setdefault(name.lower(), []).append(value)
    parts = urlsplit(url)
    ours = _sigv4.canonical_request(
        method, parts.path, parts.query, fields, signed, hashlib.sha256(body).hexdigest()
    )
    assert ours == botocore_canonical(method, url, headers, body, signed)


def signed_by_botocore(url: str, body: bytes, secret: str) -> list[tuple[bytes, bytes]]:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(
        method="POST",
        url=url,
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.X"},
    )
    SigV4Auth(Credentials("key", secret), "sqs", "us-east-1").add_auth(request)
    host = urlsplit(url).netloc
    return [(b"host", host.encode())] + [
        (k.lower().encode(), v.encode()) for k, v in request.headers.items()
    ]


@pytest.mark.parametrize("path", ["/", "/123456789012/q", "/a/./b/../c", "/%41%2F"])
def test_a_request_botocore_signs_verifies_and_a_changed_one_does_not(path: str) -> None:
    url = f"http://127.0.0.1:9324{path}?Action=ListQueues&b=%20"
    body = b'{"QueueUrl": "x"}'
    headers = signed_by_botocore(url, body, "secret")
    credentials = {"key": ("secret", "111122223333")}
    assert _sigv4.verify(credentials, "POST", url, headers, body, "us-east-1") == "111122223333"
    with pytest.raises(SignatureDoesNotMatch):
        _sigv4.verify(credentials, "POST", url, headers, body + b" ", "us-east-1")
    with pytest.raises(SignatureDoesNotMatch):
        _sigv4.verify(credentials, "POST", url + "&c=1", headers, body, "us-east-1")
    with pytest.raises(SignatureDoesNotMatch):
        _sigv4.verify({"key": ("other", "1")}, "POST", url, headers, body, "us-east-1")
