"""Rules the shipped course content keeps (FORMAT.md): checked on every CI run.

Every card practises a section, every prediction's answer is one of its choices, no two cards
ask the same thing, no text types in a figure the labs measure, and nothing repeats the
reference material (shared/tools/originality.py, when it is beside the repo).
"""

import collections
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from quizzes.card_kinds import KIND_FIELDS
from quizzes.course_files import read_course_dir
from quizzes.figures import literal_figures
from tests.conftest import CONTENT, REPO

ORIGINALITY_TOOL = REPO.parent / "shared" / "tools" / "originality.py"
PROMPT_FIELD = {
    "basic": "front",
    "interview": "question",
    "predict": "question",
    "numeric": "question",
    "recall": "prompt",
}


@pytest.fixture(scope="module")
def course():
    return read_course_dir(CONTENT)


def test_every_card_practises_at_least_one_section_of_the_course(course):
    sections = {s["id"] for s in course.sections}
    for card in course.cards:
        assert card["sections"], card["id"]
        assert set(card["sections"]) <= sections, card["id"]


def test_every_predict_answer_is_one_of_its_choices(course):
    for card in course.cards:
        if card["kind"] == "predict" and card["choices"]:
            assert card["answer"] in card["choices"], card["id"]


def test_no_two_cards_share_a_prompt(course):
    prompts = collections.defaultdict(list)
    for card in course.cards:
        prompts[" ".join(card[PROMPT_FIELD[card["kind"]]].lower().split())].append(card["id"])
    assert not {p: ids for p, ids in prompts.items() if len(ids) > 1}


def test_no_two_explanations_answer_the_same_question(course):
    """Not as their question, nor as a paraphrase: a wording shared by two explanations is matched to
    whichever the index meets first, and the other can never be reached through it."""
    owners = collections.defaultdict(set)
    for e in course.explanations:
        for text in [e["question"], *e["paraphrases"]]:
            owners[" ".join(text.lower().rstrip("?!. ").split())].add(e["id"])
    assert not {text: ids for text, ids in owners.items() if len(ids) > 1}


def _raw_texts(root: Path) -> Iterator[tuple[str, str]]:
    """(where, text) for every text a learner reads, as written in the files (placeholders unfilled)."""
    for path in sorted((root / "sections").glob("*.md")):
        yield path.name, path.read_text(encoding="utf-8")
    for path in sorted((root / "cards").glob("*.yaml")):
        for card in yaml.safe_load(path.read_text(encoding="utf-8"))["cards"]:
            for field in KIND_FIELDS[card["kind"]]:
                value = card.get(field.name)
                for text in value if isinstance(value, list) else [value]:
                    if isinstance(text, str):
                        yield f"{card['id']}.{field.name}", text
    for path in sorted((root / "explanations").glob("*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8"))["explanations"]:
            for text in [item["question"], item["answer"], *item["paraphrases"]]:
                yield f"{item['id']}", text


def _unmeasured(root: Path) -> set[str]:
    doc = yaml.safe_load((root / "unmeasured-figures.yaml").read_text(encoding="utf-8"))
    return {" ".join(str(text).split()) for texts in doc.values() for text in texts}


def test_measured_figures_are_quoted_from_figures_json_not_typed_in():
    allowed = _unmeasured(CONTENT)
    typed = [(where, lit) for where, text in _raw_texts(CONTENT) for lit in literal_figures(text) if lit not in allowed]
    assert not typed, (
        "these look like measured figures: quote them as {{fig:NAME}} from figures.json, or list them in "
        f"unmeasured-figures.yaml if they are spec-sheet or worked-example numbers: {typed}"
    )


def test_every_unmeasured_figure_listed_is_still_used():
    used = {lit for _, text in _raw_texts(CONTENT) for lit in literal_figures(text)}
    assert not _unmeasured(CONTENT) - used


def test_the_course_quotes_the_figures_it_was_measured_for():
    texts = "\n".join(text for _, text in _raw_texts(CONTENT))
    for name in ("bias_gelu_16384x8192_compile_pct_copy", "probe_swiglu_64x8192_compile_wall_us", "copy_roof_tbps"):
        assert "{{fig:" + name + "}}" in texts


@pytest.mark.skipif(
    not ORIGINALITY_TOOL.exists(),
    reason=f"{ORIGINALITY_TOOL} is not beside the repo (it lives in the shared workspace, not in git)",
)
def test_course_content_does_not_repeat_the_reference_material():
    result = subprocess.run(
        [sys.executable, str(ORIGINALITY_TOOL), "quizzes/content"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:]
