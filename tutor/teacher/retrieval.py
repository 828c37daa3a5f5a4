"""Retrieval for the teacher: which lesson passages go into the prompt and show as citations.

Passages come from the database, never from the course files directly:

* every Section body is split at its ``##`` subheadings; each chunk keeps
  "Section title — subheading" in front of its text (the heading carries much of the
  meaning of a chunk, so it is indexed together with the text);
* every live (not retired) Card becomes one passage (prompt, answer, explanation, key
  points) linked to its sections, so a card hit still cites a lesson section. The
  database does not keep the order in which a card lists its sections, so a card is
  filed under the earliest of them in course order, and when it is retrieved it is cited
  under whichever of its sections matches the question best (its best chunk's score).

Ranking is BM25 (``rank_bm25.BM25Okapi`` with Lucene's idf) over a tokenizer that keeps
technical tokens whole (``cp.async``, ``__shfl_xor_sync``, ``n²``, ``8192³``, ``bf16``) and also indexes
their parts, folds plurals and a few suffixes, and drops a small list of stopwords.

This module is torch-free on purpose: the web process imports it. The MiniLM embedding
vote lives in ``tutor.teacher.embeddings`` and is only imported when asked for
(``method="hybrid"``/``"embedding"``, or ``TEACHER_EMBEDDINGS=1`` in the
environment) and the bundled MiniLM is installed; otherwise retrieval stays BM25-only.

The index is cached per course and rebuilt when content changes: the cache key is the
count and latest ``updated_at`` of the sections and cards involved and the latest card
edit record (three small aggregate queries per call, about 1 ms on SQLite). Edits through
``.save()`` (admin, API, the course loader) bump ``updated_at``; a bare
``QuerySet.update()`` does not, so call ``invalidate()`` after one.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from quizzes.markdown import heading_anchor

HEADING_SEP = " — "

# --------------------------------------------------------------------------------------
# Passages
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    id: str  # "fusion#when-not-to-fuse", "card:iv-when-not-to-fuse"
    kind: str  # "section" or "card"
    course_slug: str
    section_slug: str
    section_title: str
    heading: str  # the ## subheading ("" for text before the first one); card prompt for cards
    text: str  # the chunk's markdown, without the heading line
    section_url: str  # Section.get_absolute_url()
    anchor: str = ""  # slug of the subheading (GitHub style), "" when none
    linked_sections: tuple[str, ...] = ()  # cards: every section the card lists, course order

    @property
    def title(self) -> str:
        """What a citation shows: "Section title — subheading"."""
        if self.kind == "card":
            return f"{self.section_title}{HEADING_SEP}card: {self.heading}"
        return f"{self.section_title}{HEADING_SEP}{self.heading}" if self.heading else self.section_title

    @property
    def url(self) -> str:
        return f"{self.section_url}#{self.anchor}" if self.anchor else self.section_url

    @property
    def indexed_text(self) -> str:
        """The text that is tokenized and embedded: the heading stays attached to the chunk."""
        return f"{self.title}\n{self.text}"


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float
    rank: int = 0  # 1-based position in the returned list
    coverage: float = 0.0  # idf-weighted share of the question's terms found in the passage
    votes: dict[str, float] = field(default_factory=dict, compare=False)  # per-method scores
    # for a card hit: the chunk of its section that best matches the question (lesson text
    # to quote next to the card, and a link to the subheading); None for section hits
    section_chunk: Passage | None = None

    @property
    def url(self) -> str:
        return (self.section_chunk or self.passage).url


_FENCE = re.compile(r"^\s*(```|~~~)")
_H2 = re.compile(r"^##\s+(.+?)\s*#*\s*$")


def split_markdown(body: str) -> list[tuple[str, str]]:
    """Split a markdown body at ``##`` headings (not inside code fences).

    Returns ``[(heading, text), ...]``; text before the first heading gets heading "".
    Empty chunks are dropped. Deeper headings (###) stay inside their ## chunk.
    """
    chunks: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in (body or "").splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _H2.match(line)
        if m:
            chunks.append((m.group(1).strip(), []))
        else:
            chunks[-1][1].append(line)
    out = []
    for heading, lines in chunks:
        text = "\n".join(lines).strip()
        if text or heading:
            out.append((heading, text))
    return out


def _card_text(card) -> str:
    parts = [card.answer, card.explanation]
    if card.key_points:
        parts.append("\n".join(f"- {p}" for p in card.key_points if isinstance(p, str)))
    return "\n\n".join(p for p in parts if p)


def _one_line(text: str, limit: int = 120) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def build_passages(course_slug: str | None = None, include_cards: bool = True) -> list[Passage]:
    """All passages of one course (or of every course), in reading order."""
    from quizzes.models import Card, Section

    sections = Section.objects.select_related("course", "lesson").order_by(
        "course__slug", "lesson__position", "position"
    )
    if course_slug:
        sections = sections.filter(course__slug=course_slug)
    passages: list[Passage] = []
    by_id = {}
    for s in sections:
        by_id[s.pk] = s
        url = s.get_absolute_url()
        seen_anchors: dict[str, int] = {}
        for heading, text in split_markdown(s.body):
            anchor = heading_anchor(heading) if heading else ""
            if anchor:  # duplicate headings get -1, -2 like GitHub
                n = seen_anchors.get(anchor, 0)
                seen_anchors[anchor] = n + 1
                if n:
                    anchor = f"{anchor}-{n}"
            passages.append(
                Passage(
                    id=f"{s.slug}#{anchor}" if anchor else s.slug,
                    kind="section",
                    course_slug=s.course.slug,
                    section_slug=s.slug,
                    section_title=s.title,
                    heading=heading,
                    text=text,
                    section_url=url,
                    anchor=anchor,
                )
            )
    if include_cards:
        cards = (
            Card.objects.filter(retired=False)
            .select_related("course")
            .prefetch_related("sections")
            .order_by("course__slug", "source_file", "position")
        )
        if course_slug:
            cards = cards.filter(course__slug=course_slug)
        order = {sec.pk: n for n, sec in enumerate(by_id.values())}
        for c in cards:
            linked = sorted((x for x in c.sections.all() if x.pk in by_id), key=lambda x: order[x.pk])
            if not linked:
                continue
            first = linked[0]
            passages.append(
                Passage(
                    id=f"card:{c.slug}",
                    kind="card",
                    course_slug=c.course.slug,
                    section_slug=first.slug,
                    section_title=first.title,
                    heading=_one_line(c.prompt),
                    text=f"{c.prompt}\n\n{_card_text(c)}",
                    section_url=first.get_absolute_url(),
                    linked_sections=tuple(x.slug for x in linked),
                )
            )
    return passages


# --------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------

STOPWORDS = frozenset(
    """
a an the and or but if then than so as at by for from in into of on onto to with without
is are was were be been being am do does did doing done has have had having
i me my we our you your it its this that these those there here they them their
what which who whom whose when where why how
whats hows whys wheres whos thats
can could should would will shall may might must
not no yes just also about any some all each very really actually though anyway
get gets got make makes made use uses used using
one's s t
""".split()
)

# Word characters: ASCII letters/digits/_, plus superscripts and a few symbols that carry
# meaning in this domain (µs, n², 8192³, Kᵀ).
_WORD = r"[A-Za-z0-9_µ²³ᵀ]"
_TOKEN = re.compile(rf"{_WORD}+(?:[.\-+/]{_WORD}+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_PART = re.compile(r"[a-z0-9µ²³ᵀ]+")
_RAW_PART = re.compile(r"[A-Za-z0-9µ²³ᵀ]+")
_HAS_ALPHA = re.compile(r"[a-zµ]")

# Light suffix folding (not a full stemmer): -ously adverbs, plurals, -ing/-ed/-ion, the -ate
# family, then a final "e", so tile/tiles/tiled/tiling, cache/caching, fuse/fused/fusion,
# contiguous/contiguously and approximate/approximation/approximated meet.
_PLURAL_US = frozenset({"gpus", "cpus", "tpus", "npus"})
_ATE = ("ations", "ation", "ators", "ator", "ating", "ated", "ates", "ate")  # keep >= 4 letters
_SUFFIXES = ("ings", "ing", "ions", "ion", "ed")  # keep >= 3 letters


@functools.lru_cache(maxsize=1 << 16)  # the same few thousand words are stemmed again for every text
def stem(word: str) -> str:
    if not word.isalpha() or len(word) < 3:
        return word
    w = word
    if w.endswith("ously") and len(w) > 7:  # contiguously, asynchronously -> contiguous, asynchronous
        w = w[:-2]
    for suffix in _ATE:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "ches", "shes", "xes")) and len(w) > 4:
        w = w[:-2]
    elif w.endswith("s") and (not w.endswith(("ss", "us", "is")) or w in _PLURAL_US):
        w = w[:-1]
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            # running -> runn -> run, stopped -> stopp -> stop
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_TIMES = re.compile(r"(?<!\b0)(?<=\d)[xX](?=\d)")  # not the 0x of a hex number


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFC", text or "")
    text = text.replace("μ", "µ")  # Greek mu to micro sign
    text = _TIMES.sub("×", text)  # 16x8x16 -> 16×8×16: a shape typed with the letter x, read as the course writes it
    return _THOUSANDS.sub("", text)  # 1,979 -> 1979


_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_PLURAL_ACRONYM = re.compile(r"[A-Z]+s")


def _camel_parts(word: str) -> list[str]:
    """ "FlashAttention" -> ["flash", "attention"], "RMSNorm" -> ["rms", "norm"]; [] otherwise."""
    if not _CAMEL.search(word) or _PLURAL_ACRONYM.fullmatch(word):
        return []
    return [p.lower() for p in _CAMEL_PART.findall(word)]


def _version_join(word: str, nxt: str) -> str | None:
    """ "flashattention" + "2" -> "flashattention-2", "llama" + "3" -> "llama-3"."""
    if word.isalpha() and len(word) > 1 and word not in STOPWORDS and nxt.isdigit() and len(nxt) <= 2:
        return f"{word}-{nxt}"
    return None


def _keep(part: str) -> bool:
    return part not in STOPWORDS and (len(part) > 1 or part.isdigit())


def tokenize(text: str) -> list[str]:
    """Lowercased terms for BM25 (see _tokens)."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=1 << 14)  # a course's texts are tokenized again whenever an index is rebuilt
def _tokens(text: str) -> tuple[str, ...]:
    """Lowercased terms for BM25.

    A compound such as ``cp.async``, ``torch.compile``, ``__shfl_down_sync``, ``sm_80`` or
    ``flashattention-2`` is kept whole *and* split into its parts, so both "cp.async" and
    "cp async" match; so is a CamelCase name ("FlashAttention" also gives "flash" and
    "attention", "PyTorch" gives "torch"). Pure numbers (``2.97``, ``8192``) are kept whole
    only. A name followed by a small number, written either way ("FlashAttention 2",
    "FlashAttention-2", "Llama-3-8B"), also yields the joined term ``flashattention-2`` /
    ``llama-3``. Plurals and a few suffixes are folded; a small stopword list is dropped.
    """
    out: list[str] = []
    text = _norm(text)
    matches = list(_TOKEN.finditer(text))
    for n, m in enumerate(matches):
        raw = m.group(0).strip("_")
        tok = raw.lower()
        if not tok:
            continue
        camel = [c for w in _RAW_PART.findall(raw) for c in _camel_parts(w)]
        parts = _PART.findall(tok)
        if len(parts) == 1 and tok == parts[0]:
            if n + 1 < len(matches) and not text[m.end() : matches[n + 1].start()].strip():
                joined = _version_join(tok, matches[n + 1].group(0).lower())
                if joined:
                    out.append(joined)
            if tok in STOPWORDS or (len(tok) == 1 and not tok.isdigit()):
                continue
            out.append(stem(tok))
            out.extend(stem(c) for c in camel if _keep(c))
            continue
        out.append(tok)  # the compound as written
        if _HAS_ALPHA.search(tok):
            for a, b in zip(parts, parts[1:], strict=False):
                joined = _version_join(a, b)
                if joined and joined != tok:
                    out.append(joined)
            out.extend(stem(p) for p in parts if _keep(p))
            out.extend(stem(c) for c in camel if _keep(c))
    return tuple(out)


# --------------------------------------------------------------------------------------
# Index and cache
# --------------------------------------------------------------------------------------

BM25_K1 = 1.2
BM25_B = 0.75


def _bm25_class():
    from rank_bm25 import BM25Okapi

    class LuceneIdfBM25(BM25Okapi):
        """BM25Okapi with Lucene's always-positive idf, log(1 + (N - n + 0.5) / (n + 0.5)).

        rank_bm25's Okapi idf is log((N - n + 0.5) / (n + 0.5)) floored at a fraction of the
        average idf: on a small course (a few chunks) a term found in half of them scores
        exactly 0 and the question finds nothing.
        """

        def _calc_idf(self, nd):
            n_docs = self.corpus_size
            self.idf = {w: math.log(1 + (n_docs - f + 0.5) / (f + 0.5)) for w, f in nd.items()}
            self.average_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0

    return LuceneIdfBM25


class Index:
    """BM25 over a fixed list of passages (plus, lazily, their embeddings)."""

    def __init__(self, passages: list[Passage], fingerprint: tuple = (), text_of=None):
        self.passages = passages
        self.fingerprint = fingerprint
        self.text_of = text_of or (lambda p: p.indexed_text)  # bench ablations swap this
        self.tokens = [tokenize(self.text_of(p)) for p in passages]
        self.token_sets = [frozenset(toks) for toks in self.tokens]
        self.bm25 = _bm25_class()(self.tokens, k1=BM25_K1, b=BM25_B) if passages else None
        self.section_info = {p.section_slug: (p.section_title, p.section_url) for p in passages if p.kind == "section"}
        self._embeddings = None  # filled by tutor.teacher.embeddings
        self._quote_vectors = None  # filled by tutor.teacher.lesson_quotes
        self._lock = threading.Lock()

    def term_weights(self, query_tokens: list[str]) -> dict[str, float]:
        """idf of each distinct query term; a term the course never uses gets the highest idf."""
        if not self.bm25:
            return {}
        unseen = math.log(1 + (len(self.passages) + 0.5) / 0.5)
        return {t: self.bm25.idf.get(t, unseen) for t in set(query_tokens)}

    def bm25_scores(self, query_tokens: list[str]) -> list[float]:
        if not self.bm25 or not query_tokens:
            return [0.0] * len(self.passages)
        return [float(x) for x in self.bm25.get_scores(query_tokens)]


_cache: dict[str | None, Index] = {}
_cache_lock = threading.Lock()


def content_fingerprint(course_slug: str | None = None, include_cards: bool = True) -> tuple:
    """Changes whenever a section or card of the course is added, removed or saved.

    Count, latest id and latest ``updated_at`` of the sections and cards (a card retired
    or edited is saved, so its ``updated_at`` moves); plus the latest CardEdit, which the
    loader and admin record when only a card's section links change.
    """
    from django.db.models import Count, Max, Q

    from quizzes.models import Card, CardEdit, Section

    where = {"course__slug": course_slug} if course_slug else {}
    s = Section.objects.filter(**where).aggregate(n=Count("id"), at=Max("updated_at"), last=Max("id"))
    fp: tuple = ("s", s["n"], s["at"], s["last"])
    if include_cards:
        c = Card.objects.filter(**where).aggregate(
            live=Count("id", filter=Q(retired=False)), at=Max("updated_at"), last=Max("id")
        )
        edit = CardEdit.objects.filter(**({"card__course__slug": course_slug} if course_slug else {})).aggregate(
            last=Max("id")
        )["last"]
        fp += ("c", c["live"], c["at"], c["last"], edit)
    return fp


_question_scope: contextvars.ContextVar[dict | None] = contextvars.ContextVar("teacher_question_scope", default=None)


@contextlib.contextmanager
def one_question():
    """While one question is planned, each content fingerprint is read from the database once, not at every
    index lookup (planning an answer looks the indexes up a dozen times)."""
    token = _question_scope.set({})
    try:
        yield
    finally:
        _question_scope.reset(token)


def once_per_question(key: tuple, compute):
    """`compute()`, memoized for the question being planned (see one_question); computed anew outside one."""
    scope = _question_scope.get()
    if scope is None:
        return compute()
    if key not in scope:
        scope[key] = compute()
    return scope[key]


def get_index(course_slug: str | None = None, include_cards: bool = True) -> Index:
    key = f"{course_slug or '*'}|{'cards' if include_cards else 'sections'}"
    fp = once_per_question(("passages", key), lambda: content_fingerprint(course_slug, include_cards))
    idx = _cache.get(key)
    if idx is not None and idx.fingerprint == fp:
        return idx
    with _cache_lock:
        idx = _cache.get(key)
        if idx is None or idx.fingerprint != fp:
            idx = Index(build_passages(course_slug, include_cards), fp)
            _cache[key] = idx
        return idx


def invalidate() -> None:
    """Drop every cached index (after edits that bypass ``save()``)."""
    with _cache_lock:
        _cache.clear()


# --------------------------------------------------------------------------------------
# Retrieval
# --------------------------------------------------------------------------------------

METHODS = ("bm25", "embedding", "hybrid")
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.)
# Weight of the embedding vote against BM25's 1.0 in "hybrid". On the retrieval bench's 96 questions (see
# retrieval_bench; chosen on that set among 0.25, 0.5 and 1): top-1 84.4% and top-3 96.9% at 0.5, against 94.8% top-3
# at 0.25 and BM25 alone's 83.3% / 97.9%. The vote buys a better first passage for a slightly worse top three.
EMBED_WEIGHT = 0.5


