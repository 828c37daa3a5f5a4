from django.urls import path
from rest_framework.routers import DefaultRouter

from tutor.teacher import api

router = DefaultRouter(trailing_slash=True)
router.register("teacher/conversations", api.ConversationViewSet, basename="conversation")
router.register("review/grades", api.AnswerGradeViewSet, basename="answer-grade")

urlpatterns = [
    path("teacher/conversations/<int:pk>/ask/", api.ask, name="api-teacher-ask"),
    path("review/grade/", api.grade_answer_view, name="api-review-grade"),
] + router.urls
