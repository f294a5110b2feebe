"""What the agent's image holds: no file from which a built-in task's hidden rows can be read.

The digits and diabetes splits were cut from scikit-learn's bundled datasets, which used to be
in the image: matching a test row's pixels against digits.csv.gz gave its label. The scan below
runs inside a sandbox (what an agent sees, Docker and bwrap) over every file it can read,
decompressing gzip, bzip2, xz and zip members, and looks for any hidden row's features as a run
of numbers, in every form the source dataset stores them (diabetes: raw and scaled).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from benchmark.tasks.loader import BUILTIN_DIR
from sandbox import SandboxSpec, open_session, recipe
from sandbox.recipe import MANIFEST_PATH, PRUNE_SCRIPT, PRUNE_SPEC

SCANNER = r"""
import bz2, gzip, io, json, lzma, os, re, sys, zipfile

fingerprints = json.load(open(sys.argv[1]))
roots = sys.argv[2:] or ["/"]
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# Runs of at least 8 numbers separated by blanks, commas or semicolons (a table row, an array):
# the only places a row of features can be. Prose and code are skipped at regex speed.
RUN = re.compile(rb"(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[ \t,;]+){7,}-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
LIMIT = 64 << 20
SKIP = {"/proc", "/sys", "/dev", "/tmp", "/workspace", "/referee", "/referee-calls"}
sets = []
for name, rows in fingerprints.items():
    full = {tuple(row) for row in rows}
    sets.append((name, len(rows[0]), {row[:8] for row in full}, full))


def variants(data):
    yield data
    try:
        if data[:2] == b"\x1f\x8b":
            yield gzip.decompress(data)[:LIMIT]
        elif data[:3] == b"BZh":
            yield bz2.decompress(data)[:LIMIT]
        elif data[:6] == b"\xfd7zXZ\x00":
            yield lzma.decompress(data)[:LIMIT]
        elif data[:4] == b"PK\x03\x04":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member in archive.infolist()[:2000]:
                    if member.file_size <= LIMIT:
                        yield archive.read(member)
    except Exception:
        return


found, scanned = [], 0
for root, dirs, files in (entry for top in roots for entry in os.walk(top)):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
    for name in files:
        path = os.path.join(root, name)
        try:
            if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > LIMIT:
                continue
            with open(path, "rb") as handle:
                data = handle.read(8192)
                packed = data[:2] == b"\x1f\x8b" or data[:3] == b"BZh" or data[:6] == b"\xfd7zXZ\x00" or data[:4] == b"PK\x03\x04"
                if b"\x00" in data and not packed:
                    continue  # a binary file, not a table of numbers: the rest is not read
                data += handle.read()
        except OSError:
            continue
        scanned += 1
        for text in variants(data):
            if b"\x00" in text[:8192]:
                continue  # binary: not a table of numbers
            for run in RUN.finditer(text):
                numbers = tuple(round(float(x), 4) for x in NUMBER.findall(run.group()))
                for label, length, heads, full in sets:
                    for i in range(len(numbers) - length + 1):
                        if numbers[i:i + 8] in heads and numbers[i:i + length] in full:
                            if [label, path] not in found:
                                found.append([label, path])
                            break
print(json.dumps({"scanned": scanned, "found": found}))
"""


def _public_rows(slug: str, split: str) -> list[dict[str, str]]:
    with open(BUILTIN_DIR / slug / "workspace" / "data" / f"{split}.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def fingerprints() -> dict[str, list[list[float]]]:
    """Every hidden (dev, test) row's features, in each form its source dataset has them."""
    datasets = pytest.importorskip("sklearn.datasets", reason="the fingerprints come from sklearn's copy on the host")
    prints: dict[str, list[list[float]]] = {}
    digits = datasets.load_digits()
    diabetes, raw = datasets.load_diabetes(), datasets.load_diabetes(scaled=False)
    by_scaled = {tuple(f"{x:.6f}" for x in row): index for index, row in enumerate(diabetes.data)}
    for split in ("dev", "test"):
        rows = _public_rows("digits_classification", split)
        prints[f"digits {split}"] = [[float(row[f"pixel_{i}"]) for i in range(64)] for row in rows]
        source = {tuple(float(x) for x in row) for row in digits.data}
        assert all(tuple(p) in source for p in prints[f"digits {split}"])  # they are sklearn's rows
        rows = _public_rows("diabetes_regression", split)
        columns = list(diabetes.feature_names)
        scaled = [tuple(row[c] for c in columns) for row in rows]
        prints[f"diabetes {split} (scaled)"] = [[round(float(x), 4) for x in row] for row in scaled]
        prints[f"diabetes {split} (raw)"] = [[round(float(x), 4) for x in raw.data[by_scaled[row]]] for row in scaled]
    return prints


# bwrap on the host's /usr (no SANDBOX_BWRAP_ROOTFS): that is the host's whole system (gigabytes
# of the admin's software, minutes to scan); what an agent can import data from there is on
# Python's paths and under /usr/share, which is what is scanned then.
HOST_ROOTS = (
    '$(python3 -c \'import sys; print(" ".join(p for p in sys.path if p.startswith("/")))\') /usr/share /etc /opt'
)


def scan(backend: str, settings) -> dict:
    roots = ""
    if backend == "bwrap":
        from sandbox.image import cached_rootfs

        rootfs = cached_rootfs()
        if rootfs is not None:
            settings.SANDBOX_BWRAP_ROOTFS = str(rootfs)  # the image's own files, scanned whole
        elif not settings.SANDBOX_BWRAP_ROOTFS:
            roots = HOST_ROOTS
    with open_session(SandboxSpec(network=False, disk_mb=256), backend=backend) as session:
        session.put_file("scan.py", SCANNER.encode())
        session.put_file("fingerprints.json", json.dumps(fingerprints()).encode())
        result = session.run(f"python3 scan.py fingerprints.json {roots}", timeout=900)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def test_it_finds_hidden_rows_where_they_are(backend) -> None:
    """The scan itself works: a copy of sklearn's digits file in the sandbox is found."""
    import sklearn.datasets

    source = Path(sklearn.datasets.__file__).parent / "data" / "digits.csv.gz"
    sample = [int(row) for row in fingerprints()["digits test"][0]]  # one hidden row, as a Python list
    with open_session(SandboxSpec(network=False, disk_mb=256), backend=backend) as session:
        session.put_file("scan.py", SCANNER.encode())
        session.put_file("fingerprints.json", json.dumps(fingerprints()).encode())
        session.put_file("copy/digits.csv.gz", source.read_bytes())
        session.put_file("copy/inline.py", b"ROW = [" + b", ".join(b"%d" % v for v in sample) + b"]\n")
        result = session.run("python3 scan.py fingerprints.json /workspace/copy", timeout=900)
    found = json.loads(result.output.strip().splitlines()[-1])["found"]
    assert sorted(found) == [
        ["digits dev", "/workspace/copy/digits.csv.gz"],
        ["digits test", "/workspace/copy/digits.csv.gz"],
        ["digits test", "/workspace/copy/inline.py"],
    ]


def test_it_holds_no_hidden_row_of_any_builtin_task(backend, settings) -> None:
    report = scan(backend, settings)
    assert report["scanned"] > 1000  # it did look at the system files
    assert report["found"] == []


@pytest.mark.docker
def test_it_says_in_the_image_manifest_what_was_removed_and_why(sandbox_image) -> None:
    with open_session(SandboxSpec(network=False), backend="docker") as session:
        manifest = json.loads(session.get_file(MANIFEST_PATH))
        attack = session.run(
            "python3 -c 'from sklearn.datasets import load_digits; load_digits()' 2>&1 | tail -1", timeout=60
        )
    (entry,) = [e for e in manifest["removed"] if e["package"] == "sklearn"]
    removed = {Path(p).name for p in entry["removed"]}
    assert {"digits.csv.gz", "diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"} <= removed
    assert "hidden splits" in entry["why"]
    assert any(p.startswith("scikit-learn==") for p in manifest["python_packages"])
    assert "FileNotFoundError" in attack.output and "digits.csv.gz" in attack.output


def test_it_prunes_the_same_files_in_both_image_builds(monkeypatch, tmp_path) -> None:

    dockerfile = (recipe.IMAGES_DIR / "Dockerfile").read_text()
    assert "COPY requirements.txt manifest.json prune.py" in dockerfile
    assert f"prune.py /tmp/build/manifest.json {MANIFEST_PATH}" in dockerfile
    assert PRUNE_SCRIPT.is_file()
    spec = json.loads(PRUNE_SPEC.read_text())
    assert {entry["package"] for entry in spec["removed"]} == {"sklearn"}
    # The image's tag names what is pruned: a change to the list is a new image.
    before = recipe.inputs_hash()
    changed = tmp_path / "manifest.json"
    changed.write_text(json.dumps({"removed": [*spec["removed"], {"package": "x", "path": "y", "why": "z"}]}))
    monkeypatch.setattr(recipe, "PRUNE_SPEC", changed)
    assert recipe.inputs_hash() != before
