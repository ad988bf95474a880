"""The harnesses and settings of the counterfactual validation (bench/live/whatif.py, issue 29):
for each harness, its version, preset, task script and three or more settings of the knob its
preset models, each as the harness is given it and as the preset is given it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    """One setting of a harness's knob: what the harness is given and what the preset is given."""

    label: str  # file-name part: w100k, limit30k ...
    knob: str  # human-readable: CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000
    harness_knobs: tuple[tuple[str, str], ...]  # env vars / config keys passed to the harness run
    budget: int | None = None  # the preset's budget (a window override), when the knob is one
    policy_set: tuple[str, ...] = ()  # `--policy-set` items (component parameters)
    no_compaction: bool = False  # the knob turns auto-compaction off: the preset's compaction is `none`


@dataclass(frozen=True)
class Harness:
    name: str
    version: str
    preset: str
    settings: tuple[Setting, ...]
    task: str | None = None  # the task script under bench/live (None: run_harness's own)
    reminders: bool = False  # re-place the harness's <system-reminder> attachments (bench/live/reminders.py)
    # its task folder kept beside each ledger, its compactions and task read from it (bench/live/
    # whatif_cline.py: Cline truncates without a summary request)
    task_folder: bool = False

    @property
    def title(self) -> str:
        return f"{self.name} {self.version} (preset `{self.preset}`"


def _cc(window: int) -> Setting:
    # research/policies.md §1: CLAUDE_CODE_AUTO_COMPACT_WINDOW replaces the model window (the preset's
    # budget, budget_means: window); threshold = window - min(max output, 20k) - 13k.
    return Setting(
        f"w{window // 1000}k",
        f"CLAUDE_CODE_AUTO_COMPACT_WINDOW={window}",
        (("CLAUDE_CODE_AUTO_COMPACT_WINDOW", str(window)),),
        budget=window,
    )


def _codex(limit: int) -> Setting:
    # research/policies.md §2: model_auto_compact_token_limit replaces 0.9 x window (the preset's
    # compaction.trigger_tokens); the window stays model_context_window = 100000.
    return Setting(
        f"limit{limit // 1000}k",
        f"model_auto_compact_token_limit={limit}",
        (("model_auto_compact_token_limit", str(limit)),),
        policy_set=(f"compaction.trigger_tokens={limit}",),
    )


# research/policies.md §1: DISABLE_AUTO_COMPACT turns Claude Code's auto-compaction off (isAutoCompactEnabled)
CC_OFF = Setting("off", "DISABLE_AUTO_COMPACT=1", (("DISABLE_AUTO_COMPACT", "1"),), no_compaction=True)


def _opencode(context: int) -> Setting:
    # research/policies.md §5 / ecosystem.md §3c: opencode compacts when the last usage reaches
    # usable = limit.context - min(limit.output, 32k); limit.output is 4,000 in every run
    # (session_logs.OPENCODE_KNOBS), so the preset's budget is the context limit and its
    # reserve_output that output limit.
    return Setting(
        f"limit{context // 1000}k",
        f"limit.context={context}",
        (("limit.context", str(context)),),
        budget=context,
        policy_set=("compaction.reserve_output=4000",),
    )


# ecosystem.md §3c: OPENCODE_DISABLE_AUTOCOMPACT turns opencode's auto-compaction off (context 22k kept)
OPENCODE_OFF = Setting(
    "off",
    "OPENCODE_DISABLE_AUTOCOMPACT=1",
    (("OPENCODE_DISABLE_AUTOCOMPACT", "1"),),
    budget=22_000,
    no_compaction=True,
)


def _gemini(threshold: float) -> Setting:
    # research/policies.md §3: Gemini CLI compresses when the last prompt token count reaches
    # model.compressionThreshold x tokenLimit(model) (1,048,576 for gemini-2.5-pro), the preset's
    # `compaction.threshold`. model.skipNextSpeakerCheck false: see GEMINI_CLI below.
    return Setting(
        f"t{round(threshold * 100):02d}",
        f"model.compressionThreshold={threshold}",
        (("model.compressionThreshold", str(threshold)), ("model.skipNextSpeakerCheck", "false")),
        policy_set=(f"compaction.threshold={threshold}",),
    )


def _cline(window: int) -> Setting:
    # policies/cline.py: Cline truncates when the previous request's total reaches the allowance of
    # the model's context window (`allowance`: 80 % of it below 200k but at 64k and 128k), the
    # preset's budget; on an OpenAI-compatible provider its total counts cache reads twice
    # (`reads_counted_twice`). The window is the model info's `contextWindow`
    # (bench/live/session_logs.py `_cline_state`); 128,000 is Cline's default for such a model.
    return Setting(
        f"w{window // 1000}k",
        f"actModeOpenAiModelInfo.contextWindow={window}",
        (("contextWindow", str(window)),),
        budget=window,
        policy_set=("compaction.reads_counted_twice=true",),
    )


# GEMINI_CLI: Gemini CLI 0.61.0 compresses only where it can split the history at a user message
# that carries no function response (findCompressSplitPoint, the bundle's chatCompressionService):
# the newest such message with at least 70 % of the history's characters before it, else the
# last one before that, else (the history ending in a model text) all of it; the first message
# alone is no split. In a `-p` run the prompt is the only such message, so however large the
# context it never compresses (research/ecosystem.md §3d "not seen in a fresh -p session");
# `--resume latest` adds one but re-sends every earlier function response twice (the resumed
# history has both the recorded response message and one rebuilt from the tool call,
# convertSessionToClientHistory). With model.skipNextSpeakerCheck false, a reply without a tool
# call is followed by a next-speaker check and, when the model is to speak, by a user message
# "Please continue." (GeminiClient.sendMessageStream): the task (whatif_gemini_cli_task.yaml) is
# three segments, each ended by a text-only reply, and `ctxbench serve` answers the check with
# "model" while the script has steps left.
HARNESSES = {
    "claude-code": Harness(
        "claude-code",
        "2.1.197",
        "claude-code-live",
        (_cc(100_000), _cc(120_000), _cc(140_000), CC_OFF),
        reminders=True,
    ),
    "codex": Harness(
        "codex",
        "0.171.0",
        "codex-live",
        (_codex(20_000), _codex(30_000), _codex(45_000)),
        "whatif_codex_task.yaml",
    ),
    "opencode": Harness(
        "opencode",
        "1.18.33",
        "opencode-live",
        (_opencode(22_000), _opencode(25_000), _opencode(30_000), OPENCODE_OFF),
        "opencode_task.yaml",
    ),
    "gemini-cli": Harness(
        "gemini-cli",
        "0.61.0",
        "gemini-cli-live",
        (_gemini(0.03), _gemini(0.04), _gemini(0.06), _gemini(0.08)),
        "whatif_gemini_cli_task.yaml",
    ),
    "cline": Harness(
        "cline",
        "2.18.0",
        "cline",
        (_cline(32_000), _cline(44_000), _cline(56_000), _cline(128_000)),
        "whatif_cline_task.yaml",
        task_folder=True,
    ),
}


__all__ = ["HARNESSES", "Harness", "Setting"]
