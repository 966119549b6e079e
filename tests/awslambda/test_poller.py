"""The poller's rules on the virtual clock: batches and the batching window,
the 6 MB cap, whole-batch failures (a raise, a timeout, every malformed
partial batch response), partial failures, the dead-letter queue, the FIFO
group rule, concurrency waves, AWS's ramp-up, ``enabled``, and determinism
(docs/lambda.md; docs/guarantees.md, "Lambda event source mappings")."""

from __future__ import annotations

from typing import Any

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, SendEntry
from sqsqueue.awslambda import EventSourceMapping, Invocation

START = 1_700_000_000.0
RBIF = {"function_response_types": ["ReportBatchItemFailures"]}


def ok(event: dict[str, Any], context: Any) -> None:
    return None


def send(q: Queue, n: int, prefix: str = "m") -> list[str]:
    ids = []
    for i in range(0, n, 10):
        result = q.send_batch(
            [SendEntry(id=str(j), body=f"{prefix}{j}") for j in range(i, min(n, i + 10))]
        )
        ids += [result.successful[str(j)].message_id for j in range(i, min(n, i + 10))]  # type: ignore[union-attr]
    return ids


# -- batching ----------------------------------------------------------------------


def test_batches_of_batch_size_in_send_order(queue: Queue) -> None:
    send(queue, 25)
    invs = EventSourceMapping(queue, ok).run_until_idle()
    assert [len(i.message_ids) for i in invs] == [10, 10, 5]
    assert [b for i in invs for b in i.bodies] == [f"m{j}" for j in range(25)]
    assert all(i.outcome == "success" for i in invs) and len(queue) == 0


def test_window_gathers_a_fuller_batch_on_the_clock(queue: Queue, clock: ManualClock) -> None:
    send(queue, 3)
    queue.send("late", delay_seconds=4)  # due within the window
    queue.send("too late", delay_seconds=9)  # due after it
    m = EventSourceMapping(queue, ok, batch_size=100, maximum_batching_window_in_seconds=5)
    first, second = m.run_until_idle()
    assert first.bodies == ["m0", "m1", "m2", "late"]
    assert first.started_at == START + 5  # the whole window waited, on the clock
    assert second.bodies == ["too late"] and second.started_at == START + 14
    assert clock.now() == START + 14


def test_window_ends_early_when_the_batch_is_full(queue: Queue) -> None:
    send(queue, 30)
    invs = EventSourceMapping(
        queue, ok, batch_size=20, maximum_batching_window_in_seconds=60
    ).run_until_idle()
    assert [len(i.message_ids) for i in invs] == [20, 10]
    assert invs[0].started_at == START and invs[1].started_at == START + 60


def test_batch_larger_than_ten_receives_repeatedly(queue: Queue) -> None:
    send(queue, 250)
    invs = EventSourceMapping(
        queue, ok, batch_size=100, maximum_batching_window_in_seconds=1
    ).run_until_idle()
    assert [len(i.message_ids) for i in invs] == [100, 100, 50]


def test_six_megabyte_cap(clock: ManualClock) -> None:
    q = Queue("big", clock=clock)
    # 1,000,000 bytes each in the queue, about 1.17 MB each in the event (the
    # binary attribute is base64): five fit in 6 MB, six do not.
    for _ in range(8):
        q.send("x" * 500_000, message_attributes={"blob": b"\x00" * 499_990})
    invs = EventSourceMapping(
        q, ok, batch_size=10_000, maximum_batching_window_in_seconds=1
    ).run_until_idle()
    assert [len(i.message_ids) for i in invs] == [5, 3]
    assert all(i.outcome == "success" for i in invs) and len(q) == 0
    # No message is delivered twice: the one that did not fit waited for the next batch.
    ids = [m for i in invs for m in i.message_ids]
    assert len(ids) == len(set(ids)) == 8
    assert all(i.event["Records"][0]["attributes"]["ApproximateReceiveCount"] == "1" for i in invs)


# -- failures ----------------------------------------------------------------------


