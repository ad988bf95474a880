"""The hooks a harness model may override: the one list of them (as simpy's `BaseResource` lists
what a resource subclass may redefine).

`Conversation` (sim/harness/conversation.py) is the conversation process; `run()` walks the
prepared trace and dispatches each step (`match` on `StepKind`, sim/core/names.py) to one of these
methods. A harness model (`CodingConversation`, SPEC C-1..C-19; `RecordedConversation`, the
recorded harness's own behaviour) changes what happens by overriding them and nothing else;
tests/sim/harness/test_hooks.py fails when a subclass overrides a method not listed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ctxbench.policies.view import View
    from ctxbench.sim.core.content import Message
    from ctxbench.sim.core.names import RequestKind
    from ctxbench.sim.core.provider import Outcome, Request
    from ctxbench.sim.core.transcript import Transcript
    from ctxbench.sim.harness.calls import Proc
    from ctxbench.sim.prepared import Step


class ConversationHooks(Protocol):
    """What a harness model may redefine, by the step or moment it handles.

    Views
      - `_make_view(tr, main)`: the policies' View of a transcript (C: the model's window and
        budget, its compaction rules' state).

    Trace steps (`run()`'s dispatch)
      - `_append_input(msg)`: a `message` step, appended to the transcript (recorded and C: drop
        the previous turn's attachments when the recording did, trace `turn`).
      - `_turn(step)`: a `reply` step: the request that produced it, with the policy's edits and
        compactions before it (C: reactive compaction on a too-long error, C-11).
      - `_turn_kind()`: the request kind of an ordinary turn (H: `gameplay`; recorded: `turn`).
      - `_switch(step)`: a `switch` step, the model changes (H-20; C: the new model's window).
      - `_recorded_compaction(step)`: a `compaction` step, applied when the policy replays
        recorded compactions (C: its counters and summary entry).
      - `_kept_count(step)`: how many messages a recorded compaction keeps (recorded: the
        summariser fork's count).
      - `_resume(step)`: a `resume` step, the harness restarts (C-4, C-15).
      - `_system_change(step)`: a `system` step, the system part changes (C-1, C-2).
      - `_tools_change(step)`: a `tools` step, the tool list changes.

    Provider calls (sim/harness/calls.py)
      - `_recorded(req, out)`: after each call's record (C: snapshots, C-4 trust).
    """

    def _make_view(self, tr: Transcript, main: bool) -> View: ...

    def _append_input(self, msg: Message) -> None: ...

    def _turn(self, step: Step) -> Proc: ...

    def _turn_kind(self) -> RequestKind: ...

    def _switch(self, step: Step) -> None: ...

    def _recorded_compaction(self, step: Step) -> None: ...

    def _kept_count(self, step: Step) -> int: ...

    def _resume(self, step: Step) -> None: ...

    def _system_change(self, step: Step) -> None: ...

    def _tools_change(self, step: Step) -> None: ...

    def _recorded(self, req: Request, out: Outcome) -> None: ...


HOOKS: tuple[str, ...] = (
    "_make_view",
    "_append_input",
    "_turn",
    "_turn_kind",
    "_switch",
    "_recorded_compaction",
    "_kept_count",
    "_resume",
    "_system_change",
    "_tools_change",
    "_recorded",
)
