"""The teacher's conversations: what to retrieve, which mode answers, and what is stored.

The learner's question is saved before anything is generated. The answer's turn is stored when it
starts (`streaming`), its text saved at most every STREAM_FLUSH_SECONDS while it streams, and marked
complete or incomplete when it ends; a turn still `streaming` long after its last save was cut off by
a web process that stopped (ChatTurn.cut_off), and readers show it as incomplete. No turn is lost.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from quizzes.markdown import render_markdown
from quizzes.models import Card, Course
from tutor.errors import DomainError
from tutor.review.days import day_bounds, learner_zone, study_day
from tutor.review.models import ReviewLog
from tutor.review.services import learner_settings, lock_learner
from tutor.review.study_sessions import touch_session
from tutor.teacher import llm, notes_answer, prompts
from tutor.teacher.answer_plan import Plan, default_course, plan_answer
from tutor.teacher.models import STREAM_FLUSH_SECONDS, ChatTurn, Conversation
from tutor.text_input import text_problem

MAX_QUESTION_CHARS = 2000


def check_limits(user, question: str) -> str:
    """The question, trimmed, or DomainError: empty, too long, not text, or too many messages this minute.

    Called inside a transaction (store_question), the learner stays locked until that transaction
    ends, so parallel questions are counted one after another and never pass the limit together.
    """
    question = (question or "").strip()
    if not question:
        raise DomainError("Type a question first.", "question")
    if len(question) > MAX_QUESTION_CHARS:
        raise DomainError(f"Questions are limited to {MAX_QUESTION_CHARS} characters.", "question")
    problem = text_problem(question)
    if problem:
        raise DomainError(problem, "question")
    with transaction.atomic():  # joins the caller's transaction when there is one: the lock lasts as long
        lock_learner(user)
        recent = ChatTurn.objects.filter(
            conversation__user=user, role=ChatTurn.Role.USER, created_at__gte=timezone.now() - timedelta(minutes=1)
        ).count()
    if recent >= settings.TEACHER_MESSAGES_PER_MINUTE:
        raise DomainError(
            f"You have asked {recent} questions in the last minute; the limit is "
            f"{settings.TEACHER_MESSAGES_PER_MINUTE}. Wait a moment and ask again.",
            "question",
            status=429,
        )
    return question


def store_question(conversation: Conversation, question: str) -> ChatTurn:
    """Store the learner's question, counted against the per-minute limit in the same transaction."""
    with transaction.atomic():
        question = check_limits(conversation.user, question)
        return ChatTurn.objects.create(
            conversation=conversation, role=ChatTurn.Role.USER, text=question, text_html=render_markdown(question)
        )


def start_conversation(
    *, user, card: Card | None = None, lab_run_id: int | None = None, title: str = "", course: Course | None = None
) -> Conversation:
    """A new conversation about one course: the card's, the one asked for, or the learner's current one."""
    session = touch_session(user, timezone.now())
    course = card.course if card is not None else course or default_course(user)
    return Conversation.objects.create(
        user=user, session=session, course=course, card=card, lab_run_id=lab_run_id, title=title[:200]
    )


def hint_mode_for(conversation: Conversation) -> bool:
    """Asked from a card the learner has not reviewed yet today: hint, don't tell."""
    if conversation.card_id is None:
        return False
    zone = learner_zone(learner_settings(conversation.user).timezone)
    start, end = day_bounds(study_day(timezone.now(), zone), zone)
    return not ReviewLog.objects.filter(
        user=conversation.user,
        card_id=conversation.card_id,
        reviewed_at__gte=start,
        reviewed_at__lt=end,
        undone_at__isnull=True,
    ).exists()


def lab_offer(plan: Plan, device_kind: str = "any") -> dict | None:
    """A lab that shows what the answer teaches, for a one-click run ("see it on a GPU") on `device_kind`."""
    from labs.experiments.catalog import CATALOG
    from quizzes.models import Section

    candidates = [plan.lab] if plan.lab else []
    if plan.answerable:
        for hit in plan.hits[:2]:
            candidates += (
                Section.objects.filter(slug=hit.passage.section_slug).values_list("labs", flat=True).first() or []
            )
    for lab_id in candidates:
        if lab_id in CATALOG:
            return {"experiment": lab_id, "title": CATALOG[lab_id].title, "device_kind": device_kind}
    return None


def lab_context(conversation: Conversation, question: str) -> tuple[str, str]:
    """The lab run's numbers for the prompt, and a retrieval query that names the experiment's subject."""
    from labs.experiments.catalog import CATALOG
    from labs.models import LabRun
    from labs.services import describe_for_teacher

    run = LabRun.objects.filter(pk=conversation.lab_run_id, user=conversation.user).first()
    if run is None:
        return "", question
    exp = CATALOG.get(run.experiment)
    return describe_for_teacher(run), f"{question} {exp.title} {exp.summary}" if exp else question


@dataclass
class Prepared:
    turn: ChatTurn
    plan: Plan
    hint: bool
    history: list[tuple[str, str]]
    question: str
    context: str


