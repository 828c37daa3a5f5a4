"""An author edits a card in admin in a real browser and sees the change as learners will."""

import pytest

from quizzes.models import Card, CardEdit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_editing_a_card_in_admin_shows_up_in_the_learner_preview(live_server, page, shipped_course, staff):
    card = Card.objects.filter(kind="recall").order_by("pk").first()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/quizzes/card/{card.pk}/change/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", "pw-editor-123456")
    page.click("input[type=submit]")
    page.wait_for_selector("#id_prompt")

    page.fill("#id_prompt", "Walk through **online softmax** for one new tile.")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist .success")

    with page.expect_popup() as popup_info:
        page.click("text=Preview as a learner sees it")
    preview = popup_info.value
    preview.wait_for_load_state()
    prompt = preview.locator(".study-card .card-prompt").first
    assert prompt.inner_html().strip() == "<p>Walk through <strong>online softmax</strong> for one new tile.</p>"

    card.refresh_from_db()
    assert card.prompt.startswith("Walk through")
    edit = CardEdit.objects.get(card=card)
    assert edit.user == staff and list(edit.changes) == ["prompt"]
