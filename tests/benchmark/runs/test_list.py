"""The runs list: paging without a silent cap, filters and sort in the URL, full-text search."""

from __future__ import annotations

import re

import pytest

from benchmark.models import Run, RunGroup
from benchmark.runs import progress
from benchmark.runs.listing import PAGE_SIZE
from benchmark.runs.services import run_share
from tests.benchmark.runs_support import agent, make_run, stub_task

pytestmark = pytest.mark.django_db


def codes(page: str) -> list[str]:
    return re.findall(r'name="run" value="([0-9a-f-]{36})"', page)


def test_it_pages_through_every_run_without_a_cap(researcher, client_for):
    task = stub_task("paged")
    base = agent()
    Run.objects.bulk_create(
        [Run(task=task, agent=base, owner=researcher, method="m") for _ in range(2 * PAGE_SIZE + 7)]
    )
    client = client_for(researcher)
    first = client.get("/runs/").content.decode()
    assert f"Runs 1–{PAGE_SIZE} of {2 * PAGE_SIZE + 7}" in first and "Page 1 of 3" in first
    seen = set()
    for number in (1, 2, 3):
        seen.update(codes(client.get(f"/runs/?page={number}").content.decode()))
    assert len(seen) == 2 * PAGE_SIZE + 7  # every run reachable, none twice
    last = client.get("/runs/?page=999").content.decode()  # past the end: the last page, not an error
    assert "Page 3 of 3" in last and len(codes(last)) == 7


def test_it_filters_by_owner_task_agent_status_exit_source_and_group(
    researcher, other_researcher, admin_user, client_for
):
    alpha, beta = stub_task("alpha"), stub_task("beta")
    group = RunGroup.objects.create(name="batch", owner=researcher)
    mine = make_run(owner=researcher, task=alpha, status=Run.Status.FINISHED, exit_status="submitted", group=group)
    model = agent("model", model="openai:gpt-4o", name="openai:gpt-4o")
    theirs = make_run(owner=other_researcher, task=beta, agent_config=model, status=Run.Status.FAILED)
    imported = make_run(owner=None, task=alpha, source=Run.Source.MLGYM, status=Run.Status.FINISHED)
    client = client_for(admin_user)

    def listed(query: str) -> set[str]:
        return set(codes(client.get(f"/runs/?{query}").content.decode()))

    every = {str(mine.code), str(theirs.code), str(imported.code)}
    assert listed("") == every
    assert listed("task=alpha") == {str(mine.code), str(imported.code)}
    assert listed("agent=gpt-4o") == {str(theirs.code)}
    assert listed("status=failed") == {str(theirs.code)}
    assert listed("exit=submitted") == {str(mine.code)}
    assert listed("source=mlgym") == {str(imported.code)}
    assert listed(f"group={group.code}") == {str(mine.code)}
    assert set(codes(client_for(researcher).get("/runs/?mine=on").content.decode())) == {str(mine.code)}
    assert listed("task=alpha&status=finished&source=referee") == {str(mine.code)}
    # A bad parameter is named and ignored; the valid ones still apply.
    page = client.get("/runs/?status=exploded&task=alpha").content.decode()
    assert 'id="filter-errors"' in page and "status" in page
    assert set(codes(page)) == {str(mine.code), str(imported.code)}
    assert set(codes(client.get("/runs/?group=not-a-uuid").content.decode())) == every


def test_it_sorts_by_the_chosen_column_with_unscored_runs_last(researcher, client_for):
    task = stub_task("sorted")
    low = make_run(owner=researcher, task=task, best_attempt=0.1, cost=3.0)
    none = make_run(owner=researcher, task=task)
    high = make_run(owner=researcher, task=task, best_attempt=2.5699052132701423, cost=1.0)
    client = client_for(researcher)
    assert codes(client.get("/runs/?sort=best").content.decode()) == [str(high.code), str(low.code), str(none.code)]
    assert codes(client.get("/runs/?sort=best_low").content.decode()) == [str(low.code), str(high.code), str(none.code)]
    assert codes(client.get("/runs/?sort=cost").content.decode())[0] == str(low.code)
    assert codes(client.get("/runs/?sort=old").content.decode()) == [str(low.code), str(none.code), str(high.code)]
    page = client.get("/runs/").content.decode()
    assert '<span title="2.5699052132701423">2.5699</span>' in page  # rounded, exact on hover


