"""Triton where it is installed, a stand-in where it is not (CPU-only torch wheels don't bring it).

A module that defines kernels imports `triton` through `triton_or_none()` and falls back to
`NO_TRITON`, so it still imports on such a machine and its eager and torch.compile variants still
run; its kernels then say that Triton is missing.
"""

from __future__ import annotations


def triton_or_none():
    """The triton module, or None where it is not installed."""
    try:
        import triton
    except ImportError:
        return None
    return triton


class _NoTriton:
    """Stands in for `triton` and `triton.language` where Triton is not installed, so a module that
    defines kernels still imports and its eager and torch.compile variants still run."""

    constexpr = None

    @staticmethod
    def jit(fn=None, **kwargs):
        def missing(*args, **kw):
            raise RuntimeError("triton is not installed")

        return missing if fn is not None else (lambda f: missing)

    @staticmethod
    def cdiv(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def next_power_of_2(n: int) -> int:
        return 1 << max(0, (n - 1).bit_length())


NO_TRITON = _NoTriton()


def next_power_of_2(n: int) -> int:
    """triton.next_power_of_2, also where Triton is not installed."""
    return 1 << max(0, (n - 1).bit_length())
