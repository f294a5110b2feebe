"""The downloadable agreement report (one HTML file rendered from templates/agreement/report/):
every section the page has, user-controlled names escaped, and nothing fetched from outside."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from review.models import Campaign, DisagreementTag
from tests.agreement.report.test_campaign import CRITERIA, JUDGES, download, make_campaign

pytestmark = pytest.mark.django_db

EVIL_CAMPAIGN = "<script>alert('campaign')</script> & co"
EVIL_CRITERION = '<img src=x onerror="alert(1)">Clarity'


class Elements(HTMLParser):
    """Every element with its attributes, the text of the JSON script elements and of <style>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.json: dict[str, str] = {}
        self.style = ""
        self._in: tuple[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag in ("script", "style"):
            self._in = (tag, a.get("id") if a.get("type") == "application/json" else None)

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in and self._in[0] == "style":
            self.style += data
        elif self._in and self._in[1]:
            self.json[self._in[1]] = self.json.get(self._in[1], "") + data

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.elements if a.get("id")}


def _report(client, campaign: Campaign) -> tuple[str, Elements]:
    response = download(client, campaign, "html", "?bootstrap=50")
    assert response.status_code == 200 and response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    parsed = Elements()
    parsed.feed(html)
    return html, parsed


def test_it_has_every_section_of_the_page_and_a_chart_slot_for_every_chart(client_for, admin_user) -> None:
    campaign = make_campaign()
    item = campaign.items.first()
    DisagreementTag.objects.create(
        campaign=campaign,
        item=item,
        criterion=campaign.rubric.dimensions[0]["key"],
        cause=DisagreementTag.Cause.JUDGE_MISREAD,
    )
    html, parsed = _report(client_for(admin_user), campaign)
    ids = parsed.ids()
    assert {"verdict", "toc", "coverage", "provenance", "faults", "tags"} <= ids
    views = len(JUDGES) + 1  # each judge alone and the judges' mean
    for c in range(len(CRITERIA)):
        assert {f"crit-{c}", f"crit-{c}-humans"} <= ids
        assert {f"evidence-{c}-{v}" for v in range(views)} <= ids
        assert {f"agreement-chart-{c}-{k}" for k in range(4)} <= ids
    # The verdict has a row per criterion and a cell per view, each linking to its evidence.
    cells = [a for tag, a in parsed.elements if tag == "td" and (a.get("class") or "").startswith("v-")]
    assert len(cells) == len(CRITERIA) * views
    links = {a["href"] for tag, a in parsed.elements if tag == "a" and (a.get("href") or "").startswith("#")}
    assert links >= {f"#evidence-{c}-{v}" for c in range(len(CRITERIA)) for v in range(views)}
    # The charts' data rides along, and each names a slot of the body.
    charts = json.loads(parsed.json["agreement-charts"])
    assert len(charts) == len(CRITERIA) * 4 and {c["id"] for c in charts} <= ids
    assert "Disagreement tags (1)" in html and "failed_judgment" in html  # the tags and the faults
    assert "@media print" in parsed.style and "table.verdict" in parsed.style  # the report's stylesheet, inlined


def test_it_escapes_the_campaign_and_criterion_names(client_for, admin_user) -> None:
    campaign = make_campaign(name=EVIL_CAMPAIGN)
    rubric = campaign.rubric
    dims = copy.deepcopy(rubric.dimensions)  # the factory's dimensions are shared by every test
    dims[0]["name"] = EVIL_CRITERION
    rubric.dimensions = dims
    rubric.save(update_fields=["dimensions"])
    html, parsed = _report(client_for(admin_user), campaign)
    # No element came from a name: the only images and inline scripts are the report's own.
    assert not [a for tag, a in parsed.elements if tag == "img"]
    assert not [a for _, a in parsed.elements if any(k.startswith("on") for k in a)]
    assert "<script>alert(" not in html and "<img src=x" not in html
    # The names are shown, escaped, in the text: the verdict row, the section title, the provenance.
    assert html.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Clarity") >= 3
    assert "&lt;script&gt;alert(&#x27;campaign&#x27;)&lt;/script&gt; &amp; co" in html
    # In the charts' JSON the names cannot close the script element either: < and > are \u003C, \u003E.
    [charts_text] = re.findall(r'<script id="agreement-charts" type="application/json">(.*?)</script>', html, re.S)
    assert "<" not in charts_text and any(EVIL_CRITERION in str(c["figure"]) for c in json.loads(charts_text))


def test_it_needs_nothing_from_outside_the_file(client_for, admin_user) -> None:
    campaign = make_campaign()
    html, parsed = _report(client_for(admin_user), campaign)
    # Nothing to fetch: no stylesheet or script by URL, no image, frame or form posting elsewhere;
    # links only within the file.
    for tag, attrs in parsed.elements:
        assert tag not in ("link", "img", "iframe", "object", "embed", "form"), tag
        assert "src" not in attrs, (tag, attrs)
        href = attrs.get("href")
        assert href is None or href.startswith("#"), (tag, href)
    assert not re.search(r"@import|url\(", parsed.style)
    # plotly.js and the page script are inlined whole.
    scripts = [a for tag, a in parsed.elements if tag == "script" and a.get("type") != "application/json"]
    assert len(scripts) == 2 and "plotly.js v" in html and 'getElementById("agreement-charts")' in html


@pytest.mark.browser
def test_it_draws_every_chart_offline(client_for, admin_user, request, tmp_path: Path) -> None:
    campaign = make_campaign()
    html, _ = _report(client_for(admin_user), campaign)
    report = tmp_path / "agreement.html"
    report.write_text(html, encoding="utf-8")
    # The browser starts after the database work: ORM calls under Playwright take another connection.
    page = request.getfixturevalue("browser").new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length === {len(CRITERIA) * 4}")
    assert errors == []
    assert [u for u in requests if not u.startswith("file:")] == []
    assert page.locator("#verdict table.verdict tr").count() == len(CRITERIA) + 1
