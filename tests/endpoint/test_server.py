"""The HTTP transport: framing errors, Signature V4, binding rules, long polls
at scale, shutdown, and the ``sqsqueue serve`` command."""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsqueue import Broker
from sqsqueue.server import EndpointHandle, serve
from tests.endpoint.conftest import ACCOUNT, Reply, raw

JSON = {"Content-Type": "application/x-amz-json-1.0"}


def target(action: str) -> dict[str, str]:
    return {**JSON, "X-Amz-Target": f"AmazonSQS.{action}"}


def json_error(reply: Reply, status: int, type_suffix: str) -> None:
    assert reply.status == status, reply.body
    body = json.loads(reply.body)
    assert body["__type"].endswith(f"#{type_suffix}"), body
    assert "Traceback" not in body["message"]


def client(handle: EndpointHandle, key: str = "testing", secret: str = "testing") -> Any:
    return boto3.client(
        "sqs",
        endpoint_url=handle.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
    )


class TestBadRequests:
    """Section 1.4: every bad request gets AWS's 4xx in its own protocol."""

    def test_malformed_json(self, endpoint: EndpointHandle) -> None:
        reply = raw(endpoint.endpoint_url, "POST", "/", b"{not json", target("ListQueues"))
        json_error(reply, 400, "SerializationException")

    def test_unknown_json_action(self, endpoint: EndpointHandle) -> None:
        reply = raw(endpoint.endpoint_url, "POST", "/", b"{}", target("Explode"))
        json_error(reply, 400, "InvalidAction")

    def test_wrong_types(self, endpoint: EndpointHandle) -> None:
        body = json.dumps({"QueueName": 5}).encode()
        reply = raw(endpoint.endpoint_url, "POST", "/", body, target("CreateQueue"))
        json_error(reply, 400, "InvalidParameterValueException")

    def test_oversized_body_is_413_before_reading_it(self, endpoint: EndpointHandle) -> None:
        body = b"x" * (4 * 1024 * 1024 + 1)
        reply = raw(endpoint.endpoint_url, "POST", "/", body, target("SendMessage"))
        json_error(reply, 413, "RequestEntityTooLargeException")

    def test_too_many_headers(self, endpoint: EndpointHandle) -> None:
        headers = {**target("ListQueues"), **{f"X-Junk-{i}": "1" for i in range(80)}}
        reply = raw(endpoint.endpoint_url, "POST", "/", b"{}", headers)
        json_error(reply, 400, "InvalidRequest")

    def test_header_bytes_are_bounded(self, endpoint: EndpointHandle) -> None:
        """16 KiB of headers at most, even when they arrive in one piece (h11
        bounds only a head that arrives in pieces). The request is otherwise
        valid, so nothing else can refuse it."""
        headers = {**target("ListQueues"), "X-Big": "a" * 20_000}
        reply = raw(endpoint.endpoint_url, "POST", "/", b"{}", headers)
        json_error(reply, 400, "InvalidRequest")
        assert b"at most 16384" in reply.body
        headers = {**target("ListQueues"), "X-Big": "a" * 15_000}
        assert raw(endpoint.endpoint_url, "POST", "/", b"{}", headers).status == 200

    def test_wrong_method(self, endpoint: EndpointHandle) -> None:
        reply = raw(endpoint.endpoint_url, "DELETE", "/?Action=ListQueues")
        assert reply.status == 400
        assert b"<Code>InvalidRequest</Code>" in reply.body

    def test_garbage_never_crashes(self, endpoint: EndpointHandle, caplog: Any) -> None:
        """Random bytes, forms and JSON, on both protocols: always a 4xx, never a
        traceback, never a 500, and the server keeps serving."""
        rng = random.Random(13)
        caplog.set_level(logging.ERROR, logger="sqsqueue.server")
        actions = ["SendMessage", "ReceiveMessage", "CreateQueue", "SendMessageBatch", "Nope"]
        for i in range(300):
            kind = i % 3
            if kind == 0:
                body = rng.randbytes(rng.randrange(0, 200))
                headers = target(rng.choice(actions))
            elif kind == 1:
                value: Any = rng.choice([None, 1, "x", [], {"a": [1, {"b": None}]}, True, 1e300])
                body = json.dumps({rng.choice(["QueueUrl", "Entries", "Attributes", "X"]): value})
                body = body.encode()
                headers = target(rng.choice(actions))
            else:
                fields = [
                    f"{rng.choice(['Action', 'Attribute.1.Name', 'A..b', '', '%ZZ'])}="
                    f"{rng.choice(['SendMessage', '', '%00', 'x' * 50])}"
                    for _ in range(5)
                ]
                body = "&".join(fields).encode()
                headers = {"Content-Type": "application/x-www-form-urlencoded"}
            reply = raw(endpoint.endpoint_url, "POST", "/", body, headers)
            assert 400 <= reply.status < 500, (body, reply.body)
            assert b"Traceback" not in reply.body
        assert not caplog.records
        assert raw(endpoint.endpoint_url, "GET", "/?Action=ListQueues").status == 200

    def test_internal_error_is_500_logged_not_leaked(
        self, endpoint: EndpointHandle, broker: Broker[Any], caplog: Any, monkeypatch: Any
    ) -> None:
        def explode(*_: Any, **__: Any) -> Any:
            raise RuntimeError("secret detail")

        monkeypatch.setattr(broker, "list_queues", explode)
        with caplog.at_level(logging.ERROR, logger="sqsqueue.server"):
            reply = raw(endpoint.endpoint_url, "POST", "/", b"{}", target("ListQueues"))
        assert reply.status == 500
        assert b"secret detail" not in reply.body and b"Traceback" not in reply.body
        assert json.loads(reply.body)["__type"].endswith("#InternalError")
        assert "secret detail" in caplog.text


