"""grader/diagnosis/localize/source.py: the submission is parsed once per verdict, whatever the rules ask of it."""
from __future__ import annotations

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import source
from tests.localize_helpers import SCALE_SOURCE, scale_alignment


def test_every_helper_reads_one_parse_of_the_source():
    source.parse.cache_clear()
    al = scale_alignment(6, 1.5)
    found = loc.align(al.entries, al.stages, source=SCALE_SOURCE)
    assert found is not None
    info = source.parse.cache_info()
    assert info.misses == 1 and info.hits >= 3, info
    assert source.parse(SCALE_SOURCE) is source.parse(SCALE_SOURCE)


def test_a_source_that_does_not_parse_gives_no_facts():
    broken = "def f(:\n    return 1\n"
    assert source.parse(broken) is None
    assert source.assignments(broken) == {} and source.return_after(broken, 2) is None
