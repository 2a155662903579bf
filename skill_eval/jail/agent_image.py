"""The image the docker provider runs where it cannot show this machine's system (macOS,
Windows, `--jail docker:IMAGE`): containers/agent-jail/Dockerfile builds it with Python,
pytest and the agent CLIs, pinned, and labels it with the version of each npm package it
installed. A run on an image whose labels differ from the pins below (or that has none: not
built from that Dockerfile) says so in its artifact: its agents are not the ones skill-eval
is tested against.

The pins are scripts/install_claude_cli.sh's and scripts/install_agents.sh's defaults (the
Claude Code CLI the `agent` extra bundles is the same version); tests/test_docker_provider.py
keeps the three places equal.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_IMAGE = "skill-eval-agent"
LABEL = "org.skill-eval.npm."  # + the npm package's name: the version the image holds
PINS = {
    "@anthropic-ai/claude-code": "2.1.330",
    "opencode-ai": "1.18.33",
    "@openai/codex": "0.171.0",
}


def pins_differ(image: str, labels: Mapping[str, str]) -> str | None:
    """What to say of `image` given its labels: None when it holds every pinned package at
    its pin."""
    if not any(key.startswith(LABEL) for key in labels):
        return (
            f"the docker image {image} was not built from containers/agent-jail/Dockerfile (no "
            f"{LABEL}* labels): its agent CLIs' versions are unknown"
        )
    off = [
        f"{package} {labels.get(LABEL + package, 'missing')} (pinned: {pin})"
        for package, pin in PINS.items()
        if labels.get(LABEL + package) != pin
    ]
    if not off:
        return None
    return f"the docker image {image} holds agent CLIs not at skill-eval's pins: {', '.join(off)}"


__all__ = ["DEFAULT_IMAGE", "LABEL", "PINS", "pins_differ"]
