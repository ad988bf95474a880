"""Run opencode, Gemini CLI or Cline against `ctxbench serve` and keep the session log the harness
itself writes, beside the server's ledger: the importers are then checked on what the harness
logged against what the server billed (tests/bench/live/test_live_session_logs.py).

    python -m ctxbench.bench.live.session_logs opencode --out runs/opencode
    python -m ctxbench.bench.live.session_logs gemini-cli --out runs/gemini
    python -m ctxbench.bench.live.session_logs cline --out runs/cline

Install (local prefix, npm registry): `npm install --prefix PREFIX opencode-ai@1.18.33
@google/gemini-cli@0.61.0` (research/ecosystem.md §3c, §3d) and, apart since its ripgrep dependency
downloads a binary when installed, `npm install --prefix PREFIX --ignore-scripts cline@2.18.0`;
`--prefix` defaults to $CTXBENCH_NPM_PREFIX. Each harness runs under `env -i` with a fresh HOME and
a timeout:
- opencode 1.18.33 on Claude Sonnet 4.5 (Anthropic API, the `anthropic` profile) with a context
  limit of 22,000 tokens in its config, so that it auto-compacts three times in one `opencode run`;
  its log is its database (`~/.local/share/opencode/opencode.db`), every session in it;
- Gemini CLI 0.61.0 on gemini-2.5-pro (`gemini-implicit`), `-p … --yolo`; with `--resume`, then
  `--resume latest` with `model.compressionThreshold` 0.03, so that the resumed run compresses its
  history (the CLI usually appends it to the same log, sometimes starts another: the newest log is
  returned); its log is `~/.gemini/tmp/<project>/chats/session-*.jsonl`;
- Cline CLI 2.18.0 (the extension's task code, Cline 3.82.0) on Claude Sonnet 4.5 (Anthropic API),
  `cline -y --json …`, its provider and `anthropicBaseUrl` in `~/.cline/data/globalState.json`; its
  log is the task folder `~/.cline/data/tasks/<id>/` (tests/traces/importers/test_cline_task_live.py
  keeps such runs). Given a `contextWindow` knob (the what-if runs, bench/live/whatif.py), Cline runs
  on its OpenAI-compatible provider instead (gpt-4.1 on the `openai-auto` profile), that window in
  the model's info.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from ctxbench.bench.live.run_harness import _run, npm_prefix
from ctxbench.sim.serve.script import Scripter, load_script
from ctxbench.sim.serve.server import ServeConfig, start_background, stop

HERE = Path(__file__).parent
HARNESSES = {
    # name: (binary under node_modules, serve profile, model, task script)
    "opencode": ("node_modules/.bin/opencode", "anthropic", "claude-sonnet-4-5", "opencode_task.yaml"),
    "gemini-cli": (
        "node_modules/@google/gemini-cli/bundle/gemini.js",
        "gemini-implicit",
        "gemini-2.5-pro",
        "gemini_cli_task.yaml",
    ),
    "cline": ("node_modules/cline/dist/cli.mjs", "anthropic", "claude-sonnet-4-5", "cline_task.yaml"),
}
INSTALL = "npm install --prefix {prefix} opencode-ai@1.18.33 @google/gemini-cli@0.61.0"
INSTALL_CLINE = "npm install --prefix {prefix} --ignore-scripts cline@2.18.0"
PROMPT = "Review the build logs: run the shell command I give you each time"
RESUME_PROMPT = "Review the remaining logs the same way"


def missing(name: str, prefix: Path) -> str | None:
    """Why the harness cannot run here, or None."""
    if shutil.which("node") is None:
        return f"node not installed ({INSTALL.format(prefix=prefix)})"
    binary = prefix / HARNESSES[name][0]
    install = (INSTALL_CLINE if name == "cline" else INSTALL).format(prefix=prefix)
    return None if binary.exists() else f"{binary} missing (install: {install})"


# opencode's model limits in opencode.json (research/policies.md §5: usable = context - output) and
# Gemini CLI's settings (policies.md §3) as run here; `knobs` (bench/live/whatif.py) override them.
OPENCODE_KNOBS = {"limit.context": "22000", "limit.output": "4000"}
GEMINI_KNOBS = {"model.compressionThreshold": "0.03", "resumes": "0", "model.skipNextSpeakerCheck": "true"}


def _opencode(
    url: str,
    home: Path,
    work: Path,
    binary: Path,
    model: str,
    timeout: float,
    log: Path,
    knobs: dict[str, str] | None = None,
) -> Path:
    """`knobs`: limit.context, limit.output (integers, opencode.json) and OPENCODE_* environment
    variables (OPENCODE_DISABLE_AUTOCOMPACT=1 turns auto-compaction off, ecosystem.md §3c)."""
    k = {**OPENCODE_KNOBS, **(knobs or {})}
    limit = {"context": int(k["limit.context"]), "output": int(k["limit.output"])}
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "anthropic": {
                "options": {"baseURL": f"{url}/v1", "apiKey": "dummy"},
                "models": {model: {"limit": limit}},
            }
        },
        "model": f"anthropic/{model}",
        "autoupdate": False,
        "share": "disabled",
    }
    (work / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",  # else one HTTPS connection to npm (ecosystem.md §3c)
        **{key: v for key, v in k.items() if key.startswith("OPENCODE_")},
    }
    rc = _run([str(binary), "run", PROMPT], env, work, timeout, log)
    if rc != 0:
        raise RuntimeError(f"opencode exited {rc}: {log.read_text(errors='replace')[-1500:]}")
    return home / ".local" / "share" / "opencode" / "opencode.db"


def _gemini(
    url: str,
    home: Path,
    work: Path,
    binary: Path,
    model: str,
    timeout: float,
    log: Path,
    resume: bool = False,
    knobs: dict[str, str] | None = None,
) -> Path:
    """`knobs`: model.compressionThreshold (a fraction of the model's token limit) and resumes (how
    many `--resume latest` runs follow the first; `resume` is one)."""
    k = {**GEMINI_KNOBS, **(knobs or {})}
    auth = {"selectedType": "gemini-api-key"}  # with GOOGLE_GEMINI_BASE_URL alone -p exits 41
    threshold = float(k["model.compressionThreshold"])
    skip = k["model.skipNextSpeakerCheck"] == "true"  # false: "Please continue." after a text reply
    model_settings = {"compressionThreshold": threshold, "skipNextSpeakerCheck": skip}
    settings = {"security": {"auth": auth}, "model": model_settings}
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": "dummy",
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",  # headless in an untrusted folder exits 55 otherwise
    }
    node = shutil.which("node") or "node"
    runs: list[tuple[list[str], str]] = [([], PROMPT)]
    for _ in range(max(int(k["resumes"]), int(resume))):
        runs.append((["--resume", "latest"], RESUME_PROMPT))
    for extra, prompt in runs:
        rc = _run([node, str(binary), "-m", model, *extra, "-p", prompt, "--yolo"], env, work, timeout, log)
        if rc != 0:
            raise RuntimeError(f"gemini exited {rc}: {log.read_text(errors='replace')[-1500:]}")
    logs = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"), key=lambda p: p.stat().st_mtime)
    if not logs:
        raise RuntimeError("Gemini CLI wrote no session log")
    return logs[-1]


# Cline on an OpenAI-compatible endpoint (the what-if runs, bench/live/whatif.py): the serve profile
# and model, and the model info `cline auth -p openai` leaves unset, with the window a knob sets
# (Cline's default for such a model is 128,000; its prices default to 0).
CLINE_OPENAI = ("openai-auto", "gpt-4.1")
CLINE_WINDOW = "contextWindow"


def _cline_state(url: str, model: str, knobs: dict[str, str]) -> tuple[dict[str, object], dict[str, str]]:
    """Cline's globalState and secrets: as `cline auth -p anthropic` writes them, with the server as
    the Anthropic base URL; or, given a `contextWindow` knob, as `cline auth -p openai -b URL` does,
    the model's info holding that window."""
    if CLINE_WINDOW not in knobs:
        state: dict[str, object] = {
            "actModeApiProvider": "anthropic", "planModeApiProvider": "anthropic",
            "actModeApiModelId": model, "planModeApiModelId": model, "anthropicBaseUrl": url,
        }  # fmt: skip
        return {**state, "welcomeViewCompleted": True}, {"apiKey": "dummy"}
    info = {
        "contextWindow": int(knobs[CLINE_WINDOW]), "maxTokens": -1, "supportsImages": False,
        "supportsPromptCache": False, "inputPrice": 0, "outputPrice": 0,
    }  # fmt: skip
    state = {
        "actModeApiProvider": "openai", "planModeApiProvider": "openai",
        "actModeOpenAiModelId": model, "planModeOpenAiModelId": model, "openAiBaseUrl": f"{url}/v1",
        "actModeOpenAiModelInfo": info, "planModeOpenAiModelInfo": info, "welcomeViewCompleted": True,
    }  # fmt: skip
    return state, {"openAiApiKey": "dummy"}


