"""Loaded (as sitecustomize) only in the sandbox that runs MLGym's own data-split scripts at build
time (benchmark/tasks/mlgym_build.py), never where an agent or an evaluator runs.

MLGym's regressionKaggleHousePrice/_helpers/_generate_split.py calls
``df.drop(columns=[...], axis=1)``: pandas 2 ignored the redundant ``axis``, pandas 3 (the sandbox
image's) raises "Cannot specify both 'axis' and 'index'/'columns'". Dropping the redundant
argument gives the split pandas 2 gave; nothing else of pandas changes.
"""

try:
    import pandas
except ImportError:  # no pandas, nothing to adapt
    pandas = None

if pandas is not None:
    _drop = pandas.DataFrame.drop

    def drop(self, *args, **kwargs):
        if ("columns" in kwargs or "index" in kwargs) and "axis" in kwargs:
            kwargs.pop("axis")
        return _drop(self, *args, **kwargs)

    pandas.DataFrame.drop = drop
