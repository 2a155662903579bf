"""The agent CLIs of the jail's own image (#54, Docker Desktop): where the docker provider runs
an image of its own (`--jail docker:IMAGE`, and `--jail docker` off Linux), the executors run
the image's CLI by its name, mount no host binary, need none (on macOS the host's is a binary
a Linux container cannot run) and take its version from the image's label. Every other
provider keeps running the host's CLI, shown read-only.

The end-to-end test runs a real Claude Code attempt on an image that holds its own CLI and
nothing of this machine's system (scripts/make_test_agent_image.sh: Debian from its mirror,
the CLI claude-agent-sdk bundles), with no host binary to find: skipped when that image is
absent (making it takes minutes; SKILL_EVAL_MAKE_TEST_IMAGE=1 makes it once)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.errors import ExecutorError
from skill_eval.executors.agents.codex import CodexExecutor
from skill_eval.executors.agents.config import CodexConfig, OpenCodeConfig
from skill_eval.executors.agents.opencode import OpenCodeExecutor
from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.jail import providers
from skill_eval.jail.agent_image import LABEL
from skill_eval.jail.docker import PROVIDER as DOCKER
from skill_eval.jail.docker import host_root

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "make_test_agent_image.sh"
IMAGE = "skill-eval-test-agent"
NO_HOST_CLI = "/nonexistent/agent-cli"  # a host binary that is not there
needs_docker = pytest.mark.skipif(DOCKER.problem() is not None, reason=f"{DOCKER.problem()}")


# -- the provider's answer, without an engine ------------------------------------------------


def test_only_a_docker_image_of_its_own_runs_its_programs() -> None:
    assert providers.image_programs("docker:any-image")
    assert providers.image_programs("docker") is (not sys.platform.startswith("linux"))
    for name in ("bubblewrap", "container", "none"):  # the host's CLI, shown read-only
        assert not providers.image_programs(name), name
    assert providers.image_version("bubblewrap", "opencode-ai") is None


def test_on_an_image_the_executors_run_its_cli_by_name_and_need_no_host_binary() -> None:
    claude = ClaudeCodeExecutor(ClaudeCliConfig(jail="docker:x", claude_bin=NO_HOST_CLI))
    opencode = OpenCodeExecutor(OpenCodeConfig(jail="docker:x", opencode_bin=NO_HOST_CLI))
    codex = CodexExecutor(CodexConfig(jail="docker:x", codex_bin=NO_HOST_CLI))
    assert (claude.binary(), opencode.command(), codex.command()) == ("claude", "opencode", "codex")
    assert opencode.mounts() == [] and codex.mounts() == []  # nothing of the host's shown
    # the same executors on bubblewrap: the host's binary, which is not there
    host = ClaudeCodeExecutor(ClaudeCliConfig(jail="bubblewrap", claude_bin=NO_HOST_CLI))
    on_host = OpenCodeExecutor(OpenCodeConfig(jail="bubblewrap", opencode_bin=NO_HOST_CLI))
    assert (host.binary(), on_host.command()) == (None, None)


# -- the version, from the image's labels ----------------------------------------------------


@pytest.fixture(scope="module")
def labelled_image() -> Iterator[str]:
    """An image holding nothing but mountpoints, labelled as the agent image would be for
    OpenCode and Claude Code (not for Codex): what the executors read versions from."""
    labels = {"opencode-ai": "1.18.33", "@anthropic-ai/claude-code": "2.1.330"}
    data = host_root()
    name = f"skill-eval-test-labels:{hashlib.sha256(data).hexdigest()[:12]}"
    changes = [a for p, v in labels.items() for a in ("--change", f'LABEL "{LABEL}{p}"="{v}"')]
    subprocess.run(
        ["docker", "import", *changes, "-", name], input=data, capture_output=True, check=True
    )
    yield name
    subprocess.run(["docker", "rmi", "-f", name], capture_output=True, timeout=120)


@needs_docker
def test_the_versions_come_from_the_images_labels_not_a_host_binary(labelled_image: str) -> None:
    jail = f"docker:{labelled_image}"
    opencode = OpenCodeExecutor(OpenCodeConfig(jail=jail, opencode_bin=NO_HOST_CLI))
    codex = CodexExecutor(CodexConfig(jail=jail, codex_bin=NO_HOST_CLI))
    claude = ClaudeCodeExecutor(ClaudeCliConfig(jail=jail, claude_bin=NO_HOST_CLI))
    assert opencode.version() == "1.18.33 (opencode-ai, from the jail image's label)"
    assert claude.version() == "2.1.330 (@anthropic-ai/claude-code, from the jail image's label)"
    assert codex.version() == "unknown (the jail's image records no version of @openai/codex)"


# -- a real Claude Code attempt on an image of its own ---------------------------------------


def _image_present() -> bool:
    found = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True)
    return found.returncode == 0


@pytest.fixture(scope="session")
def agent_image() -> str:
    """The test agent image: made by scripts/make_test_agent_image.sh when asked
    (SKILL_EVAL_MAKE_TEST_IMAGE=1: minutes), else the test skips saying how to make it."""
    if (problem := DOCKER.problem()) is not None:
        pytest.skip(f"docker: {problem}")
    if _image_present():
        return IMAGE
    if os.environ.get("SKILL_EVAL_MAKE_TEST_IMAGE") != "1":
        pytest.skip(
            f"no {IMAGE} image: make it once with `sudo bash {SCRIPT.relative_to(REPO)}` "
            "(or run with SKILL_EVAL_MAKE_TEST_IMAGE=1)"
        )
    made = subprocess.run(
        ["bash", str(SCRIPT), IMAGE, bundled_cli() or ""], capture_output=True, text=True
    )
    if made.returncode == 3:  # what is missing (debootstrap, root, the mirror): one line
        pytest.skip(made.stderr.strip().splitlines()[-1])
    assert made.returncode == 0, made.stderr
    return IMAGE


def test_the_preflight_on_an_image_asks_for_no_host_cli(
    agent_image: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "docker").symlink_to(str(shutil.which("docker")))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # docker; no agent CLI
    env = {"OPENAI_API_KEY": "sk-test"}
    for jail in (f"docker:{agent_image}", "bubblewrap"):
        for executor in (
            OpenCodeExecutor(
                OpenCodeConfig(jail=jail, opencode_bin=NO_HOST_CLI, model="m", env=env)
            ),
            CodexExecutor(CodexConfig(jail=jail, codex_bin=NO_HOST_CLI, model="m", env=env)),
        ):
            if jail == "bubblewrap":  # the host's CLI, which is not there
                with pytest.raises(ExecutorError, match="CLI not found"):
                    executor.preflight()
            else:
                executor.preflight()  # (its probe started a jail on the image)


@pytest.mark.slow  # the real CLI, two attempts
@pytest.mark.skipif(bundled_cli() is None, reason="claude-agent-sdk not installed")
def test_a_claude_code_attempt_runs_the_images_cli_with_no_host_cli(
    tmp_path: Path, agent_image: str
) -> None:
    from tests.test_agent_attacks import attack, bash

    bundled = str(bundled_cli())
    path = "/usr/sbin:/usr/bin:/sbin:/bin"  # (docker is there; no claude is)
    assert all(not os.path.exists(os.path.join(d, "claude")) for d in path.split(":"))
    look = (
        "{ command -v claude; readlink /proc/$PPID/exe || true; "
        f"test -e '{bundled}' && echo host-cli-seen || echo host-cli-absent; }} > report.md"
    )
    steps: list[Any] = [bash(look), {"text": "Done."}]
    run = attack(
        tmp_path,
        steps,
        args=("--jail", f"docker:{agent_image}", "--claude-bin", NO_HOST_CLI),
        env={"PATH": path},
    )
    assert run.code in (0, 1), run.err  # (the verdict's code; no error)
    candidate = run.records()["candidate"]
    assert candidate["status"] == "passed", candidate
    assert candidate["meta"]["isolation"]["jail"] == "docker"
    report = (run.kept("candidate") / "report.md").read_text().splitlines()
    assert report[0] == "/usr/local/bin/claude" and report[-1] == "host-cli-absent", report
    executor = _manifest_executor(run.artifact)
    version = _bundled_version(bundled)
    label = f"{version} (@anthropic-ai/claude-code, from the jail image's label)"
    assert executor["version"] == label
    # the CLI that made the requests says so in its User-Agent: the image's, at that version
    agents = {r.headers.get("user-agent", "") for r in run.requests}
    assert agents and all(f"claude-cli/{version}" in a for a in agents), agents


def _bundled_version(binary: str) -> str:
    said = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    return said.stdout.split()[0]


def _manifest_executor(artifact: Path) -> dict[str, Any]:
    data = json.loads(artifact.read_text())
    found: dict[str, Any] = data["manifest"]["executor"]
    return found


# -- every agent on the agent image the Dockerfile builds --------------------------------------

BUILT = "skill-eval-agent"  # containers/agent-jail/Dockerfile's image, as ci.md builds it


def _built_image() -> str:
    if (problem := DOCKER.problem()) is not None:
        pytest.skip(f"docker: {problem}")
    if subprocess.run(["docker", "image", "inspect", BUILT], capture_output=True).returncode:
        pytest.skip(
            f"no {BUILT} image: build it with `docker build -t {BUILT} containers/agent-jail` "
            "(no registry: --build-arg BASE=<a bookworm image with node and npm>, ci.md)"
        )
    return BUILT


@pytest.mark.slow  # the real CLIs, the agent demo's 10 attempts each
@pytest.mark.parametrize("agent", ["claude", "opencode", "codex"])
def test_the_agent_demo_on_the_built_image_runs_its_clis_with_no_host_cli(
    tmp_path: Path, agent: str
) -> None:
    from tests.agent_runs import EXECUTOR, run_agent
    from tests.agent_scripts import AGENT_EXPECTED, agent_rules
    from tests.test_agent_executors import AGENT_ARGS, statuses

    image = _built_image()
    option = {"claude": ["--claude-bin", NO_HOST_CLI]}.get(
        agent, ["--executor-option", f"{agent}_bin={NO_HOST_CLI}"]
    )
    # the whole demo: its pytest judgement runs on the image too (its python3 and pytest)
    args = [*AGENT_ARGS, "--jail", f"docker:{image}", *option]
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}  # (docker; no agent CLI)
    run = run_agent(tmp_path / "run", agent, args, agent_rules(agent), env=env)
    assert run.code == 0, run.err
    assert statuses(run) == AGENT_EXPECTED, run.records()
    assert run.data()["evaluation"]["verdict"] == "pass"
    executor = _manifest_executor(run.artifact)
    package = {"claude": "@anthropic-ai/claude-code", "opencode": "opencode-ai"}.get(
        agent, "@openai/codex"
    )
    assert executor["version"].endswith(f"({package}, from the jail image's label)"), executor
    assert executor["kind"] == EXECUTOR[agent]