def test_a_raise_returns_the_whole_batch_after_the_visibility_timeout(clock: ManualClock) -> None:
    q = Queue("jobs", clock=clock, visibility_timeout=30)
    send(q, 3)
    calls = []

    def flaky(event: dict[str, Any], context: Any) -> None:
        calls.append(clock.now())
        if len(calls) == 1:
            raise RuntimeError("boom")

    first, second = EventSourceMapping(q, flaky).run_until_idle()
    assert first.outcome == "error" and isinstance(first.error, RuntimeError)
    assert first.deleted == () and len(first.returned) == 3
    assert second.outcome == "success" and set(second.deleted) == set(first.returned)
    assert calls == [START, START + 30]
    counts = {r["attributes"]["ApproximateReceiveCount"] for r in second.event["Records"]}
    assert counts == {"2"}


def test_a_timeout_on_the_clock_fails_the_batch(clock: ManualClock) -> None:
    q = Queue("jobs", clock=clock, visibility_timeout=30)
    q.send("slow")

    def slow(event: dict[str, Any], context: Any) -> dict[str, Any]:
        if event["Records"][0]["attributes"]["ApproximateReceiveCount"] == "1":
            clock.advance(3.5)  # "takes" 3.5 s: past the 3-second timeout
        return {}

    first, second = EventSourceMapping(q, slow).run_until_idle()
    assert first.outcome == "timeout" and first.reason == "Task timed out after 3 seconds"
    assert first.deleted == () and first.returned == tuple(first.message_ids)
    assert second.outcome == "success" and second.started_at == START + 30


def test_a_handler_exactly_at_its_timeout_succeeds(queue: Queue, clock: ManualClock) -> None:
    queue.send("x")

    def exact(event: dict[str, Any], context: Any) -> None:
        clock.advance(3)

    [inv] = EventSourceMapping(queue, exact).run_until_idle()
    assert inv.outcome == "success"


def test_partial_batch_response(queue: Queue, clock: ManualClock) -> None:
    ids = send(queue, 5)

    def fail_odd(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {
            "batchItemFailures": [
                {"itemIdentifier": r["messageId"]}
                for r in event["Records"]
                if int(r["body"][1:]) % 2 and r["attributes"]["ApproximateReceiveCount"] == "1"
            ]
        }

    first, second = EventSourceMapping(queue, fail_odd, **RBIF).run_until_idle()
    assert first.outcome == "partial"
    assert set(first.returned) == {ids[1], ids[3]}
    assert set(first.deleted) == {ids[0], ids[2], ids[4]}
    assert second.outcome == "success" and second.bodies == ["m1", "m3"]
    assert second.started_at == START + 30


def test_without_report_batch_item_failures_a_response_is_ignored(queue: Queue) -> None:
    queue.send("x")

    def answer(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}

    [inv] = EventSourceMapping(queue, answer).run_until_idle()
    assert inv.outcome == "success" and len(queue) == 0


@pytest.mark.parametrize(
    "response",
    [None, {}, {"batchItemFailures": None}, {"batchItemFailures": []}, {"statusCode": 200}],
)
def test_responses_aws_treats_as_success(queue: Queue, response: object) -> None:
    send(queue, 2)
    [inv] = EventSourceMapping(queue, lambda e, c: response, **RBIF).run_until_idle()
    assert inv.outcome == "success" and len(inv.deleted) == 2 and len(queue) == 0


MALFORMED = [
    "not an object",
    ["a list"],
    42,
    {"batchItemFailures": "all"},
    {"batchItemFailures": [{}]},
    {"batchItemFailures": [{"itemId": "FIRST"}]},
    {"batchItemFailures": [{"itemIdentifier": None}]},
    {"batchItemFailures": [{"itemIdentifier": ""}]},
    {"batchItemFailures": [{"itemIdentifier": 7}]},
    {"batchItemFailures": [{"itemIdentifier": "not-in-the-batch"}]},
    {"batchItemFailures": ["FIRST"]},
    {"batchItemFailures": [{"itemIdentifier": "FIRST"}], "x": object()},  # not JSON
]


@pytest.mark.parametrize("response", MALFORMED, ids=repr)
def test_a_malformed_response_fails_the_whole_batch(
    queue: Queue, clock: ManualClock, response: object
) -> None:
    send(queue, 3)

    def answer(event: dict[str, Any], context: Any) -> object:
        if event["Records"][0]["attributes"]["ApproximateReceiveCount"] != "1":
            return None
        first = event["Records"][0]["messageId"]

        def fill(value: object) -> object:
            if value == "FIRST":
                return first
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            if isinstance(value, list):
                return [fill(v) for v in value]
            return value

        return fill(response)

    first, second = EventSourceMapping(queue, answer, **RBIF).run_until_idle()
    assert first.outcome == "invalid_response", first.reason
    assert first.deleted == () and len(first.returned) == 3
    assert second.outcome == "success" and len(second.deleted) == 3


def test_failures_go_to_the_dead_letter_queue(broker: Broker[ManualClock]) -> None:
    dlq = broker.create_queue("dlq")
    jobs = broker.create_queue(
        "jobs", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 3}
    )
    jobs.send("poison")

    def fail(event: dict[str, Any], context: Any) -> None:
        raise ValueError("cannot")

    invs = EventSourceMapping(jobs, fail).run_until_idle()
    assert [i.outcome for i in invs] == ["error"] * 3
    assert [m.body for m in dlq.inspect()] == ["poison"] and len(jobs) == 0


