"""``python -m sqsqueue serve``: the ``sqsqueue`` command (see :mod:`sqsqueue.server`)."""

import sys

from sqsqueue.server import main

sys.exit(main())
