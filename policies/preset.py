"""A policy = estimator + eviction + compaction + cache marks + retry rules, from a YAML preset.

Presets live in `policies/presets/*.yaml`, each citing the SPEC ids it reproduces. Unknown keys
at any level are errors that list the valid keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from ctxbench.policies.contracts import Compaction, Estimator, Eviction, Marks
from ctxbench.sim.core import yamltext
from ctxbench.sim.core.catalog import largest_window
from ctxbench.sim.core.registry import RegistryError, create, lookup
from ctxbench.sim.core.values import Tokens, ValueProblem, check_params, unknown

TOP_KEYS = (
    "name",
    "description",
    "spec",
    "sources",
    "harness",
    "budget",
    "budget_means",
    "budget_min",
    "budget_max",
    "estimator",
    "eviction",
    "compaction",
    "marks",
    "provider",
    "retries",
    "backoff",
    "session_id",
    "cache_key",
    "interview",
    "reflection",
    "thought_signatures",
)


class PresetError(ValueError):
    """A preset file that cannot be used: names the file and the key."""


@dataclass(frozen=True)
class Policy:
    name: str
    estimator: Estimator
    eviction: Eviction
    compaction: Compaction
    marks: Marks
    budget: Tokens = 120_000  # H-11 default; 0 = none of its own (policies/budget.py budget_for)
    budget_min: Tokens = 32_000  # H-11
    budget_max: Tokens = 200_000  # H-11
    budget_means: Literal["working", "window", "none"] = "working"  # policies/budget.py
    harness: str = "H"
    provider: str = "anthropic"
    retries: int = 5  # H-17: transient errors retried up to 5 times
    backoff: float = 1.0  # first retry delay (s), doubled each time unless retry-after is given
    session_id: bool = False  # H-21: send the run id as a session id
    cache_key: bool = False  # H-22: send a prompt_cache_key
    interview: int = 0  # H-29: questions of a post-episode interview, billed apart (0 = none)
    reflection: int = 0  # H-30/H-21: reflection requests at the episode's end, billed with the run
    thought_signatures: bool = False  # Gemini CLI: the active loop's calls signed (sim/harness/signatures.py)
    description: str = ""
    spec: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())

    def with_budget(self, budget: int | None, window: int | None = None) -> Policy:
        """This policy with `budget` (None: its own). Refused where a budget means nothing.
        A `window` preset's budget stands for a model window (policies/budget.py), so its ceiling
        is the window of the model it runs on (`window`), or, when that is not known yet, the
        largest window of the catalog: `--budget 500k` on `claude-sonnet-4-6[1m]` (1M) is taken,
        and `budget_for` caps it at the window of the model actually run (issue 31 #3)."""
        if budget is None:
            return self
        if self.budget_means == "none":
            raise PresetError(
                f"policy {self.name!r} takes no --budget: nothing it decides depends on a token "
                "budget (budget_means: none in its preset)"
            )
        top = self.budget_max
        if self.budget_means == "window":
            top = max(top, window if window else largest_window())
        if not self.budget_min <= budget <= top:
            why = (
                " (H-11)"
                if self.budget_means == "working"
                else f" (its preset's budget_min, and the {'model' if window else 'largest model'} window)"
            )
            raise PresetError(
                f"budget {budget} is outside {self.budget_min}..{top} for policy {self.name!r}{why}"
            )
        return replace(self, budget=budget)


def _component(kind: str, spec: Any, where: str) -> Any:
    spec_in = spec
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, dict) or "name" not in spec:
        raise PresetError(f"{where}: '{kind}' must be a name or a mapping with a 'name' key")
    params = {k: v for k, v in spec.items() if k != "name"}
    try:
        return create(kind, str(spec["name"]), params, where=f"{where}: {kind}")
    except RegistryError as exc:
        msg = str(exc)
        if not msg.startswith(f"{where}:"):  # an unknown name: the file and key path too (issue 31 #7)
            key = f"{kind}.name" if isinstance(spec_in, dict) else kind
            msg = f"{where}: {key}: {msg}"
        raise PresetError(msg) from exc


COMPONENT_KINDS = ("estimator", "eviction", "compaction", "marks")


def policy_from_dict(data: dict[str, Any], where: str = "<preset>") -> Policy:
    """A Policy from a preset mapping. Every key and value is checked against `Policy`'s and
    each component's type hints (`ctxbench.sim.core.values`): errors name `where`, the key path, the
    expected type or range and the value given; unknown keys come with the closest valid ones."""
    if not isinstance(data, dict):
        raise PresetError(f"{where}: a preset must be a mapping")
    for key in data:
        if key not in TOP_KEYS:
            raise PresetError(f"{where}: {unknown('key', str(key), TOP_KEYS, 'valid keys')}")
    for req in ("name", *COMPONENT_KINDS):
        if req not in data:
            raise PresetError(f"{where}: missing key {req!r}")
    scalars = {k: v for k, v in data.items() if k not in COMPONENT_KINDS}
    if isinstance(scalars.get("name"), int | float):
        scalars["name"] = str(scalars["name"])
    for key in ("spec", "sources"):  # a single string is one entry
        if isinstance(scalars.get(key), str):
            scalars[key] = [scalars[key]]
    try:
        checked = check_params(Policy, scalars, f"{where}:")
    except ValueProblem as exc:
        raise PresetError(str(exc)) from exc
    for kind, name in (("harness", checked.get("harness", "H")), ("provider", checked.get("provider"))):
        if name is not None:
            _known(kind, str(name), where)
    means = checked.setdefault("budget_means", "working" if checked.get("harness", "H") == "H" else "window")
    if means == "none" and any(k in checked for k in ("budget", "budget_min", "budget_max")):
        raise PresetError(f"{where}: a preset with budget_means: none has no budget keys")
    # working: H-11's default 120,000; window: 0 = the current model's window (budget_for)
    budget = checked.pop("budget", 120_000 if means == "working" else None)
    pol = Policy(**{k: _component(k, data[k], where) for k in COMPONENT_KINDS}, budget=0, **checked)
    try:
        return pol.with_budget(budget)
    except PresetError as exc:
        raise PresetError(f"{where}: {exc}") from exc


