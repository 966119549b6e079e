"""Fixtures for the HTTP endpoint tests: a broker served on 127.0.0.1, and raw
HTTP requests to it (no SDK in between, so framing errors can be sent)."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from sqsqueue import Broker, ManualClock
from sqsqueue.server import EndpointHandle

ACCOUNT = "123456789012"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


@pytest.fixture
def broker() -> Broker[Any]:
    return Broker(clock=ManualClock(start=1_700_000_000.0), account_id=ACCOUNT)


@pytest.fixture
def endpoint(broker: Broker[Any]) -> Iterator[EndpointHandle]:
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
