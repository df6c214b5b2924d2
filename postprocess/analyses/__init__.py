"""Analyses: tidy frame in, tidy frame out, each with declared columns (``COLUMNS``)."""
