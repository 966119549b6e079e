"""The operational paths of a served broker (``sqsqueue.console``,
docs/console.md): health, reset, LocalStack's ``/_aws/sqs/messages`` peek,
``/metrics`` in Prometheus's format, the console's JSON API and its security
(credentials, cross-site requests, DNS rebinding, errors without tracebacks),
and the access log.

The peek's shapes follow LocalStack's developer endpoint (its
``developer_api.py`` and tests): a ReceiveMessage answer in the query
protocol's XML, that XML as JSON for ``Accept: application/json``, or AWS
JSON 1.0 for a JSON-protocol request; receipt handle ``SQS/BACKDOOR/ACCESS``.
"""

from __future__ import annotations

import base64
import json
import logging
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from prometheus_client.parser import text_string_to_metric_families

from sqsqueue import Broker, ManualClock, SystemClock
from sqsqueue.console import Console
from sqsqueue.server import Endpoint, EndpointHandle
from sqsqueue.server._run import attach_console
from tests.endpoint.conftest import ACCOUNT, Reply, raw

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
ACTION = {"X-Sqsqueue-Console": "1", "Content-Type": "application/json"}
STATIC = Path(__file__).resolve().parents[2] / "sqsqueue" / "console" / "static"


def sqs(endpoint_url: str, **kwargs: Any) -> Any:
    options: dict[str, Any] = {
        "region_name": "us-east-1",
        "aws_access_key_id": "x",
        "aws_secret_access_key": "x",
    }
    options.update(kwargs)
    return boto3.client("sqs", endpoint_url=endpoint_url, **options)


def get_json(endpoint: EndpointHandle, path: str, **headers: str) -> tuple[int, Any]:
    reply = raw(endpoint.endpoint_url, "GET", path, headers=headers)
    return reply.status, json.loads(reply.body)


def post(endpoint: EndpointHandle, path: str, doc: Any = None, **headers: str) -> Reply:
    body = json.dumps(doc or {}).encode()
    return raw(endpoint.endpoint_url, "POST", path, body, {**ACTION, **headers})


# -- health and reset ---------------------------------------------------------------


