"""Explanations: authored answers to learners' questions, read from explanations/*.yaml, loaded,
exported back, edited in admin, and selected for the teacher. A small course under tmp_path keeps
these tests independent of the shipped content."""

from pathlib import Path

import pytest
import yaml

from quizzes.course_files import CourseLoadError, read_course_dir, write_course_dir
from quizzes.exporters import course_to_data
from quizzes.models import Card, Course, Explanation, ExplanationEdit
from quizzes.selectors import explanations_for
from quizzes.services import known_lab_ids, load_course, load_course_data
from tests.conftest import run_python_ok
from tests.quizzes.test_markdown import parsed_tags

pytestmark = pytest.mark.django_db

# 72 words over two paragraphs, the way authors write them (a `|` block in the file).
ANSWER = (
    "The arithmetic is the same, but the traffic is not. Unfused, every step writes its result to HBM "
    "and the next step reads it back, so a chain of small element-wise ops spends its time moving bytes.\n\n"
    "Fused, one kernel loads each input once, applies every step while the values sit in registers, "
    "and stores only the final result. Fewer bytes move and fewer kernels launch, which is where the time went."
)


def words(n: int) -> str:
    return " ".join(["word"] * n)


def explanation(eid: str, **changes) -> dict:
    doc = {
        "id": eid,
        "question": f"Question {eid}?",
        "paraphrases": [f"First way to ask {eid}", f"Second way to ask {eid}", f"Third way to ask {eid}"],
        "answer": ANSWER,
        "sections": ["fusion"],
        "cards": ["rc-one"],
    }
    doc.update(changes)
    return doc


def good_explanations() -> dict[str, list[dict]]:
    return {
        "a.yaml": [
            explanation("ex-why-fusion-helps", lab="fused_vs_unfused", sections=["roofline", "fusion"]),
            explanation("ex-when-not-to-fuse", cards=["rc-two", "rc-one"]),
        ],
        "b.yaml": [explanation("ex-roofline", sections=["roofline"], cards=[])],
    }


