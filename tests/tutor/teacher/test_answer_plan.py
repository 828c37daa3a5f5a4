"""What the teacher decides to answer with: the authored explanation, a passage, or a plain refusal."""

import shutil
from pathlib import Path

import pytest

from quizzes.models import Course
from quizzes.services import load_course
from tutor.teacher.answer_plan import plan_answer, prose
from tutor.teacher.notes_answer import compose
from tutor.teacher.retrieval import retrieve

pytestmark = pytest.mark.django_db
CONTENT = Path(__file__).resolve().parents[3] / "quizzes" / "content" / "cuda-kernels-fusion"


@pytest.fixture
def course(shipped_course):
    return shipped_course


def test_a_confident_match_answers_with_the_explanation_whole_and_cites_only_what_it_used(course):
    plan = plan_answer("Is FlashAttention an approximation?", course=course)
    assert plan.kind == "explanation" and plan.explanation.slug
    text = compose(plan)
    assert plan.explanation.answer.strip() in text
    assert [c["n"] for c in plan.citations()] == list(range(1, len(plan.citations()) + 1))
    assert len(plan.citations()) == 1 + (plan.support is not None)
    assert all(c["section"] in {s.slug for s in plan.explanation.sections.all()} for c in plan.citations())


def test_a_question_about_part_of_the_course_says_which_part_it_does_not_cover(course):
    plan = plan_answer("Compare the HBM bandwidth of an H100 with an AMD MI300X.", course=course)
    assert plan.answerable and "MI300X" in plan.uncovered
    assert "does not cover" in compose(plan) and "MI300X" in compose(plan)


def test_passages_never_offer_a_question_or_a_code_fragment_as_an_answer_sentence(course):
    for question in ("How do I capture a CUDA graph in PyTorch?", "What does a Triton kernel look like?"):
        for hit in retrieve(question, 5, course=course.slug):
            for sentence in prose(hit):
                assert not sentence.endswith("?") and "```" not in sentence and not sentence.startswith("|")


def test_only_the_conversations_course_is_searched_and_another_courses_question_is_named(course, tmp_path):
    other = tmp_path / "gardening"
    shutil.copytree(Path(__file__).parent / "data" / "gardening", other)
    load_course(other)
    garden = Course.objects.get(slug="gardening")
    plan = plan_answer("What is a warp?", course=course)
    assert all(c["url"].startswith("/learn/cuda-kernels-fusion/") for c in plan.citations())
    plan = plan_answer("How deep should I plant tulip bulbs in autumn?", course=course)
    assert plan.kind == "other_course" and plan.other_course == garden
    assert "gardening" in compose(plan).lower() and not plan.citations()
