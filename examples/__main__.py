"""Run the demo: ``python3 examples`` from the repository root.

Creates ``.venv`` once (as ``python3 tests`` does), installs sqsqueue with
PySpark into it, then runs ``examples/spark_pipeline.py``: order events flow
through FIFO queues into a local Spark job that survives an injected failure,
sends malformed events to the dead-letter queue, and proves every good event
was counted exactly once. Arguments go to the demo (``--master``, ``--events``).

``python3 examples worker-pool`` runs the smaller demo without Spark: worker
threads that crash on some jobs, redelivered on a virtual clock.
``python3 examples durable-pool`` runs a worker process on a durable broker,
kills it with SIGKILL several times and shows that no job was lost.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / ".ci"))
from bootstrap import ROOT, ensure_venv, run


def main() -> int:
    args = sys.argv[1:]
    if args[:1] in (["worker-pool"], ["durable-pool"]):
        python = str(ensure_venv("dev"))
        script = args[0].replace("-", "_") + ".py"
        return run([python, str(ROOT / "examples" / script), *args[1:]])
    python = str(ensure_venv("dev,spark,testing"))
    return run([python, str(ROOT / "examples" / "spark_pipeline.py"), *args])


if __name__ == "__main__":
    sys.exit(main())
