"""LLM mode against a real OpenAI-compatible server (llama.cpp + SmolLM2), not a mock."""

import json

import pytest
from asgiref.sync import sync_to_async

from quizzes.models import Card
from tutor.teacher import prompts
from tutor.teacher.answer_plan import plan_answer
from tutor.teacher.chat import start_conversation
from tutor.teacher.models import ChatTurn

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def events_of(body: str):
    out = []
    for frame in body.strip().split("\n\n"):
        lines = frame.split("\n")
        out.append((lines[0].removeprefix("event: "), json.loads(lines[1].removeprefix("data: "))))
    return out


async def ask(client, conversation, question):
    response = await client.post(
        f"/api/teacher/conversations/{conversation.pk}/ask/", {"question": question}, content_type="application/json"
    )
    assert response.status_code == 200
    return events_of(b"".join([c async for c in response.streaming_content]).decode())


@pytest.fixture
def llm_settings(llm_server, settings):
    settings.LLM_BASE_URL = llm_server
    settings.LLM_MODEL = "smollm2"
    settings.LLM_MAX_TOKENS = 40
    settings.LLM_TIMEOUT = 60
    return settings


async def test_answers_stream_from_the_model_and_are_stored(llm_settings, async_client, learner, shipped_course):
    await async_client.aforce_login(learner)
    conversation = await sync_to_async(start_conversation)(user=learner)
    events = await ask(async_client, conversation, "What does kernel fusion save?")
    assert events[0][0] == "meta" and events[0][1]["mode"] == "llm" and events[0][1]["citations"], events
    tokens = [d["text"] for n, d in events if n == "token"]
    assert len(tokens) >= 3
    assert events[-1][0] == "done" and events[-1][1]["complete"] is True
    turn = await ChatTurn.objects.filter(conversation=conversation, role="assistant").aget()
    assert turn.mode == "llm" and turn.model == "smollm2" and turn.text == "".join(tokens)


def test_the_explanation_and_passage_go_into_the_user_turn_not_only_the_system_message(shipped_course):
    plan = plan_answer("What does kernel fusion save?", course=shipped_course)
    assert plan.kind == "explanation"
    messages = prompts.chat_messages("What does kernel fusion save?", plan, [], hint=False)
    assert messages[-1]["role"] == "user"
    assert plan.explanation.answer.strip()[:80] in messages[-1]["content"]
    assert "build on it" in messages[0]["content"]


async def test_a_model_that_times_out_falls_back_with_one_line(llm_settings, async_client, learner, shipped_course):
    llm_settings.LLM_TIMEOUT = 0.001
    await async_client.aforce_login(learner)
    conversation = await sync_to_async(start_conversation)(user=learner)
    events = await ask(async_client, conversation, "What does kernel fusion save?")
    notices = [d["text"] for n, d in events if n == "notice"]
    assert len(notices) == 1 and "did not answer within" in notices[0] and "\n" not in notices[0]
    text = "".join(d["text"] for n, d in events if n == "token")
    assert "Course-notes mode" in text


async def test_a_server_error_falls_back_with_one_line(llm_settings, async_client, learner, shipped_course):
    llm_settings.LLM_BASE_URL = llm_settings.LLM_BASE_URL.replace("/v1", "/no-such-api/v1")
    await async_client.aforce_login(learner)
    conversation = await sync_to_async(start_conversation)(user=learner)
    events = await ask(async_client, conversation, "What does kernel fusion save?")
    notices = [d["text"] for n, d in events if n == "notice"]
    assert len(notices) == 1 and "HTTP 404" in notices[0]


def test_health_reports_the_model_server(llm_settings, admin_client):
    body = admin_client.get("/healthz").json()  # the details are for staff
    assert body["llm"]["ok"] is True and body["llm"]["mode"] == "llm" and "smollm2" in body["llm"]["models"]


def test_interview_grading_with_the_model_always_returns_a_verdict(llm_settings, shipped_course):
    from tutor.teacher.rubric_grading import grade_against_rubric

    llm_settings.LLM_MAX_TOKENS = 120
    card = Card.objects.filter(kind="interview").first()
    result = grade_against_rubric(card, card.key_points[0])
    assert result["graded"] is True and result["suggested_rating"] in (1, 2, 3, 4)
    assert result["method"]
