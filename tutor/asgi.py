"""ASGI entry point (uvicorn): streaming responses for the teacher need it."""

from tutor.startup import load_settings_or_exit

load_settings_or_exit()

from django.core.asgi import get_asgi_application  # noqa: E402

application = get_asgi_application()
