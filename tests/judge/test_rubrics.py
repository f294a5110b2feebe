"""Version-1 rubrics, rubric versions, and the prompt a judge receives."""

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from judge.models import Rubric
from judge.prompts import prompt_render
from judge.rubrics import rubric_create_version, rubric_load_defaults, rubric_validate_dimensions
from tests.judge.factories import make_artifact, make_research_run, make_task, rubric

pytestmark = pytest.mark.django_db

PAPER_DIMENSIONS = {
    "idea": ["consistency", "clarity", "novelty", "feasibility", "significance", "overall"],
    "proposal": ["consistency", "clarity", "novelty", "feasibility", "significance", "soundness", "overall"],
    "experiment": [
        "hallucination", "consistency", "completeness", "novelty", "soundness", "insightfulness", "significance", "overall",
    ],
    "writing": ["consistency", "clarity", "completeness", "soundness", "overall"],
    "end2end": ["clarity", "novelty", "soundness", "significance", "overall", "confidence"],
    "hallucination": ["findings", "integrity"],
}  # fmt: skip


def test_it_loads_version_one_of_each_stage_once():
    out = io.StringIO()
    call_command("load_rubrics", stdout=out)
    call_command("load_rubrics", stdout=out)
    assert Rubric.objects.count() == 7  # the six MLR-Bench stages and the agent trajectory
    assert out.getvalue().count("created") == 7 and out.getvalue().count("kept") == 7
    for stage, keys in PAPER_DIMENSIONS.items():
        assert [d["key"] for d in Rubric.objects.get(stage=stage, version=1).dimensions] == keys
    trajectory = Rubric.objects.get(stage=Rubric.Stage.TRAJECTORY, version=1)
    assert [d["key"] for d in trajectory.dimensions] == ["approach", "actions", "efficiency", "honesty", "overall"]


def test_it_gives_every_score_dimension_questions_and_all_five_band_anchors():
    for rub in rubric_load_defaults():
        for dim in rub.dimensions:
            assert dim["questions"]
            if dim["kind"] == "score":
                assert list(dim["anchors"]) == ["9-10", "7-8", "5-6", "3-4", "1-2"]
    end2end = Rubric.objects.get(stage="end2end")
    confidence = end2end.dimensions[-1]
    assert (confidence["min"], confidence["max"], confidence["kind"]) == (1, 5, "confidence")
    audit = Rubric.objects.get(stage="hallucination").dimensions[0]
    assert set(audit["types"]) == {"faked_results", "hallucinated_methodology", "incorrect_citation", "math_error"}


def test_it_adds_a_version_and_leaves_the_old_one_alone():
    old = rubric("idea")
    dims = [dict(d) for d in old.dimensions]
    dims[0]["questions"] = ["Does it fit the call?"]
    new = rubric_create_version(stage="idea", name="Idea v2", instructions="Judge it.", dimensions=dims)
    old.refresh_from_db()
    assert (new.version, old.version) == (2, 1)
    assert old.dimensions[0]["questions"] != ["Does it fit the call?"]
    assert rubric_create_version(stage="idea", name="v3", instructions="x", dimensions=dims).version == 3


@pytest.mark.parametrize(
    ("dimensions", "message"),
    [
        ([], "non-empty JSON list"),
        ([{"key": "Bad Key", "name": "x", "questions": ["q"], "min": 1, "max": 10, "anchors": {}}], "dimension 1: key must be"),
        ([{"key": "a", "name": "A", "questions": ["q"], "min": 5, "max": 1, "anchors": {}}], "dimension 1 (a): min and max"),
        ([{"key": "a", "name": "A", "questions": [], "min": 1, "max": 10, "anchors": {}}], "dimension 1 (a): questions"),
        ([{"key": "a", "name": "A", "questions": ["q"], "min": 1, "max": 10, "anchors": {"9-10": "x"}}], "anchors missing for band(s) 7-8, 5-6, 3-4, 1-2"),
        ([{"key": "a", "name": "A", "questions": ["q"], "kind": "stars", "min": 1, "max": 10}], "kind must be one of"),
    ],
)  # fmt: skip
def test_it_rejects_malformed_dimensions_naming_the_fault(dimensions, message):
    with pytest.raises(ValidationError) as error:
        rubric_validate_dimensions(dimensions)
    assert message in " ".join(error.value.messages)


