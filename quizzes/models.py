"""Content: course → lessons → sections (markdown notes); topics; cards of several kinds.

Ids from the course files are kept in `slug` columns, so reloading a file updates the same
rows and every learner's review history (which points at the row) survives edits.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse

from quizzes.card_kinds import KIND_LABELS, MARKDOWN_COLUMNS
from quizzes.course_files import normalize_text
from quizzes.markdown import render_markdown

slug_validator = RegexValidator(r"^[a-z0-9][a-z0-9-]{1,63}$", "Use 2-64 lowercase letters, digits and hyphens.")


class Course(models.Model):
    slug = models.CharField(max_length=64, unique=True, validators=[slug_validator])
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    summary_html = models.TextField(blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    def save(self, *args, **kwargs):
        self.summary_html = render_markdown(self.summary)
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return self.title


class Topic(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="topics")
    slug = models.CharField(max_length=64, validators=[slug_validator])
    title = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["course", "position"]
        constraints = [models.UniqueConstraint(fields=["course", "slug"], name="topic_slug_unique")]

    def __str__(self) -> str:
        return self.title


class Lesson(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lessons")
    slug = models.CharField(max_length=64, validators=[slug_validator])
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    summary_html = models.TextField(blank=True, editable=False)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["course", "position"]
        constraints = [models.UniqueConstraint(fields=["course", "slug"], name="lesson_slug_unique")]

    def save(self, *args, **kwargs):
        self.summary_html = render_markdown(self.summary)
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return self.title


class Section(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="sections")
    lesson = models.ForeignKey(Lesson, on_delete=models.PROTECT, related_name="sections")
    slug = models.CharField(max_length=64, validators=[slug_validator])
    title = models.CharField(max_length=200)
    body = models.TextField(help_text="Markdown.")
    body_html = models.TextField(blank=True, editable=False)
    position = models.PositiveIntegerField(default=0)
    topics = models.ManyToManyField(Topic, blank=True, related_name="sections")
    labs = models.JSONField(default=list, blank=True, help_text="Ids of lab experiments that illustrate this section.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["lesson__position", "position"]
        constraints = [models.UniqueConstraint(fields=["course", "slug"], name="section_slug_unique")]

    def save(self, *args, **kwargs):
        self.body_html = render_markdown(self.body)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("section", args=[self.course.slug, self.slug])

    def __str__(self) -> str:
        return self.title


class Card(models.Model):
    class Kind(models.TextChoices):
        BASIC = "basic", KIND_LABELS["basic"]
        INTERVIEW = "interview", KIND_LABELS["interview"]
        PREDICT = "predict", KIND_LABELS["predict"]
        NUMERIC = "numeric", KIND_LABELS["numeric"]
        RECALL = "recall", KIND_LABELS["recall"]

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="cards")
    slug = models.CharField(max_length=64, validators=[slug_validator], help_text="Stable id used in the course files.")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    sections = models.ManyToManyField(Section, related_name="cards")
    topics = models.ManyToManyField(Topic, blank=True, related_name="cards")

    prompt = models.TextField(help_text="Front / question / prompt (markdown).")
    answer = models.TextField(blank=True, help_text="Back / model answer / answer (markdown).")
    explanation = models.TextField(blank=True, help_text="Explanation or worked solution.")
    common_wrong_answer = models.TextField(blank=True)
    key_points = models.JSONField(default=list, blank=True, help_text="Grading rubric points.")
    choices = models.JSONField(default=list, blank=True)
    numeric_answer = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=40, blank=True)
    tolerance = models.FloatField(null=True, blank=True, help_text="Relative: 0.1 = ±10%.")
    reversible = models.BooleanField(default=False, help_text="Also study back-to-front (glossary terms).")

    prompt_html = models.TextField(blank=True, editable=False)
    answer_html = models.TextField(blank=True, editable=False)
    explanation_html = models.TextField(blank=True, editable=False)
    common_wrong_answer_html = models.TextField(blank=True, editable=False)

    retired = models.BooleanField(default=False, help_text="Hidden from new reviews; history is kept.")
    source_file = models.CharField(max_length=120, blank=True, help_text="Course file the card is exported back to.")
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["course", "source_file", "position"]
        constraints = [models.UniqueConstraint(fields=["course", "slug"], name="card_slug_unique")]
        indexes = [models.Index(fields=["course", "kind", "retired"])]

    def save(self, *args, **kwargs):
        self.render()
        super().save(*args, **kwargs)

    def clean(self) -> None:
        """The same rules the course files follow, for edits made in admin or the API."""
        from django.core.exceptions import ValidationError

        from quizzes.card_kinds import KIND_FIELDS

        errors: dict[str, str] = {}
        for f in KIND_FIELDS.get(self.kind, ()):
            value = getattr(self, f.column)
            if f.required and f.type != "bool" and value in (None, "", []):
                errors[f.column] = f"A {self.kind} card needs its {f.name.replace('_', ' ')}."
        if self.kind == self.Kind.PREDICT and self.choices:
            if not 2 <= len(self.choices) <= 6:
                errors["choices"] = "Give 2 to 6 choices, or none for a free answer."
            elif self.answer not in self.choices:
                errors["answer"] = "The answer must be one of the choices, word for word."
        if self.kind == self.Kind.NUMERIC and self.tolerance is not None and not 0 < self.tolerance <= 1:
            errors["tolerance"] = "Relative tolerance above 0 and at most 1 (0.1 = ±10%)."
        if errors:
            raise ValidationError(errors)

    def render(self) -> None:
        for column in MARKDOWN_COLUMNS:
            setattr(self, column, normalize_text(getattr(self, column) or ""))
            setattr(self, f"{column}_html", render_markdown(getattr(self, column)))

    def __str__(self) -> str:
        return f"{self.slug} ({self.kind})"


class CardEdit(models.Model):
    """Who changed what in a card, and when (admin, API or a file reload)."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="edits")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    source = models.CharField(max_length=20)  # "admin", "api", "file"
    changes = models.JSONField(help_text="{field: [old, new]}")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.card.slug} by {self.user or self.source} at {self.at:%Y-%m-%d %H:%M}"
