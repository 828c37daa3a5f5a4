from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The review domain. Its label stays "tutor", the label its tables and migrations were made under."""

    name = "tutor.review"
    label = "tutor"
    verbose_name = "Learning"