@pytest.mark.usefixtures("parser")
class TestSignatureV4:
    """Credentials turn on SigV4: wrong signatures get AWS's 403 and change nothing."""

    @pytest.fixture
    def signed(self, broker: Broker[Any]) -> Any:
        with broker.serve(
            credentials={"AKID": "secret", "OTHER": ("other-secret", "210987654321")}
        ) as handle:
            yield handle

    def test_right_key_works_and_wrong_ones_change_nothing(
        self, signed: EndpointHandle, broker: Broker[Any]
    ) -> None:
        url = client(signed, "AKID", "secret").create_queue(QueueName="q")["QueueUrl"]
        for key, secret, code in [
            ("AKID", "wrong", "SignatureDoesNotMatch"),
            ("NOBODY", "secret", "InvalidClientTokenId"),
        ]:
            with pytest.raises(ClientError) as info:
                client(signed, key, secret).send_message(QueueUrl=url, MessageBody="x")
            assert info.value.response["Error"]["Code"] == code
            assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        assert broker.get_queue("q").receive() == []

    def test_a_signature_for_another_region_is_refused(
        self, signed: EndpointHandle, broker: Broker[Any]
    ) -> None:
        """The credential scope's region must be the endpoint's (the broker's):
        AWS answers SignatureDoesNotMatch, 403, and nothing changes."""
        elsewhere = boto3.client(
            "sqs",
            endpoint_url=signed.endpoint_url,
            region_name="eu-west-1",
            aws_access_key_id="AKID",
            aws_secret_access_key="secret",
        )
        with pytest.raises(ClientError) as info:
            elsewhere.create_queue(QueueName="q")
        error = info.value.response["Error"]
        assert error["Code"] == "SignatureDoesNotMatch"
        assert error["Message"] == (
            "Credential should be scoped to a valid region, not 'eu-west-1'. "
        )
        assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        assert "q" not in broker

    def test_unsigned_request_is_refused(self, signed: EndpointHandle) -> None:
        reply = raw(signed.endpoint_url, "GET", "/?Action=ListQueues")
        assert reply.status == 403
        assert b"<Code>MissingAuthenticationToken</Code>" in reply.body

    def test_the_key_account_is_the_caller(self, signed: EndpointHandle) -> None:
        """The verified key's account is the principal the queue policy checks."""
        owner = client(signed, "AKID", "secret")
        url = owner.create_queue(QueueName="q")["QueueUrl"]
        stranger = client(signed, "OTHER", "other-secret")
        with pytest.raises(ClientError) as info:
            stranger.send_message(QueueUrl=url, MessageBody="x")
        assert info.value.response["Error"]["Code"] == "AccessDenied"
        owner.add_permission(
            QueueUrl=url, Label="l", AWSAccountIds=["210987654321"], Actions=["SendMessage"]
        )
        stranger.send_message(QueueUrl=url, MessageBody="x")

    def test_another_account_cannot_act_on_the_brokers_account(
        self, signed: EndpointHandle, broker: Broker[Any]
    ) -> None:
        """CreateQueue and ListQueues act in the caller's own account (which
        this broker is not): a key of another account cannot create queues in
        the broker's account, and lists none of its queues. Move tasks need
        the source queue's policy, as every queue action does."""
        owner = client(signed, "AKID", "secret")
        stranger = client(signed, "OTHER", "other-secret")
        dlq_url = owner.create_queue(QueueName="dlq")["QueueUrl"]
        dlq_arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:dlq"
        redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
        owner.create_queue(QueueName="src", Attributes={"RedrivePolicy": redrive})
        assert len(owner.list_queues()["QueueUrls"]) == 2
        assert "QueueUrls" not in stranger.list_queues()
        assert "QueueUrls" not in stranger.list_queues(QueueNamePrefix="d")
        refused = [
            lambda: stranger.create_queue(QueueName="planted"),
            lambda: stranger.start_message_move_task(SourceArn=dlq_arn),
            lambda: stranger.list_message_move_tasks(SourceArn=dlq_arn),
        ]
        for call in refused:
            with pytest.raises(ClientError) as info:
                call()
            assert info.value.response["Error"]["Code"] == "AccessDenied"
        assert "planted" not in broker
        handle = owner.start_message_move_task(SourceArn=dlq_arn)["TaskHandle"]
        with pytest.raises(ClientError) as info:
            stranger.cancel_message_move_task(TaskHandle=handle)
        assert info.value.response["Error"]["Code"] == "AccessDenied"
        # The owner's policy can grant a move-task action, as any queue action.
        policy = {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "210987654321"},
                    "Action": "sqs:ListMessageMoveTasks",
                    "Resource": dlq_arn,
                }
            ]
        }
        owner.set_queue_attributes(QueueUrl=dlq_url, Attributes={"Policy": json.dumps(policy)})
        assert stranger.list_message_move_tasks(SourceArn=dlq_arn)["Results"]


