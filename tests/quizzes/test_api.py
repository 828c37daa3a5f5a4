import pytest

from quizzes.models import Card, CardEdit, Course, Lesson, Section

pytestmark = pytest.mark.django_db


def test_learners_read_cards_filtered_by_kind(shipped_course, learner_client):
    body = learner_client.get("/api/cards/?course=cuda-kernels-fusion&kind=numeric").json()
    assert body["count"] == Card.objects.filter(kind="numeric").count()
    assert all(c["kind"] == "numeric" for c in body["results"])


def test_learners_cannot_write_content(shipped_course, learner_client):
    card = Card.objects.first()
    response = learner_client.patch(f"/api/cards/{card.pk}/", {"prompt": "hacked"}, content_type="application/json")
    assert response.status_code == 403
    assert Card.objects.get(pk=card.pk).prompt != "hacked"


def test_staff_edit_through_the_api_is_recorded(shipped_course, staff_client, staff):
    card = Card.objects.filter(kind="recall").first()
    response = staff_client.patch(
        f"/api/cards/{card.pk}/", {"prompt": "A sharper prompt"}, content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["prompt_html"] == "<p>A sharper prompt</p>\n"
    edit = CardEdit.objects.get(card=card)
    assert edit.source == "api" and edit.user == staff


def test_invalid_edit_is_a_400_naming_the_field(shipped_course, staff_client):
    card = Card.objects.filter(kind="numeric").first()
    response = staff_client.patch(f"/api/cards/{card.pk}/", {"tolerance": 5}, content_type="application/json")
    body = response.json()
    # Field-by-field errors, bare (DRF's shape) or under "errors" (tutor.errors' API envelope).
    assert response.status_code == 400 and "tolerance" in body.get("errors", body)
    assert CardEdit.objects.count() == 0


def test_retired_cards_are_hidden_from_learners(shipped_course, learner_client):
    card = Card.objects.first()
    card.retired = True
    card.save()
    assert learner_client.get(f"/api/cards/{card.pk}/").status_code == 404


def test_anonymous_users_get_nothing(shipped_course, client):
    assert client.get("/api/cards/").status_code == 403


def test_a_section_of_another_course_is_a_400_on_sections(shipped_course, staff_client):
    other = Course.objects.create(slug="other-course", title="Other")
    lesson = Lesson.objects.create(course=other, slug="intro", title="Intro")
    Section.objects.create(course=other, lesson=lesson, slug="elsewhere", title="Elsewhere", body="Text.")
    card = Card.objects.filter(kind="recall").first()
    response = staff_client.patch(
        f"/api/cards/{card.pk}/", {"sections": ["elsewhere"]}, content_type="application/json"
    )
    assert response.status_code == 400
    body = response.json()
    assert body.get("errors", body) == {"sections": ["Sections must belong to the card's course."]}
    assert CardEdit.objects.count() == 0
