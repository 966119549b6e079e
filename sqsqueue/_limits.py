"""Every SQS quota and range sqsqueue enforces, each with its source.

Section numbers refer to ``docs/aws-behaviour.md``.
"""

from __future__ import annotations

#: Visibility timeout, queue/receive/change: 0..43,200 s, default 30 (section 4).
VISIBILITY_TIMEOUT_MAX = 43_200
VISIBILITY_TIMEOUT_DEFAULT = 30
#: "The maximum visibility timeout is 12 hours from the time that Amazon SQS
#: receives the ReceiveMessage request." (section 4, section 8)
RECEIVE_VISIBILITY_BUDGET = 43_200
#: DelaySeconds, queue and message: 0..900 s, default 0 (section 4).
DELAY_SECONDS_MAX = 900
#: MessageRetentionPeriod: 60..1,209,600 s, default 345,600 = 4 days (section 4).
RETENTION_MIN = 60
RETENTION_MAX = 1_209_600
RETENTION_DEFAULT = 345_600
#: MaximumMessageSize: 1,024..1,048,576 bytes, default 1 MiB (section 4).
MESSAGE_SIZE_MIN = 1_024
MESSAGE_SIZE_MAX = 1_048_576
#: ReceiveMessageWaitTimeSeconds / WaitTimeSeconds: 0..20 s (section 4).
WAIT_TIME_MAX = 20
#: MaxNumberOfMessages: 1..10, default 1 (section 4).
MAX_MESSAGES_MAX = 10
#: Batch entries: 1..10; total payload <= 1 MiB (section 4).
BATCH_ENTRIES_MAX = 10
BATCH_PAYLOAD_MAX = 1_048_576
#: Batch entry Id: <= 80 chars of [A-Za-z0-9_-] (section 4).
BATCH_ID_MAX = 80
#: In-flight messages: 120,000, standard and FIFO (section 4).
IN_FLIGHT_MAX = 120_000
#: Queue name: <= 80 chars including ".fifo" (section 4).
QUEUE_NAME_MAX = 80
#: Message attributes: <= 10 per message; names and types <= 256 chars (section 4).
MESSAGE_ATTRIBUTES_MAX = 10
ATTRIBUTE_NAME_MAX = 256
ATTRIBUTE_TYPE_MAX = 256
#: MessageGroupId, MessageDeduplicationId, ReceiveRequestAttemptId: 1..128 chars.
FIFO_ID_MAX = 128
#: FIFO deduplication interval and ReceiveRequestAttemptId lifetime: 5 minutes.
DEDUP_WINDOW = 300
#: PurgeQueue: once per 60 s; a deleted queue's name is reusable after 60 s.
PURGE_INTERVAL = 60
RECREATE_INTERVAL = 60
#: KmsDataKeyReusePeriodSeconds: 60..86,400, default 300 (section 4).
KMS_REUSE_MIN = 60
KMS_REUSE_MAX = 86_400
#: Redrive maxReceiveCount 1..1000 (section 4, UNCONFIRMED officially: console
#: and emulator range).
MAX_RECEIVE_COUNT_MIN = 1
MAX_RECEIVE_COUNT_MAX = 1_000
#: RedriveAllowPolicy sourceQueueArns: <= 10 (section 5).
REDRIVE_ALLOW_SOURCES_MAX = 10
#: StartMessageMoveTask MaxNumberOfMessagesPerSecond: 1..500; at most 100
#: active tasks; ListMessageMoveTasks MaxResults: 1..10 (section 11).
MOVE_TASK_RATE_MAX = 500
ACTIVE_MOVE_TASKS_MAX = 100
MOVE_TASKS_LISTED_MAX = 10
#: ListQueues / ListDeadLetterSourceQueues MaxResults: 1..1,000, and at most 1,000
#: queue URLs without it (section 2.1).
LIST_RESULTS_MAX = 1_000
#: maxReceiveCount of a standalone queue given a dead_letter_queue and no count.
MAX_RECEIVE_COUNT_DEFAULT = 10
#: Number attributes: 38 digits of precision, 10^-128..10^+126 (section 4).
NUMBER_PRECISION = 38
NUMBER_EXP_MIN = -128
NUMBER_EXP_MAX = 126

#: Internal time unit: integer microseconds, so that ``ManualClock`` arithmetic
#: is exact (a 30 s timeout set at t ends at exactly t + 30).
US = 1_000_000
