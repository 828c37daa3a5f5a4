"""What the teacher quotes from a lesson: a passage's statements, its opening, and the two sentences that
best support an explanation.

A quote is prose only: no code, table, heading, list marker or question, and no sentence that only points at
what follows it ("... keeps three values:") or opens on a pronoun whose antecedent it leaves behind.
"""

from __future__ import annotations

import functools
import re

from quizzes.models import Explanation
from tutor.teacher import explanation_match
from tutor.teacher.retrieval import Hit, Passage, get_index, tokenize

_CODE = re.compile(r"```.*?```", re.S)
_POINTS_BELOW = re.compile(
    r"\b(?:figures|numbers|values|the\s+table|the\s+list|the\s+code)\s+below\b"
    r"|\b(?:the|this)\s+(?:table|figure|list|example)\s+(?:above|shows)\b|\bas\s+the\s+(?:table|figure)\s+shows\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\"'0-9])")


_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


def _list_items_punctuated(lines: list[str]) -> list[str]:
    """The lines without their list markers or indents, each list item that ends without punctuation closed with
    ";" (the last one with "."), so that items read as one sentence once the lines are joined. An item runs
    from its marker to the next marker or the end of the block: its last line is the one closed, not the first
    line of an item that goes on ("... several ops" / "in one kernel, which ...")."""
    starts = [i for i, line in enumerate(lines) if _LIST_MARKER.match(line)]
    ends = {(nxt - 1 if nxt is not None else len(lines) - 1) for nxt in [*starts[1:], None]} if starts else set()
    last = max(ends, default=-1)
    out = []
    for i, line in enumerate(lines):
        text = _LIST_MARKER.sub("", line).strip()
        if i in ends and text and text[-1] not in ".;:,!?":
            text += "." if i == last else ";"
        out.append(text)
    return out


def statements(text: str) -> list[str]:
    return [s for paragraph in statements_by_paragraph(text) for s in paragraph]


def statements_by_paragraph(text: str) -> list[list[str]]:
    """The statements of each prose paragraph, in order (see statements)."""
    out = []
    for block in re.split(r"\n\s*\n", _CODE.sub("", text)):
        stripped = block.strip()
        if not stripped or stripped.startswith(("|", "#", ">")):
            continue
        flat = " ".join(_list_items_punctuated(stripped.splitlines()))
        # Not a question, nor a sentence that only introduces what follows it ("... keeps three values:",
        # "Figures below are for an H100") or points at a table: out of its place it points at nothing.
        out.append(
            [
                s.strip()
                for s in _SENTENCE.split(flat)
                if len(s.strip()) > 20 and not s.strip().endswith(("?", ":")) and not _POINTS_BELOW.search(s)
            ]
        )
    return out


def prose(hit: Hit) -> list[str]:
    """The statements of a passage's prose, in order: no code, tables, list markers or questions. A card's
    text starts with its prompt, so for a card hit the lesson chunk next to it is read instead."""
    p = hit.passage
    text = p.text if p.kind == "section" else (hit.section_chunk.text if hit.section_chunk else "")
    return statements(text)


def opening(hit: Hit) -> str:
    """The passage's own opening (two sentences): what a fallback answer quotes."""
    return " ".join(prose(hit)[:2])


