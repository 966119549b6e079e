"""The ``sqs`` data source's write tasks against a stub SQS client, without Spark.

``_write_partition`` is what each write task runs; here it gets its rows as a
list and its client from a stub that stores what it accepts, in order, and
fails the entries a test chooses: server-side (``SenderFault`` false, retried)
or client-side (reported at once), or drops a repeated FIFO deduplication id
as SQS does. No SparkSession is started.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import botocore.exceptions
import pytest
from pyspark.sql import Row

from sqsqueue.spark._options import Connection
from sqsqueue.spark._writer import SqsWriteError, _write_partition

#: (entry, how many times this body was tried, this one included) -> None to
#: store it, or (error code, sender fault) to fail it.
Verdict = Callable[[dict[str, Any], int], tuple[str, bool] | None]


def store_all(entry: dict[str, Any], attempt: int) -> tuple[str, bool] | None:
    return None


@dataclass
class StubSqs:
    """SendMessageBatch only: stores accepted bodies in call and entry order."""

    verdict: Verdict = store_all
    stored: list[str] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    tries: Counter[str] = field(default_factory=Counter)
    dedup: set[str] = field(default_factory=set)
    raise_on_call: Exception | None = None
    max_size: int = 262_144

    def get_queue_attributes(self, QueueUrl: str, AttributeNames: list[str]) -> dict[str, Any]:
        return {"Attributes": {"MaximumMessageSize": str(self.max_size)}}

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        if self.raise_on_call is not None:
            raise self.raise_on_call
        self.calls.append([e["MessageBody"] for e in Entries])
        self.entries.extend(Entries)
        ok: list[dict[str, str]] = []
        failed: list[dict[str, Any]] = []
        for e in Entries:
            body = e["MessageBody"]
            self.tries[body] += 1
            outcome = self.verdict(e, self.tries[body])
            if outcome is not None:
                code, sender = outcome
                failed.append({"Id": e["Id"], "Code": code, "Message": "no", "SenderFault": sender})
                continue
            ok.append({"Id": e["Id"]})
            dedup = e.get("MessageDeduplicationId")
            if dedup is not None and dedup in self.dedup:
                continue  # accepted, not stored again: SQS's deduplication
            if dedup is not None:
                self.dedup.add(dedup)
            self.stored.append(body)
        return {"Successful": ok, "Failed": failed}


@dataclass(frozen=True)
class Target:
    """A Connection whose client is the stub."""

    connection: Connection
    stub: StubSqs

    @property
    def queue_url(self) -> str:
        return self.connection.queue_url

    @property
    def fifo(self) -> bool:
        return self.connection.fifo

    def client(self, *, read_timeout: int = 60, max_attempts: int | None = None) -> Any:
        return self.stub

    def where(self) -> str:
        return self.connection.where()


def target(stub: StubSqs, fifo: bool = False) -> Target:
    name = "orders.fifo" if fifo else "orders"
    connection = Connection.from_options(
        {
            "queueUrl": f"http://127.0.0.1:9/123456789012/{name}",
            "endpointUrl": "http://127.0.0.1:9",
            "region": "us-east-1",
            "accessKeyId": "test",
            "secretAccessKey": "test",
        }
    )
    return Target(connection, stub)


def rows(bodies: list[str], groups: bool = False) -> list[Row]:
    """``a:3`` is row 3 of group ``a`` when ``groups``."""
    if groups:
        return [Row(body=b, message_group_id=b.split(":")[0]) for b in bodies]
    return [Row(body=b) for b in bodies]


def fail_once(bad: str, code: str = "InternalError") -> Verdict:
    """``bad`` fails server-side on its first try."""
    return lambda e, n: (code, False) if e["MessageBody"] == bad and n == 1 else None


def fail_always(bad: str, code: str, sender: bool) -> Verdict:
    return lambda e, n: (code, sender) if e["MessageBody"] == bad else None


def of_group(stored: list[str], group: str) -> list[str]:
    return [b for b in stored if b.split(":")[0] == group]


INTERLEAVED = [f"{'ab'[i % 2]}:{i}" for i in range(24)]


class TestServerSideRetries:
    """``SenderFault`` false entries are sent again, up to ``maxRetries``."""

    def test_retry_then_success(self) -> None:
        stub = StubSqs(fail_once("r12"))
        bodies = [f"r{i}" for i in range(25)]
        result = _write_partition(target(stub), iter(rows(bodies)), "write:t", 3)
        assert result.sent == 25
        assert Counter(stub.stored) == Counter(bodies)
        assert stub.tries["r12"] == 2

    def test_retries_exhausted_are_reported(self) -> None:
        stub = StubSqs(fail_always("r3", "InternalError", sender=False))
        bodies = [f"r{i}" for i in range(12)]
        with pytest.raises(SqsWriteError) as caught:
            _write_partition(target(stub), iter(rows(bodies)), "write:t", 2)
        text = str(caught.value)
        assert "1 row(s) of partition 0 could not be sent" in text
        assert "(11 were)" in text and "row 3: InternalError: no" in text
        assert stub.tries["r3"] == 3  # the first try and 2 retries
        assert Counter(stub.stored) == Counter(b for b in bodies if b != "r3")

    def test_client_side_failure_is_not_retried(self) -> None:
        stub = StubSqs(fail_always("r3", "InvalidMessageContents", sender=True))
        with pytest.raises(SqsWriteError, match="row 3: InvalidMessageContents"):
            _write_partition(target(stub), iter(rows([f"r{i}" for i in range(5)])), "write:t", 3)
        assert stub.tries["r3"] == 1

    def test_retry_keeps_the_order_within_a_group(self) -> None:
        """FIFO, strictGroupOrder: ``a:2`` fails server-side once. Its retry is
        stored before every later row of group ``a``: each group in row order."""
        stub = StubSqs(fail_once("a:2"))
        result = _write_partition(
            target(stub, fifo=True), iter(rows(INTERLEAVED, groups=True)), "write:t", 3, True
        )
        assert result.sent == 24
        assert stub.tries["a:2"] == 2
        for group in "ab":
            assert of_group(stub.stored, group) == of_group(INTERLEAVED, group)

    def test_a_strict_fifo_call_carries_one_row_per_group(self) -> None:
        """strictGroupOrder: no failed row can be followed, in its call, by a
        stored row of its group. Rows come in runs of 3 of a group; with 12
        groups the task looks ahead and the calls are still full."""
        stub = StubSqs()
        bodies = [f"g{(i // 3) % 12}:{i}" for i in range(240)]
        _write_partition(
            target(stub, fifo=True), iter(rows(bodies, groups=True)), "write:t", 3, True
        )
        assert all(len({b.split(":")[0] for b in call}) == len(call) for call in stub.calls)
        assert [len(call) for call in stub.calls] == [10] * 24
        for group in range(12):
            assert of_group(stub.stored, f"g{group}") == of_group(bodies, f"g{group}")


class TestFailedRowHoldsItsGroup:
    """FIFO with strictGroupOrder: after a row fails for good, whatever the
    failure, its group's later rows are not sent."""

    def test_later_rows_of_the_group_are_reported_not_sent(self) -> None:
        stub = StubSqs(fail_always("a:4", "InvalidMessageContents", sender=True))
        with pytest.raises(SqsWriteError) as caught:
            _write_partition(
                target(stub, fifo=True), iter(rows(INTERLEAVED, groups=True)), "write:t", 3, True
            )
        text = str(caught.value)
        assert "1 row(s) of partition 0 could not be sent" in text
        assert "row 4: InvalidMessageContents" in text
        held = list(range(6, 24, 2))  # group a's rows after row 4
        assert "9 later row(s) were not sent, to keep their group's order" in text
        assert f"rows {', '.join(map(str, held))}: an earlier row of group 'a' failed" in text
        assert of_group(stub.stored, "a") == ["a:0", "a:2"]
        assert of_group(stub.stored, "b") == of_group(INTERLEAVED, "b")

    def test_exhausted_retry_holds_the_group_too(self) -> None:
        stub = StubSqs(fail_always("b:5", "ServiceUnavailable", sender=False))
        with pytest.raises(SqsWriteError, match="an earlier row of group 'b' failed"):
            _write_partition(
                target(stub, fifo=True), iter(rows(INTERLEAVED, groups=True)), "write:t", 1, True
            )
        assert of_group(stub.stored, "b") == ["b:1", "b:3"]
        assert of_group(stub.stored, "a") == of_group(INTERLEAVED, "a")

    def test_replay_with_the_same_identity_stores_every_row_once_in_order(self) -> None:
        """The failed row, once fixed on the queue's side, and the rows held back
        are stored by the replay after the rows stored the first time: each
        group exactly once, in row order."""
        stub = StubSqs(fail_always("a:4", "InvalidMessageContents", sender=True))
        with pytest.raises(SqsWriteError):
            _write_partition(
                target(stub, fifo=True), iter(rows(INTERLEAVED, groups=True)), "write:t", 3, True
            )
        stub.verdict = store_all
        _write_partition(
            target(stub, fifo=True), iter(rows(INTERLEAVED, groups=True)), "write:t", 3, True
        )
        assert Counter(stub.stored) == Counter(INTERLEAVED)
        for group in "ab":
            assert of_group(stub.stored, group) == of_group(INTERLEAVED, group)

    def test_standard_queue_sends_the_rest(self) -> None:
        """No groups to keep in order: every other row is sent."""
        stub = StubSqs(fail_always("a:4", "InvalidMessageContents", sender=True))
        bodies = [Row(body=b, message_group_id="a") for b in INTERLEAVED]
        with pytest.raises(SqsWriteError) as caught:
            _write_partition(target(stub), iter(bodies), "write:t", 3)
        assert "not sent" not in str(caught.value)
        assert len(stub.stored) == 23


