"""The child of the crash suite (``tests/test_crash.py``): a mixed workload on a
durable broker that logs every acknowledged operation, until it is killed.

``python tests/_crash_worker.py DATA_DIR LOG SEED``. Each log line is JSON,
written with one ``os.write`` on an ``O_APPEND`` descriptor *after* the call
returned: a line in the log means the broker acknowledged the operation (the
kernel keeps the line when the process is killed; no fsync is needed for
that). The workload: standard sends (single and batched), FIFO sends with
deduplication ids drawn from a small pool (so duplicates cross restarts),
receives with short visibility timeouts (messages come back, some are
dead-lettered after 3 receives), deletes, visibility changes.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from sqsqueue import Broker, SystemClock

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
        elif roll < 0.55:
            group = rng.choice(GROUPS)
            dedup = f"d{rng.randint(0, 40)}"
            sent = fifo.send(f"f{seed}-{n}", group_id=group, deduplication_id=dedup)
            log(
                op="fsend",
                q=FIFO,
                id=sent.message_id,
                group=group,
                dedup=dedup,
                seq=sent.sequence_number,
                # When this id's deduplication window ends (the engine's entry,
                # restored across restarts): a later send of the same id before
                # then must get this message back.
                expires=fifo._dedup.entries[dedup].expires / 1e6,
            )
        elif roll < 0.75:
            queue = rng.choice((std, fifo))
            got = queue.receive(rng.randint(1, 10), visibility_timeout=rng.choice((0, 1, 2)))
            for m in got:
                held.append((queue.name, m.message_id, m.receipt_handle))
            if got:
                # The parent needs to know what a life held when it was killed:
                # its last delete may have taken effect without being logged.
                log(op="recv", q=queue.name, ids=[m.message_id for m in got])
        elif roll < 0.9 and held:
            name, message_id, handle = held.pop(rng.randrange(len(held)))
            queue = broker.get_queue(name)
            try:
                queue.delete(handle)
            except Exception:  # an expired FIFO receipt: not acknowledged, not logged
                continue
            log(op="delete", q=name, id=message_id)
        elif held:
            chosen = [held.pop(rng.randrange(len(held))) for _ in range(min(len(held), 3))]
            for name, _message_id, handle in chosen:
                queue = broker.get_queue(name)
                try:
                    queue.change_visibility(handle, rng.choice((0, 1)))
                except Exception:  # gone or expired: nothing acknowledged
                    continue


if __name__ == "__main__":
    main()
