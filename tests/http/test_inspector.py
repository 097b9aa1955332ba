"""The inspector page (agent_memory/http/inspector) in a real browser: Chromium driven by Playwright against
`agent-memory serve` over a small tenant loaded through the API. Each test asserts on what the page shows.
The views' screenshots go to $AGENT_MEMORY_SCREENSHOTS (default: agent-memory-screenshots in the temporary
directory); `AGENT_MEMORY_SCREENSHOTS=docs/images make test` renews the ones docs/http.md shows."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(f"the inspector's browser tests need Chromium at {CHROMIUM}", allow_module_level=True)

from playwright.sync_api import Browser, Dialog, Page, ViewportSize, expect, sync_playwright  # noqa: E402

IMAGES = Path(os.environ.get("AGENT_MEMORY_SCREENSHOTS", Path(tempfile.gettempdir()) / "agent-memory-screenshots"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDE: ViewportSize = {"width": 1280, "height": 800}
NARROW: ViewportSize = {"width": 360, "height": 740}
NOW = datetime.now(timezone.utc).replace(microsecond=0)

# Each session's turns as (speaker, content): a speaker other than user and assistant is a user's name.
BILLING = [
    ("Maria", "We moved the billing service from MySQL to Postgres last week."),
    ("assistant", "Good. Docker builds the Postgres image; Kubernetes runs it next to Redis."),
    ("Maria", "Redis and MySQL both stay for the legacy reports.\nTom owns them."),
]
TUNING = [
    ("Maria", "Postgres is slow on the billing reports again."),
    ("assistant", "Maria, raise work_mem in Postgres and add an index on invoices.created_at."),
    ("Maria", "Done: Postgres answers in 40 ms now. Redis can drop the cache."),
]
DEPLOY = [
    ("Tom", "The Atlas project deploys with Helm onto Kubernetes every Friday."),
    ("assistant", "Then Friday's deploy of Atlas needs the Postgres migration done by Thursday."),
]
PLANNING = [
    ("user", "Plan the Q3 roadmap for Atlas with Maria and Tom."),
    ("assistant", "Draft: Atlas beta in July, Postgres upgrade in August, launch in September."),
]
# session, agent, when it started, its turns
SESSIONS = [
    ("billing-migration", "coder", NOW - timedelta(days=3, hours=2), BILLING),
    ("postgres-tuning", "coder", NOW - timedelta(days=1, hours=5), TUNING),
    ("atlas-deploy", "coder", NOW - timedelta(days=2, hours=1), DEPLOY),
    ("q3-roadmap", "planner", NOW - timedelta(hours=6), PLANNING),
]
TOP_HIT = BILLING[0][1]


def messages(turns: list[tuple[str, str]], started: datetime) -> list[dict[str, Any]]:
    """The turns as messages, a few minutes apart."""
    made = []
    for index, (speaker, content) in enumerate(turns):
        message = {"role": "user", "name": speaker, "content": content}
        if speaker in ("user", "assistant"):
            message = {"role": speaker, "content": content}
        message["created_at"] = (started + timedelta(minutes=6 * index)).isoformat()
        made.append(message)
    return made


def load(client: httpx.Client) -> None:
    """Sessions enriched now (summaries, vectors, entities), and memories: one claim kept twice, so that it
    has a history, and a rule."""
    for session, agent, started, turns in SESSIONS:
        body: dict[str, Any] = {
            "messages": messages(turns, started),
            "agent_id": agent,
            "started_at": started.isoformat(),
            "enrich": "now",
        }
        answer = client.post(f"/v1/sessions/{session}/messages", json=body)
        assert answer.status_code == 200, answer.text
    memories = [
        ("Maria prefers Vim for editing.", "preference", "maria.editor", NOW - timedelta(days=20)),
        ("Maria switched from Vim to Helix for editing.", "preference", "maria.editor", NOW - timedelta(days=2)),
        ("Deploys happen on Fridays only.", "rule", None, NOW - timedelta(days=5)),
    ]
    for content, kind, key, valid_from in memories:
        kept = {"content": content, "kind": kind, "key": key, "agent_id": "coder", "valid_from": valid_from.isoformat()}
        answer = client.post("/v1/memories", json=kept)
        assert answer.status_code == 200, answer.text


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def acme(served: Any) -> Any:
    """The server, with tenant acme loaded."""
    with served.client(served.key("acme")) as client:
        load(client)
    return served


@pytest.fixture
def pages(browser: Browser) -> Iterator[Any]:
    """Opens pages in a fresh browser context each (their own session storage), all closed after the test."""
    contexts = []

    def open_page(viewport: ViewportSize = WIDE) -> Page:
        context = browser.new_context(viewport=viewport, locale="en-US", timezone_id="UTC")
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield open_page
    for context in contexts:
        context.close()


def sign_in(page: Page, url: str, key: str, agent: str | None = "coder") -> Page:
    page.goto(f"{url}/inspector/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("[data-view][aria-current='page']")).to_be_focused()  # the page is done starting
    if agent:
        page.get_by_label("Agent").select_option(agent)
    return page


def show(page: Page, view: str) -> None:
    page.get_by_role("navigation", name="Views").get_by_role("button", name=view).click()


def shoot(page: Page, view: str) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=IMAGES / f"inspector-{view}.png")


def recall(page: Page, query: str) -> None:
    show(page, "Recall")
    page.get_by_label("Query").fill(query)
    page.locator("#recall-form").get_by_role("button", name="Recall").click()
    expect(page.locator("#recall-hits > li.hit").first).to_be_visible()


def open_history(page: Page, content: str) -> None:
    show(page, "Memories")
    page.locator("#memories-list").get_by_role("button", name=content).click()
    expect(page.locator("#history .version").first).to_be_visible()


def test_sessions_of_the_agent_open_as_a_transcript(acme: Any, pages: Any) -> None:
    page = sign_in(pages(), acme.url, acme.key("acme"))
    sessions = page.locator("#sessions-list")
    expect(sessions.get_by_role("button", name="q3-roadmap")).to_have_count(0)  # the planner's
    sessions.get_by_role("button", name="billing-migration").click()
    turns = page.locator("#transcript .turn")
    expect(turns).to_have_count(3)
    expect(turns.nth(0).locator(".role")).to_have_text("Maria (user)")
    expect(turns.nth(1).locator(".turn-content")).to_have_text(BILLING[1][1])
    assert turns.nth(2).locator(".turn-content").inner_text() == BILLING[2][1]  # the line break kept
    expect(page.locator("#transcript .summary")).to_contain_text("billing service")
    shoot(page, "sessions")


def test_recall_draws_each_signal_contribution_as_a_bar(acme: Any, pages: Any) -> None:
    page = sign_in(pages(), acme.url, acme.key("acme"))
    recall(page, "Which database did billing move to?")
    top = page.locator("#recall-hits > li.hit").first
    expect(top.locator(".hit-content")).to_have_text(TOP_HIT)
    expect(top.locator(".signal")).not_to_have_count(0)
    for signal in ("dense", "lexical"):
        box = top.locator(f".signal[data-signal='{signal}'] .signal-bar").bounding_box()
        assert box and box["width"] > 10
    bars = page.locator(".signal .signal-bar").all()
    assert len(bars) > 10
    widest = max(box["width"] for box in (bar.bounding_box() for bar in bars) if box)
    track = page.locator(".signal-track").first.bounding_box()
    assert track and abs(widest - track["width"] / 2) < 2  # the largest contribution fills its half
    shoot(page, "recall")
    top.get_by_role("button", name="Useful", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Feedback recorded: helpful")


def test_a_memory_shows_its_history_and_what_held_earlier(acme: Any, pages: Any) -> None:
    page = sign_in(pages(), acme.url, acme.key("acme"))
    open_history(page, "Maria switched from Vim to Helix for editing.")
    versions = page.locator("#history .version")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("Maria prefers Vim for editing.")
    expect(versions.nth(0).locator(".status")).to_have_text("superseded")
    expect(versions.nth(0).get_by_role("button", name="superseded by")).to_be_visible()
    expect(versions.nth(1).locator(".status")).to_have_text("active")
    expect(page.locator("#memories-list")).not_to_contain_text("Maria prefers Vim")
    shoot(page, "memories")
    page.get_by_label("As of").fill((NOW - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S"))
    page.locator("#memories-form").get_by_role("button", name="Show").click()
    expect(page.locator("#memories-list")).to_contain_text("Maria prefers Vim for editing.")
    expect(page.locator("#memories-list")).not_to_contain_text("Helix")


def test_resolving_a_memory_asks_first(acme: Any, pages: Any) -> None:
    page = sign_in(pages(), acme.url, acme.key("acme"))
    open_history(page, "Deploys happen on Fridays only.")
    asked: list[str] = []

    def answer(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", answer)
    page.locator("#history").get_by_role("button", name="Resolve").click()
    expect(page.locator("#history .version .status")).to_have_text("resolved")
    assert asked and "Deploys happen on Fridays only." in asked[0]


def test_the_entity_graph_recenters_on_a_neighbor(acme: Any, pages: Any) -> None:
    page = sign_in(pages(), acme.url, acme.key("acme"))
    show(page, "Entities")
    page.locator("#entities-list").get_by_role("button", name="Postgres").click()
    neighbors = page.locator("#graph svg .node.neighbor")
    expect(neighbors.first).to_be_visible()
    names = neighbors.evaluate_all("nodes => nodes.map(node => node.dataset.entity)")
    assert {"Maria", "MySQL", "Redis", "Docker", "Kubernetes"} <= set(names)
    expect(page.locator("#graph table tbody tr")).to_have_count(len(names))
    widths = page.locator("#graph svg line.edge").evaluate_all(
        "lines => lines.map(l => +l.getAttribute('stroke-width'))"
    )
    assert widths[names.index("Maria")] == max(widths) > min(widths)  # Maria shares the most turns with it
    shoot(page, "entities")
    page.locator("#graph svg [data-entity='Maria']").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#graph h3")).to_contain_text("Maria")


def test_queue_and_metrics_are_tabled_and_refreshed(acme: Any, pages: Any) -> None:
    key = acme.key("acme")
    page = sign_in(pages(), acme.url, key, agent=None)
    show(page, "Queue and metrics")
    rows = page.locator("#queue-agents tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="planner").locator("td").nth(2)).to_have_text("2")  # its turns
    expect(page.locator("#queue-metrics")).to_contain_text("turns_committed")
    expect(page.locator(".total", has_text="Dead jobs").locator(".total-value")).to_have_text("0")
    shoot(page, "queue")
    with acme.client(key) as client:
        more = {"messages": [{"role": "user", "content": "Add a risk list."}], "agent_id": "planner"}
        assert client.post("/v1/sessions/q3-roadmap/messages", json=more).status_code == 200
    page.get_by_role("button", name="Refresh").click()
    expect(rows.filter(has_text="planner").locator("td").nth(2)).to_have_text("3")


def test_a_read_only_key_sees_no_write_buttons(acme: Any, pages: Any) -> None:
    page = sign_in(pages(), acme.url, acme.key("acme", may_write=False))
    expect(page.locator("#who")).to_contain_text("read only")
    recall(page, "Which database did billing move to?")
    open_history(page, "Maria switched from Vim to Helix for editing.")
    expect(page.locator("#history .version")).to_have_count(2)
    assert page.locator("button.write").count() == 0
    assert page.get_by_role("button", name="Useful").count() == 0
    assert page.get_by_role("button", name="Resolve").count() == 0


def test_a_bad_key_shows_the_api_refusal(served: Any, pages: Any) -> None:
    page = pages()
    page.goto(f"{served.url}/inspector/")
    page.get_by_label("API key").fill("amk_not_a_key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("agent_memory: unknown, revoked or expired API key")
    expect(page.get_by_label("API key")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0


def test_signing_out_forgets_the_key(served: Any, pages: Any) -> None:
    page = sign_in(pages(), served.url, served.key("acme"), agent=None)
    assert page.evaluate("Object.keys(localStorage).length") == 0
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('agent_memory.key')") is None


def test_the_keyboard_alone_switches_views(served: Any, pages: Any) -> None:
    page = sign_in(pages(), served.url, served.key("acme"), agent=None)
    page.evaluate("document.activeElement.blur()")
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.view") == "recall":
            break
    assert page.evaluate("document.activeElement.dataset.view") == "recall", "Tab never reached the Recall view"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"  # focus is visible
    page.keyboard.press("Enter")
    expect(page.locator("[data-view='recall']")).to_have_attribute("aria-current", "page")
    expect(page.locator("#view-recall")).to_be_visible()
    expect(page.locator("#view-sessions")).to_be_hidden()


def test_a_narrow_window_scrolls_only_down(acme: Any, pages: Any) -> None:
    page = sign_in(pages(NARROW), acme.url, acme.key("acme"))
    width = "document.scrollingElement.scrollWidth"
    page.locator("#sessions-list").get_by_role("button", name="billing-migration").click()
    expect(page.locator("#transcript .turn")).to_have_count(3)
    assert page.evaluate(width) <= NARROW["width"] + 1
    show(page, "Entities")
    page.locator("#entities-list").get_by_role("button", name="Postgres").click()
    expect(page.locator("#graph svg")).to_be_visible()
    assert page.evaluate(width) <= NARROW["width"] + 1
    show(page, "Queue and metrics")
    expect(page.locator("#queue-metrics table")).to_be_visible()
    assert page.evaluate(width) <= NARROW["width"] + 1
    recall(page, "Which database did billing move to?")
    assert page.evaluate(width) <= NARROW["width"] + 1
    page.evaluate("window.scrollTo(0, 0)")
    shoot(page, "narrow")
