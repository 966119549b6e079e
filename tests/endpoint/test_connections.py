"""The HTTP connection itself, spoken to byte by byte: truncated requests,
read deadlines (slow or silent clients), oversized header sections, and bytes
that are not HTTP at all. Raw sockets, so nothing in between fixes the bytes.
Every test runs against each HTTP parser shipped (httptools and h11), and the
fallback to h11 where httptools is missing is tested."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sqsqueue import Broker
from sqsqueue.server import EndpointHandle, serve
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


@pytest.mark.usefixtures("parser")
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


@pytest.fixture
def quick(broker: Broker[Any], parser: str) -> Iterator[EndpointHandle]:
    """An endpoint whose read deadline is half a second."""
    with serve(broker, idle_timeout=0.5) as handle:
        yield handle


@pytest.mark.usefixtures("parser")
class TestReadDeadline:
    """Slow or silent clients are cut off: a request's head must arrive within
    ``idle_timeout``, its body within ``idle_timeout`` more (slowloris)."""

    def test_a_silent_connection_is_closed(self, quick: EndpointHandle) -> None:
        sock = connect(quick)
        started = time.perf_counter()
        assert closed_by_server(sock, within=5)
        assert 0.3 < time.perf_counter() - started < 3
        sock.close()

    def test_a_head_trickled_byte_by_byte_is_cut_off(self, quick: EndpointHandle) -> None:
        """The deadline counts from the start of the head, not from the last byte."""
        sock = connect(quick)
        started = time.perf_counter()
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        closed = False
        for i in range(40):  # a header byte every 0.1 s: 4 s if never cut off
            try:
                sock.sendall(b"X-Slow-%d: 1\r\n" % i)
            except OSError:
                closed = True
                break
            if closed_by_server(sock, within=0.1):
                closed = True
                break
        assert closed
        assert time.perf_counter() - started < 3
        sock.close()

    def test_a_stalled_body_is_abandoned(self, quick: EndpointHandle, broker: Broker[Any]) -> None:
        queue = broker.create_queue("q")
        full = query_send(f"{quick.endpoint_url}/{ACCOUNT}/q", "all+or+nothing")
        sock = connect(quick)
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\n"
            + FORM
            + b"Content-Length: %d\r\n\r\n" % len(full)
            + full[:-4]
        )
        started = time.perf_counter()
        assert closed_by_server(sock, within=5)
        assert time.perf_counter() - started < 3
        sock.close()
        assert queue.receive(max_messages=10) == []

    def test_an_idle_keep_alive_connection_is_closed(self, quick: EndpointHandle) -> None:
        sock = connect(quick)
        sock.sendall(b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_reply(sock)[0] == 200
        assert closed_by_server(sock, within=5)
        sock.close()

    def test_each_head_gets_its_whole_deadline(self, quick: EndpointHandle) -> None:
        """The deadline of the next head counts from the previous answer: a
        request made late in the first head's time leaves the connection its
        whole read deadline again (the connection's one timer, armed for the
        first head, sleeps on instead of closing)."""
        sock = connect(quick)
        pause(0.35)  # most of the first head's 0.5 s
        sock.sendall(b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_reply(sock)[0] == 200
        answered = time.perf_counter()
        # still open after the first head's deadline has passed...
        assert not closed_by_server(sock, within=0.3)
        # ...and closed once the second head's own has
        assert closed_by_server(sock, within=5)
        assert 0.4 < time.perf_counter() - answered < 3
        sock.close()

    def test_a_long_poll_outlives_the_deadline(
        self, broker: Broker[Any], quick: EndpointHandle
    ) -> None:
        """The deadline covers reading a request, not serving it: a poll longer
        than ``idle_timeout`` gets its answer, and the connection is reusable."""
        wall: Broker[Any] = Broker(account_id=ACCOUNT)  # a poll waits on the wall clock
        with serve(wall, idle_timeout=0.5) as handle:
            queue = wall.create_queue("q")
            sock = connect(handle)
            body = json.dumps({"QueueUrl": queue.url, "WaitTimeSeconds": 2}).encode()
            sock.sendall(
                b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: AmazonSQS.ReceiveMessage\r\n"
                b"Content-Type: application/x-amz-json-1.0\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body
            )
            pause(1.2)
            queue.send("late")
            status, _, reply = read_reply(sock)
            assert status == 200
            assert [m["Body"] for m in json.loads(reply)["Messages"]] == ["late"]
            sock.close()

    def test_shutdown_abandons_a_stalled_body_quietly(
        self, broker: Broker[Any], caplog: Any
    ) -> None:
        """Closing the endpoint with a request body half read returns at once and
        logs nothing (uvicorn used to cancel it after its grace period and log
        the CancelledError's traceback)."""
        handle = serve(broker)  # the default 30 s deadline
        sock = connect(handle)
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\n" + FORM + b"Content-Length: 100\r\n\r\nAction=Send"
        )
        pause(0.3)
        with caplog.at_level(logging.DEBUG):
            started = time.perf_counter()
            handle.close()
            took = time.perf_counter() - started
        sock.close()
        assert took < 2
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
        assert "CancelledError" not in caplog.text


XMLNS = "{http://queue.amazonaws.com/doc/2012-11-05/}"


