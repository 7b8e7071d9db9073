"""`grade hint` answers the mistake the last grade named before the exercise's own ladder (issue 12, item 6)."""
from click.testing import CliRunner

from grader.cli import cli
from grader.diagnosis import make
from tests.conftest import CORPUS


def test_hint_after_no_scaling_is_the_scaling_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_CACHE_DIR", str(tmp_path / "cache" / "attention-kit"))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    graded = runner.invoke(cli, ["exercise", "1", str(CORPUS / "01" / "no_scaling.py"), "--timeout", "20"])
    assert graded.exit_code == 1, graded.output
    first = runner.invoke(cli, ["hint", "1"])
    assert first.exit_code == 0, first.output
    assert make("no_scaling").hint.split(",")[0] in " ".join(first.output.split()), first.output
    second = runner.invoke(cli, ["hint", "1"])
    assert "Hint 1/" in second.output or "Hint 2/" in second.output, second.output  # then the ladder, no repeat
    assert "no_scaling" not in second.output


def test_a_pass_clears_the_named_mistake(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_CACHE_DIR", str(tmp_path / "cache" / "attention-kit"))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    runner.invoke(cli, ["exercise", "1", str(CORPUS / "01" / "no_scaling.py"), "--timeout", "20"])
    passing = sorted((CORPUS / "01").glob("pass_*.py"))[0]
    assert runner.invoke(cli, ["exercise", "1", str(passing), "--timeout", "20"]).exit_code == 0
    out = runner.invoke(cli, ["hint", "1"]).output
    assert "found:" not in out and "Hint " in out
