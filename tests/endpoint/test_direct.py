"""The httptools protocol answers a whole SQS POST straight from the Endpoint
(``Endpoint.answer_whole``), without an ASGI cycle; everything else (the
console's paths, GET, a connection whose answers are not being read) goes
through the ASGI call. Both must answer the same bytes, so these tests hold
the direct answers to what the h11 server (always ASGI) answers, and check
which path each request takes."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import pytest

from sqsqueue import Broker
from sqsqueue.server import Endpoint, _httptools, _run
from tests.endpoint.conftest import ACCOUNT
from tests.endpoint.test_connections import connect, pause, read_reply

JSON = "application/x-amz-json-1.0"


def json_request(action: str, payload: dict[str, Any], version: str = "1.1") -> bytes:
    body = json.dumps(payload).encode()
    return (
        f"POST / HTTP/{version}\r\nHost: 127.0.0.1\r\nContent-Type: {JSON}\r\n"
        f"X-Amz-Target: AmazonSQS.{action}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def form_request(form: str) -> bytes:
    return (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(form)}\r\n\r\n{form}"
    ).encode()


QUEUE_URL = f"http://127.0.0.1/{ACCOUNT}/q"
REQUESTS = {
    "CreateQueue": json_request("CreateQueue", {"QueueName": "q"}),
    "SendMessage": json_request("SendMessage", {"QueueUrl": QUEUE_URL, "MessageBody": "hello"}),
    "ReceiveMessage": json_request(
        "ReceiveMessage", {"QueueUrl": QUEUE_URL, "MaxNumberOfMessages": 10}
    ),
    "ReceiveMessage, empty": json_request("ReceiveMessage", {"QueueUrl": QUEUE_URL}),
    "ReceiveMessage, attributes": json_request(
        "ReceiveMessage", {"QueueUrl": QUEUE_URL, "AttributeNames": ["All"]}
    ),
    "GetQueueUrl, no such queue": json_request("GetQueueUrl", {"QueueName": "nope"}),
    "SendMessage, wrong type": json_request(
        "SendMessage", {"QueueUrl": QUEUE_URL, "MessageBody": 1}
    ),
    "not JSON": json_request("SendMessage", {})[:-2] + b"{x",
    "unknown target": json_request("Bogus", {}),
    "query ListQueues": form_request("Action=ListQueues&Version=2012-11-05"),
    "HTTP/1.0": json_request("GetQueueUrl", {"QueueName": "q"}, version="1.0"),
}
#: What differs from one run to the next: request ids, message ids, receipt
#: handles (random per queue and per message) and the send times.
_VARYING = re.compile(
    rb'("(MessageId|ReceiptHandle|SentTimestamp|ApproximateFirstReceiveTimestamp)":")[^"]*"'
    rb"|<RequestId>[^<]*</RequestId>"
)


def answers(broker: Broker[Any], parser: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each request of REQUESTS on a fresh connection to a fresh server, in
    order: (status, headers but the date and request id, body with what varies
    masked)."""
    monkeypatch.setattr(_run, "HTTP_PARSER", parser)
    out = []
    with broker.serve() as handle:
        for raw in REQUESTS.values():
            sock = connect(handle)
            sock.sendall(raw)
            status, headers, body = read_reply(sock)
            sock.close()
            headers.pop("date")
            headers.pop("x-amzn-requestid")
            out.append((status, headers, _VARYING.sub(rb"\1", body)))
    return out


def test_the_direct_answers_are_the_asgi_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    direct = answers(Broker(account_id=ACCOUNT), "httptools", monkeypatch)
    asgi = answers(Broker(account_id=ACCOUNT), "h11", monkeypatch)
    for name, one, other in zip(REQUESTS, direct, asgi, strict=True):
        assert one == other, name
    statuses = dict(zip(REQUESTS, (status for status, _, _ in direct), strict=True))
    assert statuses["GetQueueUrl, no such queue"] == 400
    assert statuses["ReceiveMessage"] == 200
    assert direct[list(REQUESTS).index("HTTP/1.0")][1]["connection"] == "close"


