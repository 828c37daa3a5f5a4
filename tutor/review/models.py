"""The review domain: learner settings, study sessions, the append-only review log and the
card-state projection derived from it.

The review log is the source of truth. CardState is a cache of "replay this learner's log
for this card through FSRS with the learner's current settings"; `manage.py
rebuild_card_states` recomputes it and must give the same rows.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


def default_learning_steps() -> list[int]:
    return [1, 10]


def default_relearning_steps() -> list[int]:
    return [10]


class LearnerSettings(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="learner_settings")
    desired_retention = models.FloatField(
        default=0.9,
        validators=[MinValueValidator(0.7), MaxValueValidator(0.99)],
        help_text="Probability of recalling a card when it comes due (0.70-0.99).",
    )
    new_cards_per_day = models.PositiveSmallIntegerField(default=20, validators=[MaxValueValidator(500)])
    maximum_interval = models.PositiveIntegerField(
        default=3650, validators=[MinValueValidator(1), MaxValueValidator(36500)], help_text="Longest interval in days."
    )
    learning_steps = models.JSONField(default=default_learning_steps, help_text="Minutes between learning steps.")
    relearning_steps = models.JSONField(
        default=default_relearning_steps, help_text="Minutes between relearning steps after a lapse."
    )
    parameters = models.JSONField(
        null=True, blank=True, help_text="Fitted FSRS parameters; empty means the FSRS defaults."
    )
    timezone = models.CharField(max_length=64, default="UTC")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"settings of {self.user}"


class StudySession(models.Model):
    """One sitting: reviews, chats and lab runs that happened close together."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_sessions")
    started_at = models.DateTimeField()
    last_activity_at = models.DateTimeField()

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["user", "-last_activity_at"])]

    def __str__(self) -> str:
        return f"session {self.pk} of {self.user} at {self.started_at:%Y-%m-%d %H:%M}"


class State(models.IntegerChoices):
    """FSRS states (the fsrs package's numbering) plus NEW for a card never reviewed."""

    NEW = 0, "New"
    LEARNING = 1, "Learning"
    REVIEW = 2, "Review"
    RELEARNING = 3, "Relearning"


class Rating(models.IntegerChoices):
    AGAIN = 1, "Again"
    HARD = 2, "Hard"
    GOOD = 3, "Good"
    EASY = 4, "Easy"


class ReviewLog(models.Model):
    """Append-only: rows are never edited except to mark them undone."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_logs")
    card = models.ForeignKey("quizzes.Card", on_delete=models.PROTECT, related_name="review_logs")
    reverse = models.BooleanField(default=False, help_text="Studied back-to-front (glossary).")
    rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    reviewed_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    answer = models.TextField(blank=True, help_text="The learner's guess or typed answer.")
    answer_correct = models.BooleanField(null=True, help_text="Auto-graded kinds (predict, numeric).")
    state_before = models.PositiveSmallIntegerField(choices=State.choices)
    idempotency_key = models.CharField(max_length=64)
    session = models.ForeignKey(StudySession, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews")
    undone_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["reviewed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "idempotency_key"], name="review_idempotency_unique"),
        ]
        indexes = [
            models.Index(fields=["user", "card", "reverse", "reviewed_at"]),
            models.Index(fields=["user", "-reviewed_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.user} rated {self.card_id} {self.get_rating_display()} at {self.reviewed_at:%Y-%m-%d %H:%M}"


class CardState(models.Model):
    """The projection: where a card stands for a learner (one row per card and direction)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="card_states")
    card = models.ForeignKey("quizzes.Card", on_delete=models.CASCADE, related_name="states")
    reverse = models.BooleanField(default=False)
    state = models.PositiveSmallIntegerField(choices=State.choices)
    step = models.PositiveSmallIntegerField(null=True, blank=True)
    stability = models.FloatField(null=True)
    difficulty = models.FloatField(null=True)
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True)
    reps = models.PositiveIntegerField(default=0)
    lapses = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=0, help_text="Bumped on every change; guards two tabs.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "card", "reverse"], name="card_state_unique"),
        ]
        indexes = [models.Index(fields=["user", "due"])]

    def __str__(self) -> str:
        return f"{self.user} {self.card_id}{'r' if self.reverse else ''} due {self.due:%Y-%m-%d %H:%M}"


class OptimizationRun(models.Model):
    """One attempt to fit a learner's FSRS parameters, and whether they were adopted."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="optimization_runs")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    train_reviews = models.PositiveIntegerField(default=0)
    holdout_reviews = models.PositiveIntegerField(default=0)
    current_log_loss = models.FloatField(null=True)
    fitted_log_loss = models.FloatField(null=True)
    current_parameters = models.JSONField(null=True)
    fitted_parameters = models.JSONField(null=True)
    adopted = models.BooleanField(default=False)
    curve = models.JSONField(null=True, help_text="Forgetting curves under both parameter sets.")
    defaults_log_loss = models.FloatField(null=True)
    evaluation = models.JSONField(
        null=True, help_text="Log loss, RMSE(bins) and AUC of each parameter set, the paired comparisons, the rule."
    )
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"optimization {self.pk} for {self.user}: {self.status}"


class Reschedule(models.Model):
    """Re-deriving every card state of a learner from the log after their scheduling settings changed.

    Runs on a worker in batches, so reviews keep working meanwhile; the settings page shows its progress.
    """

    class Reason(models.TextChoices):
        SETTINGS = "settings", "Settings changed"
        OPTIMIZATION = "optimization", "Fitted parameters adopted"
        DEFAULTS = "defaults", "Back to the FSRS defaults"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        SUPERSEDED = "superseded", "Superseded by a newer change"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reschedules")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"reschedule {self.pk} of {self.user}: {self.done}/{self.total} ({self.status})"
