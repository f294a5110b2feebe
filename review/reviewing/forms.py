"""The rubric form a reviewer fills in, built from the rubric version's dimensions, and a stored draft as its data."""

from __future__ import annotations

from typing import Any

from django import forms

MAX_JUSTIFICATION = 5000
CONFIDENCE_CHOICES = [
    ("", "choose"),
    ("1", "1 - educated guess"),
    ("2", "2 - willing to defend, not sure"),
    ("3", "3 - fairly confident"),
    ("4", "4 - confident"),
    ("5", "5 - absolutely certain"),
]


def score_dimensions(rubric: Any) -> list[dict]:
    return [d for d in rubric.dimensions if d.get("kind", "score") == "score"]


class ReviewForm(forms.Form):
    """score_<key> (min..max of the dimension, default 1-10), just_<key>, confidence (1-5).

    partial=True (drafts): every field optional, but what is given must be valid.
    """

    def __init__(self, *args: Any, rubric: Any, partial: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dimensions = score_dimensions(rubric)
        for dim in self.dimensions:
            key, low, high = dim["key"], int(dim.get("min", 1)), int(dim.get("max", 10))
            self.fields[f"score_{key}"] = forms.TypedChoiceField(
                label=f"{dim['name']} score",
                choices=[("", "-")] + [(str(v), str(v)) for v in range(low, high + 1)],
                coerce=int,
                empty_value=None,
                required=not partial,
                error_messages={"required": f"Choose a score for {dim['name']}."},
            )
            self.fields[f"just_{key}"] = forms.CharField(
                label=f"{dim['name']} justification",
                max_length=MAX_JUSTIFICATION,
                required=not partial,
                widget=forms.Textarea(attrs={"rows": 3}),
                strip=not partial,  # drafts keep exactly what was typed
                error_messages={"required": f"Justify the {dim['name']} score."},
            )
        # The rubric's own confidence anchors when it has them (the end-to-end rubric does).
        confidence = next((d for d in rubric.dimensions if d.get("kind") == "confidence"), None)
        choices = CONFIDENCE_CHOICES
        if confidence and confidence.get("anchors"):
            anchors = confidence["anchors"]
            choices = [("", "choose")] + [
                (str(v), f"{v} - {anchors.get(str(v), '')}".rstrip(" -")) for v in range(1, 6)
            ]
        self.fields["confidence"] = forms.TypedChoiceField(
            choices=choices,
            coerce=int,
            empty_value=None,
            required=not partial,
            error_messages={"required": "Choose your confidence."},
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for dim in self.dimensions:
            key = dim["key"]
            text = data.get(f"just_{key}")
            if not self.fields[f"just_{key}"].required or text is None:
                continue
            if not text.strip():
                self.add_error(f"just_{key}", f"Justify the {dim['name']} score.")
        return data

    def gaps(self) -> list[dict[str, str]]:
        """What a submission still lacks, in the form's order: the summary above the form links each."""
        out = []
        for dim in self.dimensions:
            key = dim["key"]
            if self.has_error(f"score_{key}") or self.has_error(f"just_{key}"):
                out.append({"anchor": f"dim-{key}", "name": dim["name"]})
        if self.has_error("confidence"):
            out.append({"anchor": "id_confidence", "name": "Confidence"})
        return out

    def scores(self) -> dict[str, dict[str, Any]]:
        """{key: {"score": int|None, "justification": str}} - the shape Judgment.scores uses."""
        out = {}
        for dim in self.dimensions:
            key = dim["key"]
            score = self.cleaned_data.get(f"score_{key}")
            text = self.cleaned_data.get(f"just_{key}") or ""
            if score is not None or text:
                out[key] = {"score": score, "justification": text}
        return out

    @staticmethod
    def initial_from(review: Any) -> dict[str, Any]:
        if review is None:
            return {}
        initial: dict[str, Any] = {"confidence": review.confidence}
        for key, entry in (review.scores or {}).items():
            if isinstance(entry, dict):
                initial[f"score_{key}"] = entry.get("score")
                initial[f"just_{key}"] = entry.get("justification", "")
        return initial


def draft_to_form_data(payload: dict[str, Any]) -> dict[str, str]:
    """The autosave JSON ({scores: {key: {score, justification}}, confidence}) as form fields."""
    data: dict[str, str] = {}
    scores = payload.get("scores")
    if not isinstance(scores, dict):
        raise ValueError("scores: expected an object")
    for key, entry in scores.items():
        if not isinstance(entry, dict):
            raise ValueError(f"scores.{key}: expected an object")
        score = entry.get("score")
        data[f"score_{key}"] = "" if score in (None, "") else str(score)
        data[f"just_{key}"] = str(entry.get("justification") or "")
    confidence = payload.get("confidence")
    data["confidence"] = "" if confidence in (None, "") else str(confidence)
    return data
