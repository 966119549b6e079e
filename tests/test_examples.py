"""The examples run and show what they say they show (``examples/``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` by path (``examples`` is not a package)."""
    module_name = f"_sqsqueue_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def worker_pool() -> ModuleType:
    return load_example("worker_pool")


@pytest.mark.timeout(60)
class TestWorkerPoolMain:
    """examples/worker_pool.py: crashed jobs are redelivered and every job is done once."""

    def test_every_job_processed_exactly_once(self, worker_pool: ModuleType) -> None:
        """Each job is completed once, including the ones whose first worker crashed."""
        lines: list[str] = []
        summary = worker_pool.main(out=lines.append)
        assert len(summary.jobs) == 12
        assert summary.processed_exactly_once
        assert all(job.completions == 1 for job in summary.jobs.values())

    def test_crashed_jobs_are_redelivered(self, worker_pool: ModuleType) -> None:
        """A job whose worker crashed is delivered again once the visibility timeout ends."""
        summary = worker_pool.main(out=lambda line: None)
        crashed = [job for job in summary.jobs.values() if job.crashes_first]
        assert crashed, "the default seed must make some worker crash"
        assert summary.crashes == len(crashed)
        assert summary.redeliveries == len(crashed) > 0
        assert all(job.deliveries == 2 for job in crashed)
        assert all(job.deliveries == 1 for job in summary.jobs.values() if not job.crashes_first)
        assert any("attempt 2" in line for line in summary.log)

    def test_virtual_time_passes_the_visibility_timeout(self, worker_pool: ModuleType) -> None:
        """The demo moves the ManualClock 1 s past the 30 s visibility timeout, no further."""
        summary = worker_pool.main(out=lambda line: None)
        assert summary.virtual_seconds == worker_pool.VISIBILITY_TIMEOUT + 1

    def test_same_seed_same_crashes(self, worker_pool: ModuleType) -> None:
        """The jobs that crash depend only on the seed, not on thread scheduling."""
        first = worker_pool.main(seed=5, out=lambda line: None)
        second = worker_pool.main(seed=5, out=lambda line: None)
        assert [j.name for j in first.jobs.values() if j.crashes_first] == [
            j.name for j in second.jobs.values() if j.crashes_first
        ]

    @pytest.mark.parametrize("workers", [1, 10])
    def test_pool_sizes(self, worker_pool: ModuleType, workers: int) -> None:
        """One worker or ten, every job still ends up processed exactly once."""
        summary = worker_pool.main(jobs=25, workers=workers, out=lambda line: None)
        assert summary.processed_exactly_once
        assert len(summary.jobs) == 25

    def test_prints_a_summary(
        self, worker_pool: ModuleType, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """By default the log and the summary table go to stdout."""
        worker_pool.main()
        printed = capsys.readouterr().out
        assert "CRASH" in printed
        assert "every job processed exactly once: True" in printed


@pytest.mark.timeout(180)
def test_durable_pool_survives_kills(tmp_path: Path) -> None:
    """examples/durable_pool.py: a worker process on a durable broker is killed
    with SIGKILL mid-work several times; the jobs its threads held come back,
    and at the end every job has exactly one result and none is left."""
    durable_pool = load_example("durable_pool")
    lines: list[str] = []
    summary = durable_pool.main(
        jobs=600, kills=3, threads=4, data_dir=str(tmp_path), out=lines.append
    )
    assert summary.kills >= 1
    # The kills landed while jobs were held, so the example shows a recovery,
    # not a worker killed while idle.
    assert sum(summary.in_flight_at_kills) > 0
    assert summary.left_in_queue == 0
    assert sorted(summary.results) == [f"job-{i:04d}" for i in range(600)]
    assert set(summary.results.values()) == {1}
    assert summary.every_job_done_once
    assert lines[-1].startswith("every job done exactly once")
