"""The operational paths of ``sqsqueue serve``, which holds every account and
region (issue 31 §2; docs/console.md, "Every account and region"):
``/metrics`` labels each queue's samples with its account and region, the
peek finds a queue in whichever account and region its URL names, reset
empties every broker (each making its configuration's queues again), the
console's JSON API lists every broker's queues and serves a queue of another
account or region at ``/_sqsqueue/api/queues/REGION/ACCOUNT/NAME``, and
health keeps reporting the defaults, its leniency counts summed over all.

Accounts and regions are made as users make them: boto3 clients whose access
key id is a 12-digit account and whose ``region_name`` is the region. With
credentials, a key sees its own account's queues in every region and acts on
another's only as that queue's policy allows; only the default account's key
may reset. ``Broker.serve()`` (one broker) is tests/endpoint/test_console.py's.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from prometheus_client.parser import text_string_to_metric_families

from sqsqueue import Broker, ManualClock
from sqsqueue.server import Endpoint, EndpointHandle, _run
from sqsqueue.server._accounts import Accounts
from sqsqueue.server._run import attach_console
from tests._helpers import sqs_as, sqsqueue_serve
from tests.endpoint.conftest import raw

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
ACTION = {"X-Sqsqueue-Console": "1", "Content-Type": "application/json"}
DEFAULT = "000000000000"
A, B = "111111111111", "222222222222"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SQSQUEUE_")}


@contextmanager
def serving(
    credentials: dict[str, Any] | None = None, lenient: str | None = None
) -> Iterator[EndpointHandle]:
    """What ``sqsqueue serve`` builds, in this process: a default broker
    (``DEFAULT`` in us-east-1) and every other account and region made on
    first use (:class:`Accounts`), the console attached."""
    broker = Broker(clock=ManualClock(start=1_700_000_000.0), account_id=DEFAULT, lenient=lenient)
    accounts = Accounts(broker)
    endpoint = Endpoint(broker, credentials=credentials, accounts=accounts)
    attach_console(endpoint, "127.0.0.1", console=None, allow_anonymous=False, allow_reset=False)
    sock = _run.bind("127.0.0.1", 0)
    handle = EndpointHandle(_run.uvicorn_server(endpoint, 30), endpoint, sock, "127.0.0.1")
    try:
        with handle.start():
            yield handle
    finally:
        broker.close()


def basic(key: str, secret: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()}


def get_json(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    reply = raw(url, "GET", path, headers=headers)
    return reply.status, json.loads(reply.body)


def post(url: str, path: str, doc: Any = None, headers: dict[str, str] | None = None) -> Any:
    reply = raw(url, "POST", path, json.dumps(doc or {}).encode(), {**ACTION, **(headers or {})})
    return reply.status, json.loads(reply.body)


def make_queues(url: str) -> dict[tuple[str, str], str]:
    """``orders`` in the default (account, region), in A's us-east-1 and in
    A's eu-west-1; ``jobs`` in B's us-west-2; each holding its own messages.
    Returns each queue's URL as its client was given it."""
    urls = {}
    for key, region, name, bodies in (
        ("test", "us-east-1", "orders", ["d1"]),
        (A, "us-east-1", "orders", ["a1", "a2"]),
        (A, "eu-west-1", "orders", ["a-eu"]),
        (B, "us-west-2", "jobs", ["b1", "b2", "b3"]),
    ):
        client = sqs_as(url, key, region)
        queue_url = client.create_queue(QueueName=name)["QueueUrl"]
        for body in bodies:
            client.send_message(QueueUrl=queue_url, MessageBody=body)
        account = DEFAULT if key == "test" else key
        urls[(account, region)] = queue_url
    return urls


def samples(page: str) -> dict[tuple[str, str | None, str | None, str | None], float]:
    return {
        (s.name, s.labels.get("account"), s.labels.get("region"), s.labels.get("queue")): s.value
        for family in text_string_to_metric_families(page)
        for s in family.samples
    }