@pytest.mark.usefixtures("parser")
class TestBytesThatAreNotHTTP:
    """What h11 refuses gets AWS's 400 InvalidHttpRequest, not uvicorn's plain
    text: XML (the protocol cannot be known) unless a parsed head named an
    X-Amz-Target, then JSON. The connection closes after the answer."""

    @pytest.mark.parametrize(
        "request_bytes",
        [
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}",
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 100,  # TLS ClientHello
            b"GARBAGE\r\n\r\n",
            b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\n\r\n",  # no Host
            b"GET /\xff\xfe?Action=ListQueues HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /?Action=ListQueues&QueueNamePrefix=\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        ],
        ids=["cl-negative", "cl-abc", "tls", "request-line", "no-host", "path", "query"],
    )
    def test_refused_bytes_get_an_xml_error_response(
        self, endpoint: EndpointHandle, request_bytes: bytes
    ) -> None:
        import xml.etree.ElementTree as ET

        sock = connect(endpoint)
        sock.sendall(request_bytes)
        status, headers, body = read_reply(sock)
        assert status == 400, body
        assert headers["content-type"] == "text/xml"
        root = ET.fromstring(body)
        assert root.tag == f"{XMLNS}ErrorResponse"
        assert root.findtext(f"{XMLNS}Error/{XMLNS}Type") == "Sender"
        assert root.findtext(f"{XMLNS}Error/{XMLNS}Code") == "InvalidHttpRequest"
        message = root.findtext(f"{XMLNS}Error/{XMLNS}Message") or ""
        assert message.startswith("Invalid HTTP request. Reason: ")
        assert "\\x" not in message  # the refused bytes are not echoed
        assert closed_by_server(sock, within=5)
        sock.close()

    def test_a_bad_chunk_of_a_json_request_gets_json(
        self, endpoint: EndpointHandle, broker: Broker[Any]
    ) -> None:
        queue = broker.create_queue("q")
        body = json.dumps({"QueueUrl": queue.url, "MessageBody": "x"}).encode()
        sock = connect(endpoint)
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: AmazonSQS.SendMessage\r\n"
            b"Content-Type: application/x-amz-json-1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n" % len(body)
            + body
            + b"\r\nzz\r\n"
        )
        status, headers, reply = read_reply(sock)
        assert status == 400
        assert headers["content-type"] == "application/x-amz-json-1.0"
        assert headers["x-amzn-query-error"] == "InvalidHttpRequest;Sender"
        assert json.loads(reply)["__type"].endswith("#InvalidHttpRequest")
        sock.close()
        pause(0.2)
        assert queue.receive() == []  # the request's body never arrived whole


class TestParsers:
    """Which parser serves, and the head bound each enforces."""

    def test_the_asked_parser_serves(self, endpoint: EndpointHandle, parser: str) -> None:
        sock = connect(endpoint)
        sock.sendall(b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_reply(sock)[0] == 200
        (protocol,) = endpoint._server.server_state.connections
        expected = {"h11": "H11Protocol", "httptools": "HttpToolsProtocol"}[parser]
        assert expected in {cls.__name__ for cls in type(protocol).__mro__}
        assert type(protocol).read_timeout == 30
        sock.close()

    def test_a_head_over_the_bound_arriving_in_pieces_is_refused(
        self, endpoint: EndpointHandle
    ) -> None:
        """A head that keeps growing is cut off at twice the Endpoint's header
        bound (32 KiB), whichever parser reads it: memory per connection stays
        bounded and the client gets InvalidHttpRequest."""
        sock = connect(endpoint)
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        sent = 0
        for i in range(64):  # 64 KiB if never refused
            try:
                sock.sendall(b"X-Pad-%02d: %s\r\n" % (i, b"a" * 1000))
            except OSError:  # the server answered and closed
                break
            sent += 1
            pause(0.01)
        status, _, body = read_reply(sock)
        assert status == 400 and b"<Code>InvalidHttpRequest</Code>" in body, body
        assert 32 <= sent < 40  # refused just past 32 KiB
        sock.close()


def test_h11_serves_where_httptools_is_missing(
    broker: Broker[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without httptools (an install without the extra's speedup), the server
    falls back to h11 with the same hardening instead of failing."""
    import sys

    from sqsqueue.server import _run

    monkeypatch.setattr(_run, "HTTP_PARSER", None)
    assert _run.http_parser() == "httptools"  # the extra installs it
    monkeypatch.setitem(sys.modules, "httptools", None)  # import httptools now fails
    assert _run.http_parser() == "h11"
    with serve(broker, idle_timeout=0.5) as handle:
        sock = connect(handle)
        sock.sendall(b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_reply(sock)[0] == 200
        (protocol,) = handle._server.server_state.connections
        assert "H11Protocol" in {cls.__name__ for cls in type(protocol).__mro__}
        assert closed_by_server(sock, within=5)  # its read deadline holds
        sock.close()
        sock = connect(handle)
        sock.sendall(b"GARBAGE\r\n\r\n")
        assert b"<Code>InvalidHttpRequest</Code>" in read_reply(sock)[2]
        sock.close()


def test_an_answer_leaves_in_one_write() -> None:
    """The httptools protocol hands each response cycle a transport that joins
    what the cycle writes in one step of the event loop (head, then body) into
    one write, and writes what it holds before closing."""
    import asyncio

    from sqsqueue.server._httptools import _OneWrite

    class Transport:
        def __init__(self) -> None:
            self.events: list[object] = []

        def write(self, data: bytes) -> None:
            self.events.append(data)

        def close(self) -> None:
            self.events.append("close")

    async def main() -> list[object]:
        real = Transport()
        held = _OneWrite(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        held.write(b"HTTP/1.1 200 OK\r\n\r\n")
        held.write(b"body")
        assert real.events == []
        await asyncio.sleep(0)
        held.write(b"next")
        held.close()
        return real.events

    assert asyncio.run(main()) == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"next", "close"]
