"""The admin's diagnosis of one disagreement."""

from __future__ import annotations

from django import forms

from review.models import DisagreementTag


class TagForm(forms.Form):
    criterion = forms.CharField(max_length=100)
    cause = forms.ChoiceField(choices=DisagreementTag.Cause.choices)
    note = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 4}))
