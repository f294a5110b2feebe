"""Bootstrap means of many per-item vectors over one set of item draws.

The equivalence test (core.tost) reads a percentile interval of the mean over B = 2,000 item
resamples, and the analysis runs it once per criterion and judge view (15 times on a campaign
of 5 criteria and 2 judges). Each call drew the same B x n index matrix (a fresh generator with
the same seed and the same n) and gathered B x n values: 2 x 2 million numbers per call, a fifth
of a 1,000-item campaign's analysis (cProfile, CPU time: 0.34 of 1.53 s).

Here the draws are made once per (n, B, seed) and kept as cumulative draw counts
C[b, k] = number of draws of resample b that fall below sorted position k. A resample's mean of
a sorted vector is then sum over its runs of equal values (count in the run x value) / n: the
run counts are C[:, end] - C[:, start], so a call costs B x (number of distinct values), not
B x n. The draws are those of `rng.integers(0, n, size=(B, n))` with `default_rng(seed)`, as
before; only the order of the floating-point additions inside each resample's mean differs
(tests/agreement/stats/test_resample.py compares the two).
"""

from __future__ import annotations

import numpy as np


def draw_counts(n: int, n_boot: int, seed: int) -> np.ndarray:
    """(B, n + 1) cumulative counts of `default_rng(seed).integers(0, n, size=(B, n))` per resample."""
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    idx += (np.arange(n_boot) * n)[:, None]
    counts = np.bincount(idx.ravel(), minlength=n_boot * n).reshape(n_boot, n)
    del idx
    # int32: a count never exceeds n, and the matrix is half the size of int64 (80 MB at 10,000 items).
    cum = np.zeros((n_boot, n + 1), dtype=np.int32)
    np.cumsum(counts, axis=1, out=cum[:, 1:])
    return cum


class ResampledMeans:
    """Bootstrap means of sorted vectors, the draws shared by every vector of the same length.

    One instance lives for one analysis (suite.analyse): the cumulative counts it keeps are
    B x (n + 1) int32 per distinct n, freed with it."""

    def __init__(self, n_boot: int, seed: int) -> None:
        self.n_boot = n_boot
        self.seed = seed
        self._counts: dict[int, np.ndarray] = {}

    def means(self, ordered: np.ndarray) -> np.ndarray:
        """The B resample means of `ordered` (sorted ascending, no NaN)."""
        n = len(ordered)
        cum = self._counts.get(n)
        if cum is None:
            cum = self._counts[n] = draw_counts(n, self.n_boot, self.seed)
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        ends = np.append(starts[1:], n)
        runs = (cum[:, ends] - cum[:, starts]).astype(np.float64)
        # einsum, not @: a small product, and BLAS threads only contend for a busy CPU (as in core.py).
        return np.einsum("br,r->b", runs, ordered[starts]) / n
