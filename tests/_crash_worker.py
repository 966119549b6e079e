"""The child of the crash suite (``tests/test_crash.py``): a mixed workload on a
durable broker that logs every acknowledged operation, until it is killed.

``python tests/_crash_worker.py DATA_DIR LOG SEED``. Each log line is JSON,
written with one ``os.write`` on an ``O_APPEND`` descriptor *after* the call
returned: a line in the log means the broker acknowledged the operation (the
kernel keeps the line when the process is killed; no fsync is needed for
that). The workload: standard sends (single and batched), FIFO sends (single
and batched) with deduplication ids drawn from a small pool (so duplicates
cross restarts), receives with short visibility timeouts (messages come back,
some are dead-lettered after 3 receives), deletes (single and batched),
visibility changes (single and batched).

Before each delete call the worker logs its intent (``deleting``): a kill
between the call's return and its ``delete`` line leaves a delete that took
effect unacknowledged, and only the ids of a life's last intent can be that.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from sqsqueue import Broker, ChangeVisibilityEntry, FifoQueue, SendEntry, SystemClock

STD, STD_DLQ, FIFO, FIFO_DLQ = "std", "std-dlq", "orders.fifo", "orders-dlq.fifo"
GROUPS = ("g1", "g2", "g3")


def setup(broker: Broker[SystemClock]) -> None:
    dlq = broker.create_queue(STD_DLQ)
    broker.create_queue(
        STD,
        attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 3})
        },
    )
    fdlq = broker.create_queue(FIFO_DLQ, fifo_queue=True)
    broker.create_queue(
        FIFO,
        fifo_queue=True,
        attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": fdlq.arn, "maxReceiveCount": 3})
        },
    )


def main() -> None:
    data_dir, log_path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(**entry: object) -> None:
        os.write(fd, (json.dumps({**entry, "t": time.time()}) + "\n").encode())

    broker = Broker(clock=SystemClock(), data_dir=data_dir)
    if STD not in broker:
        setup(broker)
    std, fifo = broker.get_queue(STD), broker.get_queue(FIFO)
    assert isinstance(fifo, FifoQueue)

    def log_fsend(message_id: str, group: str, dedup: str) -> None:
        log(
            op="fsend",
            q=FIFO,
            id=message_id,
            group=group,
            dedup=dedup,
            # When this id's deduplication window ends (the engine's entry,
            # restored across restarts): a later send of the same id before
            # then must get this message back.
            expires=fifo._dedup.entries[dedup][0] / 1e6,
        )

    held: list[tuple[str, str, str]] = []  # (queue, message id, handle) received in this life
    log(op="ready", life=seed)
    n = 0
    crowded = len(std) + len(fifo) > 2_000
    while True:
        n += 1
        roll = rng.random()
        if n % 50 == 0:
            # Keep the store small, so 1,000 restarts stay quick: past 2,000
            # stored messages, only receive, delete and change visibility.
            crowded = len(std) + len(fifo) > 2_000
        if crowded:
            roll = 0.55 + 0.45 * roll
        if roll < 0.25:
            body = f"s{seed}-{n}"
            log(op="send", q=STD, id=std.send(body).message_id, body=body)
        elif roll < 0.35:
            bodies = [f"b{seed}-{n}-{i}" for i in range(rng.randint(2, 10))]
            result = std.send_batch(bodies)
            for i, body in enumerate(bodies):
                sent = result.successful[str(i)]
                assert sent is not None
                log(op="send", q=STD, id=sent.message_id, body=body)
        elif roll < 0.47:
            group = rng.choice(GROUPS)
            dedup = f"d{rng.randint(0, 40)}"
            sent = fifo.send(f"f{seed}-{n}", group_id=group, deduplication_id=dedup)
            log_fsend(sent.message_id, group, dedup)
        elif roll < 0.55:
            entries = [
                SendEntry(
                    str(i),
                    f"fb{seed}-{n}-{i}",
                    group_id=rng.choice(GROUPS),
                    deduplication_id=f"d{rng.randint(0, 40)}",
                )
                for i in range(rng.randint(2, 10))
            ]
            result = fifo.send_batch(entries)
            for entry in entries:  # in entry order: the order they were stored in
                sent = result.successful[entry.id]
                assert sent is not None and entry.group_id and entry.deduplication_id
                log_fsend(sent.message_id, entry.group_id, entry.deduplication_id)
        elif roll < 0.75:
            queue = rng.choice((std, fifo))
            got = queue.receive(rng.randint(1, 10), visibility_timeout=rng.choice((0, 1, 2)))
            for m in got:
                held.append((queue.name, m.message_id, m.receipt_handle))
            if got:
                # The parent needs to know what a life held when it was killed:
                # its last delete may have taken effect without being logged.
                log(op="recv", q=queue.name, ids=[m.message_id for m in got])
        elif roll < 0.82 and held:
            name, message_id, handle = held.pop(rng.randrange(len(held)))
            queue = broker.get_queue(name)
            log(op="deleting", ids=[message_id])
            try:
                queue.delete(handle)
            except Exception:  # an expired FIFO receipt: not acknowledged, not logged
                continue
            log(op="delete", q=name, id=message_id)
        elif roll < 0.9 and held:
            name = rng.choice(held)[0]
            mine = [h for h in held if h[0] == name][:10]
            for h in mine:
                held.remove(h)
            queue = broker.get_queue(name)
            log(op="deleting", ids=[message_id for _, message_id, _ in mine])
            deleted = queue.delete_batch([handle for _, _, handle in mine])
            for i, (_, message_id, _) in enumerate(mine):
                if str(i) in deleted.successful:  # an expired FIFO receipt fails its entry
                    log(op="delete", q=name, id=message_id)
        elif held:
            chosen = [held.pop(rng.randrange(len(held))) for _ in range(min(len(held), 3))]
            if rng.random() < 0.5:
                for name, _message_id, handle in chosen:
                    queue = broker.get_queue(name)
                    try:
                        queue.change_visibility(handle, rng.choice((0, 1)))
                    except Exception:  # gone or expired: nothing acknowledged
                        continue
            else:
                name = chosen[0][0]
                broker.get_queue(name).change_visibility_batch(
                    [
                        ChangeVisibilityEntry(str(i), handle, rng.choice((0, 1)))
                        for i, (q, _, handle) in enumerate(chosen)
                        if q == name
                    ]
                )


if __name__ == "__main__":
    main()
