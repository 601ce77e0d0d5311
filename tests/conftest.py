"""Shared test fixtures: the benchmark data the tests read.

The default tests need nothing beside the clone. Three fixtures give tests real data:

``fixture_data``
    ``tests/fixtures/data``: small cuts of the five datasets (WikiTQ, TabFact, TabMWP,
    ScienceQA, HotpotQA), committed, in the layout of the full data, so
    ``load_dataset(name, split, data_dir=fixture_data)`` and every tool that takes a data
    folder read them as they read the full data. They keep the first records of every
    split (in file order) and the awkward cases; each folder's README says what was cut
    and why. Use this for any test that needs *some* real data. If a test needs a record
    the cut lacks, add its id or a rule to ``tests/fixtures/make_fixtures.py``, rerun it
    (``.venv/bin/python tests/fixtures/make_fixtures.py``, full data needed) and commit
    the script and its output together. Keep ``tests/fixtures`` under about 3 MB.

``full_data``
    The full benchmark data: ``$TABLEREASON_DATA_DIR``, else ``../shared/data`` beside
    the checkout. Only for tests that are meaningful over the whole data (every table
    loads, the counts match the data READMEs). Tests that request it are marked
    ``full_data`` automatically; when the data is absent they are skipped, with the
    reason. ``python -m pytest -m full_data`` runs only them. With
    ``TABLEREASON_REQUIRE_FULL_DATA=1`` (``.ci/run`` sets it) absent data fails them
    instead, and a session in which any ``full_data`` test was skipped fails.

``each_data``
    Parametrizes a test over both: ``[fixtures]`` always, ``[full]`` (marked
    ``full_data``) when the data is there. For checks that hold on any copy of the data
    and are worth running over all of it (gold answers score 1.0, tables round-trip).

``shared_data`` is the old name of ``full_data`` and still works as it does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE_DATA = REPO / "tests" / "fixtures" / "data"
#: Set to 1 (CI does) to turn a skipped full-data test into a failure.
REQUIRE_ENV = "TABLEREASON_REQUIRE_FULL_DATA"
FULL_DATA_FIXTURES = ("full_data", "shared_data")

_skipped_full_data: list[str] = []


def full_data_dir() -> Path:
    """Where the full benchmark data is looked for (it may be absent)."""
    configured = os.environ.get("TABLEREASON_DATA_DIR")
    return (
        Path(configured).expanduser().resolve() if configured else REPO.parent / "shared" / "data"
    )


def full_data_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "full_data: needs the full benchmark data ($TABLEREASON_DATA_DIR or ../shared/data); "
        "skipped when it is absent, failed then if TABLEREASON_REQUIRE_FULL_DATA=1",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tryfirst: marked before -m selects, so that -m full_data finds them.
    for item in items:
        if set(FULL_DATA_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.full_data)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and "full_data" in report.keywords:
        _skipped_full_data.append(report.nodeid)


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if _skipped_full_data and full_data_required():
        terminalreporter.section("full-data tests skipped", red=True)
        terminalreporter.write_line(
            f"{REQUIRE_ENV} is set, so these must run (data looked for at {full_data_dir()}):"
        )
        for nodeid in _skipped_full_data:
            terminalreporter.write_line(f"  {nodeid}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped_full_data and full_data_required() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def fixture_data() -> Path:
    """The committed benchmark-data fixtures (tests/fixtures/data)."""
    return FIXTURE_DATA


@pytest.fixture(scope="session")
def full_data() -> Path:
    """The full benchmark data; skips (or fails, when required) if it is absent."""
    folder = full_data_dir()
    if not folder.is_dir():
        reason = (
            f"full benchmark data not found at {folder} (set TABLEREASON_DATA_DIR or put "
            "the data in ../shared/data)"
        )
        if full_data_required():
            pytest.fail(f"{reason}; {REQUIRE_ENV} is set", pytrace=False)
        pytest.skip(reason)
    return folder


@pytest.fixture(scope="session")
def shared_data(full_data: Path) -> Path:
    """The old name of :func:`full_data`."""
    return full_data


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("fixtures", id="fixtures"),
        pytest.param("full", id="full", marks=pytest.mark.full_data),
    ],
)
def each_data(request: pytest.FixtureRequest) -> Path:
    """The fixtures, then the full data (skipped when absent, like ``full_data``)."""
    if request.param == "full":
        return Path(request.getfixturevalue("full_data"))
    return FIXTURE_DATA
