"""What surrounds timed play in a synthetic H episode: the learning series' preparation pieces
(H-30, H-1) and the final reading's capture and overview at the window's own size (H-5).

Kept apart from `game.py` (the turn loop) so that each stays small. Every option here is off by
default, so traces made before these options existed keep their bytes.

Seed 000 ("The Preparation Message"): "in an episode of a learning series, which episode of how
many this is, how the playbook works, and the playbook as the previous episode left it"; ("Every
Request"): "the 26 tools (29 in a learning series's episodes)"; ("Compaction", "New conversation"):
"one message with the current plan, the notebook, the playbook's revision (in a learning series)
and the handoff" — that message is the simulator's (sim/harness/conversation.py reads the playbook's size from
the content item keyed `PLAYBOOK_KEY`, traces/FORMAT.md). ("Observations"): "The final reading's
capture and the final overview keep the window's own size", while gameplay screenshots are scaled
to `screenshotWidth`.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxbench.traces.model import PLAYBOOK_KEY, Content

# H-1: the three learning-series tools (seed 000: 29 tools instead of 26 in a series episode)
PLAYBOOK_TOOLS = ("read_playbook", "propose_playbook_change", "playbook_history")
HOWTO = (
    "The playbook is shared by the episodes of the series: read_playbook shows it, "
    "propose_playbook_change revises it, playbook_history lists its revisions."
)
TIMED_PLAY_ENDED = "Timed play has ended. Final reading:"


def series_tools(names: tuple[str, ...], episodes: int) -> tuple[str, ...]:
    """The tool names of an episode: in a learning series (episodes > 0) the playbook tools are
    added to the gameplay tools (26 -> 29 by default, H-1)."""
    if not episodes:
        return names
    return names + tuple(t for t in PLAYBOOK_TOOLS if t not in names)


def episode_line(episode: int, episodes: int) -> str:
    """H-30: the preparation message names the episode."""
    return f"This is episode {episode} of {episodes} of a learning series."


def series_content(
    episode: int,
    episodes: int,
    howto: tuple[int, int],
    playbook: tuple[int, int],
    text: Callable[..., Content],
    words: Callable[[int], str],
    draw: Callable[[tuple[int, int]], int],
) -> list[Content]:
    """H-30's part of the preparation message: which episode of how many (as text), how the
    playbook works, and the playbook as the previous episode left it (sized, or text in full_text
    mode; `text` is the generator's own sized-or-full helper)."""
    if not episodes:
        return []
    size = draw(playbook)
    return [
        Content("text", text=episode_line(episode, episodes)),
        text("playbook-howto", howto, full=HOWTO),
        _keyed(text(PLAYBOOK_KEY, (size, size), full=words(size))),
    ]


def _keyed(c: Content) -> Content:
    """The playbook item always carries its key, also in full_text mode, so that the simulator
    finds it (its key names it; FORMAT.md allows a key on text given in full)."""
    if c.key == PLAYBOOK_KEY:
        return c
    return Content(c.kind, text=c.text, nbytes=c.nbytes, lang=c.lang, key=PLAYBOOK_KEY)


def final_capture(
    native: tuple[int, int], shot_bytes: int, reading: Content, overview_bytes: int
) -> list[Content]:
    """The host's closing message of the episode: the final reading's capture and the final
    overview at the window's own size (`native`), never scaled to screenshotWidth (H-5), with the
    final reading's JSON between them."""
    w, h = native
    return [
        Content("text", text=TIMED_PLAY_ENDED),
        Content("image", nbytes=shot_bytes, key="final-shot", width=w, height=h),
        reading,
        Content("image", nbytes=overview_bytes, key="final-overview", width=w, height=h),
    ]


def check_series(episode: int, episodes: int) -> None:
    """Both 0 (not a learning series) or 1 <= episode <= episodes."""
    if (episode, episodes) != (0, 0) and not 1 <= episode <= episodes:
        raise ValueError(
            "episode/episodes: expected both 0 (not a learning series) or 1 <= episode <= episodes, "
            f"got episode={episode}, episodes={episodes}"
        )


# Options added after the first traces were written: left out of a trace header's parameters at
# their defaults (GameParams.meta), so that those traces keep their bytes.
LATER = (
    "episode",
    "episodes",
    "playbook_bytes",
    "playbook_howto_bytes",
    "final_capture",
    "system_prompt",
    "military",
)
