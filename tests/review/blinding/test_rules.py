"""Blinding rules: names inside identifiers, model chatter at the edges, unspoofable placeholders,
and every change listed for the admin while the stored artifact stays untouched."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from benchmark.markdown import markdown_html
from judge.prompts import prompt_render
from review.assignment.services import campaign_assign
from review.blinding import blinded, scrubbing
from review.blinding.chatter import strip_chatter
from review.campaigns.services import campaign_create
from review.models import Assignment
from tests.review.factories import PNG, make_paper, make_rubric

NAMES = scrubbing.system_names("anthropic:claude-3-7-sonnet", "gemini", "gpt-4o", "openai:o4-mini")


@pytest.mark.parametrize(
    "text, shown",
    [
        ("client = AnthropicClient()", "client = [system]Client()"),
        ("class OpenAIHypothesisGenerator(Base):", "class [system]HypothesisGenerator(Base):"),
        ("claude_client.send(x)", "[system].send(x)"),
        ("my_claude_client.send(x)", "my_[system].send(x)"),
        ("save(gpt4o_results)", "save([system])"),
        ("runner = LLMClaudeRunner()", "runner = LLM[system]Runner()"),
        ("from models import GeminiLLM, GPT4Results", "from models import [system]LLM, [system]Results"),
        ("os.environ['OPENAI_API_KEY']", "os.environ['[system]']"),
    ],
)
def test_it_scrubs_system_names_inside_identifiers(text, shown) -> None:
    assert scrubbing.scrub(text, NAMES) == shown


@pytest.mark.parametrize("text", ["Claudette wrote", "a Bombardier jet", "distilgpt2", "Geminids", "Corpus opus"])
def test_it_leaves_words_that_merely_contain_a_name(text) -> None:
    expected = text.replace("opus", "[system]")  # "opus" alone is a family name; inside "Corpus" it stays
    assert scrubbing.scrub(text, NAMES) == expected


@pytest.mark.parametrize(
    "text, kinds",
    [
        ("Here is the machine learning project paper:\n\n## 1. Title\n\nBody.\n", ["preamble"]),
        ("Here is the research paper:\n\n---\n\n**1. Title and Abstract**\n\nBody.\n", ["preamble", "preamble"]),
        (
            "Okay, I will now proceed to write the machine learning project paper based on the provided information."
            "\n\n---\n\n# Title\n\nBody.\n\n*(Note: Added references as mentioned in the proposal.)*\n\n---\n",
            ["preamble", "preamble", "signoff", "signoff"],
        ),
        ("Sure! Here's the proposal.\n\n# Title\n\nBody.\n\nI hope this helps!\n", ["preamble", "signoff"]),
        ("# Title\n\nBody.\n\nLet me know if you would like me to expand any section.\n", ["signoff"]),
        ("# Title\n\nBody.\n\n**Word Count**: ~1,950 (excluding references)\n", ["signoff"]),
        ("```markdown\n# Title\n\nBody.\n```\n", ["fence", "fence"]),
    ],
)
def test_it_cuts_model_preambles_and_signoffs(text, kinds) -> None:
    stripped = strip_chatter(text)
    assert [cut.kind for cut in stripped.cuts] == kinds
    shown = stripped.text
    assert "Body." in shown and not re.search(r"(?i)here is|here's|okay|hope this|let me know|note:|word count", shown)
    assert not shown.lstrip().startswith("---") and not shown.rstrip().endswith("---")


@pytest.mark.parametrize(
    "text",
    [
        "# Here is the paper: a study of preambles\n\nBody.\n",  # a heading is the paper's own
        "Certainly, deep networks overfit small data sets.\n\nBody.\n",  # a sentence of the paper
        "Intro.\n\nHere is the paper's main result: x = 1.\n\nMore.\n",  # chatter-like words mid-text
        "Body.\n\n" + "If you need more detail, see the appendix, which " + "explains it all. " * 80 + "\n",  # long
    ],
)
def test_it_leaves_paper_text_alone(text) -> None:
    stripped = strip_chatter(text)
    assert stripped.cuts == [] and stripped.text == text


def test_it_cannot_be_made_to_duplicate_or_delete_formulas_by_spelled_placeholders() -> None:
    text = "Real $a+b$. Spoofs: MATHPLACEHOLDER0X, REFEREEMATH0Q, REFEREEMATH7Q, MATH0000000000000000N0X.\n"
    for rendered in (blinded.render_markdown(text, image_url=lambda s: None), str(markdown_html(text))):
        assert rendered.count("a+b") == 1
        for spoof in ("MATHPLACEHOLDER0X", "REFEREEMATH0Q", "REFEREEMATH7Q", "MATH0000000000000000N0X"):
            assert spoof in rendered


@pytest.mark.django_db
def test_it_fills_in_figures_only_where_the_render_put_them(client_for, reviewer, settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    paper = make_paper(
        content="Text REVIEWFIGURE0X and `REVIEWFIGURE0X`.\n\n![Loss](fig_loss.png)\n", figures={"fig_loss.png": PNG}
    )
    campaign = campaign_create(
        name="f", rubric=make_rubric(), artifacts=[paper], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    code = Assignment.objects.get().code
    html = client_for(reviewer).get(reverse("review:item", args=[code])).content.decode()
    assert len(re.findall(rf'src="/review/a/{code}/f/[0-9a-f]{{20}}"', html)) == 1
    assert html.count("REVIEWFIGURE0X") == 2  # the author's spellings stay as typed


PAPER = """Here is the machine learning project paper:

