"""Review API: queue, submit (idempotent), undo, stats, settings, sessions, logs and states.

Every endpoint reads and writes only the requesting learner's rows: another learner's ids
are 404, never 403, so their existence is not revealed.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from tutor.errors import ErrorSerializer
from tutor.review import presenters
from tutor.review.models import CardState, LearnerSettings, OptimizationRun, Reschedule, ReviewLog, StudySession
from tutor.review.optimizer import request_optimization
from tutor.review.queue import next_due, today_queue, tomorrow_forecast
from tutor.review.rescheduling import active_reschedule, reset_to_default_parameters, update_learner_settings
from tutor.review.services import learner_settings, submit_review, undo_last_review
from tutor.review.stats import learner_stats


class SubmitSerializer(serializers.Serializer):
    card = serializers.IntegerField(min_value=1)
    rating = serializers.IntegerField(min_value=1, max_value=4)
    idempotency_key = serializers.CharField(max_length=64, min_length=1)
    reverse = serializers.BooleanField(default=False)
    duration_ms = serializers.IntegerField(min_value=0, max_value=86_400_000, required=False, allow_null=True)
    answer = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
    expected_version = serializers.IntegerField(min_value=0, required=False, allow_null=True)
    reviewed_at = serializers.DateTimeField(required=False, allow_null=True)


class ReviewLogSerializer(serializers.ModelSerializer):
    card_slug = serializers.CharField(source="card.slug", read_only=True)

    class Meta:
        model = ReviewLog
        fields = [
            "id",
            "card",
            "card_slug",
            "reverse",
            "rating",
            "reviewed_at",
            "duration_ms",
            "answer",
            "answer_correct",
            "state_before",
            "session",
            "undone_at",
        ]


class CardStateSerializer(serializers.ModelSerializer):
    card_slug = serializers.CharField(source="card.slug", read_only=True)

    class Meta:
        model = CardState
        fields = [
            "id",
            "card",
            "card_slug",
            "reverse",
            "state",
            "step",
            "stability",
            "difficulty",
            "due",
            "last_review",
            "reps",
            "lapses",
            "version",
        ]


class SubmitResponseSerializer(serializers.Serializer):
    review = ReviewLogSerializer()
    state = CardStateSerializer(
        allow_null=True,
        help_text="The card's state now; null if this key's review was undone and the card has no other.",
    )
    duplicate = serializers.BooleanField()
    grade = serializers.DictField(allow_null=True)


@extend_schema(
    request=SubmitSerializer,
    responses={
        200: SubmitResponseSerializer,
        201: SubmitResponseSerializer,
        400: ErrorSerializer,
        404: ErrorSerializer,
        409: ErrorSerializer,
    },
)
@api_view(["POST"])
def submit(request: Request) -> Response:
    """Rate a card. Resending the same idempotency key returns the first result (200) and records nothing.

    A key records one review, ever. Once that review is undone, resending its key still answers 200 with it
    (`duplicate`, `review.undone_at` set) and the card's state as it is now (null if it has no other review);
    to rate the card again, send a new key."""
    data = SubmitSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    fields = dict(data.validated_data)
    fields["card_id"] = fields.pop("card")
    outcome = submit_review(user=request.user, **fields)
    grade = outcome.grade
    body = {
        "review": ReviewLogSerializer(outcome.review).data,
        "state": None if outcome.state is None else CardStateSerializer(outcome.state).data,
        "duplicate": outcome.duplicate,
        "grade": None
        if grade is None
        else {"correct": grade.correct, "suggested_rating": grade.suggested_rating, "detail": grade.detail},
    }
    return Response(body, status=status.HTTP_200_OK if outcome.duplicate else status.HTTP_201_CREATED)


@extend_schema(request=None, responses={200: ReviewLogSerializer, 404: ErrorSerializer})
@api_view(["POST"])
def undo(request: Request) -> Response:
    """Undo the learner's latest review: it stays in the log, marked undone; the card is rebuilt."""
    review = undo_last_review(user=request.user)
    return Response(ReviewLogSerializer(review).data)


@extend_schema(responses={200: serializers.DictField()})
@api_view(["GET"])
def queue(request: Request) -> Response:
    """Today's queue: progress, the next cards (the first with both sides and rating intervals)."""
    q = today_queue(request.user)
    forecast = tomorrow_forecast(request.user) if not q.items else 0
    upcoming = next_due(request.user) if not q.due_count else None
    return Response(presenters.queue_payload(q, forecast_tomorrow=forecast, next_due=upcoming))


@extend_schema(responses={200: serializers.DictField()})
@api_view(["GET"])
def stats(request: Request) -> Response:
    """Heatmap, true retention vs desired, 30-day forecast, mastery, streak; `methods` says how each is computed."""
    return Response(learner_stats(request.user))


