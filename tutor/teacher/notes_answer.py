"""Course-notes mode: the answer is assembled from the retrieved passages themselves.

No model writes anything here: the most relevant sentences of the best passages are picked,
kept in their reading order, grouped by source and cited. The answer says so at the top.
"""

from __future__ import annotations

import re

from tutor.teacher.retrieval import Hit, tokenize, weak

LABEL = "*Course-notes mode: assembled from the lesson notes, not written by a language model.*"
SENTENCES = 4

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\"'0-9])")
_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+|^#+\s+")


def source_title(hit: Hit) -> str:
    """How an answer names its source: the section (and subheading); a card is cited by its section."""
    p = hit.passage
    return p.section_title if p.kind == "card" else p.title


def covered(hits: list[Hit]) -> bool:
    """Whether the best passages are about the question (see retrieval.weak: measured on the eval set)."""
    return not weak(hits)


def sentences_of(text: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", text):
        if block.lstrip().startswith(("```", "|")):
            continue  # code and tables do not read as sentences
        flat = " ".join(_MARKUP.sub("", line) for line in block.splitlines())
        # Questions (a card's prompt) do not answer anything; keep statements only.
        out += [s.strip() for s in _SENTENCE.split(flat) if len(s.strip()) > 20 and not s.strip().endswith("?")]
    return out


def pick_sentences(question: str, hits: list[Hit], limit: int = SENTENCES) -> list[tuple[int, str]]:
    """(citation number, sentence) pairs: the sentences sharing most question terms."""
    q = set(tokenize(question))
    scored = []
    for n, hit in enumerate(hits, start=1):
        for pos, sentence in enumerate(sentences_of(hit.passage.text)):
            overlap = len(q & set(tokenize(sentence)))
            if overlap:
                scored.append((overlap, -n, -pos, n, pos, sentence))
    best = sorted(scored, reverse=True)[:limit]
    return [(n, s) for *_, n, pos, s in sorted(best, key=lambda t: (t[3], t[4]))]


def compose(question: str, hits: list[Hit], *, hint: bool, check_question: str | None, context: str = "") -> str:
    """`context`: a lab run's numbers when the question is asked from one; quoted as measured."""
    if context:
        run_block = "\n".join(f"> {line}" for line in context.splitlines())
        lesson = compose(question, hits, hint=hint, check_question=check_question)
        return (
            f"{LABEL}\n\n**Your lab run, as measured:**\n\n{run_block}\n\n**What the lesson says about it:**"
            + lesson.removeprefix(LABEL)
        )
    if not covered(hits):
        nearest = ", ".join(dict.fromkeys(h.passage.section_title for h in hits[:2]))
        return f"{LABEL}\n\nThe course does not cover this question." + (
            f" The nearest sections are {nearest}." if nearest else ""
        )
    if hint:
        return (
            f"{LABEL}\n\n**Hint** (the answer stays hidden until you review this card): re-read "
            f"*{source_title(hits[0])}* [1], then try to answer in your own words."
        )
    parts = [LABEL]
    current = None
    for n, sentence in pick_sentences(question, hits):
        if n != current:
            parts.append(f"\n**{source_title(hits[n - 1])}** [{n}]")
            current = n
        parts.append(f"- {sentence}")
    if current is None:
        parts.append(f"See *{source_title(hits[0])}* [1].")
    if check_question:
        parts.append(f"\n**Check yourself:** {check_question}")
    return "\n".join(parts).strip()
