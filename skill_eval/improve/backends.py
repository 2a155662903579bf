"""The improvers of `skill-eval improve --improver NAME`: `mock` (MockImprover, a
deterministic test double), or any executor that offers a text model (`anthropic`,
`claude-cli`, a plugin's), resolved through the executor registry as graders are. A
model-backed improver sends `build_improver_prompt` and reads the reply with
`parse_improver_reply`; usage is priced with the executors' price table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..engine.spend import Meter
from ..executors.base import DEFAULT_MODEL, OFFLINE_EXECUTOR, create_text_model, env_lookup
from ..executors.pricing import PriceTable, load_price_table
from ..executors.text_model import TextModel, TextModelSettings, TextRequest
from .feedback import Feedback
from .improver import (
    Improver,
    MockImprover,
    Proposal,
    ProposalError,
    build_improver_prompt,
    parse_improver_reply,
)

# The built-in test double (MockImprover), not a registered executor's text model: named as
# the offline executor is, so that `--mock` means one name for everything offline.
MOCK = OFFLINE_EXECUTOR
ROLE = "improver"


class ModelImprover:
    """One model reply per refinement. A reply that cannot be parsed becomes an empty proposal
    (the loop then stops with AcceptBest), its cost still counted and the reason in `notes`."""

    def __init__(self, text_model: TextModel, model: str, prices: PriceTable | None = None) -> None:
        self.text_model = text_model
        self.model = model
        self.prices = prices or load_price_table()
        self.tokens = 0
        self.cost_usd = 0.0
        self.notes: list[str] = []

    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal:
        prompt = build_improver_prompt(skill_files, feedback, learnings)
        reply = self.text_model.complete(
            TextRequest(prompt.system, prompt.user, self.model, label=ROLE)
        )
        cost, note = self.prices.cost(reply.model or self.model, reply.usage)
        if note and note not in self.notes:
            self.notes.append(note)
        tokens = reply.usage.input_tokens + reply.usage.output_tokens
        self.tokens += tokens
        self.cost_usd += cost
        try:
            return parse_improver_reply(reply.text, tokens, cost)
        except ProposalError as exc:
            self.notes.append(str(exc))
            return Proposal({}, f"unusable reply: {exc}", tokens, cost)


class MeteredImprover:
    """An improver whose every proposal is counted on the command's meter (--max-cost-usd,
    --max-tokens-total): the improver's calls spend the same budget as the evaluations."""

    def __init__(self, inner: Improver, meter: Meter) -> None:
        self.inner = inner
        self.meter = meter

    @property
    def notes(self) -> Sequence[str]:
        return tuple(getattr(self.inner, "notes", ()))

    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal:
        proposal = self.inner.propose(skill_files, feedback, learnings)
        self.meter.charge(proposal.cost_usd, proposal.tokens)
        return proposal


def build_improver(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    claude_bin: str | None = None,
    env: Mapping[str, str] | None = None,
    jail: str = "auto",
) -> Improver:
    """The improver `--improver NAME` asks for: the mock double, or the text model of executor
    `name` (ExecutorError when it offers none, listing those that do). The model is `model`,
    else SKILL_EVAL_MODEL, else the default model."""
    if name == MOCK:
        return MockImprover()
    options = {
        "base_url": base_url,
        "claude_bin": claude_bin,
        "env": dict(env) if env is not None else None,
        "jail": jail,  # a claude-cli improver runs Claude Code jailed too
    }
    text_model = create_text_model(name, options, TextModelSettings())
    chosen = model or env_lookup(env)("SKILL_EVAL_MODEL") or DEFAULT_MODEL
    return ModelImprover(text_model, chosen)