def _known(kind: str, name: str, where: str) -> None:
    """A harness name must be registered and a provider a known profile: a typo is an error with
    the closest names, not a run of another harness (issue 10)."""
    if kind == "harness":
        try:
            lookup("harness", name)
        except RegistryError as exc:
            raise PresetError(f"{where}: harness: {exc}") from exc
        return
    from ctxbench.sim.core.profiles import ProfileError, profile

    try:
        profile(name)
    except ProfileError as exc:
        raise PresetError(f"{where}: provider: {exc}") from exc


SCALAR_KEYS = (
    "retries",
    "backoff",
    "session_id",
    "cache_key",
    "harness",
    "provider",
    "budget_min",
    "budget_max",
)


def policy_assignments(items: list[str]) -> dict[str, Any]:
    """`["retries=3", "backoff=2"]` -> typed values for a Policy's scalar fields (`--policy-set`),
    checked against its type hints like a preset's YAML. Dotted items (`marks.ttl=1h`: a
    component's parameter) are left to `with_policy_set`, which knows the component."""
    from ctxbench.sim.core.values import parse_assignments

    top = [i for i in items if "." not in i.partition("=")[0]]
    bad = [i for i in top if i.partition("=")[0].strip() not in SCALAR_KEYS]
    if bad:
        key = bad[0].partition("=")[0].strip()
        raise PresetError(
            f"--policy-set: {unknown('key', key, SCALAR_KEYS, 'settable keys')} (or a component's "
            f"parameter: {', '.join(f'{k}.NAME' for k in COMPONENT_KINDS)})"
        )
    try:
        return parse_assignments(Policy, top, "--policy-set")
    except ValueProblem as exc:
        raise PresetError(str(exc)) from exc


# A harness's own name for a component parameter, accepted by --policy-set: Gemini CLI's
# `model.compressionThreshold` (research/policies.md §3, "compress at threshold x tokenLimit") is
# the threshold-summary `trigger` fraction (`compaction.threshold=0.03`).
SETTING_NAMES = {("compaction", "threshold"): "trigger"}


def with_policy_set(policy: Policy, items: list[str] | tuple[str, ...]) -> Policy:
    """`policy` with the `--policy-set` items applied: top-level keys (`retries=3`) and any
    component's parameter, dotted (`marks.ttl=1h`, `compaction.summary_bytes=12000`,
    `compaction.buffer=0`), each checked against the component's type hints like the YAML."""
    from dataclasses import fields, is_dataclass

    from ctxbench.sim.core.values import parse_assignments

    items = list(items)
    out = replace(policy, **policy_assignments(items)) if items else policy
    for item in items:
        key = item.partition("=")[0].strip()
        if "." not in key:
            continue
        kind, _, param = key.partition(".")
        param = SETTING_NAMES.get((kind, param), param)
        if kind not in COMPONENT_KINDS:
            raise PresetError(
                f"--policy-set {key}: {unknown('component', kind, COMPONENT_KINDS, 'components')}"
            )
        comp: Any = getattr(out, kind)
        where = f"--policy-set {kind} ({type(comp).__name__} of preset {policy.name!r})"
        if not is_dataclass(comp) or param not in {f.name for f in fields(comp)}:
            known = sorted(f.name for f in fields(comp)) if is_dataclass(comp) else []
            raise PresetError(f"{where}: {unknown('parameter', param, known, 'valid')}")
        try:
            value = parse_assignments(type(comp), [f"{param}={item.partition('=')[2]}"], where)
            updated: Any = replace(cast(Any, comp), **value)  # __post_init__ checks run again
        except (ValueProblem, ValueError, TypeError) as exc:
            raise PresetError(str(exc)) from exc
        changed: dict[str, Any] = {kind: updated}
        out = replace(out, **changed)
    return out


PRESETS = Path(__file__).parent / "presets"  # the bundled presets (package data)


def preset_names() -> list[str]:
    return sorted(p.name[:-5] for p in PRESETS.iterdir() if p.name.endswith(".yaml"))


def load_policy(name_or_path: str) -> Policy:
    """A preset by name (`h-openrouter`) or a path to a YAML file."""
    path = Path(name_or_path)
    bundled = not (path.suffix in (".yaml", ".yml") or path.exists())
    if not bundled:
        if not path.exists():
            raise PresetError(f"{name_or_path}: no such preset file")
        text = path.read_text(encoding="utf-8")
        where = str(path)
    else:
        path = PRESETS / f"{name_or_path}.yaml"
        if not path.is_file():
            raise PresetError(unknown("preset", name_or_path, preset_names(), "known presets"))
        where = f"policies/presets/{name_or_path}.yaml"
    try:
        data = yamltext.load_bundled(path) if bundled else yamltext.load_yaml(text)
    except yamltext.YAMLError as exc:
        raise PresetError(yamltext.yaml_problem(where, exc)) from None
    return policy_from_dict(data, where)
