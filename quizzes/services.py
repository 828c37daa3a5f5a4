"""Writes to content: loading a course folder into the database and editing cards.

Every write path (the load_course command, admin, the API) goes through here, so edits are
always recorded and rendered markdown is always sanitized.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from quizzes.card_kinds import KIND_FIELDS
from quizzes.course_files import CourseData, read_course_dir
from quizzes.models import Card, CardEdit, Course, Lesson, Section, Topic

# Card columns compared (and recorded) when a card changes.
TRACKED_COLUMNS = (
    "kind",
    "prompt",
    "answer",
    "explanation",
    "common_wrong_answer",
    "key_points",
    "choices",
    "numeric_answer",
    "unit",
    "tolerance",
    "reversible",
    "retired",
)


@dataclass
class LoadReport:
    course: str
    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    not_in_files: list[str] = field(default_factory=list)

    def count(self, bucket: str, what: str) -> None:
        counts = getattr(self, bucket)
        counts[what] = counts.get(what, 0) + 1

    def summary(self) -> str:
        def fmt(counts: dict[str, int]) -> str:
            return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing"

        lines = [
            f"course {self.course}: created {fmt(self.created)}; updated {fmt(self.updated)}; "
            f"unchanged {fmt(self.unchanged)}"
        ]
        if self.not_in_files:
            lines.append(
                f"  kept {len(self.not_in_files)} cards that are not in the files "
                f"(history is never deleted; retire them instead): "
                f"{', '.join(self.not_in_files[:10])}"
            )
        return "\n".join(lines)


def load_course(path: Path) -> LoadReport:
    """Validate a course folder, then load it in one transaction (all or nothing)."""
    return load_course_data(read_course_dir(Path(path)))


@transaction.atomic
def load_course_data(data: CourseData) -> LoadReport:
    report = LoadReport(course=data.course["id"])
    course, created = Course.objects.get_or_create(slug=data.course["id"], defaults={"title": data.course["title"]})
    _apply(course, {"title": data.course["title"], "summary": data.course["summary"]}, created, report, "course")

    topics: dict[str, Topic] = {}
    for pos, t in enumerate(data.topics):
        obj, created = Topic.objects.get_or_create(
            course=course, slug=t["id"], defaults={"title": t["title"], "position": pos}
        )
        _apply(obj, {"title": t["title"], "position": pos}, created, report, "topics")
        topics[t["id"]] = obj

    lessons: dict[str, Lesson] = {}
    lesson_of: dict[str, Lesson] = {}
    for pos, lesson in enumerate(data.lessons):
        obj, created = Lesson.objects.get_or_create(
            course=course, slug=lesson["id"], defaults={"title": lesson["title"], "position": pos}
        )
        _apply(
            obj, {"title": lesson["title"], "summary": lesson["summary"], "position": pos}, created, report, "lessons"
        )
        lessons[lesson["id"]] = obj
        for sid in lesson["sections"]:
            lesson_of[sid] = obj

    sections: dict[str, Section] = {}
    for pos, s in enumerate(data.sections):
        values = {
            "lesson": lesson_of[s["id"]],
            "title": s["title"],
            "body": s["body"],
            "labs": s["labs"],
            "position": pos,
        }
        obj = Section.objects.filter(course=course, slug=s["id"]).first()
        created = obj is None
        if created:
            obj = Section(course=course, slug=s["id"], **values)
        changed = _apply(obj, values, created, report, "sections", count=False)
        topic_changed = _set_m2m(obj.topics, [topics[t] for t in s["topics"]])
        report.count("created" if created else "updated" if changed or topic_changed else "unchanged", "sections")
        sections[s["id"]] = obj

    seen: set[str] = set()
    for pos, c in enumerate(data.cards):
        seen.add(c["id"])
        values = card_values_from_file(c)
        values.update(source_file=c["_file"], position=pos)
        card = Card.objects.filter(course=course, slug=c["id"]).first()
        if card is None:
            card = Card.objects.create(course=course, slug=c["id"], **values)
            card.sections.set([sections[s] for s in c["sections"]])
            card.topics.set([topics[t] for t in c["topics"]])
            report.count("created", "cards")
            continue
        changes = apply_card_values(
            card,
            values=values,
            section_objs=[sections[s] for s in c["sections"]],
            topic_objs=[topics[t] for t in c["topics"]],
            user=None,
            source="file",
        )
        report.count("updated" if changes else "unchanged", "cards")
    report.not_in_files = sorted(
        Card.objects.filter(course=course).exclude(slug__in=seen).values_list("slug", flat=True)
    )
    return report


def card_values_from_file(card: dict[str, Any]) -> dict[str, Any]:
    """Map a card's file keys onto Card columns (kind fields per quizzes.card_kinds)."""
    values: dict[str, Any] = {"kind": card["kind"], "retired": card.get("retired", False)}
    for f in KIND_FIELDS[card["kind"]]:
        values[f.column] = card.get(f.name)
    return values


