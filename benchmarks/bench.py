"""`python benchmarks/bench.py` (`make bench`): how fast every command is, on generated corpora.

Corpora of 1,000 and 10,000 memories (100,000 with BENCH_LARGE=1) are grown
from the bundled cursorrules corpus into temp projects. Each command runs as a
whole process of the installed `engram` script, timed from outside, and every
timing is shown as a ratio to `python -c pass` measured in the same run,
because absolute times on shared machines drift.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engram
from benchmarks.sets import CURSORRULES
from engram.autowatch import AUTO_FROM
from engram.errors import EngramError, say
from engram.parse import ParseError, parse_memory, split_frontmatter

SEED_RULES = CURSORRULES / "rules"
DEFAULT_SIZES = (1_000, 10_000)
LARGE_SIZE = 100_000
DEFAULT_RUNS = 20
BASELINE_RUNS = 30
MIN_RUNS = 2
ROW_BUDGET_S = 60.0  # a row of a slow command (a compile far off its target, 100,000 memories) stops at MIN_RUNS
AREAS = ("api", "web", "auth", "billing", "db", "ui", "jobs", "search")
FOLDERS = (("rules", 6), ("skills", 3), ("knowledge", 1))  # folder, weight out of 10
DIRECTIVE_FRAMES = (
    "{d}",
    "In the {area} code: {d}",
    "{d} Applies to the {area} team.",
    "When touching {area}: {d}",
)
TASKS = (
    "write cypress tests for the login page",
    "add pagination to the users API endpoint",
    "our flutter widgets rebuild too often",
    "refactor the react form to use react-hook-form and zod validation",
    "speed up slow postgres queries in the fastapi service",
    "set up a github actions workflow that builds the docker image",
    "add dark mode to the next.js layout with tailwind",
    "add structured logging to the go microservice",
    "add a spring boot JPA repository for orders",
    "fix flaky pytest fixtures in the django app",
)
LONG_PROMPT_CHARS = 10_000  # a pasted document: hundreds of distinct words
EDITED_FILE = "src/api/users.ts"
HEADING = re.compile(r"^#{1,3} ")
FENCE = re.compile(r"^\s*(```|~~~)")


class BenchError(EngramError):
    """A command failed or the corpus is missing: one line, exit 1."""


# --- the seed corpus and the generated memories -------------------------------------------------


@dataclass(frozen=True)
class Seed:
    id: str
    tags: tuple[str, ...]
    directive: str
    title: str
    sections: tuple[str, ...]  # the body cut at its headings, the title line excluded


def load_seeds() -> list[Seed]:
    if not SEED_RULES.is_dir():
        raise BenchError(f"the seed corpus {SEED_RULES} is missing")
    seeds = []
    for path in sorted(SEED_RULES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        try:
            memory = parse_memory(text, f"rules/{path.name}")
        except ParseError:
            continue
        _, body, _ = split_frontmatter(text)
        seeds.append(Seed(memory.id, tuple(memory.tags), memory.directive, memory.title, _sections(body)))
    return seeds


def _sections(body: str) -> tuple[str, ...]:
    """The body cut before each heading outside code fences; the `# Title` line is dropped."""
    sections: list[list[str]] = [[]]
    in_fence = False
    for line in body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and HEADING.match(line):
            sections.append([])
        sections[-1].append(line)
    if len(sections) > 1 and sections[1][0].startswith("# "):
        sections[1] = sections[1][1:]
    texts = ("\n".join(lines).strip() for lines in sections)
    return tuple(text for text in texts if text)


def memory_path(n: int, seeds: list[Seed]) -> str:
    """Where memory number n lives, relative to the root: `<folder>/<area>/<id>.md`."""
    return f"{_folder(n)}/{AREAS[n % len(AREAS)]}/{_memory_id(n, seeds)}.md"


def _memory_id(n: int, seeds: list[Seed]) -> str:
    return f"{seeds[n % len(seeds)].id}-{n}"


def memory_text(n: int, seeds: list[Seed]) -> str:
    """The file text of memory number n: deterministic in n, mixing three seed files."""
    rng = random.Random(n)
    primary, *others = (seeds[n % len(seeds)], *rng.sample(seeds, 2))
    area = AREAS[n % len(AREAS)]
    tags = dict.fromkeys([*primary.tags, *others[0].tags[:2], *others[1].tags[: rng.randint(0, 2)]])
    directive = rng.choice(DIRECTIVE_FRAMES).format(d=primary.directive or primary.title, area=area)
    lines = [
        "---",
        f"id: {_memory_id(n, seeds)}",
        f"tags: [{', '.join(tags)}]",
        f"directive: {json.dumps(directive)}",
        f"confidence: {rng.choice(('high', 'high', 'medium', 'low'))}",
    ]
    if n % 10 == 0 and n > 0:  # prerequisite chains
        lines.append(f"depends_on: [{_memory_id(n - 1, seeds)}]")
    if n % 5 == 0:
        lines.append(f'applies_to: ["src/{area}/**/*.ts"]')
    kept = max(1, len(primary.sections) * 2 // 3)  # keeps sizes close to the seeds' with two borrowed sections
    borrowed = [rng.choice(seed.sections) for seed in others if seed.sections]
    body = "\n\n".join([f"# {primary.title or primary.id}", *primary.sections[:kept], *borrowed])
    return "\n".join([*lines, "---", body]) + "\n"


def _folder(n: int) -> str:
    slot = n % 10
    for folder, weight in FOLDERS:
        if slot < weight:
            return folder
        slot -= weight
    raise AssertionError("FOLDERS weights must sum to 10")


def write_corpus(root: Path, size: int, seeds: list[Seed]) -> int:
    """Write `size` memories under `root`, one file at a time; return their total bytes."""
    total = 0
    for n in range(size):
        path = root / memory_path(n, seeds)
        path.parent.mkdir(parents=True, exist_ok=True)
        total += path.write_bytes(memory_text(n, seeds).encode("utf-8"))
    return total


def make_project(base: Path, size: int, seeds: list[Seed]) -> tuple[Path, int]:
    project = base / f"project-{size}"
    root = project / ".agents" / ".engram"
    root.mkdir(parents=True)
    write_config(root, start_watch=False)  # the walk's rows first; `by_default` measures the default
    return project, write_corpus(root, size, seeds)


def write_config(root: Path, start_watch: bool | None) -> None:
    """Claude file events inject only with path_rules=hook (otherwise native rule files carry them);
    ``start_watch`` None leaves the default ("auto": the first read starts `engram watch`)."""
    hooks: dict[str, object] = {"path_rules": "hook"}
    if start_watch is not None:
        hooks["start_watch"] = start_watch
    (root / "engram.config.json").write_text(json.dumps({"hooks": hooks}) + "\n")


# --- measuring whole processes ------------------------------------------------------------------


@dataclass
class Sample:
    seconds: float
    rss_kb: int
    stdout: str


@dataclass
class Metric:
    runs: int
    p50_ms: float
    p95_ms: float
    p50_ratio: float  # against the baseline's median, measured in the same run
    p95_ratio: float
    peak_rss_kb: int
    ok_runs: int  # runs whose output was what the command should print
    times_ms: list[float]  # every run, in order: outliers stay explainable
    unexpected_output: str | None  # the first output that failed the check, to explain ok_runs
    memories_per_s: float | None = None  # compile only


# Runs one command per input line and answers [seconds, peak RSS KB, exit code, error]. Measured commands
# start from this small process, not from the harness: Linux counts the parent's resident memory
# at fork in a child's peak RSS (the high-water mark survives exec), and the harness holds a
# generated corpus, which made `python -c pass` read 27 MB at 10,000 memories.
SPAWNER = """
import json, os, sys, time
for line in sys.stdin:
    argv, cwd, env, paths = json.loads(line)
    flags = (os.O_RDONLY, os.O_WRONLY | os.O_TRUNC, os.O_WRONLY | os.O_TRUNC)
    actions = [(os.POSIX_SPAWN_OPEN, fd, path, flag, 0) for fd, path, flag in zip((0, 1, 2), paths, flags)]
    os.chdir(cwd)
    start = time.perf_counter()
    try:
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    except OSError as error:
        print(json.dumps([0, 0, 127, str(error)]), flush=True)
        continue
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps([time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status), ""]), flush=True)
"""


class Spawner:
    """A small long-lived process that runs each measured command (see SPAWNER)."""

    def __init__(self, workdir: Path) -> None:
        self.paths = [str(workdir / name) for name in ("stdin", "stdout", "stderr")]
        for path in self.paths:
            Path(path).touch()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", SPAWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> Sample:
        """One process, timed by the spawner around spawn and wait; os.wait4 gives its own peak RSS."""
        Path(self.paths[0]).write_text(stdin, encoding="utf-8")
        self.proc.stdin.write(json.dumps([argv, str(cwd), env, self.paths]) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise BenchError("the process spawner stopped")
        seconds, rss_kb, code, error = json.loads(answer)
        if code != 0:
            detail = error or Path(self.paths[2]).read_text(encoding="utf-8", errors="replace")[-500:]
            raise BenchError(f"`{' '.join(argv[1:])}` exited {code}: {detail}")
        return Sample(seconds, rss_kb, Path(self.paths[1]).read_text(encoding="utf-8", errors="replace"))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def always(argv: list[str]) -> Callable[[int], list[str]]:
    return lambda i: argv


def nothing(i: int) -> None:
    return None


def no_stdin(i: int) -> str:
    return ""


def any_output(stdout: str) -> bool:
    return True


@dataclass
class Case:
    """One table row: the command of run i, what to do before it (untimed), and what it must print."""

    name: str
    argv: Callable[[int], list[str]]
    runs: int
    stdin: Callable[[int], str] = no_stdin
    before: Callable[[int], None] = nothing
    ok: Callable[[str], bool] = any_output
    warmup: bool = True


def measure(spawner: Spawner, case: Case, cwd: Path, env: dict[str, str]) -> list[Sample]:
    """Up to case.runs samples, fewer once the row has spent ROW_BUDGET_S and has MIN_RUNS."""
    if case.warmup:  # page cache, .pyc files and state.db are in place after one run
        case.before(-1)
        spawner.run(case.argv(-1), cwd, env, case.stdin(-1))
    samples: list[Sample] = []
    started = time.perf_counter()
    for i in range(case.runs):
        if len(samples) >= MIN_RUNS and time.perf_counter() - started > ROW_BUDGET_S:
            break
        case.before(i)
        samples.append(spawner.run(case.argv(i), cwd, env, case.stdin(i)))
    return samples


def percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def summarize(samples: list[Sample], baseline_ms: float | None, ok: Callable[[str], bool]) -> Metric:
    """Median and p95, and their ratios to the baseline median (None: these samples are the baseline)."""
    times = [s.seconds * 1000 for s in samples]
    p50, p95 = statistics.median(times), percentile(times, 0.95)
    base = baseline_ms or p50
    unexpected = [s.stdout for s in samples if not ok(s.stdout)]
    return Metric(
        runs=len(samples),
        p50_ms=round(p50, 1),
        p95_ms=round(p95, 1),
        p50_ratio=round(p50 / base, 2),
        p95_ratio=round(p95 / base, 2),
        peak_rss_kb=max(s.rss_kb for s in samples),
        ok_runs=len(samples) - len(unexpected),
        times_ms=[round(t, 1) for t in times],
        unexpected_output=unexpected[0][:300] if unexpected else None,
    )


# --- the cases ----------------------------------------------------------------------------------


def injects(stdout: str) -> bool:
    try:
        output = json.loads(stdout).get("hookSpecificOutput") or {}
    except (ValueError, AttributeError):
        return False
    return bool(output.get("additionalContext"))


def hook_payload(project: Path, event: str, i: int, **fields: object) -> str:
    # A new session per run, so nothing counts as already delivered and the hook injects.
    return json.dumps({"session_id": f"bench-{event}-{i}", "cwd": str(project), "hook_event_name": event, **fields})


def write_shared_index(engram: str, project: Path, shared: Path) -> None:
    """`engram index --output`, once: the project's index copied out as a team would share it (untimed)."""
    if not shared.exists():
        subprocess.run([engram, "index", "--output", str(shared)], cwd=project, capture_output=True, check=True)


