"""Input that cannot be stored as text, refused before anything is stored or streamed.

JSON can carry a NUL (`\\u0000`), which PostgreSQL's text columns refuse, and an unpaired surrogate
(`\\ud800`), which is not encodable as UTF-8 at all; either would surface as a server error when the
row is written. The API's JSON parser and the teacher's stream refuse both with a 400 instead.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# A surrogate left in a decoded str is unpaired: JSON's paired escapes decode to one astral character.
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")


def text_problem(value: Any) -> str | None:
    """Why a decoded JSON value (strings, keys, nested lists and objects) cannot be stored as text, or None."""
    if isinstance(value, str):
        found = _NOT_TEXT.search(value)
        if found is None:
            return None
        if found.group() == "\x00":
            return "Text may not contain NUL characters."
        return "Text may not contain unpaired surrogates (\\ud800-\\udfff); send valid UTF-8."
    if isinstance(value, dict):
        for key, item in value.items():
            problem = text_problem(key) or text_problem(item)
            if problem:
                return problem
    elif isinstance(value, list):
        for item in value:
            problem = text_problem(item)
            if problem:
                return problem
    return None


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing strings that cannot be stored as text (400, in the API's error shape)."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        problem = text_problem(data)
        if problem:
            raise ParseError(problem)
        return data
