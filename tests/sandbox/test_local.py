"""The local backend: unisolated, so refused unless settings allow it, and labelled as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import Mount, SandboxSpec, SandboxUnavailable, backend_info, open_session
from sandbox.evaluation import evaluate


def test_it_refuses_the_local_backend_unless_allowed(settings) -> None:
    settings.SANDBOX_ALLOW_LOCAL = False
    with pytest.raises(SandboxUnavailable, match="SANDBOX_ALLOW_LOCAL"):
        open_session(SandboxSpec(), backend="local")
    info = backend_info("local")
    assert info["available"] is False and info["isolation"].startswith("NONE")


def test_it_runs_a_persistent_shell_in_a_temporary_root(settings) -> None:
    settings.SANDBOX_ALLOW_LOCAL = True
    with open_session(SandboxSpec(), backend="local") as session:
        session.run("mkdir sub && cd sub && export X=1", timeout=10)
        result = session.run('pwd; echo $X; test "$HOME" = "$SANDBOX_ROOT/workspace" && echo home', timeout=10)
        timed = session.run("sleep 30 & sleep 30", timeout=1)
        root = Path(session.root)
    assert result.output.splitlines()[1:] == ["1", "home"]
    assert result.output.startswith(str(root / "workspace" / "sub"))
    assert timed.timed_out
    assert not root.exists()
    assert backend_info("local")["available"] is True


def test_it_maps_mounts_and_evaluates_locally(settings, public_dir: Path) -> None:
    settings.SANDBOX_ALLOW_LOCAL = True
    (public_dir / "check.py").write_text("from arena import emit; emit({'size': len(open('art.txt').read())})\n")
    spec = SandboxSpec(mounts=[Mount(str(public_dir), "/data")], env={"DATA": "/data"})
    with open_session(spec, backend="local") as session:
        listed = session.run("ls $DATA", timeout=10)
    result = evaluate(
        evaluator_dir=public_dir,
        artifacts={"art.txt": b"12345"},
        command="python3 $EVALUATOR_DIR/check.py",
        backend="local",
    )
    assert listed.output == "check.py\n"
    assert result.ok and result.metrics == {"size": 5.0}


def test_it_runs_a_submission_in_a_session_of_its_own_locally(settings, public_dir: Path) -> None:
    from sandbox.evaluation import Submission

    settings.SANDBOX_ALLOW_LOCAL = True
    (public_dir / "play.py").write_text("from arena import Player, emit\nemit({'move': Player('move')(3)})\n")
    submission = Submission(files={"bot.py": b"def move(n):\n    return n * 2\n"}, module="bot.py", functions=["move"])
    result = evaluate(
        evaluator_dir=public_dir,
        artifacts={},
        command="python3 $EVALUATOR_DIR/play.py",
        backend="local",
        submission=submission,
    )
    assert result.ok and result.metrics == {"move": 6.0}, result.error + result.output
