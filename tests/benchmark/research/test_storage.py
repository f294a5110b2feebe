"""Research files go through the "artifacts" storage only: a second storage root proves that no
reader finds them under MEDIA_ROOT behind the storage's back; the ways out of an artifact's folder
(`..`, absolute paths, NUL, a planted symlink) are refused on every path."""

from __future__ import annotations

import os
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from benchmark.models import Artifact
from benchmark.research import files, literature
from benchmark.research.fabrication import collect_sources
from benchmark.research.forms import LaunchForm
from benchmark.research.pipeline import _figures_of
from judge.prompts import supplementary
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment
from tests.review.factories import PNG, make_paper, make_rubric


@pytest.fixture
def elsewhere(settings, tmp_path):
    """MEDIA_ROOT and the artifact storage in two different folders."""
    settings.MEDIA_ROOT = tmp_path / "media"
    root = tmp_path / "shared-artifacts"
    settings.STORAGES = {
        **settings.STORAGES,
        "artifacts": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(root)}},
    }
    return root


@pytest.fixture
def paper(researcher, elsewhere):
    paper = make_paper(
        backbone="claude",
        figures={"results/fig_loss.png": PNG},
        extra_files={"results/log.txt": "epoch 1 loss 0.5\n", "claude_output.json": '[{"content": "ran train.py"}]'},
    )
    paper.research_run.owner = researcher
    paper.research_run.save()
    experiment = Artifact.objects.create(research_run=paper.research_run, stage=Artifact.Stage.EXPERIMENT, content="r")
    experiment.files = [
        files.file_store(artifact=experiment, relative=rel, data=data)
        for rel, data in {
            "figures/acc.png": PNG,
            "results/log.txt": b"accuracy 0.91\n",
            "claude_output.json": b'[{"content": "python train.py"}]',
            "code/train.py": b"print('train')\n",
        }.items()
    ]
    experiment.save()
    return paper


def test_it_reads_every_artifact_file_from_the_configured_storage_never_from_media_root(
    paper, elsewhere, settings, client_for, researcher, reviewer
) -> None:
    experiment = paper.research_run.artifacts.get(stage=Artifact.Stage.EXPERIMENT)
    assert (elsewhere / "artifacts" / str(paper.code) / "results/fig_loss.png").read_bytes() == PNG
    assert not (settings.MEDIA_ROOT / "artifacts").exists()

    # The research file view (the web process).
    r = client_for(researcher).get(reverse("benchmark:research_file", args=[paper.code, "results/fig_loss.png"]))
    assert r.status_code == 200 and b"".join(r.streaming_content) == PNG and r["Content-Type"] == "image/png"
    # Blinded review figures and supplementary text.
    campaign = campaign_create(
        name="s", rubric=make_rubric(), artifacts=[paper], reviewers=[reviewer], show_supplementary=True
    )
    campaign_assign(campaign=campaign)
    mine = Assignment.objects.get(reviewer=reviewer)
    page = client_for(reviewer).get(reverse("review:item", args=[mine.code])).content.decode()
    src = re.search(rf'src="(/review/a/{mine.code}/f/[0-9a-f]{{20}})"', page).group(1)
    assert client_for(reviewer).get(src).content == PNG
    # The judge's supplementary inputs, the paper stage's figures, the fabrication check's evidence.
    code, trace = supplementary(paper)
    assert "print('train')" in code and "python train.py" in trace
    ctx = type("Ctx", (), {"artifacts": {Artifact.Stage.EXPERIMENT: experiment}})()
    assert _figures_of(ctx) == [("figures/acc.png", PNG)]
    sources, excluded = collect_sources(experiment)
    assert any("accuracy 0.91" in s.text for s in sources) and excluded == []
    assert files.stored_files(experiment.code) == sorted(experiment.files)
    assert not (settings.MEDIA_ROOT / "artifacts").exists()


def test_it_keeps_an_uploaded_corpus_in_the_artifact_storage(elsewhere, settings, researcher) -> None:
    upload = SimpleUploadedFile("refs.jsonl", b'{"title": "Graph nets", "abstract": "a", "url": "u", "year": 2020}\n')
    form = LaunchForm(user=researcher)
    form.cleaned_data = {"corpus": upload, "literature_provider": "corpus"}
    reference = form._store_corpus()
    assert reference.startswith("storage:corpora/")
    assert list((elsewhere / "corpora").iterdir()) and not (settings.MEDIA_ROOT / "corpora").exists()
    refs, problems = literature.load_corpus(reference)
    assert [r.title for r in refs] == ["Graph nets"] and problems == []
    with pytest.raises(literature.LiteratureError, match="not found"):
        literature.load_corpus("storage:corpora/../../etc/passwd")


@pytest.mark.parametrize("sneaky", ["../x.png", "results/../../x.png", "/etc/passwd", "a\x00b.png", "a\\..\\b", ""])
def test_it_refuses_a_path_that_leaves_the_artifact_folder(paper, sneaky) -> None:
    with pytest.raises(ValueError, match="unsafe file path"):
        files.file_store(artifact=paper, relative=sneaky, data=b"x")
    assert files.read_bytes(paper.code, sneaky) is None
    assert files.open_stored(paper.code, sneaky) is None


def test_it_serves_no_file_through_a_symlink_planted_in_the_storage(
    paper, elsewhere, tmp_path, client_for, researcher
) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST SECRET")
    folder = elsewhere / "artifacts" / str(paper.code)
    os.symlink(secret, folder / "results" / "leak.txt")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "inner.txt").write_text("HOST SECRET")
    os.symlink(outside, folder / "linked")
    paper.files = [*paper.files, "results/leak.txt", "linked/inner.txt"]
    paper.save()
    for rel in ("results/leak.txt", "linked/inner.txt"):
        assert files.read_bytes(paper.code, rel) is None
        assert files.stored_size(paper.code, rel) is None
        r = client_for(researcher).get(reverse("benchmark:research_file", args=[paper.code, rel]))
        assert r.status_code == 404
    assert files.read_bytes(paper.code, "results/log.txt") == b"epoch 1 loss 0.5\n"  # a real file still reads
    # Storing from a symlink (an agent's output folder) would copy the link's target: refused.
    with pytest.raises(ValueError, match="symbolic link"):
        files.file_store(artifact=paper, relative="results/copied.txt", source=folder / "results" / "leak.txt")


def test_it_replaces_a_stored_file_of_the_same_name(paper) -> None:
    assert files.file_store(artifact=paper, relative="results/log.txt", data=b"second") == "results/log.txt"
    assert files.read_bytes(paper.code, "results/log.txt") == b"second"
