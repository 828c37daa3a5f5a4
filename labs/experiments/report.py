"""Results as text: the table, the method, the checks and the notes (for the CLI and labs.bench)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def versions_text(versions: Mapping[str, str | None]) -> str:
    """Library versions on one line ("python 3.11.9, torch 2.13.0, ..."), saying when flash-attn is absent."""
    return ", ".join(f"{k} {v}" for k, v in versions.items() if v) + (
        "" if versions.get("flash_attn") else ", flash-attn not installed"
    )


def fmt_value(column: str, value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "ok" if value else "FAIL"
    if column.endswith("_ms"):
        return f"{value * 1e3:.1f} µs" if value < 1 else f"{value:.3f} ms"
    if column.endswith("_us") or column.startswith("us_"):
        return f"{value:.2f} µs"
    if "pct" in column:
        return f"{value:.1f}%"
    if column == "gbps":
        return f"{value:,.0f} GB/s"
    if column.startswith("speedup"):
        return f"{value:.2f}x"
    if "error" in column:
        return f"{value:.1e}"
    if column == "tflops":
        return f"{value:.1f}" if value >= 1 else f"{value:.3g}"
    if column.endswith("_gb"):
        return f"{value:.2f} GB"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(rows: Iterable[dict], columns: Sequence[str]) -> str:
    rows = list(rows)
    columns = [c for c in columns if any(r.get(c) is not None for r in rows)]
    cells = [[fmt_value(c, r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)]
    line = lambda items: "  ".join(s.ljust(w) for s, w in zip(items, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(row) for row in cells)])


def format_result(result: dict, columns: Sequence[str]) -> str:
    checks = result["checks"]
    failed = [c["name"] for c in checks["items"] if not c["passed"]]
    parts = [
        f"== {result['experiment']} on {result['device']['description']}",
        f"versions: {versions_text(result['versions'])}",
        f"method: {result['method']}",
    ]
    roof = result.get("artifacts", {}).get("copy_roof")
    if roof:
        parts.append(f"copy roof: {roof['gbps']:,.0f} GB/s ({roof['method']})")
    parts += ["", format_table(result["rows"], columns), ""]
    max_err = checks["max_abs_error"]
    parts.append(
        f"checks: {len(checks['items']) - len(failed)}/{len(checks['items'])} passed"
        + (f", max abs error {max_err:.1e}" if max_err is not None else "")
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    parts += [f"note: {n}" for n in result["notes"]]
    if result.get("elapsed_s") is not None:
        parts.append(f"ran in {result['elapsed_s']:.1f} s")
    return "\n".join(parts)