---

# Agents that debug

We wrap the API in `AnthropicClient` and compare with a baseline.

I hope this helps! Let me know if you need changes.
"""


@pytest.mark.django_db
def test_it_cuts_for_the_reviewer_keeps_the_original_and_lists_every_change(
    client_for, reviewer, admin_user, settings, tmp_path
) -> None:
    settings.MEDIA_ROOT = tmp_path
    paper = make_paper(
        backbone="claude",
        content=PAPER,
        figures={},
        extra_files={
            "code/run.py": "from llm import AnthropicClient\nclient = AnthropicClient()\nprint({'cost_usd': 1.5})\n",
            "results/paper.md": PAPER,
        },
    )
    campaign = campaign_create(
        name="cuts", rubric=make_rubric(), artifacts=[paper], reviewers=[reviewer], reviewers_per_item=1,
        show_supplementary=True,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    code = Assignment.objects.get().code
    c = client_for(reviewer)
    page = c.get(reverse("review:item", args=[code])).content.decode()
    assert "Agents that debug" in page and "[system]Client" in page
    assert "Here is the" not in page and "hope this helps" not in page and "Anthropic" not in page
    files = [c.get(link).content.decode() for link in re.findall(r'href="(/review/a/[^"]+/s/[^"]+)"', page)]
    assert len(files) == 2 and all("Anthropic" not in f and "Here is the" not in f for f in files)
    assert any("client = [system]Client()" in f and '"[hidden]"' in f for f in files)
    # The stored paper, what the judge reads, keeps every byte.
    paper.refresh_from_db()
    assert paper.content == PAPER
    assert (
        "Here is the machine learning project paper:"
        in prompt_render(artifact=paper, rubric=make_rubric(), with_supplementary=False).user
    )
    # The admin sees each change, with the original text and its lines.
    admin_page = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    section = admin_page[admin_page.index('id="blinding-changes"') :]
    for expected in (
        "Here is the machine learning project paper:",
        "I hope this helps! Let me know if you need changes.",
        "<code>AnthropicClient</code>",
        "code/run.py",
        "cost_usd",
    ):
        assert expected in section, expected
    item = campaign.items.get()
    paper_changes = {(c["kind"], c["text"]): c for c in item.blinding_changes[0]["changes"]}
    assert paper_changes[("preamble", "Here is the machine learning project paper:")]["lines"] == [1]
    assert paper_changes[("scrub", "AnthropicClient")]["lines"] == [7]
    run_py = next(f for f in item.blinding_changes if f["file"].endswith("code/run.py"))
    assert {(c["kind"], c["text"], c["count"]) for c in run_py["changes"]} >= {("scrub", "AnthropicClient", 2)}


@pytest.mark.django_db
def test_it_checks_blinding_again_on_post_only(
    client_for, admin_user, reviewer, researcher, settings, tmp_path
) -> None:
    settings.MEDIA_ROOT = tmp_path
    campaign = campaign_create(name="again", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer])
    url = reverse("review:campaign_reblind", args=[campaign.code])
    campaign.items.update(blinding_changes=[], rendered_key="")
    page = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert "1 item(s) not checked by the current rules" in page
    assert client_for(admin_user).get(url).status_code == 405
    assert client_for(researcher).post(url).status_code == 403
    assert client_for(reviewer).post(url).status_code == 403
    assert client_for(None).post(url).status_code == 302
    assert (
        client_for(admin_user).post("/review/campaigns/00000000-0000-0000-0000-000000000000/reblind").status_code == 404
    )
    assert client_for(admin_user).post(url).status_code == 302
    assert campaign.items.get().blinding_changes != []
