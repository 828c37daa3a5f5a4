from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

from tutor import api, views

api_urls = [
    path("me/", api.me, name="api-me"),
    path("auth/token/", obtain_auth_token, name="api-token-login"),
    path("me/token/", api.token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include(api_urls)),
    path("api/", include("quizzes.urls")),
    path("api/", include("tutor.review_urls")),
    path("api/", include("tutor.teacher.urls")),
    path("api/", include("labs.urls")),
    path("", include("frontend.urls")),
]