def apply_card_values(
    card: Card,
    *,
    values: dict[str, Any],
    user=None,
    source: str,
    section_objs: list[Section] | None = None,
    topic_objs: list[Topic] | None = None,
) -> dict[str, list[Any]]:
    """Change a card in place (same id, so review history stays) and record what changed.

    No validation and no save when nothing changed: for values already checked (a course file,
    retiring). Edits typed in by a person go through update_card, which validates them.
    """
    changes: dict[str, list[Any]] = {}
    for column, new in values.items():
        old = getattr(card, column)
        if old != new:
            if column in TRACKED_COLUMNS:
                changes[column] = [old, new]
            setattr(card, column, new)
    if changes or any(card.__dict__.get(c) != values.get(c) for c in ("source_file", "position") if c in values):
        card.save()
    if section_objs is not None:
        old = sorted(card.sections.values_list("slug", flat=True))
        if _set_m2m(card.sections, section_objs):
            changes["sections"] = [old, sorted(s.slug for s in section_objs)]
    if topic_objs is not None:
        old = sorted(card.topics.values_list("slug", flat=True))
        if _set_m2m(card.topics, topic_objs):
            changes["topics"] = [old, sorted(t.slug for t in topic_objs)]
    if changes:
        record_card_edit(card, changes=changes, user=user, source=source)
    return changes


@transaction.atomic
def update_card(*, card: Card, user, changes: dict[str, Any], source: str = "api") -> Card:
    """Edit a card as a person would (e.g. the API): validate, save, and record who changed what.

    `changes` maps Card fields to new values; "sections" and "topics" take Section and Topic
    objects. Raises django's ValidationError ({field: [messages]}) and leaves the card and the
    database as they were when the edit breaks a rule.
    """
    values = dict(changes)
    sections = values.pop("sections", None)
    topics = values.pop("topics", None)
    if sections and any(s.course_id != card.course_id for s in sections):
        raise ValidationError({"sections": "Sections must belong to the card's course."})
    before = card_snapshot(card)
    _set_validated(card, values)
    card.save()
    if sections is not None:
        card.sections.set(sections)
    if topics is not None:
        card.topics.set(topics)
    record_changes_between(card, before, user=user, source=source)
    return card


def _set_validated(card: Card, values: dict[str, Any]) -> None:
    """Set columns on the card and run the model's validation; put them back if it fails."""
    old = {key: getattr(card, key) for key in values}
    for key, value in values.items():
        setattr(card, key, value)
    try:
        card.full_clean(exclude=["course", "sections", "topics"])
    except ValidationError:
        for key, value in old.items():
            setattr(card, key, value)
        raise


def record_card_edit(card: Card, *, changes: dict[str, list[Any]], user, source: str) -> CardEdit:
    return CardEdit.objects.create(card=card, user=user if user and user.pk else None, source=source, changes=changes)


def _apply(obj, values: dict[str, Any], created: bool, report: LoadReport, what: str, count: bool = True) -> bool:
    changed = created
    for key, value in values.items():
        if getattr(obj, key) != value:
            setattr(obj, key, value)
            changed = True
    if changed:
        obj.save()
    if count:
        report.count("created" if created else "updated" if changed else "unchanged", what)
    return changed and not created


def _set_m2m(manager, objs: list) -> bool:
    current = set(manager.values_list("pk", flat=True))
    wanted = {o.pk for o in objs}
    if current == wanted:
        return False
    manager.set(objs)
    return True


def card_snapshot(card: Card) -> dict[str, Any]:
    """The tracked fields of a card, with its sections and topics as sorted ids."""
    snap = {column: getattr(card, column) for column in TRACKED_COLUMNS}
    snap["sections"] = sorted(card.sections.values_list("slug", flat=True))
    snap["topics"] = sorted(card.topics.values_list("slug", flat=True))
    return snap


def record_changes_between(card: Card, before: dict[str, Any], *, user, source: str) -> dict[str, list[Any]]:
    """Record the difference between a snapshot taken before an edit and the card now."""
    after = card_snapshot(card)
    changes = {k: [before[k], after[k]] for k in after if before.get(k) != after[k]}
    if changes:
        record_card_edit(card, changes=changes, user=user, source=source)
    return changes


def set_retired(cards, *, retired: bool, user, source: str) -> int:
    """Retire (hide from new reviews, keep history) or bring back cards. Returns how many changed."""
    changed = 0
    for card in cards:
        if card.retired != retired:
            apply_card_values(card, values={"retired": retired}, user=user, source=source)
            changed += 1
    return changed
