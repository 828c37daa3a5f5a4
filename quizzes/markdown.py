"""Markdown to HTML, sanitized with an allow-list (nh3), whatever an author pastes.

Raw HTML in the source is escaped by the parser and the output is cleaned again, so no
script, event handler, style or javascript: link survives even if the parser is fooled.
"""

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code",
    "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
    "sup", "sub", "img",
}
ALLOWED_ATTRIBUTES = {
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


def render_markdown(text: str) -> str:
    """Render markdown to HTML that is safe to put on any page."""
    html = _parser().render(text or "")
    return sanitize_html(html)


def sanitize_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
    )