def prepare(conversation: Conversation, question: str, *, context: str = "") -> Prepared:
    """Validate and store the learner's question; decide what the answer rests on."""
    question = check_limits(conversation.user, question)
    earlier = list(conversation.turns.order_by("created_at", "id"))
    history = [(turn.role, turn.text) for turn in earlier]
    previous_explanation = next(
        (turn.explanation_id for turn in reversed(earlier) if turn.role == ChatTurn.Role.ASSISTANT), None
    )
    turn = store_question(conversation, question)
    if not conversation.title:
        conversation.title = question[:120]
    if conversation.course_id is None:  # conversations from before courses were recorded on them
        conversation.course = conversation.card.course if conversation.card_id else default_course(conversation.user)
    conversation.save(update_fields=["title", "course", "updated_at"])
    touch_session(conversation.user, timezone.now())
    query = None
    if conversation.lab_run_id and not context:
        context, query = lab_context(conversation, question)
    plan = plan_answer(
        question,
        course=conversation.course,
        history=history,
        previous_explanation_id=previous_explanation,
        exclude_card_id=conversation.card_id,
        query=query,
    )
    return Prepared(
        turn=turn, plan=plan, hint=hint_mode_for(conversation), history=history, question=question, context=context
    )


def start_answer(conversation: Conversation, prepared: Prepared, *, mode: str) -> ChatTurn:
    """The answer's turn, stored before its first token: if the process dies mid-stream, it stays behind."""
    return ChatTurn.objects.create(
        conversation=conversation,
        role=ChatTurn.Role.ASSISTANT,
        text="",
        mode=mode,
        model=llm.model_name() if mode == ChatTurn.Mode.LLM else "",
        citations=prepared.plan.citations(),
        explanation=prepared.plan.explanation,
        hint_mode=prepared.hint,
        complete=False,
        streaming=True,
    )


def flush_answer(turn: ChatTurn, text: str) -> None:
    """Save the text streamed so far (and that the stream is alive)."""
    ChatTurn.objects.filter(pk=turn.pk).update(text=text, text_html=render_markdown(text), updated_at=timezone.now())


def finish_answer(turn: ChatTurn, text: str, *, mode: str, complete: bool, notice: str = "") -> ChatTurn:
    turn.text, turn.text_html, turn.mode = text, render_markdown(text), mode
    turn.model = llm.model_name() if mode == ChatTurn.Mode.LLM else ""
    turn.complete, turn.streaming, turn.notice, turn.updated_at = complete, False, notice[:300], timezone.now()
    turn.save(update_fields=["text", "text_html", "mode", "model", "complete", "streaming", "notice", "updated_at"])
    return turn


async def answer_events(conversation: Conversation, question: str, *, context: str = "") -> AsyncIterator[dict]:
    """Events for the browser: meta (citations, mode), token..., notice?, done (stored turn)."""
    prepared = await sync_to_async(prepare)(conversation, question, context=context)
    plan = prepared.plan
    use_llm = llm.llm_configured() and plan.answerable
    turn = await sync_to_async(start_answer)(
        conversation, prepared, mode=ChatTurn.Mode.LLM if use_llm else ChatTurn.Mode.COURSE_NOTES
    )
    yield {
        "event": "meta",
        "citations": plan.citations(),
        "hint": prepared.hint,
        "mode": turn.mode,
        "turn": turn.pk,
    }
    pieces: list[str] = []
    notice = ""
    flushed = time.monotonic()
    if use_llm:
        messages = prompts.chat_messages(
            question, plan, prepared.history, hint=prepared.hint, extra_context=prepared.context
        )
        try:
            async for piece in llm.stream_chat(messages):
                event = {"event": "token", "text": piece}
                if not pieces:  # when the model's first token reached us (wall clock): relay latency can be measured
                    event["received_at"] = time.time()
                pieces.append(piece)
                yield event
                if time.monotonic() - flushed >= STREAM_FLUSH_SECONDS:
                    await sync_to_async(flush_answer)(turn, "".join(pieces))
                    flushed = time.monotonic()
        except llm.LLMUnavailable as exc:
            notice = f"The language model could not answer ({exc})"
            if pieces:  # cut off mid-answer: keep what arrived, say so
                turn = await sync_to_async(finish_answer)(
                    turn, "".join(pieces), mode=ChatTurn.Mode.LLM, complete=False, notice=notice
                )
                yield {"event": "notice", "text": notice + "; the answer above is incomplete."}
                yield {"event": "done", "turn": turn.pk, "html": turn.text_html, "complete": False}
                return
            yield {"event": "notice", "text": notice + "; answering from the course notes instead."}
            use_llm = False
    if not use_llm:
        text = notes_answer.compose(plan, hint=prepared.hint, context=prepared.context)
        for word in text.split(" "):
            pieces.append(word + " ")
            yield {"event": "token", "text": word + " "}
        text = text.strip()
    else:
        text = "".join(pieces)
    mode = ChatTurn.Mode.LLM if use_llm else ChatTurn.Mode.COURSE_NOTES
    turn = await sync_to_async(finish_answer)(turn, text, mode=mode, complete=True, notice=notice)
    offer = None if conversation.lab_run_id or prepared.hint else await sync_to_async(lab_offer)(plan)
    yield {"event": "done", "turn": turn.pk, "html": turn.text_html, "complete": True, "lab_offer": offer}
