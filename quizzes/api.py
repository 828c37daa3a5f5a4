"""Content API: everyone signed in may read; only staff may write, through quizzes.services."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import permissions, serializers, viewsets

from quizzes.card_kinds import CONTENT_COLUMNS
from quizzes.models import Card, Course, Section, Topic
from quizzes.services import update_card


class IsStaffOrReadOnly(permissions.BasePermission):
    message = "Only staff can change course content."

    def has_permission(self, request, view):
        if request.method in permissions.SAFE_METHODS:
            return bool(request.user and request.user.is_authenticated)
        return bool(request.user and request.user.is_staff)


class CourseSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="slug", read_only=True)

    class Meta:
        model = Course
        fields = ["id", "title", "summary", "summary_html", "updated_at"]


class SectionSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="slug", read_only=True)
    lesson = serializers.CharField(source="lesson.slug", read_only=True)
    url = serializers.CharField(source="get_absolute_url", read_only=True)

    class Meta:
        model = Section
        fields = ["id", "title", "lesson", "body", "body_html", "labs", "url"]


class CardSerializer(serializers.ModelSerializer):
    """Reads and checks input only; CardViewSet.perform_update writes through update_card."""

    id = serializers.CharField(source="slug", read_only=True)
    course = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    sections = serializers.SlugRelatedField(slug_field="slug", many=True, queryset=Section.objects.all())
    topics = serializers.SlugRelatedField(slug_field="slug", many=True, queryset=Topic.objects.all(), required=False)

    class Meta:
        model = Card
        fields = [
            "pk",
            "id",
            "course",
            "kind",
            "sections",
            "topics",
            *CONTENT_COLUMNS,
            "retired",
            "prompt_html",
            "answer_html",
            "explanation_html",
            "common_wrong_answer_html",
            "updated_at",
        ]
        read_only_fields = [
            "pk",
            "kind",
            "prompt_html",
            "answer_html",
            "explanation_html",
            "common_wrong_answer_html",
            "updated_at",
        ]


class CourseViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = CourseSerializer
    queryset = Course.objects.order_by("title")
    lookup_field = "slug"


class CardViewSet(viewsets.mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Cards; filter with ?course=<id>&kind=<kind>&topic=<id>. Staff may PATCH them."""

    serializer_class = CardSerializer
    permission_classes = [IsStaffOrReadOnly]

    def get_queryset(self):
        qs = Card.objects.select_related("course").prefetch_related("sections", "topics").order_by("pk")
        params = self.request.query_params
        if params.get("course"):
            qs = qs.filter(course__slug=params["course"])
        if params.get("kind"):
            qs = qs.filter(kind=params["kind"])
        if params.get("topic"):
            qs = qs.filter(topics__slug=params["topic"])
        if not self.request.user.is_staff:
            qs = qs.filter(retired=False)
        return qs

    def perform_update(self, serializer):
        try:
            serializer.instance = update_card(
                card=serializer.instance, user=self.request.user, changes=serializer.validated_data, source="api"
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