class SettingsSerializer(serializers.ModelSerializer):
    learning_steps = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=1440), min_length=1, max_length=10
    )
    relearning_steps = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=1440), min_length=0, max_length=10
    )

    class Meta:
        model = LearnerSettings
        fields = [
            "desired_retention",
            "new_cards_per_day",
            "maximum_interval",
            "learning_steps",
            "relearning_steps",
            "timezone",
            "parameters",
        ]
        read_only_fields = ["parameters"]

    def validate_timezone(self, value: str) -> str:
        from zoneinfo import available_timezones

        if value not in available_timezones() and value != "UTC":
            raise serializers.ValidationError(f"Unknown time zone {value!r} (use e.g. Europe/Berlin).")
        return value


class RescheduleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Reschedule
        fields = ["id", "reason", "status", "total", "done", "created_at", "finished_at"]


class SettingsResponseSerializer(SettingsSerializer):
    rescheduling = serializers.SerializerMethodField(help_text="The re-scheduling under way after a change, if any.")

    class Meta(SettingsSerializer.Meta):
        fields = [*SettingsSerializer.Meta.fields, "rescheduling"]

    def get_rescheduling(self, obj) -> dict | None:
        job = active_reschedule(obj.user)
        return RescheduleSerializer(job).data if job else None


@extend_schema(methods=["GET"], responses=SettingsResponseSerializer)
@extend_schema(methods=["PATCH"], request=SettingsSerializer, responses=SettingsResponseSerializer)
@api_view(["GET", "PATCH"])
def learner_settings_view(request: Request) -> Response:
    """Scheduling settings. A change re-derives every card state from the review log on a worker, in batches
    (`rescheduling` shows the progress); reviews keep working meanwhile."""
    obj = learner_settings(request.user)
    if request.method == "GET":
        return Response(SettingsResponseSerializer(obj).data)
    ser = SettingsSerializer(obj, data=request.data, partial=True)
    ser.is_valid(raise_exception=True)
    update_learner_settings(user=request.user, changes=ser.validated_data)
    return Response(SettingsResponseSerializer(learner_settings(request.user)).data)


@extend_schema(request=None, responses={202: SettingsResponseSerializer})
@api_view(["POST"])
def reset_parameters(request: Request) -> Response:
    """Go back to the FSRS default parameters (drops a fitted set); the cards are re-scheduled in the background."""
    reset_to_default_parameters(user=request.user)
    return Response(SettingsResponseSerializer(learner_settings(request.user)).data, status=status.HTTP_202_ACCEPTED)


class OptimizationSerializer(serializers.ModelSerializer):
    class Meta:
        model = OptimizationRun
        fields = [
            "id",
            "status",
            "created_at",
            "finished_at",
            "train_reviews",
            "holdout_reviews",
            "current_log_loss",
            "defaults_log_loss",
            "fitted_log_loss",
            "evaluation",
            "adopted",
            "curve",
            "message",
        ]


@extend_schema(methods=["GET"], responses=OptimizationSerializer(many=True))
@extend_schema(methods=["POST"], request=None, responses={202: OptimizationSerializer, 429: ErrorSerializer})
@api_view(["GET", "POST"])
def optimization(request: Request) -> Response:
    """GET: past parameter fits. POST: queue a new fit, adopted only if it predicts the held-out recent reviews
    significantly better than both the parameters in use and the defaults (`evaluation.rule`). One fit per
    learner at a time: while one is queued or running, another is refused (429)."""
    if request.method == "POST":
        run = request_optimization(user=request.user)
        return Response(OptimizationSerializer(run).data, status=status.HTTP_202_ACCEPTED)
    runs = OptimizationRun.objects.filter(user=request.user)[:20]
    return Response(OptimizationSerializer(runs, many=True).data)


class StudySessionSerializer(serializers.ModelSerializer):
    reviews = serializers.SerializerMethodField()

    class Meta:
        model = StudySession
        fields = ["id", "started_at", "last_activity_at", "reviews"]

    def get_reviews(self, obj) -> int:
        return obj.reviews.filter(undone_at__isnull=True).count()


class OwnedViewSet(viewsets.ReadOnlyModelViewSet):
    """Read-only, and only the requesting learner's rows."""

    model = None

    @property
    def queryset(self):  # names the model to the schema generator, so that ids are documented as integers
        return self.model.objects.none()

    def get_queryset(self):
        return self.model.objects.filter(user=self.request.user).order_by("-pk")


class ReviewLogViewSet(OwnedViewSet):
    model = ReviewLog
    serializer_class = ReviewLogSerializer


class CardStateViewSet(OwnedViewSet):
    model = CardState
    serializer_class = CardStateSerializer


class StudySessionViewSet(OwnedViewSet):
    model = StudySession
    serializer_class = StudySessionSerializer

    @extend_schema(responses={200: OpenApiResponse(description="The session with its reviews.")})
    def retrieve(self, request, *args, **kwargs):
        session = self.get_object()  # DRF's lookup: a malformed id is a 404 too
        data = StudySessionSerializer(session).data
        data["review_log"] = ReviewLogSerializer(session.reviews.select_related("card"), many=True).data
        return Response(data)
