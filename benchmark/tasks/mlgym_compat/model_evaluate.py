"""Runs MLGym's pristine evaluate.py (argv[1]) as ``__main__`` with pickle limited to data.

MLGym's model tasks (its RL tasks) load the submitted checkpoints with ``pickle.load``: a pickle
can name any callable, so a crafted checkpoint would run the agent's code inside the evaluator
and could print any metrics. Here ``pickle.load``/``pickle.loads`` only rebuild what a checkpoint
of MLGym's training code holds (dicts, lists, numbers, NumPy and JAX arrays, flax's FrozenDict,
dotmap's DotMap); any other global in the file is refused and the evaluation fails with the name.
Copied into each built evaluator folder by benchmark/tasks/mlgym_build.py; its bytes are part of
the task version.
"""

import io
import pickle
import runpy
import sys
from pathlib import Path

ALLOWED = {
    ("builtins", "dict"),
    ("builtins", "list"),
    ("builtins", "tuple"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "int"),
    ("builtins", "float"),
    ("builtins", "complex"),
    ("builtins", "bool"),
    ("builtins", "str"),
    ("builtins", "bytes"),
    ("builtins", "bytearray"),
    ("collections", "OrderedDict"),
    ("collections", "defaultdict"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("jax._src.array", "_reconstruct_array"),
    ("flax.core.frozen_dict", "FrozenDict"),
    ("dotmap", "DotMap"),
}
# NumPy's scalar types (numpy.float32, numpy.dtypes.Float32DType...) are classes of data too.
NUMPY_DATA_MODULES = {"numpy", "numpy.dtypes"}


class DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        if module in NUMPY_DATA_MODULES and not name.startswith("_"):
            found = super().find_class(module, name)
            import numpy

            if isinstance(found, type) and (issubclass(found, numpy.generic) or issubclass(found, numpy.dtype)):
                return found
        raise pickle.UnpicklingError(
            f"the checkpoint names {module}.{name}, which is not data: Referee loads checkpoints as data only "
            "(dicts, lists, numbers, NumPy/JAX arrays, FrozenDict, DotMap)"
        )


def load(file, **kwargs):
    return DataOnlyUnpickler(file, **kwargs).load()


def loads(data, /, **kwargs):
    return DataOnlyUnpickler(io.BytesIO(data), **kwargs).load()


def main() -> None:
    script = Path(sys.argv[1]).resolve()
    pickle.load, pickle.loads = load, loads
    pickle.Unpickler = DataOnlyUnpickler
    sys.argv = [str(script), *sys.argv[2:]]
    sys.path[0] = str(script.parent)  # as `python evaluate.py`: its folder first (MLGym's src/ package)
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
