"""The replicates of an out-of-core report above exact_rows, summed on one grid of units.

:class:`~skcal.report._replicate_grid.ReplicateGrid` must give every measure's replicates as
one :class:`~skcal.stats.PoissonBootstrap` of the measure's template updated with the same rows
gives them (to round-off), on any data: the adversarial rows below sit on the nodes of smECE's
``E``-point grids, on the edges of the fine cells and of the binned error's bins, at 0 and 1, and
in one cell. Any chunking, and merging in place or not, gives the same sums.
"""

from __future__ import annotations

import numpy as np
import pytest

from skcal._catalog import measure
from skcal.report._compute import ReportSettings
from skcal.report._outofcore import OutOfCorePlan, merge_chunk_statistics
from skcal.report._replicate_grid import (
    CHANNELS_PER_UNIT,
    GridReplicates,
    ReplicateGrid,
    smece_grid_points,
)
from skcal.stats import PoissonBootstrap
from skcal.stats._smooth_ece import FINE_CELLS

MODELS = ["a", "b"]
B = 5


def _plan(n_total=3 * 10**6, metrics=None, n_bootstrap=B, **kw):
    settings = ReportSettings(n_bootstrap=n_bootstrap, n_resamples=50, random_state=0)
    return OutOfCorePlan(n_total, MODELS, metrics, settings, exact_rows=10**5, **kw)


def _per_measure(plan, y, preds, offset, r0=0, count=B):
    """The replicates of every model and metric through one PoissonBootstrap per measure."""
    out = np.empty((count, len(preds), len(plan.base_names)))
    for i, p in enumerate(preds):
        for j, name in enumerate(plan.base_names):
            boot = PoissonBootstrap(
                plan.replicate_template(name), n_replicates=count, first_replicate=r0, seed=plan.seed
            )
            if measure(name).rows is not None:
                boot.update(measure(name).rows(y, p), row_offset=offset)
            else:
                boot.update(y, p, row_offset=offset)
            out[:, i, j] = boot.compute()
    return out


