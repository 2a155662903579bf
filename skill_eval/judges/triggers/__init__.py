"""Trigger suites: does the skill's description make Claude load it when it should, and only
then? Trigger tasks and how they run (`tasks.py`), their implied judge, registered like any
other (`judge.py`), its role in a run (`role.py`: refusals, the `triggers` section, the
verdict guard, per-arm figures), and the figures per query and arm with the paired
comparison of two descriptions (`figures.py`). Their report section is in report/triggers.py."""
