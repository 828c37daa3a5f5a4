"""Reads of content, shared by pages, the API and (later) review and the teacher."""

from django.db.models import Count, Prefetch, Q, QuerySet

from quizzes.models import Card, Course, Explanation, Section


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


def explanations_for(course: Course | str) -> QuerySet[Explanation]:
    """A course's active explanations (a Course or its id), in file order, for the teacher to answer from.

    Each comes with its sections (in course order) and its active cards (retired cards are left
    out: learners no longer study them) prefetched, so reading them costs no further queries.
    """
    where = Q(course=course) if isinstance(course, Course) else Q(course__slug=course)
    return (
        Explanation.objects.filter(where, retired=False)
        .select_related("course")
        .prefetch_related(
            Prefetch("sections", queryset=Section.objects.select_related("course").order_by("position")),
            Prefetch("cards", queryset=Card.objects.filter(retired=False).order_by("position")),
        )
        .order_by("source_file", "position")
    )
