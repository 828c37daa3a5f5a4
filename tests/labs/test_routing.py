"""Routing lab runs by device kind, with two real Celery worker processes that fake two kinds of device
(TILEWISE_DEVICE_KIND) on the real broker: what is asked for one kind runs on that kind's worker only."""

import contextlib
import time

import pytest

from labs.models import LabRun
from labs.services import _least_loaded, request_run
from tests.conftest import running_worker
from tutor.redis_client import get_redis
from workers.queues import gpu_queue

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]

TRACE = {"experiment": "flash_tiling_trace", "params": {"seq_len": 64}}


@pytest.fixture
def two_kinds(tmp_path):
    """Worker A on a fake "alpha" device and worker B on a fake "beta" one, both started as `--queues gpu`."""
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(
            running_worker(tmp_path / "a.log", queues="gpu", env={"TILEWISE_DEVICE_KIND": "alpha"}, name="alpha")
        )
        b = stack.enter_context(
            running_worker(tmp_path / "b.log", queues="gpu", env={"TILEWISE_DEVICE_KIND": "beta"}, name="beta")
        )
        yield {"alpha": a["hostname"], "beta": b["hostname"]}


def post(client, data):
    return client.post("/api/labs/runs/", data, content_type="application/json")


def wait_done(ids, timeout=120):
    deadline = time.monotonic() + timeout
    while LabRun.objects.filter(pk__in=ids, status__in=LabRun.ACTIVE).exists():
        assert time.monotonic() < deadline, list(LabRun.objects.filter(pk__in=ids).values("status", "phase"))
        time.sleep(0.1)
    return list(LabRun.objects.filter(pk__in=ids))


def test_each_worker_joins_its_device_kinds_queue_at_start_up(two_kinds, staff_client):
    workers = {w["hostname"]: w for w in staff_client.get("/healthz").json()["workers"]["workers"]}
    assert workers[two_kinds["alpha"]]["queues"] == ["gpu", "gpu.alpha"]
    assert workers[two_kinds["beta"]]["queues"] == ["gpu", "gpu.beta"]
    assert workers[two_kinds["alpha"]]["device"]["device_kind"] == "alpha"


def test_runs_asked_for_one_kind_land_on_that_kinds_worker_only(two_kinds, learner_client, other_learner, client):
    alpha = [post(learner_client, {**TRACE, "device_kind": "alpha"}) for _ in range(3)]
    assert all(r.status_code == 201 for r in alpha), alpha[0].json()
    assert {r.json()["queue"] for r in alpha} == {"gpu.alpha"}
    client.force_login(other_learner)
    beta = [post(client, {**TRACE, "device_kind": "BETA"}) for _ in range(3)]  # kinds are case-insensitive
    runs = wait_done([r.json()["id"] for r in alpha + beta])
    assert all(r.status == "done" for r in runs), [r.error for r in runs]
    for run in runs:
        assert run.worker == two_kinds[run.device_kind], (run.device_kind, run.worker)
        assert run.device["worker"] == run.worker and run.device["host"]


def test_a_kind_that_is_not_online_is_refused_before_queueing_with_a_json_detail(two_kinds, learner_client):
    response = post(learner_client, {**TRACE, "device_kind": "h200"})
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "device_kind"
    assert body["detail"].startswith("No h200 worker is online, so the run was not queued.")
    assert "alpha, beta" in body["detail"]
    assert not LabRun.objects.exists()
    assert get_redis().llen(gpu_queue("h200")) == 0
    catalog = learner_client.get("/api/labs/experiments/?device_kind=h200")
    assert catalog.status_code == 400 and "No h200 worker" in catalog.json()["detail"]


@pytest.mark.parametrize("kind", ["h100!", "a" * 40, " ", "../gpu"])
def test_a_device_kind_that_is_no_kind_is_a_400_naming_the_field(learner_client, kind):
    response = post(learner_client, {**TRACE, "device_kind": kind})
    assert response.status_code == 400 and response.json()["field"] == "device_kind"
    assert not LabRun.objects.exists()


def test_any_goes_to_an_online_kind_and_runs_there(two_kinds, learner_client):
    response = post(learner_client, {**TRACE, "device_kind": "any"})
    assert response.status_code == 201
    (run,) = wait_done([response.json()["id"]])
    assert run.status == "done" and run.device_kind == "any"
    assert run.queue in {"gpu.alpha", "gpu.beta"} and run.worker == two_kinds[run.queue.removeprefix("gpu.")]


def test_any_prefers_an_idle_worker_then_the_shorter_queue():
    def worker(kind, state):
        return {"hostname": f"{kind}@x", "state": state, "device": {"device_kind": kind}}

    kinds = {"alpha": [worker("alpha", "busy")], "beta": [worker("beta", "idle")]}
    assert _least_loaded(kinds) == "beta"
    kinds = {"alpha": [worker("alpha", "busy")], "beta": [worker("beta", "busy")]}
    client = get_redis()
    try:
        client.rpush(gpu_queue("alpha"), "waiting-1", "waiting-2")
        assert _least_loaded(kinds) == "beta"
        client.rpush(gpu_queue("beta"), "w-1", "w-2", "w-3")
        assert _least_loaded(kinds) == "alpha"
    finally:
        client.delete(gpu_queue("alpha"), gpu_queue("beta"))


def test_with_no_worker_online_a_run_waits_on_the_shared_gpu_queue_for_the_first_worker(learner, tmp_path):
    run = request_run(user=learner, experiment="flash_tiling_trace", params={"seq_len": 64})
    assert run.queue == "gpu" and run.status == "queued"
    with running_worker(tmp_path / "w.log", queues="gpu") as worker:  # the one-GPU install: a plain gpu worker
        (run,) = wait_done([run.pk])
    assert run.status == "done" and run.worker == worker["hostname"]


def test_the_lab_form_offers_the_kinds_and_marks_the_offline_ones(two_kinds, learner_client):
    page = learner_client.get("/labs/").content.decode()
    assert '<option value="any">any</option>' in page
    assert '<option value="alpha">alpha</option>' in page
    assert '<option value="h200">h200 (offline)</option>' in page
