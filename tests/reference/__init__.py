"""Reference implementations written from /work/shared/SPEC.md alone (not from skcal's source).

Deliberately simple: loops over bins, grid points and intervals; clarity over speed.
"""
