"""A learner steps through a FlashAttention tiling trace, tile by tile, and opens a roofline."""

import os

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_step_through_a_tiling_trace(live_server, page, learner, shipped_course, celery_worker_process):
    page.goto(f"{live_server.url}/accounts/login/?next=/labs/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-ada-123456")
    page.press("#id_password", "Enter")
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
