"""Run Claude Code or Codex CLI against `ctxbench serve` in task mode until it auto-compacts.

    python -m ctxbench.bench.live.run_harness claude-code --out reports/live/claude-code
    python -m ctxbench.bench.live.run_harness codex --out reports/live/codex

Install (local prefix, npm registry): `npm install --prefix PREFIX @anthropic-ai/claude-code @openai/codex`;
pass `--prefix PREFIX` (default $CTXBENCH_NPM_PREFIX or /tmp/ctxnpm). Settings from ecosystem.md §3a/§3b:
Claude Code with CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000 and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
(loopback only); Codex with model_auto_compact_token_limit=30000, model_context_window=100000,
wire_api=responses. Each harness runs under `env -i` with a fresh HOME, a dummy key, a timeout, and
is killed by PID (its process group) if it overruns. The server is bound to 127.0.0.1.

Afterwards (`analyze`): the ledger is read back; every request's first divergence from its parent
(bench.prefix_check), compaction requests, and the usage *predicted* for each recorded request by
replaying the recorded requests through a fresh provider model (same profile, recorded times) vs
the usage the server billed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ctxbench.bench.live.ledger import per_model
from ctxbench.sim.core.provider import Request
from ctxbench.sim.serve.script import SUMMARY_MARKERS, load_script
from ctxbench.sim.serve.server import ServeConfig, start_background, stop
from ctxbench.sim.serve.wire import parse

HERE = Path(__file__).parent
# The provider profile each harness is billed by, and the model it is run with (`--model` /
# config.toml below): Claude Code speaks the Anthropic API (explicit breakpoints); Codex speaks
# Responses with no cache_control, so it gets OpenAI automatic caching (profile openai-auto;
# gpt-5.1-codex is an alias of gpt-5.1 in sim/data/models.yaml). Every request is billed as the
# model it names (side requests on another model included); an unknown one is answered 404.
PROFILES = {
    "claude-code": ("anthropic", "claude-sonnet-4-5"),
    "codex": ("openai-auto", "gpt-5.1-codex"),
    # run by bench/live/session_logs.py (HARNESSES there: the same profile and model)
    "opencode": ("anthropic", "claude-sonnet-4-5"),
    "gemini-cli": ("gemini-implicit", "gemini-2.5-pro"),
}
PROMPT = (
    "Review the build logs: run the shell command I give you each time with your shell tool, read its "
    "output, and keep going until I say stop. Start now."
)


def npm_prefix(arg: str | None) -> Path:
    return Path(arg or os.environ.get("CTXBENCH_NPM_PREFIX", "/tmp/ctxnpm"))


def harness_available(name: str, prefix: Path) -> str | None:
    """Why the harness cannot run here, or None."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return (
            f"node/npm not installed (Debian: apt-get install -y nodejs npm; {INSTALL.format(prefix=prefix)})"
        )
    binary = prefix / "node_modules" / ".bin" / ("claude" if name == "claude-code" else "codex")
    if not binary.exists():
        return f"{binary} missing (install the harnesses: {INSTALL.format(prefix=prefix)})"
    return None


INSTALL = "npm install --prefix {prefix} @anthropic-ai/claude-code @openai/codex"


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float, log: Path) -> int:
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            return -9


def run(
    name: str,
    out: Path,
    prefix: Path,
    timeout: float = 300.0,
    knobs: dict[str, str] | None = None,
    task: Path | None = None,
) -> dict[str, Any]:
    """Run `name` against a fresh `serve` in `out`. `knobs` overrides the harness's settings:
    Claude Code's environment variables (CLAUDE_CODE_AUTO_COMPACT_WINDOW, DISABLE_AUTO_COMPACT ...),
    Codex's config.toml keys (model_auto_compact_token_limit, model_context_window: integers);
    `task` replaces the harness's task script (bench/live/whatif.py runs them at several settings)."""
    knobs = dict(knobs or {})
    # absolute: the harness runs in `out/work` and reads HOME/CODEX_HOME from its environment
    out, prefix = out.resolve(), prefix.resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "requests.jsonl").unlink(missing_ok=True)
    home, work = out / "home", out / "work"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    work.mkdir(exist_ok=True)
    script = load_script(
        str(task or HERE / ("claude_code_task.yaml" if name == "claude-code" else "codex_task.yaml"))
    )
    profile, model = PROFILES[name]
    cfg = ServeConfig(profile=profile, model=model, ledger=str(out / "requests.jsonl"))
    srv, _th = start_background(cfg, script)
    base = {
        "PATH": f"{prefix / 'node_modules' / '.bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TERM": "dumb",
    }
    t0 = time.monotonic()
    try:
        if name == "claude-code":
            env = {
                **base,
                "ANTHROPIC_BASE_URL": srv.url,
                "ANTHROPIC_API_KEY": "sk-ant-dummy",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000",
                "DISABLE_AUTOUPDATER": "1",
                **knobs,
            }
            cmd = [
                "claude",
                "-p",
                PROMPT,
                "--output-format",
                "json",
                "--allowedTools",
                "Bash",
                "--model",
                model,
            ]
        else:
            codex_home = home / ".codex"
            codex_home.mkdir()
            toml = {"model_auto_compact_token_limit": "30000", "model_context_window": "100000", **knobs}
            (codex_home / "config.toml").write_text(
                f'model = "{model}"\nmodel_provider = "mock"\napproval_policy = "never"\n'
                'sandbox_mode = "danger-full-access"\n'
                + "".join(f"{k} = {v}\n" for k, v in toml.items())
                + '\n[model_providers.mock]\nname = "mock"\n'
                f'base_url = "{srv.url}/v1"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n',
                encoding="utf-8",
            )
            env = {**base, "CODEX_HOME": str(codex_home), "MOCK_API_KEY": "dummy"}
            cmd = ["codex", "exec", "--skip-git-repo-check", PROMPT]
        rc = _run(cmd, env, work, timeout, out / "harness.log")
    finally:
        stop(srv)
        srv.state.recorder.write(out / "traces")
    return {
        "harness": name,
        "rc": rc,
        "seconds": round(time.monotonic() - t0, 1),
        "requests": srv.state.ledger.count,
        "steps_done": script.steps_done,
    }


