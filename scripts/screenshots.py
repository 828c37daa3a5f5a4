"""Remake the README's screenshots (docs/screenshots/*.png) from a running Tilewise.

Start Tilewise (`make run`, or its processes: see the Procfile), then:

    .venv/bin/python scripts/screenshots.py                      # http://127.0.0.1:8000, the demo learner
    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:18000 --out /tmp/shots

It drives Debian's Chromium (/usr/bin/chromium) through Playwright and uses only what a learner does in the
browser: it reviews the demo learner's first cards by keyboard, asks the teacher a question, runs the
launch-overhead lab (with a prediction) and a FlashAttention tiling trace on the worker, and photographs home,
review, teacher, the lab run and the trace. Each PNG is 1280 px wide, quantized to 256 colours (Pillow).
Running it again adds a little more history to the demo learner; nothing else changes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, sync_playwright

WIDTH, HEIGHT = 1280, 860
LAB_TIMEOUT_MS = 300_000


def log_in(page: Page, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/accounts/login/?next=/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.press("#id_password", "Enter")
    page.wait_for_selector("#dashboard")


def review_some_cards(page: Page, url: str, count: int, shot: Path) -> None:
    """Review up to `count` cards by keyboard (the right answer, rated Good); photograph one revealed card."""
    page.goto(f"{url}/review/")
    page.wait_for_selector("#card-area:not([hidden]), #done:not([hidden])")
    for i in range(count):
        if page.locator("#done").is_visible():
            if i == 0:  # nothing left today: the page says so, and when the next cards come
                save(page, shot)
            return
        slug = page.get_attribute("#card-front [data-card], #card-front .reverse", "data-card")
        kind = page.get_attribute("#card-front article", "class") or ""
        if "kind-predict" in kind and page.locator("input[name=choice]").count():
            page.keyboard.press("a")
        if page.locator("#answer-input").count() and "kind-recall" not in kind:
            page.locator("#answer-input").fill("1")
            page.keyboard.press("Enter")
        else:
            page.keyboard.press("Space")
        page.wait_for_selector("#ratings:not([hidden])")
        if i == 0:
            save(page, shot)
        page.keyboard.press("3")
        page.wait_for_function(
            "s => !s || !document.querySelector(`#card-front [data-card='${s}']`)"
            " || !document.getElementById('done').hidden",
            arg=slug,
            timeout=15_000,
        )


def ask_the_teacher(page: Page, url: str, shot: Path) -> None:
    page.goto(f"{url}/teacher/")
    page.fill("#id_question", "Why does FlashAttention never write the N×N score matrix to HBM?")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".turn.assistant[data-turn]", timeout=60_000)
    page.evaluate("window.scrollTo(0, 0)")
    save(page, shot)


def run_lab(page: Page, url: str, experiment: str, params: dict[str, str]) -> None:
    page.goto(f"{url}/labs/")
    lab = page.locator(f"#lab-{experiment}")
    lab.locator("summary").click()
    for name, value in params.items():
        lab.locator(f"input[name={name}]").fill(value)
    lab.locator("button[type=submit]").click()
    page.wait_for_url("**/labs/runs/*/")
    page.wait_for_selector("#run[data-status='done'], #run[data-status='failed']", timeout=LAB_TIMEOUT_MS)
    if page.get_attribute("#run", "data-status") != "done":
        sys.exit(f"the {experiment} run failed: is a worker running? ({page.url})")


def save(page: Page, path: Path) -> None:
    """A viewport-sized PNG, quantized to a 256-colour palette: a few hundred KB at most."""
    page.screenshot(path=str(path))
    Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    print(f"{path} ({path.stat().st_size // 1024} KB)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="a running Tilewise (default: %(default)s)")
    parser.add_argument("--username", default="demo", help="a learner account (default: %(default)s)")
    parser.add_argument("--password", default="tilewise-demo", help="its password (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"), help="folder (default: %(default)s)")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="browser binary (default: %(default)s)")
    parser.add_argument("--scheme", choices=["light", "dark"], default="light", help="colour scheme")
    args = parser.parse_args(argv)
    url = args.url.rstrip("/")
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.scheme == "light" else "-dark"

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, color_scheme=args.scheme)
        page = context.new_page()
        page.set_default_timeout(30_000)
        log_in(page, url, args.username, args.password)
        review_some_cards(page, url, 12, args.out / f"review{suffix}.png")
        ask_the_teacher(page, url, args.out / f"teacher{suffix}.png")

        run_lab(page, url, "launch_overhead", {"lengths": "10,50,200", "predicted_speedup": "3"})
        page.wait_for_function("() => document.querySelector('canvas#plot')?.getBoundingClientRect().height > 100")
        page.locator("#run-result").scroll_into_view_if_needed()
        save(page, args.out / f"lab-run{suffix}.png")

        run_lab(page, url, "flash_tiling_trace", {"seq_len": "128", "block_m": "32", "block_n": "32"})
        page.wait_for_selector("#trace:not([hidden])")
        for _ in range(5):
            page.click("#trace-next")
        page.locator("#trace").scroll_into_view_if_needed()
        save(page, args.out / f"trace{suffix}.png")

        page.goto(f"{url}/")
        page.wait_for_selector("#dashboard")
        save(page, args.out / f"home{suffix}.png")
        browser.close()


if __name__ == "__main__":
    main()
