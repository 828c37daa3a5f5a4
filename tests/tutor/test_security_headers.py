"""The Content-Security-Policy and what it asks of our pages: no inline script, handler or style."""

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.django_db

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
STYLE_ELEMENT = re.compile(r"<style\b", re.I)
STYLE_ATTRIBUTE = re.compile(r"""\sstyle\s*=\s*["']([^"']*)["']""", re.I)
ALLOWED_STYLE_ATTRIBUTES = {"text-align:left", "text-align:right", "text-align:center"}


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


def assert_nothing_inline(html: str, where: str) -> None:
    assert not INLINE_SCRIPT.search(html), f"inline <script> in {where}"
    assert not EVENT_HANDLER.search(html), f"inline event handler in {where}"
    assert not STYLE_ELEMENT.search(html), f"<style> in {where}"
    assert set(STYLE_ATTRIBUTE.findall(html)) <= ALLOWED_STYLE_ATTRIBUTES, f"style attribute in {where}"


def test_pages_carry_a_strict_policy(client):
    d = directives(client.get("/"))
    assert d["script-src"] == ["'self'"] and d["style-src"] == ["'self'"] and d["default-src"] == ["'self'"]
    assert d["object-src"] == ["'none'"] and d["base-uri"] == ["'none'"] and d["frame-ancestors"] == ["'none'"]
    assert d["form-action"] == ["'self'"] and d["connect-src"] == ["'self'"]
    assert "'unsafe-inline'" not in " ".join(sum(d.values(), []))
    assert "'unsafe-eval'" not in " ".join(sum(d.values(), []))


def test_only_the_markdown_table_alignments_are_allowed_as_style_attributes(client):
    import base64
    import hashlib

    d = directives(client.get("/"))
    expected = {
        f"'sha256-{base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()}'"
        for style in ALLOWED_STYLE_ATTRIBUTES
    }
    assert d["style-src-attr"][0] == "'unsafe-hashes'" and set(d["style-src-attr"][1:]) == expected


def test_other_security_headers(client):
    response = client.get("/")
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


@pytest.mark.parametrize(
    "template", sorted(p for p in REPO.glob("*/**/templates/**/*.html") if ".venv" not in p.parts), ids=str
)
def test_no_template_has_inline_script_handlers_or_styles(template: Path):
    assert_nothing_inline(template.read_text(), str(template.relative_to(REPO)))


PAGES = [
    "/",
    "/status/",
    "/learn/",
    "/learn/cuda-kernels-fusion/",
    "/review/",
    "/stats/",
    "/settings/",
    "/labs/",
    "/teacher/",
    "/sessions/",
]


def test_rendered_pages_have_nothing_inline_and_carry_the_policy(learner_client, shipped_course):
    sections = [section.get_absolute_url() for section in shipped_course.sections.all()]
    assert sections
    for path in PAGES + sections:
        response = learner_client.get(path)
        assert response.status_code == 200, path
        assert "Content-Security-Policy" in response, path
        assert_nothing_inline(response.content.decode(), path)


def test_the_log_in_sign_up_and_lockout_pages_have_nothing_inline(client, learner):
    for path in ("/accounts/login/", "/accounts/signup/"):
        assert_nothing_inline(client.get(path).content.decode(), path)
    for _ in range(5):
        response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 429 and "Content-Security-Policy" in response
    assert_nothing_inline(response.content.decode(), "lockout page")


def test_the_admin_works_under_the_same_strict_policy(staff_client, shipped_course):
    for path in ("/admin/", "/admin/quizzes/card/", "/admin/quizzes/card/add/"):
        response = staff_client.get(path)
        assert response.status_code == 200, path
        d = directives(response)
        assert d["script-src"] == ["'self'"], path
        assert not INLINE_SCRIPT.search(response.content.decode()), path


def test_the_api_docs_widen_style_src_for_themselves_only(learner_client):
    response = learner_client.get("/api/docs/")
    d = directives(response)
    assert "'unsafe-inline'" in d["style-src"] and "data:" in d["img-src"]
    assert d["script-src"] == ["'self'"]
    assert not INLINE_SCRIPT.search(response.content.decode())
    script = learner_client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
