"""The course's vocabulary, and what it says about a learner's words.

Which words a course uses and how often (its sections, and its explanations' questions and answers), which
of a question's words are the course's own terms, which name something the course never mentions
("MI300X", "speculative"), and which are only everyday English, a misspelling or an inflection of a word it
does use. The answer plan reads these to decide whether a question is covered, and what part of it is not.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from quizzes.models import Course
from tutor.teacher import explanation_match
from tutor.teacher.message_parts import quoted_spans, told_not_asked
from tutor.teacher.question_rewrite import (
    COMMON_WORD,
    EVERYDAY,
    EVERYDAY_WORDS,
    NEWER_EVERYDAY_WORDS,
    close_words,
    course_pairs,
    course_words,
    english,
    is_slip,
)
from tutor.teacher.retrieval import get_index, tokenize

# A word is one of the course's own terms when the course uses it at least this many times more
# often, relative to its length, than English does (pyspellchecker's frequency list), and at least
# MIN_USES times: "warp", "kernel", "hbm", "prefill" are; "long", "good", "conflict" are not.
SPECIFICITY = 30.0
MIN_USES = 3
_TERM = re.compile(r"[A-Za-z][A-Za-z0-9.\-]*[A-Za-z0-9]|[A-Za-z]")  # "cp.async", "flash-attn", "x"
# "MI300X", "flash-attn"; not "x64" of "128x64", nor "ve" of "I've" (but "induction" of "'induction heads'")
_NAME = re.compile(r"(?<![0-9A-Za-z])(?<![A-Za-z0-9]['’])[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]")
_SHAPE = re.compile(r"^[A-Za-z](?:x[A-Za-z])+$")  # "NxN", "MxK": a shape, as the course writes "N×N"
_SI_PREFIXES = "kKMGTPE"  # kilo to exa, as in "PFLOP" beside the course's "FLOP"
_STRETCHED = re.compile(r"(.)\1{2,}")  # "foreverrr", "sooo": a letter held for emphasis
MISSPELT_CUTOFF = 0.75  # see misspelt_course_word
RARE_IN_ENGLISH = 1000  # occurrences in pyspellchecker's English frequency list (1.6 billion words)
CLIPPED_MIN = 5  # letters a word needs before it counts as a course word cut short ("vocab"; not "ram")
COMMON_PART = 10 * RARE_IN_ENGLISH  # each half of a compound read as everyday English ("work" + "station")
# A word this common in English, put in quotes, is a manner of speaking ("how does it 'remember' what I said?"),
# not the name of a subject: only a rarer one is named ("I keep reading about 'induction heads'").
SCARE_QUOTED = 20 * RARE_IN_ENGLISH


class _Vocabulary(NamedTuple):
    counts: Counter  # each word's uses, lower case
    words: frozenset[str]  # the words as written (question_rewrite.course_words)
    stems: Counter  # each term's uses after stemming (retrieval.tokenize)
    pairs: Counter  # each pair of neighbouring words' uses (question_rewrite.course_pairs)


def _course_counts(course: Course) -> _Vocabulary:
    idx = get_index(course.slug)
    texts = [idx.text_of(p) for p in idx.passages] + [
        # Not the paraphrases: they spell questions the way learners do, typos included ("kernal").
        f"{e.question} {e.answer}"
        for e in explanation_match.get_index(course.slug).explanations.values()
    ]
    counts = Counter(w.lower() for text in texts for w in _TERM.findall(text))
    # The first part of a compound counts as used too: "Llama-3-8B-style" speaks of Llama.
    counts.update(w.split("-")[0] for w in list(counts.elements()) if "-" in w)
    stems = Counter(t for text in texts for t in tokenize(text))
    pairs = course_pairs(texts)
    return _Vocabulary(counts, course_words(texts, pairs), stems, pairs)


_counts_cache: dict[tuple, _Vocabulary] = {}


def _vocabulary(course: Course) -> _Vocabulary:
    key = (course.slug, get_index(course.slug).fingerprint, explanation_match.get_index(course.slug).fingerprint)
    if key not in _counts_cache:
        _counts_cache.clear()
        _counts_cache[key] = _course_counts(course)
    return _counts_cache[key]


def course_vocabulary(course: Course) -> tuple[Counter, frozenset[str]]:
    """How often the course's texts use each word (lower case), and its words as written."""
    vocabulary = _vocabulary(course)
    return vocabulary.counts, vocabulary.words


def course_terms(text: str, counts: Counter) -> list[str]:
    """The words of `text` that are this course's own terms (see SPECIFICITY)."""
    total = sum(counts.values()) or 1
    freq = english().word_frequency
    english_total = freq.total_words or 1
    out = []
    for word in dict.fromkeys(w.lower() for w in _TERM.findall(text)):
        uses = counts.get(word, 0)
        if uses < MIN_USES:
            continue
        course_rate = uses / total
        english_rate = (freq[word] + 1) / english_total
        if course_rate / english_rate >= SPECIFICITY:
            out.append(word)
    return out


