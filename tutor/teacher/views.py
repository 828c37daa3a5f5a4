"""HTTP for the teacher: a server-sent-events stream of the answer, and the conversation API.

The stream is an async view: under ASGI a synchronous streaming response would be buffered
whole, so tokens would not reach the browser as the model sends them.
"""

from __future__ import annotations

import json

from asgiref.sync import sync_to_async
from django.http import JsonResponse, StreamingHttpResponse
from django.views.decorators.http import require_POST
from rest_framework import serializers, status, viewsets
from rest_framework.response import Response

from quizzes.models import Card
from tutor.models import ChatTurn, Conversation
from tutor.teacher.chat import ChatError, answer_events, check_limits, start_conversation


def _sse(event: dict) -> str:
    kind = event.pop("event")
    return f"event: {kind}\ndata: {json.dumps(event)}\n\n"


@require_POST
async def ask(request, pk: int):
    """POST {"question": "..."} → text/event-stream: meta, token…, notice?, done (or error)."""
    user = await request.auser()
    if not user.is_authenticated:
        return JsonResponse({"detail": "Log in to ask the teacher."}, status=403)
    conversation = await Conversation.objects.filter(pk=pk, user=user).afirst()
    if conversation is None:
        return JsonResponse({"detail": "No such conversation."}, status=404)
    try:
        body = json.loads(request.body or b"{}")
        question = body.get("question", "") if isinstance(body, dict) else ""
    except (json.JSONDecodeError, UnicodeDecodeError):
        return JsonResponse({"detail": "Send JSON: {\"question\": \"...\"}."}, status=400)
    if not isinstance(question, str):
        return JsonResponse({"detail": "The question must be text.", "field": "question"}, status=400)
    try:
        question = await sync_to_async(check_limits)(user, question)
    except ChatError as exc:
        return JsonResponse({"detail": str(exc), "field": "question"}, status=exc.status)

    async def stream():
        try:
            async for event in answer_events(conversation, question):
                yield _sse(event)
        except ChatError as exc:
            yield _sse({"event": "error", "detail": str(exc)})

    response = StreamingHttpResponse(stream(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # tell nginx-style proxies not to buffer the stream
    return response


class TurnSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChatTurn
        fields = ["id", "role", "text", "text_html", "mode", "model", "citations", "hint_mode", "complete",
                  "notice", "created_at"]


class ConversationSerializer(serializers.ModelSerializer):
    card = serializers.PrimaryKeyRelatedField(queryset=Card.objects.filter(retired=False), required=False,
                                              allow_null=True)
    turns = TurnSerializer(many=True, read_only=True)

    class Meta:
        model = Conversation
        fields = ["id", "title", "card", "lab_run_id", "session", "created_at", "updated_at", "turns"]
        read_only_fields = ["title", "lab_run_id", "session", "created_at", "updated_at", "turns"]


class ConversationViewSet(viewsets.mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """The learner's conversations with the teacher (others' are 404). POST creates one, optionally from a card;
    ask with POST /api/teacher/conversations/{id}/ask/ (a server-sent-events stream)."""

    serializer_class = ConversationSerializer

    def get_queryset(self):
        return Conversation.objects.filter(user=self.request.user).prefetch_related("turns")

    def create(self, request, *args, **kwargs):
        ser = self.get_serializer(data=request.data)
        ser.is_valid(raise_exception=True)
        conversation = start_conversation(user=request.user, card=ser.validated_data.get("card"))
        return Response(self.get_serializer(conversation).data, status=status.HTTP_201_CREATED)


