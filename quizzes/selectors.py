"""Reads of content, shared by pages, the API and (later) review and the teacher."""

from django.db.models import Count, Prefetch, Q, QuerySet

from quizzes.models import Card, Course, Section


def courses_with_counts() -> QuerySet[Course]:
    return Course.objects.annotate(
        active_cards=Count("cards", filter=Q(cards__retired=False), distinct=True),
        section_count=Count("sections", distinct=True),
    ).order_by("title")


def course_outline(slug: str) -> Course:
    """A course with its lessons and their sections in order (raises Course.DoesNotExist)."""
    return Course.objects.prefetch_related(
        Prefetch("lessons__sections", queryset=Section.objects.order_by("position")), "topics"
    ).get(slug=slug)


def section_with_cards(course_slug: str, section_slug: str) -> Section:
    return (
        Section.objects.select_related("lesson", "course")
        .prefetch_related(Prefetch("cards", queryset=Card.objects.filter(retired=False)))
        .get(course__slug=course_slug, slug=section_slug)
    )