@pytest.mark.usefixtures("parser")
class TestBinding:
    def test_non_loopback_without_credentials_is_refused(self, broker: Broker[Any]) -> None:
        with pytest.raises(PermissionError, match="without credentials"):
            broker.serve(host="0.0.0.0")

    def test_allow_anonymous_opens_it(self, broker: Broker[Any]) -> None:
        with serve(broker, host="0.0.0.0", allow_anonymous=True) as handle:
            assert (
                raw(f"http://127.0.0.1:{handle.port}", "GET", "/?Action=ListQueues").status == 200
            )

    def test_default_is_loopback(self, endpoint: EndpointHandle) -> None:
        assert endpoint.endpoint_url.startswith("http://127.0.0.1:")

    def test_keep_alive_requests_are_not_held_back_by_nagle(self, endpoint: EndpointHandle) -> None:
        """With Nagle's algorithm on, each response's body waited for the
        client's delayed ACK: about 40 ms every request. Without it they take
        a few ms each. The median of 50 is bounded, not their sum: a machine
        busy with other work slows some requests (CI runs two suites at once,
        and a sum of 0.54 s once failed a bound of 0.5 s), while the stall
        is in every request."""
        sqs = client(endpoint)
        url = sqs.create_queue(QueueName="nodelay")["QueueUrl"]
        entries = [{"Id": str(i), "MessageBody": "x" * 100} for i in range(10)]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)  # connection open, warm
        took = []
        for _ in range(50):
            started = time.perf_counter()
            sqs.send_message_batch(QueueUrl=url, Entries=entries)
            took.append(time.perf_counter() - started)
        assert statistics.median(took) < 0.025, sorted(took)