def remove_index(root: Path) -> None:
    for path in root.glob("index.db*"):
        path.unlink()


def append_line(root: Path, size: int, seeds: list[Seed], i: int) -> None:
    """Edit a different memory each run, spread over the corpus."""
    with open(root / memory_path((i * 7919) % size, seeds), "a", encoding="utf-8") as handle:
        handle.write(f"\n- Bench edit {i}: keep this memory current.\n")


def long_prompt(seeds: list[Seed]) -> str:
    """A task followed by a pasted document of about LONG_PROMPT_CHARS, from the seed rules."""
    pasted = "\n".join(section for seed in seeds for section in seed.sections)
    return f"{TASKS[0]}, see the notes below:\n{pasted}"[:LONG_PROMPT_CHARS]


def engram_cases(engram: str, project: Path, size: int, seeds: list[Seed], runs: int) -> list[Case]:
    root = project / ".agents" / ".engram"
    shared = project.parent / f"team-{size}.db"  # a prebuilt shared index: read as is, no folder walked
    pasted = long_prompt(seeds)
    index, hook = always([engram, "index"]), always([engram, "hook", "--host", "claude"])
    edit = {"file_path": str(project / EDITED_FILE), "old_string": "a", "new_string": "b"}
    return [
        Case(
            "compile",
            index,
            max(2, min(5, runs // 5)),
            before=lambda i: remove_index(root),
            ok=lambda out: out.startswith(f"indexed {size} memories from {size} files ({size} added"),
            warmup=False,
        ),
        Case("no-op refresh", index, runs, ok=lambda out: "(0 added, 0 changed, 0 removed" in out),
        Case(
            "edit-one refresh",
            index,
            max(2, runs // 2),
            before=lambda i: append_line(root, size, seeds, i),
            ok=lambda out: "(0 added, 1 changed" in out,
        ),
        Case("load", lambda i: [engram, "load", TASKS[i % len(TASKS)]], runs, ok=lambda out: bool(out.strip())),
        Case(
            "load --index",
            lambda i: [engram, "load", "--index", str(shared), TASKS[i % len(TASKS)]],
            runs,
            before=lambda i: write_shared_index(engram, project, shared),
            ok=lambda out: bool(out.strip()),
        ),
        Case(
            "hook prompt",
            hook,
            runs,
            stdin=lambda i: hook_payload(project, "UserPromptSubmit", i, prompt=TASKS[i % len(TASKS)]),
            ok=injects,
        ),
        Case(
            "hook long prompt",
            hook,
            max(MIN_RUNS, runs // 4),
            stdin=lambda i: hook_payload(project, "UserPromptSubmit", i, prompt=pasted),
            ok=lambda out: out.startswith("{"),
        ),
        Case(
            "hook file",
            hook,
            runs,
            stdin=lambda i: hook_payload(project, "PreToolUse", i, tool_name="Edit", tool_input=edit),
            ok=injects,
        ),
    ]


WATCHED = ("load", "hook prompt", "hook file")  # the reads an `engram watch` spares the walk and imports
NO_WATCHER = ", no watcher"  # the same reads with "start_watch": false: each call walks every file


def walking(case: Case) -> Case:
    return replace(case, name=case.name + NO_WATCHER) if case.name in WATCHED else case


def default_cases(cases: list[Case]) -> list[Case]:
    """The reads again with the default config, in sessions of their own (so the hooks inject)."""
    return [replace(case, stdin=lambda i, case=case: case.stdin(i + 100_000)) for case in cases if case.name in WATCHED]


class Watching:
    """The `engram watch` the project's first read started by default: whether it came up, and its
    peak RSS when the bench stopped it."""

    def __init__(self, root: Path, expected: bool, within: float = 30.0) -> None:
        self.root, self.pid, self.peak_rss_kb = root, None, None
        deadline = time.monotonic() + (within if expected else 0)
        while time.monotonic() < deadline and self.pid is None:
            with contextlib.suppress(OSError, ValueError):
                if (root / "watch.sock").exists():
                    self.pid = int((root / ".watch.started").read_text())
            time.sleep(0.05)

    def stop(self) -> None:
        if self.pid is None:
            return
        with contextlib.suppress(OSError, StopIteration):
            status = Path(f"/proc/{self.pid}/status").read_text().splitlines()
            self.peak_rss_kb = int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while (self.root / "watch.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)


@contextlib.contextmanager
def by_default(engram: str, project: Path, size: int, env: dict[str, str]) -> Iterator[Watching]:
    """The project with its default config: one `load` (a session's first call) walks and, from
    AUTO_FROM memories on Linux, starts `engram watch`, which answers the block's calls; stopped after
    it (``pid`` None where none came up)."""
    root = project / ".agents" / ".engram"
    write_config(root, start_watch=None)
    subprocess.run([engram, "load", TASKS[0]], cwd=project, env=env, capture_output=True, check=False)
    watcher = Watching(root, expected=size >= AUTO_FROM and sys.platform.startswith("linux"))
    try:
        yield watcher
    finally:
        watcher.stop()


# --- one corpus size ----------------------------------------------------------------------------


@dataclass
class SizeResult:
    memories: int
    generate_s: float
    sources_bytes: int
    index_bytes: int
    index_ratio: float
    baseline: Metric
    metrics: dict[str, Metric]
    watch_peak_rss_kb: int | None = None  # of the `engram watch` that answered the default rows


def bench_env(config_dir: Path) -> dict[str, str]:
    """The user's config and global root stay out of the measurements."""
    # PYTHONDONTWRITEBYTECODE goes too: users' installs have .pyc files (byte_compile_engram writes them)
    # and CI: a developer's machine, where reads in a big folder start `engram watch`
    dropped = ("ENGRAM_GLOBAL_DIR", "ENGRAM_DEBUG", "PYTHONDONTWRITEBYTECODE", "CI")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["ENGRAM_CONFIG_DIR"] = str(config_dir)
    return env


def bench_size(spawner: Spawner, base: Path, engram: str, size: int, seeds: list[Seed], runs: int) -> SizeResult:
    """Generate one corpus, measure the baseline then every case, and delete the corpus."""
    progress(f"{size:,} memories: generating")
    started = time.perf_counter()
    project, sources_bytes = make_project(base, size, seeds)
    generate_s = time.perf_counter() - started
    env = bench_env(base / "config")
    # Per size, so a drift in machine load over a long run shifts both sides of each ratio.
    python = Case("python -c pass", always([sys.executable, "-c", "pass"]), BASELINE_RUNS)
    baseline = summarize(measure(spawner, python, project, env), None, python.ok)
    metrics = {}
    cases = engram_cases(engram, project, size, seeds, runs)
    for case in [walking(case) for case in cases]:
        progress(f"{size:,} memories: {case.name} x{case.runs}")
        metrics[case.name] = summarize(measure(spawner, case, project, env), baseline.p50_ms, case.ok)
    with by_default(engram, project, size, env) as watcher:
        for case in default_cases(cases):
            progress(f"{size:,} memories: {case.name} x{case.runs}")
            metrics[case.name] = summarize(measure(spawner, case, project, env), baseline.p50_ms, case.ok)
    metrics["compile"].memories_per_s = round(size / (metrics["compile"].p50_ms / 1000))
    index_bytes = (project / ".agents" / ".engram" / "index.db").stat().st_size
    shutil.rmtree(project)
    return SizeResult(
        size,
        round(generate_s, 1),
        sources_bytes,
        index_bytes,
        round(index_bytes / sources_bytes, 2),
        baseline,
        metrics,
        watcher.peak_rss_kb,
    )


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# --- targets ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    memories: int
    name: str
    value: Callable[[SizeResult], float]
    passes: Callable[[float], bool]
    shown: str  # format of the value


def p50_ratio(case: str) -> Callable[[SizeResult], float]:
    return lambda r: r.metrics[case].p50_ratio


def peak_rss_mb(result: SizeResult) -> float:
    return max([m.peak_rss_kb for m in result.metrics.values()] + [result.watch_peak_rss_kb or 0]) / 1024


TARGETS = (
    Target(
        10_000,
        "compile >= 1,000 memories/s",
        lambda r: r.metrics["compile"].memories_per_s,
        lambda v: v >= 1000,
        "{:,.0f}/s",
    ),
    Target(
        10_000, "no-op refresh p50 < 0.2 s", lambda r: r.metrics["no-op refresh"].p50_ms, lambda v: v < 200, "{:.0f} ms"
    ),
    Target(10_000, "load p50 <= 5x python", p50_ratio("load"), lambda v: v <= 5, "x{:.2f}"),
    Target(10_000, "hook prompt p50 <= 3x python", p50_ratio("hook prompt"), lambda v: v <= 3, "x{:.2f}"),
    Target(10_000, "hook file p50 <= 3x python", p50_ratio("hook file"), lambda v: v <= 3, "x{:.2f}"),
    Target(10_000, "peak RSS of every command < 100 MB", peak_rss_mb, lambda v: v < 100, "{:.1f} MB"),
    Target(10_000, "index < 2x sources", lambda r: r.index_ratio, lambda v: v < 2, "x{:.2f}"),
    Target(LARGE_SIZE, "load --index p50 <= 10x python", p50_ratio("load --index"), lambda v: v <= 10, "x{:.2f}"),
    Target(
        LARGE_SIZE,
        "load --index peak RSS < 100 MB",
        lambda r: r.metrics["load --index"].peak_rss_kb / 1024,
        lambda v: v < 100,
        "{:.1f} MB",
    ),
    Target(LARGE_SIZE, "compile < 3 min", lambda r: r.metrics["compile"].p50_ms / 1000, lambda v: v < 180, "{:.0f} s"),
)


def check_targets(results: list[SizeResult]) -> list[dict]:
    by_size = {r.memories: r for r in results}
    checked = []
    for target in TARGETS:
        result = by_size.get(target.memories)
        if result is None:
            continue  # the size was not run
        value = target.value(result)
        checked.append(
            {
                "memories": target.memories,
                "target": target.name,
                "value": value,
                "shown": target.shown.format(value),
                "pass": target.passes(value),
            }
        )
    return checked


# --- output -------------------------------------------------------------------------------------


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]


def timing_table(results: list[SizeResult]) -> Table:
    headers = ["memories", "command", "runs", "p50 ms", "p95 ms", "p50/python", "p95/python", "peak RSS MB", "note"]
    rows = []
    for result in results:
        for name, metric in {"python -c pass": result.baseline, **result.metrics}.items():
            rows.append(
                [
                    f"{result.memories:,}",
                    name,
                    str(metric.runs),
                    f"{metric.p50_ms:.1f}",
                    f"{metric.p95_ms:.1f}",
                    f"x{metric.p50_ratio:.2f}",
                    f"x{metric.p95_ratio:.2f}",
                    f"{metric.peak_rss_kb / 1024:.1f}",
                    _note(metric),
                ]
            )
    return Table("engram speed (whole processes; ratios against python -c pass)", headers, rows)


def _note(metric: Metric) -> str:
    notes = []
    if metric.memories_per_s is not None:
        notes.append(f"{metric.memories_per_s:,.0f} memories/s")
    if metric.ok_runs < metric.runs:
        notes.append(f"{metric.runs - metric.ok_runs} of {metric.runs} failed the output check")
    return "; ".join(notes)


def size_table(results: list[SizeResult]) -> Table:
    rows = [
        [
            f"{r.memories:,}",
            f"{r.sources_bytes / 2**20:.1f}",
            f"{r.index_bytes / 2**20:.1f}",
            f"x{r.index_ratio:.2f}",
            f"{r.generate_s:.1f}",
            f"{r.watch_peak_rss_kb / 1024:.1f}" if r.watch_peak_rss_kb else "-",
        ]
        for r in results
    ]
    headers = ["memories", "sources MB", "index.db MB", "index/sources", "corpus written in s", "engram watch RSS MB"]
    return Table("index size on disk, and the watcher's memory", headers, rows)


def target_table(checked: list[dict]) -> Table:
    rows = [[f"{t['memories']:,}", t["target"], t["shown"], "pass" if t["pass"] else "FAIL"] for t in checked]
    return Table("targets", ["memories", "target", "measured", "result"], rows)


def render_plain(table: Table) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(table.headers, *table.rows)]
    lines = [table.title, "  ".join(h.ljust(w) for h, w in zip(table.headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table.rows]
    return "\n".join(lines) + "\n"


def print_tables(tables: list[Table]) -> None:
    if not sys.stdout.isatty():
        print("\n".join(render_plain(t) for t in tables if t.rows), end="")
        return
    from rich.console import Console  # only on a terminal: rich costs ~50 ms to import
    from rich.table import Table as RichTable

    console = Console()
    for table in tables:
        if not table.rows:
            continue
        shown = RichTable(title=table.title, title_justify="left")
        for header in table.headers:
            shown.add_column(header)
        for row in table.rows:
            shown.add_row(*(f"[red]{c}[/red]" if c == "FAIL" else c for c in row))
        console.print(shown)


# --- the command --------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench.py", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=DEFAULT_SIZES, help="corpus sizes, e.g. 1000,10000")
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help="runs of each fast command (compile: a fifth, 2-5; edit-one refresh: half)",
    )
    parser.add_argument("--out", type=Path, default=Path("bench-results.json"), help="where the JSON results go")
    args = parser.parse_args(argv)
    if os.environ.get("BENCH_LARGE") == "1" and LARGE_SIZE not in args.sizes:
        args.sizes = (*args.sizes, LARGE_SIZE)
    if args.runs < 2:
        parser.error("--runs must be at least 2")
    return args


def _sizes(raw: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in raw.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("sizes are comma-separated integers") from None
    if any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def engram_script() -> str:
    found = shutil.which("engram", path=os.path.dirname(sys.executable))
    if not found:
        raise BenchError(f"no engram console script next to {sys.executable}; install engram in this environment")
    return found


def byte_compile_engram() -> None:
    """Measure engram as pip installs it, with bytecode written.

    An editable checkout run with PYTHONDONTWRITEBYTECODE (as on CI machines) would
    otherwise compile every module from source in every measured process.
    """
    compileall.compile_dir(os.path.dirname(engram.__file__), quiet=1)


def run(args: argparse.Namespace) -> dict:
    seeds = load_seeds()
    engram = engram_script()
    byte_compile_engram()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        spawner = Spawner(Path(tmp))
        try:
            results = [bench_size(spawner, Path(tmp), engram, size, seeds, args.runs) for size in args.sizes]
        finally:
            spawner.close()
    checked = check_targets(results)
    print_tables([timing_table(results), size_table(results), target_table(checked)])
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "seconds": round(time.perf_counter() - started, 1),
        "sizes": [asdict(r) for r in results],
        "targets": checked,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        report = run(args)
    except BenchError as exc:
        say(f"error: {exc}", "engram bench")
        return 1
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.out}")
    missed = [t["target"] for t in report["targets"] if not t["pass"]]
    if missed:  # so the numbers cannot drift unnoticed
        say(f"{len(missed)} of {len(report['targets'])} goals missed: {'; '.join(missed)}", "engram bench")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
