"""A single-node Slurm cluster from Debian's packages, for the test session and bench/slurm.py.

munged with a generated key, slurmctld and slurmd (each in the foreground, a child of this process)
with a generated slurm.conf in a temporary folder: their own ports, socket, spool and state, so they
never meet a cluster of the host. Clients find it by SLURM_CONF (set in os.environ by `start`, so
every child process - the launches' sbatch, the reaper's squeue - talks to this cluster).

The node is `referee-node1` with 8 CPUs and 8 GB configured (config_overrides: a 2-core CI runner
still runs two runs at once), partition `referee` (default). MinJobAge keeps ended jobs readable by
squeue for 10 minutes (no accounting daemon by default); SlurmdTimeout is 6 s, so a killed slurmd marks
its node down, and its jobs NODE_FAIL, within seconds. Partition `referee-urgent` has a higher
PriorityTier: a job there that needs the node preempts (PreemptMode=CANCEL) the jobs of `referee`.
batch_sched_delay=0: a submitted batch job is scheduled at once, not up to 3 s later (Slurm's
default; measured here: submit to the job script's start 2.5 s by default, 0.5 s with it).

`start(accounting=True)` adds accounting, for the tests of the reaper's sacct branch only (it costs
seconds): a private MariaDB (its own data folder, socket and port on 127.0.0.1) and slurmdbd on it,
both children of this process in the same folder, the cluster registered before slurmctld starts;
no AccountingStorageEnforce, so jobs need no account or association.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo")
CLUSTER = "referee-test"
NODE = "referee-node1"
PARTITION = "referee"
URGENT = "referee-urgent"  # a higher PriorityTier: its jobs preempt (cancel) jobs of PARTITION

CONF = """\
ClusterName={cluster}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd.pid
SlurmctldLogFile={base}/slurmctld.log
SlurmdLogFile={base}/slurmd.log
SlurmUser={user}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=6
MinJobAge=600
KillWait=5
JobAcctGatherType=jobacct_gather/none
{accounting}
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName={partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName={urgent} Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=10
"""
NO_ACCOUNTING = "AccountingStorageType=accounting_storage/none"
# AccountingStoragePass: the munge socket that clients' messages to slurmdbd are signed with (the
# AuthInfo socket is not used for those; without it they try the host's /run/munge).
ACCOUNTING = """\
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
AccountingStoragePass={munge_socket}"""
# slurmdbd finds it beside SLURM_CONF; it refuses a file others can read (the database password).
DBD_CONF = """\
AuthType=auth/munge
AuthInfo=socket={munge_socket}
DbdHost={host}
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser={user}
PidFile={base}/slurmdbd.pid
LogFile={base}/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={mysql_port}
StorageUser=slurm
StoragePass={password}
StorageLoc=slurm_acct_db
"""
ACCOUNTING_BINARIES = ("mariadb-install-db", "mariadbd", "mariadb", "slurmdbd", "sacctmgr", "sacct")
# A database of a few jobs: a 4 MB redo log and a 32 MB buffer pool instead of 96 and 128 MB (the
# install writes 22 MB, not 114); no native AIO (io_uring, libaio), which some containers refuse.
MARIADB_OPTIONS = (
    "--no-defaults",
    "--innodb-log-file-size=4M",
    "--innodb-buffer-pool-size=32M",
    "--innodb-use-native-aio=0",
    "--skip-name-resolve",
)


def missing_binaries(*, accounting: bool = False) -> list[str]:
    names = BINARIES + (ACCOUNTING_BINARIES if accounting else ())
    return [name for name in names if shutil.which(name) is None]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _must(args: list[str]) -> None:
    """Run a setup command; RuntimeError with its own words if it fails."""
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}): {(done.stdout + done.stderr).strip()[-2000:]}")


@dataclass
class SlurmCluster:
    base: Path
    conf: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    db_password: str = ""  # slurmdbd's, in MariaDB (accounting mode)
    previous_conf: str | None = None  # SLURM_CONF before `start` (the session's cluster), put back by `stop`

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def scontrol(self, *args: str) -> str:
        return subprocess.run(
            ["scontrol", *args], env={**os.environ, **self.env}, capture_output=True, text=True, check=True
        ).stdout

    def _daemon(self, name: str, args: list[str]) -> None:
        log = open(self.base / f"{name}.out", "ab")  # noqa: SIM115 - the daemon's, closed with it
        self.procs[name] = subprocess.Popen(
            args, env={**os.environ, **self.env}, stdout=log, stderr=log, start_new_session=True
        )

    def slurmd_start(self) -> None:
        self._daemon("slurmd", ["slurmd", "-D", "-N", NODE])
        self.node_wait(lambda state: "IDLE" in state or "MIXED" in state or "ALLOC" in state, what="idle")

    def slurmd_kill(self) -> None:
        """kill -9 of slurmd: as a node that stopped answering (its jobs' slurmstepd live on)."""
        proc = self.procs.pop("slurmd")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def node_state(self) -> str:
        out = self.scontrol("show", "node", NODE, "-o")
        return next((part.split("=", 1)[1] for part in out.split() if part.startswith("State=")), "")

    def node_wait(self, accept, *, what: str, timeout: float = 60) -> str:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            try:
                state = self.node_state()
            except subprocess.CalledProcessError:
                state = ""
            if accept(state):
                return state
            time.sleep(0.3)
        raise RuntimeError(f"node {NODE} not {what} within {timeout:g} s (state {state!r}); see {self.base}")

    def _ready(self, name: str, args: list[str], *, timeout: float = 30) -> None:
        """Wait until `args` succeeds; RuntimeError naming the daemon and its last words if not."""
        deadline = time.monotonic() + timeout
        while True:
            probe = subprocess.run(args, capture_output=True, text=True, check=False, timeout=10)
            if probe.returncode == 0:
                return
            proc = self.procs[name]
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not come up ({probe.stderr.strip()}); see {self.base}/{name}.*")
            time.sleep(0.2)

    def mariadb_start(self) -> int:
        """A private MariaDB server on a free port of 127.0.0.1, with database slurm_acct_db and its
        user `slurm`; the port."""
        user = pwd.getpwuid(os.getuid()).pw_name
        data, sock, port = self.base / "mysql", self.base / "mysql.sock", _free_port()
        _must(
            ["mariadb-install-db", *MARIADB_OPTIONS, f"--datadir={data}", f"--user={user}"]
            + ["--auth-root-authentication-method=normal", "--skip-test-db"]
        )
        self._daemon(
            "mariadbd",
            ["mariadbd", *MARIADB_OPTIONS, f"--datadir={data}", f"--socket={sock}", f"--port={port}"]
            + ["--bind-address=127.0.0.1", f"--user={user}", f"--pid-file={self.base / 'mysql.pid'}"]
            + [f"--log-error={self.base / 'mariadbd.log'}", "--skip-log-bin"],
        )
        client = ["mariadb", "--no-defaults", "-uroot", f"--socket={sock}", "-e"]
        self._ready("mariadbd", [*client, "SELECT 1"])
        self.db_password = secrets.token_hex(16)
        _must(
            [
                *client,
                "CREATE DATABASE slurm_acct_db; CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY "
                f"'{self.db_password}'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';",
            ]
        )
        return port

    def slurmdbd_start(self, *, munge_socket: Path, dbd_port: int) -> None:
        """slurmdbd on MariaDB, and this cluster registered in it (slurmctld then finds its
        associations at start); no enforcement, so jobs need no account."""
        mysql_port = self.mariadb_start()
        conf = DBD_CONF.format(
            munge_socket=munge_socket,
            host=socket.gethostname(),
            dbd_port=dbd_port,
            user=pwd.getpwuid(os.getuid()).pw_name,
            base=self.base,
            mysql_port=mysql_port,
            password=self.db_password,
        )
        fd = os.open(self.base / "slurmdbd.conf", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(conf)
        self._daemon("slurmdbd", ["slurmdbd", "-D"])
        self._ready("slurmdbd", ["sacctmgr", "-n", "-P", "show", "cluster"], timeout=60)
        _must(["sacctmgr", "-i", "add", "cluster", CLUSTER])

    def stop(self) -> None:
        for name in ("slurmd", "slurmctld", "slurmdbd", "mariadbd", "munged"):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if os.environ.get("SLURM_CONF") == str(self.conf):
            if self.previous_conf is None:
                del os.environ["SLURM_CONF"]
            else:
                os.environ["SLURM_CONF"] = self.previous_conf
        shutil.rmtree(self.base, ignore_errors=True)


def start(*, cpus: int = 8, memory_mb: int = 8000, extra: str = "", accounting: bool = False) -> SlurmCluster:
    """Start munged, slurmctld and slurmd; SLURM_CONF set in os.environ. RuntimeError with the logs'
    folder when the node does not come up. `cpus` bounds how many one-CPU jobs run at once; `extra`
    is appended to slurm.conf (bench/slurm.py tries scheduler settings with it). `accounting`: also
    a private MariaDB and slurmdbd, before slurmctld, so that sacct knows the cluster's jobs."""
    base = Path(tempfile.mkdtemp(prefix="referee-slurm-"))
    base.chmod(0o755)  # munged wants the socket's folder reachable by everyone, not writable
    for sub in ("state", "spool", "munge"):
        (base / sub).mkdir()
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    (base / "munge").chmod(0o755)
    munge_socket = base / "munge" / "munge.sock"
    conf = base / "slurm.conf"
    dbd_port = _free_port()
    conf.write_text(
        CONF.format(
            cluster=CLUSTER,
            host=socket.gethostname(),
            ctld_port=_free_port(),
            slurmd_port=_free_port(),
            munge_socket=munge_socket,
            base=base,
            user=pwd.getpwuid(os.getuid()).pw_name,
            node=NODE,
            partition=PARTITION,
            urgent=URGENT,
            cpus=cpus,
            memory=memory_mb,
            accounting=ACCOUNTING.format(dbd_port=dbd_port, munge_socket=munge_socket) if accounting else NO_ACCOUNTING,
        )
        + extra
    )
    cluster = SlurmCluster(base=base, conf=conf, previous_conf=os.environ.get("SLURM_CONF"))
    cluster._daemon(
        "munged",
        [
            "munged",
            "-F",
            "--force",
            f"--socket={munge_socket}",
            f"--key-file={key}",
            f"--pid-file={base / 'munge' / 'munged.pid'}",
            f"--log-file={base / 'munge' / 'munged.log'}",
            f"--seed-file={base / 'munge' / 'munged.seed'}",
        ],
    )
    deadline = time.monotonic() + 10
    while not munge_socket.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.environ["SLURM_CONF"] = str(conf)
    try:
        if accounting:
            cluster.slurmdbd_start(munge_socket=munge_socket, dbd_port=dbd_port)
        cluster._daemon("slurmctld", ["slurmctld", "-D", "-i"])
        deadline = time.monotonic() + 30
        while True:
            ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, check=False).stdout
            if "is UP" in ping:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"slurmctld did not come up: {ping.strip()}; see {base}/slurmctld.log")
            time.sleep(0.2)
        cluster.slurmd_start()
    except BaseException:
        cluster.stop()
        raise
    return cluster
