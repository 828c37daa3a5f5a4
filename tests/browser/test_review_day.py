"""A learner does a whole day's review with the keyboard alone, then looks at their stats."""

import os

import pytest

from quizzes.models import Card
from tutor.review.models import ReviewLog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("TILEWISE_SCREENSHOTS")  # a folder to save screenshots in, for people


def shot(page, name):
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def login(page, live_server, username, password):
    page.goto(f"{live_server.url}/accounts/login/?next=/review/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.press("#id_password", "Enter")


def wait_card(page, slug):
    page.wait_for_selector(f'#card-front [data-card="{slug}"], #card-front .reverse')


def test_a_days_review_by_keyboard_then_stats(live_server, page, shipped_course, learner):
    basic = Card.objects.filter(kind="basic", reversible=True).order_by("position").first()
    numeric = Card.objects.filter(kind="numeric").order_by("position").first()
    predict = Card.objects.filter(kind="predict").exclude(choices=[]).order_by("position").first()
    recall = Card.objects.filter(kind="recall").order_by("position").first()
    Card.objects.exclude(pk__in=[basic.pk, numeric.pk, predict.pk, recall.pk]).update(retired=True)

    login(page, live_server, "ada", "pw-ada-123456")
    page.wait_for_selector("#progress-text:has-text('4 new')")

    wait_card(page, basic.slug)
    shot(page, "review-front")
    page.keyboard.press("Space")
    page.wait_for_selector("#ratings:not([hidden])")
    shot(page, "review-back")
    page.keyboard.press("3")

    # Numeric: type an estimate, Enter reveals and grades it against the tolerance.
    wait_card(page, numeric.slug)
    page.keyboard.type(f"{numeric.numeric_answer:g}")
    page.keyboard.press("Enter")
    page.wait_for_selector(".grade.right")
    assert "Within" in page.inner_text("#grade")
    assert page.get_attribute("#ratings button[data-rating='3']", "class").endswith("suggested")
    shot(page, "review-numeric")
    page.keyboard.press("3")

    # Undo the numeric card with `u`: it comes back.
    wait_card(page, predict.slug)
    page.keyboard.press("u")
    page.wait_for_selector("#banner:has-text('undone')")
    wait_card(page, numeric.slug)
    page.keyboard.type(f"{numeric.numeric_answer:g}")
    page.keyboard.press("Enter")
    page.wait_for_selector(".grade.right")
    page.keyboard.press("4")

    # Predict: commit a guess with a letter key before the reveal.
    wait_card(page, predict.slug)
    page.keyboard.press("Space")  # refused without a guess
    page.wait_for_selector("#banner:has-text('Pick a prediction first')")
    right = "abcdef"[predict.choices.index(predict.answer)]
    page.keyboard.press(right)
    page.keyboard.press("Space")
    page.wait_for_selector(".grade.right")
    shot(page, "review-predict")
    page.keyboard.press("4")

    wait_card(page, recall.slug)
    page.keyboard.press("Space")
    page.wait_for_selector("#ratings:not([hidden])")
    # Revealed without an answer: no verdict, so neither the prediction's green nor its suggested rating.
    assert page.locator("#ratings button.suggested").count() == 0
    assert page.get_attribute("#grade", "class") == "grade"
    page.keyboard.press("4")

    # The glossary card comes back reversed: definition first, the term is the answer.
    page.wait_for_selector("#card-front .reverse")
    page.keyboard.press("Space")
    page.wait_for_selector("#ratings:not([hidden])")
    page.keyboard.press("4")

    page.wait_for_selector("#done:not([hidden])")
    assert "done for today" in page.inner_text("#done")
    assert "Tomorrow:" in page.inner_text("#done-detail")
    shot(page, "review-done")

    logs = ReviewLog.objects.filter(user=learner)
    assert logs.count() == 6 and logs.filter(undone_at__isnull=False).count() == 1
    assert logs.get(card=predict).answer == predict.answer
    assert logs.filter(card=numeric, undone_at__isnull=True).get().answer_correct is True

    page.goto(f"{live_server.url}/stats/")
    page.wait_for_selector("#stats[data-ready='1']")
    assert page.inner_text("#today") == "5"
    assert page.inner_text("#streak") == "1"
    assert page.locator("canvas#heatmap").bounding_box()["height"] > 50
    shot(page, "stats")
