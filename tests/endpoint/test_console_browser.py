"""The web console in a real browser: Debian's Chromium (``/usr/bin/chromium``,
installed by ``.ci/bootstrap.py``), driven by Playwright through
``executable_path`` (Playwright's own browser download is never used).

One session walks what a developer does (docs/console.md): load the console,
see a queue appear after a boto3 send, peek at a message (which stays
unreceived), send one from the page, watch an in-flight message become
visible when the ``ManualClock`` is advanced from the page, purge; and a body
that is HTML shows as text. On ``sqsqueue serve``'s every account and region,
the list shows each queue's account and region and a queue of another
account opens, acts and links (``#/queues/REGION/ACCOUNT/NAME``) as the
default's do. Screenshots go to ``tests/artifacts/`` (not committed) for a
person to look at.

Skipped, saying why, only where Chromium or Playwright is missing (a machine
without Debian's packages); ``python3 tests`` installs both.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from sqsqueue import Broker, ManualClock
from sqsqueue.server import EndpointHandle
from tests.endpoint.test_console_accounts import DEFAULT, A, B, make_queues, serving

CHROMIUM = os.environ.get("SQSQUEUE_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
#: The machine's network is closed: nothing Chromium would fetch by itself.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (the dev extra brings it)"
)
if not shutil.which(CHROMIUM):
    pytest.skip(
        f"Chromium is not installed at {CHROMIUM}: `apt-get install -y chromium` "
        "(python3 tests does it as root)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def served() -> Iterator[tuple[Broker[ManualClock], EndpointHandle]]:
    broker = Broker(clock=ManualClock(start=1_700_000_000.0), keep_history=True)
    with broker.serve() as endpoint:
        yield broker, endpoint
    broker.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], errors


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"))


def client(endpoint: EndpointHandle) -> Any:
    return boto3.client(
        "sqs",
        endpoint_url=endpoint.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )


def cell(page: Any, queue: str, column: int) -> Any:
    """The ``column``-th cell of a queue's row, not counting the account and
    region cells (shown only when queues of several are listed)."""
    return page.locator(f"#queues tr[data-queue='{queue}'] td:not(.scope)").nth(column)


def test_a_session_in_the_console(
    served: tuple[Broker[ManualClock], EndpointHandle], page: Any
) -> None:
    broker, endpoint = served
    expect = sync_api.expect
    page.goto(endpoint.console_url)
    expect(page.locator("#broker")).to_contain_text("ManualClock")
    shot(page, "1-empty")

    # A queue appears after a send through boto3, with its live count.
    sqs = client(endpoint)
    url = sqs.create_queue(QueueName="orders", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody='{"order": 17}')
    expect(cell(page, "orders", 1)).to_have_text("1", timeout=10_000)

    # Peek: the message is listed, and stays unreceived.
    page.locator("#queues tr[data-queue='orders']").click()
    row = page.locator("#messages tr[data-position]").first
    expect(row).to_contain_text('{"order": 17}')
    row.click()
    expect(page.locator("#detail-body")).to_have_text('{"order": 17}')
    expect(page.locator("#detail-history")).to_contain_text("sent")
    [info] = broker.get_queue("orders").inspect()
    assert info.receive_count == 0
    shot(page, "2-peek")

    # Send one from the page.
    page.locator("#send-body").fill("sent from the page")
    page.locator("#send").click()
    expect(cell(page, "orders", 1)).to_have_text("2", timeout=10_000)
    assert [i.body for i in broker.get_queue("orders").inspect()] == [
        '{"order": 17}',
        "sent from the page",
    ]

    # A boto3 receive puts one in flight; advancing the clock from the page
    # makes it visible again.
    sqs.receive_message(QueueUrl=url)
    expect(cell(page, "orders", 2)).to_have_text("1", timeout=10_000)
    expect(page.locator("#messages .state-in_flight")).to_have_count(1)
    shot(page, "3-in-flight")
    page.locator("#clock-seconds").fill("30")
    page.locator("#clock-advance").click()
    expect(page.locator("#messages .state-in_flight")).to_have_count(0, timeout=10_000)
    expect(cell(page, "orders", 1)).to_have_text("2")
    assert broker.clock.now() == 1_700_000_030.0
    shot(page, "4-visible-again")

    # Purge, confirming the dialog.
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#purge").click()
    expect(cell(page, "orders", 1)).to_have_text("0", timeout=10_000)
    expect(page.locator("#messages")).to_contain_text("no messages")
    assert len(broker.get_queue("orders")) == 0
    shot(page, "5-purged")


def test_a_body_of_html_is_shown_as_text(
    served: tuple[Broker[ManualClock], EndpointHandle], page: Any
) -> None:
    broker, endpoint = served
    body = '<img src=x onerror="window.__owned = 1"><b>bold?</b>'
    q = broker.create_queue("evil<name>".replace("<", "").replace(">", ""))
    q.send(body, message_attributes={"html": "<script>window.__owned = 2</script>"})
    page.goto(endpoint.console_url)
    page.locator(f"#queues tr[data-queue='{q.name}']").click()
    page.locator("#messages tr[data-position]").first.click()
    sync_api.expect(page.locator("#detail-body")).to_have_text(body)
    sync_api.expect(page.locator("#detail-attributes")).to_contain_text("<script>")
    assert page.evaluate("window.__owned") is None
    assert page.locator("#message-detail img, #messages img, #message-detail b").count() == 0


def test_a_large_broker_pages(browser: Any, page: Any) -> None:
    """With 120 queues the list shows a page of 50 and moves to the next."""
    broker = Broker(clock=ManualClock(start=1_700_000_000.0))
    for i in range(120):
        broker.create_queue(f"q{i:03d}")
    with broker.serve() as endpoint:
        page.goto(endpoint.console_url)
        rows = page.locator("#queues tr[data-queue]")
        sync_api.expect(rows).to_have_count(50)
        sync_api.expect(page.locator("#queue-total")).to_have_text("(120)")
        page.locator("#queues-next").click()
        sync_api.expect(rows.first).to_have_attribute("data-queue", "q050")
        page.locator("#prefix").fill("q11")
        sync_api.expect(rows).to_have_count(10)
    broker.close()


def test_queue_names_keep_to_one_line_inside_the_panel(
    served: tuple[Broker[ManualClock], EndpointHandle], page: Any
) -> None:
    """Hyphenated names are not broken at the hyphen, an 80-character name is cut
    with an ellipsis (whole in its tooltip), and the list never spills out of its
    panel, before and after a queue is chosen."""
    broker, endpoint = served
    long_name = "orders-" + "x" * 73
    for name in ("q-0001", long_name):
        broker.create_queue(name)
    page.goto(endpoint.console_url)
    name_cell = cell(page, "q-0001", 0)
    sync_api.expect(name_cell).to_have_text("q-0001")
    long_cell = cell(page, long_name, 0)
    sync_api.expect(long_cell).to_have_attribute("title", long_name)

    def fits() -> None:
        # The lines a name's text is laid out on: one each.
        lines = page.evaluate(
            "[...document.querySelectorAll('#queues td.name')].map(td => {"
            " const r = document.createRange(); r.selectNodeContents(td);"
            " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; })"
        )
        assert lines == [1, 1], lines
        panel = page.locator("#queues-panel").bounding_box()
        table = page.locator("#queues").bounding_box()
        assert table["x"] + table["width"] <= panel["x"] + panel["width"] + 0.5

    fits()
    assert page.evaluate(
        "(() => { const c = document.querySelector(\"#queues td.name[title^='orders-']\");"
        " return c.scrollWidth > c.clientWidth; })()"
    ), "the long name is cut, not widening the table"
    page.locator("#queues tr[data-queue='q-0001']").click()
    sync_api.expect(page.locator("#queue-title")).to_have_text("q-0001")
    fits()
    shot(page, "long-names")


def test_every_account_and_region_in_one_console(browser: Any, page: Any) -> None:
    """``sqsqueue serve`` with queues in three accounts and three regions: the
    list shows each one's account and region, a queue of another account
    opens with its own messages, takes a message sent from the page, and its
    address (``#/queues/REGION/ACCOUNT/NAME``) opens it again after a reload.
    A message body that is HTML stays text there too."""
    expect = sync_api.expect
    with serving() as endpoint:
        make_queues(endpoint.endpoint_url)
        html = '<img src=x onerror="window.__owned = 1">'
        b_client = boto3.client(
            "sqs",
            endpoint_url=endpoint.endpoint_url,
            region_name="us-west-2",
            aws_access_key_id=B,
            aws_secret_access_key="x",
        )
        jobs = b_client.get_queue_url(QueueName="jobs")["QueueUrl"]
        b_client.send_message(QueueUrl=jobs, MessageBody=html)
        page.goto(endpoint.console_url)
        rows = page.locator("#queues tr[data-queue]")
        expect(rows).to_have_count(4)
        expect(page.locator("#queue-total")).to_have_text("(4 in 3 accounts, 3 regions)")
        expect(page.locator("#broker")).to_contain_text(f"default us-east-1 · account {DEFAULT}")
        assert [rows.nth(i).get_attribute("data-queue") for i in range(4)] == [
            "orders",
            f"eu-west-1/{A}/orders",
            f"us-east-1/{A}/orders",
            f"us-west-2/{B}/jobs",
        ]
        other = f"eu-west-1/{A}/orders"
        scope = page.locator(f"#queues tr[data-queue='{other}'] td.scope")
        expect(scope.nth(0)).to_have_text(A)
        expect(scope.nth(1)).to_have_text("eu-west-1")
        expect(page.locator("#queues th.scope").first).to_be_visible()
        expect(cell(page, f"us-west-2/{B}/jobs", 1)).to_have_text("4")
        shot(page, "accounts-1-list")

        # A queue of another account and region: its own messages, its own actions.
        page.locator(f"#queues tr[data-queue='{other}']").click()
        expect(page.locator("#queue-title")).to_have_text("orders")
        expect(page.locator("#queue-scope")).to_have_text(f"eu-west-1 · account {A}")
        expect(page.locator("#messages tr[data-position]")).to_have_count(1)
        expect(page.locator("#messages")).to_contain_text("a-eu")
        assert page.evaluate("window.location.hash") == f"#/queues/eu-west-1/{A}/orders"
        page.locator("#send-body").fill("sent to A in eu-west-1")
        page.locator("#send").click()
        expect(cell(page, other, 1)).to_have_text("2", timeout=10_000)
        a_eu = boto3.client(
            "sqs",
            endpoint_url=endpoint.endpoint_url,
            region_name="eu-west-1",
            aws_access_key_id=A,
            aws_secret_access_key="x",
        )
        url = a_eu.get_queue_url(QueueName="orders")["QueueUrl"]
        got = a_eu.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert sorted(m["Body"] for m in got) == ["a-eu", "sent to A in eu-west-1"]
        # The same name in A's us-east-1 is another queue, untouched.
        expect(cell(page, f"us-east-1/{A}/orders", 1)).to_have_text("2")
        page.locator("#messages tr[data-position]").first.click()
        shot(page, "accounts-2-queue")

        # Its address opens it again.
        page.reload()
        expect(page.locator("#queue-scope")).to_have_text(f"eu-west-1 · account {A}")
        expect(page.locator("#queues tr.selected")).to_have_attribute("data-queue", other)

        # B's queue: a body that is HTML stays text.
        page.locator(f"#queues tr[data-queue='us-west-2/{B}/jobs']").click()
        expect(page.locator("#queue-scope")).to_have_text(f"us-west-2 · account {B}")
        page.locator("#messages tr[data-position]").last.click()
        expect(page.locator("#detail-body")).to_have_text(html)
        assert page.evaluate("window.__owned") is None
        assert page.locator("#message-detail img, #messages img").count() == 0

        # An address naming no queue opens none; one that is not a queue's
        # reference (a path out of the API) is never requested.
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        for hash_ in (f"#/queues/ap-south-1/{A}/orders", "#/queues/..%2F..%2Freset"):
            page.goto(f"{endpoint.console_url}{hash_}")
            expect(rows).to_have_count(4)
            expect(page.locator("#queue-panel")).to_be_hidden()
        assert not [url for url in requested if "reset" in url or "/.." in url], requested


def test_one_account_shows_no_account_columns(
    served: tuple[Broker[ManualClock], EndpointHandle], page: Any
) -> None:
    broker, endpoint = served
    broker.create_queue("orders")
    page.goto(endpoint.console_url)
    sync_api.expect(cell(page, "orders", 0)).to_have_text("orders")
    sync_api.expect(page.locator("#queues th.scope").first).to_be_hidden()
    sync_api.expect(page.locator("#queues td.scope").first).to_be_hidden()
    sync_api.expect(page.locator("#queue-total")).to_have_text("(1)")
    page.locator("#queues tr[data-queue='orders']").click()
    sync_api.expect(page.locator("#queue-title")).to_have_text("orders")
    sync_api.expect(page.locator("#queue-scope")).to_be_hidden()
    assert page.evaluate("window.location.hash") == "#/queues/orders"
