from html.parser import HTMLParser

import pytest

from quizzes.markdown import render_markdown


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parsed_tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src="x" onerror="alert(1)">',
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=https://example.org></iframe>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "![x](javascript:alert(1))",
    '<svg onload="alert(1)">',
]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_markdown_renders_harmless(source):
    for tag, attrs in parsed_tags(render_markdown(source)):
        assert tag not in {"script", "iframe", "svg", "div", "style"}
        assert not any(name.startswith("on") or name == "style" for name in attrs), (tag, attrs)
        for name in ("href", "src"):
            assert not (attrs.get(name) or "").lower().startswith("javascript"), (tag, attrs)


def test_markdown_keeps_code_blocks_tables_and_links():
    html = render_markdown("```python\nx = 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://x.org)")
    assert '<code class="language-python">' in html
    assert "<table>" in html and "<td>1</td>" in html
    assert 'href="https://x.org"' in html and 'rel="noopener noreferrer nofollow"' in html


@pytest.mark.django_db
def test_hostile_card_text_never_reaches_a_page(shipped_course, staff_client):
    card = shipped_course.cards.filter(kind="recall").first()
    card.prompt = "Explain <script>alert('x')</script> fusion [x](javascript:alert(1))"
    card.save()
    page = staff_client.get(f"/admin/quizzes/card/{card.pk}/preview/").content.decode()
    assert "<script>alert('x')</script>" not in page
    assert "&lt;script&gt;" in page
    for _, attrs in parsed_tags(page):
        assert not (attrs.get("href") or "").startswith("javascript")
