"""One simulated run as a unit of work: what identifies it, how a worker runs it, and the flat row
it produces (shared by `compare` and `sweep`).

A run is identified by (trace content hash, policy name + every parameter, budget, provider,
seed, ctxbench version): the store key of a resumable sweep (peers.md "Ideas worth absorbing" 3:
the run identity is the tool version plus every option). Rows are computed from records after
the run (DESIGN.md "Records, not statistics, in the loop").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxbench.bench.retention import retention
from ctxbench.bench.trace_knows import Knows
from ctxbench.bench.trace_knows import apply as trace_knows
from ctxbench.policies.preset import Policy, load_policy, with_policy_set
from ctxbench.sim import __version__
from ctxbench.sim.core.records import MISS_CAUSES
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.prepared_cache import PreparedFile, for_model, open_prepared
from ctxbench.sim.providers.choice import Serving, choose
from ctxbench.sim.runner import RunHooks, RunResult, prepare_for, run_prepared
from ctxbench.sim.summary import Summary, summarize
from ctxbench.traces.generators.spec import GEN_PREFIX, GenSpec, is_spec_file, parse_gen_spec
from ctxbench.traces.model import Trace


def _sha256(data: bytes) -> str:
    """The hex SHA-256 of `data` (hashlib imported here: a `run` that stores nothing skips it)."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


