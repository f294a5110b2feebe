"""import_mlr_results on a run with broken files: each is a fault naming file, line or field; the
run still imports what is valid, and nothing crashes."""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import call_command

from benchmark.models import Artifact, ResearchRun
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data

pytestmark = [needs_data, pytest.mark.django_db]
TASK = "iclr2025_bi_align"


def test_it_reports_each_broken_file_and_imports_the_rest(tmp_path, settings) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    root = tmp_path / "mlrbench"
    run_dir = root / "agent_results" / "end2end_claude" / TASK
    shutil.copytree(MLRBENCH / "agent_results" / "end2end_claude" / TASK, run_dir)
    (root / "tasks").mkdir()
    shutil.copy(MLRBENCH / "tasks" / f"{TASK}.md", root / "tasks")
    (run_dir / "idea_token_usage.json").write_text('{"input_tokens": "abc", "output_tokens": 5}')
    (run_dir / "lit_token_usage.json").write_text("[1, 2]")
    (run_dir / "proposal.md").write_bytes(b"# Proposal\n\nCaf\xe9 au lait.\n")
    (run_dir / "claude_output.json").write_bytes(b'{"x": \xff}')
    out = io.StringIO()
    call_command("import_mlr_results", str(root), stdout=out)
    text = out.getvalue()
    for fault in (
        'idea: idea_token_usage.json: input_tokens: "abc" is not a token count (tokens unknown)',
        "literature: lit_token_usage.json: expected an object, got list",
        "proposal.md:3: not UTF-8 (byte offset 15)",
        "experiment: claude_output.json is not valid JSON",
    ):
        assert fault in text, fault
    assert "Traceback" not in text and "0 errors" in text
    run = ResearchRun.objects.get(source=ResearchRun.Source.MLRBENCH)
    proposal = run.artifacts.get(stage=Artifact.Stage.PROPOSAL)
    assert proposal.content == "# Proposal\n\nCaf\ufffd au lait.\n"
    assert run.artifacts.filter(stage=Artifact.Stage.PAPER).exists()
