"""Where a worker keeps torch.compile's (Inductor's) and Triton's compiled kernels across restarts.

Both libraries read their cache folder from the environment once, when torch or triton is first
imported, so this runs when the Celery app is loaded, before any task imports torch. A variable
already set to a folder (by an operator) wins over COMPILE_CACHE_DIR.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CACHE_VARIABLES = {"TORCHINDUCTOR_CACHE_DIR": "inductor", "TRITON_CACHE_DIR": "triton"}


def configure_compile_caches(root: Path) -> dict[str, str]:
    """Point Inductor and Triton at folders under `root` (made if missing); returns the variables in force."""
    if "torch" in sys.modules or "triton" in sys.modules:
        # Too late to move them for this process; say so rather than pretend.
        print("compile caches: torch was imported before the cache folders were set", file=sys.stderr)
    chosen = {}
    for variable, sub in CACHE_VARIABLES.items():
        folder = os.environ.get(variable) or str(root / sub)  # set and not empty: the operator's choice
        os.environ[variable] = folder
        Path(folder).mkdir(parents=True, exist_ok=True)
        chosen[variable] = folder
    return chosen