def analyze(out: Path, harness: str = "claude-code") -> dict[str, Any]:
    """Prefix findings, compactions, and predicted vs billed usage per request."""
    profile, model = PROFILES[harness]
    lines = [
        json.loads(x) for x in (out / "requests.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    served = [x for x in lines if x.get("usage") is not None]
    billed_as = per_model(profile)  # each request as the model the server billed it as
    rows, diffs, compactions = [], 0, []
    for x in sorted(served, key=lambda e: e["seq"]):
        provider, f = billed_as(str(x.get("model") or model))
        p = parse(x["api"], x["body"], x["headers"], f)
        req = Request(
            p.tr,
            len(p.tr),
            str(x.get("model") or model),
            x["usage"]["output"],
            p.breakpoints,
            "live",
            p.session,
            x["index"],
            p.cache_key,
            p.session,
        )
        pred = provider.call(req, x["t"]).usage
        pu = {
            "uncached": pred.uncached,
            "cache_read": pred.cache_read,
            "cache_write_5m": pred.cache_write_5m,
            "cache_write_1h": pred.cache_write_1h,
            "output": pred.output,
        }
        kind = (
            "summary"
            if any(m in p.last_user_text for m in SUMMARY_MARKERS)
            else ("side" if not p.tool_names else "main")
        )
        if kind == "summary":
            compactions.append(x["seq"])
        same = pu == x["usage"]
        diffs += not same
        rows.append(
            {
                "seq": x["seq"],
                "kind": kind,
                "messages": len(p.messages),
                "blocks": len(p.tr),
                "input": p.tr.total_tokens,
                "billed": x["usage"],
                "predicted": pu,
                "identical": same,
            }
        )
    findings: list[str] = []
    prefix_ok: bool | None = None
    try:
        from ctxbench.bench.prefix.check import find_breaks
        from ctxbench.bench.prefix.report import format_text
        from ctxbench.bench.prefix.request_log import read_request_log

        reqs = read_request_log([json.dumps(x) for x in served], str(out / "requests.jsonl"))
        report = find_breaks(reqs)  # no declarations: every break must be recognised (prefix_recognise.py)
        prefix_ok = report.ok
        findings = format_text(report).splitlines()
    except Exception as e:  # the prefix checker is another module; report instead of failing the run
        findings = [f"prefix check unavailable: {e}"]
    result = {
        "requests": len(lines),
        "served": len(served),
        "compaction_requests": compactions,
        "usage_mismatches": diffs,
        "rows": rows,
        "prefix_findings": findings,
        "prefix_ok": prefix_ok,
    }
    (out / "analysis.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    """Exit 0 when the harness ran, compacted and kept its prefix; 1 when it failed or the prefix
    check FAILed; 2 when it cannot run here (harness not installed: the message says how)."""
    ap = argparse.ArgumentParser(
        prog="python -m ctxbench.bench.live.run_harness",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("harness", choices=("claude-code", "codex"), help="which harness to run")
    ap.add_argument("--out", default=None, help="output folder (default reports/live/HARNESS)")
    ap.add_argument(
        "--prefix",
        default=None,
        help="npm prefix with the harnesses (default $CTXBENCH_NPM_PREFIX or /tmp/ctxnpm)",
    )
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before the harness is killed")
    a = ap.parse_args(argv)
    prefix = npm_prefix(a.prefix)
    why = harness_available(a.harness, prefix)
    if why:
        print(f"run_harness: error: cannot run {a.harness}: {why}", file=sys.stderr)
        return 2
    out = Path(a.out or f"reports/live/{a.harness}").resolve()
    info = run(a.harness, out, prefix, a.timeout)
    res = analyze(out, a.harness)
    print(json.dumps({**info, **{k: v for k, v in res.items() if k != "rows"}}, indent=1))
    for r in res["rows"]:
        print(
            f"{r['seq']:4d} {r['kind']:8s} msgs {r['messages']:3d} in {r['input']:7d} billed {r['billed']} "
            f"{'=' if r['identical'] else '!= predicted ' + str(r['predicted'])}"
        )
    problems = run_problems(info, res)
    for p in problems:
        print(f"run_harness: FAIL: {p}", file=sys.stderr)
    return 1 if problems else 0


def run_problems(info: dict[str, Any], res: dict[str, Any]) -> list[str]:
    """What went wrong in a finished live run (empty: nothing)."""
    problems = []
    if info["rc"] != 0:
        problems.append(f"the harness exited with {info['rc']} (see harness.log)")
    if not res["served"]:
        problems.append("the harness sent no request to the server")
    if res.get("prefix_ok") is not True:
        problems.append("prefix check: " + next(iter(res["prefix_findings"]), "no result"))
    return problems


if __name__ == "__main__":
    sys.exit(main())
