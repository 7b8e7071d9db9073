"""The kit as something a learner, a Classroom runner or Gradescope can pip-install.

kit_wheel() gives a wheel of the running kit: built with pip from a source checkout when the kit
runs from one (a clone, an editable install), otherwise repacked from the installed files and their
metadata (a wheel install has no checkout, but its RECORD lists every file the wheel held).
check_kit_spec() refuses a pip requirement that cannot install the kit, such as
`attention-kit==0.1.0` from PyPI, where the kit is not published.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from grader import __version__
from grader.catalog import PACKAGE_DIR
from grader.instructor import UsageError

DIST = "attention-kit"
WHEEL_NAME = f"attention_kit-{__version__}-py3-none-any.whl"
INSTALL_ONLY = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}  # written by pip at install time
INDEX_OPTIONS = ("--index-url", "--extra-index-url", "-i", "--find-links", "-f")
TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def built_torch() -> str:
    """The torch release this kit runs (and was tested) with, without its local tag: 2.13.0+cpu -> 2.13.0."""
    return importlib.metadata.version("torch").split("+", 1)[0]


class WheelError(Exception):
    """No wheel of the kit could be made (an internal error)."""


def checkout() -> Path | None:
    """The source checkout this kit runs from, if it runs from one (editable install or a clone)."""
    root = PACKAGE_DIR.parent
    pyproject = root / "pyproject.toml"
    return root if pyproject.is_file() and 'name = "attention-kit"' in pyproject.read_text(encoding="utf-8") else None


def build_wheel(source: Path, dest: Path) -> Path:
    """pip wheel --no-deps SOURCE; without build isolation when hatchling is already installed (offline)."""
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "--quiet", "-w", str(dest), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(Path(dest).glob("attention_kit-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise WheelError(f"building the wheel failed: {(proc.stderr or proc.stdout).strip()[-600:]}")
    return wheels[-1]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def repack_installed(dest: Path) -> Path:
    """A wheel of the installed (non-editable) kit, from the files its RECORD lists."""
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        raise WheelError("attention-kit is not installed, and there is no source checkout to build it from") from None
    files = [f for f in (dist.files or []) if ".." not in f.parts and "__pycache__" not in f.parts
             and f.suffix != ".pyc" and not (f.parts[0].endswith(".dist-info") and f.name in INSTALL_ONLY)]
    if not any(f.parts[0] == "grader" for f in files):
        raise WheelError("the installed attention-kit holds no grader package (an editable install "
                         "without its checkout?); pass --source DIR or --wheel FILE")
    info_dir = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    target = Path(dest) / WHEEL_NAME
    record = []
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for f in sorted(files, key=lambda p: (p.parts[0].endswith(".dist-info"), str(p))):
            data = Path(f.locate()).read_bytes()
            name = "/".join(f.parts)
            wheel.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data,
                           compress_type=zipfile.ZIP_DEFLATED)
            record.append(_record_line(name, data))
        record.append(f"{info_dir}/RECORD,,")
        wheel.writestr(zipfile.ZipInfo(f"{info_dir}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                       "\n".join(record) + "\n", compress_type=zipfile.ZIP_DEFLATED)
    return target


def kit_wheel(dest: Path, *, source: Path | None = None, wheel: Path | None = None) -> Path:
    """A wheel of the kit in dest: the one given, else built from source (or the checkout), else repacked."""
    Path(dest).mkdir(parents=True, exist_ok=True)
    if wheel is not None:
        wheel = Path(wheel)
        if not wheel.is_file() or not wheel.name.startswith("attention_kit-") or wheel.suffix != ".whl":
            raise UsageError(f"{wheel} is not a wheel of attention-kit (attention_kit-VERSION-py3-none-any.whl)")
        target = Path(dest) / wheel.name
        if wheel.resolve() != target.resolve():
            shutil.copyfile(wheel, target)
        return target
    if source is not None and not (Path(source) / "pyproject.toml").is_file():
        raise UsageError(f"{source} is not a source checkout of attention-kit (no pyproject.toml)")
    root = Path(source) if source is not None else checkout()
    return build_wheel(root, Path(dest)) if root is not None else repack_installed(Path(dest))


def check_kit_spec(spec: str) -> str:
    """spec as given, or UsageError when pip could not install the kit from it."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    words = shlex.split(spec)
    if not words:
        raise UsageError("the kit spec is empty")
    if any(w.split("=", 1)[0] in INDEX_OPTIONS for w in words):
        return spec  # the instructor's own index: theirs to vouch for
    head = words[0]
    try:
        req = Requirement(head if len(words) == 1 else spec)
    except InvalidRequirement:
        return spec  # a wheel path, an archive URL or git+https://…: pip installs those directly
    if canonicalize_name(req.name) != DIST:
        if head.endswith(".whl") or "/" in head or ":" in head:
            return spec
        raise UsageError(f"{spec!r} installs {req.name!r}, not attention-kit")
    if req.url is None:
        raise UsageError(f"attention-kit is not published on PyPI, so `pip install {spec}` would fail; "
                         f"ship a wheel (the default), pass --wheel FILE, or a URL such as "
                         f"'attention-kit @ git+https://host/you/attention-kit.git@v{__version__}'")
    return spec
