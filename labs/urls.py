from django.urls import path
from rest_framework.routers import DefaultRouter

from labs import api

router = DefaultRouter(trailing_slash=True)
router.register("labs/runs", api.LabRunViewSet, basename="lab-run-api")

urlpatterns = [path("labs/experiments/", api.experiments, name="api-lab-experiments")] + router.urls
