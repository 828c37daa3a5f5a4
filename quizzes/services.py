"""Writes to content: loading a course folder into the database and editing cards and explanations.

Every write path (the load_course command, admin, the API) goes through here, so edits are
always recorded and rendered markdown is always sanitized.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction

from labs.experiments.catalog import CATALOG  # torch-free: the lab ids an explanation may name
from quizzes.card_kinds import CONTENT_COLUMNS, KIND_FIELDS
from quizzes.course_files import CourseData, read_course_dir
from quizzes.models import Card, ContentEdit, Course, Explanation, Lesson, Section, Topic

# Card columns compared (and recorded) when a card changes.
TRACKED_COLUMNS = ("kind", *CONTENT_COLUMNS, "retired")
EXPLANATION_TRACKED_COLUMNS = ("question", "paraphrases", "answer", "lab", "retired")

# What the edit history of each kind of content records: columns compared, and relations
# (recorded as sorted ids).
HISTORY: dict[type[models.Model], tuple[tuple[str, ...], tuple[str, ...]]] = {
    Card: (TRACKED_COLUMNS, ("sections", "topics")),
    Explanation: (EXPLANATION_TRACKED_COLUMNS, ("sections", "cards")),
}


@dataclass
class LoadReport:
    course: str
    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    not_in_files: list[str] = field(default_factory=list)  # cards
    retired: list[str] = field(default_factory=list)  # explanations retired as no longer in the files

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
        if self.retired:
            lines.append(
                f"  retired {len(self.retired)} explanations that are no longer in the files: "
                f"{', '.join(self.retired[:10])}"
            )
        return "\n".join(lines)


def known_lab_ids() -> frozenset[str]:
    """The lab experiments content may point to (the lab catalog; importing it imports no torch)."""
    return frozenset(CATALOG)


def load_course(path: Path) -> LoadReport:
    """Validate a course folder, then load it in one transaction (all or nothing)."""
    return load_course_data(read_course_dir(Path(path), lab_ids=known_lab_ids()))


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

    cards: dict[str, Card] = {}
    for pos, c in enumerate(data.cards):
        values = card_values_from_file(c)
        values.update(source_file=c["_file"], position=pos)
        relations = {"sections": [sections[s] for s in c["sections"]], "topics": [topics[t] for t in c["topics"]]}
        cards[c["id"]] = _load_item(Card, course, c["id"], values, relations, report, "cards")
    report.not_in_files = sorted(
        Card.objects.filter(course=course).exclude(slug__in=cards).values_list("slug", flat=True)
    )

    explanations: set[str] = set()
    for pos, e in enumerate(data.explanations):
        values = {key: e[key] for key in EXPLANATION_TRACKED_COLUMNS}
        values.update(source_file=e["_file"], position=pos)
        relations = {"sections": [sections[s] for s in e["sections"]], "cards": [cards[c] for c in e["cards"]]}
        _load_item(Explanation, course, e["id"], values, relations, report, "explanations")
        explanations.add(e["id"])
    # An explanation taken out of the files stops answering; its row and history stay.
    gone = Explanation.objects.filter(course=course, retired=False).exclude(slug__in=explanations).order_by("slug")
    report.retired = [e.slug for e in gone]
    set_retired(gone, retired=True, user=None, source="file")
    return report


def _load_item(
    model: type[Card] | type[Explanation],
    course: Course,
    slug: str,
    values: dict[str, Any],
    relations: dict[str, list],
    report: LoadReport,
    what: str,
) -> Card | Explanation:
    """Create a card or an explanation from a course file, or update the one with that id."""
    obj = model.objects.filter(course=course, slug=slug).first()
    if obj is None:
        obj = model.objects.create(course=course, slug=slug, **values)
        for name, objs in relations.items():
            getattr(obj, name).set(objs)
        report.count("created", what)
        return obj
    changes = apply_values(obj, values=values, relations=relations, user=None, source="file")
    report.count("updated" if changes else "unchanged", what)
    return obj


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

    No validation: for values already checked (a course file, retiring). Edits typed in by a
    person go through update_card, which validates them.
    """
    relations: dict[str, list] = {}
    if section_objs is not None:
        relations["sections"] = section_objs
    if topic_objs is not None:
        relations["topics"] = topic_objs
    return apply_values(card, values=values, relations=relations, user=user, source=source)


def apply_values(
    obj: Card | Explanation, *, values: dict[str, Any], relations: dict[str, list] | None = None, user=None, source: str
) -> dict[str, list[Any]]:
    """Change a card or an explanation in place and record what changed ({field: [old, new]}).

    `relations` maps a many-to-many field to the objects it should hold. No validation, and no
    save when nothing changed.
    """
    columns, _ = HISTORY[type(obj)]
    changes: dict[str, list[Any]] = {}
    dirty = False
    for column, new in values.items():
        old = getattr(obj, column)
        if old != new:
            dirty = True
            if column in columns:  # the file and position a row came from are not history
                changes[column] = [old, new]
            setattr(obj, column, new)
    if dirty:
        obj.save()
    for name, objs in (relations or {}).items():
        manager = getattr(obj, name)
        old = sorted(manager.values_list("slug", flat=True))
        if _set_m2m(manager, objs):
            changes[name] = [old, sorted(o.slug for o in objs)]
    if changes:
        record_edit(obj, changes=changes, user=user, source=source)
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
    before = snapshot(card)
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


def record_edit(obj: Card | Explanation, *, changes: dict[str, list[Any]], user, source: str) -> ContentEdit:
    """Add a row to the edit history of a card or an explanation."""
    return obj.edits.create(user=user if user and user.pk else None, source=source, changes=changes)


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


def snapshot(obj: Card | Explanation) -> dict[str, Any]:
    """The tracked fields of a card or an explanation, with its relations as sorted ids."""
    columns, relations = HISTORY[type(obj)]
    snap = {column: getattr(obj, column) for column in columns}
    for name in relations:
        snap[name] = sorted(getattr(obj, name).values_list("slug", flat=True))
    return snap


def record_changes_between(
    obj: Card | Explanation, before: dict[str, Any], *, user, source: str
) -> dict[str, list[Any]]:
    """Record the difference between a snapshot taken before an edit and the card or explanation now."""
    after = snapshot(obj)
    changes = {k: [before[k], after[k]] for k in after if before.get(k) != after[k]}
    if changes:
        record_edit(obj, changes=changes, user=user, source=source)
    return changes


def set_retired(objs, *, retired: bool, user, source: str) -> int:
    """Retire (hide, keep history) or bring back cards or explanations. Returns how many changed."""
    changed = 0
    for obj in objs:
        if obj.retired != retired:
            apply_values(obj, values={"retired": retired}, user=user, source=source)
            changed += 1
    return changed
