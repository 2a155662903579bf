"""The command line every fake model server shares: `--rules`, `--fault SPEC`, `--latency`,
`--record`, ..., and serving until SIGINT or SIGTERM with the base URL printed first.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from tests.fakes.faults import Fault
from tests.fakes.rules import load_config
from tests.fakes.server import FakeServer, FaultLike


def parse_fault(spec: str) -> Fault:
    """`KIND[:first=N|nth=N,M|rate=P][:retry_after=S][:path=GLOB][:message=TEXT]` -> Fault."""
    kind, *options = spec.split(":")
    kwargs: dict[str, Any] = {}
    for option in options:
        key, _, value = option.partition("=")
        if key == "nth":
            kwargs[key] = [int(v) for v in value.split(",")]
        elif key in ("first", "retry_after_ms"):
            kwargs[key] = int(value)
        elif key in ("rate", "retry_after"):
            kwargs[key] = float(value)
        elif key in ("path", "message"):
            kwargs[key] = value
        else:
            raise ValueError(f"--fault {spec}: unknown option {key!r}")
    return Fault(kind=kind, **kwargs)


def common_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The flags every fake server's command line has."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--rules", type=Path, help="YAML or JSON rules file")
    parser.add_argument("--latency", type=float, help="seconds before every reply")
    parser.add_argument("--seed", type=int, help="seed for rate-based faults")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="SPEC",
        help="KIND[:first=N|nth=N,M|rate=P][:retry_after=S][:retry_after_ms=MS]"
        "[:path=GLOB][:message=TEXT]; repeatable",
    )
    parser.add_argument("--record", type=Path, help="append each request as a JSON line here")
    parser.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
    return parser


def common_settings(args: argparse.Namespace) -> dict[str, Any]:
    """FakeServer keyword arguments from the common flags and the rules file they name."""
    config: dict[str, Any] = load_config(args.rules) if args.rules else {}
    faults: list[FaultLike] = list(config.get("faults") or [])
    faults += [parse_fault(spec) for spec in args.fault]
    latency = args.latency if args.latency is not None else float(config.get("latency") or 0.0)
    seed = args.seed if args.seed is not None else int(config.get("seed") or 0)
    return {
        "rules": config.get("rules"),
        "default": config.get("default"),
        "latency": latency,
        "faults": faults,
        "seed": seed,
        "host": args.host,
        "port": args.port,
        "record_file": args.record,
        "verbose": args.verbose,
    }


def serve(server: FakeServer, url: str) -> int:
    """Serve until SIGINT or SIGTERM after printing `url` on stdout; a summary on stderr."""
    done = threading.Event()
    # Both set explicitly: a shell's `&` starts Python with SIGINT ignored.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: done.set())
    with server:
        print(url.format(base_url=server.base_url), flush=True)
        while not done.wait(0.2):
            pass
        unknown = server.unknown_paths
    print(f"[{server.label}] {server.count} requests; 404s: {unknown or 'none'}", file=sys.stderr)
    return 0