def embeddings_enabled() -> bool:
    """The optional second vote: the TEACHER_EMBEDDINGS setting, and the bundled MiniLM installed (numpy)."""
    from django.conf import settings

    from tutor.teacher.explanation_match import paraphrase_vote_available

    return settings.TEACHER_EMBEDDINGS and paraphrase_vote_available()


def _rank(scores: list[float]) -> list[int]:
    """Passage indices with a positive score, best first (ties keep reading order)."""
    return sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))


def _select(
    idx: Index,
    order: list[int],
    scores: dict[int, float],
    k: int,
    votes: dict[int, dict[str, float]],
    weights: dict[str, float],
) -> list[Hit]:
    """Top-k with distinct sections first; fills from repeated sections only if needed.

    A card linked to several sections is cited under the one whose best chunk scores
    highest for this question.
    """
    passages = idx.passages
    best: dict[str, float] = {}
    best_chunk: dict[str, int] = {}
    for i, sc in scores.items():
        p = passages[i]
        if p.kind == "section" and sc > best.get(p.section_slug, float("-inf")):
            best[p.section_slug] = sc
            best_chunk[p.section_slug] = i

    def home(p: Passage) -> Passage:
        if p.kind != "card" or len(p.linked_sections) < 2:
            return p
        slug = max(p.linked_sections, key=lambda s: best.get(s, float("-inf")))
        if slug == p.section_slug or slug not in idx.section_info:
            return p
        title, url = idx.section_info[slug]
        return replace(p, section_slug=slug, section_title=title, section_url=url)

    chosen: list[tuple[int, Passage]] = []
    seen: set[str] = set()
    rest: list[tuple[int, Passage]] = []
    for i in order:
        p = home(passages[i])
        if p.section_slug in seen:
            rest.append((i, p))
            continue
        seen.add(p.section_slug)
        chosen.append((i, p))
        if len(chosen) == k:
            break
    if len(chosen) < k:
        chosen += rest[: k - len(chosen)]
    total = sum(weights.values()) or 1.0

    def coverage(i: int) -> float:
        return round(sum(w for t, w in weights.items() if t in idx.token_sets[i]) / total, 4)

    def chunk(p: Passage) -> Passage | None:
        if p.kind != "card":
            return None
        i = best_chunk.get(p.section_slug)
        return passages[i] if i is not None else None

    return [
        Hit(p, round(scores[i], 6), rank=n + 1, coverage=coverage(i), votes=votes.get(i, {}), section_chunk=chunk(p))
        for n, (i, p) in enumerate(chosen)
    ]