class TestCheckedBeforeSending:
    """FIFO, by default: rows are checked against the queue's content rules
    before they are sent, and calls carry up to 10 rows of a group."""

    def test_a_row_the_queue_would_refuse_is_not_sent_and_holds_its_group(self) -> None:
        bodies = list(INTERLEAVED)
        bodies[4] = "a:4\x00"  # a character SQS refuses
        stub = StubSqs()
        with pytest.raises(SqsWriteError) as caught:
            _write_partition(target(stub, fifo=True), iter(rows(bodies, groups=True)), "w", 3)
        text = str(caught.value)
        assert "row 4: InvalidMessageContents" in text
        assert "an earlier row of group 'a' failed" in text
        assert not any("\x00" in call for batch in stub.calls for call in batch)
        assert of_group(stub.stored, "a") == ["a:0", "a:2"]
        assert of_group(stub.stored, "b") == of_group(bodies, "b")

    def test_a_row_over_the_queues_size_limit_is_not_sent(self) -> None:
        stub = StubSqs(max_size=1024)
        bodies = ["a:0", "a:" + "x" * 1100, "a:2", "b:3"]
        with pytest.raises(SqsWriteError, match="Message must be shorter than 1024 bytes"):
            _write_partition(target(stub, fifo=True), iter(rows(bodies, groups=True)), "w", 3)
        assert stub.stored == ["a:0", "b:3"]

    def test_a_row_without_a_group_is_not_sent(self) -> None:
        """FIFO rows need a group: SQS would refuse the whole call for one
        without, so it is refused on its own and the others go out."""
        stub = StubSqs()
        batch = [*rows(["a:0", "a:1"], groups=True), Row(body="lost", message_group_id=None)]
        with pytest.raises(SqsWriteError, match="row 2: MissingParameter: The request must"):
            _write_partition(target(stub, fifo=True), iter(batch), "w", 3)
        assert stub.stored == ["a:0", "a:1"]

    def test_one_group_goes_out_ten_rows_a_call(self) -> None:
        stub = StubSqs()
        bodies = [f"a:{i}" for i in range(25)]
        _write_partition(target(stub, fifo=True), iter(rows(bodies, groups=True)), "w", 3)
        assert [len(call) for call in stub.calls] == [10, 10, 5]
        assert stub.stored == bodies

    def test_a_retry_after_its_group_failed_with_it_keeps_the_order(self) -> None:
        """``a:2`` and the later ``a`` rows of its call fail server-side once:
        all are sent again, in row order."""
        stub = StubSqs(
            lambda e, n: (
                ("InternalError", False)
                if n == 1 and e["MessageBody"] in {"a:2", "a:3", "a:4"}
                else None
            )
        )
        bodies = [f"a:{i}" for i in range(5)]
        _write_partition(target(stub, fifo=True), iter(rows(bodies, groups=True)), "w", 3)
        assert stub.stored == bodies

    def test_a_server_side_failure_after_later_rows_were_stored_is_reported(self) -> None:
        """``a:2`` fails server-side while ``a:4``... of its call were stored: a
        retry would store it after them, so it is not retried, and the error
        says the group's order is broken (strictGroupOrder rules this out)."""
        stub = StubSqs(fail_once("a:2"))
        with pytest.raises(SqsWriteError) as caught:
            _write_partition(target(stub, fifo=True), iter(rows(INTERLEAVED, groups=True)), "w", 3)
        text = str(caught.value)
        assert "The order of a group is broken: rows 4, 6, 8 of group 'a' were stored" in text
        assert "strictGroupOrder=true" in text
        assert stub.tries["a:2"] == 1


