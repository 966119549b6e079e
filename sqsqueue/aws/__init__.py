"""SQS's wire, without a network: the codecs and the dict client that adapters share.

* :class:`~sqsqueue.aws._client.Client` (``broker.client()``): boto3's method
  names, parameters and response dicts over a broker, raising
  :mod:`sqsqueue.errors` exceptions.
* :func:`handle` / ``handle_async`` (:mod:`sqsqueue.aws._wire`): one AWS JSON 1.0
  request's bytes in, the response's bytes out; :mod:`sqsqueue.aws._query`
  the same for the query protocol (form in, XML out); :mod:`sqsqueue.aws._errors`
  the protocol-level errors; :mod:`sqsqueue.aws._sigv4` Signature V4 checks
  (botocore's signer, imported when a signature is checked).

Pure translation: no sockets, no threads, no hooks into other libraries. The
endpoint (:mod:`sqsqueue.server`) and the mock (:mod:`sqsqueue.testing`) are
built on it.
"""

from sqsqueue.aws._client import OPERATIONS, Client
from sqsqueue.aws._wire import handle

__all__ = ["OPERATIONS", "Client", "handle"]