def write_yaml(path: Path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")


def write_course(root: Path, explanations: dict[str, list[dict]] | None) -> Path:
    """A two-section, two-card course; `explanations` maps file names to their entries (None: no folder)."""
    write_yaml(
        root / "course.yaml",
        {
            "id": "mini-course",
            "title": "Mini course",
            "topics": [{"id": "kernels", "title": "Kernels"}],
            "lessons": [{"id": "basics", "title": "Basics", "sections": ["fusion", "roofline"]}],
        },
    )
    for n, sid in enumerate(["fusion", "roofline"], start=1):
        (root / "sections").mkdir(parents=True, exist_ok=True)
        (root / "sections" / f"0{n}-{sid}.md").write_text(
            f"---\nid: {sid}\ntitle: {sid}\ntopics: [kernels]\n---\nBody.\n"
        )
    write_yaml(
        root / "cards" / "recall.yaml",
        {
            "cards": [
                {"id": cid, "kind": "recall", "sections": ["fusion"], "topics": [], "prompt": "P", "answer": "A"}
                for cid in ("rc-one", "rc-two")
            ]
        },
    )
    for name, entries in (explanations or {}).items():
        write_yaml(root / "explanations" / name, {"explanations": entries})
    return root


@pytest.fixture
def course_dir(tmp_path) -> Path:
    return write_course(tmp_path / "mini-course", good_explanations())


def edit_explanations(course_dir: Path, name: str, edit) -> None:
    path = course_dir / "explanations" / name
    doc = yaml.safe_load(path.read_text())
    edit(doc["explanations"])
    write_yaml(path, doc)


def load_errors(course_dir: Path) -> str:
    with pytest.raises(CourseLoadError) as info:
        load_course(course_dir)
    return str(info.value)


# --- reading and loading -----------------------------------------------------------------------


def test_explanation_files_are_read_in_file_order_with_defaults_filled_in(course_dir):
    data = read_course_dir(course_dir, lab_ids=known_lab_ids())
    assert [(e["id"], e["_file"]) for e in data.explanations] == [
        ("ex-why-fusion-helps", "a.yaml"),
        ("ex-when-not-to-fuse", "a.yaml"),
        ("ex-roofline", "b.yaml"),
    ]
    first, second, third = data.explanations
    assert first["answer"] == ANSWER and first["lab"] == "fused_vs_unfused" and first["retired"] is False
    assert first["sections"] == ["fusion", "roofline"]  # course order, whatever order the file uses
    assert second["cards"] == ["rc-one", "rc-two"] and second["lab"] == ""
    assert third["cards"] == []


def test_the_cards_key_may_be_left_out(course_dir):
    edit_explanations(course_dir, "b.yaml", lambda entries: entries[0].pop("cards"))
    assert read_course_dir(course_dir).explanations[-1]["cards"] == []


def test_a_course_without_an_explanations_folder_loads_and_exports_as_before(tmp_path):
    root = write_course(tmp_path / "mini-course", None)
    assert read_course_dir(root).explanations == []
    load_course(root)
    course = Course.objects.get(slug="mini-course")
    write_course_dir(course_to_data(course), tmp_path / "export")
    assert not (tmp_path / "export" / "explanations").exists()


def test_loading_creates_explanations_linked_to_sections_and_cards(course_dir):
    report = load_course(course_dir)
    assert report.created["explanations"] == 3
    why = Explanation.objects.get(slug="ex-why-fusion-helps")
    assert why.course.slug == "mini-course" and why.source_file == "a.yaml"
    assert sorted(why.sections.values_list("slug", flat=True)) == ["fusion", "roofline"]
    assert list(why.cards.values_list("slug", flat=True)) == ["rc-one"]
    assert why.lab == "fused_vs_unfused" and len(why.paraphrases) == 3
    assert why.answer_html.startswith("<p>The arithmetic is the same") and why.answer_html.count("<p>") == 2


def test_answers_of_exactly_60_and_200_words_are_accepted(course_dir):
    def edit(entries):
        entries[0]["answer"] = words(60)
        entries[1]["answer"] = words(200)

    edit_explanations(course_dir, "a.yaml", edit)
    load_course(course_dir)
    assert Explanation.objects.count() == 3


def _set(**values):
    return lambda entries: entries[0].update(values)


@pytest.mark.parametrize(
    "edit, field, message",
    [
        (lambda entries: entries[0].pop("question"), "question", "is required"),
        (lambda entries: entries[0].pop("answer"), "answer", "is required"),
        (lambda entries: entries[0].pop("sections"), "sections", "needs at least one id"),
        (_set(paraphrases="How else?"), "paraphrases", "must be a non-empty list"),
        (_set(paraphrases=["a", {"b": 1}, "c"]), "paraphrases", "must be text, got dict"),
        (_set(question=["a", "list"]), "question", "must be text, got list"),
        (_set(sections="fusion"), "sections", "must be a list of ids"),
        (_set(cards="rc-one"), "cards", "must be a list of ids"),
        (_set(lab=["fused_vs_unfused"]), "lab", "must be a lab id, got list"),
        (_set(retired="yes"), "retired", "must be true or false"),
        (_set(answer=words(59)), "answer", "is 59 words; write 60 to 200"),
        (_set(answer=words(201)), "answer", "is 201 words; write 60 to 200"),
        (_set(paraphrases=["one", "two"]), "paraphrases", "has 2 paraphrases; give 3 to 6"),
        (_set(paraphrases=[f"way {i}" for i in range(7)]), "paraphrases", "has 7 paraphrases; give 3 to 6"),
        (_set(sections=["fusion", "nowhere"]), "sections", "unknown id 'nowhere'"),
        (_set(cards=["rc-one", "rc-nowhere"]), "cards", "unknown id 'rc-nowhere'"),
        (_set(lab="warp_drive"), "lab", "unknown lab id 'warp_drive'"),
        (_set(anwser="typo"), "anwser", "unknown field"),
    ],
    ids=[
        "missing question",
        "missing answer",
        "missing sections",
        "paraphrases not a list",
        "a paraphrase not text",
        "question not text",
        "sections not a list",
        "cards not a list",
        "lab not text",
        "retired not a bool",
        "answer too short",
        "answer too long",
        "too few paraphrases",
        "too many paraphrases",
        "unknown section",
        "unknown card",
        "unknown lab",
        "misspelt field",
    ],
)
def test_a_bad_explanation_names_file_id_and_field_and_loads_nothing(course_dir, edit, field, message):
    edit_explanations(course_dir, "a.yaml", edit)
    errors = load_errors(course_dir)
    assert f"mini-course/explanations/a.yaml: explanation ex-why-fusion-helps: field '{field}': {message}" in errors
    assert Course.objects.count() == 0 and Card.objects.count() == 0 and Explanation.objects.count() == 0


def test_duplicate_ids_within_a_file_are_refused(course_dir):
    edit_explanations(course_dir, "a.yaml", lambda entries: entries[1].update(id="ex-why-fusion-helps"))
    assert (
        "explanations/a.yaml: explanation ex-why-fusion-helps: field 'id': "
        "duplicate explanation id (also in mini-course/explanations/a.yaml)"
    ) in load_errors(course_dir)


def test_duplicate_ids_across_files_are_refused(course_dir):
    edit_explanations(course_dir, "b.yaml", lambda entries: entries[0].update(id="ex-why-fusion-helps"))
    assert (
        "explanations/b.yaml: explanation ex-why-fusion-helps: field 'id': "
        "duplicate explanation id (also in mini-course/explanations/a.yaml)"
    ) in load_errors(course_dir)
    assert Explanation.objects.count() == 0


def test_an_explanations_file_without_the_list_is_refused(course_dir):
    write_yaml(course_dir / "explanations" / "c.yaml", {"cards": []})
    assert "explanations/c.yaml: must be a mapping with a 'explanations' list" in load_errors(course_dir)


def test_lab_ids_are_checked_only_when_the_caller_knows_them(course_dir):
    edit_explanations(course_dir, "a.yaml", _set(lab="warp_drive"))
    assert read_course_dir(course_dir).explanations[0]["lab"] == "warp_drive"
    with pytest.raises(CourseLoadError, match="unknown lab id 'warp_drive'"):
        read_course_dir(course_dir, lab_ids={"fused_vs_unfused"})


def test_knowing_the_lab_ids_imports_no_torch():
    run_python_ok(
        "import sys, django; django.setup()\n"
        "from quizzes.services import known_lab_ids\n"
        "assert 'fused_vs_unfused' in known_lab_ids()\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok')"
    )


def test_reloading_changes_nothing_and_records_no_edits(course_dir):
    load_course(course_dir)
    pks = dict(Explanation.objects.values_list("slug", "pk"))
    report = load_course(course_dir)
    assert report.created == {} and report.updated == {} and report.retired == []
    assert dict(Explanation.objects.values_list("slug", "pk")) == pks
    assert ExplanationEdit.objects.count() == 0


def test_reloading_edited_text_updates_the_same_explanation_and_records_it(course_dir):
    load_course(course_dir)
    pk = Explanation.objects.get(slug="ex-when-not-to-fuse").pk
    new_answer = words(80)

    def edit(entries):
        entries[1]["answer"] = new_answer
        entries[1]["cards"] = ["rc-two"]

    edit_explanations(course_dir, "a.yaml", edit)
    report = load_course(course_dir)
    assert report.updated == {"explanations": 1}
    changed = Explanation.objects.get(slug="ex-when-not-to-fuse")
    assert changed.pk == pk and changed.answer == new_answer
    edit = ExplanationEdit.objects.get(explanation=changed)
    assert edit.source == "file" and edit.user is None
    assert edit.changes == {"answer": [ANSWER, new_answer], "cards": [["rc-one", "rc-two"], ["rc-two"]]}


def test_a_failed_reload_leaves_the_loaded_course_untouched(course_dir):
    load_course(course_dir)

    def edit(entries):
        entries[0]["answer"] = words(70)
        entries[1]["lab"] = "warp_drive"

    edit_explanations(course_dir, "a.yaml", edit)
    with pytest.raises(CourseLoadError):
        load_course(course_dir)
    assert Explanation.objects.get(slug="ex-why-fusion-helps").answer == ANSWER
    assert ExplanationEdit.objects.count() == 0


def test_an_explanation_taken_out_of_the_files_is_retired_not_deleted(course_dir):
    load_course(course_dir)
    gone = Explanation.objects.get(slug="ex-roofline")
    (course_dir / "explanations" / "b.yaml").unlink()
    report = load_course(course_dir)
    assert report.retired == ["ex-roofline"] and "retired 1 explanations" in report.summary()
    gone.refresh_from_db()
    assert gone.retired
    assert ExplanationEdit.objects.get(explanation=gone).changes == {"retired": [False, True]}
    assert load_course(course_dir).retired == []  # already retired: nothing more to record

    write_course(course_dir, good_explanations())  # back in the files: answers again
    load_course(course_dir)
    gone.refresh_from_db()
    assert not gone.retired and gone.edits.count() == 2


def test_removing_a_card_an_explanation_rests_on_is_refused(course_dir):
    load_course(course_dir)
    path = course_dir / "cards" / "recall.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["cards"] = [c for c in doc["cards"] if c["id"] != "rc-two"]
    write_yaml(path, doc)
    assert "explanation ex-when-not-to-fuse: field 'cards': unknown id 'rc-two'" in load_errors(course_dir)


# --- export ------------------------------------------------------------------------------------


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_load_export_load_gives_identical_files_and_data(course_dir, tmp_path):
    original = read_course_dir(course_dir)
    load_course(course_dir)
    course = Course.objects.get(slug="mini-course")
    write_course_dir(course_to_data(course), tmp_path / "first")
    assert read_course_dir(tmp_path / "first") == original
    assert sorted(p.name for p in (tmp_path / "first" / "explanations").iterdir()) == ["a.yaml", "b.yaml"]

    report = load_course_data(read_course_dir(tmp_path / "first"))
    assert report.created == {} and report.updated == {} and ExplanationEdit.objects.count() == 0
    write_course_dir(course_to_data(course), tmp_path / "second")
    assert _files(tmp_path / "second") == _files(tmp_path / "first")


def test_the_exported_file_keeps_the_authored_shape(course_dir, tmp_path):
    load_course(course_dir)
    Explanation.objects.filter(slug="ex-roofline").update(retired=True)
    write_course_dir(course_to_data(Course.objects.get(slug="mini-course")), tmp_path / "x")
    a = yaml.safe_load((tmp_path / "x" / "explanations" / "a.yaml").read_text())["explanations"]
    assert list(a[0]) == ["id", "question", "paraphrases", "answer", "sections", "cards", "lab"]
    assert list(a[1]) == ["id", "question", "paraphrases", "answer", "sections", "cards"]
    assert "answer: |" in (tmp_path / "x" / "explanations" / "a.yaml").read_text()
    b = yaml.safe_load((tmp_path / "x" / "explanations" / "b.yaml").read_text())["explanations"]
    assert b[0]["retired"] is True and b[0]["cards"] == []


def test_an_explanation_made_in_admin_is_exported_to_the_default_file(course_dir, tmp_path):
    load_course(course_dir)
    course = Course.objects.get(slug="mini-course")
    made = Explanation.objects.create(
        course=course, slug="ex-new", question="New?", paraphrases=["a", "b", "c"], answer=words(61)
    )
    made.sections.set(course.sections.filter(slug="fusion"))
    write_course_dir(course_to_data(course), tmp_path / "x")
    assert [e["id"] for e in read_course_dir(tmp_path / "x").explanations if e["_file"] == "explanations.yaml"] == [
        "ex-new"
    ]


# --- selector ----------------------------------------------------------------------------------


def test_explanations_for_gives_active_explanations_with_what_they_rest_on(course_dir, django_assert_num_queries):
    load_course(course_dir)
    course = Course.objects.get(slug="mini-course")
    Explanation.objects.filter(slug="ex-roofline").update(retired=True)
    Card.objects.filter(slug="rc-two").update(retired=True)
    with django_assert_num_queries(3):
        found = list(explanations_for(course))
        shape = [(e.slug, [s.slug for s in e.sections.all()], [c.slug for c in e.cards.all()]) for e in found]
    assert shape == [
        ("ex-why-fusion-helps", ["fusion", "roofline"], ["rc-one"]),
        ("ex-when-not-to-fuse", ["fusion"], ["rc-one"]),
    ]
    assert [e.slug for e in explanations_for("mini-course")] == ["ex-why-fusion-helps", "ex-when-not-to-fuse"]


# --- admin -------------------------------------------------------------------------------------

HOSTILE = words(60) + '\n\n<script>alert(1)</script> [click](javascript:alert(1)) <img src=x onerror="alert(1)">'


def _form_data(obj: Explanation, **changes) -> dict:
    data = {
        "course": obj.course_id,
        "slug": obj.slug,
        "question": obj.question,
        "paraphrases": "\n".join(obj.paraphrases),
        "answer": obj.answer,
        "sections": [s.pk for s in obj.sections.all()],
        "cards": [c.pk for c in obj.cards.all()],
        "lab": obj.lab,
        "source_file": obj.source_file,
        "position": obj.position,
        "edits-TOTAL_FORMS": "0",
        "edits-INITIAL_FORMS": "0",
    }
    data.update(changes)
    return data


@pytest.fixture
def loaded(course_dir):
    load_course(course_dir)
    return Explanation.objects.get(slug="ex-why-fusion-helps")


def test_explanation_list_filters_by_course_and_section_and_searches(loaded, staff_client):
    roofline = loaded.sections.get(slug="roofline")
    url = f"/admin/quizzes/explanation/?course__id__exact={loaded.course_id}&sections__id__exact={roofline.pk}"
    html = staff_client.get(url).content.decode()
    assert "ex-why-fusion-helps" in html and "ex-roofline" in html and "ex-when-not-to-fuse" not in html
    html = staff_client.get("/admin/quizzes/explanation/?q=Second+way+to+ask+ex-roofline").content.decode()
    assert "ex-roofline" in html and "ex-why-fusion-helps" not in html


def test_change_page_previews_the_rendered_answer_and_shows_history(loaded, staff_client):
    html = staff_client.get(f"/admin/quizzes/explanation/{loaded.pk}/change/").content.decode()
    assert loaded.answer_html in html
    assert 'name="paraphrases"' in html and "First way to ask ex-why-fusion-helps" in html
    assert "Edit history" in html


def test_editing_in_admin_sanitizes_and_records_who_changed_what(loaded, staff_client, staff):
    response = staff_client.post(f"/admin/quizzes/explanation/{loaded.pk}/change/", _form_data(loaded, answer=HOSTILE))
    assert response.status_code == 302, response.content.decode()[:3000]
    edited = Explanation.objects.get(pk=loaded.pk)
    assert edited.slug == loaded.slug and edited.answer == HOSTILE
    tags = parsed_tags(edited.answer_html)
    assert {tag for tag, _ in tags} == {"p"}  # the script and the img are text now, the link is not a link
    assert all(not attrs for _, attrs in tags)
    edit = ExplanationEdit.objects.get(explanation=loaded)
    assert edit.user == staff and edit.source == "admin"
    assert edit.changes == {"answer": [ANSWER, HOSTILE]}
    html = staff_client.get(f"/admin/quizzes/explanation/{loaded.pk}/change/").content.decode()
    assert "editor" in html  # the history row names who made the change


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"answer": words(30)}, "It is 30 words; write 60 to 200."),
        ({"paraphrases": "only one"}, "It has 1 paraphrases; give 3 to 6."),
        ({"lab": "warp_drive"}, "Select a valid choice."),
    ],
    ids=["short answer", "too few paraphrases", "unknown lab"],
)
def test_admin_refuses_what_the_files_refuse(loaded, staff_client, changes, message):
    response = staff_client.post(f"/admin/quizzes/explanation/{loaded.pk}/change/", _form_data(loaded, **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Explanation.objects.get(pk=loaded.pk).answer == ANSWER
    assert ExplanationEdit.objects.count() == 0


def test_admin_refuses_a_section_of_another_course(loaded, staff_client):
    from quizzes.models import Lesson, Section

    other = Course.objects.create(slug="other-course", title="Other")
    lesson = Lesson.objects.create(course=other, slug="intro", title="Intro")
    foreign = Section.objects.create(course=other, lesson=lesson, slug="elsewhere", title="Elsewhere", body="Text.")
    response = staff_client.post(
        f"/admin/quizzes/explanation/{loaded.pk}/change/", _form_data(loaded, sections=[foreign.pk])
    )
    assert response.status_code == 200
    assert "must belong to the explanation&#x27;s course" in response.content.decode()


def test_retire_action_keeps_the_explanation_and_records_it(loaded, staff_client, staff):
    staff_client.post("/admin/quizzes/explanation/", {"action": "retire", "_selected_action": [loaded.pk]})
    loaded.refresh_from_db()
    assert loaded.retired
    assert ExplanationEdit.objects.get(explanation=loaded).user == staff
