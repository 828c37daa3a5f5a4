import pytest

from quizzes.models import Card, CardEdit

pytestmark = pytest.mark.django_db


def test_learners_cannot_reach_admin(learner_client):
    response = learner_client.get("/admin/quizzes/card/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_card_list_filters_by_kind_and_searches(shipped_course, staff_client):
    response = staff_client.get("/admin/quizzes/card/?kind__exact=numeric&q=bytes")
    assert response.status_code == 200
    assert "num-" in response.content.decode()


@pytest.mark.parametrize("kind", ["basic", "interview", "predict", "numeric", "recall"])
def test_preview_renders_each_kind_as_learners_see_it(shipped_course, staff_client, kind):
    card = Card.objects.filter(kind=kind).first()
    html = staff_client.get(f"/admin/quizzes/card/{card.pk}/preview/").content.decode()
    assert card.prompt_html in html
    assert 'class="study-card kind-' + kind in html
    if kind == "interview":
        assert "Common wrong answer" in html
    if kind == "numeric":
        assert card.unit in html


@pytest.mark.parametrize("kind", ["basic", "interview", "predict", "numeric", "recall"])
def test_change_page_shows_the_fields_of_the_kind(shipped_course, staff_client, kind):
    card = Card.objects.filter(kind=kind).first()
    html = staff_client.get(f"/admin/quizzes/card/{card.pk}/change/").content.decode()
    assert 'name="prompt"' in html
    assert ('name="numeric_answer"' in html) == (kind == "numeric")
    assert ('name="key_points"' in html) == (kind == "interview")


def _form_data(card):
    data = {
        "course": card.course_id,
        "slug": card.slug,
        "kind": card.kind,
        "prompt": card.prompt,
        "answer": card.answer,
        "explanation": card.explanation,
        "source_file": card.source_file,
        "position": card.position,
        "sections": [s.pk for s in card.sections.all()],
        "topics": [t.pk for t in card.topics.all()],
        "edits-TOTAL_FORMS": "0",
        "edits-INITIAL_FORMS": "0",
    }
    if card.reversible:
        data["reversible"] = "on"
    return data


def test_editing_in_admin_keeps_the_id_and_records_who_changed_what(shipped_course, staff_client, staff):
    card = Card.objects.filter(kind="basic").first()
    data = _form_data(card)
    data["answer"] = "An edited back side with <script>x</script>."
    response = staff_client.post(f"/admin/quizzes/card/{card.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    edited = Card.objects.get(pk=card.pk)
    assert edited.slug == card.slug and edited.answer.startswith("An edited back side")
    assert "<script>" not in edited.answer_html
    edit = CardEdit.objects.get(card=card)
    assert edit.user == staff and edit.source == "admin"
    assert list(edit.changes) == ["answer"]


def test_admin_refuses_a_predict_answer_outside_the_choices(shipped_course, staff_client):
    card = Card.objects.filter(kind="predict").exclude(choices=[]).first()
    data = _form_data(card)
    data["choices"] = '["a", "b"]'
    data["key_points"] = "[]"
    data["answer"] = "c"
    response = staff_client.post(f"/admin/quizzes/card/{card.pk}/change/", data)
    assert response.status_code == 200
    assert "must be one of the choices" in response.content.decode()
    assert Card.objects.get(pk=card.pk).answer == card.answer


def test_retire_action(shipped_course, staff_client):
    card = Card.objects.first()
    staff_client.post("/admin/quizzes/card/", {"action": "retire", "_selected_action": [card.pk]})
    assert Card.objects.get(pk=card.pk).retired


def test_lesson_page_edits_sections_inline(shipped_course, staff_client):
    lesson = shipped_course.lessons.first()
    html = staff_client.get(f"/admin/quizzes/lesson/{lesson.pk}/change/").content.decode()
    assert "sections-TOTAL_FORMS" in html
