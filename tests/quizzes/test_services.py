import shutil

import pytest
import yaml
from django.core.exceptions import ValidationError
from django.db import connection

from quizzes.course_files import CourseLoadError
from quizzes.models import Card, CardEdit, Course, Explanation, Lesson, Section
from quizzes.services import load_course, set_retired, update_card
from tests.conftest import CONTENT

pytestmark = pytest.mark.django_db


@pytest.fixture
def course_dir(tmp_path):
    target = tmp_path / "cuda-kernels-fusion"
    shutil.copytree(CONTENT, target)
    return target


def test_loading_creates_everything(course_dir):
    report = load_course(course_dir)
    assert report.created["cards"] == Card.objects.count() >= 100
    assert Section.objects.count() >= 10
    assert all(s.body_html for s in Section.objects.all())


def test_reloading_changes_nothing_and_records_no_edits(course_dir):
    load_course(course_dir)
    pks = dict(Card.objects.values_list("slug", "pk"))
    report = load_course(course_dir)
    assert report.created == {} and report.updated == {}
    assert dict(Card.objects.values_list("slug", "pk")) == pks
    assert CardEdit.objects.count() == 0


def test_reloading_edited_text_updates_the_same_card_and_records_it(course_dir):
    load_course(course_dir)
    path = course_dir / "cards" / "recall.yaml"
    doc = yaml.safe_load(path.read_text())
    slug = doc["cards"][0]["id"]
    pk = Card.objects.get(slug=slug).pk
    doc["cards"][0]["answer"] = "A better answer."
    doc["cards"].append(
        {
            "id": "rc-brand-new",
            "kind": "recall",
            "sections": ["fusion"],
            "topics": [],
            "prompt": "New prompt",
            "answer": "New answer",
        }
    )
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    report = load_course(course_dir)
    card = Card.objects.get(slug=slug)
    assert card.pk == pk and card.answer == "A better answer."
    assert report.updated == {"cards": 1} and report.created == {"cards": 1}
    edit = CardEdit.objects.get(card=card)
    assert edit.source == "file" and edit.changes["answer"][1] == "A better answer."


def test_a_bad_card_loads_nothing_at_all(course_dir):
    path = course_dir / "cards" / "recall.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["cards"][-1]["kind"] = "essay"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(CourseLoadError):
        load_course(course_dir)
    assert Course.objects.count() == 0 and Card.objects.count() == 0


def test_a_failed_reload_leaves_the_loaded_course_untouched(course_dir):
    load_course(course_dir)
    before = list(Card.objects.order_by("pk").values_list("slug", "prompt"))
    path = course_dir / "cards" / "glossary.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["cards"][0]["back"] = "changed"
    doc["cards"][1]["sections"] = ["nowhere"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(CourseLoadError):
        load_course(course_dir)
    assert list(Card.objects.order_by("pk").values_list("slug", "prompt")) == before


def test_cards_removed_from_the_files_are_kept(course_dir):
    load_course(course_dir)
    # An explanation that rests on a card refuses its removal (test_explanations.py): take one none cites.
    cited = set(Explanation.cards.through.objects.values_list("card__slug", flat=True))
    for path in sorted((course_dir / "cards").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        gone = next((c["id"] for c in doc["cards"] if c["id"] not in cited), None)
        if gone:
            break
    doc["cards"] = [c for c in doc["cards"] if c["id"] != gone]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    report = load_course(course_dir)
    assert Card.objects.filter(slug=gone).exists()
    assert gone in report.not_in_files


def test_retiring_keeps_the_card_and_records_it(shipped_course, staff):
    card = shipped_course.cards.first()
    assert set_retired([card], retired=True, user=staff, source="admin") == 1
    card.refresh_from_db()
    assert card.retired
    assert CardEdit.objects.get(card=card).changes == {"retired": [False, True]}


def test_update_card_edits_the_card_and_records_who_changed_what(shipped_course, staff):
    card = shipped_course.cards.filter(kind="recall").first()
    roofline = shipped_course.sections.get(slug="roofline")
    before_sections = sorted(card.sections.values_list("slug", flat=True))
    update_card(card=card, user=staff, changes={"prompt": "A sharper prompt", "sections": [roofline]})
    card.refresh_from_db()
    assert card.prompt == "A sharper prompt" and card.prompt_html == "<p>A sharper prompt</p>\n"
    assert list(card.sections.values_list("slug", flat=True)) == ["roofline"]
    edit = CardEdit.objects.get(card=card)
    assert edit.user == staff and edit.source == "api"
    assert edit.changes["sections"] == [before_sections, ["roofline"]]
    assert edit.changes["prompt"][1] == "A sharper prompt"


def test_update_card_refuses_a_section_of_another_course_and_changes_nothing(shipped_course, staff):
    other = Course.objects.create(slug="other-course", title="Other")
    lesson = Lesson.objects.create(course=other, slug="intro", title="Intro")
    foreign = Section.objects.create(course=other, lesson=lesson, slug="elsewhere", title="Elsewhere", body="Text.")
    card = shipped_course.cards.filter(kind="recall").first()
    prompt, sections = card.prompt, set(card.sections.all())
    with pytest.raises(ValidationError) as info:
        update_card(card=card, user=staff, changes={"prompt": "Changed", "sections": [foreign]})
    assert info.value.message_dict == {"sections": ["Sections must belong to the card's course."]}
    assert card.prompt == prompt
    card.refresh_from_db()
    assert card.prompt == prompt and set(card.sections.all()) == sections
    assert CardEdit.objects.count() == 0


def test_update_card_refuses_an_invalid_field_and_leaves_the_card_as_it_was(shipped_course, staff):
    card = shipped_course.cards.filter(kind="numeric").first()
    tolerance = card.tolerance
    with pytest.raises(ValidationError) as info:
        update_card(card=card, user=staff, changes={"tolerance": 5}, source="admin")
    assert "tolerance" in info.value.message_dict
    assert card.tolerance == tolerance
    assert Card.objects.get(pk=card.pk).tolerance == tolerance
    assert CardEdit.objects.count() == 0


def test_the_shipped_course_fixture_writes_back_what_loading_the_files_gives(shipped_course):
    """Tests get the shipped course from rows read once per session (tests/conftest.py): written back, they
    must be what a load of the files makes, relations included, or a real load would change something."""
    from tests.conftest import COURSE_SLUG, _CourseSnapshot

    assert _CourseSnapshot.rows, "the first load wrote rows the fixture could not keep"
    for model, rows in _CourseSnapshot.rows.items():  # the course's rows, gone without a cascade's checks
        model.objects.filter(pk__in=[r[model._meta.pk.attname] for r in rows])._raw_delete(connection.alias)
    _CourseSnapshot.load()
    edits = CardEdit.objects.count()
    report = load_course(CONTENT)
    assert (report.created, report.updated, report.retired) == ({}, {}, [])
    assert report.unchanged["cards"] == Card.objects.filter(course__slug=COURSE_SLUG).count() >= 100
    assert CardEdit.objects.count() == edits
