"""`grade release DIR`: the handout learners or candidates receive.

DIR/README.md            how to set up and check work (learners) or what is graded (candidates),
                         the contracts, the rules and the file names to hand in
DIR/exercises/*.py       the skeletons, with their # TODO
DIR/exercises/info.toml  the exercise metadata (for the selected exercises)
DIR/.attention-kit.json  (learners) makes the handout a workspace: `grade exercise 1` works inside it
DIR/wheels/*.whl         (learners) the kit itself, unless the instructor names a kit spec to install
DIR/pack/                (learners, from a pack) the pack's exercises, solutions and checks, which the learner's
                         grader needs; the workspace names it, relative to the handout

The README's install lines install: the CPU build of torch, then the wheel beside it (or the
instructor's URL / git spec, checked by kitwheel.check_kit_spec). The candidates' handout has no
grader, no hints and no test configuration: its info.toml keeps only what describes the task; its
README says how to set up (the Python and torch versions the submissions are graded with), what each
exercise is worth, and carries the team's time limit and notes (a tools or AI policy) when given.
Never the reference solutions, never the hidden suites in the handout's own files (a pack's learners' handout
carries its references in pack/ for the grader, as the kit's wheel carries the kit's).
"""
from __future__ import annotations

import json
import platform
import re
import tomllib
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import workspace
from grader.catalog import Exercise, kit_dir, load_catalog
from grader.instructor import UsageError, select_exercises
from grader.instructor.kitwheel import TORCH_CPU, built_torch, check_kit_spec, kit_wheel

AUDIENCES = ("learners", "candidates")
TASK_KEYS = ("number", "slug", "title", "file", "kind", "entry", "signature", "contract", "forbidden")
WHEELS = "wheels"
MAX_NOTES_BYTES = 64 * 1024
UNITS = {"d": 1440, "day": 1440, "days": 1440, "h": 60, "hr": 60, "hrs": 60, "hour": 60, "hours": 60,
         "m": 1, "min": 1, "mins": 1, "minute": 1, "minutes": 1}


def metadata_for(exercises: list[Exercise]) -> str:
    """info.toml with only the selected [[exercise]] tables (comments and shared settings kept)."""
    text = (kit_dir("exercises") / "info.toml").read_text(encoding="utf-8")
    head, *blocks = text.split("\n[[exercise]]\n")
    wanted = {ex.number for ex in exercises}
    kept = [b for b in blocks if tomllib.loads(b)["number"] in wanted]
    return "\n[[exercise]]\n".join([head, *kept]).rstrip("\n") + "\n"


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {type(value).__name__}")


def task_metadata_for(exercises: list[Exercise]) -> str:
    """The candidates' info.toml: what the task is, no hints, no test configuration (sweeps, probes, limits)."""
    doc = tomllib.loads((kit_dir("exercises") / "info.toml").read_text(encoding="utf-8"))
    wanted = {ex.number for ex in exercises}
    lines = ["# The exercises of this take-home: their files, what to write, and the contracts.", "",
             f"format_version = {_toml_value(doc.get('format_version', 1))}",
             f"allowed_imports = {_toml_value(doc.get('allowed_imports', []))}"]
    for table in doc["exercise"]:
        if table["number"] in wanted:
            lines += ["", "[[exercise]]"] + [f"{k} = {_toml_value(table[k])}" for k in TASK_KEYS if k in table]
    return "\n".join(lines) + "\n"


def time_limit_text(spec: str) -> str:
    """"3h", "90m", "2h30m", "1.5 hours", "45 minutes" -> "3 hours", "1 hour 30 minutes", ...; else a usage error."""
    compact = re.sub(r"\s+", "", spec.lower())
    parts = re.findall(r"(\d+(?:\.\d+)?)([a-z]+)", compact)
    if not re.fullmatch(r"(\d+(\.\d+)?[a-z]+)+", compact) or any(unit not in UNITS for _, unit in parts):
        raise UsageError(f"--time-limit takes a duration such as 90m, 3h, 2h30m or 2 days, not {spec!r}")
    minutes = round(sum(float(n) * UNITS[u] for n, u in parts))
    if not 1 <= minutes <= 60 * 24 * 60:
        raise UsageError(f"--time-limit must be between one minute and 60 days, not {spec!r}")
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    shown = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((days, "day"), (hours, "hour"), (mins, "minute")) if n]
    return " ".join(shown)


