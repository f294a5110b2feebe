"""Runs of any coding agent in MLR-Bench's layout: the agent is named from the run's own files (or
"unknown"), its logs and code are stored and shown, costs are "unpriced" where the data has none,
and the command fails loudly on a folder with nothing to import."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.models import Task
from benchmark.research.coding_agents import experiment_agent
from benchmark.research.files import read_text, stored_files
from benchmark.research.imports import find_imported_run, import_mlr_runs

SLUG = "iclr2025_toyagents"


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def task(db):
    return Task.objects.create(
        slug=SLUG, version_hash=hashlib.sha256(SLUG.encode()).hexdigest(), kind=Task.Kind.MLR,
        title="Toy agents workshop", description="# Toy agents\n\nCall for papers.", venue="iclr", year=2025,
        source="mlrbench",
    )  # fmt: skip


def _run_folder(root: Path, backbone: str, files: dict[str, str]) -> Path:
    run = root / "agent_results" / f"end2end_{backbone}" / SLUG
    base = {
        "task.md": "# Toy agents\n\nCall for papers.",
        "idea.md": "# Idea\n\nTry it.",
        "related_work.md": "1. **Title**: A Paper (arXiv:2401.00001)\n",
        "proposal.md": "# Proposal\n\nPlan.",
        "idea_token_usage.json": json.dumps({"input_tokens": 10, "output_tokens": 5}),
        "results/results.md": "# Results\n\nAccuracy 0.91.",
        "results/paper.md": "# Paper\n\nWe reach 0.91 accuracy.",
        "results/log.txt": "epoch 1 acc 0.91\n",
    }
    for relative, text in {**base, **files}.items():
        path = run / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return run


@pytest.mark.django_db
def test_it_names_a_codex_run_from_its_log_and_code_folder_and_stores_both(
    media, tmp_path, task, admin_user, client_for
):
    _run_folder(
        tmp_path,
        "qwen",
        {
            "codex_log.log": "[2025-05-01] codex exec: running python codex/main.py\ntokens used: 12,345\n",
            "codex/main.py": "print('acc', 0.91)\n",
            "codex/runs/train.log": "step 10 loss 0.3\n",
            "codex/model.ckpt": "binary weights",
        },
    )
    out = io.StringIO()
    report = import_mlr_runs(tmp_path, stdout=out)
    text = out.getvalue()
    assert report.runs == [f"end2end_qwen/{SLUG}"] and not report.errors
    assert "extra folders" not in text and "claude_output.json" not in text
    experiment = find_imported_run(task_slug=SLUG, backbone="qwen").artifacts.get(stage="experiment")
    agent = experiment.data["agent"]
    assert agent["name"] == "Codex CLI" and agent["known"] is True
    assert agent["evidence"] == ["codex_log.log (log)", "codex/ (code folder)"]
    assert agent["trace_format"] == "text log" and agent["model"] == ""
    assert experiment.data["logs"] == ["codex_log.log", "codex/runs/train.log", "results/log.txt"]
    assert experiment.data["code_files"] == ["codex/main.py", "codex/runs/train.log"]  # no checkpoint
    assert read_text(experiment.code, "codex_log.log").startswith("[2025-05-01] codex exec")
    # No price in the data: unpriced, not $0, and the run's total says which stages it leaves out.
    assert experiment.cost == 0.0 and experiment.data["priced"] is False
    assert "unpriced: the data holds no cost for this run's agent (Codex CLI)" == experiment.data["cost_note"]
    run = experiment.research_run
    assert "experiment" in run.settings["unpriced_stages"]

    page = client_for(admin_user).get(reverse("benchmark:research_run", args=[run.code])).content.decode()
    assert 'Carried out by <strong data-field="agent">Codex CLI</strong>' in page
    assert "Claude Code" not in page and "carried out by Claude" not in page
    assert "unpriced: the data holds no cost" in page and "· unpriced</span>" in page
    log_url = reverse("benchmark:research_file", kwargs={"code": experiment.code, "path": "codex_log.log"})
    assert f'href="{log_url}"' in page
    served = client_for(admin_user).get(log_url)
    assert served.status_code == 200 and b"tokens used" in b"".join(served.streaming_content)
    code_url = reverse("benchmark:research_file", kwargs={"code": experiment.code, "path": "codex/main.py"})
    assert f'href="{code_url}"' in page
    assert client_for(admin_user).get(code_url)["Content-Type"] == "text/plain; charset=utf-8"  # never executed


@pytest.mark.django_db
def test_it_names_gemini_from_its_log_and_an_unlisted_agent_by_its_own_name(media, tmp_path, task):
    _run_folder(tmp_path, "gemini", {"gemini_log.log": "gemini> done\n"})
    _run_folder(tmp_path, "o4-mini", {"hal9000_log.txt": "I'm sorry Dave\n", "hal9000_code/run.py": "x = 1\n"})
    import_mlr_runs(tmp_path, stdout=io.StringIO())
    gemini = find_imported_run(task_slug=SLUG, backbone="gemini").artifacts.get(stage="experiment").data["agent"]
    assert gemini["name"] == "Gemini CLI"
    other = find_imported_run(task_slug=SLUG, backbone="o4-mini").artifacts.get(stage="experiment").data["agent"]
    assert (other["name"], other["known"]) == ("hal9000", False)
    assert other["evidence"] == ["hal9000_log.txt (log)", "hal9000_code/ (code folder)"]


@pytest.mark.django_db
def test_it_marks_the_agent_unknown_when_no_file_names_it_and_keeps_its_logs(media, tmp_path, task):
    _run_folder(tmp_path, "claude", {"run.log": "training...\n", "scratch/notes.md": "todo"})
    out = io.StringIO()
    import_mlr_runs(tmp_path, stdout=out)
    text = out.getvalue()
    experiment = find_imported_run(task_slug=SLUG, backbone="claude").artifacts.get(stage="experiment")
    assert experiment.data["agent"]["name"] == "unknown" and experiment.data["agent"]["evidence"] == []
    assert "run.log" in experiment.data["logs"] and "run.log" in experiment.files
    assert f"FAULT end2end_claude/{SLUG}: experiment: no file names the coding agent; shown as unknown" in text
    assert f"FAULT end2end_claude/{SLUG}: extra folders left by the agent: scratch" in text


@pytest.mark.django_db
def test_it_reads_a_claude_code_trace_and_its_cost(media, tmp_path, task):
    trace = [
        {"role": "user", "content": "go"},
        {"type": "message", "role": "assistant", "model": "claude-3-7-sonnet-20250219",
         "usage": {"input_tokens": 3, "output_tokens": 4}, "content": [{"type": "tool_use", "name": "Bash", "input": {}}]},
        {"role": "system", "cost_usd": 0.25, "duration_ms": 1000, "result": "done"},
    ]  # fmt: skip
    _run_folder(tmp_path, "claude", {"claude_output.json": json.dumps(trace), "codex_log.log": "stray"})
    out = io.StringIO()
    import_mlr_runs(tmp_path, stdout=out)
    experiment = find_imported_run(task_slug=SLUG, backbone="claude").artifacts.get(stage="experiment")
    agent = experiment.data["agent"]
    assert (agent["name"], agent["model"], agent["trace_format"]) == (
        "Claude Code", "claude-3-7-sonnet-20250219", "Claude Code message list",
    )  # fmt: skip
    assert agent["other_agents"] == ["Codex CLI"]
    assert "the run's files name several agents" in out.getvalue()
    assert experiment.cost == 0.25 and experiment.data["priced"] is True and experiment.data["cost_note"] == ""


def test_it_reads_agent_evidence_in_order_of_trust(tmp_path):
    (tmp_path / "claude_code").mkdir()
    (tmp_path / "gemini_log.log").write_text("x")
    (tmp_path / "mlr_agent_claude.log").write_text("pipeline")  # MLR-Agent's own log names no coding agent
    (tmp_path / "idea_token_usage.json").write_text("{}")
    agent = experiment_agent(tmp_path)
    assert agent.key == "gemini" and agent.other_keys == ["claude"]
    assert agent.log_files == ["gemini_log.log"] and agent.code_dirs == ["claude_code"]


@pytest.mark.django_db
def test_the_command_exits_non_zero_on_a_folder_with_nothing_to_import(media, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="nothing imported from .*no end2end_<backbone>/ folders"):
        call_command("import_mlr_results", str(tmp_path / "empty"), stdout=io.StringIO())


@pytest.mark.django_db
@pytest.mark.parametrize("given", ["repo", "agent_results", "ideas_and_proposals", "reviews"])
def test_the_command_names_the_stepwise_folders_and_the_command_that_imports_them(media, tmp_path, given):
    repo = tmp_path / "mlrbench"
    (repo / "agent_results" / "ideas_and_proposals" / SLUG / "idea").mkdir(parents=True)
    (repo / "agent_results" / "ideas_and_proposals" / SLUG / "idea" / "idea_m.md").write_text("idea")
    (repo / "agent_reviews" / "idea_proposal_reviews_j" / SLUG).mkdir(parents=True)
    path = {
        "repo": repo,
        "agent_results": repo / "agent_results",
        "ideas_and_proposals": repo / "agent_results" / "ideas_and_proposals",
        "reviews": repo / "agent_reviews" / "idea_proposal_reviews_j",
    }[given]
    with pytest.raises(CommandError) as raised:
        call_command("import_mlr_results", str(path), stdout=io.StringIO())
    message = str(raised.value)
    assert "holds MLR-Bench's stepwise results" in message
    assert f"manage.py import_mlr_stepwise {repo}" in message


@pytest.mark.django_db
def test_it_never_copies_a_link_out_of_the_run_folder(media, tmp_path, task):
    secret = tmp_path / "host_secret.txt"
    secret.write_text("root:x:0:0")
    run = _run_folder(tmp_path, "qwen", {"codex_log.log": "ok\n", "codex/main.py": "print(1)\n"})
    (run / "codex" / "leak.txt").symlink_to(secret)
    (run / "results" / "leak.log").symlink_to(secret)
    (run / "gemini_log.log").symlink_to(secret)
    out = io.StringIO()
    import_mlr_runs(tmp_path, stdout=out)
    experiment = find_imported_run(task_slug=SLUG, backbone="qwen").artifacts.get(stage="experiment")
    assert not {"codex/leak.txt", "results/leak.log", "gemini_log.log"} & set(experiment.files)
    stored = [read_text(experiment.code, f) for f in stored_files(experiment.code)]
    assert all("root:x" not in text for text in stored)
    text = out.getvalue()
    for name in ("codex/leak.txt", "results/leak.log", "gemini_log.log"):
        assert f"experiment: {name} is a link out of the run folder; not copied" in text
