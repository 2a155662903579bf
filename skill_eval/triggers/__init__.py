"""Trigger suites: does the skill's description make Claude load it when it should, and only
then? Trigger tasks and how they run (`tasks.py`), the run's rules for them (`run.py`), and
the figures per query and arm with the paired comparison of two descriptions (`figures.py`).
Their implied judge is a registered one (judges/triggered.py); their report section is in
report/triggers.py."""
