"""Withhold the scored split's labels from a local copy of a Hugging Face dataset (run at build time in a
sandbox without network, on the task's image, by benchmark.tasks.mlgym_build; pyarrow only, which
`datasets` depends on).

    python3 hub_split.py <source folder> <out folder> <layout> <scored split> <label column> <files.json>

files.json maps each split to its files (relative to the source). Writes:
- parquet layout: <out>/agent/<file> for the scored split's files, labels set to -1 (the other splits are
  copied by the worker as they are);
- save_to_disk layout: every split as <out>/evaluator/data/<split>-00000-of-00001.parquet (untouched)
  and <out>/agent/data/<split>-00000-of-00001.parquet (the scored one with labels -1): load_dataset(folder)
  reads parquet files, not a save_to_disk folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq


def read_arrow(path: Path) -> pa.Table:
    with path.open("rb") as handle:
        try:
            return ipc.open_stream(handle).read_all()  # what save_to_disk writes
        except pa.ArrowInvalid:
            handle.seek(0)
            return ipc.open_file(handle).read_all()


def withhold(table: pa.Table, label: str) -> pa.Table:
    if label not in table.column_names:
        raise SystemExit(f"the scored split has no column {label!r} (its columns: {', '.join(table.column_names)})")
    index = table.column_names.index(label)
    field = table.schema.field(index)
    # -1: ClassLabel's missing label (an integer column); any other type gets nulls.
    blank = (
        pa.array([-1] * table.num_rows, type=field.type)
        if pa.types.is_integer(field.type)
        else pa.nulls(table.num_rows, type=field.type)
    )
    return table.set_column(index, field, blank).replace_schema_metadata(table.schema.metadata)


def with_features(table: pa.Table, split_dir: Path) -> pa.Table:
    """The split's features as `datasets` writes them into parquet metadata, so that load_dataset restores
    Image and ClassLabel columns from the parquet files."""
    metadata = dict(table.schema.metadata or {})
    if b"huggingface" in metadata:
        return table
    info = split_dir / "dataset_info.json"
    if info.is_file():
        features = json.loads(info.read_text()).get("features")
        if features:
            metadata[b"huggingface"] = json.dumps({"info": {"features": features}}).encode()
    return table.replace_schema_metadata(metadata)


def main(source: Path, out: Path, layout: str, split: str, label: str, files: dict[str, list[str]]) -> None:
    if layout == "parquet":
        for name in files[split]:
            target = out / "agent" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(withhold(pq.read_table(source / name), label), target)
        return
    for name, members in files.items():
        arrows = sorted(source / member for member in members if member.endswith(".arrow"))
        table = with_features(pa.concat_tables([read_arrow(path) for path in arrows]), source / name)
        for side, data in (("evaluator", table), ("agent", withhold(table, label) if name == split else table)):
            target = out / side / "data" / f"{name}-00000-of-00001.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(data, target)


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        Path(sys.argv[2]),
        sys.argv[3],
        sys.argv[4],
        sys.argv[5],
        json.loads(Path(sys.argv[6]).read_text()),
    )
