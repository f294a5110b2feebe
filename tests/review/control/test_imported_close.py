"""A campaign that import_human_reviews creates closed records its close (the import, its time), so
the control room, the reviewer's queue and item page say "closed on <date> (imported)"."""

from __future__ import annotations

import importlib
import io
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.management import call_command
from django.utils import timezone

from review.control.services import campaign_close, campaign_reopen
from review.models import Assignment, Campaign, CampaignStatusChange
from tests.review.factories import make_paper, make_rubric

pytestmark = pytest.mark.django_db


def _import(tmp_path) -> Campaign:
    make_paper(slug="ws_a", backbone="claude", figures={})
    make_rubric()
    path = tmp_path / "h.csv"
    path.write_text(
        "reviewer_id,model_name,workshop_name,Novelty,Clarity,Soundness,Significance,Overall\n1,claude,ws_a,7,8,6,6,7\n"
    )
    call_command("import_human_reviews", str(path), "--campaign", "study", stdout=io.StringIO())
    return Campaign.objects.get(name="study")


def test_it_records_the_imports_close_once(tmp_path) -> None:
    before = timezone.now()
    campaign = _import(tmp_path)
    change = CampaignStatusChange.objects.get(campaign=campaign)
    assert (change.from_status, change.to_status, change.via, change.by) == ("", "closed", "import", None)
    assert before <= change.at <= timezone.now()
    call_command("import_human_reviews", str(tmp_path / "h.csv"), "--campaign", "study", stdout=io.StringIO())
    assert CampaignStatusChange.objects.filter(campaign=campaign).count() == 1  # the campaign existed: no new close


def test_it_says_closed_on_the_import_date_on_every_page(tmp_path, client_for, admin_user) -> None:
    campaign = _import(tmp_path)
    day = timezone.localtime(campaign.status_changes.get().at).strftime("%Y-%m-%d %H:%M")
    control = client_for(admin_user).get(f"/review/campaigns/{campaign.code}/").content.decode()
    assert f"closed on {day} (imported)</span>" in control and "someone since removed" not in control
    assert "by the import" in control
    assignment = Assignment.objects.select_related("reviewer").get(campaign=campaign)
    reviewer = client_for(assignment.reviewer)
    assert f"closed on {day} (imported) (read-only)" in reviewer.get("/review/").content.decode()
    item = reviewer.get(f"/review/a/{assignment.code}/").content.decode()
    assert f"This campaign was closed on {day} (imported): read-only" in item


def test_it_says_who_closed_it_once_an_admin_reopened_and_closed_it(tmp_path, client_for, admin_user) -> None:
    campaign = _import(tmp_path)
    campaign_reopen(campaign=campaign, by=admin_user)
    campaign_close(campaign=campaign, by=admin_user)
    control = client_for(admin_user).get(f"/review/campaigns/{campaign.code}/").content.decode()
    badge = control.split('id="campaign-closed">', 1)[1].split("</span>", 1)[0]
    assert "(imported)" not in badge and f"by {admin_user.username}" in badge


def test_the_migration_records_the_close_of_campaigns_imported_before_it(tmp_path, admin_user) -> None:
    imported = _import(tmp_path)
    imported.status_changes.all().delete()  # as an import before closes were recorded left it
    Campaign.objects.filter(pk=imported.pk).update(created_at=timezone.now() - timedelta(days=30))
    by_hand = Campaign.objects.create(name="by hand", rubric=imported.rubric, status="closed")  # no imported review
    migration = importlib.import_module("review.migrations.0010_status_change_via_and_imported_closes")
    migration.record_imported_closes(apps, None)
    migration.record_imported_closes(apps, None)  # a second run adds nothing
    imported.refresh_from_db()
    change = CampaignStatusChange.objects.get()
    assert change.campaign_id == imported.pk and change.via == "import" and change.at == imported.created_at
    assert not by_hand.status_changes.exists()
