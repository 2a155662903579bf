"""The improver backends of `skill-eval improve --improver`: `anthropic` (the SDK client the
anthropic grader builds), `claude-cli` (`claude -p` isolated as a judgement is) and `mock`
(MockImprover, a deterministic test double). Model-backed improvers reuse the review's role
models (one copy of the client plumbing), send `build_improver_prompt` and read the reply with
`parse_improver_reply`; usage is priced with the executors' price table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import UsageError
from ..executors.pricing import PriceTable, load_price_table
from .feedback import Feedback
from .improver import (
    Improver,
    MockImprover,
    Proposal,
    ProposalError,
    build_improver_prompt,
    parse_improver_reply,
)

IMPROVERS = ("mock", "anthropic", "claude-cli")
ROLE = "improver"


class ModelImprover:
    """One model reply per refinement. A reply that cannot be parsed becomes an empty proposal
    (the loop then stops with AcceptBest), its cost still counted and the reason in `notes`."""

    def __init__(
        self, role_model: object, model: str | None, prices: PriceTable | None = None
    ) -> None:
        self.role_model = role_model
        self.model = model
        self.prices = prices or load_price_table()
        self.tokens = 0
        self.cost_usd = 0.0
        self.notes: list[str] = []

    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal:
        prompt = build_improver_prompt(skill_files, feedback, learnings)
        reply = self.role_model.complete(ROLE, prompt.system, prompt.user)  # type: ignore[attr-defined]
        cost, note = self.prices.cost(reply.model or self.model or "", reply.usage)
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


def build_improver(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    claude_bin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Improver:
    """The improver `--improver NAME` asks for; UsageError for an unknown name."""
    if name == "mock":
        return MockImprover()
    if name not in IMPROVERS:
        raise UsageError(f"--improver must be one of {', '.join(IMPROVERS)}, got {name!r}")
    from ..review.models import AnthropicRoleModel, ClaudeCliRoleModel

    models = {ROLE: model} if model else {}
    role_model: object
    if name == "anthropic":
        role_model = AnthropicRoleModel(models, base_url=base_url, env=env)
    else:
        role_model = ClaudeCliRoleModel(models, claude_bin=claude_bin, base_url=base_url, env=env)
    return ModelImprover(role_model, model)
