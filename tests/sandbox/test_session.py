"""The persistent shell: state between commands, exact end and exit code, files in and out."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import SandboxError


def test_it_keeps_cwd_variables_functions_and_aliases_between_commands(sandbox) -> None:
    session = sandbox()
    session.run("mkdir -p /tmp/work && cd /tmp/work", timeout=10)
    session.run("export EXPORTED=1; PLAIN=2; greet() { echo hello $1; }; alias ll='echo listed'", timeout=10)
    result = session.run("pwd; echo $EXPORTED $PLAIN; greet you; ll", timeout=10)
    session.run("unset PLAIN", timeout=10)
    unset = session.run("echo [${PLAIN:-gone}]", timeout=10)
    assert result.output == "/tmp/work\n1 2\nhello you\nlisted\n"
    assert unset.output == "[gone]\n"


def test_it_reports_exit_codes_and_output_without_a_trailing_newline(sandbox) -> None:
    session = sandbox()
    results = [session.run(c, timeout=10) for c in ["true", "false", "exit 7", "printf 'no newline'", "kill -9 $$"]]
    assert [r.exit_code for r in results] == [0, 1, 7, 0, 137]
    assert results[3].output == "no newline"
    assert not any(r.timed_out or r.truncated for r in results)


def test_it_passes_binary_bytes_without_breaking_the_protocol(sandbox) -> None:
    session = sandbox()
    # Bytes that look like the protocol's own frames must come through as plain output.
    weird = session.run("printf 'D\\0\\0\\0\\x02{}\\xff\\xfeO'", timeout=10)
    after = session.run("echo next", timeout=10)
    assert weird.output == "D\\x00\\x00\\x00\x02{}\\xff\\xfeO"
    assert after.output == "next\n"


def test_it_merges_stderr_and_keeps_order(sandbox) -> None:
    session = sandbox()
    result = session.run("echo out; echo err >&2; echo out2", timeout=10)
    assert result.output == "out\nerr\nout2\n"


def test_it_puts_and_gets_files_and_directories(sandbox, public_dir: Path) -> None:
    session = sandbox()
    session.put_file("data/blob.bin", bytes(range(256)), mode=0o600)
    session.put_file("/tmp/run.sh", b"#!/bin/sh\necho ran\n", mode=0o755)
    (public_dir / "pkg" / "sub").mkdir(parents=True)
    (public_dir / "pkg" / "a.py").write_text("A = 1\n")
    (public_dir / "pkg" / "sub" / "b.txt").write_text("b")
    session.put_dir(public_dir / "pkg", "/workspace/pkg")
    assert session.get_file("/workspace/data/blob.bin") == bytes(range(256))
    assert session.run("/tmp/run.sh; stat -c %a data/blob.bin", timeout=10).output == "ran\n600\n"
    assert session.run("cat pkg/a.py pkg/sub/b.txt", timeout=10).output == "A = 1\nb"


def test_it_raises_a_clear_error_for_missing_or_unwritable_files(sandbox) -> None:
    session = sandbox()
    with pytest.raises(SandboxError, match="nope.txt"):
        session.get_file("nope.txt")
    with pytest.raises(SandboxError, match="/usr/evil"):
        session.put_file("/usr/evil", b"x")
    assert session.run("echo fine", timeout=10).output == "fine\n"


def test_it_refuses_commands_after_close(sandbox) -> None:
    session = sandbox()
    session.close()
    with pytest.raises(SandboxError, match="closed"):
        session.run("true")


def test_it_passes_spec_environment_and_workdir(sandbox) -> None:
    session = sandbox(env={"TASK": "mnist"}, workdir="/workspace")
    result = session.run("echo $TASK; pwd; touch here && ls", timeout=10)
    assert result.output == "mnist\n/workspace\nhere\n"


def test_it_streams_output_as_it_arrives_and_waits_without_timeout(sandbox) -> None:
    session = sandbox()
    chunks: list[str] = []
    result = session.run("echo one; sleep 0.3; echo two", timeout=None, on_output=chunks.append)
    assert result.output == "one\ntwo\n" and not result.timed_out
    assert chunks == ["one\n", "two\n"]
