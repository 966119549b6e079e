"""Fixtures for the HTTP endpoint tests: a broker served on 127.0.0.1, and raw
HTTP requests to it (no SDK in between, so framing errors can be sent).

``parser`` runs a test once per HTTP parser the ``server`` extra ships
(httptools, the default where installed, and h11, the fallback): every server
the test starts parses with it. ``endpoint`` uses it, and the hardening tests
ask for it."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from sqsqueue import Broker, ManualClock
from sqsqueue.server import EndpointHandle, _run

ACCOUNT = "123456789012"
#: The HTTP parsers the endpoint ships with: each carries the same hardening.
PARSERS = ["httptools", "h11"]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


@pytest.fixture
def broker() -> Broker[Any]:
    return Broker(clock=ManualClock(start=1_700_000_000.0), account_id=ACCOUNT)


@pytest.fixture(params=PARSERS)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each shipped HTTP parser in turn (never skipped: the extra installs both)."""
    name: str = request.param
    monkeypatch.setattr(_run, "HTTP_PARSER", name)
    return name


@pytest.fixture
def endpoint(broker: Broker[Any], parser: str) -> Iterator[EndpointHandle]:
    with broker.serve() as handle:
        yield handle


def raw(
    endpoint_url: str,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    timeout: float = 30,
) -> Reply:
    """One HTTP request on a fresh connection."""
    parts = urlsplit(endpoint_url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return Reply(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        conn.close()
