"""The default rubric version of a stage and the policy that guards it; who may change either."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from judge.forms import JudgmentRequestForm
from judge.models import Rubric, RubricPolicy
from judge.rubrics import rubric_create_version, rubric_default, rubric_set_default
from tests.judge.factories import make_artifact, make_research_run, rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(db):
    v1 = rubric("idea")
    v2 = rubric_create_version(stage="idea", name="v2", instructions="x", dimensions=v1.dimensions)
    return v1, v2


def test_without_a_policy_an_admin_makes_any_version_the_default(versions, admin_user, client_for):
    v1, v2 = versions
    assert rubric_default("idea") == v2  # the newest until an admin chooses
    response = client_for(admin_user).post(reverse("judge:rubric_make_default", args=[v1.code]))
    assert response.status_code == 302
    v1.refresh_from_db()
    assert v1.is_default and rubric_default("idea") == v1 and v1.default_evidence["gate"] is None
    rubric_set_default(rubric=v2, user=admin_user)
    assert list(Rubric.objects.filter(stage="idea", is_default=True)) == [v2]  # one default per stage
    form = JudgmentRequestForm(artifact=make_artifact(make_research_run(), "idea"), user=admin_user)
    assert form.initial["rubric"] == v2.code  # new judgments are offered the default first


def test_a_required_gate_refuses_the_direct_way_and_a_forged_gate(versions, admin_user, client_for):
    v1, v2 = versions
    client = client_for(admin_user)
    client.post(reverse("judge:rubric_policy", args=["idea"]),
                {"require_gate": "on", "statistic": "kappa_quadratic", "margin": "0.1", "mode": "noninferior"})  # fmt: skip
    policy = RubricPolicy.objects.get(stage="idea")
    assert (policy.require_gate, policy.statistic, policy.margin, policy.mode) == (
        True,
        "kappa_quadratic",
        0.1,
        "noninferior",
    )
    page = client.post(reverse("judge:rubric_make_default", args=[v2.code]), follow=True).content.decode()
    assert "requires a passing regression gate" in page
    v2.refresh_from_db()
    assert not v2.is_default
    from django.core.exceptions import ValidationError

    gate = {"candidate_rubric": str(v2.code), "statistic": "kappa_quadratic", "margin": 0.1, "mode": "noninferior"}
    with pytest.raises(ValidationError, match="did not pass"):
        rubric_set_default(rubric=v2, user=admin_user, gate={**gate, "passed": False})
    with pytest.raises(ValidationError, match="is not the policy's"):
        rubric_set_default(rubric=v2, user=admin_user, gate={**gate, "margin": 5.0, "passed": True})
    with pytest.raises(ValidationError, match="does not use this rubric version"):
        rubric_set_default(rubric=v2, user=admin_user, gate={**gate, "candidate_rubric": str(v1.code), "passed": True})
    rubric_set_default(rubric=v2, user=admin_user, gate={**gate, "passed": True})
    v2.refresh_from_db()
    assert v2.is_default


def test_only_admins_change_the_default_or_the_policy(versions, researcher, reviewer, admin_user, client_for):
    v1, _ = versions
    for url in (reverse("judge:rubric_make_default", args=[v1.code]), reverse("judge:rubric_policy", args=["idea"])):
        assert client_for(researcher).post(url).status_code == 403
        assert client_for(reviewer).post(url).status_code == 403
        anonymous = client_for(None).post(url)
        assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
        assert client_for(admin_user).get(url).status_code == 405
    assert client_for(admin_user).post(reverse("judge:rubric_make_default", args=[uuid.uuid4()])).status_code == 404
    assert client_for(admin_user).post(reverse("judge:rubric_policy", args=["nonsense"])).status_code == 404
    v1.refresh_from_db()
    assert not v1.is_default and not RubricPolicy.objects.exists()
    page = client_for(researcher).get(reverse("judge:rubric_detail", args=[v1.code])).content.decode()
    assert "Make this version the default" not in page and "Save the policy" not in page
