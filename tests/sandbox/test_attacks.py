"""One test per attack: each asserts that the attack fails and that the sandbox keeps working.

Every test runs against Docker and against bubblewrap (see the ``backend`` fixture).
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from sandbox import Mount
from sandbox.evaluation import evaluate

LIST_PROCESSES = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"


def assert_alive(session) -> None:
    result = session.run("echo still-alive", timeout=10)
    assert (result.exit_code, result.output) == (0, "still-alive\n")


@pytest.fixture
def host_listener():
    """A TCP server on the host's loopback; a sandbox must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    accepted: list[object] = []

    def serve() -> None:
        try:
            while True:
                conn, _ = server.accept()
                accepted.append(conn)
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


def test_it_blocks_network_egress(sandbox, host_listener) -> None:
    port, accepted = host_listener
    session = sandbox()
    interfaces = session.run("ls /sys/class/net 2>/dev/null || cat /proc/net/dev", timeout=10)
    connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')"
    probe = session.run(f'python3 -c "{connect}"', timeout=10)
    dns = session.run("python3 -c \"import socket; socket.getaddrinfo('pypi.org', 443)\"", timeout=10)
    assert "eth0" not in interfaces.output
    assert probe.exit_code != 0 and "CONNECTED" not in probe.output
    assert dns.exit_code != 0
    assert accepted == []
    assert_alive(session)


def test_it_refuses_writes_to_a_read_only_data_mount(sandbox, public_dir: Path) -> None:
    data = public_dir / "data"
    data.mkdir()
    (data / "train.csv").write_text("x,y\n1,2\n")
    data.chmod(0o777)  # even a world-writable host dir stays read-only inside
    (data / "train.csv").chmod(0o666)
    session = sandbox(mounts=[Mount(str(data), "/data", read_only=True)])
    attempts = [
        "echo hacked > /data/train.csv",
        "rm /data/train.csv",
        "touch /data/new",
        "chmod 777 /data/train.csv",
        "mv /data/train.csv /data/moved.csv",
        "mount -o remount,rw /data",
    ]
    results = [session.run(command, timeout=10) for command in attempts]
    assert all(result.exit_code != 0 for result in results), [r.output for r in results]
    assert session.run("cat /data/train.csv", timeout=10).output == "x,y\n1,2\n"
    assert (data / "train.csv").read_text() == "x,y\n1,2\n"
    assert sorted(p.name for p in data.iterdir()) == ["train.csv"]


def test_it_keeps_evaluator_labels_and_opponent_out_of_reach(backend, sandbox, public_dir: Path) -> None:
    evaluator = public_dir / "evaluator"
    evaluator.mkdir()
    (evaluator / "labels.csv").write_text("1\n0\n1\n")
    (evaluator / "opponent.py").write_text("def move():\n    return 'rock'\n")
    (evaluator / "evaluate.py").write_text(
        "import os, sys\n"
        "from arena import emit\n"
        "sys.path.insert(0, os.environ['EVALUATOR_DIR'])\n"
        "sys.path.insert(0, os.environ['WORKSPACE'])\n"
        "import opponent, submission\n"
        "submission.attack()\n"
        "labels = open(os.path.join(os.environ['EVALUATOR_DIR'], 'labels.csv')).read().split()\n"
        "emit({'labels': len(labels), 'opponent_rock': float(opponent.move() == 'rock')})\n"
    )
    # World-writable on the host: only the read-only mount can refuse the writes below (a
    # read-write mount of root-owned 0644 files would pass this test by ownership alone).
    for path in evaluator.iterdir():
        path.chmod(0o666)
    evaluator.chmod(0o777)
    agent = sandbox()  # the agent's sandbox: the benchmark never mounts the evaluator here
    search = agent.run(f"ls {evaluator}; find / -name 'labels.csv' -o -name 'opponent.py' 2>/dev/null", timeout=30)
    assert "labels.csv" not in search.output and "opponent.py" not in search.output
    # Code run inside the evaluator's sandbox (tasks with a submission: section never do that;
    # this is the mount's own wall) tries to rewrite what judges it.
    submission = (
        "import os\n"
        "def attack():\n"
        "    d = os.environ['EVALUATOR_DIR']\n"
        "    for name, text in [('labels.csv', '1\\n'), ('opponent.py', 'def move():\\n    return 0\\n')]:\n"
        "        try:\n"
        "            open(os.path.join(d, name), 'w').write(text)\n"
        "            print('WROTE', name)\n"
        "        except OSError as exc:\n"
        "            print('refused', name, exc.strerror)\n"
    )
    result = evaluate(
        evaluator_dir=evaluator,
        artifacts={"submission.py": submission.encode()},
        command="python3 $EVALUATOR_DIR/evaluate.py",
        timeout=60,
        backend=backend,
    )
    assert result.ok, result.error
    assert result.metrics == {"labels": 3.0, "opponent_rock": 1.0}
    assert "WROTE" not in result.output and result.output.count("refused") == 2
    assert result.output.count("Read-only file system") == 2
    assert (evaluator / "labels.csv").read_text() == "1\n0\n1\n"
    assert (evaluator / "opponent.py").read_text() == "def move():\n    return 'rock'\n"


