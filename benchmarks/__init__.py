"""The benchmark scripts of skcal: the papers' experiments reproduced, speed and memory measured.

Each script is a module of this package, run from the repository root::

    python -m benchmarks.rate --quick
    python -m benchmarks.speed_truthful

and writes JSON (with a ``"provenance"`` block) and figures to ``benchmarks/results/``
(``benchmarks/results/quick/`` with ``--quick``). ``python benchmarks/verify.py`` reruns the quick
modes against the stored ones. The scripts share one harness, :mod:`benchmarks._harness` (how to
write a new script: its module docstring and ``benchmarks/README.md``). This package is not part
of the installed skcal; it only uses skcal.
"""
