"""Whole journeys in a real browser: a new visitor's first day and the day after, and a card edited mid-course.

Each page the learner reaches is checked with axe-core (no serious or critical violation). "Tomorrow" is
time moved forward in this process with time-machine: the live server runs in a thread of it, so the server
sees the later clock, exactly as it would a day later.
"""

from datetime import datetime, timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db.models import F
from django.utils import timezone

from labs.models import LabRun
from quizzes.models import Card, CardEdit
from tests.browser.accessibility import assert_accessible, open_page
from tests.conftest import browser_login
from tutor.review.days import day_bounds, learner_zone, study_day
from tutor.review.models import CardState, ReviewLog
from tutor.review.services import learner_settings, submit_review
from tutor.teacher.models import Conversation

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

FIRST_DAY = 10


def first_cards_with_a_predict_and_a_numeric(course) -> list[Card]:
    """The course's first ten new cards, after moving its first predict and numeric card in among them."""
    Card.objects.filter(course=course).update(position=F("position") * 10)
    predict = Card.objects.filter(kind="predict", retired=False).exclude(choices=[]).order_by("position").first()
    numeric = Card.objects.filter(kind="numeric", retired=False).order_by("position").first()
    Card.objects.filter(pk=predict.pk).update(position=25)
    Card.objects.filter(pk=numeric.pk).update(position=65)
    return list(Card.objects.filter(course=course, retired=False).order_by("position", "pk")[:FIRST_DAY])


def tomorrow_once_due(learner, cards: list[Card]) -> datetime:
    """A moment in the learner's next study day by which every card learnt today is due.

    Not simply now + 25 h: the study day starts at 04:00, so from a run between 03:00 and 04:00 that
    would land two study days later, where yesterday's streak has lapsed.
    """
    zone = learner_zone(learner_settings(learner).timezone)
    start, end = day_bounds(study_day(timezone.now(), zone) + timedelta(days=1), zone)
    latest_due = max(CardState.objects.filter(user=learner, card__in=cards).values_list("due", flat=True))
    moment = max(start + timedelta(hours=1), latest_due + timedelta(minutes=1))
    assert moment < end, f"the cards learnt today are due only after tomorrow ({latest_due})"
    return moment


def shown_card(page) -> str:
    page.wait_for_selector("#card-area:not([hidden]) #card-front [data-card]")
    return page.get_attribute("#card-front [data-card]", "data-card")


def review_by_keyboard(page, card: Card) -> None:
    """Answer the card on screen with the keyboard alone, the way its kind asks for."""
    if card.kind == "predict":
        page.keyboard.press("abcdef"[card.choices.index(card.answer)])
        page.keyboard.press("Space")
        page.wait_for_selector(".grade.right")
    elif card.kind == "numeric":
        page.keyboard.type(f"{card.numeric_answer:g}")
        page.keyboard.press("Enter")
        page.wait_for_selector(".grade.right")
    else:
        page.keyboard.press("Space")
    page.wait_for_selector("#ratings:not([hidden])")
    page.keyboard.press("3")
    page.wait_for_function("slug => !document.querySelector(`#card-front [data-card='${slug}']`)", arg=card.slug)


