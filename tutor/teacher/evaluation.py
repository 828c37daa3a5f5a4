"""Judge the teacher's answers as answers, in whatever mode is configured (course notes or a model server).

The evaluation set (eval/learner_questions.yaml) holds learner questions, written apart from the
explanations, each with the facts a correct answer must contain (each fact a list of acceptable
phrasings), claims it must not make, the section it belongs to, and whether the teacher should decline
it (off-topic, instructions aimed at the teacher, another course's subject). Its splits:
* "tune" and "dev" (eval/dev_questions.yaml, written later from the sections alone by someone who had
  not read the explanations): the teacher is tuned on these;
* "test" (the other half of "tune"'s file), "fresh" (written later, before the teacher was asked any of
  it) and "holdout" (eval/holdout_questions.yaml, written like "dev" and at the same time): held out,
  only reported on.
eval/boundary_questions.yaml, half "dev" and half "holdout", probes the line between what the teacher
declines and what it answers: off-topic, other-course and injection messages, and course questions that
only look like them ("What instructions does a warp execute?", "ncu?"). Those course questions list no
facts: they count as answered when the answer is not a refusal and cites the right section, a figure
reported apart from the facts figure.
eval/closing_questions.yaml (written on 2026-11-26 from the sections alone, before the teacher was asked any
of it) is half "dev" and half "closing": "closing" is held out like "holdout", with two-part questions and
injections tucked into course questions among its kinds. eval/final_questions.yaml, written the same way
and day by another author after "closing" had been read, is half "dev" and half "final" (held out).
eval/blind_questions.yaml, written the same way by another author after "final" had been read, is half
"dev" and half "blind" (held out, and not read while tuning). eval/sealed_questions.yaml, written the same
way on 2026-11-27 after "blind" had been read, adds scenario and misconception questions and is half "dev"
and half "sealed" (held out). eval/unseen_questions.yaml, written the same way on 2026-11-27 after "sealed"
had been read, is half "dev" and half "unseen" (held out). eval/novel_questions.yaml, written the same way
on 2026-11-27 after "unseen" had been read, with more everyday, scenario and misconception questions, is half
"dev" and half "novel" (held out). eval/probe_questions.yaml, written the same way and day by another author
after "novel" had been measured, is half "dev" and half "probe" (held out). eval/untried_questions.yaml, written
the same way and day by another author after "probe" had been read, is half "dev" and half "untried" (held out).
eval/unasked_questions.yaml, written the same way and day by another author after "untried" had been read, is
half "dev" and half "unasked" (held out). eval/unheard_questions.yaml, written the same way by another author
after "unasked" had been read, is half "dev" and half "unheard" (held out). eval/untold_questions.yaml, written
the same way by another author after "unheard" had been read, is half "dev" and half "untold" (held out).
eval/unposed_questions.yaml, written the same way by another author after "untold" had been read, is half "dev"
and half "unposed" (held out). eval/unprompted_questions.yaml, written the same way by another author after
"unposed" had been read, with comparisons of two or three things and follow-ups that turn off-topic, is half
"dev" and half "unprompted" (held out). eval/unspoken_questions.yaml, written the same way on 2026-11-28 by
another author after "unprompted" had been read, is half "dev" and half "unspoken" (held out).
eval/unsaid_questions.yaml, written the same way and day by another author after "unspoken" had been read, with
how-to and when-not-to questions, is half "dev" and half "unsaid" (held out). eval/unvoiced_questions.yaml, written
the same way and day by another author after "unsaid" had been read, with why, how-much and what-goes-wrong
questions, is half "dev" and half "unvoiced" (held out). eval/unbidden_questions.yaml, written the same way and day by
another author after "unvoiced" had been read, with more everyday, follow-up, short and when-not-to questions, is
half "dev" and half "unbidden" (held out). eval/unstated_questions.yaml, written the same way and day by another author
after "unbidden" had been read, with more scenarios and everyday questions, is half "dev" and half "unstated" (held
out). eval/unmentioned_questions.yaml, written the same way and day by another author after "unstated" had been
measured, with more follow-ups and how-to questions, is half "dev" and half "unmentioned" (held out).
eval/unqueried_questions.yaml, written the same way and day by another author after "unmentioned" had been read, with
more everyday and scenario questions, is half "dev" and half "unqueried" (held out).
eval/unsought_questions.yaml, written the same way on 2026-11-29 by another author after the explanations had been
reworded in the lesson's terms (and measured before and after that change), is half "dev" and half "unsought"
(held out). eval/unraised_questions.yaml and eval/unwritten_questions.yaml, written the same way and day by two more
authors before the teacher was asked any of them (unraised with more everyday wording, analogies, scenarios and
follow-ups; unwritten with more how-to, misconception and short questions), are each half "dev" and half a held-out
split of their own name. eval/unaired_questions.yaml, written the same way on 2026-11-29 by another author from the
sections alone (without the explanations or the other sets) before the teacher was asked any of it, is half "dev"
and half "unaired" (held out). eval/unbroached_questions.yaml, written the same way and day by another author after
"unaired" had been measured, is half "dev" and half "unbroached" (held out). eval/unheeded_questions.yaml, written the
same way and day by another author after "unbroached" had been measured, with thirty follow-ups as typed in a chat
(seven leave the subject) and twelve partly covered questions, is half "dev" and half "unheeded" (held out), and was
measured before the teacher was changed for it. eval/unexplored_questions.yaml, written the same way and day by
another author after "unheeded" had been measured, with thirty follow-ups (seven leave the subject) and more everyday,
scenario and how-to questions, is half "dev" and half "unexplored" (held out), and was measured before the teacher was
changed for it. eval/unvisited_questions.yaml, written the same way and day by another author after "unexplored" had
been read, with thirty-two follow-ups (seven leave the subject or instruct the teacher) and questions on training, is
half "dev" and half "unvisited" (held out), and was measured before the teacher was changed for it.
eval/unsurveyed_questions.yaml, written the same way on 2026-11-30 by another author after "unvisited" had been read,
with thirty-two follow-ups (seven leave the subject or instruct the teacher) and why-questions, is half "dev" and half
"unsurveyed" (held out), and was measured before the teacher was changed for it.
eval/uncharted_questions.yaml, written the same way and day by another author after "unsurveyed" had been read, with
what-goes-wrong, how-much, difference, when-not-to and short questions and twenty-four follow-ups, is half "dev" and
half "uncharted" (held out), and was measured before the teacher was changed for it.
eval/unmapped_questions.yaml, written the same way and day by another author after "uncharted" had been read, with
how-to, why, scenario and comparison questions and twenty-two follow-ups, is half "dev" and half "unmapped" (held out),
and was measured before the teacher was changed for it.
eval/unlisted_questions.yaml, written the same way on 2026-11-30 by another author after "unmapped" had been read, with
twenty-two follow-ups (five leave the subject or instruct the teacher), scenario, comparison, misconception, everyday,
what-goes-wrong and how-much questions, is half "dev" and half "unlisted" (held out), and was measured before the
teacher was changed for it.
eval/unnoted_questions.yaml, written the same way and day by another author after "unlisted" had been measured, with
twenty-two follow-ups (five leave the subject or instruct the teacher), everyday, scenario, misconception, comparison,
short and partly covered questions, is half "dev" and half "unnoted" (held out), and was measured before the teacher
was changed for it. eval/unquoted_questions.yaml, written the same way and day by another author after "unnoted" had
been read, with the same mix of kinds, is half "dev" and half "unquoted" (held out), and was measured before the
teacher was changed for it. eval/unspecified_questions.yaml, written the same way and day by another author after
"unquoted" had been measured, with the same mix of kinds, is half "dev" and half "unspecified" (held out), and was
measured before the teacher was changed for it.
eval/everyday_questions.yaml, written the same way and day by another author, is all "dev": 120 questions in a
newcomer's words (analogies among them), scenarios and follow-ups, to tune on. eval/drill_questions.yaml, written on
2026-11-30 by two more authors from the sections alone, is all "dev" too: ten questions per section (follow-ups,
everyday wording, scenarios), to find answers that leave out what their question needs. eval/chained_questions.yaml,
written on 2026-11-30 by another author from the sections alone, is all "dev" as well: eighty follow-ups, five per
section, some asking for what the previous answer already holds, some for a new side of its subject, some naming a
neighbouring subject without a pronoun, to tune the conversation rules on. eval/switched_questions.yaml is all "dev"
too: 240 of the dev questions asked alone elsewhere, each asked again after an unrelated course question in the same
chat, to measure whether a subject the learner has left pulls the answer back to it.

Each question goes through the real conversation flow (stored turns, follow-ups after their previous
question), timed in-process from the question to the stored answer.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from asgiref.sync import async_to_sync

from tutor.teacher.retrieval_bench import p95

EVAL_DIR = Path(__file__).resolve().parent / "eval"
# Each of these files is half "dev" and half a held-out split of its own name.
HALF_DEV_FILES = (
    "closing",
    "final",
    "blind",
    "sealed",
    "unseen",
    "novel",
    "probe",
    "untried",
    "unasked",
    "unheard",
    "untold",
    "unposed",
    "unprompted",
    "unspoken",
    "unsaid",
    "unvoiced",
    "unbidden",
    "unstated",
    "unmentioned",
    "unqueried",
    "unsought",
    "unraised",
    "unwritten",
    "unaired",
    "unbroached",
    "unheeded",
    "unexplored",
    "unvisited",
    "unsurveyed",
    "uncharted",
    "unmapped",
    "unlisted",
    "unnoted",
    "unquoted",
    "unspecified",
)
EVAL_FILES = tuple(
    EVAL_DIR / f"{name}_questions.yaml"
    for name in ("learner", "dev", "holdout", "boundary", "everyday", "drill", "chained", "switched", *HALF_DEV_FILES)
)
SPLITS = ("tune", "dev", "test", "fresh", "holdout", *HALF_DEV_FILES)


@dataclass(frozen=True)
class Item:
    id: str
    split: str
    kind: str
    question: str
    section: str | None
    required: list[list[str]]
    forbidden: list[str] = field(default_factory=list)
    previous: str | None = None
    declined: bool = False


@dataclass
class Outcome:
    item: Item
    text: str
    citations: list[dict]
    mode: str
    ms: float
    missing: list[list[str]]
    forbidden_found: list[str]

    @property
    def declined(self) -> bool:
        return not self.citations

    @property
    def facts_ok(self) -> bool:
        return not self.item.declined and not self.missing and not self.forbidden_found

    @property
    def citation_ok(self) -> bool:
        return bool(self.citations) and self.citations[0]["section"] == self.item.section

    @property
    def ok(self) -> bool:
        return self.declined if self.item.declined else self.facts_ok and self.citation_ok


def load_items(path: Path | None = None, split: str | None = None) -> list[Item]:
    """The questions of one split ("all" or None: every split), from `path` or from every shipped file."""
    rows = [row for file in ([path] if path else EVAL_FILES) for row in yaml.safe_load(file.read_text())["questions"]]
    items = [
        Item(
            id=r["id"],
            split=r["split"],
            kind=r["kind"],
            question=r["question"],
            section=r.get("section"),
            required=[list(f) for f in r.get("required") or []],
            forbidden=list(r.get("forbidden") or []),
            previous=r.get("previous"),
            declined=bool(r.get("declined")),
        )
        for r in rows
    ]
    return [i for i in items if split in (None, "all", i.split)]


def as_read(text: str) -> str:
    """Text as a reader sees it, for the fact checks: lower case, markdown emphasis and code marks dropped,
    line breaks and runs of spaces as one space ("**online\n  softmax**" reads "online softmax")."""
    return " ".join(re.sub(r"[*`]", "", text).lower().split())


async def _ask(conversation, question: str) -> dict:
    from tutor.teacher.chat import answer_events

    seen: dict[str, dict] = {}
    async for event in answer_events(conversation, question):
        if event["event"] in ("meta", "done"):
            seen[event["event"]] = event
    return seen


def evaluate(item: Item, *, user, course) -> Outcome:
    from tutor.teacher.chat import start_conversation
    from tutor.teacher.models import ChatTurn

    conversation = start_conversation(user=user, course=course)
    if item.previous:
        async_to_sync(_ask)(conversation, item.previous)
    t0 = time.perf_counter()
    result = async_to_sync(_ask)(conversation, item.question)
    ms = (time.perf_counter() - t0) * 1000
    turn = ChatTurn.objects.get(pk=result["done"]["turn"])
    text = as_read(turn.text)
    return Outcome(
        item=item,
        text=turn.text,
        citations=turn.citations,
        mode=turn.mode,
        ms=ms,
        missing=[fact for fact in item.required if not any(as_read(alt) in text for alt in fact)],
        forbidden_found=[f for f in item.forbidden if as_read(f) in text],
    )


@dataclass
class Summary:
    answered: int
    facts: int
    citations: int
    declinable: int
    declined: int
    boundary: int  # course questions with no facts listed, asked to check only that they are answered
    boundary_ok: int
    p95_ms: float
    median_ms: float

    def lines(self) -> list[str]:
        pct = lambda a, b: f"{a}/{b} ({100 * a / b:.0f}%)" if b else "n/a"  # noqa: E731
        return [
            f"required facts present (and no forbidden claim): {pct(self.facts, self.answered)}",
            f"first citation is the right section:            {pct(self.citations, self.answered)}",
            f"off-topic, injection, other-course declined:     {pct(self.declined, self.declinable)}",
            f"look-alike course questions answered and cited:  {pct(self.boundary_ok, self.boundary)}",
            f"latency per answer, question to stored answer:   median {self.median_ms:.0f} ms, "
            f"p95 {self.p95_ms:.0f} ms (in-process, perf_counter)",
        ]


def summarize(outcomes: list[Outcome]) -> Summary:
    to_answer = [o for o in outcomes if not o.item.declined]
    answered = [o for o in to_answer if o.item.required]  # the facts and citation figures count these
    declinable = [o for o in outcomes if o.item.declined]
    times = sorted(o.ms for o in outcomes) or [0.0]
    return Summary(
        answered=len(answered),
        facts=sum(o.facts_ok for o in answered),
        citations=sum(o.citation_ok for o in answered),
        boundary=len(to_answer) - len(answered),
        boundary_ok=sum(o.facts_ok and o.citation_ok for o in to_answer if not o.item.required),
        declinable=len(declinable),
        declined=sum(o.declined for o in declinable),
        p95_ms=p95(times),
        median_ms=statistics.median(times),
    )