def retrieve(
    question: str,
    k: int = 3,
    *,
    course: str | None = None,
    method: str | None = None,
    include_cards: bool = True,
    embed_weight: float = EMBED_WEIGHT,
) -> list[Hit]:
    """The k best passages for a learner's question, one per section where possible.

    ``method``: "bm25" (default, torch-free), "embedding" or "hybrid" (BM25 plus the
    embedding as a reciprocal-rank second vote). When ``method`` is None, "hybrid" is
    used only if ``embeddings_enabled()``. Returns [] for an empty question or one that
    shares no term with the course (in BM25 mode).
    """
    if k <= 0 or not isinstance(question, str) or not question.strip():
        return []
    if method is None:
        method = "hybrid" if embeddings_enabled() else "bm25"
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    return retrieve_from(get_index(course, include_cards), question, k, method=method, embed_weight=embed_weight)


def retrieve_from(
    idx: Index, question: str, k: int = 3, *, method: str = "bm25", embed_weight: float = EMBED_WEIGHT
) -> list[Hit]:
    """``retrieve`` against a given index (the bench uses it for ablations)."""
    if k <= 0 or not isinstance(question, str) or not question.strip() or not idx.passages:
        return []
    q_tokens = tokenize(question)
    weights = idx.term_weights(q_tokens)
    bm25 = idx.bm25_scores(q_tokens) if method != "embedding" else []
    if method == "bm25":
        order = _rank(bm25)
        return _select(idx, order, dict(enumerate(bm25)), k, {i: {"bm25": bm25[i]} for i in order[: 4 * k]}, weights)

    from tutor.teacher import embeddings  # torch lives behind this import

    cos = embeddings.similarities(idx, question)
    if method == "embedding":
        order = sorted(range(len(cos)), key=lambda i: (-cos[i], i))
        return _select(idx, order, dict(enumerate(cos)), k, {i: {"cosine": cos[i]} for i in order[: 4 * k]}, weights)

    # hybrid: BM25 decides, the embedding adds a light reciprocal-rank vote. A question
    # with no BM25 match at all is not rescued by the embedding alone (that is how the
    # teacher notices the course does not cover something).
    bm_order = _rank(bm25)
    if not bm_order:
        return []
    emb_order = sorted(range(len(cos)), key=lambda i: (-cos[i], i))
    fused: dict[int, float] = {}
    for r, i in enumerate(bm_order):
        fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + r + 1)
    for r, i in enumerate(emb_order):
        fused[i] = fused.get(i, 0.0) + embed_weight / (RRF_K + r + 1)
    order = sorted(fused, key=lambda i: (-fused[i], i))
    return _select(idx, order, fused, k, {i: {"bm25": bm25[i], "cosine": cos[i]} for i in order[: 4 * k]}, weights)


def cited_sections(hits: Iterable[Hit]) -> list[dict]:
    """Citations for an answer: one entry per section, in hit order."""
    out, seen = [], set()
    for h in hits:
        p = h.passage
        if p.section_slug in seen:
            continue
        seen.add(p.section_slug)
        shown = h.section_chunk or p
        out.append({"section": p.section_slug, "title": shown.title, "url": h.url})
    return out
