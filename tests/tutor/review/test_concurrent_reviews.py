"""Two connections submitting at the same moment (real PostgreSQL in CI; SQLite locally)."""

import http.client
import threading
import time
import uuid

import pytest
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.authtoken.models import Token

from quizzes.models import Card
from tests.conftest import http_call, in_parallel
from tutor.errors import DomainError
from tutor.review.models import CardState, ReviewLog
from tutor.review.services import submit_review

pytestmark = pytest.mark.django_db(transaction=True)


def _race(fn_a, fn_b):
    barrier = threading.Barrier(2)
    results: list = [None, None]

    def run(i, fn):
        barrier.wait()
        try:
            results[i] = fn()
        except Exception as exc:  # collected for the assertions
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate((fn_a, fn_b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_double_submit_with_one_key_records_one_review(learner, shipped_course):
    card = Card.objects.order_by("pk").first()
    k = uuid.uuid4().hex

    def go():
        return submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key=k)

    a, b = _race(go, go)
    assert not isinstance(a, Exception) and not isinstance(b, Exception), (a, b)
    assert sorted([a.duplicate, b.duplicate]) == [False, True]
    assert ReviewLog.objects.filter(user=learner).count() == 1
    assert CardState.objects.get(user=learner, card=card).reps == 1


@pytest.mark.parametrize("seen_before", [False, True])
def test_two_tabs_cannot_both_advance_a_card(learner, shipped_course, seen_before):
    card = Card.objects.order_by("pk").first()
    version = 0
    if seen_before:
        version = submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key="first").state.version

    def tab(rating):
        return lambda: submit_review(
            user=learner, card_id=card.pk, rating=rating, idempotency_key=uuid.uuid4().hex, expected_version=version
        )

    a, b = _race(tab(3), tab(4))
    outcomes = sorted(type(r).__name__ for r in (a, b))
    assert outcomes == ["DomainError", "ReviewOutcome"], (a, b)
    refusal = a if isinstance(a, DomainError) else b
    assert refusal.status == 409, refusal
    assert ReviewLog.objects.filter(user=learner).count() == (2 if seen_before else 1)
    assert CardState.objects.get(user=learner, card=card).version == version + 1


@pytest.mark.services
def test_a_class_submitting_at_the_same_moment_all_get_through(asgi_server, shipped_course):
    """30 learners rate a card at the same instant through the real server: on SQLite (WAL, a busy timeout,
    BEGIN IMMEDIATE) the writes queue for the lock instead of failing with "database is locked"."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cards = list(Card.objects.filter(retired=False).order_by("pk")[:30])
    tokens = [Token.objects.create(user=User.objects.create_user(f"class{i}")).key for i in range(30)]
    pairs = iter(list(zip(tokens, cards, strict=True)))

    def submit():
        token, card = next(pairs)
        body = {"card": card.pk, "rating": 3, "idempotency_key": uuid.uuid4().hex}
        return http_call("POST", f"{asgi_server}/api/review/submit/", token, body)

    answers = in_parallel(30, submit)
    assert [status for status, _ in answers] == [201] * 30, [a for a in answers if a[0] != 201][:3]
    assert ReviewLog.objects.count() == 30


@pytest.mark.services
def test_with_postgres_connections_killed_mid_stream_every_acknowledged_review_is_logged_once(
    asgi_server, shipped_course
):
    """6 learners submit back to back through the real server, each retrying a failed submit with the same
    idempotency key, while another connection terminates all of the server's PostgreSQL backends (found by
    application_name), 5 times 0.5 s apart (the pool replaces them: each connection is checked as it leaves it)."""
    if connection.vendor != "postgresql":
        pytest.skip("pg_terminate_backend is PostgreSQL's; SQLite has no server connections to kill")
    import psycopg

    from tests.conftest import TEST_SERVER_APP_NAME, database_url_for_subprocess

    learners, per_learner = 6, 30
    cards = list(Card.objects.filter(retired=False).order_by("pk")[:per_learner])
    users = [User.objects.create_user(f"faulty{i}") for i in range(learners)]
    tokens = [Token.objects.create(user=u).key for u in users]
    stop = threading.Event()
    killed: list[int] = []

    def killer():
        with psycopg.connect(database_url_for_subprocess(), autocommit=True) as db:
            for _ in range(5):
                if stop.wait(0.5):
                    return
                # Only the server's connections: the test process's own (its threads' too) must live on.
                rows = db.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND application_name = %s",
                    [TEST_SERVER_APP_NAME],
                ).fetchall()
                killed.append(len(rows))

    acknowledged: dict[str, int] = {}  # idempotency key -> user id
    failures: list[tuple[int, str]] = []

    def learner_submits(index: int) -> None:
        for card in cards:
            key = uuid.uuid4().hex
            body = {"card": card.pk, "rating": 3, "idempotency_key": key}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    status, text = http_call("POST", f"{asgi_server}/api/review/submit/", tokens[index], body, 20)
                except (OSError, http.client.HTTPException) as exc:  # the connection itself failed: send again
                    status, text = 0, str(exc)
                if 200 <= status < 300:
                    acknowledged[key] = users[index].pk
                    break
                failures.append((status, text[:200]))
                time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        clients = [threading.Thread(target=learner_submits, args=(i,)) for i in range(learners)]
        for t in clients:
            t.start()
        for t in clients:
            t.join(300)
    finally:
        stop.set()
        thread.join(10)
    assert sum(killed) > 0, "no backend was terminated: the test tested nothing"
    assert len(acknowledged) == learners * per_learner, (len(acknowledged), failures[:5])
    logged = list(ReviewLog.objects.filter(user__in=users).values_list("idempotency_key", "user_id"))
    assert len(logged) == len(set(logged)) == learners * per_learner
    assert set(logged) == set(acknowledged.items())
    assert all(status >= 500 or status == 0 for status, _ in failures), failures[:5]  # never a 4xx for a retry
