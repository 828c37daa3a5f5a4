"""axe-core in the browser tests: every page a test opens can be checked for serious and critical violations.

axe-core is the npm package pinned in tests/browser/axe/package-lock.json (`make install-dev` runs
`npm ci` there; the `page` fixture runs it if it has not been). Playwright adds it to every page as an init
script, which the page's Content-Security-Policy does not apply to, so the checks run with the CSP on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

AXE_DIR = Path(__file__).resolve().parent / "axe"
AXE_SCRIPT = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


def axe_script() -> Path:
    """The installed axe.min.js, installing it with `npm ci` first if needed."""
    if not AXE_SCRIPT.exists() and shutil.which("npm"):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=AXE_DIR, check=True, capture_output=True)
    if not AXE_SCRIPT.exists():
        if os.environ.get("TILEWISE_REQUIRE_BROWSER") == "1":
            pytest.fail("accessibility checks are required but axe-core is missing (npm ci in tests/browser/axe)")
        pytest.skip("axe-core is not installed (npm ci in tests/browser/axe)")
    return AXE_SCRIPT


def violations(page, impacts: tuple[str, ...] = BLOCKING) -> list[dict]:
    """axe's WCAG 2.x A/AA violations on the page as it is now, of the given impacts."""
    page.wait_for_function("() => window.axe !== undefined")
    result = page.evaluate(
        """() => axe.run(document, {
            runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
            resultTypes: ["violations"],
        })"""
    )
    return [v for v in result["violations"] if v["impact"] in impacts]


def describe(found: list[dict]) -> str:
    lines = []
    for v in found:
        targets = "; ".join(" ".join(n["target"]) + f" ({n.get('failureSummary', '')[:160]})" for n in v["nodes"][:5])
        lines.append(f"{v['impact']} {v['id']}: {v['help']} -> {targets}")
    return "\n".join(lines)


def assert_accessible(page, where: str = "") -> None:
    """No serious or critical axe violation on the page; the failure lists each one with its elements."""
    found = violations(page)
    assert not found, f"axe on {where or page.url}:\n{describe(found)}"


def open_page(browser, **context_options):
    """A page in a new context (e.g. color_scheme="dark", a phone viewport) with axe-core loaded, as `page` is."""
    context = browser.new_context(**context_options)
    context.add_init_script(path=str(axe_script()))
    page = context.new_page()
    page.set_default_timeout(15000)
    return page


FOCUS_OUTLINE = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    return {tag: el.tagName, text: (el.innerText || el.value || el.name || "").slice(0, 40),
            outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2};
}"""


def tab_through(page, presses: int = 40) -> list[dict]:
    """Press Tab `presses` times from the top of the page; what had focus each time and whether it showed it."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    seen = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUS_OUTLINE)
        if focused:
            seen.append(focused)
    return seen
