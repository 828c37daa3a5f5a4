"""Read and write a course folder (see quizzes/content/FORMAT.md) as plain data, no database.

Reading validates everything before anything touches the database, and every error names the
file, the card, explanation or section id and the field. YAML is parsed safely, with anchors/aliases
(the "billion laughs" bomb) and duplicate keys rejected, and with size limits on each file.
Measured figures quoted as {{fig:NAME}} are filled in from the course's figures.json while reading
(quizzes.figures), so the data read holds the values, never the placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from quizzes.card_kinds import COMMON_KEYS, KIND_FIELDS, KindField
from quizzes.figures import (
    Figure,
    FigureFileError,
    course_figures,
    fill,
    placeholder_name,
    unknown_figure_message,
)

MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 500
MAX_CARDS = 20_000  # and as many explanations
MAX_TEXT_CHARS = 20_000
ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")
SECTION_FILE_RE = re.compile(r"^(\d{2,3})-([a-z0-9][a-z0-9-]{1,63})\.md$")


@dataclass
class CourseData:
    """A whole course as plain data: what the files say, and what export writes back."""

    course: dict[str, Any]
    topics: list[dict[str, Any]]
    lessons: list[dict[str, Any]]
    sections: list[dict[str, Any]]  # id, title, topics, labs, body (in lesson order)
    cards: list[dict[str, Any]]  # each card's file keys plus "_file"
    explanations: list[dict[str, Any]] = field(default_factory=list)  # EXPLANATION_KEYS plus "_file"


# An explanation: an authored answer to a question learners ask (FORMAT.md, "explanations/*.yaml").
EXPLANATION_KEYS = ("id", "question", "paraphrases", "answer", "sections", "cards", "lab", "retired")
ANSWER_WORDS = (60, 200)
PARAPHRASES = (3, 6)
DEFAULT_EXPLANATIONS_FILE = "explanations.yaml"  # for explanations made outside the files (admin)


def explanation_rule_errors(answer: str, paraphrases: list[Any] | None) -> dict[str, str]:
    """The length rules of an explanation, wherever it is written (course files, admin): {field: message}.

    Words are counted in the markdown source, split on whitespace. An empty answer or a missing
    list (None) is left to the required-field checks.
    """
    errors: dict[str, str] = {}
    words = len(answer.split())
    if answer and not ANSWER_WORDS[0] <= words <= ANSWER_WORDS[1]:
        errors["answer"] = f"is {words} words; write {ANSWER_WORDS[0]} to {ANSWER_WORDS[1]}"
    if paraphrases is not None and not PARAPHRASES[0] <= len(paraphrases) <= PARAPHRASES[1]:
        errors["paraphrases"] = f"has {len(paraphrases)} paraphrases; give {PARAPHRASES[0]} to {PARAPHRASES[1]}"
    return errors


def normalize_text(text: str) -> str:
    """Unix newlines and no surrounding whitespace: how text is stored whatever its source."""
    return text.replace("\r\n", "\n").strip()


@dataclass
class CourseFileError:
    path: str
    message: str
    item: str = ""
    field: str = ""

    def __str__(self) -> str:
        where = self.path
        if self.item:
            where += f": {self.item}"
        if self.field:
            where += f": field '{self.field}'"
        return f"{where}: {self.message}"


@dataclass
class CourseLoadError(Exception):
    errors: list[CourseFileError] = field(default_factory=list)

    def __str__(self) -> str:
        shown = [str(e) for e in self.errors[:30]]
        more = len(self.errors) - len(shown)
        if more > 0:
            shown.append(f"... and {more} more errors")
        return "\n".join(shown)


MAX_YAML_DEPTH = 32  # course files nest a few levels; PyYAML's composer recurses once per level


# libyaml's parser where PyYAML was built with it (parsing the shipped course in pure Python takes seconds).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """SafeLoader that refuses duplicate mapping keys (aliases and deep nesting are refused before it runs,
    by _refuse_aliases_and_deep_nesting)."""

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _refuse_aliases_and_deep_nesting(text: str) -> None:
    """Read the event stream first (libyaml's parser does not recurse): an alias, or nesting deeper than
    MAX_YAML_DEPTH, which would otherwise end in a RecursionError instead of a one-line error, is refused
    before any node is built."""
    depth = 0
    for event in yaml.parse(text, Loader=_SAFE_LOADER):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.constructor.ConstructorError(
                None, None, "YAML aliases/anchors are not allowed", event.start_mark
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise yaml.constructor.ConstructorError(
                    None, None, f"nested more than {MAX_YAML_DEPTH} levels deep", event.start_mark
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def parse_yaml(text: str, path: str) -> Any:
    try:
        _refuse_aliases_and_deep_nesting(text)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise CourseLoadError([CourseFileError(path, f"invalid YAML: {' '.join(str(exc).split())}")]) from None


def _read_text(path: Path, root: Path) -> str:
    rel = str(path.relative_to(root.parent))
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CourseLoadError([CourseFileError(rel, f"file is {size} bytes; the limit is {MAX_FILE_BYTES}")])
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CourseLoadError([CourseFileError(rel, "not UTF-8 text")]) from None


class _Validator:
    def __init__(self, figures: dict[str, Figure] | None = None) -> None:
        self.errors: list[CourseFileError] = []
        self.figures = figures  # the course's measured figures, None without a figures.json

    def error(self, path: str, message: str, item: str = "", field: str = "") -> None:
        self.errors.append(CourseFileError(path, message, item, field))

    def text(self, value: Any, path: str, item: str, name: str, required: bool = True) -> str:
        if value is None or value == "":
            if required:
                self.error(path, "is required", item, name)
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.error(path, f"must be text, got {type(value).__name__}", item, name)
            return ""
        # Same normalisation as Card.save, so a form round trip (which trims) changes nothing.
        text, unknown = fill(normalize_text(str(value)), self.figures)
        for figure in unknown:
            self.error(path, unknown_figure_message(figure, self.figures), item, name)
        if len(text) > MAX_TEXT_CHARS:
            self.error(path, f"is {len(text)} characters; the limit is {MAX_TEXT_CHARS}", item, name)
        return text

    def id_list(self, value: Any, path: str, item: str, name: str, known: set[str], required: bool) -> list[str]:
        if value is None:
            value = []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.error(path, "must be a list of ids", item, name)
            return []
        if required and not value:
            self.error(path, "needs at least one id", item, name)
        for v in value:
            if v not in known:
                self.error(path, f"unknown id {v!r}", item, name)
        return list(value)

    def text_list(self, value: Any, path: str, item: str, name: str) -> list[str]:
        """A non-empty list of texts (a rubric's key points, a prediction's choices, paraphrases)."""
        if not isinstance(value, list) or not value:
            self.error(path, "must be a non-empty list", item, name)
            return []
        return [self.text(x, path, item, name) for x in value]

    def flag(self, value: Any, path: str, item: str, name: str) -> bool:
        """An optional true/false key (absent is false)."""
        if value is not None and not isinstance(value, bool):
            self.error(path, "must be true or false", item, name)
        return value is True

    def check_id(self, value: Any, path: str, item: str = "") -> str:
        if not isinstance(value, str) or not ID_RE.match(value):
            self.error(path, "must be 2-64 lowercase letters, digits or hyphens", item, "id")
            return ""
        return value

    def unknown_keys(self, data: dict, allowed: set[str], path: str, item: str) -> None:
        for key in data:
            if key not in allowed:
                self.error(path, f"unknown field (allowed: {', '.join(sorted(allowed))})", item, str(key))


def read_course_dir(root: Path, *, lab_ids: Collection[str] | None = None) -> CourseData:
    """Parse and validate a course folder; raises CourseLoadError listing every problem.

    `lab_ids` are the lab experiments an explanation may name (quizzes.services passes the lab
    catalog's); without them a lab id is checked for its form only.
    """
    root = Path(root).resolve()
    _check_folder(root)
    v = _Validator(_read_figures(root))
    rel_course = f"{root.name}/course.yaml"
    manifest = _read_manifest(root, rel_course)
    course = _read_course_header(manifest, rel_course, v)
    topics = _read_topics(manifest.get("topics") or [], rel_course, v)
    topic_ids = {t["id"] for t in topics}
    section_files = _section_files(root, v)
    lessons = _read_lessons(manifest.get("lessons") or [], rel_course, section_files, v)
    sections = _read_sections(root, lessons, section_files, topic_ids, v)
    section_ids = {s["id"] for s in sections}
    cards = _read_list_files(
        root, "cards", "card", lambda raw, rel, i: _read_card(raw, rel, i, section_ids, topic_ids, v), v
    )
    card_ids = {c["id"] for c in cards}
    explanations = _read_list_files(
        root,
        "explanations",
        "explanation",
        lambda raw, rel, i: _read_explanation(raw, rel, i, section_ids, card_ids, lab_ids, v),
        v,
    )
    if v.errors:
        raise CourseLoadError(v.errors)
    _sort_tags(topics, sections, cards, explanations)
    return CourseData(
        course=course, topics=topics, lessons=lessons, sections=sections, cards=cards, explanations=explanations
    )


def _check_folder(root: Path) -> None:
    """Refuse a folder without course.yaml, or with more files than a course should have."""
    if not (root / "course.yaml").is_file():
        raise CourseLoadError([CourseFileError(str(root), "no course.yaml in this folder")])
    files = [p for p in root.rglob("*") if p.is_file()]
    if len(files) > MAX_FILES:
        raise CourseLoadError([CourseFileError(str(root), f"{len(files)} files; the limit is {MAX_FILES}")])


def _read_figures(root: Path) -> dict[str, Figure] | None:
    """The course's figures.json and figures-TAG.json (fatal if unreadable: every placeholder depends on them)."""
    try:
        return course_figures(root)
    except FigureFileError as exc:
        rel = f"{root.name}/{exc.file}"
        raise CourseLoadError(
            [
                CourseFileError(rel, message, f"figure {name}" if name else "", field)
                for name, field, message in exc.problems
            ]
        ) from None


def _read_manifest(root: Path, rel_course: str) -> dict[str, Any]:
    """course.yaml as a mapping (fatal if it is not one: nothing else can be checked)."""
    raw = parse_yaml(_read_text(root / "course.yaml", root), rel_course)
    if not isinstance(raw, dict):
        raise CourseLoadError([CourseFileError(rel_course, "must be a mapping with id, title, topics, lessons")])
    return raw


def _read_course_header(raw: dict[str, Any], rel_course: str, v: _Validator) -> dict[str, Any]:
    v.unknown_keys(raw, {"id", "title", "summary", "topics", "lessons"}, rel_course, "course")
    return {
        "id": v.check_id(raw.get("id"), rel_course, "course"),
        "title": v.text(raw.get("title"), rel_course, "course", "title"),
        "summary": v.text(raw.get("summary"), rel_course, "course", "summary", required=False),
    }


def _read_topics(raw_topics: list[Any], rel_course: str, v: _Validator) -> list[dict[str, Any]]:
    topics: list[dict[str, Any]] = []
    for i, t in enumerate(raw_topics):
        item = f"topic #{i + 1}"
        if not isinstance(t, dict):
            v.error(rel_course, "must be a mapping with id and title", item)
            continue
        v.unknown_keys(t, {"id", "title"}, rel_course, item)
        topics.append(
            {
                "id": v.check_id(t.get("id"), rel_course, item),
                "title": v.text(t.get("title"), rel_course, item, "title"),
            }
        )
    _no_duplicates(v, [t["id"] for t in topics], rel_course, "topic")
    return topics


def _read_lessons(
    raw_lessons: list[Any], rel_course: str, section_files: dict[str, tuple[str, Path]], v: _Validator
) -> list[dict[str, Any]]:
    """The lessons in course.yaml; every section file must be listed in exactly one of them."""
    lessons: list[dict[str, Any]] = []
    lesson_of: dict[str, str] = {}  # section id -> lesson id
    for i, raw in enumerate(raw_lessons):
        lesson = _read_lesson(raw, f"lesson #{i + 1}", rel_course, set(section_files), lesson_of, v)
        if lesson is not None:
            lessons.append(lesson)
    if not lessons:
        v.error(rel_course, "needs at least one lesson", "course", "lessons")
    _no_duplicates(v, [lesson["id"] for lesson in lessons], rel_course, "lesson")
    for sid, (path, _) in section_files.items():
        if sid not in lesson_of:
            v.error(path, "section is not listed in any lesson in course.yaml", sid)
    return lessons


def _read_lesson(
    raw: Any, item: str, rel_course: str, section_ids: set[str], lesson_of: dict[str, str], v: _Validator
) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        v.error(rel_course, "must be a mapping", item)
        return None
    v.unknown_keys(raw, {"id", "title", "summary", "sections"}, rel_course, item)
    lid = v.check_id(raw.get("id"), rel_course, item)
    item = f"lesson {lid}" if lid else item
    sec_ids = v.id_list(raw.get("sections"), rel_course, item, "sections", section_ids, required=True)
    for sid in sec_ids:
        if sid in lesson_of:
            v.error(rel_course, f"section {sid!r} is listed in two lessons", item, "sections")
        lesson_of[sid] = lid
    return {
        "id": lid,
        "title": v.text(raw.get("title"), rel_course, item, "title"),
        "summary": v.text(raw.get("summary"), rel_course, item, "summary", required=False),
        "sections": sec_ids,
    }


def _read_sections(
    root: Path,
    lessons: list[dict[str, Any]],
    section_files: dict[str, tuple[str, Path]],
    topic_ids: set[str],
    v: _Validator,
) -> list[dict[str, Any]]:
    """The section files, in the order the lessons list them."""
    return [
        _read_section(root, *section_files[sid], sid, topic_ids, v)
        for lesson in lessons
        for sid in lesson["sections"]
        if sid in section_files
    ]


def _read_list_files(
    root: Path, folder: str, what: str, read_one: Callable[[Any, str, int], dict[str, Any] | None], v: _Validator
) -> list[dict[str, Any]]:
    """Every entry of <folder>/*.yaml (files in name order, each a list under the key `folder`).

    An id is unique across the folder's files; each entry remembers its file ("_file").
    """
    items: list[dict[str, Any]] = []
    first_seen: dict[str, str] = {}  # id -> the file it was first found in
    directory = root / folder
    for path in sorted(directory.glob("*.yaml")) if directory.is_dir() else []:
        rel = f"{root.name}/{folder}/{path.name}"
        for i, raw in enumerate(_list_file_entries(root, path, rel, folder, v)):
            item = read_one(raw, rel, i)
            if item is None:
                continue
            if item["id"] in first_seen:
                v.error(rel, f"duplicate {what} id (also in {first_seen[item['id']]})", f"{what} {item['id']}", "id")
                continue
            first_seen[item["id"]] = rel
            item["_file"] = path.name
            items.append(item)
            if len(items) > MAX_CARDS:
                raise CourseLoadError([CourseFileError(rel, f"more than {MAX_CARDS} {what}s")])
    return items


def _list_file_entries(root: Path, path: Path, rel: str, key: str, v: _Validator) -> list[Any]:
    """The raw entries of one list file; none (with the problem noted) if it cannot be read."""
    try:
        doc = parse_yaml(_read_text(path, root), rel)
    except CourseLoadError as exc:
        v.errors.extend(exc.errors)
        return []
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        v.error(rel, f"must be a mapping with a '{key}' list")
        return []
    v.unknown_keys(doc, {key}, rel, "file")
    return doc[key]


def _sort_tags(
    topics: list[dict[str, Any]],
    sections: list[dict[str, Any]],
    cards: list[dict[str, Any]],
    explanations: list[dict[str, Any]],
) -> None:
    """Tag order carries no meaning: keep ids in course order so that export is lossless."""
    topic_rank = {t["id"]: i for i, t in enumerate(topics)}
    section_rank = {s["id"]: i for i, s in enumerate(sections)}
    card_rank = {c["id"]: i for i, c in enumerate(cards)}
    for s in sections:
        s["topics"] = sorted(dict.fromkeys(s["topics"]), key=topic_rank.__getitem__)
    for c in cards:
        c["topics"] = sorted(dict.fromkeys(c["topics"]), key=topic_rank.__getitem__)
        c["sections"] = sorted(dict.fromkeys(c["sections"]), key=section_rank.__getitem__)
    for e in explanations:
        e["sections"] = sorted(dict.fromkeys(e["sections"]), key=section_rank.__getitem__)
        e["cards"] = sorted(dict.fromkeys(e["cards"]), key=card_rank.__getitem__)


def _no_duplicates(v: _Validator, ids: list[str], path: str, what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            v.error(path, f"duplicate {what} id", f"{what} {i}", "id")
        seen.add(i)


def _section_files(root: Path, v: _Validator) -> dict[str, tuple[str, Path]]:
    found: dict[str, tuple[str, Path]] = {}
    sec_dir = root / "sections"
    for path in sorted(sec_dir.glob("*.md")) if sec_dir.is_dir() else []:
        rel = f"{root.name}/sections/{path.name}"
        m = SECTION_FILE_RE.match(path.name)
        if not m:
            v.error(rel, "section files are named NN-section-id.md")
            continue
        sid = m.group(2)
        if sid in found:
            v.error(rel, f"duplicate section id (also in {found[sid][0]})", sid, "id")
            continue
        found[sid] = (rel, path)
    return found


def _read_section(root: Path, rel: str, path: Path, sid: str, topic_ids: set[str], v: _Validator) -> dict[str, Any]:
    text = _read_text(path, root)
    meta, body = _split_front_matter(text, rel)
    v.unknown_keys(meta, {"id", "title", "topics", "labs"}, rel, f"section {sid}")
    if meta.get("id") != sid:
        v.error(rel, f"front matter id {meta.get('id')!r} does not match the file name", sid, "id")
    labs = meta.get("labs") or []
    if not isinstance(labs, list) or not all(isinstance(x, str) for x in labs):
        v.error(rel, "must be a list of lab ids", f"section {sid}", "labs")
        labs = []
    return {
        "id": sid,
        "title": v.text(meta.get("title"), rel, f"section {sid}", "title"),
        "topics": v.id_list(meta.get("topics"), rel, f"section {sid}", "topics", topic_ids, False),
        "labs": labs,
        "body": v.text(body.strip("\n"), rel, f"section {sid}", "body"),
    }


def _split_front_matter(text: str, rel: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---\n"):
        raise CourseLoadError([CourseFileError(rel, "must start with '---' YAML front matter")])
    end = text.find("\n---\n", 4)
    if end < 0:
        raise CourseLoadError([CourseFileError(rel, "front matter is not closed by a '---' line")])
    meta = parse_yaml(text[4:end], rel)
    if not isinstance(meta, dict):
        raise CourseLoadError([CourseFileError(rel, "front matter must be a mapping")])
    return meta, text[end + 5 :]


def _read_card(
    raw: Any, rel: str, index: int, section_ids: set[str], topic_ids: set[str], v: _Validator
) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        v.error(rel, "must be a mapping", f"card #{index + 1}")
        return None
    cid = v.check_id(raw.get("id"), rel, f"card #{index + 1}")
    if not cid:
        return None
    item = f"card {cid}"
    kind = raw.get("kind")
    if kind not in KIND_FIELDS:
        v.error(rel, f"unknown kind {kind!r} (known: {', '.join(KIND_FIELDS)})", item, "kind")
        return None
    fields = KIND_FIELDS[kind]
    v.unknown_keys(raw, set(COMMON_KEYS) | {f.name for f in fields}, rel, item)
    card: dict[str, Any] = {
        "id": cid,
        "kind": kind,
        "sections": v.id_list(raw.get("sections"), rel, item, "sections", section_ids, True),
        "topics": v.id_list(raw.get("topics"), rel, item, "topics", topic_ids, False),
    }
    card["retired"] = v.flag(raw.get("retired", False), rel, item, "retired")
    for f in fields:
        card[f.name] = _read_kind_field(f, raw.get(f.name), rel, item, v)
    _check_kind_rules(card, rel, item, v)
    return card


def _read_kind_field(f: KindField, value: Any, rel: str, item: str, v: _Validator) -> Any:
    """One of a card's kind fields (quizzes.card_kinds), checked against its type."""
    if f.type in ("markdown", "text"):
        return v.text(value, rel, item, f.name, f.required)
    if f.type == "bool":
        return v.flag(value, rel, item, f.name)
    if f.type == "number":
        if (figure := placeholder_name(value)) is not None:  # a numeric answer may quote a figure
            if v.figures is None or figure not in v.figures:
                v.error(rel, unknown_figure_message(figure, v.figures), item, f.name)
                return None
            return v.figures[figure].number
        if isinstance(value, bool) or not isinstance(value, int | float):
            v.error(rel, "must be a number", item, f.name)
            return None
        return float(value)
    # "list": of texts, e.g. a rubric's key points or a prediction's choices
    if value is None and not f.required:
        return []
    return v.text_list(value, rel, item, f.name)


def _check_kind_rules(card: dict[str, Any], rel: str, item: str, v: _Validator) -> None:
    if card["kind"] == "predict" and card.get("choices"):
        if not 2 <= len(card["choices"]) <= 6:
            v.error(rel, "needs 2 to 6 choices", item, "choices")
        if card["answer"] not in card["choices"]:
            v.error(rel, "must be one of the choices, word for word", item, "answer")
    if card["kind"] == "numeric":
        tol = card.get("tolerance")
        if tol is not None and not 0 < tol <= 1:
            v.error(rel, "must be a relative tolerance above 0 and at most 1 (0.1 = ±10%)", item, "tolerance")


def _read_explanation(
    raw: Any,
    rel: str,
    index: int,
    section_ids: set[str],
    card_ids: set[str],
    lab_ids: Collection[str] | None,
    v: _Validator,
) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        v.error(rel, "must be a mapping", f"explanation #{index + 1}")
        return None
    eid = v.check_id(raw.get("id"), rel, f"explanation #{index + 1}")
    if not eid:
        return None
    item = f"explanation {eid}"
    v.unknown_keys(raw, set(EXPLANATION_KEYS), rel, item)
    explanation = {
        "id": eid,
        "question": v.text(raw.get("question"), rel, item, "question"),
        "paraphrases": v.text_list(raw.get("paraphrases"), rel, item, "paraphrases"),
        "answer": v.text(raw.get("answer"), rel, item, "answer"),
        "sections": v.id_list(raw.get("sections"), rel, item, "sections", section_ids, True),
        "cards": v.id_list(raw.get("cards"), rel, item, "cards", card_ids, False),
        "lab": _read_lab(raw.get("lab"), rel, item, lab_ids, v),
        "retired": v.flag(raw.get("retired"), rel, item, "retired"),
    }
    # A paraphrase list that could not be read has been reported already: count only a good one.
    for name, message in explanation_rule_errors(explanation["answer"], explanation["paraphrases"] or None).items():
        v.error(rel, message, item, name)
    return explanation


def _read_lab(value: Any, rel: str, item: str, lab_ids: Collection[str] | None, v: _Validator) -> str:
    """An optional lab experiment id; checked against `lab_ids` when the caller knows them."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        v.error(rel, f"must be a lab id, got {type(value).__name__}", item, "lab")
        return ""
    if lab_ids is not None and value not in lab_ids:
        v.error(rel, f"unknown lab id {value!r} (known: {', '.join(sorted(lab_ids))})", item, "lab")
    return value


# --- writing ---------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)


def write_course_dir(data: CourseData, root: Path) -> list[Path]:
    """Write a course folder in the same shape read_course_dir reads. Returns the files written."""
    root = Path(root)
    (root / "sections").mkdir(parents=True, exist_ok=True)
    (root / "cards").mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    course_doc: dict[str, Any] = {"id": data.course["id"], "title": data.course["title"]}
    if data.course.get("summary"):
        course_doc["summary"] = data.course["summary"]
    course_doc["topics"] = [{"id": t["id"], "title": t["title"]} for t in data.topics]
    course_doc["lessons"] = []
    for lesson in data.lessons:
        doc = {"id": lesson["id"], "title": lesson["title"]}
        if lesson.get("summary"):
            doc["summary"] = lesson["summary"]
        doc["sections"] = lesson["sections"]
        course_doc["lessons"].append(doc)
    written.append(_write(root / "course.yaml", dump_yaml(course_doc)))

    width = 3 if len(data.sections) >= 100 else 2
    for n, section in enumerate(data.sections, start=1):
        meta: dict[str, Any] = {"id": section["id"], "title": section["title"], "topics": section["topics"]}
        if section.get("labs"):
            meta["labs"] = section["labs"]
        text = f"---\n{dump_yaml(meta)}---\n{section['body'].rstrip()}\n"
        written.append(_write(root / "sections" / f"{n:0{width}d}-{section['id']}.md", text))

    written += _write_list_files(root, "cards", data.cards, card_to_file_keys)
    if data.explanations:  # a course without explanations is written without the folder
        written += _write_list_files(root, "explanations", data.explanations, explanation_to_file_keys)
    return written


def _write_list_files(
    root: Path, folder: str, items: list[dict[str, Any]], to_keys: Callable[[dict[str, Any]], dict[str, Any]]
) -> list[Path]:
    """Write items back to their files ("_file") in <folder>/, each file a list under the key `folder`."""
    (root / folder).mkdir(parents=True, exist_ok=True)
    by_file: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_file.setdefault(item["_file"], []).append(to_keys(item))
    return [_write(root / folder / name, dump_yaml({folder: entries})) for name, entries in sorted(by_file.items())]


def explanation_to_file_keys(explanation: dict[str, Any]) -> dict[str, Any]:
    """An explanation's keys in file order, leaving out `lab` and `retired` when they hold their default."""
    out = {key: explanation[key] for key in ("id", "question", "paraphrases", "answer", "sections", "cards")}
    if explanation.get("lab"):
        out["lab"] = explanation["lab"]
    if explanation.get("retired"):
        out["retired"] = True
    return out


def card_to_file_keys(card: dict[str, Any]) -> dict[str, Any]:
    """A card's keys in file order, leaving out optional fields that hold their default."""
    out: dict[str, Any] = {
        "id": card["id"],
        "kind": card["kind"],
        "sections": card["sections"],
        "topics": card["topics"],
    }
    for f in KIND_FIELDS[card["kind"]]:
        value = card.get(f.name)
        if not f.required and value in (None, False, [], ""):
            continue
        if f.type == "number" and value is not None and float(value).is_integer():
            value = int(value)
        out[f.name] = value
    if card.get("retired"):
        out["retired"] = True
    return out


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
