"""Hypothesis settings for the state machines: cheap by default, deep on request.

Set ``SQSQUEUE_LONG=1`` to run every machine at depth: :data:`LONG_EXAMPLES`
runs of up to :data:`LONG_STEPS` steps each, no deadline. Some runs end early
(hypothesis discards a few as invalid and its swarm testing leaves some rules
out), so 1,400 x 100 is what gives at least 100,000 executed steps per machine.
Nothing is skipped in either mode; only the amount of exploration changes.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["LONG", "LONG_EXAMPLES", "LONG_STEPS", "machine_settings"]

#: True when ``SQSQUEUE_LONG`` is set to anything but ``""`` or ``"0"``.
LONG = os.environ.get("SQSQUEUE_LONG", "") not in ("", "0")
LONG_EXAMPLES = 1_400
LONG_STEPS = 100


def machine_settings(*, max_examples: int, stateful_step_count: int) -> settings:
    """Settings for one ``RuleBasedStateMachine``.

    ``max_examples`` and ``stateful_step_count`` are the cheap CI budget; in
    long mode both are raised to at least the long budget.
    """
    if LONG:
        max_examples = max(max_examples, LONG_EXAMPLES)
        stateful_step_count = max(stateful_step_count, LONG_STEPS)
    return settings(
        max_examples=max_examples,
        stateful_step_count=stateful_step_count,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        report_multiple_bugs=False,
    )
