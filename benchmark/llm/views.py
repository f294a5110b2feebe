"""Model endpoint pages under /endpoints/: admins manage the shared endpoints and the policy for
researchers' own; researchers see what they may call and, when allowed, manage their own.

Keys are write-only: no page, message or log line carries one (`sensitive_post_parameters`
keeps the key out of error reports too).
"""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import ProtectedError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.llm.base import ConfigurationError
from benchmark.llm.check import endpoint_check
from benchmark.llm.endpoints import endpoint_connection, endpoint_prices, key_status, personal_endpoints_allowed
from benchmark.llm.forms import EndpointForm, EndpointTestForm, PersonalEndpointForm, PolicyForm
from benchmark.models import EndpointPolicy, ModelEndpoint


def _endpoint_for(request: HttpRequest, code: UUID) -> ModelEndpoint:
    """Admins reach every endpoint; a researcher only their own. Anything else is a 404."""
    endpoint = ModelEndpoint.objects.select_related("owner").filter(code=code).first()
    if endpoint is None:
        raise Http404("no such endpoint")
    if is_admin(request.user) or (endpoint.is_personal and endpoint.owner_id == request.user.pk):
        return endpoint
    raise Http404("no such endpoint")


def _row(endpoint: ModelEndpoint, *, admin: bool) -> dict:
    ready, words = key_status(endpoint)
    prices = endpoint_prices(endpoint)
    return {
        "endpoint": endpoint,
        "ready": ready,
        "key_words": words if admin or endpoint.is_personal else ("configured" if ready else "not configured"),
        "models": [{"name": name, "price": prices.get(name)} for name in endpoint.model_names],
        "check": endpoint.last_check or {},
    }


def _usage(endpoint: ModelEndpoint) -> int:
    """Rows that call through `endpoint` (agent configs, research runs, and whatever higher layers add)."""
    return sum(
        getattr(endpoint, relation.get_accessor_name()).count()
        for relation in endpoint._meta.related_objects
        if relation.one_to_many
    )


def _form_class(endpoint: ModelEndpoint) -> type[EndpointForm]:
    return PersonalEndpointForm if endpoint.is_personal else EndpointForm


SECTIONS = [
    ("Where calls go", ["name", "provider", "base_url", "enabled"]),
    ("Models", ["offers_text", "open_models"]),
    ("Key", ["key_source", "key_env_var", "api_key"]),
]


def _form_page(request: HttpRequest, form: EndpointForm, endpoint: ModelEndpoint | None) -> HttpResponse:
    sections = [
        {"title": title, "fields": [form[name] for name in names if name in form.fields]} for title, names in SECTIONS
    ]
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "endpoint": endpoint, "sections": sections}
    return render(request, "benchmark/endpoint_form.html", context, status=status)


@require_GET
@role_required(RESEARCHER, ADMIN)
def endpoint_list(request: HttpRequest) -> HttpResponse:
    admin = is_admin(request.user)
    shared = ModelEndpoint.objects.filter(scope=ModelEndpoint.Scope.SHARED)
    personal = ModelEndpoint.objects.filter(scope=ModelEndpoint.Scope.PERSONAL).select_related("owner")
    if not admin:
        shared = shared.filter(enabled=True)
        personal = personal.filter(owner=request.user)
    policy = EndpointPolicy.current()
    context = {
        "admin": admin,
        "shared": [_row(e, admin=admin) for e in shared.order_by("name")],
        "personal": [_row(e, admin=admin) for e in personal.order_by("owner__username", "name")],
        "policy": policy,
        "policy_form": PolicyForm(instance=policy) if admin else None,
        "may_add": admin or policy.researcher_endpoints,
    }
    return render(request, "benchmark/endpoint_list.html", context)


