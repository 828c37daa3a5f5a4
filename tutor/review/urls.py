from django.urls import path
from rest_framework.routers import DefaultRouter

from tutor.review import api

router = DefaultRouter(trailing_slash=True)
router.register("review/logs", api.ReviewLogViewSet, basename="review-log")
router.register("review/states", api.CardStateViewSet, basename="card-state")
router.register("sessions", api.StudySessionViewSet, basename="study-session")

urlpatterns = [
    path("review/queue/", api.queue, name="api-review-queue"),
    path("review/submit/", api.submit, name="api-review-submit"),
    path("review/undo/", api.undo, name="api-review-undo"),
    path("review/stats/", api.stats, name="api-review-stats"),
    path("review/settings/", api.learner_settings_view, name="api-review-settings"),
    path("review/settings/reset-parameters/", api.reset_parameters, name="api-review-reset-parameters"),
    path("review/optimization/", api.optimization, name="api-review-optimization"),
] + router.urls
