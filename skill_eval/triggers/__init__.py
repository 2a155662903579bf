"""Trigger suites: does the skill's description make Claude load it when it should, and only
then? Trigger tasks (`tasks.py`), the implied judge (`judge.py`), and the figures per query
and arm with the paired comparison of two descriptions (`figures.py`)."""