def _names(question: str):
    """The candidate names of a question, without the stems of contractions ("wouldn" of "wouldn't")."""
    return (m for m in _NAME.finditer(question) if question[m.end() : m.end() + 2] not in ("'t", "’t"))


def uncovered_terms(question: str, counts: Counter, stems: Counter) -> list[str]:
    """Names in the question that the course never mentions: "MI300X", "JAX", "DeepSpeed" (capitals inside
    or digits), a capitalised word inside a sentence ("Ubuntu"), and a word the learner puts in quotes.
    Another lower-case word is not taken for a name: "chatbot" is everyday wording, not a subject. Nor is
    a quoted word whose stem the course's texts use (`stems`): "'optimized'" or "'warming up...'" quotes
    everyday wording or a screen's message, not a term the course lacks."""
    out = []
    quoted = quoted_spans(question)
    for m in _names(question):
        word = m.group(0)
        if counts.get(word.lower()) or word in out or _SHAPE.match(word) or word.lower() in EVERYDAY:
            continue  # "ChatGPT" is everyday wording for a chatbot, not a subject the course lacks
        if word.lower() in NEWER_EVERYDAY_WORDS:
            continue  # "OK", "ML": chat shorthand in capitals
        if counts.get(_unit_with_prefix(word)):
            continue  # "PFLOP": a unit the course uses, with another prefix
        if word[-1] in "sS" and counts.get(word[:-1].lower()):
            continue  # "H200s", "GPUs": the plural of a name the course uses
        if "-" in word and counts.get(word.split("-")[0].lower()):
            continue  # "Llama-3-style": the course speaks of Llama
        if word.isupper() or any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]):
            out.append(word)
        elif any(m.start() in span for span in quoted):
            if all(stems[t] for t in tokenize(word)):
                continue
            if english().word_frequency[word.lower()] < SCARE_QUOTED:
                out.append(word)  # "I keep reading about 'induction heads'": a term the learner quotes is named
        elif word[0].isupper():
            before = question[: m.start()].rstrip(" \t\"'(*`")
            if before and before[-1] not in ".!?:;\n":  # not the first word of a sentence
                out.append(word)
    return out


FOREIGN_WORDS = 2  # see foreign_words: this many of them name another subject
# Nouns that name a family of inference techniques: a kind of one the course never names ("expert parallelism",
# "latent attention") is another technique, not the course's.
TECHNIQUE_NOUNS = frozenset(
    (
        "attention parallelism decoding batching quantization quantisation sampling scheduling caching sharding "
        "routing offloading pruning distillation sparsity"
    ).split()
)
# A word and the next (overlapping: "how does expert parallelism" gives "does expert" and "expert parallelism").
_WORD_PAIR = re.compile(r"(?<![\w-])([A-Za-z][a-z]+)(?=[\s-]+([A-Za-z][a-z]+)(?![\w-]))")
# A name joined from a word and a single letter, before the next word: "top-k sampling", "min-p sampling", "n-gram
# decoding". The plain pairs above cannot see it: a letter alone is no word.
_LETTER_NAME_PAIR = re.compile(
    r"(?<![\w-])([A-Za-z]{2,}-[A-Za-z]|[A-Za-z]-[A-Za-z]{2,})(?=\s+([A-Za-z][a-z]+)(?![\w-]))"
)


def unnamed_kinds(question: str, stems: Counter, words: frozenset[str]) -> list[str]:
    """Kinds of a technique the course never names, in lower case: "expert parallelism", "latent attention" (a
    word the course's texts never use before one of TECHNIQUE_NOUNS). Not a misspelt course word ("diffrent
    batching"), nor everyday wording ("regular attention" uses a word the course has)."""
    out = [
        f"{m.group(1)} {m.group(2)}"
        for m in _LETTER_NAME_PAIR.finditer(question)
        if m.group(2).lower() in TECHNIQUE_NOUNS and not {m.group(1), m.group(1).lower()} & words
    ]
    for m in _WORD_PAIR.finditer(question):
        modifier, noun = m.group(1), m.group(2)
        modifier_terms = tokenize(modifier)
        if noun.lower() not in TECHNIQUE_NOUNS or not modifier_terms:
            continue
        if any(stems[t] for t in modifier_terms) or modifier.lower() in EVERYDAY_WORDS:
            continue
        frequency = english().word_frequency[modifier.lower()]
        if frequency >= COMMON_WORD:
            continue  # "her attention": a word of every sentence, not a kind of anything
        if frequency < RARE_IN_ENGLISH and misspelt_course_word(modifier.lower(), words):
            continue  # a slip of a course word; a real English word ("expert") is not one of "export"
        out.append(f"{modifier} {noun}")
    return out


