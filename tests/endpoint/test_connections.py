"""The HTTP connection itself, spoken to byte by byte: truncated requests,
read deadlines (slow or silent clients), oversized header sections, and bytes
that are not HTTP at all. Raw sockets, so nothing in between fixes the bytes."""

from __future__ import annotations

import socket
import threading
from typing import Any

from sqsqueue import Broker
from sqsqueue.server import EndpointHandle
from tests.endpoint.conftest import ACCOUNT

FORM = b"Content-Type: application/x-www-form-urlencoded\r\n"


def pause(seconds: float) -> None:
    threading.Event().wait(seconds)


def connect(handle: EndpointHandle, timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", handle.port), timeout=timeout)


def read_reply(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP response (status, lower-cased headers, body); (0, {}, b"") if
    the server closed the connection without answering."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return 0, {}, b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` (EOF or reset) within ``within`` seconds
    without sending a byte."""
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def query_send(queue_url: str, body: str) -> bytes:
    return (
        f"Action=SendMessage&Version=2012-11-05&QueueUrl={queue_url}&MessageBody={body}"
    ).encode()


class TestTruncatedRequests:
    """A body cut short is abandoned: nothing runs, nothing is answered."""

    def test_a_form_cut_mid_body_stores_nothing(
        self, endpoint: EndpointHandle, broker: Broker[Any]
    ) -> None:
        queue = broker.create_queue("q")
        url = f"{endpoint.endpoint_url}/{ACCOUNT}/q"
        full = query_send(url, "transfer+100+to+alice+and+100+to+bob")
        cut = full[: full.index(b"+and")]  # still a well-formed form
        sock = connect(endpoint)
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\n"
            + FORM
            + b"Content-Length: %d\r\n\r\n" % len(full)
            + cut
        )
        pause(0.3)
        sock.close()  # the client dies mid-body
        pause(0.3)
        # A whole request on a new connection still works.
        whole = connect(endpoint)
        body = query_send(url, "whole")
        whole.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\n" + FORM + b"Content-Length: %d\r\n\r\n" % len(body)
        )
        whole.sendall(body)
        assert read_reply(whole)[0] == 200
        whole.close()
        assert [m.body for m in queue.receive(max_messages=10)] == ["whole"]
