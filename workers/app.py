"""The Celery application shared by web (to enqueue) and workers (to run).

Queues: "default" for CPU work (grading, exports, CPU labs, optimization) and "gpu" for lab
runs, one worker process per GPU. The local `make run` worker consumes both.
"""

from celery import Celery
from kombu import Queue

from tutor.startup import load_settings_or_exit

load_settings_or_exit()

app = Celery("tilewise")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = (Queue("default", routing_key="default"), Queue("gpu", routing_key="gpu"))
app.autodiscover_tasks(["workers"])

# Register the heartbeat's signal handlers in every process that loads the app.
import workers.heartbeat  # noqa: E402,F401
