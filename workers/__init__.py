"""The Celery app, its queues and routing, and thin tasks that call services."""
