"""sqsqueue as users install it: a wheel built from this tree, its core
dependencies, and each extra bringing what its adapter package imports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import venv
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Which extra each adapter package's users install. The engine (every other
#: module) has only the core dependencies.
EXTRA_OF = {
    "sqsqueue.aws": "aws",
    # The console runs inside the endpoint: what it imports (botocore, to
    # check a signature) comes with the server's extra.
    "sqsqueue.console": "server",
    "sqsqueue.moto": "moto",
    "sqsqueue.awslambda": "lambda",
    "sqsqueue.check": "server",
    "sqsqueue.server": "server",
    "sqsqueue.spark": "spark",
    "sqsqueue.testing": "testing",
}

#: Imports that run only where the user already has the library, each because
#: the library is what calls sqsqueue: the pytest plugin is loaded by pytest,
#: mock_sqs's aiobotocore answer is built only for an aiobotocore client, and
#: the moto bridge (which mock_sqs imports) touches moto only when moto's own
#: modules are imported (its patches run then) or call it (its backend).
#: ``serve --with-moto`` imports moto's server only after checking it is
#: installed, and ``sqsqueue.testing.mock_aws`` (moto's mock_aws with
#: sqsqueue's SQS) imports moto when it is made; both name the extras to
#: install otherwise (tests/moto). ``sqsqueue.testing.check`` imports
#: ``sqsqueue.check`` (the ``server`` extra's) when it is called, and a run
#: without uvicorn raises ImportError naming ``sqsqueue[server]``.
PRESENT_WHEN_USED = {
    "sqsqueue.testing": {"sqsqueue.check"},
    "sqsqueue.testing._mock": {"moto"},
    "sqsqueue.server._moto": {"moto", "flask"},
    "sqsqueue.testing.plugin": {"pytest"},
    "sqsqueue.testing._hooks": {"aiobotocore"},
    "sqsqueue.moto._backend": {"moto"},
    "sqsqueue.moto._delivery": {"moto"},
    "sqsqueue.moto._lambda": {"moto"},
}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


@cache
def _closure(requirements: tuple[str, ...]) -> frozenset[str]:
    """The distributions ``requirements`` bring, transitively (as installed
    here; markers for extras are skipped: an extra must be asked for)."""
    seen: set[str] = set()
    todo = [_name(r) for r in requirements]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo.extend(_name(r) for r in requires if "extra ==" not in r)
    return frozenset(seen)


def _project() -> dict[str, object]:
    data: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return data


@cache
def _providers() -> Mapping[str, list[str]]:
    """Top-level module -> the distributions providing it: read once, as it
    parses every installed distribution's metadata (0.35 s a call here)."""
    return metadata.packages_distributions()


def _distributions_of(module: str) -> set[str]:
    """The distributions that provide top-level ``module`` (empty: stdlib)."""
    if module in sys.stdlib_module_names:
        return set()
    found = _providers().get(module, [])
    return {d.lower().replace("_", "-") for d in found} or {module}


def _engine_to_adapter(source: str, target: str) -> bool:
    """``Broker.client()`` and ``Broker.serve()`` import their adapter inside
    the method: calling ``serve()`` needs the server extra, importing the
    engine does not."""
    return ".".join(source.split(".")[:2]) not in EXTRA_OF and (
        ".".join(target.split(".")[:2]) in EXTRA_OF
    )


def _undeclared() -> dict[str, set[str]]:
    """For each sqsqueue module, the third-party imports (its own, and those
    of every sqsqueue module it imports, function-level and type-only
    included) that the install its users make does not bring."""
    import grimp

    graph = grimp.build_graph("sqsqueue", include_external_packages=True)
    project = _project()
    core = tuple(project["dependencies"])  # type: ignore[arg-type]
    extras: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    out: dict[str, set[str]] = {}
    for module in sorted(m for m in graph.modules if m.startswith("sqsqueue")):
        package = ".".join(module.split(".")[:2])
        extra = EXTRA_OF.get(package)
        allowed = _closure(core + tuple(extras[extra] if extra else ()))
        missing: set[str] = set()
        seen, todo = {module}, [module]
        while todo:
            inner = todo.pop()
            for target in graph.find_modules_directly_imported_by(inner):
                if target in PRESENT_WHEN_USED.get(inner, ()):
                    continue
                if not target.startswith("sqsqueue"):
                    missing |= _distributions_of(target) - allowed
                elif target not in seen and not _engine_to_adapter(inner, target):
                    seen.add(target)
                    todo.append(target)
        if missing:
            out[module] = missing
    return out


def test_each_extra_brings_what_its_package_imports() -> None:
    """A module that imports a library its users' install lacks (the engine
    anything beyond sortedcontainers and attrs; an adapter anything beyond its
    extra) fails here, before a user meets the ImportError."""
    assert _undeclared() == {}


