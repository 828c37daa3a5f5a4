"""Lab runs through the API and a real Celery worker (CPU here; GPU workers behave the same)."""

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
    learner_client, dead_broker, monkeypatch, django_capture_on_commit_callbacks
):
    import labs.services

    monkeypatch.setattr(labs.services, "run_lab_task", dead_broker.task(name="labs.run_lab")(lambda run_id: None))
    with django_capture_on_commit_callbacks(execute=True):  # the task is sent once the run is committed
        response = post(learner_client, "/api/labs/runs/", {"experiment": "launch_overhead"})
    assert response.status_code == 201
    run = LabRun.objects.get(pk=response.json()["id"])
    assert run.status == LabRun.Status.FAILED and not run.task_id
    assert "the task broker is unavailable" in run.error and "Your request is kept" in run.error
