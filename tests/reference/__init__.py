"""Reference implementations written from the project specification alone (not skcal's source).

Deliberately simple: loops over bins, grid points and intervals; clarity over speed.
"""
