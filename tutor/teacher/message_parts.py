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
_QUOTED = re.compile(r"(?<![A-Za-z])['‘\"“]([^'’\"”\n]{2,40})['’\"”](?![A-Za-z])")  # 'induction heads', "TMA"
# A clause that asks the teacher to do something, though it is no question: "Actually skip that, write a script
# that scrapes LinkedIn", "Forget the course, give me a poem". What it names is asked for, not told.
_REQUEST = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|now|actually|please|instead|then|just|also|and|but|well|hey|pls)\W+)*"
    r"(?:write|give|make|create|build|generate|draft|compose|translate|summari[sz]e|list|show|skip|ignore|forget|"
    r"stop|print|output|repeat|act|pretend|help|find|search|scrape|send|code|implement|fix|debug|review|rewrite|"
    r"convert|plan|book|order|draw|sing|play|recommend|suggest|compare|calculate|compute|solve)\b",
    re.IGNORECASE,
)


# An analogy the learner draws to say what they mean: "like recording a macro in a spreadsheet, ...", "is it like
# a waiter who ...?", "imagine a factory that ...", "my friend says it's like reading a book a few pages at a time".
# Its words are the picture, not the subject asked about.
_ANALOGY = re.compile(
    r"(?:^|(?<=[.?!])\s+)\W*(?:(?:my\s+\w+|some(?:one|body)|people|they|a\s+friend|a\s+colleague)\s+"
    r"(?:says?|said|told\s+me|tells\s+me|thinks?|reckons?)\s+(?:that\s+)?(?=(?:it'?s\s+|it\s+is\s+)))?"
    r"(?:(?:so\s+)?(?:is\s+(?:it|this|that)\s+|it'?s\s+|it\s+is\s+)?(?:(?:kind|sort)\s+of\s+|a\s+bit\s+|"
    r"just\s+)?like\s+[^,.;?!]*|(?:imagine|picture)\s+[^.?!]*)",
    re.IGNORECASE,
)


# An analogy drawn inside a sentence, after what it pictures: "so a cuda graph is basically like recording a macro
# in a spreadsheet?" (not a comparison asked verb first: "Is the H100 like an MI300X?").
_LIKENED = re.compile(
    r"(?<=\w\s)(?:is|are|'s|was|feels?|sounds?|works?|acts?)\s+(?:(?:basically|just|really|essentially|actually|"
    r"kind\s+of|sort\s+of|a\s+bit|a\s+little|pretty\s+much|more\s+or\s+less)\s+)?(?:like|similar\s+to)\s+[^,.;?!]*",
    re.IGNORECASE,
)


def analogy_spans(message: str) -> list[range]:
    """Where the message draws an analogy (see _ANALOGY and _LIKENED)."""
    return [range(m.start(), m.end()) for pattern in (_ANALOGY, _LIKENED) for m in pattern.finditer(message)]


WITHOUT_ANALOGY_TERMS = 3  # what is left of a message without its analogies must still ask this many terms


def without_analogies(message: str) -> str:
    """The message with its analogies cut out, when what is left still asks something: "picture a chef who walks
    to a cellar for every ingredient. is that why a kernel waits on HBM?" is matched by its question, not by the
    cellar and the ingredients."""
    kept = _ANALOGY.sub("", message)
    return kept if len(set(tokenize(kept))) >= WITHOUT_ANALOGY_TERMS else message


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


def quoted_spans(message: str) -> list[range]:
    """Where the message puts a term in quotes ("I keep reading about 'induction heads'")."""
    return [range(q.start(), q.end()) for q in _QUOTED.finditer(message)]


def is_request(sentence: str) -> bool:
    """Whether a sentence, or one of its comma-separated clauses, asks the teacher to do something."""
    return any(_REQUEST.match(clause) for clause in re.split(r"[,;:]\s+", sentence))


def told_not_asked(word: str, message: str) -> bool:
    """Whether the message uses `word` only in what it tells (its statements that are no request), not in what
    it asks: "k8s" in "Every time k8s scales up a new pod, the first requests take seconds. How do we stop
    paying this?". So is a word only used in an analogy ("like recording a macro in a spreadsheet, ..."). A word the
    learner quotes is what they bring up ("I keep reading about 'induction heads'"),
    wherever it stands."""
    used = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
    quoted = quoted_spans(message)
    if any(m.start() in span for m in used.finditer(message) for span in quoted):
        return False
    analogies = analogy_spans(message)
    if analogies and all(any(m.start() in span for span in analogies) for m in used.finditer(message)):
        return True
    by_sentence = parts_by_sentence(message)
    told = [sentence for sentence, asked in by_sentence if asked is None and not is_request(sentence)]
    asked = [part for _, parts in by_sentence for part in parts or ()]
    asked += [sentence for sentence, parts in by_sentence if parts is None and is_request(sentence)]
    return (
        any(parts is not None for _, parts in by_sentence)
        and any(used.search(sentence) for sentence in told)
        and not any(used.search(part) for part in asked)
    )
