"""Sending a task: after the transaction commits, on the real broker; a dead broker goes to the fallback."""

import time
import uuid

import pytest
from django.db import transaction

from tests.conftest import RedisServer
from tutor.redis_client import get_redis
from workers.app import app
from workers.queues import send_on_commit
from workers.tasks import ping

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def private_queue():
    """A queue no worker consumes, so the sent message stays where the test can count it."""
    name = f"test-send-{uuid.uuid4().hex[:8]}"
    yield name
    get_redis().delete(name)


def _outcomes():
    seen: dict[str, list[str]] = {"sent": [], "down": []}
    return seen, seen["sent"].append, seen["down"].append


def test_a_task_is_sent_at_once_outside_a_transaction_and_reports_its_id(private_queue):
    seen, on_sent, on_down = _outcomes()
    send_on_commit(ping, args=["x"], queue=private_queue, on_sent=on_sent, on_broker_down=on_down)
    assert len(seen["sent"]) == 1 and not seen["down"]
    assert get_redis().llen(private_queue) == 1


def test_inside_a_transaction_the_task_waits_for_the_commit_and_a_rollback_sends_nothing(private_queue):
    seen, on_sent, on_down = _outcomes()
    with transaction.atomic():
        send_on_commit(ping, args=["x"], queue=private_queue, on_sent=on_sent, on_broker_down=on_down)
        assert not seen["sent"] and get_redis().llen(private_queue) == 0
    assert len(seen["sent"]) == 1 and get_redis().llen(private_queue) == 1

    with pytest.raises(RuntimeError), transaction.atomic():
        send_on_commit(ping, args=["y"], queue=private_queue, on_sent=on_sent, on_broker_down=on_down)
        raise RuntimeError("the request failed after queueing")
    assert len(seen["sent"]) == 1 and get_redis().llen(private_queue) == 1


def test_a_dead_broker_goes_to_the_fallback_with_one_line_and_raises_nothing(dead_broker, dead_task):
    task = dead_task("workers.ping")
    seen, on_sent, on_down = _outcomes()
    send_on_commit(task, args=["x"], queue="default", on_sent=on_sent, on_broker_down=on_down)
    assert not seen["sent"] and len(seen["down"]) == 1
    reason = seen["down"][0]
    assert reason.startswith("the task broker is unavailable (") and "\n" not in reason and len(reason) < 260
    assert "redis" in reason.lower() or "connect" in reason.lower(), reason  # the connection failed, nothing else
    assert "restart" not in reason  # Celery's advice to restart the app: the next send works (test below)
    assert app.conf.broker_url != dead_broker.conf.broker_url  # the project's app was never touched


def test_a_dead_broker_is_given_up_on_within_seconds(dead_task):
    """The request that queues a task waits for the fallback: with the project's settings it comes in about a
    second (before, Celery's Redis result backend retried for 19 s)."""
    task = dead_task("workers.ping")
    seen, on_sent, on_down = _outcomes()
    started = time.monotonic()
    send_on_commit(task, args=["x"], queue="default", on_sent=on_sent, on_broker_down=on_down)
    assert len(seen["down"]) == 1
    assert time.monotonic() - started < 8


def test_once_the_broker_is_back_the_next_task_goes_through(dead_broker, dead_task, tmp_path):
    """The web process needs no restart after a broker outage: a Redis started on the dead port takes the next
    task."""
    task = dead_task("workers.ping")
    seen, on_sent, on_down = _outcomes()
    send_on_commit(task, args=["x"], queue="default", on_sent=on_sent, on_broker_down=on_down)
    assert len(seen["down"]) == 1
    port = int(dead_broker.conf.broker_url.rsplit(":", 1)[1].split("/")[0])
    server = RedisServer(tmp_path, port=port)
    server.start()  # returns once it listens
    try:
        send_on_commit(task, args=["x"], queue="default", on_sent=on_sent, on_broker_down=on_down)
        assert len(seen["sent"]) == 1
    finally:
        server.kill()
