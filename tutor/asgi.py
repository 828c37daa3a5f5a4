"""ASGI entry point (uvicorn): streaming responses for the teacher need it."""

import os

from tutor.startup import load_settings_or_exit, warn_if_debug

# The web server keeps a pool of PostgreSQL connections (see DATABASE_POOL_SIZE in tutor/settings.py).
os.environ.setdefault("DATABASE_POOL_SIZE", "10")
load_settings_or_exit()
warn_if_debug()

from django.core.asgi import get_asgi_application  # noqa: E402

application = get_asgi_application()
