from django.urls import path

from tutor.accounts import api

urlpatterns = [
    path("me/", api.me, name="api-me"),
    path("auth/token/", api.token_login, name="api-token-login"),
    path("me/token/", api.token, name="api-token"),
]
