"""The recorded harness replayed (imported and recorded traces, `recorded` preset): harness H's
process with what the recorded harness did beyond the transcript.

- Its budget is the model's window (`budget_means: window`, budget_for), since a log does not hold it.
- Blocks a trace marks `turn` (sent in their own turn only: Claude Code <= 2.0.29 attachments,
  bench/claude_code_wire.md §1) leave the prompt when the next real user message (content other
  than tool results) arrives: an Edit (cause "turn_scoped") from the first message holding one,
  that message and the later ones without those blocks (a message left empty is dropped). A turn
  starts at a user message other than tool results that follows a reply: the turn's own blocks
  come with it or in the user messages right after it, and stay for the whole turn
  (policies/recorded.py `TurnScopedBlocks`; the coding-agent harness does the same).
- A summariser request before a compaction that keeps the latest messages (`kept_from`: Claude
  Code 2.1.x, its compact_boundary's preservedSegment) is sent without those messages: Claude
  Code summarises what comes before them and adds its instruction to the last message before them
  (bench/claude_code_wire.md §3; a trace records the instruction as a user message tagged
  "summary", sim/serve/linearize.py). They are set aside for the summariser's requests (a retried
  one too) and come back for the compaction, which keeps them after the summary.
"""

from __future__ import annotations

import simpy

from ctxbench.policies.preset import Policy
from ctxbench.policies.recorded import TurnScopedBlocks
from ctxbench.policies.view import Edit
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.names import RequestKind
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.harness.coding import Snapshot
from ctxbench.sim.harness.conversation import Conversation, ProviderFor
from ctxbench.sim.prepared import PreparedTrace, Step
from ctxbench.traces.model import CompactionEvent


def summariser_forks(steps: tuple[Step, ...]) -> dict[int, int]:
    """For each user message tagged "summary" (by its number among the trace's messages, from 1)
    that comes before a compaction keeping messages, that compaction's `kept_from`."""
    out: dict[int, int] = {}
    pending: list[int] = []
    seen = 0
    for step in steps:
        if step.kind in ("message", "reply") and step.message is not None:
            seen += 1
            if step.kind == "message" and step.message.tag == "summary":
                pending.append(seen)
        elif step.kind == "compaction":
            ev = step.event
            if isinstance(ev, CompactionEvent) and ev.kept_from is not None:
                out.update((n, ev.kept_from) for n in pending if n - 1 > ev.kept_from)
            pending = []
    return out


class RecordedConversation(Conversation):
    """The recorded harness (module docstring)."""

    _forks: dict[int, int] | None = None  # summariser_forks of the trace, made on first use
    _fork_at = -1  # where the messages set aside for a summariser were, -1 when none are
    _set_aside: tuple[Message, ...] = ()

    def __init__(
        self,
        env: simpy.Environment,
        name: str,
        trace: PreparedTrace,
        policy: Policy,
        provider_for: ProviderFor,
        factory: BlockFactory,
        records: list[RequestRecord],
        seed: int = 0,
        snapshot_at: tuple[int, ...] = (),
    ) -> None:  # the signature spelled out: a compiled class cannot pass *args on (mypyc)
        super().__init__(env, name, trace, policy, provider_for, factory, records, seed, snapshot_at)
        self.snapshots: dict[int, Snapshot] = {}  # `ctxbench context` on an imported session
        self.turn_scoped = TurnScopedBlocks()  # the trace's `turn` blocks (policies/recorded.py)

    def _turn_kind(self) -> RequestKind:
        return "turn"  # a recorded session's turns are no game's (issue 31 #9)

    def _recorded(self, req: Request, out: Outcome) -> None:
        """Request N as the recorded harness sent it, for `ctxbench context` (issue 31 #9): its
        true size, the model window, and no threshold of a harness model (the recorded harness
        compacted where the log says)."""
        if self.index not in self.snapshot_at:
            return
        tr = req.tr
        users = sum(1 for m in tr.messages if m.role == "user")
        window = self.view().window
        self.snapshots[self.index] = Snapshot(
            self.index, req.kind, req.model, tuple(tr.blocks[: req.n]), tr.tools_end, tr.system_end,
            users, len(tr.messages) - users, req.input_tokens, True, window, window, req.input_tokens,
            "recorded",
        )  # fmt: skip

    def _append_input(self, msg: Message) -> None:
        edit = self.turn_scoped.edit_before(self.tr.messages, self.preparation_messages, msg)
        if edit is not None:
            self.apply(edit)
        if msg.tag == "summary" and msg.role == "user":
            self._fork()
        super()._append_input(msg)
        self.turn_scoped.appended(msg)

    def _fork(self) -> None:
        """Before a summariser's instruction: the messages its compaction keeps set aside, and a
        retried summariser's earlier instruction and reply with them."""
        if self._forks is None:
            self._forks = summariser_forks(self.trace.steps)
        kept_from = self._forks.get(self.messages_seen)
        if kept_from is None:
            return
        msgs = self.tr.messages
        if self._fork_at < 0:
            held = self.messages_seen - 1 - kept_from  # the trace's messages since kept_from
            if held <= 0 or held > len(msgs) - self.preparation_messages:
                return
            self._fork_at = len(msgs) - held
            self._set_aside = tuple(msgs[self._fork_at :])
        if self._fork_at < len(msgs):
            self.apply(Edit(self._fork_at, (), "compaction"))

    def _kept_count(self, step: Step) -> int:
        """The messages set aside come back for the compaction, which keeps them."""
        if self._fork_at < 0:
            return super()._kept_count(step)
        kept = self._set_aside
        self.tr.replace_from(self._fork_at, list(kept))
        self._fork_at, self._set_aside = -1, ()
        return len(kept)


# After the class, not as a decorator: mypyc compiles a decorated class as a plain Python class
# (sim/core/native.py).
register("harness", "recorded")(RecordedConversation)
