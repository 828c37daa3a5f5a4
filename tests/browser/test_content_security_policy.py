"""Every page runs its scripts under the strict Content-Security-Policy: Chromium reports no violation."""

import pytest

from tests.conftest import browser_login
from tutor.review.models import OptimizationRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Pages with a script of their own; each must load without the browser blocking anything.
LEARNER_PAGES = ["/", "/review/", "/stats/", "/settings/", "/labs/", "/teacher/", "/status/", "/learn/", "/api/docs/"]


def record_violations(page) -> list[str]:
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    # The DOM event catches what the console might not (for instance a blocked style attribute).
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', (e) =>"
        " console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));"
    )
    return violations


def test_learner_pages_and_the_settings_chart_run_without_csp_violations(live_server, page, shipped_course, learner):
    curve = {
        "stability_days": 3.0,
        "current": [{"days": d, "recall": 0.9**d} for d in range(10)],
        "fitted": [{"days": d, "recall": 0.85**d} for d in range(10)],
    }
    OptimizationRun.objects.create(user=learner, status="done", curve=curve, message="fitted")
    violations = record_violations(page)
    browser_login(page, live_server, "/settings/")
    page.wait_for_selector("canvas.curve")
    # settings.js (moved out of the page) drew the chart: Chart.js sized the canvas.
    page.wait_for_function("document.querySelector('canvas.curve').width > 0")
    for path in LEARNER_PAGES:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info")
    assert violations == []


def test_the_admin_runs_without_csp_violations(live_server, page, shipped_course, staff):
    violations = record_violations(page)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/quizzes/card/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", "pw-editor-123456")
    page.click("input[type=submit]")
    page.wait_for_selector("#changelist")
    page.click("#changelist tbody tr th a")
    page.wait_for_selector("#id_prompt")
    page.wait_for_load_state("networkidle")
    assert violations == []
