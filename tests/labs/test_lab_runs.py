"""Lab runs through the API and a real Celery worker (CPU here; GPU workers behave the same)."""

import json
import os
import signal
import time

import pytest
from rest_framework.authtoken.models import Token

from labs.models import LabRun
from labs.services import MAX_ACTIVE_RUNS, reap_stale_runs
from tests.conftest import http_call, in_parallel

pytestmark = pytest.mark.django_db


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def wait_for(run_id, statuses, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = LabRun.objects.get(pk=run_id)
        if run.status in statuses:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} stayed {LabRun.objects.get(pk=run_id).status}")


def test_catalog_lists_experiments_with_bounded_parameters(learner_client):
    body = learner_client.get("/api/labs/experiments/").json()
    ids = {e["id"] for e in body["experiments"]}
    assert {"fused_vs_unfused", "launch_overhead", "attention"} <= ids
    assert body["target"]["kind"] in {"cpu", "cuda"}
    assert all(e["params"] for e in body["experiments"])


@pytest.mark.parametrize(
    "body,field",
    [
        ({"experiment": "nope"}, "experiment"),
        ({"experiment": "fused_vs_unfused", "params": {"sizes": "64x99999999"}}, "sizes"),
        ({"experiment": "fused_vs_unfused", "params": {"dtype": "int3"}}, "dtype"),
        ({"experiment": "launch_overhead", "predicted_speedup": -2}, "predicted_speedup"),
    ],
)
def test_bad_requests_are_refused_naming_the_field_and_nothing_is_queued(learner_client, body, field):
    response = post(learner_client, "/api/labs/runs/", body)
    assert response.status_code == 400
    assert response.json()["field"] == field, response.json()
    assert LabRun.objects.count() == 0


def test_quota_of_active_runs(learner_client):
    for _ in range(MAX_ACTIVE_RUNS):
        assert post(learner_client, "/api/labs/runs/", {"experiment": "launch_overhead"}).status_code == 201
    refused = post(learner_client, "/api/labs/runs/", {"experiment": "launch_overhead"})
    assert refused.status_code == 429 and f"already have {MAX_ACTIVE_RUNS}" in refused.json()["detail"]


@pytest.mark.services
def test_parallel_requests_never_pass_the_quota(asgi_server, learner):
    """20 requests at once, each its own connection to the database (PostgreSQL in CI): exactly 3 runs."""
    token = Token.objects.create(user=learner).key
    url = f"{asgi_server}/api/labs/runs/"
    answers = in_parallel(20, lambda: http_call("POST", url, token, {"experiment": "launch_overhead"}))
    assert sorted(status for status, _ in answers) == [201] * MAX_ACTIVE_RUNS + [429] * (20 - MAX_ACTIVE_RUNS)
    assert LabRun.objects.filter(user=learner).count() == MAX_ACTIVE_RUNS


def test_a_queued_run_can_be_cancelled_and_a_finished_one_cannot(learner_client):
    run = post(learner_client, "/api/labs/runs/", {"experiment": "launch_overhead"}).json()
    response = post(learner_client, f"/api/labs/runs/{run['id']}/cancel/", {})
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert post(learner_client, f"/api/labs/runs/{run['id']}/cancel/", {}).status_code == 409


def test_another_learners_runs_are_invisible(client, learner, other_learner):
    client.force_login(other_learner)
    theirs = post(client, "/api/labs/runs/", {"experiment": "launch_overhead"}).json()["id"]
    client.force_login(learner)
    assert client.get(f"/api/labs/runs/{theirs}/").status_code == 404
    assert post(client, f"/api/labs/runs/{theirs}/cancel/", {}).status_code == 404
    assert client.get(f"/labs/runs/{theirs}/").status_code == 404
    assert client.get(f"/labs/runs/{theirs}/artifacts/result.json").status_code == 404
    assert client.get("/api/labs/runs/").json()["count"] == 0
    assert LabRun.objects.get(pk=theirs).status == "queued"


@pytest.mark.services
def test_a_run_goes_queued_running_done_on_a_real_worker(learner_client, celery_worker_process):
    created = post(
        learner_client,
        "/api/labs/runs/",
        {"experiment": "launch_overhead", "params": {"lengths": "10,50"}, "predicted_speedup": 3},
    )
    assert created.status_code == 201, created.json()
    run = wait_for(created.json()["id"], {"done", "failed"})
    assert run.status == "done", run.error
    body = learner_client.get(f"/api/labs/runs/{run.pk}/").json()
    assert body["device"]["kind"] == "cpu" and body["result"]["method"]
    assert body["predicted_speedup"] == 3 and body["measured_speedup"]["value"] > 0
    names = {a["name"] for a in body["artifacts"]}
    assert names == {"result.json", "plot.svg"}
    svg = learner_client.get(f"/labs/runs/{run.pk}/artifacts/plot.svg")
    assert svg.status_code == 200 and b"<svg" in b"".join(svg.streaming_content)
    assert run.session_id is not None


@pytest.mark.services
def test_a_worker_killed_mid_run_leaves_nothing_stuck(learner_client, celery_worker_process, tmp_path):
    created = post(
        learner_client, "/api/labs/runs/", {"experiment": "launch_overhead", "params": {"lengths": "10,50,100,200,400"}}
    ).json()
    wait_for(created["id"], {"running"})
    os.killpg(celery_worker_process["process"].pid, signal.SIGKILL)
    celery_worker_process["process"].wait(10)
    time.sleep(7)  # the dead worker's heartbeat (TTL 6 s in tests) expires
    assert reap_stale_runs() == 1
    run = LabRun.objects.get(pk=created["id"])
    assert run.status == "queued" and run.attempts == 1 and "stopped mid-run" in run.phase
    # A second death exhausts the retry: the run fails with a reason a person can read.
    LabRun.objects.filter(pk=run.pk).update(status="running", attempts=2, worker="gone@nowhere")
    assert reap_stale_runs() == 1
    failed = LabRun.objects.get(pk=run.pk)
    assert failed.status == "failed" and "stopped during this run 2 times" in failed.error


