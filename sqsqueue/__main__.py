"""``python -m sqsqueue serve``: the ``sqsqueue`` command (see :mod:`sqsqueue.cli`)."""

import sys

from sqsqueue.cli import main

sys.exit(main())