# Columns every row has, in file order; `failures_<kind>` columns follow (the kinds seen).
ID_COLUMNS = (
    "key", "trace", "trace_hash", "policy", "policy_hash",
    "budget", "budget_means", "provider", "model", "seed", "version",
)  # fmt: skip
METRIC_COLUMNS = (
    "status",
    "requests",
    "failed_requests",
    "cost",
    "cache_read_share",
    "true_input",
    "uncached",
    "cache_read",
    "cache_write",
    "output",
    "compactions",
    "tokens_saved",
    "evictions",
    "evicted_images",
    "estimate_error_mean",
    "estimate_error_worst",
    "tokens_lost_to_failures",
    "miss_tokens",
    *(f"miss_{c}" for c in MISS_CAUSES),
    "conversation_tokens",  # retention (bench/retention.py): the trace's message tokens,
    "verbatim_tokens",  # those still verbatim in the final context,
    "summary_tokens",  # and the summaries standing in for the rest
    "trigger",  # the compaction threshold at the end of the run (tokens)
    "static_prefix",  # system prompt and tools (tokens): a trigger at or below it is degenerate
)


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs to run one cell; small and picklable (sent to other processes)."""

    trace: str  # a file path or a generator spec (`gen:NAME?k=v&...`, `gen:FILE.yaml`), as given
    trace_hash: str
    policy: str  # preset name or YAML path
    policy_hash: str
    budget: int
    provider: str  # `--provider` ("" = the trace's: sim/providers/choice.py `choose`)
    seed: int
    version: str = __version__
    model: str = ""  # `--model` ("" = the trace's own, and the models it switches to)
    policy_set: tuple[str, ...] = ()  # `--policy-set KEY=VALUE` items (also in policy_hash)
    provider_params: str = ""  # `--provider-set` as canonical JSON ("" = none)
    tokenizer: str = "rate"  # `--tokenizer`
    source: str = ""  # the inline spec a worker runs when `trace` names a spec file (not in the key)

    @property
    def key(self) -> str:
        ident: list[Any] = [
            self.trace_hash,
            self.policy,
            self.policy_hash,
            self.budget,
            self.provider,
            self.seed,
            self.version,
        ]
        if self.policy_set or self.provider_params or self.tokenizer != "rate":  # older keys unchanged
            ident += [list(self.policy_set), self.provider_params, self.tokenizer]
        if self.model:
            ident += ["model", self.model]
        return _sha256(json.dumps(ident, separators=(",", ":")).encode())[:24]


# ------------------------------------------------------------------ traces
def trace_hash(trace: str) -> str:
    """Content hash of a trace file (sha256 of its bytes), or of a generator spec's generator and
    parameters (the same for the same trace however the spec is written: inline or a file)."""
    if trace.startswith(GEN_PREFIX):
        return _spec_hash(parse_gen_spec(trace))
    p = Path(trace)
    if not p.is_file():
        raise FileNotFoundError(f"{trace}: no such trace file")
    return _sha256(p.read_bytes())[:20]


def _spec_hash(spec: GenSpec) -> str:
    return "gen-" + _sha256(spec.canonical().encode())[:20]


def _seed_hashes(trace: str, seeds: list[int]) -> dict[int, str]:
    """`trace_hash(seeded_spec(trace, s))` for every seed, the spec parsed once (not twice a seed)."""
    if not trace.startswith(GEN_PREFIX):
        return dict.fromkeys(seeds, trace_hash(trace))
    spec = parse_gen_spec(trace)
    if "seed" in spec.params:
        return dict.fromkeys(seeds, _spec_hash(spec))
    return {s: _spec_hash(spec.with_params({"seed": s})) for s in seeds}


@lru_cache(maxsize=256)
def seeded_spec(trace: str, seed: int) -> str:
    """A `gen:` spec that names no `seed` draws its trace from the run's seed, so `--seeds N`
    varies the synthetic trace; files and specs with `seed=` are returned unchanged (remembered:
    a worker asks once per run)."""
    if not trace.startswith(GEN_PREFIX) or "seed" in parse_gen_spec(trace).params:
        return trace
    return f"{trace}{'&' if '?' in trace else '?'}seed={seed}"


def worker_spec(trace: str) -> str:
    """What a worker runs for `trace`: a spec file (`gen:FILE.yaml`) as its inline spec, so
    workers that cannot see the file (Dask, elsewhere) need nothing but the text; "" otherwise."""
    if trace.startswith(GEN_PREFIX) and is_spec_file(trace[len(GEN_PREFIX) :].partition("?")[0]):
        return parse_gen_spec(trace).inline()
    return ""


def policy_hash(policy: Policy) -> str:
    """Hash of the policy's name and every component parameter (the frozen dataclasses' repr)."""
    return _sha256(repr(dataclasses.replace(policy, budget=0)).encode())[:16]


@lru_cache(maxsize=64)
def cached_policy(spec: str, policy_set: tuple[str, ...] = ()) -> Policy:
    """The preset `spec` with the `--policy-set` items applied (parsed and checked once)."""
    pol = load_policy(spec)
    return with_policy_set(pol, policy_set) if policy_set else pol


@dataclass(frozen=True)
class RunOptions:
    """What `--policy-set`, `--provider-set` and `--tokenizer` change in every run of a batch
    (`run`, `compare`, `sweep` share them: bench/cli/_run_options.py)."""

    policy_set: tuple[str, ...] = ()
    provider_params: dict[str, Any] = dataclasses.field(default_factory=dict)
    tokenizer: str = "rate"

    @property
    def provider_json(self) -> str:
        return (
            json.dumps(self.provider_params, sort_keys=True, separators=(",", ":"))
            if self.provider_params
            else ""
        )


_PREPARED: dict[tuple[str, str, str], PreparedFile] = {}


def prepared(trace: str, thash: str, source: Trace | None = None, tokenizer: str = "rate") -> PreparedFile:
    """The trace prepared for its own model, with its facts, read (or taken from `source`, the
    trace as shipped to this worker) and prepared once per worker process and tokenizer (sweeps
    reuse it)."""
    key = (trace, thash, tokenizer)
    pf = _PREPARED.get(key)
    if pf is None:
        if len(_PREPARED) >= 16:
            _PREPARED.clear()
        if source is not None:
            pf = PreparedFile(source, prepare_for(source, None, tokenizer))
        else:  # a file through the prepared-trace cache (sim/prepared_cache.py)
            pf = open_prepared(trace, None, tokenizer)
        _PREPARED[key] = pf
    return pf


def serve(
    text: str,
    pf: PreparedFile,
    policy: Policy,
    provider: str | None,
    model: str | None,
    tokenizer: str = "rate",
    policy_set: tuple[str, ...] = (),
    spec: str = "",
) -> tuple[PreparedTrace, Serving, Knows]:
    """The one place a verb turns a trace, a preset and `--provider`/`--model` into what runs: the
    profile and model `choose` picks (the trace's model and the profile serving it unless the user
    says otherwise; sim/providers/choice.py), the trace prepared for that model (with `--model`
    every request runs as that model: the trace's own switches are not applied), and the preset
    with what the trace knows (bench/trace_knows.py; `policy_set`, the `--policy-set` items already
    applied to `policy`, wins over the trace). `run`, `compare`, `sweep` and `check-prefix --policy`
    all call it, so they run the same thing."""
    serving = choose(pf.facts, policy.provider, provider or None, model or None)
    prep = for_model(text, pf.prepared, serving.model, tokenizer)
    if model:
        prep = dataclasses.replace(prep, steps=tuple(s for s in prep.steps if s.kind != "switch"))
    keys = tuple(i.partition("=")[0].strip() for i in policy_set)
    return prep, serving, trace_knows(policy, prep, spec or policy.name, keys)


def make_tasks(
    traces: list[str],
    policies: list[str],
    budgets: list[int | None],
    providers: list[str | None],
    seeds: list[int],
    options: RunOptions | None = None,
    model: str | None = None,
) -> list[RunTask]:
    """Every combination, grouped by trace so a worker reuses its prepared trace. A budget of None
    means the preset's own; a provider of None (and `model` None) the trace's (`serve`); `options`
    apply to every run."""
    opts = options or RunOptions()
    pjson = opts.provider_json
    hashes = {t: _seed_hashes(t, seeds) for t in traces}
    sources = {t: worker_spec(t) for t in traces}
    tasks = []
    for t in traces:
        for pname in policies:
            pol = cached_policy(pname, opts.policy_set)
            ph = policy_hash(pol)
            for b in budgets:
                budget = pol.with_budget(b).budget
                for prov in providers:
                    for s in seeds:
                        th = hashes[t][s]
                        task = RunTask(t, th, pname, ph, budget, prov or "", s)
                        tasks.append(dataclasses.replace(
                            task, policy_set=opts.policy_set, provider_params=pjson, tokenizer=opts.tokenizer,
                            source=sources[t], model=model or "",
                        ))  # fmt: skip
    if opts.provider_params:  # a bad --provider-set is one error here, not one per worker run
        from ctxbench.sim.providers.registry import make_provider
        from ctxbench.sim.runner import DEFAULT_MODEL

        named = {task.provider for task in tasks if task.provider}
        for name in sorted(named | {cached_policy(p, opts.policy_set).provider for p in policies}):
            make_provider(name, DEFAULT_MODEL, 0, **opts.provider_params)
    return tasks


# ------------------------------------------------------------------ one run, as `ctxbench run`
@dataclass(frozen=True)
class SingleRun:
    """One trace replayed under one policy: the run's records and outcomes, their summary, and
    the profile and model it ran on (with why: `--provider`, the log's, the preset's)."""

    result: RunResult
    summary: Summary
    serving: Serving
    knows: Knows  # the preset as run: what it took from the trace, what it assumed

def run_single(
    trace: str | Trace,
    policy: Policy,
    seed: int = 0,
    provider: str | None = None,
    model: str | None = None,
    provider_params: dict[str, Any] | None = None,
    tokenizer: str = "rate",
    on_note: Callable[[str], None] | None = None,
    policy_set: tuple[str, ...] = (),
    spec: str = "",
) -> SingleRun:
    """Replay `trace` (a file or generator spec, prepared through the cache; or a trace already
    read) under `policy` as `ctxbench run` does: the profile, model and preset `serve` picks for a
    file (a trace already read: the profile and model `choose` picks, prepared for that model),
    then the records summarised. `on_note` hears the choice's note (a model the profile does not
    serve...) before the first request."""
    if isinstance(trace, str):
        pf = open_prepared(trace, model, tokenizer)  # kept prepared by file content
        prep, serving, knows = serve(trace, pf, policy, provider, model, tokenizer, policy_set, spec)
    else:
        serving = choose(trace, policy.provider, provider, model)  # stops before any request
        prep = prepare_for(trace, serving.model, tokenizer)
        if model:  # every request as this model: the trace's own switches are not applied
            prep = dataclasses.replace(prep, steps=tuple(s for s in prep.steps if s.kind != "switch"))
        keys = tuple(i.partition("=")[0].strip() for i in policy_set)
        knows = trace_knows(policy, prep, spec or policy.name, keys)
    if serving.note and on_note is not None:
        on_note(serving.note)
    pol = knows.policy
    result = run_prepared([prep], pol, serving.profile, seed, provider_params, tokenizer=tokenizer)
    return SingleRun(result, summarize(result.records, result.outcomes), serving, knows)


# ------------------------------------------------------------------ the worker
def run_task(task: RunTask) -> dict[str, Any]:
    """Run one cell and return its flat row (a top-level function: pickled by reference)."""
    pol = cached_policy(task.policy, task.policy_set)
    if task.budget != pol.budget:  # the preset's own (0 = the model window, or none) needs no check
        pol = pol.with_budget(task.budget)
    source = seeded_spec(task.source or task.trace, task.seed)
    pf = prepared(source, task.trace_hash, tokenizer=task.tokenizer)
    prep, serving, knows = serve(
        source, pf, pol, task.provider, task.model, task.tokenizer, task.policy_set, task.policy
    )
    pol = knows.policy
    params = json.loads(task.provider_params) if task.provider_params else None
    convs: list[Any] = []
    hooks = RunHooks(on_conversation=convs.append)
    res = run_prepared([prep], pol, serving.profile, task.seed, params, tokenizer=task.tokenizer, hooks=hooks)
    s = summarize(res.records, res.outcomes)
    conv = convs[0]
    kept = retention(prep, conv.tr.blocks)
    row: dict[str, Any] = {
        "key": task.key,
        "trace": task.trace,
        "trace_hash": task.trace_hash,
        "policy": pol.name,
        "policy_hash": task.policy_hash,
        "budget": task.budget,
        "budget_means": pol.budget_means,  # what the budget is: working, window (policies/budget.py)
        "provider": serving.profile,
        "model": serving.model,
        "seed": task.seed,
        "version": task.version,
        "status": "ok" if s.status == "ok" else next((o.error for o in res.outcomes if o.error), "error"),
        "requests": s.requests,
        "failed_requests": s.failed_requests,
        "cost": round(s.cost, 9),
        "cache_read_share": round(s.cache_read_share, 9),
        "true_input": s.true_input,
        "uncached": s.uncached,
        "cache_read": s.cache_read,
        "cache_write": s.cache_write,
        "output": s.output,
        "compactions": s.compactions,
        "tokens_saved": s.tokens_saved,
        "evictions": s.evictions,
        "evicted_images": s.evicted_images,
        "estimate_error_mean": round(s.estimate_error_mean, 9),
        "estimate_error_worst": round(s.estimate_error_worst, 9),
        "tokens_lost_to_failures": s.tokens_lost_to_failures,
        "miss_tokens": sum(s.miss_tokens.values()),
    }
    for c in MISS_CAUSES:
        row[f"miss_{c}"] = s.misses.get(c, 0)
    row["conversation_tokens"] = kept.conversation_tokens
    row["verbatim_tokens"] = kept.verbatim_tokens
    row["summary_tokens"] = kept.summary_tokens
    row["trigger"] = int(pol.compaction.threshold(conv.view()))
    row["static_prefix"] = conv.tr.tokens_before(conv.tr.system_end)
    for kind, n in s.failures.items():
        row[f"failures_{kind}"] = n
    return row


def run_batch(tasks: Sequence[RunTask], sources: Mapping[str, Trace] | None = None) -> list[dict[str, Any]]:
    """Run several cells in one worker call, in order (one round trip to the executor for many
    runs). `sources` maps a trace name to the trace itself, when the sweep ships it to the
    workers (Dask scatters each once per worker) instead of letting each read it."""
    for task in tasks:
        if sources and task.trace in sources:
            prepared(task.trace, task.trace_hash, sources[task.trace], task.tokenizer)
    return [run_task(task) for task in tasks]


def failure_kinds(rows: list[dict[str, Any]]) -> list[str]:
    """Failure kinds seen in any row, sorted (the `failures_<kind>` columns)."""
    return sorted({k[len("failures_") :] for r in rows for k in r if k.startswith("failures_")})
