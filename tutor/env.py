"""Read settings from environment variables, failing with one line that names the variable.

Settings import this module before Django is configured, so it must not import Django.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url


class EnvError(Exception):
    """A setting in the environment is missing or invalid. str() is the line shown to people."""

    def __init__(self, variable: str, problem: str):
        super().__init__(f"{variable}: {problem}")
        self.variable = variable


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (case-insensitive); unset or empty means `default`."""
    value = (os.environ.get(name) or default).strip().lower()
    if value not in choices:
        raise EnvError(name, f"expected one of {', '.join(choices)}, got {value!r}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(name, f"expected true/false (1/0, yes/no), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise EnvError(name, f"expected an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise EnvError(name, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise EnvError(name, f"must be at most {maximum}, got {value}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise EnvError(name, f"expected a number, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_dir(name: str, default: Path | None) -> Path | None:
    """A folder (`~` expanded; it need not exist yet); unset or empty means `default`. A file is refused."""
    raw = os.environ.get(name)
    if not raw:
        return default
    path = Path(raw).expanduser()
    if path.exists() and not path.is_dir():
        raise EnvError(name, f"expected a folder, but {raw!r} is a file")
    return path


def env_database(name: str, default: str) -> dict[str, Any]:
    """Parse a database URL (postgres://..., sqlite:///...) into a Django DATABASES entry."""
    raw = os.environ.get(name) or default
    scheme = raw.split("://", 1)[0] if "://" in raw else ""
    if scheme not in {"sqlite", "postgres", "postgresql", "pgsql"}:
        raise EnvError(name, f"expected a sqlite:/// or postgres:// URL, got {raw!r}")
    try:
        # One connection per request (CONN_MAX_AGE 0). Under ASGI every request runs its ORM calls in a
        # thread of its own, which is gone when the request ends: a connection kept for reuse there is
        # never reused, and stays open on the server until garbage collection finds it ("too many
        # clients" after a burst of teacher streams). Opening one costs about 2 ms on loopback.
        config = dict(dj_database_url.parse(raw, conn_max_age=0, conn_health_checks=True))
    except Exception as exc:  # the library raises several types for bad URLs
        raise EnvError(name, f"cannot parse {raw!r} ({exc})") from None
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {
            # Wait for the writer lock (up to 20 s) instead of failing at once when requests and the
            # worker write together; take it at BEGIN, so a transaction never has to upgrade a read lock
            # (which fails at once rather than waiting); WAL, so readers never wait for the writer.
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    return config


def env_redis_url(name: str, default: str) -> str:
    raw = os.environ.get(name) or default
    if not raw.startswith(("redis://", "rediss://", "unix://")):
        raise EnvError(name, f"expected a redis:// URL, got {raw!r}")
    return raw


def secret_key_weakness(key: str) -> str | None:
    """Why `key` is too weak to sign sessions and tokens, or None. Django's own rule (check W009)."""
    if key.startswith("django-insecure-"):
        return "starts with 'django-insecure-'"
    if len(key) < 50:
        return f"has {len(key)} characters, needs at least 50"
    if len(set(key)) < 5:
        return f"has {len(set(key))} distinct characters, needs at least 5"
    return None


def env_secret_key(name: str, *, debug: bool, key_file: Path) -> str:
    """The secret key: from the environment, or generated once and kept under var/ when DEBUG is on.

    A weak key (Django's W009 rule) is refused in every mode: it would let anyone forge sessions.
    """
    advice = "(generate one: python3 -c 'import secrets; print(secrets.token_urlsafe(50))')"
    raw = os.environ.get(name)
    if raw:
        weakness = secret_key_weakness(raw)
        if weakness:
            raise EnvError(name, f"too weak: it {weakness} {advice}")
        return raw
    if not debug:
        raise EnvError(name, "is required when DEBUG is off (set a long random string)")
    if key_file.exists():
        key = key_file.read_text().strip()
        weakness = secret_key_weakness(key)
        if weakness:
            raise EnvError(name, f"the key in {key_file} is too weak: it {weakness} (delete the file to generate one)")
        return key
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key