def bodies(xml: bytes) -> list[str]:
    return [b.text or "" for b in ET.fromstring(xml).iter(f"{NS}Body")]


# -- /metrics -------------------------------------------------------------------------


def test_metrics_label_every_queue_with_its_account_and_region() -> None:
    with serving() as endpoint:
        make_queues(endpoint.endpoint_url)
        reply = raw(endpoint.endpoint_url, "GET", "/metrics")
    assert reply.status == 200
    found = samples(reply.body.decode())  # parsed by prometheus_client's own parser
    sent = "sqsqueue_number_of_messages_sent_total"
    assert {k: v for k, v in found.items() if k[0] == sent} == {
        (sent, DEFAULT, "us-east-1", "orders"): 1,
        (sent, A, "us-east-1", "orders"): 2,
        (sent, A, "eu-west-1", "orders"): 1,
        (sent, B, "us-west-2", "jobs"): 3,
    }
    visible = "sqsqueue_approximate_number_of_messages_visible"
    assert found[(visible, B, "us-west-2", "jobs")] == 3
    assert found[("sqsqueue_sent_message_size_bytes_count", A, "us-east-1", "orders")] == 2
    assert {k: v for k, v in found.items() if k[0] == "sqsqueue_queues"} == {
        ("sqsqueue_queues", DEFAULT, "us-east-1", None): 1,
        ("sqsqueue_queues", A, "us-east-1", None): 1,
        ("sqsqueue_queues", A, "eu-west-1", None): 1,
        ("sqsqueue_queues", B, "us-west-2", None): 1,
    }
    # The default (account, region) comes first, then the others in order.
    text = reply.body.decode()
    lines = [line for line in text.splitlines() if line.startswith(sent + "{")]
    assert [line.split("{")[1].split(",")[0] for line in lines] == [
        f'account="{DEFAULT}"',
        f'account="{A}"',
        f'account="{A}"',
        f'account="{B}"',
    ]


def test_with_credentials_a_key_sees_its_own_accounts_metrics_in_every_region() -> None:
    keys = {"ADMIN": "admin-pw", A: "a-pw", "BKEY": ("b-pw", B)}
    with serving(keys) as endpoint:
        url = endpoint.endpoint_url
        for region in ("us-east-1", "eu-west-1"):
            sqs_as(url, A, region, "a-pw").create_queue(QueueName="orders")
        sqs_as(url, "ADMIN", "us-east-1", "admin-pw").create_queue(QueueName="admin")
        assert raw(url, "GET", "/metrics").status == 401
        seen = {}
        for key, secret in (("ADMIN", "admin-pw"), (A, "a-pw"), ("BKEY", "b-pw")):
            reply = raw(url, "GET", "/metrics", headers=basic(key, secret))
            assert reply.status == 200, key
            seen[key] = {
                (account, region, queue)
                for (name, account, region, queue) in samples(reply.body.decode())
                if name == "sqsqueue_number_of_messages_sent_total"
            }
        # boto3 signs (Signature V4) as Prometheus's sigv4 option would, in any region.
        signed = boto3.session.Session(
            aws_access_key_id=A, aws_secret_access_key="a-pw"
        ).get_credentials()
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method="GET", url=f"{url}/metrics")
        SigV4Auth(signed, "sqs", "eu-west-1").add_auth(request)
        reply = raw(url, "GET", "/metrics", headers=dict(request.headers))
        assert reply.status == 200
    assert seen["ADMIN"] == {(DEFAULT, "us-east-1", "admin")}
    assert seen[A] == {(A, "us-east-1", "orders"), (A, "eu-west-1", "orders")}
    assert seen["BKEY"] == set()  # B has no queue: nothing, and no other account's
    assert f'account="{A}"' in reply.body.decode() and "admin" not in reply.body.decode()


# -- the peek -------------------------------------------------------------------------


