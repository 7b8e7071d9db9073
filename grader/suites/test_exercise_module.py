"""Runs the checks of the exercise's own module (info.toml `module`), one test result each.

Each own check carries its own @check (and maybe @needs) marker, through its parameter.
"""
import inspect

from grader.suites import needs


@needs("exercise_checks")
def test_own_check(kit, ex, own):
    fn, init = own
    given = {"kit": kit, "ex": ex, "init": init}
    fn(**{name: given[name] for name in inspect.signature(fn).parameters})