def test_the_metadata_claims_the_pythons_ci_tests() -> None:
    """``requires-python``'s floor and the classifiers name what CI runs the
    suite on, no more: ``python3 tests`` on the machine's Python (the floor)
    and ``.ci/py313.py``'s Debian 13 container (whose version that script
    checks in the image before it runs anything)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    floor = re.fullmatch(r">=(3\.\d+)", project["requires-python"])
    assert floor is not None, project["requires-python"]
    claimed = {
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    script = (ROOT / ".ci" / "py313.py").read_text(encoding="utf-8")
    container = re.search(r'^PYTHON = "(3\.\d+)"$', script, re.M)
    assert container is not None
    assert claimed == {floor.group(1), container.group(1)}
    assert "python3 .ci/py313.py" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_extras_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above catches an undeclared import: with the server extra
    emptied, the endpoint's uvicorn is reported."""
    real = _project()
    extras = dict(real["optional-dependencies"])  # type: ignore[call-overload]
    extras["server"] = []
    monkeypatch.setattr(
        sys.modules[__name__], "_project", lambda: {**real, "optional-dependencies": extras}
    )
    missing = _undeclared()
    assert "uvicorn" in missing.get("sqsqueue.server._run", set())


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv holding the wheel built from this tree and only the
    core dependencies; returns its python."""
    where = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where), str(ROOT)],
        check=True,
        timeout=600,
    )
    [wheel] = where.glob("sqsqueue-*.whl")
    env_dir = where / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        check=True,
        timeout=600,
    )
    return python


def _run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
        env=env,
    )


def test_the_wheel_works_with_the_core_dependencies_alone(clean_venv: Path) -> None:
    """``pip install sqsqueue`` (no extra): the package imports, a queue round
    trip works, and only the declared dependencies were installed."""
    result = _run(
        clean_venv,
        "-c",
        "import sqsqueue, sys\n"
        "assert sqsqueue.__file__.startswith(sys.prefix), sqsqueue.__file__\n"
        "q = sqsqueue.Queue('jobs', clock=sqsqueue.ManualClock())\n"
        "q.send('hello')\n"
        "[m] = q.receive()\n"
        "q.delete(m.receipt_handle)\n"
        "print(m.body, len(q))\n",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["hello", "0"]
    listed = _run(clean_venv, "-m", "pip", "list", "--format=freeze")
    names = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert names - {"pip", "setuptools"} == {"sqsqueue", "sortedcontainers", "attrs"}


def test_serve_without_its_extra_says_which_to_install(clean_venv: Path) -> None:
    """``python -m sqsqueue serve`` on the core install names the extra and
    exits 2, with no traceback."""
    result = _run(clean_venv, "-m", "sqsqueue", "serve", "--port", "0")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "pip install 'sqsqueue[server]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_wheel_carries_the_console_files(clean_venv: Path) -> None:
    """The console's page, style sheet and script are package data: a wheel
    install serves them (no build step, nothing fetched at run time)."""
    result = _run(
        clean_venv,
        "-c",
        "import pathlib, sqsqueue.console\n"
        "folder = pathlib.Path(sqsqueue.console.__file__).parent / 'static'\n"
        "print(' '.join(sorted(p.name for p in folder.iterdir())))\n",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["console.css", "console.js", "favicon.svg", "index.html"]


def test_the_sdist_holds_what_the_readme_and_the_test_command_need(
    tmp_path: Path,
) -> None:
    """An unpacked sdist is a working tree: every relative link of README.md and
    docs/ resolves inside it, `python3 tests` finds its bootstrap, and nothing
    git ignores (a virtualenv, screenshots of a test run) is packed."""
    import tarfile

    from tests.test_readme import PAGES, SCHEME, targets

    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    [sdist] = tmp_path.glob("sqsqueue-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        names = {n.removeprefix(f"{top}/") for n in archive.getnames()}
    missing = []
    for page in PAGES:
        for target in targets(page):
            path = target.partition("#")[0]
            if SCHEME.match(target) or not path:
                continue
            file = (page.parent / path).resolve().relative_to(ROOT).as_posix()
            if file not in names and not any(n.startswith(f"{file}/") for n in names):
                missing.append(f"{page.name}: {target}")
    assert missing == []
    needed = {".ci/run", ".ci/bootstrap.py", "tests/__main__.py", "examples/spark_pipeline.py"}
    assert needed <= names
    assert not [n for n in names if n.startswith((".venv/", "tests/artifacts/", "dist/"))]


def test_an_editable_install_exposes_sqsqueue_alone(tmp_path: Path) -> None:
    """``pip install -e`` of a checkout must put ``sqsqueue`` on the path, not
    the checkout's root: a root on sys.path made this repository's ``tests``
    package shadow the one of the suite run against sqsqueue (a real suite
    failed to collect: ``No module named 'tests.providers'``; issue 32). In a
    clean venv: no ``tests``, ``examples`` or ``benchmarks`` is importable from
    the install, and a suite's own ``tests`` package, put on the path after
    site-packages (where pytest's console script finds it), is the one
    imported, beside the checkout's sqsqueue."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)],
        check=True,
        timeout=600,
    )
    suite = tmp_path / "suite"
    (suite / "tests").mkdir(parents=True)
    (suite / "tests" / "__init__.py").write_text("")
    (suite / "tests" / "providers.py").write_text("NAME = 'the suite under test'\n")
    result = _run(
        python,
        "-I",  # no working directory or PYTHONPATH on sys.path: site-packages alone
        "-c",
        "import importlib.util, sys\n"
        "print([m for m in ('tests', 'examples', 'benchmarks') if importlib.util.find_spec(m)])\n"
        f"sys.path.append({str(suite)!r})\n"
        "import sqsqueue, tests.providers\n"
        "print(tests.providers.NAME)\n"
        "print(sqsqueue.__file__)\n",
    )
    assert result.returncode == 0, result.stderr
    shadows, name, where = result.stdout.splitlines()
    assert shadows == "[]"
    assert name == "the suite under test"
    assert where == str(ROOT / "sqsqueue" / "__init__.py")
