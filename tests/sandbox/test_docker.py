"""Docker specifics: the container really carries the limits and labels; backend_info."""

from __future__ import annotations

import pytest

from sandbox import SandboxSpec, SandboxUnavailable, backend_info, open_session, recipe
from sandbox.recipe import default_tag, inputs_hash

pytestmark = pytest.mark.docker


def test_it_starts_containers_with_every_restriction(sandbox_image: str) -> None:
    from sandbox import disk

    if disk.unavailable():
        pytest.skip(f"no loop-mounted disks here: {disk.unavailable()}")
    spec = SandboxSpec(memory_mb=300, disk_mb=100, cpus=0.5, pids=50, labels={"referee.run": "run-abc"})
    with open_session(spec, backend="docker") as session:
        session.container.reload()
        attrs = session.container.attrs
    host = attrs["HostConfig"]
    assert attrs["Config"]["Image"] == sandbox_image
    assert attrs["Config"]["User"] == "1000:1000"
    assert attrs["Config"]["Labels"]["referee.run"] == "run-abc"
    assert attrs["Config"]["Labels"]["referee.sandbox.session"] == session.id
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges:true" in host["SecurityOpt"]
    assert host["PidsLimit"] == 50
    assert host["NanoCpus"] == 500_000_000
    # RAM is what was asked: the workspace and /tmp are disks of their own, not tmpfs in RAM.
    assert host["Memory"] == host["MemorySwap"] == 300 << 20
    binds = {m["Destination"]: m for m in attrs["Mounts"]}
    assert binds["/workspace"]["RW"] is True and binds["/tmp"]["RW"] is True
    assert not host.get("Tmpfs")
    assert session.disks[0].source == binds["/workspace"]["Source"]


def test_it_opens_the_network_only_when_asked(sandbox_image: str) -> None:
    with open_session(SandboxSpec(network=True), backend="docker") as session:
        session.container.reload()
        mode = session.container.attrs["HostConfig"]["NetworkMode"]
    assert mode != "none"


def test_it_removes_the_container_on_close(sandbox_image: str) -> None:
    from sandbox.docker import sandbox_containers

    with open_session(SandboxSpec(), backend="docker") as session:
        ids = {c["id"] for c in sandbox_containers()}
        assert session.container.id in ids
    assert session.container.id not in {c["id"] for c in sandbox_containers()}


def test_it_says_which_backend_is_active_and_how_isolated(settings, sandbox_image: str) -> None:
    settings.SANDBOX_BACKEND = "docker"
    info = backend_info()
    settings.SANDBOX_IMAGE = "referee-sandbox:does-not-exist"
    missing = backend_info()
    assert info["backend"] == "docker" and info["available"] is True
    assert "no network" in info["isolation"] and sandbox_image in info["detail"]
    assert missing["available"] is False and "build_sandbox_image" in missing["detail"]
    with pytest.raises(SandboxUnavailable, match="build_sandbox_image"):
        open_session(SandboxSpec(), backend="docker")


def test_it_names_the_image_by_the_hash_of_its_inputs(monkeypatch) -> None:

    before = inputs_hash()
    monkeypatch.setattr(recipe, "DEBIAN_PACKAGES", (*recipe.DEBIAN_PACKAGES, "git"))
    assert inputs_hash() != before
    monkeypatch.undo()
    assert default_tag() == f"referee-sandbox:{before}"


def test_it_reports_an_unknown_backend() -> None:
    info = backend_info("vm")
    assert info["available"] is False and "unknown sandbox backend" in info["detail"]
