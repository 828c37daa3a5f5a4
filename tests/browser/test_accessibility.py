"""Every page passes axe-core (no serious or critical violation) in light and dark mode, can be used from the
keyboard with a visible focus, and on a phone the navigation collapses behind a menu button."""

import uuid

import pytest

from labs.models import LabRun
from quizzes.models import Card, Section
from tests.browser.accessibility import assert_accessible, open_page, tab_through
from tests.conftest import browser_login
from tutor.review.models import StudySession
from tutor.review.services import submit_review
from tutor.teacher.chat import start_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


@pytest.fixture
def learner_pages(learner, shipped_course):
    """Ada's pages, each with something on it: reviews, a session, a lab run and a conversation."""
    for card in Card.objects.filter(kind="basic").order_by("position")[:3]:
        submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key=uuid.uuid4().hex)
    session = StudySession.objects.get(user=learner)
    run = LabRun.objects.create(user=learner, session=session, experiment="launch_overhead", predicted_speedup=3)
    conversation = start_conversation(user=learner, title="Why fuse kernels?")
    section = Section.objects.select_related("course").order_by("position").first()
    # (path, what shows that the page's script has finished drawing it)
    return [
        ("/", "#dashboard"),
        ("/review/", "#card-area:not([hidden])"),
        ("/stats/", "#stats[data-ready='1']"),
        ("/teacher/", "#id_question"),
        (f"/teacher/{conversation.pk}/", "#question"),
        ("/labs/", "#labs"),
        (f"/labs/runs/{run.pk}/", "#run[data-status]"),
        ("/sessions/", "table.list"),
        (f"/sessions/{session.pk}/", "table.list"),
        ("/settings/", "form"),
        ("/learn/", "main"),
        (f"/learn/{section.course.slug}/", "main"),
        (section.get_absolute_url(), "article.section-body"),
        ("/status/", "main"),
    ]


VISITOR_PAGES = ["/", "/accounts/login/", "/accounts/signup/", "/learn/", "/status/"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_learner_page_has_no_serious_or_critical_axe_violation(live_server, browser, learner_pages, scheme):
    page = open_page(browser, color_scheme=scheme)
    browser_login(page, live_server, "/")
    page.wait_for_selector("#dashboard")
    for path, ready in learner_pages:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_selector(ready, state="attached")
        assert_accessible(page, f"{path} ({scheme})")
    page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_visitor_page_has_no_serious_or_critical_axe_violation(live_server, browser, shipped_course, scheme):
    page = open_page(browser, color_scheme=scheme)
    for path in VISITOR_PAGES:
        page.goto(f"{live_server.url}{path}")
        assert_accessible(page, f"{path} ({scheme})")
    page.context.close()


def test_the_admin_index_and_card_list_have_no_serious_or_critical_axe_violation(
    live_server, page, staff, shipped_course
):
    """(A card's change page is left out: Django's own many-to-many filter widget puts an aria-label on a span.)"""
    browser_login(page, live_server, "/admin/", "editor", "pw-editor-123456")
    for path in ["/admin/", "/admin/quizzes/card/"]:
        page.goto(f"{live_server.url}{path}")
        assert_accessible(page, path)


def test_every_learner_page_shows_where_the_keyboard_focus_is(live_server, page, learner_pages):
    browser_login(page, live_server, "/")
    page.wait_for_selector("#dashboard")
    for path, ready in learner_pages:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_selector(ready, state="attached")
        focused = tab_through(page, presses=25)
        assert len(focused) >= 5, f"{path}: the keyboard reaches only {focused}"
        unseen = [f for f in focused if not f["outline"]]
        assert not unseen, f"{path}: focus is invisible on {unseen}"


def test_the_skip_link_is_the_first_stop_and_jumps_to_the_content(live_server, page, learner_pages):
    browser_login(page, live_server, "/")
    page.wait_for_selector("#dashboard")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_on_a_phone_the_navigation_opens_and_closes_from_the_keyboard(live_server, browser, learner_pages):
    page = open_page(browser, **PHONE)
    browser_login(page, live_server, "/")
    page.wait_for_selector("#dashboard")
    nav, toggle = page.locator("#site-nav"), page.locator("#menu-toggle")
    assert toggle.is_visible() and not nav.is_visible()
    header = page.locator("header.topbar").bounding_box()
    assert header["height"] < 70, "the collapsed navigation takes one line"

    toggle.focus()
    page.keyboard.press("Enter")
    assert nav.is_visible() and toggle.get_attribute("aria-expanded") == "true"
    assert_accessible(page, "/ (phone, menu open)")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#site-nav') !== null")
    page.keyboard.press("Escape")
    assert not nav.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.id") == "menu-toggle"

    page.keyboard.press("Space")
    page.locator("#site-nav a", has_text="Review").click()
    page.wait_for_selector("#card-area:not([hidden])")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the review page scrolls sideways on a phone ({width}px)"
    assert_accessible(page, "/review/ (phone)")
    page.context.close()


def test_on_a_wide_screen_the_navigation_shows_without_a_menu_button(live_server, page, learner_pages):
    browser_login(page, live_server, "/")
    page.wait_for_selector("#dashboard")
    assert page.locator("#site-nav").is_visible() and not page.locator("#menu-toggle").is_visible()


def test_charts_take_their_colours_from_the_scheme(live_server, browser, learner_pages):
    """Chart.js draws text and grid in the page's colours: light text on the dark background in dark mode."""
    colours = {}
    for scheme in ("light", "dark"):
        page = open_page(browser, color_scheme=scheme)
        browser_login(page, live_server, "/stats/")
        page.wait_for_selector("#stats[data-ready='1']")
        colours[scheme] = page.evaluate(
            "() => ({text: Chart.defaults.color, bar: tilewiseTheme.color('--chart-1'),"
            " bg: getComputedStyle(document.body).backgroundColor})"
        )
        page.context.close()
    assert colours["light"]["text"] == "#1d2330" and colours["dark"]["text"] == "#e6e9ef"
    assert colours["light"]["bar"] != colours["dark"]["bar"]
    assert colours["light"]["bg"] != colours["dark"]["bg"]
