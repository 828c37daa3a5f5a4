"""Lab runs: a learner's request for an experiment, its progress and its result."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class LabRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lab_runs")
    session = models.ForeignKey(
        "tutor.StudySession", null=True, blank=True, on_delete=models.SET_NULL, related_name="lab_runs"
    )
    experiment = models.CharField(max_length=64)
    params = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    progress = models.PositiveSmallIntegerField(default=0)
    phase = models.CharField(max_length=200, blank=True)
    predicted_speedup = models.FloatField(null=True, blank=True)
    device_kind = models.CharField(
        max_length=32, default="any", help_text='The kind of device asked for: "h100", "h200", ... or "any".'
    )
    queue = models.CharField(max_length=64, blank=True, help_text="The queue the run was sent to.")
    device = models.JSONField(null=True, blank=True)
    versions = models.JSONField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="Why it failed, for a person.")
    worker = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    sends = models.PositiveSmallIntegerField(default=0, help_text="Messages sent to the queue for this run.")
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When the last one was sent.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "status"])]

    def __str__(self) -> str:
        return f"{self.experiment} #{self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("lab-run", args=[self.pk])

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED)


class LabArtifact(models.Model):
    """A file a run produced (plot as SVG, full result or trace as JSON), in Django storage."""

    run = models.ForeignKey(LabRun, on_delete=models.CASCADE, related_name="artifacts")
    name = models.CharField(max_length=100)
    file = models.FileField(upload_to="labs/%Y/%m/")
    content_type = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="artifact_name_unique")]

    def __str__(self) -> str:
        return f"{self.name} of run {self.run_id}"


class DeviceCalibration(models.Model):
    """A device's measured roofs (bandwidth, compute), from its latest roofline calibration run.

    Device facts, not a learner's data: any learner's run on that device is placed against them.
    """

    device_name = models.CharField(max_length=200, unique=True)
    roofs = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"roofs of {self.device_name}"