def _adversarial(n, seed):
    rng = np.random.default_rng(seed)
    nodes = np.concatenate([np.arange(E) / (E - 1) for E in smece_grid_points()])
    fine_edges = rng.integers(0, FINE_CELLS + 1, size=2000) / FINE_CELLS
    bin_edges = np.arange(12) / 11
    parts = [
        rng.choice(nodes, size=n // 5),
        np.nextafter(rng.choice(nodes, size=n // 10), 0.0),  # just below a node
        rng.choice(fine_edges, size=n // 10),
        np.repeat(bin_edges, n // 110),
        np.full(n // 20, 0.0),
        np.full(n // 20, 1.0),
        np.full(n // 20, 0.3),  # one cell, many rows
        rng.beta(0.4, 0.4, size=n // 5),
    ]
    p = np.clip(np.concatenate(parts), 0.0, 1.0)
    p = p[rng.permutation(p.size)]
    y = (rng.uniform(size=p.size) < p).astype(float)
    return y, p


@pytest.fixture(scope="module")
def rows():
    y, p = _adversarial(40_000, 1)
    rng = np.random.default_rng(2)
    q = np.clip(p + rng.normal(0, 0.05, size=p.size), 0.0, 1.0)
    return y, [p, q]


def test_the_grid_replicates_equal_the_per_measure_bootstrap_on_adversarial_rows(rows):
    y, preds = rows
    plan = _plan()
    assert plan.mode == "grid"
    part = plan.chunk(777, y, dict(zip(MODELS, preds, strict=True)), block=0, point=False)
    got = plan.reduce_pass(part).boot
    want = _per_measure(plan, y, preds, 777)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    # the per-measure values differ between replicates (the comparison is not vacuous)
    assert np.all(np.ptp(want, axis=0)[:, :5] > 0)


@pytest.mark.parametrize(
    "metrics", [["smooth_ece"], ["scdl", "brier"], ["binned_ece", "cutoff"], ["log_loss"]]
)
def test_a_metric_subset_on_the_grid(rows, metrics):
    y, preds = rows
    plan = _plan(metrics=metrics)
    part = plan.chunk(0, y, dict(zip(MODELS, preds, strict=True)), block=0, point=False)
    np.testing.assert_allclose(
        plan.reduce_pass(part).boot, _per_measure(plan, y, preds, 0), rtol=1e-9, atol=1e-15
    )


def test_any_chunking_and_merge_give_the_same_sums(rows):
    y, preds = rows
    plan = _plan(n_bootstrap=8, replicate_block=4)
    assert plan.blocks == ((0, 4), (4, 4))
    full = plan.chunk(0, y, dict(zip(MODELS, preds, strict=True)), block=1, point=False).boot
    cuts = [0, 1, 999, 20_000, y.size]
    acc = None
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        acc = plan.fold(acc, a, y[a:b], {m: p[a:b] for m, p in zip(MODELS, preds, strict=True)}, block=1)
    for x, z in zip(full.acc + full.dense, acc.boot.acc + acc.boot.dense, strict=True):
        np.testing.assert_allclose(z, x, rtol=1e-12, atol=1e-9)
    # a copying merge leaves its inputs alone; merging blocks of different replicates fails
    parts = [plan.chunk(a, y[a:b], {m: p[a:b] for m, p in zip(MODELS, preds, strict=True)}, block=1)
             for a, b in ((0, 999), (999, y.size))]
    before = parts[0].boot.acc[0].copy()
    merged = merge_chunk_statistics(parts)
    np.testing.assert_array_equal(parts[0].boot.acc[0], before)
    np.testing.assert_allclose(merged.boot.acc[0], full.acc[0], rtol=1e-12, atol=1e-9)
    other = GridReplicates(plan.grid, len(MODELS), 0, 4, plan.seed)
    with pytest.raises(ValueError, match="different blocks"):
        other.merge(full)
    # the replicates of the second block are the per-measure bootstrap's replicates 4..7
    np.testing.assert_allclose(
        plan.reduce_pass(acc).boot, _per_measure(plan, y, preds, 0, r0=4, count=4), rtol=1e-9, atol=1e-15
    )


def test_the_units_nest_in_every_grid_and_split_at_the_special_cells():
    plan = _plan(n_total=10**8)
    grid = plan.grid
    assert grid.G == 1 << 16 and grid.size == CHANNELS_PER_UNIT * grid.U
    # units are runs of fine cells inside one coarse cell; the units sit in increasing order
    base = grid.fine[: grid.unit_of_fine.max() + 1]
    assert np.all(np.diff(base) > 0)
    assert np.all(grid.unit_of_fine[base] == np.arange(base.size))
    assert np.all((grid.fine >> grid.shift) == grid.coarse)
    # about 86,000 units (65,536 coarse cells, split at 14,576 special fine cells, 10 bin edges)
    assert 65_536 < grid.U < 100_000
    assert smece_grid_points() == [1001, 1025, 1139, 1281, 1464, 1707, 2049, 2561, 3414, 5121]


def test_the_grid_refuses_grids_that_do_not_nest():
    from skcal.stats import CutoffGridStatistics

    with pytest.raises(ValueError, match="powers of two"):
        ReplicateGrid({"cutoff": CutoffGridStatistics(n_cells=1000)}, {})


def test_the_block_size_keeps_the_state_in_its_budget():
    from skcal.report._outofcore import GRID_BLOCK_BYTES

    plan = _plan(n_total=10**8, n_bootstrap=200)
    size = plan.blocks[0][1]
    per = 8 * len(MODELS) * (plan.grid.size + len(plan.grid.dense))
    assert size * per <= GRID_BLOCK_BYTES < (size + 1) * per
    assert sum(c for _, c in plan.blocks) == 200
    assert plan.passes()[0] == (0, True) and all(not point for _, point in plan.passes()[1:])


def test_the_one_logarithm_log_loss_rows_equal_the_reports():
    from skcal.report._replicate_grid import _binary_log_loss_rows

    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(size=1000), [0.0, 1.0, 1e-300, 1 - 1e-17]])
    y = (rng.uniform(size=p.size) < 0.5).astype(float)
    np.testing.assert_array_equal(_binary_log_loss_rows(y, p), measure("log_loss").rows(y, p))
