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
