"""A learner steps through a FlashAttention tiling trace, tile by tile, and opens a roofline."""

import os

import pytest

from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_step_through_a_tiling_trace(live_server, page, learner, shipped_course, celery_worker_process):
    browser_login(page, live_server, "/labs/")
    lab = page.locator("#lab-flash_tiling_trace")
    lab.locator("summary").click()
    lab.locator("input[name=seq_len]").fill("64")
    lab.locator("input[name=block_m]").fill("16")
    lab.locator("input[name=block_n]").fill("16")
    lab.locator("button[type=submit]").click()
    page.wait_for_url("**/labs/runs/*/")
    page.wait_for_selector("#run[data-status='done']", timeout=120_000)
    page.wait_for_selector("#trace:not([hidden])")
    assert page.inner_text("#trace-pos").startswith("step 1 of 16")
    first_bytes = page.inner_text("#trace-bytes")
    page.click("#trace-next")
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#trace-pos").startswith("step 3 of 16")
    assert page.inner_text("#trace-bytes") != first_bytes
    assert "K/V rows 32–47 (block 2)" in page.inner_text("#trace-tile")
    page.click("#trace-prev")
    assert page.inner_text("#trace-pos").startswith("step 2 of 16")
    assert "naive attention moves" in page.inner_text("#trace-bytes")
    if os.environ.get("TILEWISE_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["TILEWISE_SCREENSHOTS"], "trace.png"), full_page=True)


def test_open_a_run_on_the_roofline_after_calibrating_the_device(
    live_server, page, learner, shipped_course, celery_worker_process
):
    browser_login(page, live_server, "/labs/")
    lab = page.locator("#lab-launch_overhead")
    lab.locator("summary").click()
    lab.locator("input[name=lengths]").fill("10,50")
    lab.locator("button[type=submit]").click()
    page.wait_for_url("**/labs/runs/*/")
    page.wait_for_selector("#run[data-status='done']", timeout=120_000)
    run_url = page.url
    page.click("#roofline-show")
    page.wait_for_selector("#roofline-msg:has-text('No roofs measured')")
    page.click("text=Calibrate this device now")
    page.wait_for_url(lambda url: url != run_url)
    page.wait_for_selector("#run[data-status='done']", timeout=120_000)
    page.goto(run_url)
    page.wait_for_selector("#run[data-status='done']")
    page.click("#roofline-show")
    page.wait_for_selector("#run[data-roofline='shown']")
    assert "ridge point" in page.inner_text("#roofline-msg")
    rows = page.locator("#roofline-table tr")
    assert rows.count() >= 3
    assert "bound" in page.inner_text("#roofline-table")
    if os.environ.get("TILEWISE_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["TILEWISE_SCREENSHOTS"], "roofline.png"), full_page=True)
