from django.contrib.auth import views as auth_views
from django.urls import reverse_lazy


class InviteAcceptView(auth_views.PasswordResetConfirmView):
    """The one-time invitation link: set a password, then sign in.

    It is Django's reset token, so it dies once the password is set (the token
    hashes the password) or when PASSWORD_RESET_TIMEOUT passes.
    """

    template_name = "accounts/invite_accept.html"
    success_url = reverse_lazy("home")
    post_reset_login = True
    reset_url_token = "set-password"
