"""Lab parameters without torch: bounds, parsing, dtype names, errors and the JSON form.

The Django web process validates requests and shows each experiment's parameter schema before it
queues a run, and must never import torch (or triton) to do so. Everything a request needs
before it reaches a worker lives here and in catalog.py, which import only the standard library;
the torch side (dtype objects, devices, timing) stays in device.py, timing.py and result.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

GiB = 1024**3
MiB = 1024**2

# Element types by name; device.torch_dtype(name) maps a name to its torch dtype on the worker.
DTYPE_NAMES = ("float32", "bfloat16", "float16")
DTYPE_ALIASES = {"fp32": "float32", "float": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}
ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2}


class ParamError(ValueError):
    """A parameter a person asked for cannot run; `field` names it so a form can point at it."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def param(
    default: Any,
    help: str,
    *,
    min: float | None = None,
    max: float | None = None,
    choices: tuple | None = None,
    max_items: int | None = None,
    parse: Callable[[str, Any], Any] | None = None,
) -> Any:
    """A dataclass field that carries its bounds; `Params.check_bounds` enforces them.

    min/max apply to every number in the value (each item of a tuple, each side of a size);
    choices apply to every string in it.
    """
    meta = {"help": help, "min": min, "max": max, "choices": choices, "max_items": max_items, "parse": parse}
    return field(default=default, metadata=meta)


def parse_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ParamError(name, f"expected an integer, got {value!r}")
    try:
        number = int(value) if not isinstance(value, float) or value.is_integer() else None
    except (TypeError, ValueError):
        number = None
    if number is None:
        raise ParamError(name, f"expected an integer, got {value!r}")
    return number


def parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ParamError(name, f"expected true or false, got {value!r}")


def _items(name: str, value: Any) -> list:
    """'a,b' or ['a', 'b'] or a single value -> list of items."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def parse_ints(name: str, value: Any) -> tuple[int, ...]:
    return tuple(parse_int(name, v) for v in _items(name, value))


def parse_strs(name: str, value: Any) -> tuple[str, ...]:
    return tuple(str(v).strip() for v in _items(name, value))


def parse_dtype(name: str, value: Any) -> str:
    text = str(value).strip().lower().removeprefix("torch.")
    return DTYPE_ALIASES.get(text, text)


def parse_sizes(name: str, value: Any) -> tuple[tuple[int, int], ...]:
    """'64x8192,4096x8192' or [[64, 8192], '4096x8192'] -> ((64, 8192), (4096, 8192))."""
    sizes = []
    for item in _items(name, value):
        parts = (
            item.lower().split("x")
            if isinstance(item, str)
            else list(item)
            if isinstance(item, (list, tuple))
            else None
        )
        if not parts or len(parts) != 2:
            raise ParamError(name, f"expected sizes like 64x8192, got {item!r}")
        sizes.append((parse_int(name, parts[0]), parse_int(name, parts[1])))
    return tuple(sizes)


def _numbers(value: Any) -> list:
    if isinstance(value, (tuple, list)):
        return [n for v in value for n in _numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def _strings(value: Any) -> list[str]:
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


@dataclass(frozen=True)
class Params:
    """Base of every experiment's parameters: a frozen dataclass whose fields carry bounds.

    Subclasses override `defaults_for` (smaller sizes on a CPU), `working_set_bytes` (what must fit
    in device memory) and, for checks beyond simple bounds, `check`.
    """

    memory_field: ClassVar[str] = "sizes"  # the field a too-large working set is blamed on

    @classmethod
    def defaults_for(cls, device_kind: str) -> Params:
        return cls()

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None, device_kind: str = "cuda") -> Params:
        """Parse user values (CLI strings or JSON) over the device's defaults; unknown names are errors."""
        base = cls.defaults_for(device_kind)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        parsed = {}
        for name, value in (values or {}).items():
            if name not in fields:
                raise ParamError(name, f"unknown parameter; known: {', '.join(fields)}")
            parse = fields[name].metadata.get("parse") or _default_parser(type(getattr(base, name)))
            parsed[name] = parse(name, value)
        return dataclasses.replace(base, **parsed)

    def check_bounds(self) -> None:
        for f in dataclasses.fields(self):
            value, meta = getattr(self, f.name), f.metadata
            if meta.get("max_items") is not None and isinstance(value, tuple):
                if not value:
                    raise ParamError(f.name, "needs at least one value")
                if len(value) > meta["max_items"]:
                    raise ParamError(f.name, f"at most {meta['max_items']} values, got {len(value)}")
            for n in _numbers(value):
                if meta.get("min") is not None and n < meta["min"]:
                    raise ParamError(f.name, f"{n} is below the minimum {meta['min']}")
                if meta.get("max") is not None and n > meta["max"]:
                    raise ParamError(f.name, f"{n} is above the maximum {meta['max']}")
            if meta.get("choices") is not None:
                for s in _strings(value):
                    if s not in meta["choices"]:
                        raise ParamError(f.name, f"unknown value {s!r}; choose from {', '.join(meta['choices'])}")

    def check(self, device_kind: str) -> None:
        """Checks beyond per-field bounds (subclasses)."""

    def working_set_bytes(self) -> int:
        """Device memory the run needs at its largest point (subclasses)."""
        return 0

    def validate(self, device_memory_bytes: int | None = None, device_kind: str = "cuda") -> None:
        """Raise ParamError(field, message) if this request cannot run on the target device."""
        self.check_bounds()
        self.check(device_kind)
        need = self.working_set_bytes()
        # 10% headroom for the CUDA context, allocator slack and the timer's cache-flush buffer.
        if device_memory_bytes and need > 0.9 * device_memory_bytes:
            raise ParamError(
                self.memory_field,
                f"working set about {human_bytes(need)} does not fit in the "
                f"device's {human_bytes(device_memory_bytes)} (90% usable)",
            )

    def to_dict(self) -> dict:
        return json_safe(dataclasses.asdict(self))

    @classmethod
    def schema(cls, device_kind: str = "cuda") -> list[dict]:
        """Fields, defaults and bounds, for a form or the CLI's `list`."""
        base = cls.defaults_for(device_kind)
        out = []
        for f in dataclasses.fields(cls):
            meta = f.metadata
            out.append(
                {
                    "name": f.name,
                    "default": json_safe(getattr(base, f.name)),
                    "help": meta.get("help", ""),
                    **{
                        k: json_safe(meta[k]) for k in ("min", "max", "choices", "max_items") if meta.get(k) is not None
                    },
                }
            )
        return out


def _default_parser(kind: type) -> Callable[[str, Any], Any]:
    if kind is bool:
        return parse_bool
    if kind is int:
        return parse_int
    if kind is float:
        return lambda name, v: float(v)
    if kind is tuple:
        return parse_strs
    return lambda name, v: str(v)


def check_dtype(name: str, dtype: str) -> None:
    if dtype not in DTYPE_NAMES:
        raise ParamError(name, f"unknown dtype {dtype!r}; choose from {', '.join(DTYPE_NAMES)}")


def json_safe(value: Any, other: Callable[[Any], Any] = str) -> Any:
    """Tuples to lists, NaN/inf to None, dataclasses to plain values: strict JSON.

    `other` converts a value that is none of those; result.json_safe passes one that knows tensors
    and torch dtypes, so this module need not import torch.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v, other) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, other) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_safe(value.to_dict() if hasattr(value, "to_dict") else dataclasses.asdict(value), other)
    return other(value)