def test_max_invocations_stops_early(queue: Queue) -> None:
    queue.send("x")

    def fail(event: dict[str, Any], context: Any) -> None:
        raise ValueError

    m = EventSourceMapping(queue, fail)
    assert len(m.run_until_idle(max_invocations=4)) == 4
    assert len(m.invocations) == 4
    with pytest.raises(ValueError, match="max_invocations"):
        m.run_until_idle(max_invocations=0)


# -- FIFO ----------------------------------------------------------------------------


def test_fifo_failure_returns_the_rest_of_its_group_only(fifo: FifoQueue) -> None:
    for body in ["a1", "a2", "a3"]:
        fifo.send(body, group_id="A")
    for body in ["b1", "b2"]:
        fifo.send(body, group_id="B")
    processed: list[str] = []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        # Reports only a2 (not a3): the poller must not delete a3 either.
        failures = []
        for r in event["Records"]:
            if r["body"] == "a2" and r["attributes"]["ApproximateReceiveCount"] == "1":
                failures.append({"itemIdentifier": r["messageId"]})
            else:
                processed.append(r["body"])
        return {"batchItemFailures": failures}

    first, second = EventSourceMapping(fifo, handler, **RBIF).run_until_idle()
    assert first.bodies == ["a1", "a2", "a3", "b1", "b2"]
    assert [first.bodies[first.message_ids.index(i)] for i in first.returned] == ["a2", "a3"]
    assert second.bodies == ["a2", "a3"]  # in order, a3 again after a2
    assert len(fifo) == 0


def test_fifo_a_group_is_never_in_two_invocations_at_once(clock: ManualClock) -> None:
    q = FifoQueue("o.fifo", clock=clock, content_based_deduplication=True)
    for g in "ABC":
        for i in range(15):
            q.send(f"{g}{i}", group_id=g)
    active: set[str] = set()
    overlaps = []
    order: dict[str, list[int]] = {g: [] for g in "ABC"}

    def handler(event: dict[str, Any], context: Any) -> None:
        groups = {r["attributes"]["MessageGroupId"] for r in event["Records"]}
        overlaps.extend(groups & active)
        active.update(groups)
        for r in event["Records"]:
            order[r["body"][0]].append(int(r["body"][1:]))
        active.difference_update(groups)

    invs = EventSourceMapping(
        q, handler, batch_size=4, scaling_config={"MaximumConcurrency": 10}
    ).run_until_idle()
    assert overlaps == []
    assert order == {g: list(range(15)) for g in "ABC"}
    by_wave: dict[int, list[Invocation]] = {}
    for inv in invs:
        by_wave.setdefault(inv.wave, []).append(inv)
    for wave in by_wave.values():
        groups = [r["attributes"]["MessageGroupId"] for i in wave for r in i.event["Records"]]
        batches = [{r["attributes"]["MessageGroupId"] for r in i.event["Records"]} for i in wave]
        assert sum(len(b) for b in batches) == len(set(groups))  # no group in two batches


