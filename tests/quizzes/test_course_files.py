import shutil
from pathlib import Path

import pytest
import yaml

from quizzes.course_files import MAX_FILE_BYTES, CourseLoadError, read_course_dir
from tests.conftest import CONTENT


@pytest.fixture
def course_dir(tmp_path) -> Path:
    target = tmp_path / "cuda-kernels-fusion"
    shutil.copytree(CONTENT, target)
    return target


def _edit_cards(course_dir: Path, name: str, edit) -> None:
    path = course_dir / "cards" / name
    doc = yaml.safe_load(path.read_text())
    edit(doc["cards"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


def _errors(course_dir: Path) -> str:
    with pytest.raises(CourseLoadError) as info:
        read_course_dir(course_dir)
    return str(info.value)


def test_the_shipped_course_meets_the_syllabus():
    data = read_course_dir(CONTENT)
    kinds = [c["kind"] for c in data.cards]
    assert len(data.sections) >= 14
    assert len([c for c in data.cards if not c["retired"]]) >= 190
    glossary = [c for c in data.cards if c["kind"] == "basic" and c.get("reversible")]
    assert len(glossary) >= 35
    for kind in ("interview", "predict", "numeric"):
        assert kinds.count(kind) >= 15, kind
    assert kinds.count("recall") >= 1
    assert {s["id"] for s in data.sections} >= {
        "kernels-launch-cost",
        "memory-hierarchy",
        "fusion",
        "cuda-graphs",
        "flashattention",
        "roofline",
        "memory-wall",
        "paged-kv",
        "warps-shuffles-banks",
        "pipelining-async-copies",
        "prefill-vs-decode",
        "multi-gpu",
        "fusion-in-practice",
        "tensor-cores",
        "decode-bytes",
        "serving-scheduler",
    }


def test_every_section_is_practised_by_some_card():
    data = read_course_dir(CONTENT)
    used = {s for c in data.cards for s in c["sections"]}
    assert used == {s["id"] for s in data.sections}


def test_interview_cards_carry_a_rubric_and_numeric_cards_a_worked_solution():
    data = read_course_dir(CONTENT)
    for card in data.cards:
        if card["kind"] == "interview":
            assert 3 <= len(card["key_points"]) <= 6, card["id"]
            assert card["common_wrong_answer"], card["id"]
        if card["kind"] == "numeric":
            assert card["solution"].count("\n") >= 1, card["id"]
            assert card["unit"] and card["tolerance"] > 0, card["id"]


def test_malformed_yaml_names_the_file(course_dir):
    (course_dir / "cards" / "recall.yaml").write_text("cards:\n  - id: [unclosed\n")
    assert "cuda-kernels-fusion/cards/recall.yaml: invalid YAML" in _errors(course_dir)


def test_unknown_kind_names_file_card_and_field(course_dir):
    def edit(cards):
        cards[0]["kind"] = "essay"

    _edit_cards(course_dir, "recall.yaml", edit)
    first = yaml.safe_load((course_dir / "cards" / "recall.yaml").read_text())["cards"][0]["id"]
    assert f"cards/recall.yaml: card {first}: field 'kind': unknown kind 'essay'" in _errors(course_dir)


def _first_choice_card(cards):
    return next(c for c in cards if c.get("choices"))


@pytest.mark.parametrize(
    "name, edit, message",
    [
        (
            "interview.yaml",
            lambda cards: cards[0].pop("common_wrong_answer"),
            "field 'common_wrong_answer': is required",
        ),
        ("glossary.yaml", lambda cards: cards[0].update(bakc="typo"), "field 'bakc': unknown field"),
        (
            "numeric.yaml",
            lambda cards: cards[0].update(sections=["no-such-section"]),
            "field 'sections': unknown id 'no-such-section'",
        ),
        (
            "predict.yaml",
            lambda cards: _first_choice_card(cards).update(answer="something else"),
            "field 'answer': must be one of the choices",
        ),
        ("numeric.yaml", lambda cards: cards[0].update(answer="about a gigabyte"), "field 'answer': must be a number"),
    ],
    ids=[
        "missing required field",
        "misspelt field rejected not ignored",
        "unknown section reference",
        "predict answer not among the choices",
        "numeric answer not a number",
    ],
)
def test_a_bad_card_field_is_named(course_dir, name, edit, message):
    _edit_cards(course_dir, name, edit)
    assert message in _errors(course_dir)


def test_duplicate_card_ids_across_files_are_rejected(course_dir):
    glossary_id = yaml.safe_load((course_dir / "cards" / "glossary.yaml").read_text())["cards"][0]["id"]

    def edit(cards):
        cards[0]["id"] = glossary_id

    _edit_cards(course_dir, "recall.yaml", edit)
    assert f"card {glossary_id}: field 'id': duplicate card id (also in" in _errors(course_dir)


def test_yaml_bomb_is_refused(course_dir):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    (course_dir / "cards" / "bomb.yaml").write_text(bomb)
    assert "YAML aliases/anchors are not allowed" in _errors(course_dir)


def test_duplicate_keys_in_a_mapping_are_refused(course_dir):
    (course_dir / "cards" / "dup.yaml").write_text(
        "cards:\n  - id: x-dup\n    kind: recall\n    prompt: a\n    prompt: b\n    answer: c\n    sections: [fusion]\n"
    )
    assert "duplicate key 'prompt'" in _errors(course_dir)


def test_huge_file_is_refused_before_parsing(course_dir):
    (course_dir / "cards" / "huge.yaml").write_text("cards: []\n" + "#" * (MAX_FILE_BYTES + 10))
    assert f"the limit is {MAX_FILE_BYTES}" in _errors(course_dir)


def test_python_object_tags_are_refused(course_dir):
    (course_dir / "cards" / "evil.yaml").write_text("cards: !!python/object/apply:os.system ['true']\n")
    assert "invalid YAML" in _errors(course_dir)


def test_all_errors_are_reported_at_once(course_dir):
    def edit(cards):
        cards[0]["kind"] = "essay"
        cards[1]["sections"] = []

    _edit_cards(course_dir, "recall.yaml", edit)
    message = _errors(course_dir)
    assert "unknown kind" in message and "needs at least one id" in message


@pytest.mark.parametrize("nesting", ["[" * 50_000, "a:\n" + "".join(" " * i + "a:\n" for i in range(1, 1000))])
def test_yaml_nested_thousands_of_levels_deep_is_one_line_error_not_a_traceback(course_dir, nesting):
    import subprocess
    import sys

    (course_dir / "cards" / "deep.yaml").write_text(nesting)
    assert "cuda-kernels-fusion/cards/deep.yaml: invalid YAML: nested more than" in _errors(course_dir)
    proc = subprocess.run(
        [sys.executable, "manage.py", "load_course", str(course_dir)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert "deep.yaml: invalid YAML: nested more than" in proc.stderr
