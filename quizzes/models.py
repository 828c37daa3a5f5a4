"""Content: course → lessons → sections (markdown notes); topics; cards of several kinds;
explanations (authored answers to the questions learners ask).

Ids from the course files are kept in `slug` columns, so reloading a file updates the same
rows and every learner's review history (which points at the row) survives edits.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse

from quizzes.card_kinds import KIND_LABELS, MARKDOWN_COLUMNS
from quizzes.course_files import explanation_rule_errors, normalize_text
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


class ContentEdit(models.Model):
    """Who changed what in a piece of content, and when (admin, API or a file reload)."""

    subject_field = ""  # the foreign key to what was edited

    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    source = models.CharField(max_length=20)  # "admin", "api", "file"
    changes = models.JSONField(help_text="{field: [old, new]}")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        abstract = True
        ordering = ["-at"]

    def __str__(self) -> str:
        subject = getattr(self, self.subject_field)
        return f"{subject.slug} by {self.user or self.source} at {self.at:%Y-%m-%d %H:%M}"


class CardEdit(ContentEdit):
    subject_field = "card"
    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="edits")


class Explanation(models.Model):
    """An authored answer to a question learners actually ask, resting on sections and cards.

    The teacher answers from these: `question` and `paraphrases` are what a learner's question is
    matched against, `answer` is what it says, and sections, cards and lab are what it cites.
    """

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="explanations")
    slug = models.CharField(max_length=64, validators=[slug_validator], help_text="Stable id used in the course files.")
    question = models.TextField(help_text="The question as learners ask it.")
    paraphrases = models.JSONField(default=list, help_text="3-6 other ways learners ask it.")
    answer = models.TextField(help_text="Markdown, 60-200 words.")
    answer_html = models.TextField(blank=True, editable=False)
    sections = models.ManyToManyField(Section, related_name="explanations", help_text="The sections it rests on.")
    cards = models.ManyToManyField(Card, blank=True, related_name="explanations", help_text="The cards it rests on.")
    lab = models.CharField(max_length=64, blank=True, help_text="Id of a lab experiment that shows it.")

    retired = models.BooleanField(default=False, help_text="No longer used to answer; history is kept.")
    source_file = models.CharField(max_length=120, blank=True, help_text="Course file it is exported back to.")
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["course", "source_file", "position"]
        constraints = [models.UniqueConstraint(fields=["course", "slug"], name="explanation_slug_unique")]
        indexes = [models.Index(fields=["course", "retired"])]

    def save(self, *args, **kwargs):
        # Stored the way the course files are read, so a form round trip changes nothing.
        self.question = normalize_text(self.question or "")
        self.answer = normalize_text(self.answer or "")
        if isinstance(self.paraphrases, list):
            self.paraphrases = [normalize_text(str(p)) for p in self.paraphrases]
        self.answer_html = render_markdown(self.answer)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        """The rules the course files follow, for edits made in admin."""
        from django.core.exceptions import ValidationError

        if not isinstance(self.paraphrases, list) or not all(
            isinstance(p, str) and p.strip() for p in self.paraphrases
        ):
            raise ValidationError({"paraphrases": "Give a list of paraphrases (texts)."})
        errors = explanation_rule_errors(normalize_text(self.answer or ""), self.paraphrases)
        if errors:
            raise ValidationError({name: f"It {message}." for name, message in errors.items()})

    def __str__(self) -> str:
        return self.slug


class ExplanationEdit(ContentEdit):
    subject_field = "explanation"
    explanation = models.ForeignKey(Explanation, on_delete=models.CASCADE, related_name="edits")
