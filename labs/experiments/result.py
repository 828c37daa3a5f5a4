"""What a lab returns and how it reports progress: a Result of rows, checks, notes and artifacts.

A Result carries the device, the library versions and the method that produced its numbers, and
turns into strict JSON (tensors to lists, NaN to null) for the database and the web page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from . import params as _params
from .device import Device, library_versions
from .params import Params

# (percent 0-100, phase line) -> None. A callback may raise to cancel a run; the exception propagates.
ProgressFn = Callable[[int, str], None]


def json_safe(value: Any) -> Any:
    """params.json_safe (strict JSON), also turning tensors into lists and torch dtypes into their names."""
    return _params.json_safe(value, _torch_value)


def _torch_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return json_safe(value.tolist())
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return str(value)


@dataclass
class Result:
    """What a lab returns: numbers with the device, versions and method that produced them."""

    experiment: str
    params: dict
    device: dict
    versions: dict
    method: str
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    check_items: list[dict] = field(default_factory=list)
    artifacts: dict = field(default_factory=dict)
    elapsed_s: float | None = None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add_check(self, name: str, outcome: dict) -> None:
        self.check_items.append({"name": name, **outcome})

    @property
    def checks(self) -> dict:
        errors = [c["max_abs_error"] for c in self.check_items if c.get("max_abs_error") is not None]
        return {
            "passed": all(c["passed"] for c in self.check_items),
            "max_abs_error": max(errors) if errors else None,
            "items": self.check_items,
        }

    def to_dict(self) -> dict:
        return json_safe(
            {
                "experiment": self.experiment,
                "params": self.params,
                "device": self.device,
                "versions": self.versions,
                "method": self.method,
                "rows": self.rows,
                "notes": self.notes,
                "checks": self.checks,
                "artifacts": self.artifacts,
                "elapsed_s": self.elapsed_s,
            }
        )


def new_result(experiment: str, params: Params, device: Device, method: str) -> Result:
    """An empty Result that already names the device, the library versions and the method."""
    return Result(
        experiment=experiment,
        params=params.to_dict(),
        device=device.to_dict(),
        versions=dict(library_versions()),
        method=method,
    )


class Progress:
    """Wraps an optional callback: clamps to 0-100 and never goes backwards."""

    def __init__(self, callback: ProgressFn | None):
        self.callback = callback
        self.percent = 0

    def __call__(self, percent: float, phase: str) -> None:
        self.percent = max(self.percent, min(100, int(percent)))
        if self.callback is not None:
            self.callback(self.percent, phase)
