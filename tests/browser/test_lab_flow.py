"""A learner requests a lab in the browser, watches it run on a real worker, and finds it in the session."""

import pytest

from labs.models import LabRun
from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_request_a_lab_watch_it_run_and_find_it_in_the_session(
    live_server, page, learner, shipped_course, celery_worker_process
):
    browser_login(page, live_server, "/labs/")
    lab = page.locator("#lab-launch_overhead")
    lab.locator("summary").click()
    lab.locator("input[name=lengths]").fill("10,50")
    lab.locator("input[name=predicted_speedup]").fill("4")
    lab.locator("button[type=submit]").click()

    page.wait_for_url("**/labs/runs/*/")
    page.wait_for_selector("#run[data-status='done']", timeout=120_000)
    assert page.locator("#run-result").is_visible()
    assert page.inner_text("#predicted") == "4×"
    assert "CPU" in page.inner_text("#device")
    assert page.locator("canvas#plot").bounding_box()["height"] > 100
    assert page.locator("#artifacts a", has_text="plot.svg").count() == 1

    run = LabRun.objects.get(user=learner)
    page.goto(f"{live_server.url}/sessions/{run.session_id}/")
    assert page.locator(f"a[href='/labs/runs/{run.pk}/']").count() == 1