@pytest.mark.usefixtures("parser")
class TestLongPolls:
    def test_many_concurrent_polls_each_answered_by_a_send(self) -> None:
        """Section 12: 300 open 20 s polls over HTTP hold no thread each and are
        answered as soon as messages arrive; other requests are not delayed."""
        broker: Broker[Any] = Broker(account_id=ACCOUNT)  # wall clock
        queue = broker.create_queue("q")
        polls = 300
        with broker.serve() as handle:
            import http.client
            from urllib.parse import urlsplit

            parts = urlsplit(handle.endpoint_url)
            body = json.dumps({"QueueUrl": queue.url, "WaitTimeSeconds": 20}).encode()
            conns = []
            threads_before = threading.active_count()
            for _ in range(polls):
                conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
                conn.request("POST", "/", body, target("ReceiveMessage"))
                conns.append(conn)
            threading.Event().wait(0.5)  # let the requests arrive
            assert threading.active_count() == threads_before
            started = time.perf_counter()
            assert raw(handle.endpoint_url, "GET", "/?Action=ListQueues").status == 200
            assert time.perf_counter() - started < 2
            for i in range(polls):
                queue.send(f"m{i}")
            bodies = []
            for conn in conns:
                reply = conn.getresponse()
                assert reply.status == 200
                bodies.extend(m["Body"] for m in json.loads(reply.read())["Messages"])
                conn.close()
            assert time.perf_counter() - started < 15
            assert sorted(bodies) == sorted(f"m{i}" for i in range(polls))

    def test_close_answers_open_polls_at_once(self) -> None:
        broker: Broker[Any] = Broker(account_id=ACCOUNT)
        broker.create_queue("q")
        handle = broker.serve()
        sqs = client(handle)
        url = sqs.get_queue_url(QueueName="q")["QueueUrl"]
        out: list[Any] = []
        poller = threading.Thread(
            target=lambda: out.append(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20))
        )
        poller.start()
        threading.Event().wait(0.5)  # let the requests arrive
        started = time.perf_counter()
        handle.close()
        poller.join(10)
        assert time.perf_counter() - started < 5
        assert out and "Messages" not in out[0]

    def test_requests_pipelined_behind_a_poll_are_answered_in_order(self) -> None:
        """HTTP/1.1 pipelining: 500 SendMessage requests written right behind a
        waiting long poll, on one connection, are answered after it, in order
        (a request that does not wait runs at once; the ones queued behind a
        poll that did run one by one, never nested)."""
        broker: Broker[Any] = Broker(account_id=ACCOUNT)  # wall clock: the poll waits
        polled, filled = broker.create_queue("polled"), broker.create_queue("filled")
        with broker.serve() as handle:
            host = f"127.0.0.1:{handle.port}"

            def request(action: str, payload: dict[str, Any]) -> bytes:
                body = json.dumps(payload).encode()
                return (
                    f"POST / HTTP/1.1\r\nHost: {host}\r\n"
                    "Content-Type: application/x-amz-json-1.0\r\n"
                    f"X-Amz-Target: AmazonSQS.{action}\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n"
                ).encode() + body

            sends = 500
            data = request("ReceiveMessage", {"QueueUrl": polled.url, "WaitTimeSeconds": 20})
            data += b"".join(
                request("SendMessage", {"QueueUrl": filled.url, "MessageBody": f"m{i}"})
                for i in range(sends)
            )
            with socket.create_connection(("127.0.0.1", handle.port), timeout=10) as sock:
                sock.sendall(data)
                threading.Event().wait(0.3)  # the poll waits, the sends queue behind it
                assert len(filled) == 0
                polled.send("wake")
                stream = sock.makefile("rb")
                answers = []
                for _ in range(sends + 1):
                    status = stream.readline().split()[1]
                    length = 0
                    while (line := stream.readline()) != b"\r\n":
                        name, _, value = line.decode("latin-1").partition(":")
                        if name.strip().lower() == "content-length":
                            length = int(value)
                    answers.append((status, json.loads(stream.read(length))))
            assert all(status == b"200" for status, _ in answers)
            assert [m["Body"] for m in answers[0][1]["Messages"]] == ["wake"]
            assert len(filled) == sends
            bodies = {m.message_id: m.body for m in filled.receive(10)}
            ids = [a["MessageId"] for _, a in answers[1:]]
            assert len(set(ids)) == sends
            for message_id, body in bodies.items():  # each answer is its own request's
                assert body == f"m{ids.index(message_id)}"


