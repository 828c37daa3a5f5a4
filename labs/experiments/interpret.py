"""Run an experiment's Triton kernels under TRITON_INTERPRET=1 in a child process.

Triton fixes, when a module's `@triton.jit` kernels are decorated, whether they compile for a GPU or
run in its interpreter (NumPy on the CPU). A process that has already imported the kernels cannot
switch, and one that flips the variable globally would also switch any later GPU work. So the
parent runs this module as a child with the variable set from the start:

    TRITON_INTERPRET=1 python -m labs.experiments.interpret fused_vs_unfused '{"dtype": "float32"}'

The child calls the experiment module's `interpreter_check(**kwargs)` and prints its checks as one
JSON line. Interpreted kernels are for correctness only: their time says nothing about speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_interpreter(experiment: str, kwargs: dict, timeout_s: float = 300) -> list[dict]:
    """Parent side: start the child, return its checks (list of dicts with name, max_abs_error, passed...)."""
    env = {
        **os.environ,
        "TRITON_INTERPRET": "1",
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "labs.experiments.interpret", experiment, json.dumps(kwargs)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"interpreter check for {experiment} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("run with TRITON_INTERPRET=1 in the environment (run_interpreter does this)", file=sys.stderr)
        return 2
    import importlib

    from .result import json_safe

    module = importlib.import_module(f"labs.experiments.{argv[0]}")
    checks = module.interpreter_check(**(json.loads(argv[1]) if len(argv) > 1 else {}))
    print(json.dumps(json_safe(checks)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