def test_fifo_concurrency_follows_the_active_groups(clock: ManualClock) -> None:
    q = FifoQueue("o.fifo", clock=clock, content_based_deduplication=True)
    for g in range(6):
        q.send(f"g{g}", group_id=f"g{g}")
    invs = EventSourceMapping(
        q, ok, batch_size=1, scaling_config={"MaximumConcurrency": 4}
    ).run_until_idle()
    waves = [i.wave for i in invs]
    assert [waves.count(w) for w in sorted(set(waves))] == [4, 2]


# -- concurrency and scaling ---------------------------------------------------------


def test_maximum_concurrency_bounds_each_wave(queue: Queue) -> None:
    send(queue, 55)
    invs = EventSourceMapping(queue, ok, scaling_config={"MaximumConcurrency": 2}).run_until_idle()
    waves = [i.wave for i in invs]
    assert [waves.count(w) for w in sorted(set(waves))] == [2, 2, 2]


def test_ramp_up_starts_at_five_batches(queue: Queue, clock: ManualClock) -> None:
    send(queue, 200)
    m = EventSourceMapping(queue, ok, ramp_up=True)
    invs = m.run_until_idle(max_invocations=5)
    assert {i.wave for i in invs} == {invs[0].wave}  # five batches in the first wave
    assert m._poller.concurrency() == 5
    clock.advance(60)
    assert m._poller.concurrency() == 305
    m.delete()  # one mapping per queue and function, as on AWS
    assert EventSourceMapping(queue, ok)._poller.concurrency() == 1_000


def test_disabled_mapping_does_nothing(queue: Queue) -> None:
    queue.send("x")
    m = EventSourceMapping(queue, ok, enabled=False)
    assert m.run_until_idle() == [] and len(queue) == 1
    m.enabled = True
    assert len(m.run_until_idle()) == 1 and len(queue) == 0


def test_same_sends_same_invocations() -> None:
    def run() -> list[tuple[str, float, list[str], tuple[int, ...]]]:
        clock = ManualClock(start=START)
        q = Queue("jobs", clock=clock, visibility_timeout=10)
        for i in range(40):
            q.send(f"m{i}", delay_seconds=i % 7)

        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            return {
                "batchItemFailures": [
                    {"itemIdentifier": r["messageId"]}
                    for r in event["Records"]
                    if r["body"].endswith("3") and r["attributes"]["ApproximateReceiveCount"] < "3"
                ]
            }

        invs = EventSourceMapping(
            q, handler, batch_size=15, maximum_batching_window_in_seconds=2, **RBIF
        ).run_until_idle()
        return [
            (
                i.outcome,
                i.started_at,
                i.bodies,
                tuple(int(r["attributes"]["ApproximateReceiveCount"]) for r in i.event["Records"]),
            )
            for i in invs
        ]

    assert run() == run()


def test_messages_sent_by_the_handler_are_processed(queue: Queue) -> None:
    queue.send("3")

    def countdown(event: dict[str, Any], context: Any) -> None:
        for r in event["Records"]:
            if int(r["body"]) > 0:
                queue.send(str(int(r["body"]) - 1))

    invs = EventSourceMapping(queue, countdown).run_until_idle()
    assert [i.bodies for i in invs] == [["3"], ["2"], ["1"], ["0"]]


def test_keep_invocations_bounds_the_record(queue: Queue) -> None:
    send(queue, 30)
    m = EventSourceMapping(queue, ok, batch_size=1, keep_invocations=3)
    assert len(m.run_until_idle()) == 30
    assert [i.bodies for i in m.invocations] == [["m27"], ["m28"], ["m29"]]
