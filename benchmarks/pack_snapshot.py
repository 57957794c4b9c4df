"""What engram packs for every case of every bundled set, as one JSON file: the check that a
change meant to keep behaviour changed no pack.

    python benchmarks/pack_snapshot.py OUT.json [--compare BEFORE.json]

Each set of `sets.bundled()` is routed over its folder, copied into a temporary project and
indexed, all in this process. Per case it records what `engram load --json` prints (bodies
replaced by their SHA-256), the `--dry-run` text's digest, the pack a `UserPromptSubmit` hook
gets from Claude Code (twice in one session: the second time folds into `already loaded`) and
from Codex (its cap is in tokens), and `engram graph TASK`. Per folder it records the
session-start pack and the file-event packs of paths made from every `applies_to` glob; per set,
the `engram benchmark` report. `--compare` exits 1 and names the first differences when the
new file is not identical to BEFORE.json.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import sets

HEADING = re.compile(r"^### ([a-z0-9][a-z0-9._-]*) \[", re.MULTILINE)
CARD = re.compile(r"^- ([a-z0-9][a-z0-9._-]*) \[", re.MULTILINE)
ALREADY = re.compile(r"^already loaded: (.*)$", re.MULTILINE)
SHOWN_DIFFERENCES = 20


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def isolate(work: Path) -> None:
    """No user config, global root or debug output of the machine running this."""
    for name in [n for n in os.environ if n.startswith("ENGRAM_")]:
        del os.environ[name]
    os.environ["ENGRAM_CONFIG_DIR"] = str(work / "config")


def make_project(source: Path, project: Path) -> None:
    """A project holding ``source`` (a memory root) as its `.agents/.engram`, indexed."""
    from engram.compile import compile_root
    from engram.workspace import open_workspace

    shutil.copytree(source, project / ".agents" / ".engram")
    (project / ".git").mkdir()  # the project's top: no folder above is searched
    ws = open_workspace(str(project))
    compile_root(ws.root, ws.config)


@contextlib.contextmanager
def inside(project: Path):
    """The working directory the commands that read it (`graph`, `benchmark`) run in."""
    before = os.getcwd()
    os.chdir(project)
    try:
        yield
    finally:
        os.chdir(before)


def load_record(project: Path, query: str) -> dict:
    from engram.layers import open_layers
    from engram.load import load_pack
    from engram.render import render_dry_run, render_json
    from engram.workspace import open_workspace

    ws = open_workspace(str(project))
    layers = open_layers(ws, None, [])
    routing, pack = load_pack(layers, query, ws, None, explain=True)
    payload = json.loads(render_json(routing, pack))
    for entry in payload["entries"]:
        if "text" in entry:
            entry["text"] = digest(entry["text"])
    return {"json": payload, "dry_run": digest(render_dry_run(routing, pack))}


def hook_record(host: str, payload: dict) -> dict | None:
    """What the hook adds to the agent's context for one event."""
    from engram import hook

    out = hook.run(["--host", host], json.dumps(payload).encode("utf-8"))
    text = out.get("hookSpecificOutput", {}).get("additionalContext") or out.get("additional_context")
    if not text:
        return None
    already = ALREADY.search(text)
    return {
        "bodies": HEADING.findall(text),
        "cards": CARD.findall(text),
        "already": already.group(1) if already else None,
        "text": digest(text),
    }


def graph_record(project: Path, query: str) -> list[str]:
    from engram.commands import run_graph

    out = io.StringIO()
    with inside(project), contextlib.redirect_stdout(out):
        run_graph(query, False)
    return out.getvalue().splitlines()


def prompt_records(project: Path, query: str, session: str) -> dict:
    event = {"hook_event_name": "UserPromptSubmit", "prompt": query, "cwd": str(project)}
    claude = {**event, "session_id": session}
    return {
        "claude": hook_record("claude", claude),
        "claude_again": hook_record("claude", claude),
        "codex": hook_record("codex", {**event, "session_id": session}),
    }


def sample_paths(project: Path) -> list[str]:
    """A path made from each `applies_to` glob of the folder: its wildcards filled in."""
    from engram.layers import open_layers
    from engram.workspace import open_workspace

    layers = open_layers(open_workspace(str(project)), None, [])
    paths: set[str] = set()
    for (raw,) in layers[0].conn.execute("SELECT applies_to FROM memories WHERE applies_to != '[]'"):
        for glob in json.loads(raw):
            path = re.sub(r"\{([^,}]*)[^}]*\}", r"\1", glob).replace("**/", "").replace("**", "a")
            path = re.sub(r"\[[^\]]*\]", "x", path).replace("*", "x").replace("?", "x").strip("/")
            if path and not path.startswith("#"):
                paths.add(path)
    return sorted(paths)


def folder_records(project: Path, name: str) -> dict:
    start = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(project), "session_id": f"{name}-start"}
    files = {}
    for number, path in enumerate(sample_paths(project)):
        event = {"hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {"file_path": path}}
        files[path] = hook_record("gemini", {**event, "cwd": str(project), "session_id": f"{name}-file-{number}"})
    return {"session_start": hook_record("claude", start), "files": files}


def benchmark_record(project: Path, cases_path: Path) -> dict:
    from engram.benchmark import run_benchmark

    with inside(project):
        report = run_benchmark(cases_path)
    return {key: report[key] for key in ("results", "misses", "miss_reasons", "unknown_ids")}


def snapshot(work: Path) -> dict:
    isolate(work)
    projects: dict[Path, Path] = {}
    out: dict = {"folders": {}, "sets": {}}
    for task_set in sets.bundled():
        cases = task_set.cases()
        source = task_set.folder(cases[0]).resolve()
        if source not in projects:
            projects[source] = work / f"p{len(projects)}"
            make_project(source, projects[source])
            folder = str(source.relative_to(sets.ROOT))
            out["folders"][folder] = folder_records(projects[source], f"f{len(projects)}")
        project = projects[source]
        records = []
        for number, case in enumerate(cases):
            query = case["query"]
            hooks = prompt_records(project, query, f"{task_set.name}-{number}")
            records.append(
                {
                    "query": query,
                    "load": load_record(project, query),
                    "hooks": hooks,
                    "graph": graph_record(project, query),
                }
            )
        out["sets"][task_set.name] = {"cases": records, "benchmark": benchmark_record(project, task_set.cases_path)}
        print(f"{task_set.name}: {len(records)} cases", file=sys.stderr)
    return out


def differences(before: object, after: object, where: str = "") -> list[str]:
    """Where two snapshots differ, as JSON paths."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = dict.fromkeys([*before, *after])
        return [d for key in keys for d in differences(before.get(key), after.get(key), f"{where}/{key}")]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [d for i, (b, a) in enumerate(zip(before, after)) for d in differences(b, a, f"{where}[{i}]")]
    return [] if before == after else [f"{where}: {json.dumps(before)[:200]} -> {json.dumps(after)[:200]}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the snapshot to write")
    parser.add_argument("--compare", type=Path, help="a snapshot written before: exit 1 unless identical")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="engram-snapshot-") as work:
        data = snapshot(Path(work))
    args.output.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    cases = sum(len(s["cases"]) for s in data["sets"].values())
    print(f"wrote {args.output}: {cases} cases of {len(data['sets'])} sets over {len(data['folders'])} folders")
    if args.compare is None:
        return 0
    found = differences(json.loads(args.compare.read_text(encoding="utf-8")), data)
    for line in found[:SHOWN_DIFFERENCES]:
        print(line)
    print(f"identical to {args.compare}" if not found else f"{len(found)} differences from {args.compare}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
