"""Task list and task detail pages: permissions, safe markdown, versions, baselines, data status."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from benchmark.models import Task

pytestmark = pytest.mark.django_db


def make_task(**fields) -> Task:
    values = {
        "slug": "tiny",
        "version_hash": uuid.uuid4().hex * 2,
        "kind": Task.Kind.MLGYM,
        "title": "Tiny task",
        "description": "# Tiny\n\nPredict **things**.",
        "metric": "accuracy",
        "direction": Task.Direction.MAX,
        "source": "builtin",
        "config": {"runnable": True, "artifacts": ["submission.csv"]},
    }
    values.update(fields)
    return Task.objects.create(**values)


@pytest.fixture
def personas(admin_user, researcher, other_researcher, reviewer):
    return {
        "admin": admin_user,
        "researcher": researcher,
        "other_researcher": other_researcher,
        "reviewer": reviewer,
        "anonymous": None,
    }


EXPECTED = {"admin": 200, "researcher": 200, "other_researcher": 200, "reviewer": 403, "anonymous": 302}


@pytest.mark.parametrize("who", sorted(EXPECTED))
def test_it_applies_the_checklist_to_the_detail_page(who, personas, client_for):
    task = make_task()
    response = client_for(personas[who]).get(reverse("benchmark:task_detail", args=[task.code]))
    assert response.status_code == EXPECTED[who]
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("accounts:login"))
    if response.status_code == 200:
        assert b"Tiny task" in response.content


@pytest.mark.parametrize("who", sorted(EXPECTED))
def test_it_applies_the_checklist_to_the_list_page(who, personas, client_for):
    make_task()
    response = client_for(personas[who]).get(reverse("benchmark:task_list"))
    assert response.status_code == EXPECTED[who]
    if response.status_code == 200:
        assert b"Tiny task" in response.content


def test_it_answers_404_for_an_unknown_code(researcher, client_for):
    response = client_for(researcher).get(reverse("benchmark:task_detail", args=[uuid.uuid4()]))
    assert response.status_code == 404


def test_it_does_not_route_integer_ids(researcher, client_for):
    task = make_task()
    assert client_for(researcher).get(f"/tasks/{task.pk}/").status_code == 404


@pytest.mark.parametrize("name", ["task_list", "task_detail"])
def test_it_refuses_post(name, researcher, client_for):
    task = make_task()
    args = [task.code] if name == "task_detail" else []
    assert client_for(researcher).post(reverse(f"benchmark:{name}", args=args)).status_code == 405


def test_it_renders_the_description_as_safe_markdown(researcher, client_for):
    task = make_task(
        description=(
            "## Goal\n\nBe **bold**.\n\n<script>alert(1)</script>\n\n"
            "[click](javascript:alert(2)) [docs](https://example.org)\n\n<img src=x onerror=alert(3)>"
        )
    )
    html = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert "<h2>Goal</h2>" in html and "<strong>bold</strong>" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    assert 'href="javascript:' not in html
    assert "<img" not in html
    assert 'href="https://example.org"' in html


def test_it_shows_versions_baselines_and_data_status(researcher, client_for):
    old = make_task(
        is_current=False,
        baseline_scores={"dev": {"primary": 0.5, "metrics": {"accuracy": 0.5}, "error": ""}},
    )
    current = make_task(
        baseline_scores={
            "version": "x",
            "computed_at": "2026-11-30T01:00:00",
            "dev": {"primary": 0.9123, "metrics": {"accuracy": 0.9123}, "error": ""},
            "test": {"primary": 0.8765, "metrics": {"accuracy": 0.8765}, "error": ""},
            "error": "",
        },
    )
    html = client_for(researcher).get(reverse("benchmark:task_detail", args=[current.code])).content.decode()
    assert "0.9123" in html and "0.8765" in html
    assert old.version_hash[:12] in html and current.version_hash[:12] in html
    assert reverse("benchmark:task_detail", args=[old.code]) in html
    assert "current" in html
    old_html = client_for(researcher).get(reverse("benchmark:task_detail", args=[old.code])).content.decode()
    assert "superseded" in old_html


def test_it_shows_a_failed_baseline_and_missing_data(researcher, client_for):
    task = make_task(
        slug="blotto",
        source="mlgym",
        data_status=Task.DataStatus.MISSING,
        data_detail="starter code: /data/blotto/evaluate.py",
        baseline_scores={"error": "sandbox unavailable: no Docker engine"},
        config={
            "runnable": False,
            "not_runnable_reason": "MLGym's code is not here",
            "published_baseline_scores": {"Score": -0.248},
        },
    )
    html = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert "data missing" in html and "/data/blotto/evaluate.py" in html
    assert "Baseline failed: sandbox unavailable" in html
    assert "published by mlgym" in html and "-0.24800" in html
    assert 'data-agrees="not-compared"' in html and "not computed: sandbox unavailable" in html
    listing = client_for(researcher).get(reverse("benchmark:task_list")).content.decode()
    assert "failed" in listing and "data missing" in listing


def test_it_lists_only_current_versions(researcher, client_for):
    make_task(is_current=False, title="Old title")
    make_task(title="New title")
    html = client_for(researcher).get(reverse("benchmark:task_list")).content.decode()
    assert "New title" in html and "Old title" not in html


def test_it_shows_the_published_baseline_beside_the_computed_one_and_says_where_they_disagree(researcher, client_for):
    repeats = [{"Score": 1.02}, {"Score": 1.03}, {"Score": 1.025}]
    task = make_task(
        slug="battleOfSexes",
        source="mlgym",
        metric="Score",
        baseline_scores={"test": {"metrics": {"Score": 1.03}, "primary": 1.03, "error": ""}, "repeats": repeats},
        config={"runnable": True, "published_baseline_scores": {"Score": 1.0226699}},
    )
    html = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert 'data-metric="Score" data-agrees="yes"' in html and "1.02267" in html and "1.02500" in html
    assert "published-disagrees" not in html

    task.baseline_scores = {**task.baseline_scores, "repeats": [{"Score": 1.5}, {"Score": 1.51}, {"Score": 1.49}]}
    task.save()
    html = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert 'data-agrees="no"' in html and "disagrees with the published one on Score" in html


def test_a_few_repeats_widen_the_interval_by_students_t_not_a_fixed_three_sigma():
    """Three repeats estimate the sd poorly (CI's prisonersDilemma drew sd 0.00086 for a true spread
    several times larger): the published run must be judged by the prediction interval for one more
    run, whose width shrinks as repeats grow."""
    from benchmark.tasks.baselines import published_comparison

    config = {"runnable": True, "published_baseline_scores": {"Score": 2.3716}}
    three = [{"Score": v} for v in (2.3770, 2.3778, 2.3786)]
    task = make_task(slug="prisonersDilemma", source="mlgym", metric="Score", config=config,
                     baseline_scores={"test": {"metrics": {"Score": 2.3778}, "error": ""}, "repeats": three})  # fmt: skip
    (row,) = published_comparison(task)["rows"]
    assert row["agrees"] is True and "2 degrees of freedom" in row["how"], row  # 3 sigma alone would say no
    task.baseline_scores["repeats"] = [{"Score": v} for v in (2.3770, 2.3774, 2.3778, 2.3782, 2.3786)]
    (row,) = published_comparison(task)["rows"]
    assert row["agrees"] is False and "4 degrees of freedom" in row["how"], row


def test_it_compares_deterministic_and_machine_bound_metrics_as_such(researcher, client_for):
    task = make_task(
        slug="sat",
        source="mlgym",
        metric="Time",
        baseline_scores={"test": {"metrics": {"Time": 3.2, "Correct": 24000.0, "Incorrect": 1.0}, "error": ""}},
        config={
            "runnable": True,
            "machine_bound_metrics": ["Time"],
            "published_baseline_scores": {"Time": 16.158, "Correct": 24000, "Incorrect": 0},
        },
    )
    html = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert 'data-metric="Time" data-agrees="not-compared"' in html
    assert 'data-metric="Correct" data-agrees="yes"' in html and 'data-metric="Incorrect" data-agrees="no"' in html
    assert "disagrees with the published one on Incorrect" in html