def test_it_gives_no_way_to_become_root(sandbox) -> None:
    session = sandbox()
    status = session.run("grep -E '^(Uid|CapEff|NoNewPrivs)' /proc/self/status", timeout=10).output
    setuid = session.run("find / -xdev -perm -4000 -type f 2>/dev/null", timeout=60).output.split()
    attempts = ["sudo id", "su -c id root </dev/null", "cat /etc/shadow", "unshare -r id", "chown 0 $HOME"]
    attempts += [f"{binary} --help >/dev/null 2>&1; {binary} -c 'id -u' </dev/null" for binary in setuid[:3]]
    results = [session.run(command, timeout=10) for command in attempts]
    uids = session.run("id -u; id -g", timeout=10).output.split()
    assert "0" not in uids
    assert "CapEff:\t0000000000000000" in status
    assert "NoNewPrivs:\t1" in status
    assert all(r.exit_code != 0 or "0" not in r.output.split() for r in results), [r.output for r in results]
    assert_alive(session)


def test_it_hides_the_docker_socket_and_the_host_filesystem(sandbox, public_dir: Path) -> None:
    secret = public_dir / "host-secret.txt"
    secret.write_text("host secret")
    session = sandbox()
    sockets = session.run("ls -la /var/run/docker.sock /run/docker.sock 2>&1", timeout=10)
    peek = session.run(f"cat {secret}; ls /root /work /home 2>&1", timeout=10)
    init = session.run("tr '\\0' ' ' < /proc/1/cmdline; echo; hostname", timeout=10)
    assert "No such file" in sockets.output and "srw" not in sockets.output
    assert "host secret" not in peek.output
    assert "systemd" not in init.output and "/sbin/init" not in init.output.replace("docker-init", "")
    assert init.output.strip().endswith("sandbox")
    assert_alive(session)


def test_it_contains_a_fork_bomb(sandbox) -> None:
    session = sandbox(pids=64)
    bomb = session.run("bomb() { bomb | bomb & }; bomb; sleep 3", timeout=6)
    after = session.run("echo still-alive", timeout=10)
    assert bomb.exit_code != 0 or bomb.timed_out or "fork" in bomb.output
    # If the bomb still fills the process table, the next command first clears it (and says so).
    assert after.exit_code == 0 and after.output.endswith("still-alive\n")
    # What is left: init, the shell server and this command (no bomb processes).
    count = session.run("ls -d /proc/[0-9]* | wc -l", timeout=20)
    assert int(count.output) < 10


HOLD = (
    "python3 -c \"import time; b = bytearray({mb} << 20); b[::4096] = b'x' * len(b[::4096]); "
    "print('held {mb} MB', flush=True); time.sleep({hold})\""
)


def printed(output: str, line: str) -> int:
    """How often ``line`` was printed as a line of its own (bash echoes killed commands)."""
    return output.splitlines().count(line)


def test_it_caps_the_ram_of_all_processes_at_what_was_asked(backend, sandbox) -> None:
    """memory_mb is RAM: a 2 GB workspace does not make room for more (tmpfs used to)."""
    from sandbox import cgroup

    if backend == "bwrap" and cgroup.unavailable():
        pytest.skip(f"bwrap here has only a per-process address-space limit, no memory cgroup: {cgroup.unavailable()}")
    session = sandbox(memory_mb=128, disk_mb=2048)
    one = session.run(HOLD.format(mb=300, hold=0), timeout=60)
    # Two processes of 80 MB each: within the limit apart, over it together: one is killed.
    two = session.run(f"{HOLD.format(mb=80, hold=3)} & sleep 1; {HOLD.format(mb=80, hold=0)}; wait", timeout=60)
    small = session.run(HOLD.format(mb=60, hold=0), timeout=60)
    assert one.exit_code != 0 and one.oom and printed(one.output, "held 300 MB") == 0, one.output
    assert two.oom and "Killed" in two.output, two.output
    assert small.exit_code == 0 and printed(small.output, "held 60 MB") == 1
    assert_alive(session)


