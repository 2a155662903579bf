"""The closed sets of the run plan that have no other home: how the run is set up (`Mode`),
where attempts run (`RunnerName`), and which agent workspaces are kept (`KeepPolicy`, the
workspace's own set, core/workspace.py)."""

from __future__ import annotations

from typing import Literal

from ..core.workspace import KEEP_POLICIES, KeepPolicy

Mode = Literal["standalone", "pipeline"]
MODES: tuple[Mode, ...] = ("standalone", "pipeline")

# Where attempts run: a thread pool in this process, or Ray tasks (skill_eval.backends).
RunnerName = Literal["threads", "ray"]
RUNNERS: tuple[RunnerName, ...] = ("threads", "ray")

__all__ = ["KEEP_POLICIES", "MODES", "RUNNERS", "KeepPolicy", "Mode", "RunnerName"]
