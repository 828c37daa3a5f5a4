import signal
import time

import pytest

from workers.heartbeat import live_workers
from workers.tasks import ping

pytestmark = pytest.mark.services


def test_a_task_goes_through_the_real_broker_to_a_real_worker(celery_worker_process):
    result = ping.apply_async(args=["hello"], queue="default").get(timeout=30)
    assert result["echo"] == "hello"
    assert result["pid"] == celery_worker_process["process"].pid


def test_the_gpu_queue_is_consumed_by_the_local_worker(celery_worker_process):
    assert ping.apply_async(args=["gpu"], queue="gpu").get(timeout=30)["echo"] == "gpu"


def test_a_stopped_worker_drops_out_of_the_live_list(celery_worker_process):
    proc = celery_worker_process["process"]
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(w["hostname"] != celery_worker_process["hostname"] for w in live_workers()):
            return
        time.sleep(0.2)
    pytest.fail("stopped worker still listed")
