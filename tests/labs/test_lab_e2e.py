"""`manage.py lab_e2e` on this CPU machine: real workers, one broker, one database, requests through labs.services."""

import io
import re

import pytest
from django.core.management import CommandError, call_command

from labs.e2e import overlaps
from labs.models import LabRun

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


def lab_e2e(*args) -> str:
    out = io.StringIO()
    call_command("lab_e2e", *args, stdout=out)
    return out.getvalue()


def test_two_workers_share_a_batch_with_no_device_running_two_at_once_and_compare_with_one():
    out = lab_e2e("--workers", "2", "--quick", "--batch", "6", "--learners", "2", "--compare")
    assert out.count("/healthz lists all of them") == 2
    assert "2 worker(s): gpu0@" in out and ", gpu1@" in out
    assert out.count("no GPU ran two runs at once") == 2
    ratio = re.search(r"2 workers / 1 worker: [\d.]+ s / [\d.]+ s = ([\d.]+)x", out)
    assert ratio, out
    runs = list(LabRun.objects.filter(user__username__startswith="lab-e2e-"))
    assert len(runs) == 12 and all(r.status == "done" for r in runs)
    assert {r.user.username for r in runs} == {"lab-e2e-1", "lab-e2e-2"}
    first_batch = sorted(runs, key=lambda r: r.pk)[:6]
    assert {r.worker.split("@")[0] for r in first_batch} == {"gpu0", "gpu1"}  # both workers took runs
    assert not overlaps(runs[:6]) and not overlaps(runs[6:])


def test_overlapping_runs_on_one_device_are_found(learner):
    from datetime import timedelta

    from django.utils import timezone

    t = timezone.now()

    def run(pk, uuid, start, end):
        device = {"uuid": uuid, "name": "NVIDIA H200"}
        return LabRun(
            pk=pk,
            user=learner,
            device=device,
            started_at=t + timedelta(seconds=start),
            finished_at=t + timedelta(seconds=end),
        )

    a, b, c = run(1, "GPU-same", 0, 10), run(2, "GPU-same", 9, 20), run(3, "GPU-other", 0, 5)
    assert overlaps([a, b, c]) == [(a, b)]
    b.started_at = t + timedelta(seconds=10)
    assert overlaps([a, b, c]) == []


def test_a_batch_larger_than_the_learners_may_queue_is_refused_before_anything_starts():
    with pytest.raises(CommandError, match="3 runs queued at once"):
        lab_e2e("--workers", "2", "--quick", "--batch", "8", "--learners", "2")
