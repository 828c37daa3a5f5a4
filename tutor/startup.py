"""Entry points (manage.py, ASGI, WSGI, Celery) load settings through here, so that a bad
environment variable stops start-up with one line that names it instead of a traceback."""

import os
import sys


def load_settings_or_exit() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings")
    from tutor.env import EnvError

    try:
        from django.conf import settings

        settings.INSTALLED_APPS  # noqa: B018 - touching a setting forces the module to load
    except EnvError as exc:
        print(f"tilewise: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def warn_if_debug() -> None:
    """One line on stderr when a server starts with DEBUG on (the `make run` default)."""
    from django.conf import settings

    if settings.DEBUG:
        print(
            "tilewise: warning: DEBUG is on: error pages show code and settings (secrets masked) to anyone "
            "who can reach this server; set DEBUG=false for anything but local use",
            file=sys.stderr,
        )
