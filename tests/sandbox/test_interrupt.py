"""Interrupting the command in flight from another thread (how a cancelled run stops its command)."""

from __future__ import annotations

import threading
import time

from sandbox.base import INTERRUPT


def test_it_stops_a_long_command_when_interrupted_and_the_shell_lives_on(sandbox) -> None:
    session = sandbox()
    session.run("cd /tmp && export KEPT=yes", timeout=10)
    timer = threading.Timer(1.0, session.interrupt)
    timer.start()
    started = time.monotonic()
    result = session.run("echo started; sleep 300; echo never", timeout=None)
    elapsed = time.monotonic() - started
    timer.join()
    assert result.interrupted and not result.timed_out
    assert result.exit_code == 130 and result.output == "started\n"
    assert elapsed < 60  # not the 300 s of the command
    after = session.run("echo $KEPT; pwd; pgrep -c sleep || true", timeout=10)
    assert after.output == "yes\n/tmp\n0\n" and not after.interrupted


def test_it_answers_false_and_sends_nothing_when_no_command_runs(sandbox) -> None:
    session = sandbox()
    assert session.interrupt() is False
    assert session.run("echo one", timeout=10).output == "one\n"


def test_it_ignores_an_interrupt_that_arrives_after_its_command_ended(sandbox) -> None:
    session = sandbox()
    session.run("true", timeout=10)
    session._channel.send(INTERRUPT)  # the race: the interrupt lands just after the command's end
    result = session.run("sleep 1; echo next", timeout=10)
    assert result.output == "next\n" and not result.interrupted and result.exit_code == 0
