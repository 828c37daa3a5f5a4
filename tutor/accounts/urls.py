from django.urls import path
from rest_framework.authtoken.views import obtain_auth_token

from tutor.accounts import api

urlpatterns = [
    path("me/", api.me, name="api-me"),
    path("auth/token/", obtain_auth_token, name="api-token-login"),
    path("me/token/", api.token, name="api-token"),
]
