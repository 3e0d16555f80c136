"""Reliability suite: threads, scale, memory, faults, misuse, fuzzing and anomaly mode.

Tests marked ``stress`` are the full-size runs (``nox -s stress``); everything else is the quick
form that ``nox -s tests`` runs.
"""
