from django.urls import path
from rest_framework.routers import DefaultRouter

from tutor import review_api

router = DefaultRouter(trailing_slash=True)
router.register("review/logs", review_api.ReviewLogViewSet, basename="review-log")
router.register("review/states", review_api.CardStateViewSet, basename="card-state")
router.register("sessions", review_api.StudySessionViewSet, basename="study-session")
router.register("review/grades", review_api.AnswerGradeViewSet, basename="answer-grade")

urlpatterns = [
    path("review/queue/", review_api.queue, name="api-review-queue"),
    path("review/submit/", review_api.submit, name="api-review-submit"),
    path("review/grade/", review_api.grade_answer, name="api-review-grade"),
    path("review/undo/", review_api.undo, name="api-review-undo"),
    path("review/stats/", review_api.stats, name="api-review-stats"),
    path("review/settings/", review_api.learner_settings_view, name="api-review-settings"),
    path("review/optimization/", review_api.optimization, name="api-review-optimization"),
] + router.urls