class NotCovered(NamedTuple):
    """What a question names that the course does not cover (see not_covered)."""

    names: list[str]  # names the course never mentions (uncovered_terms), and another field's words
    unknown: list[str]  # the other words no course text contains (unknown_words)
    asked: list[str]  # those of both that the message asks about, not only tells in setting the scene


def not_covered(question: str, course: Course) -> NotCovered:
    """What the question names that the course lacks, and which of it the message asks about.

    "How does ZeRO shard the optimizer states and gradients?": with FOREIGN_WORDS of another field's words
    (foreign_words), the question's own subject is that field's, even where other words ("shard", "stage") are
    the course's; they are named like a name the course lacks.

    A word the learner only uses in telling their situation is not what they ask about (see told_not_asked):
    a plain English word there ("A coworker claims ...") is not named at all; a name ("Every time k8s scales up
    a new pod, ...") is still named as not covered, but it is not asked."""
    vocabulary = _vocabulary(course)
    names = uncovered_terms(question, vocabulary.counts, vocabulary.stems)
    kinds = unnamed_kinds(question, vocabulary.stems, vocabulary.words)
    names += [k for k in kinds if k not in names]
    foreign = foreign_words(question, course)
    if len(foreign) >= FOREIGN_WORDS:
        names = list(dict.fromkeys([*names, *foreign]))
    rare = _rare_words(question, course, course_uses=0, derivations=True)
    told = {w for w in dict.fromkeys([*names, *rare]) if told_not_asked(w, question)}
    # "speculative" of "speculative decoding" is named with its noun, not again alone.
    modifiers = {k.split()[0] for k in kinds}
    unknown = [w for w in rare if not (w in told and _plain_english(w)) and w not in modifiers]
    return NotCovered(names, unknown, [w for w in [*names, *unknown] if w not in told])


def unknown_words(question: str, course: Course) -> list[str]:
    """The question's specific words that no text of the course contains (after stemming): "speculative" in
    "What is speculative decoding?", "Ubuntu", "LoRA". Everyday English ("quickly", "install") is not
    specific, nor are the everyday words question_rewrite maps to course terms ("chatbot"), nor a plain word
    only told in setting the scene (see not_covered)."""
    return not_covered(question, course).unknown


def _plain_english(word: str) -> bool:
    """A lower-case word of the English word list ("coworker"), not a name ("k8s", "DeepSpeed")."""
    return word.islower() and word.isalpha() and english().word_frequency[word] > 0


def course_phrases(course: Course) -> Counter:
    """How often the course's texts write each pair of neighbouring words (see question_rewrite.fix_phrases)."""
    return _vocabulary(course).pairs


def course_stems(course: Course) -> Counter:
    """How often the course's texts use each term, after stemming (retrieval.tokenize)."""
    return _vocabulary(course).stems


def foreign_words(question: str, course: Course) -> list[str]:
    """The question's specialist words that the course uses once at most: "optimizer" and "gradients" in a
    question about sharding a training run. Rare in English and all but absent from the course, they say
    the question is about another subject even where its other words ("shard", "stage") are the course's.
    A word that only extends a course word ("optimizer" of "optimize") counts here: it is not a slip of it."""
    return _rare_words(question, course, course_uses=1, derivations=False)


def _rare_words(question: str, course: Course, *, course_uses: int, derivations: bool) -> list[str]:
    """The question's words that are rare in English, not everyday wording, not a misspelt course word
    (see misspelt_course_word for `derivations`), and used by the course's texts at most `course_uses` times
    (after stemming)."""
    vocabulary = _vocabulary(course)
    words, stems = vocabulary.words, vocabulary.stems
    frequency = english().word_frequency
    out = []
    for word in dict.fromkeys(m.group(0) for m in _names(question)):
        tokens = tokenize(word)
        lower = word.lower()
        if not tokens or any(stems[t] > course_uses for t in tokens) or lower in EVERYDAY_WORDS or _SHAPE.match(word):
            continue
        if "-" in word and all(frequency[part] >= RARE_IN_ENGLISH for part in lower.split("-") if part):
            continue  # "in-house", "hand-rolled": a compound of everyday words
        if derivations and any(stems[t] > course_uses for base in _bases(word) for t in tokenize(base)):
            continue  # "microbenchmark", "PFLOP": one of the course's words with a prefix or an ending
        if misspelt_course_word(lower, words, derivations=derivations):
            continue
        if derivations and len(lower) >= CLIPPED_MIN and any(w.lower().startswith(lower) for w in words):
            continue  # "vocab", "config": the course's word cut short, as people type it
        if frequency[lower] < RARE_IN_ENGLISH and not everyday_english(word):
            out.append(word)
    return out


