"""The fast resampling paths against the straightforward computation they replace: the TOST's
bootstrap means over shared item draws (agreement/stats/resample.py) and the Hodges-Lehmann
estimate counted over distinct values (core.hodges_lehmann).

The draws are the same as before (one `default_rng(seed).integers(0, n, size=(B, n))` matrix);
a resample's mean adds the same values in another order, so the means agree to rounding (1e-12
here) and the intervals and decisions built from them are the same."""

from __future__ import annotations

import numpy as np
import pytest

from agreement.stats import core as st
from agreement.stats.resample import ResampledMeans


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(11)


def per_resample_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The stock path: draw every resample's item indices and average each resample in turn."""
    ordered = np.sort(values)
    idx = np.random.default_rng(seed).integers(0, len(ordered), size=(n_boot, len(ordered)))
    return np.array([ordered[row].mean() for row in idx])


def walsh_median(d: np.ndarray) -> float:
    """The stock Hodges-Lehmann: list all n(n+1)/2 Walsh averages and take their median."""
    i, k = np.triu_indices(len(d))
    return float(np.median((d[i] + d[k]) / 2.0))


def on_grid(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per-item differences as a campaign gives them: a judges' mean minus a mean of three reviews."""
    judge = rng.integers(1, 11, (n, 2)).mean(axis=1)
    humans = rng.integers(1, 11, (n, 3)).mean(axis=1)
    return judge - humans


@pytest.mark.parametrize("kind", ["grid", "continuous", "constant runs"])
def test_it_gives_the_per_resample_means_of_the_same_draws(rng: np.random.Generator, kind: str) -> None:
    n = 137
    values = {
        "grid": on_grid(rng, n),
        "continuous": rng.normal(0.2, 1.0, n),
        "constant runs": np.repeat([-1.0, 0.5, 2.0], [40, 90, 7]),
    }[kind]
    fast = ResampledMeans(500, seed=7).means(np.sort(values))
    assert fast == pytest.approx(per_resample_means(values, 500, seed=7), rel=0, abs=1e-12)


def test_it_reuses_draws_only_for_vectors_of_the_same_length(rng: np.random.Generator) -> None:
    shared = ResampledMeans(300, seed=2)
    a, b, c = on_grid(rng, 80), on_grid(rng, 55), on_grid(rng, 80)
    for v in (a, b, c):  # lengths 80, 55, 80: the third call reads the draws the first made
        assert shared.means(np.sort(v)) == pytest.approx(per_resample_means(v, 300, seed=2), rel=0, abs=1e-12)


def test_it_gives_the_tost_interval_of_the_per_resample_computation(rng: np.random.Generator) -> None:
    excess = on_grid(rng, 400) / 3
    shared = ResampledMeans(2000, seed=5)
    for margin in (0.05, 0.2, 0.5):
        rec = st.tost(excess, margin, 0.05, n_boot=2000, seed=5, resampled=shared)
        means = per_resample_means(excess, 2000, seed=5)
        lo, hi = np.quantile(means, 0.05), np.quantile(means, 0.95)
        assert (rec["ci_low"], rec["ci_high"]) == pytest.approx((lo, hi), rel=0, abs=1e-12)
        assert rec["extra"]["equivalent"] == bool(-margin < lo and hi < margin)
        assert rec["extra"]["outside"] == bool(lo > margin or hi < -margin)
        # a call without the shared draws (or with draws of another seed) gives the same record
        assert st.tost(excess, margin, 0.05, n_boot=2000, seed=5) == rec
        assert st.tost(excess, margin, 0.05, n_boot=2000, seed=5, resampled=ResampledMeans(2000, seed=6)) == rec


@pytest.mark.parametrize("n", [1, 2, 7, 50, 333, 1000])
def test_it_gives_the_median_of_all_walsh_averages(rng: np.random.Generator, n: int) -> None:
    d = on_grid(rng, n)
    assert st.hodges_lehmann(d) == walsh_median(d)  # same averages, same median: exactly equal
    c = rng.normal(0.0, 1.0, n)  # all values distinct: the averages are listed as before
    assert st.hodges_lehmann(c) == walsh_median(c)


def test_it_takes_the_middle_pair_when_the_walsh_averages_are_even_in_number() -> None:
    # 7 differences, 3 distinct values (counted, not listed): 28 averages whose 14th and 15th
    # are 0.5 and 1, so the median is 0.75
    d = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 3.0, 3.0])
    assert st.hodges_lehmann(d) == walsh_median(d) == 0.75
