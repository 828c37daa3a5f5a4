"""The teacher's records: conversations and their turns, and typed answers graded on a worker.

Their tables were created under the historical app label "tutor" (migrations in
tutor/review/migrations) and keep it, so that moving the code into the teacher package changed
no table, migration or raw SQL.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from tutor.review.models import StudySession


class Conversation(models.Model):
    """A chat with the teacher, kept per learner and linked to the sitting and what it was asked from."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    session = models.ForeignKey(
        StudySession, null=True, blank=True, on_delete=models.SET_NULL, related_name="conversations"
    )
    course = models.ForeignKey(
        "quizzes.Course",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="conversations",
        help_text="The course the teacher answers from.",
    )
    card = models.ForeignKey(
        "quizzes.Card",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="conversations",
        help_text="Asked from this card.",
    )
    lab_run_id = models.BigIntegerField(null=True, blank=True, help_text="Asked from this lab run.")
    title = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "tutor"
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["user", "-updated_at"])]

    def __str__(self) -> str:
        return self.title or f"conversation {self.pk}"


class ChatTurn(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    class Mode(models.TextChoices):
        COURSE_NOTES = "course-notes", "Course notes (no language model)"
        LLM = "llm", "Language model"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    role = models.CharField(max_length=10, choices=Role.choices)
    text = models.TextField()
    text_html = models.TextField(blank=True)
    mode = models.CharField(max_length=16, choices=Mode.choices, blank=True)
    model = models.CharField(max_length=200, blank=True)
    citations = models.JSONField(default=list, blank=True)
    hint_mode = models.BooleanField(default=False)
    complete = models.BooleanField(default=True, help_text="False if the answer stream was cut off.")
    streaming = models.BooleanField(
        default=False, help_text="The answer is being written: stored at its start, its text saved as it streams."
    )
    notice = models.CharField(max_length=300, blank=True, help_text="E.g. why the LLM was not used.")
    explanation = models.ForeignKey(
        "quizzes.Explanation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The authored explanation the answer was built on, if any.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(
        default=timezone.now, help_text="Last saved (a streaming answer: its last flush)."
    )

    class Meta:
        app_label = "tutor"
        ordering = ["created_at", "id"]
        # The per-minute limit counts a learner's turns of the last minute on every question: without this
        # index that count scans every turn ever stored (100 ms at 15,000 turns, growing with them).
        indexes = [
            models.Index(fields=["created_at"], name="chatturn_created_at"),
            # The per-minute limit counts a learner's recent questions across all their conversations: an
            # index probe per conversation instead of reading every turn a long-time learner ever had.
            models.Index(fields=["conversation", "role", "created_at"], name="chatturn_recent_by_role"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"

    @property
    def cut_off(self) -> bool:
        """A streaming answer not saved for longer than the stream can pause: its web process stopped."""
        return self.streaming and timezone.now() - self.updated_at > stream_stale_after()

    @property
    def shown_notice(self) -> str:
        if self.cut_off:
            return self.notice or CUT_OFF_NOTICE
        return self.notice


CUT_OFF_NOTICE = "The answer was cut off: the server stopped while writing it. Ask again for a full answer."
STREAM_FLUSH_SECONDS = 1.0  # a streaming answer's text is saved at most this often


def stream_stale_after() -> timedelta:
    """How long a live stream can go without saving: the model's longest silence, plus a flush and a margin."""
    return timedelta(seconds=settings.LLM_TIMEOUT + 2 * STREAM_FLUSH_SECONDS + 5)


class AnswerGrade(models.Model):
    """A typed answer (interview or recall card) waiting for, or graded by, the teacher on a worker."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="answer_grades")
    card = models.ForeignKey("quizzes.Card", on_delete=models.CASCADE, related_name="answer_grades")
    answer = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "tutor"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"grade {self.pk} of {self.card_id} ({self.status})"
