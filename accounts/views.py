"""Invitation links: open (token in the URL) -> accept (token kept in the session, out of the URL).

Opening a link moves its token hash into the session and redirects to a URL without it, as
Django's password-reset view does, so the token does not leak through the Referer header or
the browser history of the pages that follow. Every step reads the invitation again: a link
revoked or expired while its page is open does nothing when submitted.
"""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts.models import Invitation
from accounts.progress import user_access_changed
from accounts.roles import REVIEWER, is_researcher
from accounts.services import InvitationUnusable, invitation_accept, invitation_by_token

SESSION_KEY = "_invitation_token_hash"


class LogoutView(auth_views.LogoutView):
    """Django's logout, then the user's open websockets re-check: those of the ended session close."""

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        user_id = request.user.pk if request.user.is_authenticated else None
        response = super().post(request, *args, **kwargs)
        if user_id is not None:
            user_access_changed(user_id)
        return response


def _unusable(request: HttpRequest, invitation: Invitation | None) -> HttpResponse:
    """The plain answer for a link that does nothing; 404 for a token that never existed, else 410."""
    request.session.pop(SESSION_KEY, None)
    state = invitation.state() if invitation is not None else "invalid"
    return render(
        request,
        "accounts/invitation_unusable.html",
        {"state": state, "invitation": invitation},
        status=404 if invitation is None else 410,
    )


@never_cache
@require_GET
def invitation_open(request: HttpRequest, token: str) -> HttpResponse:
    invitation = invitation_by_token(token)
    if invitation is None or not invitation.is_pending:
        return _unusable(request, invitation)
    request.session[SESSION_KEY] = invitation.token_hash
    return redirect("accounts:invitation_accept")


@never_cache
@require_http_methods(["GET", "POST"])
def invitation_accept_view(request: HttpRequest) -> HttpResponse:
    token_hash = request.session.get(SESSION_KEY)
    invitation = Invitation.objects.select_related("user").filter(token_hash=token_hash).first() if token_hash else None
    if invitation is None or not invitation.is_pending:
        return _unusable(request, invitation)
    account = invitation.user
    if account.has_usable_password():
        return _confirm_roles(request, invitation)
    form = SetPasswordForm(account, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitation_accept(invitation=invitation, password=form.cleaned_data["new_password1"])
        except InvitationUnusable as exc:
            return _unusable(request, exc.invitation)
        request.session.pop(SESSION_KEY, None)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(
        request,
        "accounts/invitation_accept.html",
        {"invitation": invitation, "form": form, "mode": "password"},
        status=400 if form.errors else 200,
    )


def _confirm_roles(request: HttpRequest, invitation: Invitation) -> HttpResponse:
    """An existing account with a password: only its holder, signed in, takes the roles."""
    account = invitation.user
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("accounts:invitation_accept"))
    if request.user.pk != account.pk:
        return render(request, "accounts/invitation_unusable.html", {"state": "other_account"}, status=403)
    if request.method == "POST":
        try:
            invitation_accept(invitation=invitation)
        except InvitationUnusable as exc:
            return _unusable(request, exc.invitation)
        request.session.pop(SESSION_KEY, None)
        return redirect("home")
    context = {
        "invitation": invitation,
        "mode": "confirm",
        "sees_runs": REVIEWER in invitation.roles and is_researcher(account),
    }
    return render(request, "accounts/invitation_accept.html", context)
