"""`skill-eval cache info|clear`"""

from __future__ import annotations

import click

from ..cache import BaselineCache

_DIR = click.option("--baseline-cache-dir", required=True, metavar="DIR",
                    envvar="SKILL_EVAL_BASELINE_CACHE_DIR",
                    help="The baseline cache directory [env SKILL_EVAL_BASELINE_CACHE_DIR].")


@click.group("cache")
def command() -> None:
    """Inspect or empty the baseline cache."""


@command.command("info")
@_DIR
def info(baseline_cache_dir: str) -> None:
    """List cached baselines with their age."""
    from pathlib import Path

    cache = BaselineCache(Path(baseline_cache_dir))
    data = cache.info()
    cache.close()
    entries = data["entries"]
    click.echo(f"{data['directory']}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, "
               f"{data['size_bytes']} bytes, ttl {int(data['ttl_seconds'])} s")
    for entry in entries:
        if "error" in entry:
            click.echo(f"  {entry['key'][:16]}  unreadable: {entry['error']}")
        else:
            click.echo(f"  {entry['key'][:16]}  {entry['attempts']} attempts, "
                       f"age {entry['age_seconds']} s")


@command.command("clear")
@_DIR
def clear(baseline_cache_dir: str) -> None:
    """Remove every cached baseline."""
    from pathlib import Path

    cache = BaselineCache(Path(baseline_cache_dir))
    removed = cache.clear()
    cache.close()
    click.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'}")