def test_cli_serves_and_stops_on_sigterm_with_polls_open(tmp_path: Path) -> None:
    """``python -m sqsqueue serve --port 0`` prints its URL, serves, and stops
    within seconds on SIGTERM although a long poll is open."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--account-id", ACCOUNT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split("serving SQS at ")[1].split()[0]
        sqs = boto3.client(
            "sqs",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="x",
            aws_secret_access_key="y",
        )
        queue = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        assert queue == f"{url}/{ACCOUNT}/jobs"
        poller = threading.Thread(
            target=lambda: sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=20)
        )
        poller.start()
        threading.Event().wait(0.5)  # let the requests arrive
        started = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert time.perf_counter() - started < 6
        poller.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class TestOptions:
    """Bad options are refused with a message that says why, not a traceback."""

    @pytest.mark.parametrize(
        ("argv", "says"),
        [
            (["--port", "99999"], "99999 is not a port"),
            (["--port", "-1"], "-1 is not a port"),
            (["--port", "http"], "'http' is not a port number"),
            (["--idle-timeout", "-5"], "must be greater than 0"),
            (["--idle-timeout", "0"], "must be greater than 0"),
            (["--idle-timeout", "nan"], "must be greater than 0"),
        ],
    )
    def test_cli_options_out_of_range(self, argv: list[str], says: str, capsys: Any) -> None:
        from sqsqueue.server import main

        with pytest.raises(SystemExit) as exit_:
            main(["serve", *argv])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err

    @pytest.mark.parametrize(
        ("options", "says"),
        [
            ({"port": 99999}, "port must be"),
            ({"port": -1}, "port must be"),
            ({"idle_timeout": 0}, "idle_timeout must be"),
            ({"idle_timeout": -5}, "idle_timeout must be"),
        ],
    )
    def test_serve_options_out_of_range(
        self, broker: Broker[Any], options: dict[str, Any], says: str
    ) -> None:
        with pytest.raises(ValueError, match=says):
            serve(broker, **options)

    def test_credentials_file_without_account_id_is_the_brokers_account(
        self, broker: Broker[Any], tmp_path: Path
    ) -> None:
        from sqsqueue.server import Endpoint, load_credentials

        path = tmp_path / "credentials.json"
        path.write_text(
            json.dumps(
                {
                    "AK": {"secret": "s"},
                    "AKOTHER": {"secret": "s2", "account_id": "210987654321"},
                    "AKPLAIN": "s3",
                }
            )
        )
        endpoint = Endpoint(broker, credentials=load_credentials(path))
        assert endpoint.credentials == {
            "AK": ("s", ACCOUNT),
            "AKOTHER": ("s2", "210987654321"),
            "AKPLAIN": ("s3", ACCOUNT),
        }

    @pytest.mark.parametrize(
        ("entry", "says"),
        [
            ({"account_id": ACCOUNT}, 'needs a non-empty "secret"'),
            ({"secret": ""}, 'needs a non-empty "secret"'),
            ({"secret": "s", "account_id": 123456789012}, "string of 12 digits"),
            ({"secret": "s", "acount_id": ACCOUNT}, "unknown fields ['acount_id']"),
        ],
    )
    def test_credentials_file_mistakes_are_named(
        self, tmp_path: Path, entry: dict[str, Any], says: str
    ) -> None:
        from sqsqueue.server import load_credentials

        path = tmp_path / "credentials.json"
        path.write_text(json.dumps({"AK": entry}))
        with pytest.raises(ValueError) as info:
            load_credentials(path)
        assert says in str(info.value) and "'AK'" in str(info.value)


def test_cli_refuses_open_address_without_credentials() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "without credentials" in done.stderr


def test_fixture_reaches_the_broker_from_a_subprocess(
    sqsqueue_endpoint_url: str, sqsqueue_broker: Broker[Any]
) -> None:
    """``sqsqueue_endpoint_url``: another process sends to the test's own broker."""
    queue = sqsqueue_broker.create_queue("jobs")
    script = (
        "import boto3,sys; boto3.client('sqs', endpoint_url=sys.argv[1], region_name='us-east-1',"
        " aws_access_key_id='x', aws_secret_access_key='y')"
        ".send_message(QueueUrl=sys.argv[2], MessageBody='from a subprocess')"
    )
    subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            sqsqueue_endpoint_url,
            f"{sqsqueue_endpoint_url}/{ACCOUNT}/jobs",
        ],
        check=True,
        timeout=120,
        env={**os.environ, "AWS_EC2_METADATA_DISABLED": "true"},
    )
    assert [m.body for m in queue.receive()] == ["from a subprocess"]


def test_import_sqsqueue_does_not_import_uvicorn() -> None:
    code = (
        "import sys, sqsqueue; "
        "assert 'uvicorn' not in sys.modules and 'sqsqueue.server' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_connections_have_nagle_off(endpoint: EndpointHandle) -> None:
    """Answers leave at once: accepted connections have TCP_NODELAY. Without it
    a response written as headers then body waits for the keep-alive client's
    delayed ACK, about 40 ms a request (it did: the listener was made without
    proto IPPROTO_TCP, and asyncio sets TCP_NODELAY only on TCP-proto sockets)."""
    sqs = client(endpoint)
    url = sqs.create_queue(QueueName="fast")["QueueUrl"]
    took = []
    for _ in range(20):
        t0 = time.perf_counter()
        sqs.get_queue_attributes(QueueUrl=url)
        took.append(time.perf_counter() - t0)
    connections = endpoint._server.server_state.connections
    assert connections
    for protocol in connections:
        sock = protocol.transport.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    assert statistics.median(took) < 0.02, took
