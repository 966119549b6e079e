"""boto3 facade: real boto3 code against a Broker (extra ``sqsqueue[aws]``).

>>> from sqsqueue.aws import mock_sqs   # also sqsqueue.testing.mock_sqs
"""

from sqsqueue.aws._mock import MockSQS, mock_sqs
from sqsqueue.aws._wire import handle

__all__ = ["MockSQS", "handle", "mock_sqs"]
