"""Parameters the grader could not load (names, shapes, a bias ignored): the line creating that layer."""
from __future__ import annotations

import logging

from grader.diagnosis.localize.model import Localization
from grader.diagnosis.localize.source import assignments, chosen_by_condition

log = logging.getLogger(__name__)


def parameter_line(ex, harness, source: str, init: dict | None = None) -> Localization | None:
    """For parameters that do not match the contract (names, shapes, a bias ignored), the line creating the layer.

    The mismatch itself is behaviour (the parameters the worker reports); the line is where that layer's
    attribute is assigned, unless a condition picks the layer there (no line). Never raises."""
    try:
        return _parameter_line(ex, harness, source, init or ex.config) if ex.kind == "module" else None
    except Exception:  # feedback only
        log.debug("no parameter line for exercise %s", getattr(ex, "number", "?"), exc_info=True)
        return None


def _parameter_line(ex, harness, source: str, init: dict) -> Localization | None:
    got = {str(k): tuple(v) for k, v in harness.describe(init).get("params", {}).items()}
    want = {k: tuple(v.shape) for k, v in harness.weights(init).items()}
    odd = sorted(set(got) ^ set(want)) + sorted(k for k in set(got) & set(want) if got[k] != want[k])
    lines = assignments(source)
    for name in odd:
        layer = name.split(".")[0]
        if layer in lines and chosen_by_condition(source, lines[layer]):
            return None  # the layer is picked by a condition: the condition or the layer, not known
        if layer in lines:
            what = ("is not a parameter the contract has" if name not in want else
                    "is missing: the layer is created without it" if name not in got else
                    f"has shape {got[name]}, the contract's is {want[name]}")
            return Localization(lines[layer], "parameters", None,
                                f"the grader loads its weights by name: {name} {what} (the layer is created at line "
                                f"{lines[layer]})")
    return None

