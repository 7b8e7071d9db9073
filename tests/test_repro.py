"""`grade exercise N --repro`: a runnable script that makes the first failing check's call again (issue 14, item 13)."""
import re
import subprocess
import sys
import traceback

import pytest

from click.testing import CliRunner

from grader.catalog import load_catalog
from grader.cli import cli
from grader.repro import script
from grader.results import Status, TestResult as Result, Verdict
from grader.runner import grade
from tests.conftest import CORPUS


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_failing_check_records_its_call_and_the_script_reproduces_it():
    ex = load_catalog().get(1)
    path = CORPUS / "01" / "no_scaling.py"
    v = grade(exercise=ex, path=path, warm=True)
    first = next(t for t in v.failures() if t.repro)
    assert first.repro["init"] == ex.config and first.repro["params"]["draws"]
    assert v.to_json()["tests"][v.tests.index(first)]["repro"] == first.repro
    code = script(v, ex=ex, path=path)
    assert "SelfAttention(d_in=5, d_out=7)" in code and "manual_seed" in code
    index = re.search(r"at index \[([\d, ]+)\]", first.message).group(1)
    got = float(re.search(r"got (-?[\d.]+)", first.message).group(1))  # the value the grader saw ...
    printed = _run(code + f"\nprint('value', float(result[{index}]))")
    assert abs(float(printed.split("value ")[1]) - got) < 1e-3  # ... comes out of the script too


def test_repro_for_a_function_exercise_with_a_mask_on_the_cli():
    path = CORPUS / "02" / "mask_inverted.py"
    result = CliRunner().invoke(cli, ["exercise", "2", str(path), "--repro"])
    assert result.exit_code == 1
    assert "scaled_dot_product_attention(arg0, arg1, arg2, mask=mask)" in result.output
    assert "output 0: shape (2, 5, 3)" in _run(result.output)


def test_a_passing_file_has_nothing_to_reproduce():
    ex = load_catalog().get(2)
    v = grade(exercise=ex, path=ex.solution_path, warm=True)
    assert all(t.repro is None for t in v.tests)
    assert script(v, ex=ex, path=ex.solution_path).startswith("# No call to reproduce")



def test_a_device_failure_is_reproduced_on_the_same_emulated_gpu():
    """The device checks run on an emulated cuda:0; the script runs there too and raises CUDA's error at the line
    (the call is the one the device check makes, written out: no grade needed to test the script)."""
    ex = load_catalog().get(4)
    path = CORPUS / "04" / "head_scale_on_cpu.py"
    call = {"entry": ex.entry, "init": ex.config, "dtype": "float64", "train": False, "device": "emulated", "seed": 0,
            "grad": False, "scalars": {}, "args": [{"shape": [2, 6, ex.config["d_in"]], "seed": 2234}], "kwargs": {},
            "params": {"names": ["W_query.weight"]}}
    failing = Result("runs_on_another_device", "device", Status.FAILED, "RuntimeError", repro=call)
    code = script(Verdict(4, ex.slug, ex.title, [failing], [], "cpu", 0.0), ex=ex, path=path)
    assert "to_device(model, emulated)" in code and "with emulated:" in code
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!") as info:
        exec(compile(code, "repro", "exec"), {})
    assert [f.lineno for f in traceback.extract_tb(info.value.__traceback__) if f.filename == str(path)] == [31]


def test_the_script_prints_where_each_output_is():
    """An output returned on the CPU fails the device check without raising: the script shows the device it is on,
    read under the emulation (outside it a device tensor reports the CPU)."""
    ex = load_catalog().get(1)
    call = {"entry": ex.entry, "init": ex.config, "dtype": "float64", "train": False, "device": "emulated", "seed": 0,
            "grad": False, "scalars": {}, "args": [{"shape": [2, 3, ex.config["d_in"]], "seed": 2234}], "kwargs": {},
            "params": {"names": ["W_query.weight"]}}
    failing = Result("runs_on_another_device", "device", Status.FAILED, "output 0 is on cpu", repro=call)
    code = script(Verdict(1, ex.slug, ex.title, [failing], [], "cpu", 0.0), ex=ex, path=ex.solution_path)
    assert "output 0: shape (2, 3, 7), dtype torch.float64, device cuda:0" in _run(code)
