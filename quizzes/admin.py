"""Admin for courses, lessons (with inline sections), topics, cards and explanations.

Card and explanation edits go through quizzes.services so every change is recorded; markdown
is rendered and sanitized on save by the models.
"""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from quizzes.card_kinds import CONTENT_COLUMNS, KIND_FIELDS
from quizzes.models import Card, CardEdit, Course, Explanation, ExplanationEdit, Lesson, Section, Topic
from quizzes.services import known_lab_ids, record_changes_between, set_retired, snapshot


def _rendered(html: str):
    """Rendered markdown in an admin page. Safe to mark safe: the models sanitize it on every save."""
    return format_html('<div class="md">{}</div>', mark_safe(html))  # noqa: S308


class LessonInline(admin.TabularInline):
    model = Lesson
    fields = ("position", "slug", "title")
    extra = 0
    show_change_link = True


class TopicInline(admin.TabularInline):
    model = Topic
    fields = ("position", "slug", "title")
    extra = 0


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "updated_at")
    search_fields = ("title", "slug")
    inlines = [LessonInline, TopicInline]


class SectionInline(admin.StackedInline):
    model = Section
    fields = (("position", "slug", "title"), "body", "topics", "labs")
    filter_horizontal = ("topics",)
    extra = 0
    show_change_link = True


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    list_display = ("title", "course", "position")
    list_filter = ("course",)
    search_fields = ("title", "slug")
    inlines = [SectionInline]

    def save_formset(self, request, form, formset, change):
        instances = formset.save(commit=False)
        for instance in instances:
            instance.course = form.instance.course
            instance.save()
        for obj in formset.deleted_objects:
            obj.delete()
        formset.save_m2m()


@admin.register(Section)
class SectionAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "lesson", "position", "updated_at")
    list_filter = ("course", "lesson", "topics")
    search_fields = ("title", "slug", "body")
    filter_horizontal = ("topics",)
    readonly_fields = ("rendered",)

    @admin.display(description="Rendered (as learners see it)")
    def rendered(self, obj):
        return _rendered(obj.body_html) if obj.pk else "-"


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "course", "position")
    list_filter = ("course",)
    search_fields = ("title", "slug")


class EditHistoryInline(admin.TabularInline):
    fields = ("at", "user", "source", "changes")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name_plural = "Edit history"

    def has_add_permission(self, request, obj=None):
        return False


class CardEditInline(EditHistoryInline):
    model = CardEdit


class ExplanationEditInline(EditHistoryInline):
    model = ExplanationEdit


class RecordsEdits:
    """For the admin of a model with an edit history: saving the change form records who changed
    what (quizzes.services), and the retire actions keep history too."""

    actions = ["retire", "unretire"]

    def save_model(self, request, obj, form, change):
        if change:
            request._content_before = snapshot(type(obj).objects.get(pk=obj.pk))
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        before = getattr(request, "_content_before", None)
        if before is not None:
            record_changes_between(form.instance, before, user=request.user, source="admin")

    @admin.action(description="Retire selected %(verbose_name_plural)s (hide them, keep history)")
    def retire(self, request, queryset):
        n = set_retired(queryset, retired=True, user=request.user, source="admin")
        self.message_user(request, f"Retired {n} {self.opts.verbose_name_plural}.", messages.SUCCESS)

    @admin.action(description="Bring back selected %(verbose_name_plural)s")
    def unretire(self, request, queryset):
        n = set_retired(queryset, retired=False, user=request.user, source="admin")
        self.message_user(request, f"Brought back {n} {self.opts.verbose_name_plural}.", messages.SUCCESS)


