"""/teacher/ opens ready to ask: the question typed there starts a conversation that asks it."""

import pytest

from tutor.teacher.models import Conversation

pytestmark = pytest.mark.django_db


def test_the_teacher_page_has_a_labelled_question_box_above_past_conversations(learner_client, shipped_course):
    html = learner_client.get("/teacher/").content.decode()
    assert '<label for="id_question"' in html and 'name="question"' in html
    assert html.index('name="question"') < html.index("Past conversations")


def test_a_question_typed_on_the_teacher_page_is_asked_once_in_the_new_conversation(
    learner_client, learner, shipped_course
):
    response = learner_client.post("/teacher/new/", {"question": "  What is kernel fusion?  "})
    conversation = Conversation.objects.get(user=learner)
    assert response.status_code == 302 and response["Location"] == f"/teacher/{conversation.pk}/"
    first = learner_client.get(response["Location"]).content.decode()
    assert 'data-first-question="What is kernel fusion?"' in first
    again = learner_client.get(response["Location"]).content.decode()
    assert 'data-first-question=""' in again


def test_the_pending_question_belongs_to_its_own_conversation_only(learner_client, learner, shipped_course):
    learner_client.post("/teacher/new/", {"question": "What is a warp?"})
    learner_client.post("/teacher/new/", {})
    newest = Conversation.objects.filter(user=learner).order_by("-pk").first()
    assert 'data-first-question=""' in learner_client.get(f"/teacher/{newest.pk}/").content.decode()


def test_a_question_too_long_starts_nothing_and_says_why(learner_client, learner, shipped_course):
    response = learner_client.post("/teacher/new/", {"question": "x" * 2001}, follow=True)
    assert not Conversation.objects.filter(user=learner).exists()
    assert "at most 2000 characters" in response.content.decode()


def test_asking_from_a_card_starts_a_conversation_about_that_card(learner_client, learner, shipped_course):
    from quizzes.models import Card

    card = Card.objects.order_by("position").first()
    learner_client.post("/teacher/new/", {"card": card.pk})
    assert Conversation.objects.get(user=learner).card == card


def test_asking_from_an_unknown_card_starts_nothing(learner_client, learner, shipped_course):
    response = learner_client.post("/teacher/new/", {"card": 10**9}, follow=True)
    assert "No such card." in response.content.decode()
    assert not Conversation.objects.filter(user=learner).exists()