@functools.lru_cache(maxsize=4096)
def terms_of(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


@functools.lru_cache(maxsize=1024)
def _windows(text: str) -> tuple[tuple[str, frozenset[str], bool], ...]:
    """A passage's quotable windows (two consecutive statements), with their terms and whether they hold a
    number: computed once per passage text, since every explanation answer reads them."""
    sentences = statements(text)
    # A window never opens on a pronoun whose antecedent it leaves behind ("It is a property of ...").
    starts = [i for i in range(max(1, len(sentences) - 1)) if sentences and not _DANGLING.match(sentences[i])]
    windows = (" ".join(sentences[i : i + 2]) for i in starts)
    return tuple((w, terms_of(w), bool(re.search(r"\d", w))) for w in windows if w)


_DANGLING = re.compile(r"^(?:it|its|this|that|these|those|they|their|such|both|so|then|here)\b", re.I)


# A quote must be about as close in meaning to the question as the explanation itself is: further than this
# below it, the sentences share the question's words but not its point (measured on the dev split's answers).
QUOTE_SLACK = 0.10


def window_vectors(course_slug: str) -> dict[str, object]:
    """Every quotable window of the course's lessons as a MiniLM vector: kept on the passage index (rebuilt
    with it when a section changes) and on disk."""
    from tutor.teacher.embeddings import cached_vectors

    idx = get_index(course_slug)
    if idx._quote_vectors is None:
        with idx._lock:
            if idx._quote_vectors is None:
                windows = [w for p in idx.passages if p.kind == "section" for w, _, _ in _windows(p.text)]
                windows = list(dict.fromkeys(windows))
                vectors = cached_vectors(windows, "lesson-windows", course_slug)
                idx._quote_vectors = dict(zip(windows, vectors, strict=True))
    return idx._quote_vectors


def section_closeness(question: str, course_slug: str) -> dict[str, float]:
    """Each section's closeness in meaning to the question: the MiniLM cosine of its closest lesson passage. Empty
    without MiniLM."""
    if not explanation_match.paraphrase_vote_available() or not question.strip():
        return {}
    from tutor.teacher.embeddings import passage_matrix

    idx = get_index(course_slug)
    sims = (passage_matrix(idx) @ explanation_match.question_vector(question)).tolist()
    best: dict[str, float] = {}
    for passage, sim in zip(idx.passages, sims, strict=True):
        if passage.kind == "section":
            best[passage.section_slug] = max(sim, best.get(passage.section_slug, -1.0))
    return best


def supporting_quote(query: str, explanation: Explanation, course_slug: str) -> tuple[Hit | None, str]:
    """Two consecutive sentences of the lesson, in a section the explanation rests on, that say something the
    question asks and the explanation does not (they hold some of its other terms, weighted by rarity; a number
    when the question asks "how much"). Of those, the closest in meaning to the question, and only if it is
    nearly as close as the explanation itself (QUOTE_SLACK): sentences that share a word or two with the
    question but not its point ("different warps" for a bank-conflict sentence) are not a quote. None when
    nothing qualifies: the explanation then stands alone. Without MiniLM, the window that adds most."""
    idx = get_index(course_slug)
    asked = set(tokenize(query))
    said = terms_of(explanation.answer)
    # The learner's own numbers (sizes, counts) are not what a lesson sentence answers with: "32 numbers"
    # is not "32 KiB".
    weights = idx.term_weights(sorted(t for t in asked - said if not t.replace(".", "").isdigit()))
    wants_number = explanation_match.question_kind(query) == "quantity" and not re.search(r"\d", explanation.answer)
    sections = {s.slug for s in explanation.sections.all()}
    candidates: list[tuple[float, Passage, str]] = []
    for passage in idx.passages:
        if passage.kind != "section" or passage.section_slug not in sections:
            continue
        for window, terms, has_number in _windows(passage.text):
            gain = sum(w for t, w in weights.items() if t in terms)
            if wants_number and has_number:
                gain *= 1.5
            if gain > 0:
                candidates.append((gain, passage, window))
    if not candidates:
        return None, ""
    if not explanation_match.paraphrase_vote_available():
        gain, passage, window = max(candidates, key=lambda c: c[0])
        return Hit(passage, gain), window
    question = explanation_match.question_vector(query)
    answer = explanation_match.get_index(course_slug).answer_vectors()[explanation.pk]
    floor = float(answer @ question) - QUOTE_SLACK
    vectors = window_vectors(course_slug)
    close = [(float(vectors[window] @ question), gain, passage, window) for gain, passage, window in candidates]
    close = [c for c in close if c[0] >= floor]
    if not close:
        return None, ""
    _, gain, passage, window = max(close, key=lambda c: (c[0], c[1]))
    return Hit(passage, gain), window


def readable_passage(hits: list[Hit], near: list) -> Hit | None:
    """The passage to quote: the best one in a section of the closest explanation, else the best one."""
    readable = [h for h in hits if prose(h)]
    if near:
        idx = explanation_match.get_index(hits[0].passage.course_slug) if hits else None
        sections = {s.slug for s in idx.explanations[near[0].explanation_id].sections.all()} if idx else set()
        for hit in readable:
            if hit.passage.section_slug in sections:
                return hit
    return readable[0] if readable else None
