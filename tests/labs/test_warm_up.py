"""A lab worker warms its experiments at start, in the background, with its compile caches on disk."""

import time

import pytest

from labs.models import LabRun
from labs.services import request_run
from tests.conftest import running_worker
from workers.heartbeat import live_workers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


def state_of(hostname: str) -> str | None:
    return next((w["state"] for w in live_workers() if w["hostname"] == hostname), None)


def test_a_worker_warms_up_then_goes_idle_and_a_run_sent_meanwhile_queues_behind_it(learner, tmp_path):
    cache = tmp_path / "compile-cache"
    env = {
        "LABS_WARM_UP": "true",
        "LABS_WARM_UP_EXPERIMENTS": "flash_tiling_trace",
        "COMPILE_CACHE_DIR": str(cache),
        "TORCHINDUCTOR_CACHE_DIR": "",
        "TRITON_CACHE_DIR": "",
    }
    with running_worker(tmp_path / "w.log", queues="gpu", env=env) as worker:
        run = request_run(user=learner, experiment="flash_tiling_trace", params={"seq_len": 64})
        deadline = time.monotonic() + 120
        while LabRun.objects.get(pk=run.pk).status in LabRun.ACTIVE or state_of(worker["hostname"]) != "idle":
            assert time.monotonic() < deadline, worker["log"].read_text()[-2000:]
            time.sleep(0.2)
        log = worker["log"].read_text()
    assert LabRun.objects.get(pk=run.pk).status == "done"
    assert "warm-up flash_tiling_trace: " in log
    assert (cache / "inductor").is_dir() and (cache / "triton").is_dir()


def test_a_cpu_worker_does_not_warm_up_unless_told(learner, tmp_path):
    with running_worker(tmp_path / "w.log", queues="gpu", env={"LABS_WARM_UP": "auto"}) as worker:
        assert state_of(worker["hostname"]) == "idle"
        time.sleep(1)
        log = worker["log"].read_text()
    assert "labs.warm_up[" not in log and "warm-up " not in log  # no task received, nothing warmed
