"""Markdown to HTML, sanitized with an allow-list (nh3), whatever an author pastes.

Raw HTML in the source is escaped by the parser and the output is cleaned again, so no
script, event handler, style or javascript: link survives even if the parser is fooled.
"""

import html
import re
import unicodedata
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "strong",
    "em",
    "del",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "sup",
    "sub",
    "img",
}
ALLOWED_ATTRIBUTES = {
    "h2": {"id"},
    "h3": {"id"},
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},  # language-xxx from fenced blocks
    "th": {"style"},
    "td": {"style"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
        ["table", "strikethrough"]
    )


_HEADING = re.compile(r"<(h[23])>(.*?)</\1>", re.S)


def heading_anchor(heading: str) -> str:
    """GitHub-style anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    s = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode().lower()
    s = re.sub(r"[^\w\s-]", "", s)
    return re.sub(r"\s+", "-", s.strip())


def _with_anchor(match: re.Match) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", match.group(2)))
    return f'<{match.group(1)} id="{heading_anchor(text)}">{match.group(2)}</{match.group(1)}>'


def render_markdown(text: str) -> str:
    """Render markdown to HTML that is safe to put on any page; h2/h3 get anchors citations link to."""
    rendered = _HEADING.sub(_with_anchor, _parser().render(text or ""))
    return sanitize_html(rendered)


def sanitize_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
    )