def test_it_finds_runs_by_words_in_any_step_and_links_to_the_first_match(researcher, other_researcher, client_for):
    hit = make_run(owner=researcher)
    progress.step_append(run=hit, thought="plan", action="ls\n", observation="nothing here", publish=False)
    progress.step_append(
        run=hit, thought="tune it", action="python train.py --lr 3e-4\n", observation="loss 0.31", publish=False
    )
    miss = make_run(owner=researcher)
    progress.step_append(run=miss, thought="tune", action="cat README\n", observation="loss", publish=False)
    hidden = make_run(owner=other_researcher)  # matches, but not this researcher's to see
    progress.step_append(run=hidden, thought="tune", action="python train.py\n", observation="x", publish=False)
    client = client_for(researcher)
    page = client.get("/runs/?q=train.py+tune").content.decode()
    assert codes(page) == [str(hit.code)]
    assert f"/runs/{hit.code}/?q=train.py%20tune#step-2" in page and "step 2" in page
    assert codes(client.get("/runs/?q=TUNE").content.decode()) == [str(miss.code), str(hit.code)]  # any case
    # The user's text is never search syntax: quotes, NEAR, column filters and stray operators are words.
    for query in ['"unbalanced', "thought:tune", "NEAR(a b)", "a AND OR", "*", "-"]:
        assert client.get("/runs/", {"q": query}).status_code == 200
    assert codes(client.get("/runs/", {"q": "-"}).content.decode()) == []  # no words: nothing matches
    # A step edited later is found by its new text (the index follows updates and deletes).
    step = miss.steps.get()
    step.observation = "zebra"
    step.save()
    assert codes(client.get("/runs/?q=zebra").content.decode()) == [str(miss.code)]
    miss.steps.all().delete()
    assert codes(client.get("/runs/?q=zebra").content.decode()) == []
    run_share(run=hidden, user=researcher)
    assert str(hidden.code) in codes(client.get("/runs/?q=train.py").content.decode())


def test_it_reads_a_bounded_window_of_the_newest_matches_when_a_word_is_everywhere(researcher, client_for, monkeypatch):
    from benchmark.runs import search

    old, newer, newest = (make_run(owner=researcher) for _ in range(3))
    for run in (old, newer, newest):
        progress.step_append(run=run, thought="t", action="ls\n", observation="quiet", publish=False)
    for run in (old, newer, newest):  # recorded later: newer step ids than the steps above
        for _ in range(2):
            progress.step_append(run=run, thought="t", action="ls\n", observation="loss 0.3", publish=False)
    client = client_for(researcher)
    exact = client.get("/runs/?q=loss").content.decode()
    assert sorted(codes(exact)) == sorted(str(r.code) for r in (old, newer, newest))
    assert "of 3 with a step matching" in exact and "search-capped" not in exact

    monkeypatch.setattr(search, "MATCH_WINDOW", 3)  # 6 steps match: the 3 newest are read
    capped = client.get("/runs/?q=loss").content.decode()
    assert codes(capped) == [str(newest.code), str(newer.code)]  # the runs of the newest matches
    assert "of at least 2 with a step matching" in capped and 'id="search-capped"' in capped
    # The first-match link stays exact, also for a run only part of whose matches were read.
    assert f"/runs/{newer.code}/?q=loss#step-2" in capped and f"/runs/{newest.code}/?q=loss#step-2" in capped
    # The other filters apply before the window: a filtered search reads only the filtered runs' steps.
    Run.objects.filter(pk=old.pk).update(status=Run.Status.FAILED)
    filtered = client.get("/runs/?q=loss&status=failed").content.decode()
    assert codes(filtered) == [str(old.code)] and "search-capped" not in filtered


def test_it_says_an_imported_result_has_no_trajectory(researcher, client_for):
    imported = make_run(owner=None, source=Run.Source.MLGYM, status=Run.Status.FINISHED, best_attempt=1.0)
    client = client_for(researcher)
    listing = client.get("/runs/").content.decode()
    assert "no trajectory" in listing
    page = client.get(f"/runs/{imported.code}/").content.decode()
    assert "released this result without its trajectory" in page and "No steps yet." not in page


def test_it_lists_runs_for_researchers_and_admins_only(researcher, reviewer, client_for):
    assert client_for(researcher).get("/runs/?q=x&page=2").status_code == 200
    assert client_for(reviewer).get("/runs/").status_code == 403
    anonymous = client_for(None).get("/runs/?q=secret")
    assert anonymous.status_code == 302 and "/accounts/login" in anonymous["Location"]
    assert client_for(researcher).post("/runs/").status_code == 405
