"""What an attempt cost in US dollars: a small per-model price table with its date,
overridable with a JSON or YAML file (`--price-file`).

Prices are per million tokens. A model id is looked up without its snapshot date, so
"claude-sonnet-4-5-20250929" is priced as "claude-sonnet-4-5". A model not in the table
costs 0 and the caller notes "unknown price": a wrong guess would be worse than no figure.

Price file format (YAML or JSON; every key optional except the prices of each model):

    as_of: "2026-01-15"
    models:
      claude-sonnet-4-5: {input: 3, output: 15, cache_write: 3.75, cache_read: 0.3}

A bare mapping of model -> prices (without `models:`) is accepted too. Models in the file
replace or extend the built-in table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.model import Usage
from ..errors import ExecutorError

PRICES_AS_OF = "2026-11-21"
# Requests sent through the Message Batches API cost half the list price (every token kind).
BATCH_PRICE_FACTOR = 0.5
PRICE_FIELDS = ("input", "output", "cache_write", "cache_read")


@dataclass(frozen=True)
class ModelPrice:
    """US dollars per million tokens. `cache_write` is the 5-minute ephemeral cache rate."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(self, usage: Usage) -> float:
        """Dollars for one request's usage."""
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * self.cache_write
            + usage.cache_read_input_tokens * self.cache_read
        )
        return round(total / 1_000_000, 8)


def _p(inp: float, out: float, read: float | None = None) -> ModelPrice:
    # Anthropic's rule: a 5-minute cache write costs 1.25x input, a cache read 0.1x input.
    return ModelPrice(inp, out, round(inp * 1.25, 6), round(inp * 0.1 if read is None else read, 6))


# List prices as of PRICES_AS_OF, copied from the model catalog baked into Claude Code 2.1.330
# (the CLI we pin), which matches anthropic.com/pricing. Haiku 5.5 bills prompts over 100k
# tokens at a higher rate; this table uses the base rate.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-3-haiku": _p(0.25, 1.25),
    "claude-3-5-haiku": _p(0.8, 4.0),
    "claude-haiku-4-5": _p(1.0, 5.0),
    "claude-haiku-5-5": _p(0.1, 0.5),
    "claude-3-5-sonnet": _p(3.0, 15.0),
    "claude-3-7-sonnet": _p(3.0, 15.0),
    "claude-sonnet-4": _p(3.0, 15.0),
    "claude-sonnet-4-0": _p(3.0, 15.0),
    "claude-sonnet-4-5": _p(3.0, 15.0),
    "claude-sonnet-4-6": _p(3.0, 15.0),
    "claude-sonnet-5": _p(2.0, 10.0),
    "claude-sonnet-5-5": _p(2.0, 10.0, read=0.1),
    "claude-3-opus": _p(15.0, 75.0),
    "claude-opus-4": _p(15.0, 75.0),
    "claude-opus-4-0": _p(15.0, 75.0),
    "claude-opus-4-1": _p(15.0, 75.0),
    "claude-opus-4-5": _p(5.0, 25.0),
    "claude-opus-4-6": _p(5.0, 25.0),
    "claude-opus-4-7": _p(5.0, 25.0),
    "claude-opus-4-8": _p(5.0, 25.0),
    "claude-opus-5": _p(5.0, 25.0),
    "claude-opus-5-5": _p(4.0, 20.0, read=0.2),
    "claude-fable-5": _p(10.0, 50.0),
    "claude-fable-5-1": _p(10.0, 50.0, read=0.25),
    "claude-fable-5-2": _p(8.0, 40.0, read=0.2),
    "claude-mythos-5": _p(10.0, 50.0),
    "claude-mythos-5-1": _p(10.0, 50.0, read=0.25),
    "claude-mythos-5-2": _p(8.0, 40.0, read=0.2),
}
# What may follow a model id without changing its price: a snapshot date, "-latest", a
# Vertex "@date", Claude Code's "[1m]" context marker.
_DECORATION = re.compile(r"(?:\[1m\]|-latest|[-@]\d{8}|-v\d+(?::\d+)?)+$")


@dataclass(frozen=True)
class PriceTable:
    """Prices by model-id prefix, with the date they were taken."""

    prices: Mapping[str, ModelPrice]
    as_of: str = PRICES_AS_OF
    source: str = "built-in"

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of `model`, ignoring a snapshot date or "-latest"; None when unknown
        (a newer model is never priced as an older one)."""
        if model in self.prices:
            return self.prices[model]
        return self.prices.get(_DECORATION.sub("", model))

    def cost(self, model: str, usage: Usage, *, batch: bool = False) -> tuple[float, str | None]:
        """(dollars, note). The note is "unknown price" when the model is not in the table.
        `batch`: the request went through the Message Batches API (BATCH_PRICE_FACTOR)."""
        price = self.lookup(model)
        if price is None:
            return 0.0, f"unknown price for model {model!r} (table as of {self.as_of})"
        full = price.cost(usage)
        return (round(full * BATCH_PRICE_FACTOR, 8) if batch else full), None

    def describe(self) -> dict[str, Any]:
        return {"as_of": self.as_of, "source": self.source}


def _parse_price(path: Path, model: str, data: Any) -> ModelPrice:
    where = f"{path}: models.{model}"
    if not isinstance(data, Mapping):
        raise ExecutorError(
            f"{where}: must be a mapping of {', '.join(PRICE_FIELDS)}", path=str(path)
        )
    unknown = sorted(set(map(str, data)) - set(PRICE_FIELDS))
    if unknown:
        raise ExecutorError(
            f"{where}.{unknown[0]}: unknown field; valid: {', '.join(PRICE_FIELDS)}", path=str(path)
        )
    values: dict[str, float] = {}
    for name in PRICE_FIELDS:
        value = data.get(name)
        if value is None and name in ("cache_write", "cache_read") and "input" in values:
            value = values["input"] * (1.25 if name == "cache_write" else 0.1)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ExecutorError(
                f"{where}.{name}: must be a number >= 0 (dollars per million tokens)",
                path=str(path),
            )
        values[name] = float(value)
    return ModelPrice(**values)


def load_price_table(path: Path | None = None) -> PriceTable:
    """The built-in table, updated with the models of `path` when given."""
    if path is None:
        return PriceTable(dict(DEFAULT_PRICES))
    import yaml  # only when a file is given: start-up stays fast

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExecutorError(f"{path}: price file not found", path=str(path)) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ExecutorError(f"{path}: cannot read price file: {first}", path=str(path)) from None
    if not isinstance(data, Mapping):
        raise ExecutorError(f"{path}: price file must be a mapping", path=str(path))
    as_of = str(data.get("as_of") or PRICES_AS_OF)
    models = data.get("models", None) if ("models" in data or "as_of" in data) else data
    if not isinstance(models, Mapping):
        raise ExecutorError(
            f"{path}: models: must be a mapping of model id to prices", path=str(path)
        )
    prices = dict(DEFAULT_PRICES)
    for model, spec in models.items():
        prices[str(model)] = _parse_price(Path(path), str(model), spec)
    return PriceTable(prices, as_of=as_of, source=str(path))
