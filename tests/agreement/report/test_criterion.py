"""The agreement page's summary and its per-criterion fragments: every verdict in the summary, each
criterion's evidence and charts under the page's settings, and who may fetch them."""

from __future__ import annotations

import json
import re

import pytest

from review.models import Assignment
from tests.agreement.report.test_campaign import CRITERIA, make_campaign

pytestmark = pytest.mark.django_db

FRAGMENT = {"HTTP_X_FRAGMENT": "1"}


def fragment(client, campaign, index: int, query: str = "", **headers):
    return client.get(f"/agreement/{campaign.code}/criteria/{index}/{query}", **(headers or FRAGMENT))


def test_it_shows_every_verdict_in_the_summary(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    page = client.get(f"/agreement/{campaign.code}/?bootstrap=0").content.decode()
    data = json.loads(client.get(f"/agreement/{campaign.code}/report.json?bootstrap=0").content)
    cells = data["verdict"]["cells"]
    assert len(cells) == 15  # 5 criteria x (2 judges + their mean)
    table = page[page.index('<table class="verdict">') : page.index("</table>")]
    shown = re.findall(r'<td class="v-(\w+)"><a href="#(evidence-\d+-\d+)"', table)
    assert sorted(shown) == sorted((c["code"], c["anchor"]) for c in cells)
    for cell in cells:
        assert f"<strong>{cell['verdict']}</strong>" in table


def test_it_sends_one_criterion_with_its_charts_under_the_page_settings(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    response = fragment(client, campaign, 2, "?pairing=strict&bootstrap=0")
    assert response.status_code == 200 and "X-Fragment" in response["Vary"]
    body = response.content.decode()
    assert "<html" not in body  # a fragment, not a page
    assert body.count('<div class="chart" id="agreement-chart-2-') == 4
    assert 'id="crit-2-humans"' in body and 'id="evidence-2-2"' in body and "Judge view: mean of the judges" in body
    charts = json.loads(re.search(r'id="agreement-charts-2"[^>]*>(.*?)</script>', body, re.S).group(1))
    assert [c["id"] for c in charts] == [f"agreement-chart-2-{k}" for k in range(4)]
    assert all(c["figure"]["data"] for c in charts)
    # The same numbers as the download under the same settings.
    data = json.loads(client.get(f"/agreement/{campaign.code}/report.json?pairing=strict&bootstrap=0").content)
    assert data["pairing"]["policy"] == "strict"
    rho = data["criteria"][CRITERIA[2]]["views"]["judges_mean"]["spearman"]["estimate"]
    assert f"{rho:.3f}" in body


def test_it_is_a_page_of_its_own_without_javascript(client_for, admin_user) -> None:
    campaign = make_campaign()
    response = fragment(client_for(admin_user), campaign, 0, "?bootstrap=0", HTTP_ACCEPT="text/html")
    body = response.content.decode()
    assert response.status_code == 200 and "<html" in body and f"<h1>Agreement: {campaign} · {CRITERIA[0]}</h1>" in body
    assert f'href="/agreement/{campaign.code}/?bootstrap=0"' in body and "js/agreement.js" in body


def test_it_refuses_bad_settings_in_plain_text(client_for, admin_user) -> None:
    campaign = make_campaign()
    response = fragment(client_for(admin_user), campaign, 0, "?pairing=nonsense")
    assert response.status_code == 400 and "pairing" in response.content.decode()


# --- permissions ----------------------------------------------------------------------------------

SECRETS = ("mann_whitney", "claude-judge", "Spearman", "judge:", "agreement-chart")


def test_it_gives_a_reviewer_of_the_campaign_nothing(client_for) -> None:
    campaign = make_campaign()
    member = Assignment.objects.filter(campaign=campaign).first().reviewer
    response = fragment(client_for(member), campaign, 0)
    assert response.status_code in (403, 404)
    assert not any(s in response.content.decode() for s in SECRETS)


def test_it_refuses_researchers(client_for, researcher, other_researcher) -> None:
    campaign = make_campaign()
    for user in (researcher, other_researcher):
        response = fragment(client_for(user), campaign, 0)
        assert response.status_code == 403
        assert not any(s in response.content.decode() for s in SECRETS)


def test_it_sends_anonymous_visitors_to_the_login(client_for) -> None:
    campaign = make_campaign()
    response = fragment(client_for(None), campaign, 0)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/agreement/")


def test_it_answers_404_for_a_bad_code_or_criterion(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    assert client.get("/agreement/00000000-0000-0000-0000-000000000000/criteria/0/", **FRAGMENT).status_code == 404
    assert client.get("/agreement/not-a-uuid/criteria/0/", **FRAGMENT).status_code == 404
    assert fragment(client, campaign, len(CRITERIA)).status_code == 404
    assert client.get(f"/agreement/{campaign.code}/criteria/-1/", **FRAGMENT).status_code == 404
    assert client.get(f"/agreement/{campaign.code}/criteria/x/", **FRAGMENT).status_code == 404
    assert fragment(client, campaign, len(CRITERIA) - 1).status_code == 200


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_it_refuses_other_methods(client_for, admin_user, method) -> None:
    campaign = make_campaign()
    response = getattr(client_for(admin_user), method)(f"/agreement/{campaign.code}/criteria/0/", **FRAGMENT)
    assert response.status_code == 405