@admin.register(Card)
class CardAdmin(RecordsEdits, admin.ModelAdmin):
    list_display = ("slug", "kind", "short_prompt", "retired", "updated_at")
    list_filter = ("kind", "retired", "course", "sections__lesson", "topics")
    search_fields = ("slug", "prompt", "answer", "explanation")
    filter_horizontal = ("sections", "topics")
    readonly_fields = ("preview_link",)
    inlines = [CardEditInline]

    def get_fieldsets(self, request, obj=None):
        kind_columns = [f.column for f in KIND_FIELDS[obj.kind]] if obj else list(CONTENT_COLUMNS)
        return [
            (None, {"fields": ["course", "slug", "kind", "retired", "preview_link"]}),
            ("Content", {"fields": kind_columns}),
            ("Links", {"fields": ["sections", "topics", "source_file", "position"]}),
        ]

    @admin.display(description="Prompt")
    def short_prompt(self, obj):
        return obj.prompt[:90]

    @admin.display(description="Preview")
    def preview_link(self, obj):
        if not obj.pk:
            return "Save to preview."
        url = reverse("admin:quizzes_card_preview", args=[obj.pk])
        return format_html('<a href="{}" target="_blank">Preview as a learner sees it</a>', url)

    def get_urls(self):
        return [
            path("<int:pk>/preview/", self.admin_site.admin_view(self.preview_view), name="quizzes_card_preview")
        ] + super().get_urls()

    def preview_view(self, request, pk):
        card = get_object_or_404(Card, pk=pk)
        card.section_links = list(card.sections.all())
        return render(request, "quizzes/card_preview.html", {"card": card})


class EditLogAdmin(admin.ModelAdmin):
    """The whole edit history of one kind of content, read-only."""

    list_display = ("subject", "user", "source", "at")
    list_filter = ("source",)
    readonly_fields = ("user", "source", "changes", "at")

    @admin.display(description="Edited")
    def subject(self, obj):
        return getattr(obj, obj.subject_field)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(CardEdit)
class CardEditAdmin(EditLogAdmin):
    search_fields = ("card__slug",)
    readonly_fields = ("card", *EditLogAdmin.readonly_fields)


@admin.register(ExplanationEdit)
class ExplanationEditAdmin(EditLogAdmin):
    search_fields = ("explanation__slug",)
    readonly_fields = ("explanation", *EditLogAdmin.readonly_fields)


class LinesField(forms.CharField):
    """A list of short texts, edited one per line."""

    widget = forms.Textarea(attrs={"rows": 6})

    def prepare_value(self, value):
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value):
        return [line.strip() for line in (value or "").splitlines() if line.strip()]


class ExplanationForm(forms.ModelForm):
    paraphrases = LinesField(help_text="3 to 6 other ways learners ask it, one per line.")
    lab = forms.ChoiceField(required=False, help_text="A lab experiment that shows it (optional).")

    class Meta:
        model = Explanation
        fields = [
            "course",
            "slug",
            "retired",
            "question",
            "paraphrases",
            "answer",
            "sections",
            "cards",
            "lab",
            "source_file",
            "position",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["lab"].choices = [("", "(none)")] + [(lab, lab) for lab in sorted(known_lab_ids())]

    def clean(self):
        data = super().clean()
        course = data.get("course")
        for name in ("sections", "cards"):
            if course and any(o.course_id != course.pk for o in data.get(name) or []):
                self.add_error(name, f"The {name} must belong to the explanation's course.")
        return data


@admin.register(Explanation)
class ExplanationAdmin(RecordsEdits, admin.ModelAdmin):
    form = ExplanationForm
    list_display = ("slug", "short_question", "course", "lab", "retired", "updated_at")
    list_filter = ("retired", "course", "sections", "lab")
    search_fields = ("slug", "question", "paraphrases", "answer")
    filter_horizontal = ("sections", "cards")
    readonly_fields = ("rendered_answer", "word_count")
    inlines = [ExplanationEditInline]
    fieldsets = [
        (None, {"fields": ["course", "slug", "retired"]}),
        ("Question", {"fields": ["question", "paraphrases"]}),
        ("Answer", {"fields": ["answer", "word_count", "rendered_answer"]}),
        ("Rests on", {"fields": ["sections", "cards", "lab"]}),
        ("File", {"fields": ["source_file", "position"]}),
    ]

    @admin.display(description="Question")
    def short_question(self, obj):
        return obj.question[:90]

    @admin.display(description="Words")
    def word_count(self, obj):
        return len(obj.answer.split()) if obj.pk else "-"

    @admin.display(description="Rendered answer (as learners see it)")
    def rendered_answer(self, obj):
        return _rendered(obj.answer_html) if obj.pk else "Save to preview."
