"""Export a course from the database: back to course files, to CSV, and to an Anki .apkg.

Explanations go back to the course files only; CSV and .apkg hold cards.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
from pathlib import Path
from typing import Any

import genanki

from quizzes.card_kinds import CONTENT_COLUMNS, DEFAULT_FILE, KIND_FIELDS
from quizzes.course_files import DEFAULT_EXPLANATIONS_FILE, CourseData
from quizzes.models import Card, Course, Explanation


def course_to_data(course: Course) -> CourseData:
    """The course as plain data, in the shape the course files have."""
    lessons = list(course.lessons.order_by("position").prefetch_related("sections"))
    sections = []
    lesson_docs = []
    for lesson in lessons:
        secs = list(lesson.sections.order_by("position").prefetch_related("topics"))
        lesson_docs.append(
            {"id": lesson.slug, "title": lesson.title, "summary": lesson.summary, "sections": [s.slug for s in secs]}
        )
        for s in secs:
            sections.append(
                {
                    "id": s.slug,
                    "title": s.title,
                    "topics": [t.slug for t in s.topics.all()],
                    "labs": list(s.labs),
                    "body": s.body,
                }
            )
    cards = [
        card_to_data(c)
        for c in course.cards.order_by("source_file", "position", "id").prefetch_related("sections", "topics")
    ]
    explanations = [
        explanation_to_data(e)
        for e in course.explanations.order_by("source_file", "position", "id").prefetch_related("sections", "cards")
    ]
    return CourseData(
        course={"id": course.slug, "title": course.title, "summary": course.summary},
        topics=[{"id": t.slug, "title": t.title} for t in course.topics.order_by("position")],
        lessons=lesson_docs,
        sections=sections,
        cards=cards,
        explanations=explanations,
    )


def card_to_data(card: Card) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": card.slug,
        "kind": card.kind,
        "sections": [s.slug for s in sorted(card.sections.all(), key=lambda s: s.position)],
        "topics": [t.slug for t in sorted(card.topics.all(), key=lambda t: t.position)],
        "retired": card.retired,
    }
    for f in KIND_FIELDS[card.kind]:
        data[f.name] = getattr(card, f.column)
    data["_file"] = card.source_file or DEFAULT_FILE[card.kind]
    return data


def explanation_to_data(explanation: Explanation) -> dict[str, Any]:
    """An explanation as the course files have it (quizzes.course_files.EXPLANATION_KEYS)."""
    return {
        "id": explanation.slug,
        "question": explanation.question,
        "paraphrases": list(explanation.paraphrases),
        "answer": explanation.answer,
        "sections": [s.slug for s in sorted(explanation.sections.all(), key=lambda s: s.position)],
        "cards": [c.slug for c in sorted(explanation.cards.all(), key=lambda c: c.position)],
        "lab": explanation.lab,
        "retired": explanation.retired,
        "_file": explanation.source_file or DEFAULT_EXPLANATIONS_FILE,
    }


CSV_COLUMNS = ["id", "kind", "sections", "topics", "retired", *CONTENT_COLUMNS]
# A cell starting with one of these is a formula to Excel, LibreOffice and Google Sheets (OWASP's list).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A text cell that a spreadsheet will show as text: one starting like a formula gets a leading `'`."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def course_to_csv(course: Course) -> str:
    """One row per card; list fields joined with ' | '; every text cell neutralized by csv_cell."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    for card in course.cards.order_by("source_file", "position").prefetch_related("sections", "topics"):
        row = {
            "id": card.slug,
            "kind": card.kind,
            "sections": " | ".join(s.slug for s in card.sections.all()),
            "topics": " | ".join(t.slug for t in card.topics.all()),
            "retired": card.retired,
            "prompt": card.prompt,
            "answer": card.answer,
            "explanation": card.explanation,
            "common_wrong_answer": card.common_wrong_answer,
            "key_points": " | ".join(card.key_points),
            "choices": " | ".join(card.choices),
            "numeric_answer": "" if card.numeric_answer is None else card.numeric_answer,
            "unit": card.unit,
            "tolerance": "" if card.tolerance is None else card.tolerance,
            "reversible": card.reversible,
        }
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    return out.getvalue()


# --- Anki ------------------------------------------------------------------------------------

_ANKI_CSS = """.card { font-family: system-ui, sans-serif; font-size: 18px; text-align: left;
color: #1d2330; background: #fff; } .label { color: #667085; font-size: 14px; }
pre, code { background: #f2f4f7; } .wrong { color: #c62828; }"""