def misspelt_course_word(word: str, words: frozenset[str], *, derivations: bool = True) -> bool:
    """ "paralel" for the course's "parallelism": close to a course word (a looser cut-off than the one typos are
    corrected at, since naming it as a subject the course lacks is the worse mistake), same first letter.
    `derivations=False`: a word that only extends a course word, or is cut from one, is not a slip of it
    ("optimizer" of "optimize")."""
    close = close_words(word, words, n=3, cutoff=MISSPELT_CUTOFF)
    return any(
        w[0] == word[0]
        and (derivations or not (word.startswith(w.lower()) or w.lower().startswith(word)))
        # An English word this close is left unnamed; a word in no English list must be a slip of the course's
        # word, not only share its letters ("postgres" and "progress").
        and (english().word_frequency[word] > 0 or is_slip(word, w.lower()))
        for w in close
    )


def _unit_with_prefix(word: str) -> str:
    """ "PFLOP" -> "flop": a unit in capitals after an SI prefix's letter, as "petaflop" is "flop" after "peta";
    "" for any other word."""
    return word[1:].lower() if len(word) >= 4 and word[0] in _SI_PREFIXES and word[1:].isupper() else ""


def _bases(word: str) -> list[str]:
    """The forms an English inflection or prefix may come from: "replies" -> "reply", "stalls" -> "stall",
    "leaner" -> "lean", "zipping" -> "zip", "wasteful" -> "waste", "underused" -> "used", "microbenchmark" ->
    "benchmark", "petaflop" and "PFLOP" -> "flop"."""
    unit = _unit_with_prefix(word)
    out = [unit] if unit else []
    word = word.lower()
    for suffix, replacement in (
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ed", ""),
        ("ed", "e"),
        ("ing", ""),
        ("ing", "e"),
        ("er", ""),
        ("er", "e"),
        ("est", ""),
        ("est", "e"),
        ("ier", "y"),
        ("iest", "y"),
        ("ful", ""),
        ("fully", ""),
        ("less", ""),
        ("ness", ""),
        ("ly", ""),
        ("ily", "y"),
    ):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3:
            out.append(stem + replacement)
            if not replacement and len(stem) >= 4 and stem[-1] == stem[-2]:
                out.append(stem[:-1])  # "zipping" -> "zip", "bigger" -> "big"
    for prefix in (
        "under",
        "over",
        "un",
        "re",
        "mis",
        "non",
        "pre",
        "out",
        "micro",
        "sub",
        "multi",
        "kilo",
        "mega",
        "giga",
        "tera",
        "peta",
        "nano",
    ):
        if word.startswith(prefix) and len(word) - len(prefix) >= 4:
            out.append(word[len(prefix) :])
    return out


def everyday_english(word: str) -> bool:
    """Whether a word that is rare as written is still everyday English, not a subject the learner names: an
    inflection of a common word ("replies"), a contraction without its apostrophe ("im"), an English word made
    of two common ones ("workstation"), or a misspelling of one ("wat" for "what", "documnet"). A capitalised
    word ("Bitcoin") stays a name."""
    lower = word.lower()
    frequency = english().word_frequency
    if any(frequency[base] >= RARE_IN_ENGLISH for base in _bases(lower)):
        return True
    if word.islower() and any(frequency[f"{lower[:i]}'{lower[i:]}"] >= RARE_IN_ENGLISH for i in range(1, len(lower))):
        return True  # "im", "didnt", "ive": a contraction typed without its apostrophe
    # "foreverrr" (a letter held for emphasis), "calcualte" (two neighbouring letters swapped): common words.
    if word.islower() and len(lower) >= 5:
        unstretched = {_STRETCHED.sub(r"\1", lower), _STRETCHED.sub(r"\1\1", lower)}
        swapped = {lower[:i] + lower[i + 1] + lower[i] + lower[i + 2 :] for i in range(len(lower) - 1)}
        if any(frequency[w] >= RARE_IN_ENGLISH for w in (unstretched | swapped) - {lower}):
            return True
    if (
        word.islower()
        and frequency[lower] > 0
        and any(
            frequency[lower[:cut]] >= COMMON_PART and frequency[lower[cut:]] >= COMMON_PART
            for cut in range(3, len(lower) - 2)
        )
    ):
        return True  # "workstation": an English word made of two common ones ("deepspeed" is no English word)
    if word.islower() and len(lower) <= 6 and frequency[lower] > 0:
        # One edit away from a far more common word: a slip of the keyboard ("wat" is a known word, but rare).
        neighbours = english().known(english().edit_distance_1(lower))
        floor = max(10 * RARE_IN_ENGLISH, 1000 * frequency[lower])
        return any(frequency[n] >= floor for n in neighbours if n != lower)
    return False
