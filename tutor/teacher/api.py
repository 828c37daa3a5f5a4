"""HTTP for the teacher: a server-sent-events stream of the answer, the conversation API, and grading of
typed answers at the reveal (under /api/review/, where the review page calls it).

The stream is an async view: under ASGI a synchronous streaming response would be buffered
whole, so tokens would not reach the browser as the model sends them.
"""

from __future__ import annotations

import json
import time

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.http import JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status, viewsets
from rest_framework.decorators import api_view
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from quizzes.models import Card
from tutor.errors import DomainError, ErrorSerializer
from tutor.review.api import OwnedViewSet
from tutor.teacher.chat import answer_events, check_limits, start_conversation
from tutor.teacher.grade_requests import grade_now_or_queue
from tutor.teacher.models import STREAM_FLUSH_SECONDS, AnswerGrade, ChatTurn, Conversation
from tutor.text_input import text_problem


def _sse(event: dict) -> str:
    kind = event.pop("event")
    return f"event: {kind}\ndata: {json.dumps(event)}\n\n"


def _authenticate(request) -> tuple[object | None, JsonResponse | None]:
    """Authenticate as every API endpoint does (a session with its CSRF check, or `Authorization: Token`):
    this view is a plain async Django view, so that it can stream, and does DRF's part itself."""
    request.body  # noqa: B018 - read it now: the CSRF check parses the form, and the view reads the JSON later
    drf_request = Request(
        request,
        parsers=[JSONParser(), FormParser(), MultiPartParser()],
        authenticators=[cls() for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES],
    )
    try:
        user = drf_request.user
    except exceptions.APIException as exc:
        return None, JsonResponse({"detail": str(exc.detail)}, status=exc.status_code)
    if not user or not user.is_authenticated:
        return None, JsonResponse({"detail": "Log in, or send an API token, to ask the teacher."}, status=401)
    return user, None


@csrf_exempt  # the CSRF check belongs to session authentication, which _authenticate runs
@require_POST
async def ask(request, pk: int):
    """POST {"question": "..."} → text/event-stream: meta, token…, notice?, done (or error)."""
    user, refusal = await sync_to_async(_authenticate)(request)
    if refusal is not None:
        return refusal
    conversation = await Conversation.objects.filter(pk=pk, user=user).afirst()
    if conversation is None:
        return JsonResponse({"detail": "No such conversation."}, status=404)
    try:
        body = json.loads(request.body or b"{}")
        question = body.get("question", "") if isinstance(body, dict) else ""
    except (json.JSONDecodeError, UnicodeDecodeError):
        return JsonResponse({"detail": 'Send JSON: {"question": "..."}.'}, status=400)
    if not isinstance(question, str):
        return JsonResponse({"detail": "The question must be text.", "field": "question"}, status=400)
    problem = text_problem(question)  # refused here: once the stream has started, only an error event could say so
    if problem:
        return JsonResponse({"detail": problem, "field": "question"}, status=400)
    try:
        question = await sync_to_async(check_limits)(user, question)
    except DomainError as exc:
        return JsonResponse(exc.as_dict(), status=exc.status)

    async def stream():
        released = 0.0
        try:
            async for event in answer_events(conversation, question):
                yield _sse(event)
                if time.monotonic() - released >= STREAM_FLUSH_SECONDS:
                    # The question is stored and the answer saves itself as it streams; the model may take a
                    # while. Give the database connection back (to the pool) meanwhile, instead of holding
                    # it idle for the whole stream.
                    await sync_to_async(close_old_connections)()
                    released = time.monotonic()
        except DomainError as exc:
            yield _sse({"event": "error", "detail": exc.message})

    response = StreamingHttpResponse(stream(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # tell nginx-style proxies not to buffer the stream
    return response


class TurnSerializer(serializers.ModelSerializer):
    notice = serializers.CharField(source="shown_notice", read_only=True)
    streaming = serializers.SerializerMethodField(help_text="The answer is being written now.")

    def get_streaming(self, turn: ChatTurn) -> bool:
        return turn.streaming and not turn.cut_off

    class Meta:
        model = ChatTurn
        fields = [
            "id",
            "role",
            "text",
            "text_html",
            "mode",
            "model",
            "citations",
            "hint_mode",
            "complete",
            "streaming",
            "notice",
            "created_at",
        ]


class ConversationSerializer(serializers.ModelSerializer):
    card = serializers.PrimaryKeyRelatedField(
        queryset=Card.objects.filter(retired=False), required=False, allow_null=True
    )
    turns = TurnSerializer(many=True, read_only=True)

    class Meta:
        model = Conversation
        fields = ["id", "title", "card", "lab_run_id", "session", "created_at", "updated_at", "turns"]
        read_only_fields = ["title", "lab_run_id", "session", "created_at", "updated_at", "turns"]


class ConversationViewSet(viewsets.mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """The learner's conversations with the teacher (others' are 404). POST creates one, optionally from a card;
    ask with POST /api/teacher/conversations/{id}/ask/ (a server-sent-events stream)."""

    serializer_class = ConversationSerializer
    queryset = Conversation.objects.none()  # for the schema (integer ids); get_queryset picks the learner's

    def get_queryset(self):
        return Conversation.objects.filter(user=self.request.user).prefetch_related("turns")

    def create(self, request, *args, **kwargs):
        ser = self.get_serializer(data=request.data)
        ser.is_valid(raise_exception=True)
        conversation = start_conversation(user=request.user, card=ser.validated_data.get("card"))
        return Response(self.get_serializer(conversation).data, status=status.HTTP_201_CREATED)


class AnswerGradeSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = AnswerGrade
        fields = ["id", "card", "status", "result", "created_at", "finished_at", "url"]

    def get_url(self, obj) -> str:
        return f"/api/review/grades/{obj.pk}/"


class GradeRequestSerializer(serializers.Serializer):
    card = serializers.IntegerField(min_value=1)
    answer = serializers.CharField(max_length=5000, allow_blank=False)


@extend_schema(
    request=GradeRequestSerializer,
    responses={
        200: serializers.DictField(),
        202: AnswerGradeSerializer,
        400: ErrorSerializer,
        404: ErrorSerializer,
        429: ErrorSerializer,
    },
)
@api_view(["POST"])
def grade_answer_view(request: Request) -> Response:
    """Grade an answer without recording a review (shown at the reveal): numeric answers against the card's
    tolerance and predictions against the right choice at once (200); interview and recall answers are graded
    by the teacher on a worker (202: poll the returned grade's url). A learner with several answers still
    waiting for the worker is refused another (429) until those are graded."""
    data = GradeRequestSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    verdict = grade_now_or_queue(
        user=request.user, card_id=data.validated_data["card"], answer=data.validated_data["answer"]
    )
    if isinstance(verdict, AnswerGrade):
        return Response(AnswerGradeSerializer(verdict).data, status=status.HTTP_202_ACCEPTED)
    if verdict is None:
        return Response({"graded": False})
    return Response(
        {
            "graded": True,
            "correct": verdict.correct,
            "suggested_rating": verdict.suggested_rating,
            "detail": verdict.detail,
        }
    )


class AnswerGradeViewSet(OwnedViewSet):
    model = AnswerGrade
    serializer_class = AnswerGradeSerializer
