"""The measured figures a course quotes: read from its figures.json, filled into placeholders.

A course folder may hold `figures.json`, written by `python -m labs.bench --json PATH` on a named
device: one row per figure with its value, unit, device, library versions and timing method. Cards,
sections and explanations quote a figure by name, `{{fig:NAME}}`, and the loader writes the value in
its place (quizzes/content/FORMAT.md, "Measured figures"). A number typed in by hand goes stale the
day the labs measure again; a placeholder cannot.

`literal_figures` finds the numbers that look measured but are typed in by hand; the content test
(tests/quizzes/test_content_rules.py) holds every one of them to the course's list of figures that
are not measured (spec sheets, worked examples).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIGURES_FILE = "figures.json"
# The same figures measured on another device: figures-h200.json, quoted as {{fig:NAME@h200}}.
OTHER_DEVICE_FILE_RE = re.compile(r"^figures-([a-z0-9]{1,20})\.json$")
MAX_BYTES = 4 * 1024 * 1024  # a bench run writes a few hundred kilobytes
PLACEHOLDER_RE = re.compile(r"\{\{\s*fig:([^{}]*?)\s*\}\}")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,99}$")
MAX_DECIMALS = 6
# Units written straight after the number ("84%", "2.5×"); every other unit gets a space.
ATTACHED_UNITS = ("%", "×", "x")

# What a hand-typed measured number looks like: a number with a time, bandwidth or throughput
# unit, or a percentage "of" a roof, copy rate, peak or spec.
_NUMBER = r"(?<![\w.,])\d[\d,]*(?:\.\d+)?"
LITERAL_RE = re.compile(
    rf"(?:{_NUMBER})\s?(?:µs|us|ms|TB/s|GB/s|TFLOP/s|PFLOP/s|GFLOP/s)(?![\w/])"
    rf"|(?:{_NUMBER})\s?%\s+of\s+(?:the\s+)?(?:[\w.-]+\s+){{0,2}}?(?:copy|roof|peak|spec)\b"
)


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    decimals: int
    method: str
    device: str

    @property
    def number(self) -> float:
        """The value as the course prints it (rounded to its decimals): what a numeric card's answer takes."""
        return round(self.value, self.decimals)

    @property
    def text(self) -> str:
        number = f"{self.value:,.{self.decimals}f}" if abs(self.value) >= 10_000 else f"{self.value:.{self.decimals}f}"
        if not self.unit:
            return number
        return f"{number}{self.unit}" if self.unit in ATTACHED_UNITS else f"{number} {self.unit}"


class FigureFileError(ValueError):
    """figures.json cannot be used; `problems` lists (figure name or "", field or "", message)."""

    def __init__(self, problems: list[tuple[str, str, str]], file: str = FIGURES_FILE):
        super().__init__("; ".join(m for _, _, m in problems))
        self.problems = problems
        self.file = file


def read_figures(path: Path) -> dict[str, Figure]:
    """The figures in a figures.json, by name; raises FigureFileError listing every problem."""
    if (size := path.stat().st_size) > MAX_BYTES:
        raise FigureFileError([("", "", f"file is {size} bytes; the limit is {MAX_BYTES}")])
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FigureFileError([("", "", f"not a JSON file: {exc}")]) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("figures"), list):
        raise FigureFileError([("", "figures", "must be an object with a 'figures' list")])
    problems: list[tuple[str, str, str]] = []
    for key in ("device", "versions"):
        if not doc.get(key):
            problems.append(("", key, "is required: the file says where and with what it was measured"))
    figures: dict[str, Figure] = {}
    for i, row in enumerate(doc["figures"]):
        figure = _read_row(row, i, problems)
        if figure is None:
            continue
        if figure.name in figures:
            problems.append((figure.name, "name", "duplicate figure name"))
            continue
        figures[figure.name] = figure
    if problems:
        raise FigureFileError(problems)
    return figures


def _read_row(row: Any, index: int, problems: list[tuple[str, str, str]]) -> Figure | None:
    if not isinstance(row, dict):
        problems.append((f"row #{index + 1}", "", "must be an object"))
        return None
    name = row.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.append((f"row #{index + 1}", "name", "must be lowercase letters, digits and underscores"))
        return None
    value, decimals = row.get("value"), row.get("decimals", 2)
    before = len(problems)
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append((name, "value", "must be a number"))
    if not isinstance(row.get("unit"), str):
        problems.append((name, "unit", "must be text (empty for a count)"))
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= MAX_DECIMALS:
        problems.append((name, "decimals", f"must be a whole number from 0 to {MAX_DECIMALS}"))
    for key in ("method", "device", "versions"):
        if not row.get(key):
            problems.append((name, key, "is required"))
    if len(problems) > before:
        return None
    return Figure(name, float(value), row["unit"], decimals, str(row["method"]), str(row["device"]))


def course_figures(root: Path) -> dict[str, Figure] | None:
    """The figures of the course folder `root`, or None when it has no figures.json.

    Each `figures-TAG.json` beside it adds its figures under `NAME@TAG`, so a text can set the
    devices side by side: "{{fig:copy_roof_tbps}} on the H100, {{fig:copy_roof_tbps@h200}} on the H200".
    A FigureFileError names the file it is about."""
    root = Path(root)
    path = root / FIGURES_FILE
    if not path.is_file():
        return None
    figures = read_figures(path)
    for other in sorted(root.glob("figures-*.json")):
        match = OTHER_DEVICE_FILE_RE.match(other.name)
        if not match:
            continue
        try:
            figures.update({f"{name}@{match.group(1)}": fig for name, fig in read_figures(other).items()})
        except FigureFileError as exc:
            raise FigureFileError(exc.problems, file=other.name) from None
    return figures


def fill(text: str, figures: dict[str, Figure] | None) -> tuple[str, list[str]]:
    """`text` with every {{fig:NAME}} replaced by the figure's text; also the names that are unknown."""
    unknown: list[str] = []

    def replace(m: re.Match) -> str:
        figure = (figures or {}).get(m.group(1))
        if figure is None:
            unknown.append(m.group(1))
            return m.group(0)
        return figure.text

    return PLACEHOLDER_RE.sub(replace, text), unknown


def placeholder_name(value: Any) -> str | None:
    """The figure name when `value` is exactly one placeholder (a numeric card's answer may be one)."""
    if not isinstance(value, str):
        return None
    m = PLACEHOLDER_RE.fullmatch(value.strip())
    return m.group(1) if m else None


def literal_figures(text: str) -> list[str]:
    """Numbers in `text`, outside placeholders, written the way a measured figure is (LITERAL_RE)."""
    return [" ".join(m.group(0).split()) for m in LITERAL_RE.finditer(PLACEHOLDER_RE.sub(" ", text))]


def unknown_figure_message(name: str, figures: dict[str, Figure] | None) -> str:
    if figures is None:
        return f"unknown figure {name!r}: this course has no {FIGURES_FILE}"
    return f"unknown figure {name!r} (not in {FIGURES_FILE})"