class TestColumns:
    def test_columns_are_sent_as_given_on_a_standard_queue(self) -> None:
        """A standard queue gets the columns as given, a
        ``message_deduplication_id`` included (SQS refuses it there; the driver
        helpers send it too, test_errors.py), and no generated id."""
        stub = StubSqs()
        batch = [
            Row(body="a", message_deduplication_id="id-1", delay_seconds=None),
            Row(body="b", message_deduplication_id=None, delay_seconds=3),
        ]
        _write_partition(target(stub), iter(batch), "write:t", 3)
        assert [e.get("MessageDeduplicationId") for e in stub.entries] == ["id-1", None]
        assert [e.get("DelaySeconds") for e in stub.entries] == [None, 3]


class TestWholeRequestErrors:
    def test_batch_refused_as_a_whole_is_sent_one_a_call(self) -> None:
        stub = StubSqs()
        send = stub.send_message_batch

        def too_long(QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
            if len(Entries) > 1 and any(e["MessageBody"] == "big" for e in Entries):
                raise botocore.exceptions.ClientError(
                    {
                        "Error": {"Code": "BatchRequestTooLong", "Message": "too long"},
                        "ResponseMetadata": {"HTTPStatusCode": 400},
                    },
                    "SendMessageBatch",
                )
            return send(QueueUrl=QueueUrl, Entries=Entries)

        stub.send_message_batch = too_long  # type: ignore[method-assign]
        bodies = ["r0", "r1", "big", "r3"]
        result = _write_partition(target(stub), iter(rows(bodies)), "write:t", 3)
        assert result.sent == 4 and stub.stored == bodies
        assert stub.calls == [["r0"], ["r1"], ["big"], ["r3"]]

    def test_connection_failure_names_the_queue_and_the_cause(self) -> None:
        stub = StubSqs(
            raise_on_call=botocore.exceptions.EndpointConnectionError(
                endpoint_url="http://127.0.0.1:9/"
            )
        )
        with pytest.raises(SqsWriteError) as caught:
            _write_partition(target(stub), iter(rows(["r0"])), "write:t", 3)
        text = str(caught.value)
        assert text.startswith("sqs data source: cannot send to queueUrl")
        assert "orders" in text and "Could not connect to the endpoint URL" in text
        assert isinstance(caught.value.__cause__, botocore.exceptions.EndpointConnectionError)