def test_which_requests_skip_the_asgi_call(
    broker: Broker[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQS POSTs are written by the protocol; GET, the console's paths and
    the h11 protocol go through Endpoint.__call__."""
    monkeypatch.setattr(_run, "HTTP_PARSER", "httptools")
    direct: list[int] = []
    asgi: list[str] = []
    write, call = _httptools.HttptoolsEndpointProtocol._write_answer, Endpoint.__call__

    def counting_write(self: Any, cycle: Any, status: int, *rest: Any) -> None:
        direct.append(status)
        write(self, cycle, status, *rest)

    async def counting_call(self: Endpoint, scope: Any, receive: Any, send: Any) -> None:
        asgi.append(f"{scope.get('method')} {scope.get('path')}")
        await call(self, scope, receive, send)

    monkeypatch.setattr(_httptools.HttptoolsEndpointProtocol, "_write_answer", counting_write)
    monkeypatch.setattr(Endpoint, "__call__", counting_call)
    peek = f"QueueUrl=http://127.0.0.1/{ACCOUNT}/q"
    statuses = []
    with broker.serve() as handle:
        for raw in (
            REQUESTS["CreateQueue"],
            REQUESTS["query ListQueues"],
            b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /_sqsqueue/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            form_request(peek).replace(b"POST / ", b"POST /_aws/sqs/messages "),
        ):
            sock = connect(handle)
            sock.sendall(raw)
            statuses.append(read_reply(sock)[0])
            sock.close()
    assert statuses == [200, 200, 200, 200, 200]
    assert direct == [200, 200]
    assert asgi == ["GET /", "GET /_sqsqueue/health", "POST /_aws/sqs/messages"]


def read_replies(sock: Any, count: int) -> list[dict[str, str]]:
    """The headers of ``count`` answers read off one connection, in order
    (each a 200)."""
    data = b""
    out: list[dict[str, str]] = []
    while len(out) < count:
        head, found, rest = data.partition(b"\r\n\r\n")
        if found:
            lines = head.decode("latin-1").split("\r\n")
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])
            }
            length = int(headers["content-length"])
            if len(rest) >= length:
                assert lines[0].startswith("HTTP/1.1 200"), lines[0]
                out.append(headers)
                data = rest[length:]
                continue
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    return out


@pytest.mark.parametrize("others", [0, 1])
def test_pipelined_answers_leave_in_order(
    broker: Broker[Any], monkeypatch: pytest.MonkeyPatch, others: int
) -> None:
    """Requests pipelined in one packet, some answered through the ASGI call
    (GET) and some directly (POST), get their answers in the order asked,
    whether the connection is alone (its answers leave at once) or others
    are open (answers are held to the end of the loop's step)."""
    monkeypatch.setattr(_run, "HTTP_PARSER", "httptools")
    broker.create_queue("q")
    get = b"GET /?Action=ListQueues&Version=2012-11-05 HTTP/1.1\r\nHost: x\r\n\r\n"
    post = json_request("GetQueueUrl", {"QueueName": "q"})
    with broker.serve() as handle:
        idle = [connect(handle) for _ in range(others)]
        pause(0.1)
        sock = connect(handle)
        sock.sendall(get + post + get + post)
        kinds = [headers["content-type"] for headers in read_replies(sock, 4)]
        sock.close()
        for s in idle:
            s.close()
    xml, json_ = "text/xml", JSON
    assert kinds == [xml, json_, xml, json_]


def test_a_long_poll_whose_client_left(
    broker: Broker[Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A long poll answered after its client disconnected writes nothing and
    logs nothing; the server goes on serving."""
    monkeypatch.setattr(_run, "HTTP_PARSER", "httptools")
    queue = broker.create_queue("q")
    caplog.set_level(logging.WARNING)
    with broker.serve() as handle:
        url = f"{handle.endpoint_url}/{ACCOUNT}/q"
        sock = connect(handle)
        sock.sendall(json_request("ReceiveMessage", {"QueueUrl": url, "WaitTimeSeconds": 5}))
        pause(0.3)
        sock.close()
        pause(0.3)
        queue.send("after the client left")  # wakes the poll, whose client is gone
        pause(0.3)
        sock = connect(handle)
        sock.sendall(json_request("GetQueueUrl", {"QueueName": "q"}))
        assert read_reply(sock)[0] == 200
        sock.close()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


class _Transport(asyncio.Transport):
    """What the protocol writes, in process."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 9324), "peername": ("127.0.0.1", 5555)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def test_a_client_not_reading_its_answers_waits_for_them() -> None:
    """While the transport's buffer is full (the client reads no answer), a
    request is served by the ASGI cycle, which waits for the client to catch
    up before writing: answers do not pile up in memory."""
    import uvicorn
    from uvicorn.server import ServerState

    async def main() -> None:
        broker: Broker[Any] = Broker(account_id=ACCOUNT)
        broker.create_queue("q")
        endpoint = Endpoint(broker)
        cls = _run.http_protocol(30, endpoint)
        config = uvicorn.Config(endpoint, http=cls, log_config=None, lifespan="off")
        config.load()
        proto = cls(config=config, server_state=ServerState(), app_state={})
        transport = _Transport()
        proto.connection_made(transport)
        request = json_request("GetQueueUrl", {"QueueName": "q"})
        proto.data_received(request)
        await asyncio.sleep(0)
        assert transport.written.startswith(b"HTTP/1.1 200 OK")  # the direct path
        transport.written = b""
        proto.pause_writing()  # the transport's buffer is over its high-water mark
        proto.data_received(request)
        for _ in range(3):
            await asyncio.sleep(0)
        assert transport.written == b""  # held until the client reads
        proto.resume_writing()
        for _ in range(3):
            await asyncio.sleep(0)
        assert transport.written.startswith(b"HTTP/1.1 200 OK")
        assert json.loads(transport.written.partition(b"\r\n\r\n")[2])["QueueUrl"].endswith("/q")

    asyncio.run(main())