def test_the_peek_finds_a_queue_in_whichever_account_and_region_its_url_names() -> None:
    with serving() as endpoint:
        url = endpoint.endpoint_url
        urls = make_queues(url)
        assert urls[(A, "eu-west-1")] == f"{url}/queue/eu-west-1/{A}/orders"
        expected = {
            (DEFAULT, "us-east-1"): ["d1"],
            (A, "us-east-1"): ["a1", "a2"],
            (A, "eu-west-1"): ["a-eu"],
            (B, "us-west-2"): ["b1", "b2", "b3"],
        }
        for key, queue_url in urls.items():
            query = urllib.parse.urlencode({"QueueUrl": queue_url})
            reply = raw(url, "GET", f"/_aws/sqs/messages?{query}")
            assert (reply.status, bodies(reply.body)) == (200, expected[key]), key
        # AWS's URL and the ARN name their account and region too; LocalStack's path form.
        aws_url = f"https://sqs.eu-west-1.amazonaws.com/{A}/orders"
        for ref in (aws_url, f"arn:aws:sqs:us-west-2:{B}:jobs"):
            query = urllib.parse.urlencode({"QueueUrl": ref})
            assert bodies(raw(url, "GET", f"/_aws/sqs/messages?{query}").body), ref
        reply = raw(url, "GET", f"/_aws/sqs/messages/us-west-2/{B}/jobs")
        assert bodies(reply.body) == ["b1", "b2", "b3"]
        # A boto3 client pointed at the peek, as that account in that region.
        peek = sqs_as(f"{url}/_aws/sqs/messages", A, "eu-west-1")
        got = peek.receive_message(QueueUrl=urls[(A, "eu-west-1")])["Messages"]
        assert [m["Body"] for m in got] == ["a-eu"]
        got = peek.receive_message(QueueUrl="orders")["Messages"]  # a name: the caller's own
        assert [m["Body"] for m in got] == ["a-eu"]
        # Nowhere: a region, an account or a name nobody made.
        for ref in (
            f"{url}/queue/ap-south-1/{A}/orders",
            f"{url}/{B}/orders",
            f"{url}/queue/us-west-2/{B}/nope",
        ):
            query = urllib.parse.urlencode({"QueueUrl": ref})
            reply = raw(url, "GET", f"/_aws/sqs/messages?{query}")
            assert reply.status == 400 and b"NonExistentQueue" in reply.body, ref
        assert raw(url, "GET", f"/_aws/sqs/messages/ap-south-1/{A}/orders").status == 400
        # Peeking received nothing.
        client = sqs_as(url, B, "us-west-2")
        attributes = client.get_queue_attributes(
            QueueUrl=urls[(B, "us-west-2")], AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        assert attributes["ApproximateNumberOfMessages"] == "3"


def test_with_credentials_the_peek_follows_the_queues_policy() -> None:
    keys = {A: "a-pw", B: "b-pw"}
    with serving(keys) as endpoint:
        url = endpoint.endpoint_url
        owner = sqs_as(url, A, "eu-west-1", "a-pw")
        queue_url = owner.create_queue(QueueName="orders")["QueueUrl"]
        owner.send_message(QueueUrl=queue_url, MessageBody="for A")
        query = urllib.parse.urlencode({"QueueUrl": queue_url})
        reply = raw(url, "GET", f"/_aws/sqs/messages?{query}", headers=basic(A, "a-pw"))
        assert bodies(reply.body) == ["for A"]
        peek_b = sqs_as(f"{url}/_aws/sqs/messages", B, "us-east-1", "b-pw")
        with pytest.raises(ClientError) as caught:
            peek_b.receive_message(QueueUrl=queue_url)
        assert caught.value.response["Error"]["Code"] == "AccessDenied"
        owner.add_permission(
            QueueUrl=queue_url, Label="b", AWSAccountIds=[B], Actions=["ReceiveMessage"]
        )
        got = peek_b.receive_message(QueueUrl=queue_url)["Messages"]
        assert [m["Body"] for m in got] == ["for A"]


# -- reset and health -----------------------------------------------------------------


def test_reset_empties_every_account_and_region_and_remakes_each_ones_config(
    tmp_path: Path,
) -> None:
    """``sqsqueue serve --config``: tables naming ``account_id`` and ``region``
    fill their broker; reset forgets every queue everywhere and makes each
    broker's configured queues again, empty."""
    config = tmp_path / "queues.toml"
    config.write_text(
        '[[queue]]\nname = "orders"\n\n'
        f'[[queue]]\nname = "a-orders"\naccount_id = "{A}"\nregion = "eu-west-1"\n'
    )
    with sqsqueue_serve("--config", str(config), env=ENV, expect="serving SQS at") as (url, _):
        a_eu = sqs_as(url, A, "eu-west-1")
        configured = a_eu.get_queue_url(QueueName="a-orders")["QueueUrl"]
        a_eu.send_message(QueueUrl=configured, MessageBody="gone after reset")
        a_eu.create_queue(QueueName="made-later")
        sqs_as(url, B, "us-west-2").create_queue(QueueName="jobs")
        _, before = get_json(url, "/_sqsqueue/api/queues")
        assert before["total"] == 4
        status, doc = post(url, "/_sqsqueue/reset")
        assert (status, doc) == (200, {"reset": True, "queues": 2})
        _, after = get_json(url, "/_sqsqueue/api/queues")
        assert [(q["account_id"], q["region"], q["name"]) for q in after["queues"]] == [
            (DEFAULT, "us-east-1", "orders"),
            (A, "eu-west-1", "a-orders"),
        ]
        assert a_eu.list_queues()["QueueUrls"] == [configured]
        got = a_eu.receive_message(QueueUrl=configured)
        assert "Messages" not in got
        assert "QueueUrls" not in sqs_as(url, B, "us-west-2").list_queues()


def test_only_the_default_accounts_key_may_reset() -> None:
    keys = {"ADMIN": "admin-pw", A: "a-pw"}
    with serving(keys) as endpoint:
        url = endpoint.endpoint_url
        sqs_as(url, A, "eu-west-1", "a-pw").create_queue(QueueName="orders")
        status, doc = post(url, "/_sqsqueue/reset", headers=basic(A, "a-pw"))
        assert (status, doc["error"]) == (403, "AccessDenied")
        assert sqs_as(url, A, "eu-west-1", "a-pw").list_queues()["QueueUrls"]
        status, doc = post(url, "/_sqsqueue/reset", headers=basic("ADMIN", "admin-pw"))
        assert (status, doc) == (200, {"reset": True, "queues": 0})
        assert "QueueUrls" not in sqs_as(url, A, "eu-west-1", "a-pw").list_queues()


def test_health_reports_the_defaults_and_sums_every_accounts_leniencies() -> None:
    with serving(lenient="purge-interval") as endpoint:
        url = endpoint.endpoint_url
        urls = make_queues(url)
        for (account, region), queue_url in urls.items():
            client = sqs_as(url, "test" if account == DEFAULT else account, region)
            for _ in range(2):
                client.purge_queue(QueueUrl=queue_url)  # the second within 60 s: let through
        status, doc = get_json(url, "/_sqsqueue/health")
    assert status == 200
    assert (doc["account_id"], doc["region"], doc["queues"]) == (DEFAULT, "us-east-1", 1)
    assert doc["lenient"] == {"purge-interval": 4}


# -- the console's API ----------------------------------------------------------------


def test_the_queue_list_covers_every_account_and_region_a_page_at_a_time() -> None:
    with serving() as endpoint:
        url = endpoint.endpoint_url
        make_queues(url)
        status, doc = get_json(url, "/_sqsqueue/api/queues")
        assert status == 200 and doc["total"] == 4 and doc["next_token"] is None
        assert [(q["ref"], q["account_id"], q["region"], q["visible"]) for q in doc["queues"]] == [
            ("orders", DEFAULT, "us-east-1", 1),
            (f"eu-west-1/{A}/orders", A, "eu-west-1", 1),
            (f"us-east-1/{A}/orders", A, "us-east-1", 2),
            (f"us-west-2/{B}/jobs", B, "us-west-2", 3),
        ]
        assert doc["brokers"] == [
            {"account_id": DEFAULT, "region": "us-east-1", "queues": 1},
            {"account_id": A, "region": "eu-west-1", "queues": 1},
            {"account_id": A, "region": "us-east-1", "queues": 1},
            {"account_id": B, "region": "us-west-2", "queues": 1},
        ]
        # Pages of 3 run across brokers; the token says where to go on.
        seen = []
        token = None
        while True:
            query = "limit=3" + (f"&token={token}" if token else "")
            _, page = get_json(url, f"/_sqsqueue/api/queues?{query}")
            seen += [q["ref"] for q in page["queues"]]
            token = page["next_token"]
            if token is None:
                break
        assert seen == [q["ref"] for q in doc["queues"]]
        _, page = get_json(url, "/_sqsqueue/api/queues?limit=1")
        assert [q["ref"] for q in page["queues"]] == ["orders"]
        _, page = get_json(url, "/_sqsqueue/api/queues?prefix=jo")
        assert [q["ref"] for q in page["queues"]] == [f"us-west-2/{B}/jobs"]
        assert page["next_token"] is None
        status, page = get_json(url, "/_sqsqueue/api/queues?token=bogus")
        assert (status, page["error"]) == (400, "InvalidParameterValue")


def test_a_queue_of_another_account_and_region_has_its_own_pages() -> None:
    with serving() as endpoint:
        url = endpoint.endpoint_url
        make_queues(url)
        base = f"/_sqsqueue/api/queues/eu-west-1/{A}/orders"
        status, doc = get_json(url, base)
        assert status == 200
        assert (doc["name"], doc["account_id"], doc["region"]) == ("orders", A, "eu-west-1")
        assert doc["arn"] == f"arn:aws:sqs:eu-west-1:{A}:orders"
        _, page = get_json(url, f"{base}/messages")
        assert [m["body"] for m in page["messages"]] == ["a-eu"]
        status, sent = post(url, f"{base}/send", {"body": "from the page"})
        assert status == 200
        _, history = get_json(url, f"{base}/history?message_id={sent['message_id']}")
        assert history == {"kept": False, "events": []}
        _, page = get_json(url, f"{base}/messages")
        assert [m["body"] for m in page["messages"]] == ["a-eu", "from the page"]
        m = page["messages"][0]
        status, doc = post(
            url, f"{base}/delete", {"position": m["position"], "message_id": m["message_id"]}
        )
        assert (status, doc) == (200, {"deleted": True})
        assert post(url, f"{base}/purge")[0] == 200
        # Each account's queue of the same name is its own.
        _, doc = get_json(url, f"/_sqsqueue/api/queues/us-east-1/{A}/orders")
        assert doc["visible"] == 2
        # The default's queues keep their paths, and its REGION/ACCOUNT form works too.
        _, doc = get_json(url, "/_sqsqueue/api/queues/orders/messages")
        assert [m["body"] for m in doc["messages"]] == ["d1"]
        _, doc = get_json(url, f"/_sqsqueue/api/queues/us-east-1/{DEFAULT}/orders/messages")
        assert [m["body"] for m in doc["messages"]] == ["d1"]
        for missing in (f"ap-south-1/{A}/orders", f"us-west-2/{A}/jobs", f"us-west-2/{B}/nope"):
            status, doc = get_json(url, f"/_sqsqueue/api/queues/{missing}")
            assert (status, doc["error"]) == (400, "QueueDoesNotExist"), missing
        client = sqs_as(url, A, "eu-west-1")
        queue_url = client.get_queue_url(QueueName="orders")["QueueUrl"]
        got = client.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])
        assert got["Attributes"]["ApproximateNumberOfMessages"] == "0"  # purged from the page


