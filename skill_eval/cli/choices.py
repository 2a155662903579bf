"""The Choice type of every flag with a closed set of values: click's, with a did-you-mean for
a typo (`--policy no-regresion`). Values that come from the executor registry (entry-point
plugins too) are read when the flag is parsed or shown, never when the CLI is imported:
`run --executor`, `--judge-executor`, and the model services of `review --executor` and
`improve --improver`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..core.validation import did_you_mean


def offline() -> str:
    """The offline stand-in's name (review's scripted replies, improve's MockImprover), named as
    the offline executor is; read when a flag is parsed, not when the CLI is imported."""
    from ..executors.builtin import OFFLINE_EXECUTOR

    return OFFLINE_EXECUTOR


class Choice(click.Choice):  # type: ignore[type-arg]
    """click.Choice whose refusal names the closest value: `'no-regresion' is not one of
    ... (did you mean 'no-regression'?)`. Every closed-set flag uses it (a test checks)."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        message = super().get_invalid_choice_message(value, ctx)
        hint = did_you_mean(str(value), [str(c) for c in self.choices])
        return message.removesuffix(".") + hint if hint else message


class RegistryChoice(Choice):
    """A Choice whose values come from the executor registry, read when the flag is parsed or
    shown, not when the CLI is imported."""

    def __init__(
        self, names: Callable[[], list[str]], accepts: Callable[[str], bool] | None = None
    ) -> None:
        super().__init__(())
        self._names = names
        self._accepts = accepts  # a quick yes for one name, without importing every executor

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and self._accepts is not None and self._accepts(value):
            return value
        return super().convert(value, param, ctx)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, value: Any) -> None:
        pass  # set by click.Choice.__init__; the registry is the source


def is_executor(name: str, grader: bool = False, text_model: bool = False) -> bool:
    """Whether `name` is a registered executor (that can grade, that has a text model):
    imports that one only."""
    from ..executors.base import REGISTRY

    spec = REGISTRY.get(name)
    return (
        spec is not None
        and (not grader or spec.grader is not None)
        and (not text_model or spec.text_model is not None)
    )


def model_service_names() -> list[str]:
    """The model services of review roles and the improver: the offline test double, then
    every executor that offers a text model."""
    from ..executors.base import text_model_names

    return [offline(), *(n for n in text_model_names() if n != offline())]


class ModelServiceChoice(RegistryChoice):
    """An executor that can serve as a model (review roles, the improver). A registered
    executor without a text model is refused saying so, with the executors that can."""

    def __init__(self) -> None:
        super().__init__(
            model_service_names, lambda n: n == offline() or is_executor(n, text_model=True)
        )

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and value != offline() and is_executor(value):
            if not is_executor(value, text_model=True):
                self.fail(
                    f"the {value!r} executor runs attempts but cannot serve as a model (it "
                    f"offers no text model); executors that can: "
                    f"{', '.join(model_service_names())}",
                    param,
                    ctx,
                )
        return super().convert(value, param, ctx)