def test_with_the_broker_down_the_request_is_kept_and_says_why(
    learner_client, dead_task, monkeypatch, django_capture_on_commit_callbacks
):
    import labs.services

    monkeypatch.setattr(labs.services, "run_lab_task", dead_task("labs.run_lab"))
    with django_capture_on_commit_callbacks(execute=True):  # the task is sent once the run is committed
        response = post(learner_client, "/api/labs/runs/", {"experiment": "launch_overhead"})
    assert response.status_code == 201
    run = LabRun.objects.get(pk=response.json()["id"])
    assert run.status == LabRun.Status.FAILED and not run.task_id
    assert "the task broker is unavailable" in run.error and "Your request is kept" in run.error
    assert run.phase == "failed: not queued"  # not still "queued (...)" beside the failed status


@pytest.mark.services
def test_runs_queued_when_redis_restarts_all_finish_or_fail_with_a_reason(
    transactional_db, learner, other_learner, tmp_path
):
    """Redis (no persistence) is killed and started again while runs wait in its queue: every message is
    lost, and the worker's sweep sends them again; each run ends done, or failed with a reason, and none runs
    twice."""
    import redis

    from tests.conftest import RedisServer, asgi_process, running_worker
    from workers.heartbeat import KEY_PREFIX

    broker = RedisServer(tmp_path)
    broker.start()
    client = redis.Redis.from_url(broker.url)

    def heartbeat(hostname: str) -> None:
        deadline = time.monotonic() + 60
        while not client.exists(KEY_PREFIX + hostname):
            assert time.monotonic() < deadline, "the worker did not come up"
            time.sleep(0.2)

    env = {"REDIS_URL": broker.url, "LAB_REQUEUE_SECONDS": "2"}
    try:
        with (
            running_worker(tmp_path / "worker.log", env=env, wait=heartbeat),
            asgi_process(tmp_path / "web.log", env) as (url, _),
        ):
            ids = []
            for user in (learner, other_learner):
                token = Token.objects.create(user=user).key
                for _ in range(2 if user == other_learner else MAX_ACTIVE_RUNS):
                    status, body = http_call(
                        "POST",
                        f"{url}/api/labs/runs/",
                        token,
                        {"experiment": "launch_overhead", "params": {"lengths": "10,50"}},
                    )
                    assert status == 201, body
                    ids.append(json.loads(body)["id"])
            wait_for(ids[0], {"running", "done"})
            queues = set(LabRun.objects.filter(pk__in=ids).values_list("queue", flat=True))
            assert len(task_ids_waiting(broker.url, queues)) >= 3  # the rest wait in Redis, one behind the other
            broker.kill()
            time.sleep(1)
            broker.start()  # empty: the queue and the unacknowledged messages are gone
            ends = [wait_for(pk, {"done", "failed"}, timeout=240) for pk in ids]
    finally:
        if broker.proc.poll() is None:
            broker.kill()
    for run in ends:
        assert run.status == "done" or (run.status == "failed" and run.error), (run.pk, run.status, run.error)
        assert run.attempts == 1, (run.pk, run.attempts)  # executed once
    assert any(run.sends > 1 for run in ends)  # lost messages were sent again
    assert sum(run.status == "done" for run in ends) == len(ends), [(r.pk, r.status, r.error) for r in ends]


def task_ids_waiting(url: str, queues: set[str]) -> set[str] | None:
    """The task ids the Redis broker at `url` holds, queued in `queues` or delivered (None: unreachable)."""
    from celery import Celery

    from workers.queues import task_ids_in_broker

    return task_ids_in_broker(Celery("probe", broker=url, set_as_current=False), queues=tuple(queues))


def test_a_queued_run_the_broker_lost_is_sent_again_then_failed_with_the_reason(learner, settings):
    from datetime import timedelta

    from django.utils import timezone

    from labs.services import MAX_SENDS, requeue_lost_runs
    from labs.tasks import run_lab
    from workers.app import app

    settings.LAB_REQUEUE_SECONDS = 5
    long_ago = timezone.now() - timedelta(seconds=30)
    lost = LabRun.objects.create(user=learner, experiment="launch_overhead", task_id="gone", sends=1, sent_at=long_ago)
    fresh = LabRun.objects.create(user=learner, experiment="launch_overhead", task_id="new", sends=1)
    LabRun.objects.filter(pk=fresh.pk).update(sent_at=timezone.now())
    waiting = LabRun.objects.create(user=learner, experiment="launch_overhead", sends=1, sent_at=long_ago)
    waiting.task_id = run_lab.apply_async(args=[waiting.pk], queue="gpu").id  # really in the broker's queue
    waiting.save()
    try:
        assert requeue_lost_runs() == 1
    finally:
        app.control.purge()
    lost.refresh_from_db()
    assert lost.status == "queued" and lost.sends == 2 and lost.task_id != "gone" and "lost it" in lost.phase
    assert LabRun.objects.get(pk=waiting.pk).sends == 1 and LabRun.objects.get(pk=fresh.pk).sends == 1
    LabRun.objects.filter(pk__in=[waiting.pk, fresh.pk]).delete()  # its message was purged just now

    LabRun.objects.filter(pk=lost.pk).update(sends=MAX_SENDS, sent_at=long_ago)
    assert requeue_lost_runs() == 1
    lost.refresh_from_db()
    assert lost.status == "failed" and f"lost this run {MAX_SENDS} times" in lost.error
