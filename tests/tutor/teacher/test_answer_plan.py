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


def test_a_difference_question_gets_both_sides_when_no_one_explanation_covers_both(course):
    from tutor.teacher.answer_plan import two_things

    assert two_things("What's the difference between a kernel and a warp?") == ("a kernel", "a warp")
    assert two_things("L2 cache vs HBM on a GPU?") == ("L2 cache", "HBM")
    assert two_things("How is L2 different from shared memory?") == ("L2", "shared memory")
    assert two_things("Why is decode memory-bound?") is None
    plan = plan_answer("What's the difference between a kernel and a warp?", course=course)
    assert plan.kind == "explanation" and plan.also is not None
    asked = {plan.explanation.question, plan.also.question}
    assert asked == {"What is a CUDA kernel?", "What is a warp?"}
    text = compose(plan)
    assert all(q in text for q in asked) and "[2]" in text
    assert [c["section"] for c in plan.citations()] == ["kernels-launch-cost", "warps-shuffles-banks"]
    # LLM mode gets both authored answers, numbered as they are cited.
    from tutor.teacher.prompts import sources_block

    block = sources_block(plan)
    assert '[1] Authored answer to "What is a CUDA kernel?"' in block
    assert '[2] Authored answer to "What is a warp?"' in block


def test_a_difference_explanation_that_covers_both_sides_answers_alone(course):
    plan = plan_answer("warp vs thread block", course=course)
    assert plan.kind == "explanation" and plan.also is None
    assert "warp" in plan.explanation.question.lower() and "thread block" in plan.explanation.question.lower()


def test_a_why_should_i_care_question_gets_consequences_not_a_definition(course):
    from tutor.teacher.explanation_match import question_kind

    assert question_kind("The profiler shows uncoalesced loads. Why should I care?") == "consequence"
    assert question_kind("What goes wrong if my tile does not fit?") == "consequence"
    assert question_kind("How much faster is a CUDA graph?") == "quantity"
    assert question_kind("What is a warp?") == "definition"
    plan = plan_answer("Nsight says my loads are uncoalesced. Why should I care?", course=course)
    assert plan.kind == "explanation" and not plan.explanation.question.startswith("What is")


def test_everyday_words_typos_and_sizes_are_not_named_as_subjects_the_course_lacks(course):
    from tutor.teacher.answer_plan import course_vocabulary, uncovered_terms, unknown_words

    counts, _ = course_vocabulary(course)
    assert unknown_words("Why are replies slow?", course) == []  # an inflection of a common word
    assert unknown_words("wat is a warp", course) == []  # one key away from "what"
    assert uncovered_terms("a 128x64 tile of A", counts) == []  # a size, not a name
    assert unknown_words("What is speculative decoding?", course) == ["speculative"]
    assert "MI300X" in uncovered_terms("Compare the H100 with an MI300X", counts)
