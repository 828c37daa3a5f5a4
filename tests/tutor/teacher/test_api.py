"""The teacher's HTTP side under load: input refused before the stream, limits that hold under parallel
requests, and database connections that do not outlive the requests."""

import json
import time
import uuid

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token

from quizzes.models import Card
from tests.conftest import http_call, in_parallel
from tutor.teacher.chat import start_conversation
from tutor.teacher.grade_requests import MAX_QUEUED_GRADES
from tutor.teacher.models import AnswerGrade, ChatTurn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("question", ["why \ud800?", "why\x00?"])
async def test_text_that_cannot_be_stored_is_a_400_before_the_stream(async_client, learner, shipped_course, question):
    await async_client.aforce_login(learner)
    conversation = await sync_to_async(start_conversation)(user=learner)
    response = await async_client.post(
        f"/api/teacher/conversations/{conversation.pk}/ask/",
        json.dumps({"question": question}),  # \ud800 and \u0000 as JSON escapes, as a browser would send them
        content_type="application/json",
    )
    assert response.status_code == 400
    body = json.loads(response.content)
    assert body["field"] == "question" and "may not contain" in body["detail"]
    assert not await ChatTurn.objects.filter(conversation=conversation).aexists()


@pytest.mark.services
def test_parallel_questions_never_pass_the_per_minute_limit(asgi_server, learner, shipped_course, settings):
    token = Token.objects.create(user=learner).key
    conversation = start_conversation(user=learner)
    url = f"{asgi_server}/api/teacher/conversations/{conversation.pk}/ask/"
    answers = in_parallel(30, lambda: http_call("POST", url, token, {"question": "What does kernel fusion save?"}))
    assert all(status in (200, 429) for status, _ in answers), answers
    stored = ChatTurn.objects.filter(conversation=conversation, role=ChatTurn.Role.USER).count()
    assert stored == settings.TEACHER_MESSAGES_PER_MINUTE
    # The ones refused after the stream had started say so in an error event, never with a 5xx.
    refused_late = [body for status, body in answers if status == 200 and "event: error" in body]
    assert all("the limit is" in body for body in refused_late)


def _connections(dbname: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [dbname])
        return cursor.fetchone()[0]


def _settled_connections(dbname: str) -> int:
    """The count once it has stopped changing (a pool opens its connections in the background)."""
    count = _connections(dbname)
    for _ in range(50):
        time.sleep(0.2)
        count, previous = _connections(dbname), count
        if count == previous:
            break
    return count


@pytest.mark.services
def test_connections_are_back_to_their_baseline_after_a_burst_of_asks(asgi_server, shipped_course):
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL's connections (pg_stat_activity)")
    dbname = connection.settings_dict["NAME"]
    learners = [get_user_model().objects.create_user(f"burst{i}") for i in range(8)]
    asks = []
    for user in learners:
        token = Token.objects.create(user=user).key
        conversation = start_conversation(user=user)
        url = f"{asgi_server}/api/teacher/conversations/{conversation.pk}/ask/"
        asks += [(url, token)] * 5
    http_call("GET", f"{asgi_server}/api/me/", asks[0][1])  # the server has opened its pool: the baseline
    baseline = _settled_connections(dbname)
    pending = iter(asks)
    answers = in_parallel(20, lambda: [http_call("POST", u, t, {"question": "What is a kernel?"}) for u, t in pending])
    assert [status for batch in answers for status, _ in batch] == [200] * len(asks)
    deadline = time.monotonic() + 10
    while (count := _connections(dbname)) > baseline and time.monotonic() < deadline:
        time.sleep(0.2)
    assert count <= baseline, f"{count} connections open after the burst, {baseline} before"


@pytest.mark.services
def test_parallel_grade_requests_queue_at_most_the_limit(asgi_server, learner, shipped_course):
    token = Token.objects.create(user=learner).key
    card = Card.objects.filter(kind="interview").first()
    url = f"{asgi_server}/api/review/grade/"
    answers = in_parallel(10, lambda: http_call("POST", url, token, {"card": card.pk, "answer": uuid.uuid4().hex}))
    statuses = sorted(status for status, _ in answers)
    assert statuses == [202] * MAX_QUEUED_GRADES + [429] * (10 - MAX_QUEUED_GRADES), answers
    refusal = json.loads(next(body for status, body in answers if status == 429))
    assert "waiting to be graded" in refusal["detail"] and refusal["field"] == "answer"
    assert AnswerGrade.objects.filter(user=learner).count() == MAX_QUEUED_GRADES


class SlowModelServer:
    """An OpenAI-compatible server on loopback whose chat completions stream one word every 50 ms for
    minutes: a model answer long enough to kill the web process in the middle of it."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for i in range(5000):
                        chunk = {
                            "id": "c1",
                            "object": "chat.completion.chunk",
                            "created": 0,
                            "model": "slow",
                            "choices": [{"index": 0, "delta": {"content": f"word{i} "}, "finish_reason": None}],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(0.05)
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:  # the web process went away
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.services
def test_a_web_process_killed_mid_answer_leaves_the_turn_marked_incomplete(learner, shipped_course, tmp_path):
    """The question is stored before the stream and the answer as it streams: after a SIGKILL of the server
    mid-answer and a restart, the conversation shows the question and the partial answer, marked incomplete."""
    import os
    import signal
    import urllib.request

    from tests.conftest import asgi_process, free_port
    from tutor.teacher.models import CUT_OFF_NOTICE

    model = SlowModelServer()
    token = Token.objects.create(user=learner).key
    conversation = start_conversation(user=learner)
    port = free_port()
    env = {"LLM_BASE_URL": model.url, "LLM_MODEL": "slow", "LLM_TIMEOUT": "2", "REDIS_URL": os.environ["REDIS_URL"]}
    question = "What does kernel fusion save?"
    received = ""
    try:
        with asgi_process(tmp_path / "web.log", env, port) as (url, proc):
            request = urllib.request.Request(
                f"{url}/api/teacher/conversations/{conversation.pk}/ask/",
                data=json.dumps({"question": question}).encode(),
                headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
                method="POST",
            )
            response = urllib.request.urlopen(request, timeout=180)  # the first question loads the matcher
            started = None
            while started is None or time.monotonic() - started < 2.5:  # past a flush or two of the text
                line = response.readline().decode()
                if started is None and line.startswith("event: token"):
                    started = time.monotonic()
                if line.startswith("data: ") and '"text"' in line:
                    received += json.loads(line[6:]).get("text", "")
            assert received.count("word") > 10
            os.killpg(proc.pid, signal.SIGKILL)  # no shutdown, no finally: the process is gone
            proc.wait(10)
            response.close()
        stored = ChatTurn.objects.get(conversation=conversation, role="assistant")
        assert stored.streaming and not stored.complete and stored.text and received.startswith(stored.text)
        with asgi_process(tmp_path / "web.log", env, port) as (url, _):
            deadline = time.monotonic() + 30
            while True:
                status, body = http_call("GET", f"{url}/api/teacher/conversations/{conversation.pk}/", token)
                assert status == 200, body
                turns = json.loads(body)["turns"]
                if not turns[-1]["streaming"]:
                    break
                assert time.monotonic() < deadline, turns[-1]
                time.sleep(0.5)
    finally:
        model.close()
    assert [t["role"] for t in turns] == ["user", "assistant"]
    assert turns[0]["text"] == question
    answer = turns[1]
    assert answer["complete"] is False and answer["notice"] == CUT_OFF_NOTICE
    assert answer["text"].startswith("word0 word1") and received.startswith(answer["text"])