def notes_text(path: Path) -> str:
    """The team's notes (Markdown, UTF-8, at most 64 KB) as they wrote them; anything else is a usage error."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read --notes {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_NOTES_BYTES:
        raise UsageError(f"--notes {path} is larger than {MAX_NOTES_BYTES >> 10} KB; keep the handout's notes short")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"--notes {path} is not UTF-8 text") from None
    if "\x00" in text:
        raise UsageError(f"--notes {path} is not a text file")
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise UsageError(f"--notes {path} is empty")
    return nested(text)


def nested(markdown: str, levels: int = 2) -> str:
    """Headings moved down `levels` (# -> ###), so that the notes sit under the README's own section;
    code blocks kept as they are."""
    out, fence = [], ""
    for line in markdown.splitlines():
        marker = re.match(r"\s{0,3}(`{3,}|~{3,})", line)
        if marker and (not fence or marker[1].startswith(fence)):
            fence = "" if fence else marker[1]
        elif not fence and re.match(r"#{1,6}(\s|$)", line):
            hashes = len(line) - len(line.lstrip("#"))
            line = "#" * min(6, hashes + levels) + line[hashes:]
        out.append(line)
    return "\n".join(out)


def readme(exercises: list[Exercise], *, audience: str, install: str, title: str, time_limit: str = "",
           notes: str = "") -> str:
    from grader.instructor.grading import max_points

    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "release")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["cell"] = lambda s: str(s).replace("|", "\\|")
    groups: dict[tuple[str, ...], list[int]] = {}
    for ex in exercises:
        if ex.forbidden:
            groups.setdefault(ex.forbidden, []).append(ex.number)
    forbidden = [(numbers, names) for names, numbers in groups.items()]
    # what each exercise is worth (counted from its hidden checks: torch and the suites are imported, so only for
    # the candidates' handout; learners see their points whenever they grade)
    points = {ex.number: max_points(ex.number) for ex in exercises} if audience == "candidates" else {}
    python = ".".join(platform.python_version_tuple()[:2])
    return env.get_template("README.md").render(
        exercises=exercises, audience=audience, install=install, title=title, forbidden=forbidden, torch_line=TORCH_CPU,
        allowed_imports=load_catalog().allowed_imports, points=points, total=sum(points.values()),
        torch=built_torch(), python=python, python_full=platform.python_version(), time_limit=time_limit, notes=notes)


def install_line(directory: Path, *, kit_spec: str | None, wheel: Path | None, source: Path | None = None) -> str:
    """The pip line that installs the kit: the instructor's spec (checked), else a wheel put into directory."""
    if kit_spec is not None:
        if wheel is not None:
            raise UsageError("give either --kit-spec or --wheel, not both")
        return f"pip install {check_kit_spec(kit_spec)}"
    from grader.instructor.kitwheel import WheelError

    try:
        built = kit_wheel(Path(directory) / WHEELS, source=source, wheel=wheel)
    except WheelError as exc:
        raise UsageError(f"{exc}; pass --wheel FILE or --kit-spec URL") from None
    return f"pip install ./{WHEELS}/{built.name}"


def release(*, directory: Path, audience: str = "learners", kit_spec: str | None = None, wheel: Path | None = None,
            exercises: str | None = None, title: str = "Attention exercises", force: bool = False,
            time_limit: str | None = None, notes: Path | None = None) -> list[Path]:
    """Write the handout into directory; returns the files written. time_limit ("3h", "90m") and notes (a
    Markdown file: a tools or AI policy) go into its README as the team wrote them."""
    if audience not in AUDIENCES:
        raise UsageError(f"unknown audience {audience!r}; choose learners or candidates")
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a folder")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise UsageError(f"{directory} is not empty; choose a new folder or pass --force to write into it")
    if audience == "candidates" and (kit_spec or wheel):
        raise UsageError("the candidates' handout has no grader to install; leave out --kit-spec and --wheel")
    if kit_spec is not None:
        check_kit_spec(kit_spec)
    limit = time_limit_text(time_limit) if time_limit is not None else ""
    team_notes = notes_text(notes) if notes is not None else ""
    selected = select_exercises(exercises)
    (directory / "exercises").mkdir(parents=True, exist_ok=True)
    written = []
    install = ""
    if audience == "learners":
        install = install_line(directory, kit_spec=kit_spec, wheel=wheel)
        written += sorted((directory / WHEELS).glob("*.whl"))
    for ex in selected:
        target = directory / "exercises" / ex.file
        target.write_text(ex.skeleton_path.read_text(encoding="utf-8"), encoding="utf-8")
        written.append(target)
    info = directory / "exercises" / "info.toml"
    info.write_text(metadata_for(selected) if audience == "learners" else task_metadata_for(selected),
                    encoding="utf-8")
    doc = directory / "README.md"
    doc.write_text(readme(selected, audience=audience, install=install, title=title, time_limit=limit,
                          notes=team_notes), encoding="utf-8")
    written = [doc, info, *written]
    if audience == "learners":
        pack = load_catalog().pack
        ws = workspace.Workspace(directory.resolve())
        if not pack.builtin:  # the grader needs the pack's references and checks: it travels with the handout
            written += copy_pack(pack, directory / PACK_DIR)
            ws.pack = PACK_DIR  # relative to the workspace: the handout can move
        ws.save()
        written.append(ws.state_path)
    return written


PACK_DIR = "pack"


def copy_pack(pack, target: Path) -> list[Path]:
    """The pack's exercises, solutions and checks (not its corpus) into target, for the learners' grader."""
    import shutil

    written = []
    for name in ("exercises", "solutions", "checks"):
        source = getattr(pack, name)
        if source.is_dir():
            shutil.copytree(source, target / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            written += sorted(p for p in (target / name).rglob("*") if p.is_file())
    return written