def _stable_id(name: str) -> int:
    """Anki model/deck ids must stay the same across exports so re-imports update, not duplicate."""
    return int(hashlib.sha1(name.encode()).hexdigest()[:8], 16) | (1 << 30)


def _model(name: str, fields: list[str], templates: list[tuple[str, str, str]]) -> genanki.Model:
    return genanki.Model(
        _stable_id(f"tilewise-model-{name}"),
        f"Tilewise {name}",
        fields=[{"name": f} for f in fields],
        templates=[{"name": n, "qfmt": q, "afmt": a} for n, q, a in templates],
        css=_ANKI_CSS,
    )


_ANSWER = '{{FrontSide}}<hr id="answer">'
MODELS = {
    "basic": _model("Basic", ["Front", "Back", "Id"], [("Card 1", "{{Front}}", _ANSWER + "{{Back}}")]),
    "basic-reversed": _model(
        "Basic (and reversed)",
        ["Front", "Back", "Id"],
        [("Card 1", "{{Front}}", _ANSWER + "{{Back}}"), ("Card 2", "{{Back}}", _ANSWER + "{{Front}}")],
    ),
    "interview": _model(
        "Interview",
        ["Question", "ModelAnswer", "CommonWrongAnswer", "KeyPoints", "Id"],
        [
            (
                "Answer it",
                '<div class="label">Interview question</div>{{Question}}',
                _ANSWER + '{{ModelAnswer}}<div class="label">Key points</div>{{KeyPoints}}'
                '<div class="label">Common wrong answer</div><div class="wrong">{{CommonWrongAnswer}}</div>',
            )
        ],
    ),
    "predict": _model(
        "Predict",
        ["Question", "Choices", "Answer", "Explanation", "Id"],
        [
            (
                "Predict",
                '<div class="label">Predict first</div>{{Question}}{{Choices}}',
                _ANSWER + "<b>{{Answer}}</b><br>{{Explanation}}",
            )
        ],
    ),
    "numeric": _model(
        "Numeric",
        ["Question", "Answer", "Unit", "Tolerance", "Solution", "Id"],
        [
            (
                "Estimate",
                '<div class="label">Estimate</div>{{Question}}',
                _ANSWER + "<b>{{Answer}} {{Unit}}</b> (within {{Tolerance}})<br>{{Solution}}",
            )
        ],
    ),
    "recall": _model("Recall", ["Prompt", "Answer", "Id"], [("Recall", "{{Prompt}}", _ANSWER + "{{Answer}}")]),
}


def _list_html(items: list[str]) -> str:
    from quizzes.markdown import render_markdown

    return render_markdown("\n".join(f"- {i}" for i in items)) if items else ""


def card_to_note(card: Card) -> genanki.Note:
    """An Anki note of the card. Anki renders fields as HTML, so every field goes in safe: rendered
    markdown through the allow-list again, plain text (unit, numbers, ids) escaped."""
    from quizzes.markdown import sanitize_html

    guid = genanki.guid_for("tilewise", card.course.slug, card.slug)
    prompt, answer, explanation = (
        sanitize_html(h) for h in (card.prompt_html, card.answer_html, card.explanation_html)
    )
    slug = html.escape(card.slug)
    if card.kind == "basic":
        model = MODELS["basic-reversed" if card.reversible else "basic"]
        fields = [prompt, answer, slug]
    elif card.kind == "interview":
        model = MODELS["interview"]
        fields = [prompt, answer, sanitize_html(card.common_wrong_answer_html), _list_html(card.key_points), slug]
    elif card.kind == "predict":
        model = MODELS["predict"]
        fields = [prompt, _list_html(card.choices), answer, explanation, slug]
    elif card.kind == "numeric":
        model = MODELS["numeric"]
        tol = f"±{card.tolerance * 100:g}%" if card.tolerance is not None else ""
        fields = [prompt, f"{card.numeric_answer:g}", html.escape(card.unit), tol, explanation, slug]
    else:
        model = MODELS["recall"]
        fields = [prompt, answer, slug]
    tags = [t.slug for t in card.topics.all()] + [card.kind]
    return genanki.Note(model=model, fields=fields, guid=guid, tags=tags)


def export_apkg(course: Course, path: Path, cards=None) -> int:
    """Write an Anki package of the course's active cards (or the given cards). Returns notes written."""
    deck = genanki.Deck(_stable_id(f"tilewise-deck-{course.slug}"), f"Tilewise::{course.title}")
    if cards is None:
        cards = course.cards.filter(retired=False)
    count = 0
    for card in cards.select_related("course").prefetch_related("topics").order_by("source_file", "position"):
        deck.add_note(card_to_note(card))
        count += 1
    genanki.Package(deck).write_to_file(str(path))
    return count
