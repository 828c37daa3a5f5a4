"""The labs' two process settings: torch threads for CPU runs and the calibration cache folder.

The experiments read no environment variables. The Django side reads LABS_CPU_THREADS and
LABS_CACHE_DIR through tutor/env.py (settings.LABS_CPU_THREADS, settings.LABS_CACHE_DIR) and passes
them to `runner.run_experiment`; the command-line tools take --cpu-threads and --cache-dir. Without
either, the defaults below hold. Torch-free, like params.py: roofline.py reads the cache from the
web process.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path

# A shared CPU worker's other processes take cores away mid-measurement. With several threads,
# every parallel region then waits a whole scheduler slice for its slowest thread: on the 2-core
# development machine under load, a 90 µs op measured 16-28 ms with 2 threads and 0.093 ms with 1.
# So CPU-form labs run with a fixed thread count, set for the whole run (Inductor's generated C++
# takes its thread count at compile time), and the method says how many.
DEFAULT_CPU_THREADS = 1


def default_cache_dir() -> Path:
    """Where roofline calibrations are kept unless told otherwise: ~/.cache/tilewise-labs."""
    return Path.home() / ".cache" / "tilewise-labs"


@dataclass(frozen=True)
class LabConfig:
    cpu_threads: int = DEFAULT_CPU_THREADS  # torch threads a CPU-form lab runs with
    cache_dir: Path | None = None  # the roofline calibration cache; None: default_cache_dir()


_current = LabConfig()


def current() -> LabConfig:
    """The settings in force now (the defaults unless inside `configured`)."""
    return _current


@contextlib.contextmanager
def configured(*, cpu_threads: int | None = None, cache_dir: str | Path | None = None):
    """Use these settings inside the block (None leaves a setting as it is), then restore the previous ones."""
    global _current
    if cpu_threads is not None and cpu_threads < 1:
        raise ValueError(f"cpu_threads must be at least 1, got {cpu_threads}")
    before = _current
    changes = {k: v for k, v in (("cpu_threads", cpu_threads), ("cache_dir", cache_dir)) if v is not None}
    if "cache_dir" in changes:
        changes["cache_dir"] = Path(changes["cache_dir"]).expanduser()
    _current = dataclasses.replace(before, **changes)
    try:
        yield _current
    finally:
        _current = before
