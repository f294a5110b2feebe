"""Forms of model endpoints: the admin's endpoint form, a researcher's own endpoint, the policy,
and the endpoint-and-model choice that the launch forms and the judge form share.
"""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from accounts.roles import is_admin
from benchmark.llm import netguard
from benchmark.llm.endpoints import (
    MODEL_NAME_RE,
    endpoint_prices,
    key_status,
    offers_parse,
    offers_text,
    usable_endpoints,
)
from benchmark.models import EndpointPolicy, ModelEndpoint

OTHER = "*"  # the choice "another model on this endpoint" of endpoints with an open model list


# -- choosing an endpoint and a model -------------------------------------------------------------
def _price_label(name: str, endpoint: ModelEndpoint) -> str:
    price = endpoint_prices(endpoint).get(name)
    if price is None:
        return f"{name} (unpriced)"
    return f"{name} (${price.input_per_mtok:g} / ${price.output_per_mtok:g} per M tokens)"


class ModelField(forms.ChoiceField):
    """Offers the models of the endpoints that are ready (model_choices); a posted value outside them
    (a form opened before a key was removed, a hand-made post) is left to model_pick, which refuses it
    with the reason ("its key is not configured") instead of Django's "select a valid choice"."""

    def valid_value(self, value: str) -> bool:
        return True


def model_choices(user: Any, *, other: bool = True) -> list[tuple[str, list[tuple[str, str]]]]:
    """Option groups, one per endpoint `user` may call now: values read `<endpoint code>/<model>`.

    An endpoint whose key is not configured is left out (model_pick would refuse it): the forms
    name it apart (unready_endpoints) so that its absence is explained, not offered and refused."""
    groups = []
    for endpoint in usable_endpoints(user):
        ready, _ = key_status(endpoint)
        if not ready:
            continue
        options = [(f"{endpoint.code}/{name}", _price_label(name, endpoint)) for name in endpoint.model_names]
        if other and endpoint.open_models:
            options.append((f"{endpoint.code}/{OTHER}", f"another model on {endpoint.name} (name it below)"))
        if options:
            label = endpoint.name + (" (yours)" if endpoint.is_personal else "")
            groups.append((label, options))
    return groups


def unready_endpoints(user: Any) -> list[str]:
    """Names of the endpoints `user` could call once their key is configured (not offered meanwhile)."""
    return [endpoint.name for endpoint in usable_endpoints(user) if not key_status(endpoint)[0]]


def unready_note(user: Any) -> str:
    """A help text line naming the endpoints left out of a model choice, or ""."""
    names = unready_endpoints(user)
    return f"Not offered until their key is configured: {', '.join(names)}." if names else ""


def model_pick(user: Any, value: str, other_name: str = "") -> tuple[ModelEndpoint, str]:
    """(endpoint, model name) of a chosen `<code>/<model>`; ValidationError in words a person acts on."""
    code, _, name = (value or "").partition("/")
    try:
        uuid.UUID(code)
    except ValueError:
        raise ValidationError("choose an endpoint and a model from the list") from None
    endpoint = usable_endpoints(user).filter(code=code).first()
    if endpoint is None:
        raise ValidationError("choose an endpoint and a model from the list")
    if name == OTHER:
        name = (other_name or "").strip()
        if not name:
            raise ValidationError(f"name the model to ask {endpoint.name} for")
        if not MODEL_NAME_RE.match(name):
            raise ValidationError(f"{name!r} is not a model name")
    if not endpoint.offers_model(name):
        raise ValidationError(f"{endpoint.name} does not offer {name!r}")
    ready, words = key_status(endpoint)
    if not ready:
        if is_admin(user) or endpoint.is_personal:
            raise ValidationError(f"{endpoint.name} cannot be used yet: its key is {words}")
        raise ValidationError(f"{endpoint.name} cannot be used yet: its key is not configured (ask an admin)")
    return endpoint, name


# -- the endpoint forms ---------------------------------------------------------------------------
class EndpointForm(forms.ModelForm):
    """An admin's shared endpoint. The key field is write-only: it is never rendered back."""

    offers_text = forms.CharField(
        label="Models offered",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "mono"}),
        help_text="one per line: the model name, then input and output USD per million tokens "
        "(e.g. 'claude-sonnet-4-5 3 15'); a name alone is unpriced",
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="stored encrypted; never shown again. Leave empty to keep the stored key.",
    )

    class Meta:
        model = ModelEndpoint
        fields = ["name", "provider", "base_url", "open_models", "key_source", "key_env_var", "enabled"]
        labels = {"base_url": "Base URL", "key_env_var": "Environment variable", "open_models": "Any model name"}
        help_texts = {
            "base_url": "empty for the provider's public API; e.g. http://gpu-box:8000/v1 for vLLM",
            "key_env_var": "with the key source 'environment variable': its name, e.g. ANTHROPIC_API_KEY",
            "open_models": "researchers may also name models that are not listed (unpriced)",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = ModelEndpoint.Provider.choices  # no empty choice: one is required
        self.fields["offers_text"].initial = offers_text(self.instance.offers or [])
        if self.instance.has_stored_key:
            self.fields["api_key"].help_text = "a key is stored; enter a new one to replace it, or leave empty"

    def clean_offers_text(self) -> str:
        try:
            self._offers = offers_parse(self.cleaned_data.get("offers_text") or "")
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        return self.cleaned_data["offers_text"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        self.instance.offers = getattr(self, "_offers", self.instance.offers)
        source = data.get("key_source")
        key = data.get("api_key") or ""
        if source == ModelEndpoint.KeySource.STORED:
            if key:
                self.instance.set_key(key)
        elif key:
            self.add_error("api_key", "a key is only kept with the key source 'stored encrypted'")
        else:
            self.instance.clear_key()
        return data

    def _update_errors(self, errors: ValidationError) -> None:
        # The model names its list of offers `offers`; on the form it is the text area.
        if hasattr(errors, "error_dict") and "offers" in errors.error_dict:
            errors.error_dict["offers_text"] = errors.error_dict.pop("offers")
        super()._update_errors(errors)


class PersonalEndpointForm(EndpointForm):
    """A researcher's own endpoint: no server key source, and its host must pass the SSRF guard."""

    key_source = forms.ChoiceField(
        choices=[
            (ModelEndpoint.KeySource.NONE, ModelEndpoint.KeySource.NONE.label),
            (ModelEndpoint.KeySource.STORED, "your key, stored encrypted"),
        ],
        label="Key",
    )

    class Meta(EndpointForm.Meta):
        fields = ["name", "provider", "base_url", "open_models", "key_source", "enabled"]


class PolicyForm(forms.ModelForm):
    class Meta:
        model = EndpointPolicy
        fields = ["researcher_endpoints", "allowed_networks"]
        labels = {
            "researcher_endpoints": "Researchers may add their own endpoints",
            "allowed_networks": "Private ranges their endpoints may reach",
        }
        widgets = {"allowed_networks": forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "mono"})}

    def clean_allowed_networks(self) -> str:
        text = self.cleaned_data.get("allowed_networks") or ""
        try:
            networks = netguard.parse_networks(text)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        return "\n".join(str(net) for net in networks)


class EndpointTestForm(forms.Form):
    model = forms.CharField(max_length=200)

    def __init__(self, *args: Any, endpoint: ModelEndpoint, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.endpoint = endpoint

    def clean_model(self) -> str:
        name = self.cleaned_data["model"].strip()
        if not MODEL_NAME_RE.match(name) or not self.endpoint.offers_model(name):
            raise ValidationError(f"{self.endpoint.name} does not offer {name!r}")
        return name
