"""The formats `skill-eval report --format` renders an evaluation artifact in, by name: adding
one is its renderer module and one line here. Each entry renders `(artifact data, the
artifact's path)`; a renderer's module loads when its format is asked for (the HTML report's
jinja2 only then)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

Render = Callable[[Mapping[str, Any], str], str]

# name -> (module of this package, its function, whether it takes the artifact's path)
FORMATS: dict[str, tuple[str, str, bool]] = {
    "table": ("render", "render_table", False),
    "markdown": ("render", "render_markdown", True),
    "junit": ("junit", "render_junit", False),
    "json": ("render", "render_json", False),
    "html": ("html", "render_html", False),
}


def renderer(name: str) -> Render:
    """The renderer of format `name` (one of FORMATS)."""
    module, function, takes_path = FORMATS[name]
    render = getattr(import_module(f"{__package__}.{module}"), function)

    def rendered(data: Mapping[str, Any], artifact_path: str) -> str:
        text: str = render(data, artifact_path=artifact_path) if takes_path else render(data)
        return text

    return rendered


__all__ = ["FORMATS", "Render", "renderer"]
