"""Django admin for model endpoints: the same write-only key field as the Referee pages.

The ciphertext is not a form field, the key is a password input that never renders its value,
and the key is kept out of error reports; the change page says only whether a key is set.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters

from benchmark.llm.endpoints import key_status
from benchmark.llm.forms import EndpointForm
from benchmark.models import EndpointPolicy, ModelEndpoint


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    form = EndpointForm
    list_display = ("name", "scope", "provider", "base_url", "key_source", "enabled", "owner")
    list_filter = ("scope", "provider", "enabled", "key_source")
    search_fields = ("name", "base_url")
    readonly_fields = ("code", "scope", "owner", "seed", "key_state", "created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("code", "name", "scope", "owner", "provider", "base_url", "enabled", "seed")}),
        ("Models", {"fields": ("offers_text", "open_models")}),
        ("Key", {"fields": ("key_state", "key_source", "key_env_var", "api_key")}),
        ("Record", {"fields": ("created_at", "updated_at")}),
    )

    @admin.display(description="key")
    def key_state(self, obj: ModelEndpoint) -> str:
        return key_status(obj)[1] if obj.pk else "-"

    @method_decorator(sensitive_post_parameters("api_key"))
    def changeform_view(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return super().changeform_view(request, *args, **kwargs)

    def save_model(self, request: Any, obj: ModelEndpoint, form: Any, change: bool) -> None:
        if not change and obj.owner_id is None:
            obj.owner = request.user
        super().save_model(request, obj, form, change)


@admin.register(EndpointPolicy)
class EndpointPolicyAdmin(admin.ModelAdmin):
    list_display = ("researcher_endpoints", "updated_by", "updated_at")
    readonly_fields = ("updated_by", "updated_at")