def test_it_rejects_a_duplicate_key():
    dims = rubric("idea").dimensions
    with pytest.raises(ValidationError, match="duplicate key"):
        rubric_validate_dimensions([dims[0], dims[0]])


def _experiment_run(tmp_path, settings, owner=None):
    settings.MEDIA_ROOT = str(tmp_path)
    run = make_research_run(owner=owner, task=make_task("iclr2025_prompt"))
    make_artifact(run, "proposal", "We propose the proposal text $\\alpha$.")
    experiment = make_artifact(
        run, "experiment", "results.md: accuracy 0.91", files=["code/train.py", "figures/loss.png", "../escape.py"],
        data={"trace": [{"role": "assistant", "content": "running python train.py"}, {"role": "user", "content": "acc=0.91"}]},
    )  # fmt: skip
    folder = tmp_path / "artifacts" / str(experiment.code) / "code"
    folder.mkdir(parents=True)
    (folder / "train.py").write_text("print('acc=0.91')\n")
    (tmp_path / "artifacts" / "escape.py").write_text("SECRET\n")
    paper = make_artifact(run, "paper", "# A paper\n\nWe get 0.91.")
    return run, experiment, paper


def test_it_renders_task_artifact_rubric_code_and_trace(tmp_path, settings):
    _, experiment, paper = _experiment_run(tmp_path, settings)
    prompt = prompt_render(artifact=paper, rubric=rubric("end2end"), with_supplementary=True)
    assert "The workshop calls for papers on robust toy models." in prompt.user
    assert "# A paper\n\nWe get 0.91." in prompt.user
    assert "print('acc=0.91')" in prompt.user and "--- code/train.py ---" in prompt.user
    assert "[assistant] running python train.py" in prompt.user
    assert "SECRET" not in prompt.user  # a stored path cannot climb out of the artifact's folder
    assert "### Novelty (key `novelty`: an integer from 1 to 10)" in prompt.user
    assert "  - 9-10: A genuinely new perspective" in prompt.user
    assert '"confidence": {\n    "score": "<integer 1-5>"' in prompt.user
    assert '"strengths": [' in prompt.user
    assert len(prompt.hash) == 64


def test_it_withholds_code_and_trace_when_switched_off(tmp_path, settings):
    _, experiment, paper = _experiment_run(tmp_path, settings)
    with_code = prompt_render(artifact=experiment, rubric=rubric("experiment"), with_supplementary=True)
    without = prompt_render(artifact=experiment, rubric=rubric("experiment"), with_supplementary=False)
    assert "print('acc=0.91')" in with_code.user
    assert "print('acc=0.91')" not in without.user and "running python train.py" not in without.user
    assert "Withheld for this judgment" in without.user
    assert with_code.hash != without.hash
    assert "We propose the proposal text" in with_code.user  # consistency is judged against the proposal
    assert "### Hallucination (key `hallucination`: 1 = yes, 0 = no)" in with_code.user


def test_it_renders_the_same_prompt_to_the_same_hash_and_no_code_for_text_stages(tmp_path, settings):
    run, _, _ = _experiment_run(tmp_path, settings)
    idea = make_artifact(run, "idea", "Idea: robust toys.")
    first = prompt_render(artifact=idea, rubric=rubric("idea"), with_supplementary=True)
    assert first.hash == prompt_render(artifact=idea, rubric=rubric("idea"), with_supplementary=True).hash
    assert "Code of the experiment" not in first.user and "Withheld" not in first.user
