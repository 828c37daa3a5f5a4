from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Accounts: the API's identity endpoints and the demo-user command (Django's own User model)."""

    name = "tutor.accounts"
    label = "accounts"
    verbose_name = "Accounts"
