"""What a learner's message tells and what it asks.

"I captured my decode step in a CUDA graph. What rule did I break and how do engines deal with it?" tells one
thing (its statements, the context) and asks two. The answer plan answers each thing asked, and the course
vocabulary does not count a plain word the learner only uses in telling their situation as a subject.
"""

from __future__ import annotations

import re

from tutor.teacher.retrieval import tokenize

_QUESTION_WORD = r"what|how|why|when|where|which|who|whether|is|are|does|do|did|can|could|should|will|would"
_ASKS = re.compile(rf"^\W*(?:{_QUESTION_WORD}|explain|tell\s+me|describe|walk\s+me)\b", re.IGNORECASE)
# Where one sentence starts asking a second thing: "What rule did I break and how do engines deal with it?"
_SECOND_ASK = re.compile(rf"[,;]?\s+(?:and|also|plus|but)\s+(?=(?:{_QUESTION_WORD})\b)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def parts_by_sentence(message: str) -> list[tuple[str, list[str] | None]]:
    """Each sentence of the message with the things it asks, in order: None for a statement, and a question
    sentence split where it starts asking a second thing."""
    out: list[tuple[str, list[str] | None]] = []
    for sentence in _SENTENCE_END.split(message.strip()):
        asked = None
        if sentence.endswith("?") or _ASKS.match(sentence):
            asked = [part.strip() for part in _SECOND_ASK.split(sentence) if tokenize(part)]
        out.append((sentence, asked))
    return out


def question_parts(message: str) -> tuple[str, list[str]]:
    """A message's context (its statements: "I captured my decode step in a CUDA graph.") and the things it
    asks, in order."""
    by_sentence = parts_by_sentence(message)
    context = " ".join(sentence for sentence, asked in by_sentence if sentence and asked is None)
    return context, [part for _, asked in by_sentence for part in asked or ()]


def told_not_asked(word: str, message: str) -> bool:
    """Whether the message uses `word` only in what it tells (its statements), not in what it asks."""
    context, asked = question_parts(message)
    used = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
    return bool(asked) and bool(used.search(context)) and not any(used.search(part) for part in asked)