def test_health(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    broker.create_queue("a")
    status, doc = get_json(endpoint, "/_sqsqueue/health")
    assert status == 200
    assert doc["status"] == "up"
    assert doc["version"] == "0.1.0"
    assert (doc["region"], doc["account_id"]) == ("us-east-1", ACCOUNT)
    assert doc["durable"] is False
    assert doc["queues"] == 1
    assert doc["clock"] == "ManualClock"
    assert doc["lenient"] == {}  # strict: no leniency on


def test_health_counts_what_leniencies_let_through() -> None:
    """docs/serving.md, "Leniencies": health carries, for each leniency on,
    the requests it let through that AWS would have refused; a reset keeps
    the counts."""
    broker = Broker(
        clock=ManualClock(start=1_700_000_000.0),
        account_id=ACCOUNT,
        lenient="purge-interval,recreate-interval",
    )
    with broker.serve() as endpoint:
        client = sqs(endpoint.endpoint_url)
        url = client.create_queue(QueueName="jobs")["QueueUrl"]
        assert get_json(endpoint, "/_sqsqueue/health")[1]["lenient"] == {
            "purge-interval": 0,
            "recreate-interval": 0,
        }
        for _ in range(3):
            client.purge_queue(QueueUrl=url)
        assert post(endpoint, "/_sqsqueue/reset").status == 200
        status, doc = get_json(endpoint, "/_sqsqueue/health")
    assert status == 200
    assert doc["lenient"] == {"purge-interval": 2, "recreate-interval": 0}


def test_reset_in_memory(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    broker.create_queue("a").send("x")
    reply = post(endpoint, "/_sqsqueue/reset")
    assert (reply.status, json.loads(reply.body)) == (200, {"reset": True, "queues": 0})
    assert len(broker) == 0
    broker.create_queue("a")  # the name is free at once


def test_reset_of_a_durable_broker_needs_allow_reset(tmp_path: Path) -> None:
    with Broker(data_dir=tmp_path / "d") as broker:
        broker.create_queue("kept")
        with broker.serve() as endpoint:
            reply = post(endpoint, "/_sqsqueue/reset")
            assert reply.status == 403
            assert json.loads(reply.body)["error"] == "ResetRefused"
            assert "kept" in broker
        with broker.serve(allow_reset=True) as endpoint:
            assert post(endpoint, "/_sqsqueue/reset").status == 200
            assert len(broker) == 0
    with Broker(data_dir=tmp_path / "d") as broker:
        assert len(broker) == 0  # the reset was stored


# -- the peek -----------------------------------------------------------------------


def test_a_peek_changes_nothing(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """A message peeked ten times is then received with receive count 1 and its
    first-receive time that of the receive, not of a peek."""
    clock = broker.clock
    client = sqs(endpoint.endpoint_url)
    url = client.create_queue(QueueName="jobs")["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="hello")
    for _ in range(10):
        reply = raw(endpoint.endpoint_url, "GET", f"/_aws/sqs/messages?QueueUrl={url}")
        assert reply.status == 200
        [message] = ET.fromstring(reply.body).iter(f"{NS}Message")
        attributes = {
            a.findtext(f"{NS}Name"): a.findtext(f"{NS}Value")
            for a in message.iter(f"{NS}Attribute")
        }
        assert attributes["ApproximateReceiveCount"] == "0"
        assert message.findtext(f"{NS}ReceiptHandle") == "SQS/BACKDOOR/ACCESS"
        clock.advance(1)
    [m] = client.receive_message(QueueUrl=url, AttributeNames=["All"])["Messages"]
    assert m["Attributes"]["ApproximateReceiveCount"] == "1"
    assert m["Attributes"]["ApproximateFirstReceiveTimestamp"] == str(int(clock.now() * 1000))
    assert broker.get_queue("jobs").metrics().number_of_messages_received == 1


def test_peek_as_localstack_json(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    q = broker.create_queue("jobs")
    q.send("one", message_attributes={"k": "v"})
    status, doc = get_json(
        endpoint, f"/_aws/sqs/messages?QueueUrl={q.url}", Accept="application/json"
    )
    assert status == 200
    message = doc["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]
    assert message["Body"] == "one"  # one message: an object, as LocalStack's XML-as-JSON
    assert message["MD5OfBody"] == "f97c5d29941bfb1b2fdab0874906ab82"
    attributes = {a["Name"]: a["Value"] for a in message["Attribute"]}
    assert attributes["SenderId"] == ACCOUNT
    assert {"SentTimestamp", "ApproximateFirstReceiveTimestamp"} <= set(attributes)
    assert message["MessageAttribute"] == [
        {"Name": "k", "Value": {"DataType": "String", "StringValue": "v"}}
    ]
    q.send("two")
    _, doc = get_json(endpoint, f"/_aws/sqs/messages?QueueUrl={q.url}", Accept="application/json")
    messages = doc["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]
    assert [m["Body"] for m in messages] == ["one", "two"]


def test_peek_shows_invisible_and_delayed_when_asked(
    endpoint: EndpointHandle, broker: Broker[Any]
) -> None:
    q = broker.create_queue("jobs")
    for body in ("m1", "m2", "m3"):
        q.send(body)
    q.send("later", delay_seconds=10)
    q.receive()  # m1 in flight

    def bodies(**params: str) -> list[tuple[str, dict[str, str]]]:
        query = "&".join(f"{k}={v}" for k, v in {"QueueUrl": q.url, **params}.items())
        _, doc = get_json(endpoint, f"/_aws/sqs/messages?{query}", Accept="application/json")
        found = doc["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]
        found = found if isinstance(found, list) else [found]
        return [(m["Body"], {a["Name"]: a["Value"] for a in m["Attribute"]}) for m in found]

    assert [b for b, _ in bodies()] == ["m2", "m3"]
    shown = bodies(ShowInvisible="true")
    assert [(b, a["IsVisible"]) for b, a in shown] == [
        ("m1", "false"),
        ("m2", "true"),
        ("m3", "true"),
    ]
    shown = bodies(ShowDelayed="true")
    assert [(b, a["IsDelayed"]) for b, a in shown] == [
        ("m2", "false"),
        ("m3", "false"),
        ("later", "true"),
    ]


def test_peek_as_a_boto3_endpoint_url(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """LocalStack's tests point a boto3 client at the peek and call
    receive_message (MaxNumberOfMessages is ignored); other calls are refused."""
    q = broker.create_queue("jobs.fifo", fifo_queue=True, content_based_deduplication=True)
    for body in ("message-1", "message-2", "message-3"):
        q.send(body, group_id="1")
    client = sqs(f"{endpoint.endpoint_url}/_aws/sqs/messages")  # the JSON protocol
    response = client.receive_message(QueueUrl=q.url, MaxNumberOfMessages=1)
    assert [m["Body"] for m in response["Messages"]] == ["message-1", "message-2", "message-3"]
    assert {m["Attributes"]["MessageGroupId"] for m in response["Messages"]} == {"1"}
    assert all(m["Attributes"]["ApproximateReceiveCount"] == "0" for m in response["Messages"])
    with pytest.raises(ClientError) as caught:
        client.send_message(QueueUrl=q.url, MessageBody="x", MessageGroupId="1")
    assert caught.value.response["Error"]["Code"] == "InvalidRequest"
    assert caught.value.response["Error"]["Message"] == (
        "This endpoint only accepts ReceiveMessage calls"
    )
    assert len(q) == 3


def test_peek_with_query_protocol_requests(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """A query-protocol ReceiveMessage (what older SDKs send) is answered in XML."""
    q = broker.create_queue("jobs")
    q.send("x")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = f"Action=ReceiveMessage&QueueUrl={q.url}&MaxNumberOfMessages=1".encode()
    reply = raw(endpoint.endpoint_url, "POST", "/_aws/sqs/messages", body, form)
    assert reply.status == 200
    assert [b.text for b in ET.fromstring(reply.body).iter(f"{NS}Body")] == ["x"]
    body = f"Action=SendMessage&QueueUrl={q.url}&MessageBody=y".encode()
    reply = raw(endpoint.endpoint_url, "POST", "/_aws/sqs/messages", body, form)
    assert reply.status == 400
    assert ET.fromstring(reply.body).findtext(f"{NS}Error/{NS}Code") == "InvalidRequest"
    assert len(q) == 1


def test_peek_by_path_and_missing_queues(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    broker.create_queue("jobs").send("x")
    status, doc = get_json(
        endpoint, f"/_aws/sqs/messages/us-east-1/{ACCOUNT}/jobs", Accept="application/json"
    )
    assert status == 200
    assert doc["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]["Body"] == "x"
    for path in (
        f"/_aws/sqs/messages/us-east-2/{ACCOUNT}/jobs",
        f"/_aws/sqs/messages/us-east-1/{ACCOUNT}/nope",
        "/_aws/sqs/messages",
    ):
        status, doc = get_json(endpoint, path, Accept="application/json")
        assert status == 400
        assert doc["ErrorResponse"]["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


def test_peek_pages_a_large_queue(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    q = broker.create_queue("big")
    q.send_batch([str(i) for i in range(10)])
    seen: list[str] = []
    after = None
    while True:
        query = f"QueueUrl={q.url}&Limit=4" + (f"&After={after}" if after else "")
        reply = raw(endpoint.endpoint_url, "GET", f"/_aws/sqs/messages?{query}")
        seen += [b.text or "" for b in ET.fromstring(reply.body).iter(f"{NS}Body")]
        after = reply.headers.get("x-sqsqueue-next-after")
        if after is None:
            break
    assert seen == [str(i) for i in range(10)]


# -- /metrics -------------------------------------------------------------------------


def test_metrics_page_parses_with_the_prometheus_client(
    endpoint: EndpointHandle, broker: Broker[Any]
) -> None:
    q = broker.create_queue("orders")
    f = broker.create_queue("events.fifo", fifo_queue=True, content_based_deduplication=True)
    q.send("hello")
    q.send("later", delay_seconds=30)
    [m] = q.receive()
    q.delete(m.receipt_handle)
    q.receive()
    f.send("e", group_id="g")
    f.send("e", group_id="g")
    broker.clock.advance(7)
    reply = raw(endpoint.endpoint_url, "GET", "/metrics")
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = {
        (s.name, s.labels.get("queue")): s.value
        for family in text_string_to_metric_families(reply.body.decode())
        for s in family.samples
    }
    expected = broker.metrics()
    for queue in ("orders", "events.fifo"):
        m = expected[queue]
        assert (
            samples[("sqsqueue_number_of_messages_sent_total", queue)] == m.number_of_messages_sent
        )
        assert samples[("sqsqueue_number_of_messages_received_total", queue)] == (
            m.number_of_messages_received
        )
        assert samples[("sqsqueue_sent_message_size_bytes_sum", queue)] == m.sent_message_size_sum
        assert samples[("sqsqueue_sent_message_size_bytes_count", queue)] == (
            m.number_of_messages_sent
        )
        assert samples[("sqsqueue_approximate_age_of_oldest_message_seconds", queue)] == 7
    assert samples[("sqsqueue_number_of_messages_deleted_total", "orders")] == 1
    assert samples[("sqsqueue_number_of_empty_receives_total", "orders")] == 1
    assert samples[("sqsqueue_approximate_number_of_messages_delayed", "orders")] == 1
    assert samples[("sqsqueue_number_of_deduplicated_sent_messages_total", "events.fifo")] == 1
    assert ("sqsqueue_number_of_deduplicated_sent_messages_total", "orders") not in samples
    assert samples[("sqsqueue_queues", None)] == 2


# -- the console's API ------------------------------------------------------------------


def test_queue_pages_and_messages(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    for i in range(5):
        broker.create_queue(f"q{i}")
    status, doc = get_json(endpoint, "/_sqsqueue/api/queues?limit=2")
    assert status == 200 and doc["total"] == 5
    assert [q["name"] for q in doc["queues"]] == ["q0", "q1"]
    _, doc = get_json(endpoint, f"/_sqsqueue/api/queues?limit=2&token={doc['next_token']}")
    assert [q["name"] for q in doc["queues"]] == ["q2", "q3"]
    q = broker.get_queue("q0")
    q.send("<script>alert(1)</script>")
    q.send("second", delay_seconds=5)
    status, doc = get_json(endpoint, "/_sqsqueue/api/queues/q0/messages?limit=1")
    [message] = doc["messages"]
    assert message["body"] == "<script>alert(1)</script>"  # data, the page shows it as text
    assert message["state"] == "visible" and message["receive_count"] == 0
    _, doc = get_json(endpoint, f"/_sqsqueue/api/queues/q0/messages?after={doc['next_after']}")
    assert [(m["body"], m["state"]) for m in doc["messages"]] == [("second", "delayed")]
    assert q.metrics().number_of_messages_received == 0


def test_actions(endpoint: EndpointHandle, broker: Broker[ManualClock]) -> None:
    dlq = broker.create_queue("dlq")
    src = broker.create_queue(
        "src", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}
    )
    src.keep_history = True
    reply = post(endpoint, "/_sqsqueue/api/queues/src/send", {"body": "from the page"})
    assert reply.status == 200
    message_id = json.loads(reply.body)["message_id"]
    _, page = get_json(endpoint, "/_sqsqueue/api/queues/src/messages")
    [m] = page["messages"]
    _, history = get_json(endpoint, f"/_sqsqueue/api/queues/src/history?message_id={message_id}")
    assert [e["event"] for e in history["events"]] == ["sent"]
    reply = post(
        endpoint,
        "/_sqsqueue/api/queues/src/delete",
        {"position": m["position"], "message_id": m["message_id"]},
    )
    assert json.loads(reply.body) == {"deleted": True}
    assert len(src) == 0
    # Redrive: a message dead-lettered, moved back by a task the page starts.
    src.send("poison")
    src.receive(visibility_timeout=0)
    assert src.receive() == [] and len(dlq) == 1
    _, doc = get_json(endpoint, "/_sqsqueue/api/queues/dlq")
    assert doc["sources"] == ["src"]
    reply = post(endpoint, "/_sqsqueue/api/queues/dlq/redrive", {"rate": 1})
    handle = json.loads(reply.body)["task_handle"]
    reply = post(endpoint, "/_sqsqueue/api/queues/dlq/redrive/cancel", {"task_handle": handle})
    assert reply.status == 200
    assert broker.list_message_move_tasks(dlq.arn)[0]["Status"] == "CANCELLED"
    reply = post(endpoint, "/_sqsqueue/api/queues/dlq/redrive", {})
    assert reply.status == 200
    reply = post(endpoint, "/_sqsqueue/api/clock/advance", {"seconds": 5})
    assert json.loads(reply.body)["now"] == broker.clock.now()
    assert [m.body for m in src.receive()] == ["poison"]
    reply = post(endpoint, "/_sqsqueue/api/queues/src/purge")
    assert reply.status == 200 and len(src) == 0
    reply = post(endpoint, "/_sqsqueue/api/queues/src/purge")
    assert reply.status == 403
    assert json.loads(reply.body)["error"] == "PurgeQueueInProgress"
    reply = post(endpoint, "/_sqsqueue/api/queues/nope/send", {"body": "x"})
    assert json.loads(reply.body)["error"] == "QueueDoesNotExist"


def test_advancing_a_system_clock_is_refused() -> None:
    with Broker(clock=SystemClock()) as broker, broker.serve() as endpoint:
        reply = post(endpoint, "/_sqsqueue/api/clock/advance", {"seconds": 5})
        assert reply.status == 409
        assert json.loads(reply.body)["error"] == "NotAManualClock"


def test_invalid_parameters(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    broker.create_queue("q")
    status, doc = get_json(endpoint, "/_sqsqueue/api/queues/q/messages?limit=0")
    assert status == 400 and doc["error"] == "InvalidParameterValue"
    reply = post(endpoint, "/_sqsqueue/api/queues/q/send", {"body": 3})
    assert reply.status == 400
    reply = raw(endpoint.endpoint_url, "POST", "/_sqsqueue/api/queues/q/send", b"[", ACTION)
    assert json.loads(reply.body)["error"] == "MalformedJson"
    status, doc = get_json(endpoint, "/_sqsqueue/nothing")
    assert status == 404


# -- security ---------------------------------------------------------------------------


def test_actions_need_the_csrf_header_and_a_same_origin(
    endpoint: EndpointHandle, broker: Broker[Any]
) -> None:
    broker.create_queue("q").send("x")
    for headers in (
        {"Content-Type": "application/x-www-form-urlencoded"},
        {**ACTION, "Origin": "http://evil.example"},
    ):
        reply = raw(endpoint.endpoint_url, "POST", "/_sqsqueue/api/queues/q/purge", b"", headers)
        assert reply.status == 403
        assert json.loads(reply.body)["error"] == "CsrfRefused"
    reply = raw(endpoint.endpoint_url, "POST", "/_sqsqueue/reset", b"", {})
    assert reply.status == 403
    assert len(broker.get_queue("q")) == 1


def test_a_rebound_host_name_is_refused(endpoint: EndpointHandle) -> None:
    """Without credentials only an IP address or localhost may be named: a
    page of evil.example rebound to 127.0.0.1 reads no queue, message or
    metric. Health answers any Host (a compose service checks
    http://sqs:9324/_sqsqueue/health by its service name): it names no queue."""
    for path in ("/_sqsqueue/api/queues", "/_sqsqueue/console/", "/metrics", "/_aws/sqs/messages"):
        reply = raw(endpoint.endpoint_url, "GET", path, headers={"Host": "evil.example:9324"})
        assert reply.status == 403, path
    for host in ("localhost", "sqs:9324", "evil.example:9324"):
        reply = raw(endpoint.endpoint_url, "GET", "/_sqsqueue/health", headers={"Host": host})
        assert reply.status == 200 and json.loads(reply.body)["status"] == "up", host


@pytest.fixture
def secured(broker: Broker[Any]) -> Iterator[EndpointHandle]:
    with broker.serve(credentials={"AKID": "s3cret"}) as handle:
        yield handle


def basic(key: str, secret: str) -> dict[str, str]:
    token = base64.b64encode(f"{key}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_credentials_guard_everything_but_health(
    secured: EndpointHandle, broker: Broker[Any]
) -> None:
    q = broker.create_queue("q")
    q.send("x")
    assert raw(secured.endpoint_url, "GET", "/_sqsqueue/health").status == 200
    for path in (
        "/_sqsqueue/console/",
        "/_sqsqueue/api/queues",
        "/metrics",
        f"/_aws/sqs/messages?QueueUrl={q.url}",
    ):
        reply = raw(secured.endpoint_url, "GET", path)
        assert reply.status == 401, path
        assert reply.headers["www-authenticate"].startswith("Basic")
        assert raw(secured.endpoint_url, "GET", path, headers=basic("AKID", "wrong")).status == 401
        assert raw(secured.endpoint_url, "GET", path, headers=basic("AKID", "s3cret")).status == 200
    # An SDK signs: a boto3 client with the key reads the peek, one with a wrong secret cannot.
    peek = f"{secured.endpoint_url}/_aws/sqs/messages"
    good = sqs(peek, aws_access_key_id="AKID", aws_secret_access_key="s3cret")
    assert [m["Body"] for m in good.receive_message(QueueUrl=q.url)["Messages"]] == ["x"]
    bad = sqs(peek, aws_access_key_id="AKID", aws_secret_access_key="nope")
    with pytest.raises(ClientError) as caught:
        bad.receive_message(QueueUrl=q.url)
    assert caught.value.response["Error"]["Code"] == "SignatureDoesNotMatch"


def test_a_key_of_another_account_is_held_to_the_queue_policy(broker: Broker[Any]) -> None:
    q = broker.create_queue("q")
    with broker.serve(credentials={"OTHER": ("pw", "210987654321")}) as endpoint:
        reply = raw(
            endpoint.endpoint_url,
            "GET",
            "/_sqsqueue/api/queues/q/messages",
            headers=basic("OTHER", "pw"),
        )
        assert json.loads(reply.body)["error"] == "AccessDenied"
        _, doc = get_json(endpoint, "/_sqsqueue/api/queues", **basic("OTHER", "pw"))
        assert doc["queues"] == []  # as ListQueues: none of another account's queues
        reply = raw(endpoint.endpoint_url, "GET", "/metrics", headers=basic("OTHER", "pw"))
        assert reply.status == 403
        reply = raw(
            endpoint.endpoint_url,
            "POST",
            "/_sqsqueue/reset",
            b"",
            {**ACTION, **basic("OTHER", "pw")},
        )
        assert reply.status == 403
    assert q.name in broker


def test_the_console_is_refused_on_an_open_address_without_credentials(
    broker: Broker[Any],
) -> None:
    endpoint = Endpoint(broker)
    with pytest.raises(PermissionError, match="refusing the console"):
        attach_console(
            endpoint, "192.0.2.7", console=True, allow_anonymous=False, allow_reset=False
        )
    attach_console(endpoint, "192.0.2.7", console=None, allow_anonymous=True, allow_reset=False)
    assert isinstance(endpoint.console, Console) and not endpoint.console.ui
    attach_console(endpoint, "127.0.0.1", console=None, allow_anonymous=False, allow_reset=False)
    assert endpoint.console.ui
    with_keys = Endpoint(broker, credentials={"AKID": "s"})
    attach_console(with_keys, "192.0.2.7", console=None, allow_anonymous=False, allow_reset=False)
    assert with_keys.console is not None and with_keys.console.ui


def test_the_console_off_serves_no_page_or_action(broker: Broker[Any]) -> None:
    broker.create_queue("q")
    with broker.serve(console=False) as endpoint:
        assert raw(endpoint.endpoint_url, "GET", "/_sqsqueue/console/").status == 404
        assert post(endpoint, "/_sqsqueue/api/queues/q/purge").status == 404
        assert raw(endpoint.endpoint_url, "GET", "/_sqsqueue/health").status == 200


def test_a_bug_answers_500_without_a_traceback(
    endpoint: EndpointHandle,
    broker: Broker[Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(broker, "metrics", broken)
    with caplog.at_level(logging.ERROR, logger="sqsqueue.console"):
        reply = raw(endpoint.endpoint_url, "GET", "/metrics")
    assert reply.status == 500
    assert json.loads(reply.body)["error"] == "InternalError"
    assert b"secret internals" not in reply.body and b"Traceback" not in reply.body
    assert "secret internals" in caplog.text  # the server's log says why


def test_the_page_has_a_strict_policy_and_builds_no_html_from_data(
    endpoint: EndpointHandle,
) -> None:
    reply = raw(endpoint.endpoint_url, "GET", "/_sqsqueue/console/")
    assert reply.status == 200
    policy = reply.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert reply.headers["x-content-type-options"] == "nosniff"
    script = (STATIC / "console.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script
    for name in ("console.js", "console.css", "favicon.svg"):
        assert raw(endpoint.endpoint_url, "GET", f"/_sqsqueue/console/{name}").status == 200


# -- the access log ---------------------------------------------------------------------


def test_access_log(
    endpoint: EndpointHandle, broker: Broker[Any], caplog: pytest.LogCaptureFixture
) -> None:
    client = sqs(endpoint.endpoint_url)
    url = client.create_queue(QueueName="jobs")["QueueUrl"]
    with caplog.at_level(logging.INFO, logger="sqsqueue.access"):
        client.send_message(QueueUrl=url, MessageBody="x")
        with pytest.raises(ClientError):
            client.get_queue_url(QueueName="nope")
        raw(endpoint.endpoint_url, "GET", "/_sqsqueue/api/queues/jobs")
    lines = [r.getMessage() for r in caplog.records if r.name == "sqsqueue.access"]
    wanted = [
        f"SendMessage queue={url} status=200 duration_ms=",
        "GetQueueUrl queue=nope status=400 duration_ms=",
        "GET /_sqsqueue/api/queues/jobs queue=jobs status=200 duration_ms=",
    ]
    found = [next((line for line in lines if line.startswith(w)), None) for w in wanted]
    assert None not in found, lines
    assert lines.index(found[0]) < lines.index(found[1]) < lines.index(found[2])


def test_serve_with_a_config_file_the_console_and_an_access_log(tmp_path: Path) -> None:
    """``sqsqueue serve --config FILE --log-level INFO`` creates the file's
    queues before serving, prints the console's address, and logs each
    request (action, queue, status, duration) to stderr."""
    config = tmp_path / "queues.toml"
    config.write_text('[[queue]]\nname = "orders"\nvisibility_timeout = 45\n')
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqsqueue",
            "serve",
            "--port",
            "0",
            "--config",
            str(config),
            "--log-level",
            "info",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split("serving SQS at ")[1].split()[0]
        assert proc.stdout.readline().strip() == f"sqsqueue: console at {url}/_sqsqueue/console/"
        client = sqs(url)
        queue_url = client.get_queue_url(QueueName="orders")["QueueUrl"]
        attributes = client.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])
        assert attributes["Attributes"]["VisibilityTimeout"] == "45"
        client.send_message(QueueUrl=queue_url, MessageBody="x")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        log = proc.stderr.read()
        assert "INFO sqsqueue.access: GetQueueUrl queue=orders status=200 duration_ms=" in log
        assert f"INFO sqsqueue.access: SendMessage queue={queue_url} status=200" in log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_access_log_is_off_by_default() -> None:
    """Without --log-level, ``sqsqueue serve`` logs no request."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split("serving SQS at ")[1].split()[0]
        sqs(url).list_queues()
        assert raw(url, "GET", "/_sqsqueue/health").status == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        assert "sqsqueue.access" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_reports_leniencies_at_start_and_their_counts_at_stop(tmp_path: Path) -> None:
    """A configuration file's ``lenient = [...]`` turns leniencies on for
    ``sqsqueue serve``: it names them when it starts and prints what they let
    through when it stops (docs/serving.md, "Leniencies")."""
    config = tmp_path / "queues.toml"
    config.write_text('lenient = ["purge-interval", "fifo-queue-false"]\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split("serving SQS at ")[1].split()[0]
        assert proc.stdout.readline().startswith("sqsqueue: console at ")
        assert proc.stdout.readline().strip() == (
            "sqsqueue: lenient: fifo-queue-false, purge-interval (what AWS would refuse is "
            "let through and counted: /_sqsqueue/health)"
        )
        client = sqs(url)
        queue_url = client.create_queue(QueueName="jobs")["QueueUrl"]
        client.purge_queue(QueueUrl=queue_url)
        client.purge_queue(QueueUrl=queue_url)
        client.purge_queue(QueueUrl=queue_url)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stdout.read().splitlines() == [
            "sqsqueue: 2 requests AWS would have refused: fifo-queue-false 0, purge-interval 2",
            "sqsqueue: stopped",
        ]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_refuses_an_unknown_leniency_in_its_config(tmp_path: Path) -> None:
    config = tmp_path / "queues.toml"
    config.write_text('lenient = ["purge"]\n')
    result = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"sqsqueue serve: {config}, line 1: unknown leniency 'purge': known are "
        "fifo-queue-false, purge-interval, recreate-interval\n"
    )
    assert result.stdout == ""
