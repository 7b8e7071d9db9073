"""The exercise catalog: reads exercises/info.toml and finds the kit's files, installed or not."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


class UnknownExercise(LookupError):
    """Raised for an exercise number or slug the catalog does not know."""


def kit_dir(name: str) -> Path:
    """exercises/, solutions/ or templates/: inside the wheel (grader/_kit) or beside the package in a checkout."""
    installed = PACKAGE_DIR / "_kit" / name
    return installed if installed.is_dir() else PACKAGE_DIR.parent / name


@dataclass(frozen=True)
class Exercise:
    number: int
    slug: str
    title: str
    file: str
    kind: str
    entry: str
    signature: tuple[str, ...]
    contract: str
    features: frozenset[str]
    config: dict
    forbidden: tuple[str, ...]
    topics: tuple[str, ...]
    hints: tuple[str, ...]
    roles: dict = field(default_factory=dict)
    dims: dict = field(default_factory=dict)
    sweep: tuple[dict, ...] = ()
    probe: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)  # sandbox limits this exercise needs (memory_mb, cpu_s)

    @property
    def skeleton_path(self) -> Path:
        return kit_dir("exercises") / self.file

    @property
    def solution_path(self) -> Path:
        return kit_dir("solutions") / self.file

    def has(self, feature: str) -> bool:
        return feature in self.features

    def dim(self, role: str, init: dict | None = None):
        """The value of a constructor argument by its role (input, output, heads, context, dropout)."""
        key = self.dims.get(role)
        return None if key is None else (init or self.config).get(key)


@dataclass(frozen=True)
class Catalog:
    exercises: tuple[Exercise, ...]
    points: dict
    allowed_imports: tuple[str, ...]

    def get(self, key: str | int) -> Exercise:
        """Look an exercise up by number ("3", 3, "03") or slug ("causal_attention")."""
        text = str(key).strip()
        for ex in self.exercises:
            if text == ex.slug or (text.isdigit() and int(text) == ex.number):
                return ex
        known = ", ".join(f"{ex.number} ({ex.slug})" for ex in self.exercises)
        raise UnknownExercise(f"unknown exercise {text!r}; choose one of {known}")

    def next_after(self, ex: Exercise) -> Exercise | None:
        later = [e for e in self.exercises if e.number > ex.number]
        return later[0] if later else None


@cache
def load_catalog(path: Path | None = None) -> Catalog:
    path = path or kit_dir("exercises") / "info.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    exercises = tuple(
        Exercise(
            number=e["number"],
            slug=e["slug"],
            title=e["title"],
            file=e["file"],
            kind=e["kind"],
            entry=e["entry"],
            signature=tuple(e["signature"]),
            contract=" ".join(e["contract"].split()),
            features=frozenset(e.get("features", ())),
            config=dict(e["config"]),
            forbidden=tuple(e.get("forbidden", ())),
            topics=tuple(e.get("topics", ())),
            hints=tuple(e["hints"]),
            roles=dict(e.get("roles", {})),
            dims=dict(e.get("dims", {})),
            sweep=tuple(dict(s) for s in e.get("sweep", ())),
            probe=dict(e.get("probe", {})),
            limits=dict(e.get("limits", {})),
        )
        for e in data["exercise"]
    )
    return Catalog(exercises, dict(data["points"]), tuple(data["allowed_imports"]))
