from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.models import Invitation, Profile
from accounts.services import invitation_revoke


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "expertise", "invited_at")
    search_fields = ("user__username", "user__email")


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Read-only list with a revoke action: invitations are made by `invite_reviewer` (the token
    is generated there and exists only in the link), never typed in here."""

    list_display = ("email", "roles", "state_label", "created_at", "expires_at", "created_by")
    list_filter = ("roles",)
    search_fields = ("email", "user__username")
    actions = ["revoke"]
    exclude = ("token_hash",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Invitation | None = None) -> bool:
        return False

    @admin.display(description="state")
    def state_label(self, obj: Invitation) -> str:
        return obj.state()

    @admin.action(description="Revoke the selected invitations (their links then do nothing)")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Invitation]) -> None:
        revoked = sum(invitation_revoke(invitation=inv, by=request.user) for inv in queryset)
        messages.success(request, f"{revoked} invitation(s) revoked; the others were used, revoked or expired.")