def _cline(
    url: str,
    home: Path,
    work: Path,
    binary: Path,
    model: str,
    timeout: float,
    log: Path,
    knobs: dict[str, str] | None = None,
) -> Path:
    """Cline's settings (`_cline_state`); the task folder it wrote."""
    data = home / ".cline" / "data"
    data.mkdir(parents=True, exist_ok=True)
    state, secrets = _cline_state(url, model, knobs or {})
    (data / "globalState.json").write_text(json.dumps(state), encoding="utf-8")
    (data / "secrets.json").write_text(json.dumps(secrets), encoding="utf-8")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home)}
    node = shutil.which("node") or "node"
    rc = _run([node, str(binary), "-y", "--json", PROMPT], env, work, timeout, log)
    if rc != 0:
        raise RuntimeError(f"cline exited {rc}: {log.read_text(errors='replace')[-1500:]}")
    tasks = sorted((data / "tasks").glob("*/ui_messages.json"), key=lambda p: p.stat().st_mtime)
    if not tasks:
        raise RuntimeError("Cline wrote no task folder")
    return tasks[-1].parent


def run(
    name: str,
    out: Path,
    prefix: Path,
    timeout: float = 300.0,
    resume: bool = False,
    knobs: dict[str, str] | None = None,
    task: Path | None = None,
) -> tuple[Path, Path, Scripter]:
    """Run `name` against a fresh `serve`: (its session log, the server's ledger, the script).
    `knobs` override the harness's settings (see _opencode, _gemini); `task` replaces its script."""
    out, prefix = out.resolve(), prefix.resolve()
    binary_rel, profile, model, task_name = HARNESSES[name]
    if name == "cline" and CLINE_WINDOW in (knobs or {}):
        profile, model = CLINE_OPENAI
    home, work = out / "home", out / "work"
    for d in (home, work):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    ledger = out / "requests.jsonl"
    ledger.unlink(missing_ok=True)
    script = load_script(str(task or HERE / task_name))
    srv, _th = start_background(ServeConfig(profile=profile, model=model, ledger=str(ledger)), script)
    try:
        binary, log = prefix / binary_rel, out / "harness.log"
        if name == "opencode":
            session_log = _opencode(srv.url, home, work, binary, model, timeout, log, knobs)
        elif name == "cline":
            session_log = _cline(srv.url, home, work, binary, model, timeout, log, knobs)
        else:
            session_log = _gemini(srv.url, home, work, binary, model, timeout, log, resume, knobs)
    finally:
        stop(srv)
    return session_log, ledger, script


def main(argv: list[str] | None = None) -> int:
    about = (__doc__ or "").split("\n")[0]
    ap = argparse.ArgumentParser(prog="python -m ctxbench.bench.live.session_logs", description=about)
    ap.add_argument("harness", choices=sorted(HARNESSES))
    ap.add_argument("--out", required=True, help="folder for the run (HOME, work dir, ledger)")
    ap.add_argument("--prefix", help="npm prefix holding the harness (default $CTXBENCH_NPM_PREFIX)")
    ap.add_argument("--resume", action="store_true", help="gemini-cli: a second run with --resume latest")
    args = ap.parse_args(argv)
    prefix = npm_prefix(args.prefix)
    why = missing(args.harness, prefix)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    try:
        log, ledger, _script = run(args.harness, Path(args.out), prefix, resume=args.resume)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"session_log": str(log), "ledger": str(ledger)}))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
