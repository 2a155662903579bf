"""The closed sets of the run plan that have no other home: how the run is set up (`Mode`),
where attempts run (`RunnerName`) and which agent workspaces are kept (`KeepPolicy`). A leaf
module (no imports), so the engine modules that act on these values can import them too."""

from __future__ import annotations

from typing import Literal

Mode = Literal["standalone", "pipeline"]
MODES: tuple[Mode, ...] = ("standalone", "pipeline")

# Where attempts run: a thread pool in this process, or Ray tasks (skill_eval.backends).
RunnerName = Literal["threads", "ray"]
RUNNERS: tuple[RunnerName, ...] = ("threads", "ray")

# Which final workspaces of agent tasks are kept under <run>/workspaces/ (engine/workspace.py).
KeepPolicy = Literal["none", "failed", "all"]
KEEP_POLICIES: tuple[KeepPolicy, ...] = ("none", "failed", "all")

__all__ = ["KEEP_POLICIES", "MODES", "RUNNERS", "KeepPolicy", "Mode", "RunnerName"]
