"""The operators' view: the staff fleet page and /metrics, from real heartbeats and queues in Redis."""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from labs.models import LabRun
from tutor.redis_client import get_redis
from workers.heartbeat import KEY_PREFIX, TASK_PREFIX, WARMING_PREFIX

pytestmark = pytest.mark.django_db

HOST = "gpu7@fleet-test"


@pytest.fixture
def busy_worker(learner):
    """A worker's heartbeat, as a GPU worker on an H200 writes it, running a learner's lab run; two runs waiting."""
    run = LabRun.objects.create(user=learner, experiment="attention", status="running", progress=40, phase="N=4096")
    client = get_redis()
    device = {
        "kind": "cuda",
        "device_kind": "h200",
        "name": "NVIDIA H200",
        "uuid": "GPU-1234abcd",
        "pci_bus_id": "00000000:19:00.0",
        "count": 1,
        "memory_bytes": 150 * 2**30,
    }
    payload = {"hostname": HOST, "queues": ["gpu", "gpu.h200"], "concurrency": 1, "device": device, "pid": 1}
    client.set(KEY_PREFIX + HOST, json.dumps(payload), ex=30)
    task = {"task": "labs.run_lab", "task_id": "t-1", "args": [run.pk], "since": time.time()}
    client.set(TASK_PREFIX + HOST, json.dumps(task), ex=30)
    client.rpush("gpu.h200", "waiting-1", "waiting-2")
    yield run
    client.delete(KEY_PREFIX + HOST, TASK_PREFIX + HOST, WARMING_PREFIX + HOST, "gpu.h200")


def test_staff_see_each_worker_its_gpu_its_current_run_and_the_queue_depths(staff_client, busy_worker):
    page = staff_client.get("/staff/fleet/").content.decode()
    assert HOST in page and "NVIDIA H200" in page and "GPU-1234abcd" in page and "00000000:19:00.0" in page
    assert f"#{busy_worker.pk} attention for ada (40%, N=4096)" in page
    assert "<td>busy</td>" in page
    assert "<td>gpu.h200</td><td>2</td><td>1</td>" in page


def test_a_warming_worker_says_so(staff_client, busy_worker):
    get_redis().set(WARMING_PREFIX + HOST, "1", ex=30)
    assert "<td>warming</td>" in staff_client.get("/staff/fleet/").content.decode()


def test_learners_get_a_404_and_visitors_the_login_page(learner_client, busy_worker, client):
    assert learner_client.get("/staff/fleet/").status_code == 404
    client.logout()
    response = client.get("/staff/fleet/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_metrics_are_refused_to_visitors_and_learners_with_a_json_detail(client, learner):
    response = client.get("/metrics")
    assert response.status_code == 403 and "METRICS_TOKEN" in response.json()["detail"]
    client.force_login(learner)
    assert client.get("/metrics").status_code == 403


def test_metrics_take_the_scrapers_bearer_token_and_only_that(client, settings):
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token").status_code == 200
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403  # no token set: none works


def test_metrics_export_queue_depth_workers_and_lab_durations(staff_client, busy_worker, learner):
    now = timezone.now()
    for run_s, wait_s in ((3, 1), (45, 12)):
        LabRun.objects.create(
            user=learner,
            experiment="fused_vs_unfused",
            device_kind="h200",
            status="done",
            created_at=now,
            started_at=now + timedelta(seconds=wait_s),
            finished_at=now + timedelta(seconds=wait_s + run_s),
        )
    LabRun.objects.filter(experiment="fused_vs_unfused").update(created_at=now)  # auto_now_add set it on create
    response = staff_client.get("/metrics")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert 'tilewise_queue_depth{queue="gpu.h200"} 2.0' in text
    assert 'tilewise_workers{device_kind="h200",state="busy"} 1.0' in text
    assert 'tilewise_lab_runs{status="running"} 1.0' in text and 'tilewise_lab_runs{status="done"} 2.0' in text
    labels = 'device_kind="h200",experiment="fused_vs_unfused"'
    assert f'tilewise_lab_run_seconds_bucket{{{labels},le="5.0"}} 1.0' in text
    assert f'tilewise_lab_run_seconds_bucket{{{labels},le="60.0"}} 2.0' in text
    assert f"tilewise_lab_run_seconds_count{{{labels}}} 2.0" in text
    assert f"tilewise_lab_run_seconds_sum{{{labels}}} 48.0" in text
    assert f'tilewise_lab_wait_seconds_bucket{{{labels},le="10.0"}} 1.0' in text
    assert f"tilewise_lab_wait_seconds_sum{{{labels}}} 13.0" in text


def test_flower_is_behind_the_admin_login(client, learner, staff, settings, tmp_path):
    import http.server
    import threading

    class Flower(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            body = f"flower saw {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Flower)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings.FLOWER_URL = f"http://127.0.0.1:{server.server_port}"
        response = client.get("/staff/flower/tasks?state=FAILURE")
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
        client.force_login(learner)
        assert client.get("/staff/flower/").status_code == 302
        client.force_login(staff)
        response = client.get("/staff/flower/tasks?state=FAILURE")
        assert response.status_code == 200 and response.content == b"flower saw /staff/flower/tasks?state=FAILURE"
        settings.FLOWER_URL = ""
        response = client.get("/staff/flower/")
        assert response.status_code == 404 and "FLOWER_URL" in response.json()["detail"]
    finally:
        server.shutdown()
