"""WSGI entry point, for servers that do not speak ASGI (no streaming there)."""

from tutor.startup import load_settings_or_exit, warn_if_debug

load_settings_or_exit()
warn_if_debug()

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
