"""The teacher's evaluation: its splits, and `manage.py teacher_eval` on a set of one's own."""

import io

import pytest
import yaml
from django.conf import settings
from django.core.management import CommandError, call_command

from tutor.teacher.evaluation import SPLITS, load_items

pytestmark = pytest.mark.django_db


def test_every_split_is_shipped_and_no_question_is_in_two():
    items = load_items()
    ids = [i.id for i in items]
    assert len(ids) == len(set(ids))
    assert {i.split for i in items} == set(SPLITS)
    assert all(i.split == "holdout" for i in load_items(split="holdout")) and len(load_items(split="holdout")) >= 60
    for item in items:
        assert item.declined == (item.section is None), item.id
        assert (item.required == []) == (item.declined or item.kind == "hard-course"), item.id
        assert item.kind != "follow-up" or item.previous, item.id


def test_teacher_eval_runs_an_operators_own_set_and_leaves_the_rate_limit_alone(shipped_course, tmp_path):
    path = tmp_path / "mine.yaml"
    questions = [
        {"id": "m1", "split": "test", "kind": "short", "question": "What is a warp?", "section": "warps-shuffles-banks",
         "required": [["32 threads", "32"]]},
        {"id": "m2", "split": "test", "kind": "off-topic", "question": "What is a good banana bread recipe?",
         "section": None, "required": [], "declined": True},
        {"id": "m3", "split": "test", "kind": "hard-course", "question": "What instructions does a warp execute?",
         "section": "warps-shuffles-banks", "required": []},
    ]  # fmt: skip
    path.write_text(yaml.safe_dump({"questions": questions}))
    limit = settings.TEACHER_MESSAGES_PER_MINUTE
    out = io.StringIO()
    call_command("teacher_eval", "--file", str(path), "--split", "test", stdout=out)
    text = out.getvalue()
    assert "3 questions (test)" in text and "mode: course notes" in text
    assert "[ok] m1" in text and "[ok] m2" in text and "[ok] m3" in text
    assert "required facts present (and no forbidden claim): 1/1 (100%)" in text
    assert "off-topic, injection, other-course declined:     1/1 (100%)" in text
    assert "look-alike course questions answered and cited:  1/1 (100%)" in text
    assert settings.TEACHER_MESSAGES_PER_MINUTE == limit


def test_teacher_eval_names_a_missing_file_or_an_empty_split(shipped_course, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("teacher_eval", "--file", str(tmp_path / "nope.yaml"))
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"questions": []}))
    with pytest.raises(CommandError, match="no questions in split 'holdout'"):
        call_command("teacher_eval", "--file", str(path), "--split", "holdout")
