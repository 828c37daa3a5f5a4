"""The Celery application shared by web (to enqueue) and workers (to run).

Each app keeps its own tasks in `<app>/tasks.py`, found by autodiscovery, and its services
enqueue through them with `workers.queues.send`; workers/ itself imports no app.
"""

from celery import Celery
from django.apps import apps as django_apps
from django.conf import settings

from tutor.startup import load_settings_or_exit
from workers.compile_cache import configure_compile_caches
from workers.queues import ALL, DEFAULT

load_settings_or_exit()
configure_compile_caches(settings.COMPILE_CACHE_DIR)  # before any task imports torch

app = Celery("tilewise")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = ALL
app.conf.task_default_queue = DEFAULT
app.autodiscover_tasks(lambda: ["workers", *(config.name for config in django_apps.get_app_configs())])

# Register the heartbeat's signal handlers in every process that loads the app.
import workers.heartbeat  # noqa: E402,F401
