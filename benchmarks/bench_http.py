"""The endpoint against the floor: requests/s of ``sqsqueue serve`` beside a
hello-world ASGI app under uvicorn with httptools, loaded by wrk.

Run through ``python3 benchmarks`` (``--only http`` runs this alone) or
directly with the venv's python: ``.venv/bin/python benchmarks/bench_http.py
--quick``. Add ``--pin`` to run each server on core 0 and wrk on core 1
(taskset); by default neither is pinned, which measured steadier here while
other processes load one core or the other.

The load generator is wrk (Debian's package; C, epoll, one thread), in a
process of its own: a load generator in Python saturates its core before a
fast server does. Run as root without wrk, this installs it with
``apt-get install -y wrk``; without wrk and unable to install it, the section
says so and measures nothing.

Every server runs in a child process of its own, all started at once and kept
running; the workloads take turns within each round (each server answers a
``seconds``-long wrk run, then the next), so a burst of load from another
process touches floor and sqsqueue alike, and the best of the rounds counts.
The ratio targets compare figures measured side by side like that.

Servers (each on 127.0.0.1, uvicorn on asyncio's loop):

* ``hello``: a hello-world ASGI app (reads the body, answers 13 bytes) under
  uvicorn with httptools: the floor of issue 26's targets.
* ``hello-h11``: the same app under uvicorn with h11 (information: the parser
  sqsqueue's endpoint falls back to).
* ``bare``: an ASGI app that parses the JSON body, calls the engine's ``send``
  and answers its JSON, under uvicorn with httptools (information: what the
  endpoint would cost with none of AWS's protocol around the engine).
* ``sqsqueue``: ``serve()``, what ``sqsqueue serve`` runs (the wall clock,
  httptools, the hardened protocol) for one broker; the few µs its
  accounts and regions add a request are ``bench_accounts.py``'s;
  ``sqsqueue-sigv4`` the same with
  credentials, so every request's Signature V4 is verified.
* ``moto``: moto's ``ThreadedMotoServer`` (the connection sweep only).

Workloads (the JSON protocol, a 100-byte body):

* ``SendMessage``: the same request again and again (the queue grows).
* ``ReceiveMessage`` of 10 messages and ``DeleteMessageBatch`` of 10 fresh
  receipt handles: the server child fills fresh queues (untimed, in process;
  for the deletes it also receives the messages) and writes the requests
  (signed, for ``sqsqueue-sigv4``) to a file that wrk's script plays once,
  stopping when it runs out, so every answer carries 10 messages or deletes
  10. The requests take turns over enough queues that none holds more than
  100,000 messages in flight (AWS's limit is 120,000 a queue).
* the connection sweep: ``SendMessage`` at 1 to 64 connections against
  ``sqsqueue``, ``hello`` and ``moto``, plotted
  (``endpoint_rps_vs_connections.png``).

A full run replaces this script's section of ``benchmarks/RESULTS.md`` and its
rows of the Targets table; ``--quick`` writes nothing unless ``--output`` is
given. Targets are reported, never asserted.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Table,
    Verdict,
    command,
    loadavg,
    machine,
    merge_targets,
    progress,
    rate,
    section_args,
    status,
    write_section,
)

SECTION = "Over HTTP: sqsqueue's endpoint against the floor (wrk)"
ACCOUNT = "123456789012"
REGION = "us-east-1"
BODY = "x" * 100
KEY, SECRET = "bench-key", "bench-secret"
#: Issue 26's targets: sqsqueue's requests/s over the hello-world floor's.
TARGET = 0.35
TARGET_SIGNED = 0.25
PLOT = "endpoint_rps_vs_connections.png"
_PLAYLIST_QUEUES = itertools.count()
perf = time.perf_counter


@dataclass(frozen=True)
class Sizes:
    seconds: int  # one wrk run
    rounds: int  # each workload once per round, best of the rounds
    connections: int  # the targets' runs
    sweep: tuple[int, ...]  # connections of the plotted sweep
    sweep_seconds: int
    playlist: int  # pre-built ReceiveMessage / DeleteMessageBatch requests per run


FULL = Sizes(3, 3, 8, (1, 2, 4, 8, 16, 32, 64), 2, 60_000)
QUICK = Sizes(1, 1, 8, (1, 8, 64), 1, 15_000)


# -- the servers (child processes) -----------------------------------------------------


def hello_app() -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"13")],
            }
        )
        await send({"type": "http.response.body", "body": b"Hello, world!"})

    return app


def bare_app() -> Any:
    from sqsqueue import Broker

    queue = Broker(account_id=ACCOUNT, region=REGION).create_queue("q")

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        sent = queue.send(json.loads(body)["MessageBody"])
        out = json.dumps({"MD5OfMessageBody": sent.md5_of_body, "MessageId": sent.message_id})
        payload = out.encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/x-amz-json-1.0"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    return app


def serve_child(kind: str) -> int:
    """Runs in a child process: serve until stdin closes or says ``quit``. Prints
    ``{"url": ...}`` once serving; for sqsqueue, ``requests ACTION N FILE``
    writes N requests (:func:`write_requests`) to FILE and answers ``ok``."""
    import threading

    if kind in ("hello", "hello-h11", "bare"):
        import socket

        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        app = bare_app() if kind == "bare" else hello_app()
        config = uvicorn.Config(
            app,
            http="h11" if kind == "hello-h11" else "httptools",
            loop="asyncio",
            lifespan="off",
            log_config=None,
            access_log=False,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            threading.Event().wait(0.01)
        print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}"}), flush=True)
        sys.stdin.read()
        server.should_exit = True
        thread.join(10)
        return 0
    if kind == "moto":
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise

        os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
        moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        moto.start()
        host, port = moto.get_host_and_port()
        print(json.dumps({"url": f"http://{host}:{port}"}), flush=True)
        sys.stdin.read()
        moto.stop()
        return 0
    from sqsqueue import Broker
    from sqsqueue.server import serve

    broker: Broker[Any] = Broker(account_id=ACCOUNT, region=REGION)  # the wall clock
    credentials = {KEY: SECRET} if kind == "sqsqueue-sigv4" else None
    handle = serve(broker, credentials=credentials)
    print(json.dumps({"url": handle.endpoint_url}), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[:1] == ["requests"]:  # requests ACTION N FILE
            action, n, path = cmd[1], int(cmd[2]), Path(cmd[3])
            write_requests(broker, handle.endpoint_url, action, n, path, credentials)
            print("ok", flush=True)
        elif cmd[:1] == ["drop"]:  # the playlists' queues, once played
            for url in broker.list_queues("w").queue_urls:
                broker.delete_queue(url)
            print("ok", flush=True)
        elif cmd[:1] == ["quit"]:
            break
    handle.close()
    return 0


#: Messages a playlist leaves in flight per queue, under AWS's 120,000 (a queue
#: answers OverLimit past it): the requests are spread over enough queues.
PER_QUEUE = 100_000


def write_requests(
    broker: Any, url: str, action: str, n: int, path: Path, credentials: dict[str, str] | None
) -> None:
    """N requests of 10 messages each, one raw HTTP request per line of
    ``path`` (CRLF written as \\x1e), taking turns over fresh queues that
    each keep at most PER_QUEUE messages in flight. ReceiveMessage: the
    queues are filled here (in process, untimed) with the 10 messages of
    each request. DeleteMessageBatch: each request's 10 messages are also
    received here first, and the request deletes them by their handles."""
    from sqsqueue import SendEntry

    count = -(-n * 10 // PER_QUEUE)
    queues = [broker.create_queue(f"w{next(_PLAYLIST_QUEUES)}") for _ in range(count)]
    host = url.removeprefix("http://")
    with path.open("w", encoding="latin-1") as out:
        for i in range(n):
            queue = queues[i % count]
            queue_url = f"{url}/{ACCOUNT}/{queue.name}"
            queue.send_batch([SendEntry(str(j), BODY) for j in range(10)])
            if action == "ReceiveMessage":
                payload: dict[str, Any] = {"QueueUrl": queue_url, "MaxNumberOfMessages": 10}
            else:
                handles = [m.receipt_handle for m in queue.receive(10, visibility_timeout=3600)]
                entries = [{"Id": str(j), "ReceiptHandle": h} for j, h in enumerate(handles)]
                payload = {"QueueUrl": queue_url, "Entries": entries}
            body, headers = json_request(url, action, payload, credentials)
            head = f"POST / HTTP/1.1\x1eHost: {host}\x1e" + "".join(
                f"{k}: {v}\x1e" for k, v in headers.items()
            )
            out.write(head + f"Content-Length: {len(body)}\x1e\x1e" + body.decode() + "\n")


def json_request(
    url: str, action: str, payload: dict[str, Any], credentials: dict[str, str] | None
) -> tuple[bytes, dict[str, str]]:
    """A JSON-protocol request's body and headers, signed as an SDK signs it
    when ``credentials`` are given (a signature stays valid for minutes, so
    wrk replays it)."""
    body = json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": f"AmazonSQS.{action}",
    }
    if credentials is None:
        return body, headers
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method="POST", url=url + "/", data=body, headers=headers)
    SigV4Auth(Credentials(KEY, credentials[KEY]), "sqs", REGION).add_auth(request)
    return body, {k: v for k, v in request.headers.items() if k.lower() != "content-length"}


class Child:
    """A server in a child process (``--serve-child KIND``)."""

    def __init__(self, kind: str, pin: bool) -> None:
        argv = [sys.executable, __file__, "--serve-child", kind]
        if pin:
            argv = ["taskset", "-c", "0", *argv]
        self.kind = kind
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url: str = json.loads(self.proc.stdout.readline())["url"]

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer:
            raise RuntimeError(f"the {self.kind} server child did not answer {line!r}")
        return answer

    def close(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


# -- wrk ----------------------------------------------------------------------------------


def find_wrk() -> tuple[str | None, str]:
    """wrk's path, installing Debian's package when root; else (None, why)."""
    found = shutil.which("wrk")
    if found:
        return found, ""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None, "wrk is not installed (apt-get install wrk, as root)"
    progress("http", "installing wrk", "apt-get install -y wrk")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["apt-get", "install", "-y", "-q", "wrk"], ["apt-get", "update", "-q"]):
        subprocess.run(args, env=env, capture_output=True, check=False)
        if shutil.which("wrk"):
            break
    if not shutil.which("wrk"):
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "wrk"], env=env, capture_output=True, check=False
        )
    found = shutil.which("wrk")
    return (found, "") if found else (None, "wrk could not be installed with apt-get")


STATIC_LUA = """
local f = io.open(os.getenv("SQSQUEUE_WRK_REQUEST"), "rb")
local raw = f:read("*a")
f:close()
function request() return raw end
"""

#: Plays the file's requests once each; stops the thread when they run out.
PLAYLIST_LUA = """
local reqs = {}
for line in io.lines(os.getenv("SQSQUEUE_WRK_REQUESTS")) do
  reqs[#reqs + 1] = line:gsub("\\30", "\\r\\n")
end
local i = 0
function request()
  i = i + 1
  if i >= #reqs then wrk.thread:stop() end
  return reqs[math.min(i, #reqs)]
end
"""


@dataclass
class Wrk:
    path: str
    pin: bool
    scripts: Path

    def run(
        self, url: str, connections: int, seconds: float, request: bytes | Path | None
    ) -> float:
        """Requests/s of one wrk run: ``request`` is one raw HTTP request sent
        again and again, a file of requests played once, or None (GET /)."""
        env = dict(os.environ)
        argv = [
            self.path,
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "10s",
        ]
        if isinstance(request, bytes):
            raw = self.scripts / "request.http"
            raw.write_bytes(request)
            env["SQSQUEUE_WRK_REQUEST"] = str(raw)
            argv += ["-s", str(self.scripts / "static.lua")]
        elif isinstance(request, Path):
            env["SQSQUEUE_WRK_REQUESTS"] = str(request)
            argv += ["-s", str(self.scripts / "playlist.lua")]
        if self.pin:
            argv = ["taskset", "-c", "1", *argv]
        argv.append(url + "/")
        out = subprocess.run(argv, check=False, env=env, capture_output=True, text=True).stdout
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        if errors:
            raise RuntimeError(f"wrk got {errors.group(1)} error answers from {url}:\n{out}")
        found = re.search(r"Requests/sec:\s+([\d.]+)", out)
        if found is None:
            raise RuntimeError(f"wrk said:\n{out}")
        return float(found.group(1))


def raw_request(url: str, action: str, payload: dict[str, Any], signed: bool) -> bytes:
    credentials = {KEY: SECRET} if signed else None
    body, headers = json_request(url, action, payload, credentials)
    host = url.removeprefix("http://")
    head = f"POST / HTTP/1.1\r\nHost: {host}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()
    )
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


# -- the run -----------------------------------------------------------------------------


@dataclass
class Results:
    #: (workload, server) -> best requests/s
    best: dict[tuple[str, str], float] = field(default_factory=dict)
    #: (workload, server) -> every run's requests/s, in order
    runs: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    #: server -> connections -> best requests/s
    sweep: dict[str, dict[int, float]] = field(default_factory=dict)
    loads: list[str] = field(default_factory=list)

    def keep(self, key: tuple[str, str], value: float) -> None:
        self.best[key] = max(self.best.get(key, 0.0), value)
        self.runs.setdefault(key, []).append(value)


@contextmanager
def children(kinds: list[str], pin: bool) -> Iterator[dict[str, Child]]:
    with ExitStack() as stack:
        started: dict[str, Child] = {}
        for kind in kinds:
            c = Child(kind, pin)
            stack.callback(c.close)
            started[kind] = c
        yield started


def measure(sizes: Sizes, wrk: Wrk, tmp: Path) -> Results:
    res = Results()
    kinds = ["hello", "hello-h11", "bare", "sqsqueue", "sqsqueue-sigv4", "moto"]
    with children(kinds, wrk.pin) as servers:

        def send(kind: str) -> bytes | None:
            if kind.startswith("hello"):
                return None
            url = servers[kind].url
            payload = {"QueueUrl": f"{url}/{ACCOUNT}/q", "MessageBody": BODY}
            return raw_request(url, "SendMessage", payload, kind == "sqsqueue-sigv4")

        for kind in ("sqsqueue", "sqsqueue-sigv4"):  # create the queue q
            url = servers[kind].url
            post(url, raw_request(url, "CreateQueue", {"QueueName": "q"}, kind == "sqsqueue-sigv4"))
        moto_url = servers["moto"].url
        import boto3

        boto3.client(
            "sqs",
            endpoint_url=moto_url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        ).create_queue(QueueName="q")

        for r in range(sizes.rounds):
            res.loads.append(loadavg())
            progress("http", f"round {r + 1} of {sizes.rounds}", f"load average {loadavg()}")
            turns: list[tuple[str, str, bytes | Path | None]] = [
                ("hello-world", "hello", None),
                ("SendMessage", "sqsqueue", send("sqsqueue")),
                ("hello-world", "hello-h11", None),
                ("SendMessage", "bare", send("bare")),
                ("SendMessage", "sqsqueue-sigv4", send("sqsqueue-sigv4")),
            ]
            for action in ("ReceiveMessage", "DeleteMessageBatch"):
                for kind in ("sqsqueue", "sqsqueue-sigv4"):
                    turns.append((action, kind, tmp / f"{action}-{kind}.txt"))
            turns.append(("hello-world", "hello", None))  # the floor again, after
            for workload, kind, request in turns:
                if isinstance(request, Path):  # written just before it is played
                    servers[kind].ask(f"requests {workload} {sizes.playlist} {request}")
                value = wrk.run(servers[kind].url, sizes.connections, sizes.seconds, request)
                if isinstance(request, Path):
                    servers[kind].ask("drop")
                    # wrk divides by the whole duration: a playlist played out
                    # before the end would understate the rate.
                    if value * sizes.seconds > 0.95 * sizes.playlist:
                        raise RuntimeError(
                            f"{workload} on {kind} played its {sizes.playlist:,} requests "
                            "before the run ended: raise Sizes.playlist"
                        )
                res.keep((workload, kind), value)
                progress("http", f"{workload} {kind}, {sizes.connections} connections", rate(value))
        for r in range(sizes.rounds):
            for n in sizes.sweep:
                for kind in ("hello", "sqsqueue", "moto"):
                    request = send(kind) if kind != "moto" else moto_send(moto_url)
                    value = wrk.run(servers[kind].url, n, sizes.sweep_seconds, request)
                    points = res.sweep.setdefault(kind, {})
                    points[n] = max(points.get(n, 0.0), value)
                    progress("http", f"sweep {kind}, {n} connections, round {r + 1}", rate(value))
    return res


def post(url: str, request: bytes) -> None:
    """Send one raw request and check it was answered 200."""
    import socket

    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = sock.recv(65536)
    if not answer.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"{url} answered {answer[:300]!r}")


def moto_send(url: str) -> bytes:
    payload = {"QueueUrl": f"{url}/{ACCOUNT}/q", "MessageBody": BODY}
    return raw_request(url, "SendMessage", payload, signed=False)


# -- the in-process breakdown --------------------------------------------------------------


class _Discard:
    """A transport that keeps nothing: what the protocol writes, in process."""

    def write(self, data: bytes) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 9324), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _in_process_server(endpoint: Any) -> Any:
    """The protocol ``serve()`` runs for ``endpoint`` (httptools), on a
    transport that keeps nothing: its ``data_received(raw)`` serves one
    request as the server does, but for the socket. Call on an event loop."""
    import uvicorn
    from uvicorn.server import ServerState

    from sqsqueue.server import _run

    cls = _run.http_protocol(_run.IDLE_TIMEOUT, endpoint)
    config = uvicorn.Config(endpoint, http=cls, log_config=None, lifespan="off")
    config.load()
    protocol = cls(config=config, server_state=ServerState(), app_state={})
    protocol.connection_made(_Discard())
    return protocol


def _respond(endpoint: Any, raw: bytes) -> Any:
    """A call running the Endpoint's answer to ``raw`` (a whole request), as
    the protocol runs it (``answer_whole``), outside any task."""
    import httptools

    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    headers = [
        (name.strip().lower(), value.strip())
        for name, _, value in (line.partition(b":") for line in lines[1:])
    ]
    path = httptools.parse_url(lines[0].split()[1])
    scope = {
        "type": "http",
        "method": "POST",
        "path": path.path.decode(),
        "raw_path": path.path,
        "query_string": path.query or b"",
        "headers": headers,
    }

    def call() -> Any:
        coro = endpoint.answer_whole(scope, body)
        try:
            coro.send(None)  # a request that finds what it needs never suspends
        except StopIteration as done:
            return done.value
        raise AssertionError("the request waited")

    return call


#: The parts each breakdown times, in its rows' order.
_PARTS = ("whole", "respond", "short", "engine")


def _timed(n: int, fresh: Any, before: Any = None) -> dict[str, float]:
    """Seconds a call of each of :data:`_PARTS` takes: the best of 3 runs of
    ``n``, each run on an event loop (the protocol's deferred write runs
    between calls, untimed) with the calls ``fresh()`` gives for it (a fresh
    protocol, a fresh queue); ``before()`` runs untimed before each call."""
    import asyncio

    async def run(name: str) -> float:
        todo = fresh()[name]
        took = 0.0
        for _ in range(n):
            if before is not None:
                before()
            t0 = perf()
            todo()
            took += perf() - t0
            await asyncio.sleep(0)
        return took / n

    async def all_of() -> dict[str, float]:
        return {name: min([await run(name) for _ in range(3)]) for name in _PARTS}

    return asyncio.run(all_of())


def breakdown() -> list[tuple[str, float]]:
    """µs of each part of one SendMessage, in process (no socket): the whole
    request through the protocol ``serve()`` runs (httptools, uvicorn's
    request state, the Endpoint, the engine, the answer's write), and its
    parts timed alone."""
    from sqsqueue import Broker
    from sqsqueue.aws import _wire
    from sqsqueue.aws._client import Client
    from sqsqueue.server import Endpoint

    broker: Broker[Any] = Broker(account_id=ACCOUNT, region=REGION)
    queue = broker.create_queue("q")
    endpoint = Endpoint(broker)
    url = "http://127.0.0.1:9324"
    raw = raw_request(
        url, "SendMessage", {"QueueUrl": f"{url}/{ACCOUNT}/q", "MessageBody": BODY}, False
    )
    body = raw.partition(b"\r\n\r\n")[2]
    client = Client(broker, endpoint_url=url)
    target, _, headers = decode_args(body)
    assert _wire.answer_short(target, client, body, headers) is not None

    def fresh() -> dict[str, Any]:
        protocol = _in_process_server(endpoint)
        return {
            "whole": lambda: protocol.data_received(raw),
            "respond": _respond(endpoint, raw),
            # What the Endpoint runs for a SendMessage of the usual shape: the
            # codec's short path (parse, checks, the engine's send, the JSON).
            "short": lambda: _wire.answer_short(target, client, body, headers),
            "engine": lambda: queue.send(BODY),
        }

    t = _timed(20_000, fresh)
    return [
        ("the whole request (the protocol's data_received)", t["whole"]),
        ("of which: the Endpoint's answer (Endpoint.answer_whole)", t["respond"]),
        ("of which, inside it: the codec's short path (_wire.answer_short)", t["short"]),
        ("of which, inside that: the engine's send (Queue.send)", t["engine"]),
        (
            "of which: the protocol (httptools, uvicorn's request state, the write)",
            max(0.0, t["whole"] - t["respond"]),
        ),
    ]


def receive_breakdown() -> list[tuple[str, float]]:
    """µs of each part of one ReceiveMessage returning 10 messages, in
    process, as :func:`breakdown`: 10 fresh messages are sent (untimed) before
    each timed call, as the wrk playlists store 10 for each request; each run
    takes a fresh queue (the received messages stay in flight)."""
    import itertools

    from sqsqueue import Broker, SendEntry
    from sqsqueue.aws import _wire
    from sqsqueue.aws._client import Client
    from sqsqueue.server import Endpoint

    broker: Broker[Any] = Broker(account_id=ACCOUNT, region=REGION)
    endpoint = Endpoint(broker)
    url = "http://127.0.0.1:9324"
    client = Client(broker, endpoint_url=url)
    entries = [SendEntry(str(j), BODY) for j in range(10)]
    names = (f"r{i}" for i in itertools.count())
    queue: Any = None

    def fresh() -> dict[str, Any]:
        nonlocal queue
        queue = broker.create_queue(next(names))
        payload = {"QueueUrl": f"{url}/{ACCOUNT}/{queue.name}", "MaxNumberOfMessages": 10}
        raw = raw_request(url, "ReceiveMessage", payload, False)
        body = raw.partition(b"\r\n\r\n")[2]
        protocol = _in_process_server(endpoint)

        def short() -> None:
            coro = _wire.receive_short(client, body)
            assert coro is not None
            try:
                coro.send(None)
            except StopIteration:
                return
            raise AssertionError("the receive waited")

        return {
            "whole": lambda: protocol.data_received(raw),
            "respond": _respond(endpoint, raw),
            "short": short,
            "engine": lambda: queue.receive(10, attribute_names=(), message_attribute_names=()),
        }

    t = _timed(5_000, fresh, before=lambda: queue.send_batch(entries))
    return [
        ("the whole request (the protocol's data_received)", t["whole"]),
        ("of which: the Endpoint's answer (Endpoint.answer_whole)", t["respond"]),
        (
            "of which, inside it: the codec's short path (_wire.receive_short: parse, "
            "the engine's receive, the JSON written from the records)",
            t["short"],
        ),
        (
            "for scale: the engine's receive of 10 as Message views (Queue.receive, no attributes)",
            t["engine"],
        ),
        (
            "of which: the protocol (httptools, uvicorn's request state, the write)",
            max(0.0, t["whole"] - t["respond"]),
        ),
    ]


def decode_args(body: bytes) -> tuple[str, bytes, dict[str, str]]:
    return "AmazonSQS.SendMessage", body, {"content-type": "application/x-amz-json-1.0"}


# -- the section ---------------------------------------------------------------------------


def section(
    sizes: Sizes,
    res: Results,
    parts: list[tuple[str, float]],
    receive_parts: list[tuple[str, float]],
    cmd: str,
    elapsed: float,
    pin: bool,
) -> tuple[str, list[Verdict]]:
    floor = res.best[("hello-world", "hello")]
    rows = []
    judged: list[Verdict] = []
    for workload, kind, target in (
        ("SendMessage", "sqsqueue", TARGET),
        ("ReceiveMessage", "sqsqueue", TARGET),
        ("DeleteMessageBatch", "sqsqueue", TARGET),
        ("SendMessage", "sqsqueue-sigv4", TARGET_SIGNED),
        ("ReceiveMessage", "sqsqueue-sigv4", TARGET_SIGNED),
        ("DeleteMessageBatch", "sqsqueue-sigv4", TARGET_SIGNED),
    ):
        value = res.best[(workload, kind)]
        ratio = value / floor
        met = ratio >= target
        what = {
            "SendMessage": "SendMessage",
            "ReceiveMessage": "ReceiveMessage (10 messages)",
            "DeleteMessageBatch": "DeleteMessageBatch (10 handles)",
        }[workload]
        signed = kind == "sqsqueue-sigv4"
        name = (
            f"endpoint {what}{', SigV4 verified' if signed else ''} requests/s >= {target}x "
            "hello-world ASGI app (uvicorn + httptools)"
        )
        judged.append(
            Verdict(
                name,
                "issue 26",
                f"{ratio:.2f}x ({rate(value)} vs {rate(floor)} /s)",
                met,
                "http",
                ""
                if met
                else f"{1e6 / value:.0f} µs a request against the "
                f"{1e6 / (floor * target):.0f} µs allowed (see the http section's breakdowns"
                + (
                    ": in process, a ReceiveMessage through the protocol is "
                    f"{receive_parts[0][1] * 1e6:.0f} µs, of which the Endpoint's answer "
                    f"{receive_parts[1][1] * 1e6:.0f} (the codec's short path "
                    f"{receive_parts[2][1] * 1e6:.0f}) and the protocol "
                    f"{receive_parts[4][1] * 1e6:.0f}; the rest of the request is the "
                    "event loop and the kernel)"
                    if workload == "ReceiveMessage"
                    else ")"
                ),
            )
        )
        rows.append(
            [
                what,
                "SigV4 verified" if signed else "anonymous",
                rate(value),
                f"{1e6 / value:.0f} µs",
                f"{ratio:.2f}x",
                f">= {target}x",
                status(met),
            ]
        )
    info = [
        [
            "hello-world app, uvicorn + httptools (the floor)",
            rate(floor),
            f"{1e6 / floor:.0f} µs",
            "1",
        ],
        [
            "hello-world app, uvicorn + h11",
            rate(res.best[("hello-world", "hello-h11")]),
            f"{1e6 / res.best[('hello-world', 'hello-h11')]:.0f} µs",
            f"{res.best[('hello-world', 'hello-h11')] / floor:.2f}x",
        ],
        [
            "bare app: JSON body -> engine send -> JSON answer (uvicorn + httptools)",
            rate(res.best[("SendMessage", "bare")]),
            f"{1e6 / res.best[('SendMessage', 'bare')]:.0f} µs",
            f"{res.best[('SendMessage', 'bare')] / floor:.2f}x",
        ],
        [
            "sqsqueue serve, SendMessage",
            rate(res.best[("SendMessage", "sqsqueue")]),
            f"{1e6 / res.best[('SendMessage', 'sqsqueue')]:.0f} µs",
            f"{res.best[('SendMessage', 'sqsqueue')] / floor:.2f}x",
        ],
    ]
    spread = res.runs.get(("hello-world", "hello"), [floor])
    targets = Table(
        "Requests/s against the floor",
        f"wrk, {sizes.connections} connections, {sizes.seconds:g} s a run, best of "
        f"{sizes.rounds} rounds in which every workload took its turn; ratio: sqsqueue's "
        "requests/s over the hello-world app's in the same run. The floor, run at the "
        f"start and the end of every round, measured {rate(min(spread))} to "
        f"{rate(max(spread))} requests/s in this run (the machine's other work: the load "
        "averages above); the ratios divide by its best.",
        [
            "request",
            "verification",
            "requests/s",
            "per request",
            "ratio to the floor",
            "target",
            "result",
        ],
        rows,
    )
    peers = Table(
        "The floor and the peers of SendMessage",
        "Same runs. The bare app is issue 26's scale: the engine's send with none of "
        "AWS's protocol around it.",
        ["server", "requests/s", "per request", "ratio to the floor"],
        info,
    )
    whole = parts[0][1]
    split = Table(
        "Where a SendMessage's time goes",
        "In process (no socket): one SendMessage fed to the protocol `serve()` runs (a "
        "whole SQS POST is answered without an ASGI cycle, see docs/serving.md), and its "
        "parts timed alone (best of 3 x 20,000). The rest of a request's time is the "
        f"event loop's and the kernel's; the floor's {1e6 / floor:.0f} µs a request is "
        "what uvicorn, its ASGI cycle and the kernel cost with an empty application.",
        ["part", "µs", "share of the whole request"],
        [[name, f"{v * 1e6:.1f}", f"{v / whole:.0%}"] for name, v in parts],
    )
    receive_whole = receive_parts[0][1]
    receive_split = Table(
        "Where a ReceiveMessage's time goes",
        "In process, as above: one ReceiveMessage returning 10 messages (100-byte bodies) "
        "fed to the protocol, and its parts timed alone (best of 3 x 5,000, 10 fresh "
        "messages sent untimed before each call, as the wrk playlists store 10 for each "
        "request).",
        ["part", "µs", "share of the whole request"],
        [[name, f"{v * 1e6:.1f}", f"{v / receive_whole:.0%}"] for name, v in receive_parts],
    )
    sweep = Table(
        "Requests/s against concurrent connections",
        f"SendMessage (the hello-world app: GET /), wrk at 1 to {max(sizes.sweep)} "
        f"connections, {sizes.sweep_seconds:g} s a run, best of {sizes.rounds}.",
        ["connections", "hello-world floor", "sqsqueue serve", "moto server", "sqsqueue / moto"],
        [
            [
                str(n),
                rate(res.sweep["hello"][n]),
                rate(res.sweep["sqsqueue"][n]),
                rate(res.sweep["moto"][n]),
                f"{res.sweep['sqsqueue'][n] / res.sweep['moto'][n]:.1f}x",
            ]
            for n in sizes.sweep
        ],
    )
    lines = [
        f"## {SECTION}",
        "",
        f"Generated by `{cmd}` in {elapsed:.0f} s (`benchmarks/bench_http.py`). The load "
        "generator is wrk (C, one thread, its own process); each server is a child "
        "process (uvicorn on asyncio's loop; sqsqueue as `sqsqueue serve` runs it: "
        "httptools, the hardened protocol, the wall clock, one broker: what every "
        "account and region adds is bench_accounts.py's paired section). "
        + (
            "Servers pinned to core 0 and wrk to core 1 (taskset). "
            if pin
            else "Nothing pinned to a core. "
        )
        + f"Load average at the start of each round: {'; '.join(res.loads)}. "
        "Its targets are also in the Targets table at the top of this file.",
        "",
    ]
    tables = (targets, peers, split, receive_split, sweep)
    text = "\n".join(lines) + "".join("\n" + t.markdown(level=3) for t in tables)
    text += f"\n![requests/s against concurrent connections]({PLOT})\n"
    return text, judged


def draw_sweep(res: Results, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("[bench] no plot: matplotlib is not installed (pip install 'sqsqueue[bench]')")
        return False
    fig, ax = plt.subplots(figsize=(8, 4.8))
    labels = {
        "hello": "hello-world ASGI app, uvicorn + httptools (the floor)",
        "sqsqueue": "sqsqueue serve, SendMessage",
        "moto": "moto's server, SendMessage",
    }
    for kind, label in labels.items():
        points = res.sweep[kind]
        xs = sorted(points)
        ax.plot(xs, [points[x] for x in xs], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(res.sweep["hello"]))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_ylim(bottom=0)
    ax.set_xlabel("concurrent connections (wrk)")
    ax.set_ylabel("requests/s")
    ax.set_title("Requests/s against concurrent connections (127.0.0.1, 2 cores)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve-child"]:
        return serve_child(argv[1])
    pin = "--pin" in argv
    argv = [a for a in argv if a != "--pin"]
    args = section_args("bench_http.py", argv, "(no profile for this script)")
    sizes = QUICK if args.quick else FULL
    for key, value in machine():
        print(f"[bench] {key}: {value}", flush=True)
    cmd = command("benchmarks/bench_http.py", args.quick)
    path, why = find_wrk()
    if path is None:
        text = f"## {SECTION}\n\nNot measured in this run: {why}.\n"
        print(f"[bench] skipping the wrk measurements: {why}")
        if args.output is not None:
            write_section(args.output, SECTION, text)
        return 0
    t0 = perf()
    with tempfile.TemporaryDirectory() as tmp:
        scripts = Path(tmp)
        (scripts / "static.lua").write_text(STATIC_LUA)
        (scripts / "playlist.lua").write_text(PLAYLIST_LUA)
        res = measure(sizes, Wrk(path, pin, scripts), scripts)
    parts = breakdown()
    receive_parts = receive_breakdown()
    text, judged = section(sizes, res, parts, receive_parts, cmd, perf() - t0, pin)
    if args.output is not None:
        drawn = draw_sweep(res, args.output.parent / PLOT)
        if not drawn:
            text = text.replace(f"\n![requests/s against concurrent connections]({PLOT})\n", "\n")
        write_section(args.output, SECTION, text)
        merge_targets(args.output, judged)
        print(f"[bench] wrote the section {SECTION!r} of {args.output}")
    print()
    print(text)
    print("\n[bench] targets:")
    for v in judged:
        print(f"[bench]   {status(v.met):<6} {v.target}: {v.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
