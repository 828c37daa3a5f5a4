"""Course-notes mode: the teacher answers without a language model, from what the course authored.

What the learner gets, by plan (tutor.teacher.answer_plan):
* explanation: the authored explanation, whole, then at most one short supporting passage from the
  lesson, a "check yourself" from a card on the same point, and a lab offer where one shows it;
* passage: the best passage's own opening, quoted and cited, with "did you mean" explanations;
* other_course / not_covered / declined: one or two plain sentences; never lesson passages (a message that
  only thanks or agrees is declined with a word of acknowledgement first).
No sentence is stitched from different sections, no question or code is put forward as an answer,
and only what contributed text is cited.
"""

from __future__ import annotations

from tutor.teacher.answer_plan import Plan
from tutor.teacher.lesson_quotes import opening

LABEL = "*Course-notes mode: written for this course by its authors, not by a language model.*"
HELP = (
    "I can help with the course *{course}*: how kernels, memory, fusion, CUDA Graphs, FlashAttention and the "
    "roofline decide how fast LLM inference runs on a GPU. Ask me about any of those."
)

ACKNOWLEDGED = "Glad that helped."


def core(answer: str, words: int = 60) -> str:
    """An explanation's opening paragraphs, at least `words` words of them: its own answer in short."""
    out: list[str] = []
    for paragraph in answer.strip().split("\n\n"):
        out.append(paragraph.strip())
        if len(" ".join(out).split()) >= words:
            break
    return "\n\n".join(out)


def _help(plan: Plan) -> str:
    return HELP.format(course=plan.course.title if plan.course else "on GPU inference")


def _did_you_mean(plan: Plan) -> str:
    if not plan.near:
        return ""
    return "\n\n**Did you mean:**\n" + "\n".join(f"- {m.question}" for m in plan.near)


def _uncovered(plan: Plan) -> str:
    if not plan.uncovered:
        return ""
    names = ", ".join(plan.uncovered[:-1]) + (" or " if len(plan.uncovered) > 1 else "") + plan.uncovered[-1]
    return f"\n\n*The course does not cover {names}; the answer above is about the part it does cover.*"


def compose(plan: Plan, *, hint: bool = False, context: str = "") -> str:
    """The whole answer in markdown. `context`: a lab run's numbers, quoted as measured, when asked from one."""
    if context and plan.answerable:
        run_block = "\n".join(f"> {line}" for line in context.splitlines())
        lesson = compose(plan, hint=hint).removeprefix(LABEL)
        return f"{LABEL}\n\n**Your lab run, as measured:**\n\n{run_block}\n\n**What the course says about it:**{lesson}"
    if plan.kind == "declined":
        return f"{ACKNOWLEDGED} {_help(plan)}" if plan.acknowledged else _help(plan)
    if plan.kind == "other_course":
        return (
            f"That question belongs to the course *{plan.other_course.title}*, not *{plan.course.title}*, which this "
            "conversation is about. Start a conversation from that course to ask it there."
        )
    if plan.kind == "not_covered":
        subject = f"*{', '.join(plan.uncovered)}*" if plan.uncovered else "this question"
        return f"The course *{plan.course.title}* does not cover {subject}.{_did_you_mean(plan)}"
    cites = plan.citations()
    if hint:
        source = cites[0]["title"] if cites else "the lesson"
        return (
            f"{LABEL}\n\n**Hint** (the answer stays hidden until you review this card): re-read *{source}* [1], "
            "then try to answer in your own words."
        )
    if plan.kind == "explanation" and plan.also is not None:
        # Two things asked: each one's explanation, whole, in the order asked. "The difference between A and
        # B": each side's own explanation, its opening, side by side.
        shown = (lambda e: e.answer.strip()) if plan.each_part else (lambda e: core(e.answer))  # noqa: E731
        parts = [
            LABEL,
            f"**{plan.explanation.question}**",
            f"{shown(plan.explanation)} [1]",
            f"**{plan.also.question}**",
            f"{shown(plan.also)} [{plan.also_n}]",
        ]
        text = "\n\n".join(parts) + _uncovered(plan)
        if plan.check_question:
            text += f"\n\n**Check yourself:** {plan.check_question}"
        return text
    if plan.kind == "explanation" and plan.in_short:
        if plan.in_short == "simpler":
            lead = "The course has no simpler wording of that answer; here is its core"
        elif plan.in_short == "source" and plan.citations():
            lead = f"That answer comes from *{plan.citations()[0]['title']}*; here is its core"
        else:
            lead = "Here is the core of that answer"
        text = f"{LABEL}\n\n{lead}, **in short** [1]:\n\n{core(plan.explanation.answer)}"
        if plan.check_question:
            text += f"\n\n**Check yourself:** {plan.check_question}"
        return text
    if plan.kind == "explanation" and plan.already_said:
        text = f"{LABEL}\n\n**The answer above already says it** [1]:\n\n> {plan.already_said}"
        if plan.check_question:
            text += f"\n\n**Check yourself:** {plan.check_question}"
        return text
    if plan.kind == "explanation":
        # The explanation's own question heads it, so the learner sees which question this answers.
        parts = [LABEL, f"**{plan.explanation.question}**", f"{plan.explanation.answer.strip()} [1]"]
        if plan.support is not None:
            parts.append(f"**From the lesson** [2]: {plan.quote}")
        text = "\n\n".join(parts) + _uncovered(plan)
        if plan.check_question:
            text += f"\n\n**Check yourself:** {plan.check_question}"
        return text
    # passage: no authored answer matched well enough; quote the lesson, offer the closest questions
    return (
        f"{LABEL}\n\nThe course has no written answer to exactly this question. The closest lesson passage, "
        f"*{cites[0]['title']}* [1], says:\n\n> {opening(plan.support)}{_uncovered(plan)}{_did_you_mean(plan)}"
    )
