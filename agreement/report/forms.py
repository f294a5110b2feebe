"""The agreement page's settings (GET parameters, so a page and its downloads are addressable)."""

from __future__ import annotations

from typing import Any

from django import forms

from agreement.data.pairing import POLICIES
from agreement.data.selectors import rubric_choices
from agreement.stats.alt_test import ALT_MIN_ITEMS
from agreement.stats.suite import DEFAULT_EPSILON, DEFAULT_MARGIN, DEFAULT_THRESHOLD
from review.models import Campaign

MAX_BOOTSTRAP = 5000  # a page request, not a batch job: bounds the work one GET can ask for


class AgreementSettingsForm(forms.Form):
    pairing = forms.ChoiceField(choices=[(p, p) for p in POLICIES], initial="strict", required=False)
    margin = forms.FloatField(
        min_value=0.01, max_value=10, initial=DEFAULT_MARGIN, required=False, label="TOST margin (points)"
    )
    bootstrap = forms.IntegerField(
        min_value=0, max_value=MAX_BOOTSTRAP, initial=1000, required=False, label="bootstrap resamples"
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, initial=0, required=False, label="bootstrap seed")
    alpha = forms.FloatField(min_value=0.001, max_value=0.49, initial=0.05, required=False, label="alpha")
    epsilon = forms.FloatField(
        min_value=0.0, max_value=0.5, initial=DEFAULT_EPSILON, required=False, label="alt-test epsilon"
    )
    min_items = forms.IntegerField(
        min_value=5, max_value=100_000, initial=ALT_MIN_ITEMS, required=False, label="alt-test: items per reviewer"
    )
    threshold = forms.FloatField(
        min_value=-1000, max_value=1000, initial=DEFAULT_THRESHOLD, required=False, label="accept when score >="
    )
    rubric = forms.ChoiceField(required=False, label="judged under rubric")

    def __init__(self, data: Any, *, campaign: Campaign) -> None:
        self.rubrics = {str(r.code): r for r in rubric_choices(campaign=campaign)}
        super().__init__(data)
        self.fields["rubric"].choices = [(code, str(r)) for code, r in self.rubrics.items()]
        self.fields["rubric"].initial = str(campaign.rubric.code)
        for field in self.fields.values():
            label = (
                dict(field.choices).get(field.initial, field.initial) if hasattr(field, "choices") else field.initial
            )
            field.help_text = f"default: {label}"

    @classmethod
    def from_query(cls, query: Any, *, campaign: Campaign) -> AgreementSettingsForm:
        """Bound to the defaults overlaid with the query, so the form shows the values in effect."""
        form = cls(None, campaign=campaign)
        data = {name: field.initial for name, field in form.fields.items()}
        data.update({k: v for k, v in query.items() if k in form.fields and v != ""})
        return cls(data, campaign=campaign)

    def settings(self) -> dict[str, Any]:
        """Cleaned values with the initial value for every field left blank."""
        return {
            name: (self.cleaned_data.get(name) if self.cleaned_data.get(name) not in (None, "") else field.initial)
            for name, field in self.fields.items()
        }