def test_it_keeps_files_off_the_ram_limit(backend, sandbox) -> None:
    """Disk is accounted apart: 400 MB of files and then 60 MB of RAM fit a 128 MB sandbox."""
    from sandbox import disk

    if disk.unavailable():
        pytest.skip(f"no size-limited disks here, the workspace is tmpfs counted as memory: {disk.unavailable()}")
    session = sandbox(memory_mb=128, disk_mb=600)
    files = session.run("dd if=/dev/zero of=big bs=1M count=400 2>&1 | tail -1; sync", timeout=120)
    held = session.run(HOLD.format(mb=60, hold=0), timeout=60)
    assert files.exit_code == 0 and "419430400 bytes" in files.output, files.output
    assert held.exit_code == 0 and "held 60 MB" in held.output, held.output
    assert session.run("stat -c %s big", timeout=10).output.strip() == str(400 << 20)


def test_it_reports_a_memory_hog_as_out_of_memory_and_keeps_working(sandbox) -> None:
    session = sandbox(memory_mb=128, disk_mb=32)
    hog = session.run("python3 -c \"blocks = [b'x' * (64 << 20) for _ in range(64)]\"", timeout=60)
    assert hog.exit_code != 0
    assert hog.oom, hog.output
    assert_alive(session)


def test_it_stops_a_disk_fill_at_the_limit(sandbox) -> None:
    session = sandbox(disk_mb=32)
    fill = session.run("for i in 1 2 3 4 5; do dd if=/dev/zero of=big$i bs=1M count=20 2>&1; done", timeout=60)
    fill_tmp = session.run("dd if=/dev/zero of=/tmp/big bs=1M count=400 2>&1", timeout=60)
    assert "No space left on device" in fill.output
    assert "No space left on device" in fill_tmp.output
    used = session.run("cat big* | wc -c", timeout=10).output
    assert int(used) <= 32 << 20
    freed = session.run("rm big* /tmp/big && echo ok > small && cat small", timeout=10)
    assert freed.output == "ok\n"


def test_it_kills_background_processes_left_after_a_timeout(sandbox) -> None:
    session = sandbox()
    result = session.run(
        "sleep 301 & nohup sleep 302 >/dev/null 2>&1 & setsid sleep 303 & (sleep 304 &); sleep 300", timeout=2
    )
    assert result.timed_out and result.exit_code == 124
    leftover = session.run(f"{LIST_PROCESSES} | grep -c '[s]leep 30' || true", timeout=20)
    assert leftover.output.strip() == "0"
    assert_alive(session)


def test_it_keeps_each_session_workspace_private(sandbox) -> None:
    first, second = sandbox(), sandbox()
    first.put_file("private.txt", b"first session's secret")
    marker = first.run("cat private.txt", timeout=10).output
    search = second.run("ls /workspace; find / -name private.txt 2>/dev/null | head", timeout=60)
    assert marker == "first session's secret"
    assert "private.txt" not in search.output
    assert first.run("ls", timeout=10).output == "private.txt\n"


def test_it_kills_a_command_that_never_ends(sandbox) -> None:
    session = sandbox()
    session.run("cd /tmp && export KEPT=yes", timeout=10)
    loop = session.run("cd / && while true; do :; done", timeout=1)
    silent = session.run("echo started; sleep 600", timeout=60, idle_timeout=1)
    assert loop.timed_out and loop.exit_code == 124
    assert silent.timed_out and silent.output == "started\n"
    # The shell survives with its state from before the killed commands.
    after = session.run("pwd; echo $KEPT", timeout=10)
    assert after.output == "/tmp\nyes\n"


def test_it_caps_huge_and_binary_output(sandbox, settings) -> None:
    settings.SANDBOX_OUTPUT_LIMIT = 10_000
    session = sandbox()
    huge = session.run("seq 1 2000000", timeout=60)
    binary = session.run("head -c 3000000 /dev/urandom; printf '\\0\\377end'", timeout=60)
    assert huge.truncated and huge.exit_code == 0
    assert huge.output.startswith("1\n2\n3\n") and huge.output.endswith("1999999\n2000000\n")
    assert "bytes of output cut" in huge.output and len(huge.output) < 12_000
    assert binary.truncated and binary.output.endswith("\\x00\\xffend")
    assert "\x00" not in binary.output
    assert_alive(session)


def test_it_survives_the_agent_killing_every_process_it_can(sandbox) -> None:
    session = sandbox()
    session.run("cd /tmp && export KEPT=1", timeout=10)
    attack = session.run("sleep 100 & kill -9 1; pkill -9 -f python3; kill -TERM -1; kill -9 -1; sleep 5", timeout=10)
    after = session.run("pwd; echo $KEPT", timeout=10)
    assert attack.exit_code != 0
    assert after.output == "/tmp\n1\n"


def test_it_keeps_the_agent_off_the_shell_servers_channel(sandbox) -> None:
    session = sandbox()
    forge = session.run(
        """echo '{"op": "exit"}' > /proc/1/fd/0; printf 'D\\0\\0\\0\\2{}' > /proc/1/fd/1; ls /proc/1/fd""",
        timeout=10,
    )
    assert forge.output.count("Permission denied") == 3
    assert_alive(session)
