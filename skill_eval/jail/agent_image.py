"""The image the docker provider runs where it cannot show this machine's system (macOS,
Windows, `--jail docker:IMAGE`): containers/agent-jail/Dockerfile builds it with Python,
pytest and the agent CLIs, pinned, and labels it with the version of each npm package it
installed. A run on an image whose labels differ from the pins (or that has none: not built
from that Dockerfile) says so in its artifact: its agents are not the ones skill-eval is
tested against. The executors run that image's CLIs (providers.image_programs: by their
command name, on IMAGE_PATH) and take their versions from those labels.

The pins are the agent executors' own (ExecutorSpec.package, executors/catalog.py
`pinned_packages`), handed in: the jail names no agent. tests/test_docker_provider.py keeps
them equal to the Dockerfile's and the install scripts'.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_IMAGE = "skill-eval-agent"
LABEL = "org.skill-eval.npm."  # + the npm package's name: the version the image holds
# The PATH a program of the image runs with: `npm install -g` puts the agent CLIs in
# /usr/local/bin (the Dockerfile), the system's programs are in /usr/bin and /bin.
IMAGE_PATH = "/usr/local/bin:/usr/bin:/bin"


def pins_differ(image: str, labels: Mapping[str, str], pins: Mapping[str, str]) -> str | None:
    """What to say of `image` given its labels: None when it holds every package of `pins`
    ({package: version}) at its pin."""
    if not any(key.startswith(LABEL) for key in labels):
        return (
            f"the docker image {image} was not built from containers/agent-jail/Dockerfile (no "
            f"{LABEL}* labels): its agent CLIs' versions are unknown"
        )
    off = [
        f"{package} {labels.get(LABEL + package, 'missing')} (pinned: {pin})"
        for package, pin in pins.items()
        if labels.get(LABEL + package) != pin
    ]
    if not off:
        return None
    return f"the docker image {image} holds agent CLIs not at skill-eval's pins: {', '.join(off)}"


__all__ = ["DEFAULT_IMAGE", "IMAGE_PATH", "LABEL", "pins_differ"]