def test_a_new_learners_first_day_and_the_day_after(live_server, browser, shipped_course, celery_worker_process):
    first_ten = first_cards_with_a_predict_and_a_numeric(shipped_course)
    kinds = {c.kind for c in first_ten}
    assert {"predict", "numeric"} <= kinds
    page = open_page(browser)

    # A visitor signs up from the home page.
    page.goto(f"{live_server.url}/")
    assert_accessible(page, "home (visitor)")
    page.click("text=Create an account")
    page.fill("#id_username", "newton")
    page.fill("#id_password1", "falling-apples-1687")
    page.fill("#id_password2", "falling-apples-1687")
    assert_accessible(page, "sign-up")
    page.press("#id_password2", "Enter")
    page.wait_for_selector("#dashboard")
    learner = get_user_model().objects.get(username="newton")
    assert page.inner_text("#home-due") == "0" and page.inner_text("#home-new") == "20"
    assert_accessible(page, "home (new learner)")

    # The first ten cards, by keyboard alone.
    page.locator("#continue-review").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/review/")
    by_slug = {c.slug: c for c in first_ten}
    seen = []
    for _ in range(FIRST_DAY):
        slug = shown_card(page)
        seen.append(slug)
        if len(seen) == 1:
            assert_accessible(page, "review")
        review_by_keyboard(page, by_slug[slug])
    assert seen == [c.slug for c in first_ten]
    logs = ReviewLog.objects.filter(user=learner)
    assert logs.count() == FIRST_DAY
    predict = next(c for c in first_ten if c.kind == "predict")
    numeric = next(c for c in first_ten if c.kind == "numeric")
    assert logs.get(card=predict).answer == predict.answer
    assert logs.get(card=numeric).answer_correct is True

    # The eleventh card: ask the teacher about it (a new tab), from the keyboard.
    eleventh = Card.objects.get(slug=shown_card(page))
    page.locator("#ask-teacher button").focus()
    with page.expect_popup() as popup:
        page.keyboard.press("Enter")
    chat = popup.value
    chat.wait_for_selector("#question")
    chat.fill("#question", "What does this term mean for a kernel's speed?")
    chat.keyboard.press("Control+Enter")
    chat.wait_for_selector(".turn.assistant[data-turn]", timeout=30_000)
    assert "hint mode" in chat.inner_text(".turn.assistant .turn-meta")  # not reviewed today: a hint, not the answer
    assert_accessible(chat, "teacher, asked from a card")
    chat.close()
    conversation = Conversation.objects.get(user=learner)
    assert conversation.card == eleventh

    # A lab, predicted first, on the CPU worker.
    page.goto(f"{live_server.url}/labs/")
    assert_accessible(page, "labs")
    lab = page.locator("#lab-launch_overhead")
    lab.locator("summary").click()
    lab.locator("input[name=lengths]").fill("10,50")
    lab.locator("input[name=predicted_speedup]").fill("3")
    lab.locator("input[name=predicted_speedup]").press("Enter")
    page.wait_for_url("**/labs/runs/*/")
    page.wait_for_selector("#run[data-status='done']", timeout=120_000)
    assert page.inner_text("#predicted") == "3×" and "CPU" in page.inner_text("#device")
    assert_accessible(page, "lab run (done)")
    run = LabRun.objects.get(user=learner)

    # The study session holds the reviews, the question and the run.
    page.goto(f"{live_server.url}/sessions/")
    page.locator("table.list a").first.click()
    page.wait_for_selector(f"a[href='/labs/runs/{run.pk}/']")
    assert page.locator(f"a[href='/teacher/{conversation.pk}/']").count() == 1
    assert page.locator("table.list tr").count() == FIRST_DAY + 1  # a header row and the ten reviews
    assert_accessible(page, "study session")

    # The home page now shows the day: the run, the conversation, the streak.
    page.goto(f"{live_server.url}/")
    assert page.inner_text("#home-reviewed") == str(FIRST_DAY) and page.inner_text("#home-streak") == "1"
    assert f"launch_overhead #{run.pk}" in page.inner_text("#home-lab-runs")
    assert page.locator("#home-conversation a").get_attribute("href") == f"/teacher/{conversation.pk}/"

    # Tomorrow: the cards learnt today are due again.
    with time_machine.travel(tomorrow_once_due(learner, first_ten), tick=True):
        page.goto(f"{live_server.url}/")
        due = int(page.inner_text("#home-due"))
        assert due == CardState.objects.filter(user=learner, card__in=first_ten).count() == FIRST_DAY
        assert page.inner_text("#home-streak") == "1"  # yesterday counts until today's first review
        assert_accessible(page, "home (the next day)")
        page.click("#continue-review")
        page.wait_for_selector(f"#progress-text:has-text('{due} due')")
        assert shown_card(page) in by_slug
        assert_accessible(page, "review (the next day)")
    page.context.close()


def test_an_admin_edits_a_card_mid_course_and_the_learner_sees_the_new_text_with_its_history(
    live_server, browser, shipped_course, learner, staff
):
    cards = list(Card.objects.filter(retired=False, kind="recall", reversible=False).order_by("position"))
    card = cards[len(cards) // 2]
    old_prompt = card.prompt
    # Ada studied it three days ago and forgot it: it is due again now.
    submit_review(
        user=learner,
        card_id=card.pk,
        rating=1,
        idempotency_key="three-days-ago",
        reviewed_at=timezone.now() - timedelta(days=3),
    )

    admin = open_page(browser)
    admin.goto(f"{live_server.url}/admin/login/?next=/admin/quizzes/card/{card.pk}/change/")
    admin.fill("#id_username", "editor")
    admin.fill("#id_password", "pw-editor-123456")
    admin.click("input[type=submit]")
    admin.wait_for_selector("#id_prompt")
    admin.fill("#id_prompt", "What does **occupancy** measure on an SM (edited)?")
    admin.click("input[name=_continue]")
    admin.wait_for_selector(".messagelist .success")
    admin.context.close()

    page = open_page(browser)
    browser_login(page, live_server, "/review/")
    assert shown_card(page) == card.slug
    assert "occupancy measure on an SM (edited)" in page.inner_text("#card-front .card-prompt")
    assert_accessible(page, "review (edited card)")
    page.keyboard.press("Space")
    page.wait_for_selector("#ratings:not([hidden])")
    page.keyboard.press("3")
    page.wait_for_function("s => !document.querySelector(`#card-front [data-card='${s}']`)", arg=card.slug)
    page.context.close()

    # The history is kept: the review before the edit, the one after, one state built from both, the edit.
    reviews = ReviewLog.objects.filter(user=learner, card=card).order_by("reviewed_at")
    assert [r.rating for r in reviews] == [1, 3]
    state = CardState.objects.get(user=learner, card=card, reverse=False)
    assert state.reps == 2 and state.lapses == 0
    edit = CardEdit.objects.get(card=card)
    assert edit.changes["prompt"][0] == old_prompt and "(edited)" in edit.changes["prompt"][1]