def test_a_dead_letter_queue_of_another_account_redrives_from_its_page() -> None:
    with serving() as endpoint:
        url = endpoint.endpoint_url
        client = sqs_as(url, B, "us-west-2")
        dlq = client.create_queue(QueueName="dlq")["QueueUrl"]
        arn = f"arn:aws:sqs:us-west-2:{B}:dlq"
        policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})
        src = client.create_queue(QueueName="src", Attributes={"RedrivePolicy": policy})["QueueUrl"]
        client.send_message(QueueUrl=src, MessageBody="poison")
        client.receive_message(QueueUrl=src, VisibilityTimeout=0)
        assert "Messages" not in client.receive_message(QueueUrl=src)
        base = f"/_sqsqueue/api/queues/us-west-2/{B}/dlq"
        _, doc = get_json(url, base)
        assert doc["sources"] == ["src"] and doc["visible"] == 1
        status, doc = post(url, f"{base}/redrive", {})
        assert status == 200 and doc["task_handle"]
        assert client.receive_message(QueueUrl=src)["Messages"][0]["Body"] == "poison"
        assert dlq.endswith("/queue/us-west-2/222222222222/dlq")


def test_with_credentials_a_key_lists_its_own_account_in_every_region() -> None:
    keys = {"ADMIN": "admin-pw", A: "a-pw", B: "b-pw"}
    with serving(keys) as endpoint:
        url = endpoint.endpoint_url
        for region in ("us-east-1", "eu-west-1"):
            sqs_as(url, A, region, "a-pw").create_queue(QueueName="orders")
        b_url = sqs_as(url, B, "us-west-2", "b-pw").create_queue(QueueName="jobs")["QueueUrl"]
        sqs_as(url, "ADMIN", "us-east-1", "admin-pw").create_queue(QueueName="admin")
        _, doc = get_json(url, "/_sqsqueue/api/queues", basic(A, "a-pw"))
        assert [q["ref"] for q in doc["queues"]] == [
            f"eu-west-1/{A}/orders",
            f"us-east-1/{A}/orders",
        ]
        assert doc["total"] == 2
        _, doc = get_json(url, "/_sqsqueue/api/queues", basic("ADMIN", "admin-pw"))
        assert [q["ref"] for q in doc["queues"]] == ["admin"]
        # Another account's queue: its policy decides, as on the SQS endpoint.
        jobs = f"/_sqsqueue/api/queues/us-west-2/{B}/jobs"
        status, doc = get_json(url, f"{jobs}/messages", basic(A, "a-pw"))
        assert (status, doc["error"]) == (400, "AccessDenied")  # SQS's status for it
        status, doc = post(url, f"{jobs}/send", {"body": "x"}, basic(A, "a-pw"))
        assert (status, doc["error"]) == (400, "AccessDenied")
        sqs_as(url, B, "us-west-2", "b-pw").add_permission(
            QueueUrl=b_url, Label="a", AWSAccountIds=[A], Actions=["SendMessage"]
        )
        assert post(url, f"{jobs}/send", {"body": "x"}, basic(A, "a-pw"))[0] == 200
        status, doc = get_json(url, f"{jobs}/messages", basic(B, "b-pw"))
        assert [m["body"] for m in doc["messages"]] == ["x"]


def test_the_access_log_names_a_queue_of_another_account_by_its_path(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    with serving() as endpoint, caplog.at_level(logging.INFO, logger="sqsqueue.access"):
        make_queues(endpoint.endpoint_url)
        raw(endpoint.endpoint_url, "GET", f"/_sqsqueue/api/queues/eu-west-1/{A}/orders/messages")
    assert any(
        r.getMessage().startswith(
            f"GET /_sqsqueue/api/queues/eu-west-1/{A}/orders/messages "
            f"queue=eu-west-1/{A}/orders status=200"
        )
        for r in caplog.records
    )
