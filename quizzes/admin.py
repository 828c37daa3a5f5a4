"""Admin for courses, lessons (with inline sections), topics and cards.

Card edits go through quizzes.services so every change is recorded; markdown is rendered and
sanitized on save by the models.
"""

from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.utils.html import format_html

from quizzes.card_kinds import KIND_FIELDS
from quizzes.models import Card, CardEdit, Course, Lesson, Section, Topic
from quizzes.services import card_snapshot, record_changes_between, set_retired


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
        return format_html('<div class="md">{}</div>', obj.body_html) if obj.pk else "-"


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "course", "position")
    list_filter = ("course",)
    search_fields = ("title", "slug")


class CardEditInline(admin.TabularInline):
    model = CardEdit
    fields = ("at", "user", "source", "changes")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name_plural = "Edit history"

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Card)
class CardAdmin(admin.ModelAdmin):
    list_display = ("slug", "kind", "short_prompt", "retired", "updated_at")
    list_filter = ("kind", "retired", "course", "sections__lesson", "topics")
    search_fields = ("slug", "prompt", "answer", "explanation")
    filter_horizontal = ("sections", "topics")
    readonly_fields = ("preview_link",)
    inlines = [CardEditInline]
    actions = ["retire", "unretire"]

    def get_fieldsets(self, request, obj=None):
        kind_columns = (
            [f.column for f in KIND_FIELDS[obj.kind]]
            if obj
            else [
                "prompt",
                "answer",
                "explanation",
                "common_wrong_answer",
                "key_points",
                "choices",
                "numeric_answer",
                "unit",
                "tolerance",
                "reversible",
            ]
        )
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

    def save_model(self, request, obj, form, change):
        if change:
            request._card_before = card_snapshot(Card.objects.get(pk=obj.pk))
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        before = getattr(request, "_card_before", None)
        if before is not None:
            record_changes_between(form.instance, before, user=request.user, source="admin")

    @admin.action(description="Retire selected cards (hide from new reviews, keep history)")
    def retire(self, request, queryset):
        n = set_retired(queryset, retired=True, user=request.user, source="admin")
        self.message_user(request, f"Retired {n} cards.", messages.SUCCESS)

    @admin.action(description="Bring back selected cards")
    def unretire(self, request, queryset):
        n = set_retired(queryset, retired=False, user=request.user, source="admin")
        self.message_user(request, f"Brought back {n} cards.", messages.SUCCESS)


@admin.register(CardEdit)
class CardEditAdmin(admin.ModelAdmin):
    list_display = ("card", "user", "source", "at")
    list_filter = ("source",)
    search_fields = ("card__slug",)
    readonly_fields = ("card", "user", "source", "changes", "at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
