"""The card kinds and how each kind's fields in the course files map onto Card columns.

One table drives the loader (validation), the exporter (writing files back) and the admin
(which fields a kind shows), so a new field is added in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FieldType = Literal["markdown", "text", "bool", "number", "list"]


@dataclass(frozen=True)
class KindField:
    name: str  # the key in the course file
    column: str  # the Card model attribute it is stored in
    type: FieldType
    required: bool = True


KIND_FIELDS: dict[str, tuple[KindField, ...]] = {
    "basic": (
        KindField("front", "prompt", "markdown"),
        KindField("back", "answer", "markdown"),
        KindField("reversible", "reversible", "bool", required=False),
    ),
    "interview": (
        KindField("question", "prompt", "markdown"),
        KindField("model_answer", "answer", "markdown"),
        KindField("common_wrong_answer", "common_wrong_answer", "markdown"),
        KindField("key_points", "key_points", "list"),
    ),
    "predict": (
        KindField("question", "prompt", "markdown"),
        KindField("choices", "choices", "list", required=False),
        KindField("answer", "answer", "markdown"),
        KindField("explanation", "explanation", "markdown"),
    ),
    "numeric": (
        KindField("question", "prompt", "markdown"),
        KindField("answer", "numeric_answer", "number"),
        KindField("unit", "unit", "text"),
        KindField("tolerance", "tolerance", "number"),
        KindField("solution", "explanation", "markdown"),
    ),
    "recall": (
        KindField("prompt", "prompt", "markdown"),
        KindField("answer", "answer", "markdown"),
    ),
}

KIND_LABELS = {
    "basic": "Basic (front/back)",
    "interview": "Interview question",
    "predict": "Predict first",
    "numeric": "Numeric estimate",
    "recall": "Recall prompt",
}

# Keys every card has whatever its kind.
COMMON_KEYS = ("id", "kind", "sections", "topics", "retired")

# The file a card goes to on export when it was created outside the files (e.g. in admin).
DEFAULT_FILE = {
    "basic": "glossary.yaml",
    "interview": "interview.yaml",
    "predict": "predict.yaml",
    "numeric": "numeric.yaml",
    "recall": "recall.yaml",
}

# Every column a kind may fill, in the order files, forms, exports and the API list them.
CONTENT_COLUMNS = (
    "prompt",
    "answer",
    "explanation",
    "common_wrong_answer",
    "key_points",
    "choices",
    "numeric_answer",
    "unit",
    "tolerance",
    "reversible",
)

# Columns whose markdown is rendered to sanitized HTML on save.
MARKDOWN_COLUMNS = ("prompt", "answer", "explanation", "common_wrong_answer")
