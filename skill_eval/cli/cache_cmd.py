"""`skill-eval cache info|clear`"""

from __future__ import annotations

from pathlib import Path

import click

from ..engine.cache import BaselineCache, clear_directory
from ..errors import CacheError, UsageError

_DIR = click.option(
    "--baseline-cache-dir",
    required=True,
    metavar="DIR",
    envvar="SKILL_EVAL_BASELINE_CACHE_DIR",
    help="The baseline cache directory [env SKILL_EVAL_BASELINE_CACHE_DIR].",
)


@click.group("cache")
def command() -> None:
    """Inspect or empty the baseline cache."""


def _existing(directory: str) -> Path:
    path = Path(directory)
    if not path.is_dir():
        raise UsageError(f"no baseline cache at {path}", path=str(path))
    return path


@command.command("info")
@_DIR
def info(baseline_cache_dir: str) -> None:
    """List cached baselines with their age."""
    try:
        cache = BaselineCache(_existing(baseline_cache_dir))
        data = cache.info()
        cache.close()
    except CacheError as exc:  # the way out, which `run` need not tell
        raise CacheError(f"{exc} (`skill-eval cache clear` empties it)", path=exc.path) from None
    entries = data["entries"]
    click.echo(
        f"{data['directory']}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, "
        f"{data['size_bytes']} bytes ({data['blob_bytes']} in stored outputs), "
        f"ttl {int(data['ttl_seconds'])} s"
    )
    for entry in entries:
        if "error" in entry:
            click.echo(f"  {entry['key'][:16]}  unreadable: {entry['error']}")
        else:
            runs = entry.get("runs", 1)
            click.echo(
                f"  {entry['key'][:16]}  {entry['attempts']} attempts of {runs} "
                f"run{'' if runs == 1 else 's'}, newest {entry['age_seconds']} s old"
            )


@command.command("clear")
@_DIR
def clear(baseline_cache_dir: str) -> None:
    """Remove every cached baseline (a corrupt cache is removed too)."""
    path = _existing(baseline_cache_dir)
    try:
        cache = BaselineCache(path)
        removed = cache.clear()
        cache.close()
    except CacheError:
        removed = clear_directory(path)
        click.echo(f"the cache was unreadable; removed its {removed} file(s)")
        return
    click.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'}")
