"""A learner asks the teacher a question and sees the answer stream in, with its sources."""

import pytest

from tests.conftest import browser_login
from tutor.teacher.models import ChatTurn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ask_a_question_and_see_a_streamed_cited_answer(live_server, page, learner, shipped_course):
    browser_login(page, live_server, "/teacher/")
    page.click("text=New conversation")
    page.wait_for_selector("#question")
    page.fill("#question", "Why does FlashAttention never write the N×N score matrix to HBM?")
    page.keyboard.press("Control+Enter")

    answer = page.locator(".turn.assistant").last
    page.wait_for_selector(".turn.assistant[data-turn]", timeout=30_000)
    assert "Course notes (no language model)" in answer.locator(".turn-meta").inner_text()
    assert "Course-notes mode" in answer.locator(".md").inner_text()
    links = answer.locator(".citations a")
    assert links.count() >= 1
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert any(h.startswith("/learn/cuda-kernels-fusion/flashattention/") for h in hrefs), hrefs
    assert ChatTurn.objects.filter(conversation__user=learner).count() == 2

    # The citation opens the lesson section, at the heading it cites.
    links.first.click()
    page.wait_for_selector("article.section-body")


def test_a_question_typed_on_the_teacher_page_is_answered_in_one_step(live_server, page, learner, shipped_course):
    browser_login(page, live_server, "/teacher/")
    # Ctrl+Enter is the page script's; typed before that script has run (the field exists while the page is
    # still loading, which on a loaded CI machine lasted long enough), the key press does nothing.
    page.wait_for_url("**/teacher/")
    page.wait_for_load_state("load")
    page.fill("#id_question", "What does kernel fusion save?")
    page.keyboard.press("Control+Enter")
    # The redirect is what is tested; the page's own load (scripts, the first answer's stream) is waited for below.
    page.wait_for_url("**/teacher/*/", wait_until="commit", timeout=30_000)
    page.wait_for_selector(".turn.assistant[data-turn]", timeout=30_000)
    assert page.locator(".turn.user").first.inner_text() == "What does kernel fusion save?"
    assert ChatTurn.objects.filter(conversation__user=learner).count() == 2
    page.goto(f"{live_server.url}/teacher/")
    assert page.locator("table.list a", has_text="kernel fusion").count() == 1