@require_http_methods(["GET", "POST"])
@sensitive_post_parameters("api_key")
@role_required(RESEARCHER, ADMIN)
def endpoint_new(request: HttpRequest) -> HttpResponse:
    if is_admin(request.user):
        instance = ModelEndpoint(scope=ModelEndpoint.Scope.SHARED, owner=request.user)
    elif personal_endpoints_allowed():
        instance = ModelEndpoint(scope=ModelEndpoint.Scope.PERSONAL, owner=request.user)
    else:
        raise PermissionDenied("researchers may not add endpoints on this server")
    form = _form_class(instance)(request.POST or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        endpoint = form.save()
        messages.success(request, f"Saved {endpoint.name}. Test it with one call below.")
        return redirect("benchmark:endpoint_detail", code=endpoint.code)
    return _form_page(request, form, None)


@require_GET
@role_required(RESEARCHER, ADMIN)
def endpoint_detail(request: HttpRequest, code: UUID) -> HttpResponse:
    endpoint = _endpoint_for(request, code)
    admin = is_admin(request.user)
    context = {
        "row": _row(endpoint, admin=admin),
        "endpoint": endpoint,
        "admin": admin,
        "test_form": EndpointTestForm(endpoint=endpoint),
        "usage": _usage(endpoint),
    }
    return render(request, "benchmark/endpoint_detail.html", context)


@require_http_methods(["GET", "POST"])
@sensitive_post_parameters("api_key")
@role_required(RESEARCHER, ADMIN)
def endpoint_edit(request: HttpRequest, code: UUID) -> HttpResponse:
    endpoint = _endpoint_for(request, code)
    if endpoint.is_personal and not is_admin(request.user) and not personal_endpoints_allowed():
        raise PermissionDenied("researchers may not change endpoints on this server")
    form = _form_class(endpoint)(request.POST or None, instance=endpoint)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, f"Saved {endpoint.name}.")
        return redirect("benchmark:endpoint_detail", code=endpoint.code)
    return _form_page(request, form, endpoint)


@require_POST
@role_required(RESEARCHER, ADMIN)
def endpoint_test(request: HttpRequest, code: UUID) -> HttpResponse:
    """One cheap call; the result (status, the provider's words) is kept on the endpoint and shown."""
    endpoint = _endpoint_for(request, code)
    if endpoint.is_personal and not is_admin(request.user) and not personal_endpoints_allowed():
        raise PermissionDenied("researchers may not call their own endpoints on this server")
    form = EndpointTestForm(request.POST, endpoint=endpoint)
    if not form.is_valid():
        messages.error(request, "; ".join(form.errors.get("model", ["choose a model"])))
        return redirect("benchmark:endpoint_detail", code=endpoint.code)
    model = form.cleaned_data["model"]
    try:
        result = endpoint_check(endpoint_connection(endpoint), model).as_dict()
    except ConfigurationError as exc:  # no key to send: nothing was called
        result = {"ok": False, "url": endpoint.base_url, "model": model, "status": None, "message": str(exc)}
    endpoint.last_check = {**result, "at": timezone.now().isoformat(), "by": request.user.get_username()}
    endpoint.save(update_fields=["last_check", "updated_at"])
    (messages.success if result["ok"] else messages.error)(request, result["message"])
    return redirect("benchmark:endpoint_detail", code=endpoint.code)


@require_POST
@role_required(RESEARCHER, ADMIN)
def endpoint_delete(request: HttpRequest, code: UUID) -> HttpResponse:
    endpoint = _endpoint_for(request, code)
    try:
        endpoint.delete()
    except ProtectedError:
        messages.error(
            request, f"{endpoint.name} is used by runs or judgments: disable it instead, they keep the record."
        )
        return redirect("benchmark:endpoint_detail", code=endpoint.code)
    messages.success(request, f"Deleted {endpoint.name}.")
    return redirect("benchmark:endpoint_list")


@require_POST
@role_required(ADMIN)
def endpoint_policy(request: HttpRequest) -> HttpResponse:
    policy = EndpointPolicy.current()
    form = PolicyForm(request.POST, instance=policy)
    if form.is_valid():
        policy = form.save(commit=False)
        policy.updated_by = request.user
        policy.save()
        state = "may" if policy.researcher_endpoints else "may not"
        messages.success(request, f"Saved: researchers {state} add their own endpoints.")
    else:
        messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
    return redirect("benchmark:endpoint_list")
