"""The static policy check: what it refuses, and that ordinary attention code passes."""
import pytest

from grader.catalog import load_catalog
from grader.policy import check, load_policy

CAT = load_catalog()
FORBIDDEN = CAT.get(4).forbidden


def rules(source):
    return [(v.rule, v.line) for v in check(source, allowed_imports=CAT.allowed_imports, forbidden=FORBIDDEN)]


@pytest.mark.parametrize("ex", CAT.exercises, ids=lambda e: e.slug)
def test_kit_files_pass(ex):
    for path in (ex.skeleton_path, ex.solution_path):
        assert check(path.read_text(), allowed_imports=CAT.allowed_imports, forbidden=ex.forbidden) == []


@pytest.mark.parametrize("source, rule", [
    ("import os", "unsafe_code"),
    ("import subprocess as sp", "unsafe_code"),
    ("from os import path", "unsafe_code"),
    ("from . import x", "unsafe_code"),
    ("from torch import *", "unsafe_code"),
    ("import torch\ntorch.os.system('id')", "unsafe_code"),
    ("import torch\nx = torch.hub.load('a', 'b')", "unsafe_code"),
    ("import torch\ntorch.load('w.pt')", "unsafe_code"),
    ("x = ().__class__.__bases__[0].__subclasses__()", "unsafe_code"),
    ("eval('1')", "unsafe_code"),
    ("exec('x = 1')", "unsafe_code"),
    ("open('/etc/passwd').read()", "unsafe_code"),
    ("__import__('os')", "unsafe_code"),
    ("import torch\ngetattr(torch, 'o' + 's')", "unsafe_code"),
    ("import torch\ntorch._C._get_tracing_state()", "unsafe_code"),
    ("x = '__globals__'", "unsafe_code"),
    ("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)", "forbidden_api"),
    ("import torch\ny = torch.nn.functional.scaled_dot_product_attention(q, k, v)", "forbidden_api"),
    ("from torch.nn.functional import scaled_dot_product_attention as s", "forbidden_api"),
    ("from torch import nn\nm = nn.MultiheadAttention(8, 2)", "forbidden_api"),
    ("import torch.nn as nn\nf = nn.functional\ny = f.scaled_dot_product_attention(q, k, v)", "forbidden_api"),
])
def test_refuses(source, rule):
    assert rule in [r for r, _ in rules(source)]


def test_reports_the_line():
    assert rules("import torch\n\n\nimport socket\n") == [("unsafe_code", 4)]


def test_ordinary_code_passes():
    source = '''
from __future__ import annotations
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self._cache = None
        self.register_buffer("causal", torch.ones(context_length, context_length).tril() == 0)

    def forward(self, x):
        return F.softmax(torch.einsum("bhqd,bhkd->bhqk", x, x) / math.sqrt(4), dim=-1)


if __name__ == "__main__":
    print(MultiHeadAttention(2, 2, 2, 0.0, 1))
'''
    assert rules(source) == []


def test_syntax_error_raises():
    with pytest.raises(SyntaxError):
        check("def f(:\n", allowed_imports=CAT.allowed_imports)


@pytest.mark.parametrize("source", [
    "import torch\nrc = torch.utils.collect_env.run('id')",  # a shell, reachable from import torch
    "import torch.utils.cpp_extension as ce",
    "from torch.utils.benchmark import Timer",
    "import torch._C as C",
    "import torch.multiprocessing as mp",
    "import torch\n[torch][0].os.system('id')",
    "import torch\n(lambda: torch)().os",
    "import torch\nclass A:\n    def f(self):\n        self.t = torch\n        return self.t.os",
    "import torch\nself = torch\nself._C",
    "import torch\n(lambda self: self._C)(torch)",
    "import torch\ntorch.ones(3).numpy().tofile('/tmp/x')",
    "import torch\ntorch.package.PackageImporter('x')",
    "import typing\ndef f(x: 'torch'):\n    pass",
    "import typing\ntyping.get_type_hints(object)",
    "from typing import get_type_hints",
    "x = '{0.__class__.__base__}'.format(1)",
])
def test_refuses_known_bypasses(source):
    assert "unsafe_code" in [r for r, _ in rules(source)]


def test_docstrings_and_own_private_names_pass():
    source = '''
import torch.nn as nn


class M(nn.Module):
    """Calls __call__ through nn.Module, never forward directly."""

    def __init__(self):
        super().__init__()
        self._scale = 2.0

    def _split(self, x):
        return x

    def forward(self, x):
        return self._split(x) * self._scale
'''
    assert rules(source) == []


def test_policy_is_extensible_and_checked(tmp_path):
    from grader.policy import Policy, PolicyError, load_policy

    base = Policy()
    more = base.extended({"extra_allowed_imports": ["einops"], "denied_attributes": ["einsum"],
                          "allowed_names": ["getattr"]}, "test")
    assert "einops" in more.allowed_imports and "torch" in more.allowed_imports
    assert "einsum" in more.denied_attributes and "getattr" not in more.denied_names
    assert check("import einops\nimport torch\ntorch.einsum('ij->i', x)", policy=more)[0].message.startswith("torch.einsum")
    assert check("import einops", policy=base)[0].rule == "unsafe_code"
    assert base.extended({"allowed_imports": ["math"]}, "t").allowed_imports == frozenset({"math"})
    for bad in ({"allowed_import": ["x"]}, {"denied_names": "eval"}, {"static_check": "no"}):
        with pytest.raises(PolicyError):
            base.extended(bad, "t")
    off = base.extended({"static_check": False}, "t")
    source = "import os\nimport torch.nn.functional as F\nos.system('x')\nF.scaled_dot_product_attention(q, k, v)"
    assert [v.rule for v in check(source, policy=off, forbidden=FORBIDDEN)] == ["forbidden_api"]

    path = tmp_path / "policy.toml"
    path.write_text('[policy]\nextra_allowed_imports = ["os"]\n')
    assert "os" in load_policy(path).allowed_imports and "os" not in load_policy().allowed_imports
    with pytest.raises(PolicyError):
        load_policy(tmp_path / "missing.toml")
    path.write_text("extra_allowed_imports = [\n")
    with pytest.raises(PolicyError):
        load_policy(path)


def test_cli_policy_option(tmp_path):
    from tests.conftest import grade_here, grade_json

    solution = CAT.get(2).solution_path.read_text()
    path = tmp_path / "with_os.py"
    path.write_text("import os\n" + solution)
    policy = tmp_path / "allow-os.toml"
    policy.write_text('extra_allowed_imports = ["os"]\n')
    code, doc = grade_json("exercise", "2", path, "--policy", policy, here=True)
    assert code == 0 and doc["passed"]
    refused = grade_here("exercise", "2", path, "--policy", tmp_path / "nope.toml")
    assert refused.returncode == 2 and "no such policy file" in refused.stderr


@pytest.mark.parametrize("expression", ["-" * 10_000 + "1", "1+" * 50_000 + "1", "not " * 5_000 + "x",
                                        "x" + ".a" * 30_000])
def test_unparseable_depth_is_a_refusal_not_a_crash(expression):
    """RecursionError or MemoryError while parsing or checking: the file is refused with a reason."""
    found = check(f"import torch\ny = {expression}\n", forbidden=())
    assert [v.rule for v in found] == ["unsafe_code"] and "nested too deeply" in str(found[0])
    assert not str(found[0]).startswith("line 0")


@pytest.mark.parametrize("source", [
    'import typing\nimport torch\nf = typing.operator.attrgetter("nn.functional.scaled" + "_dot_product_attention")',
    "from typing import operator",
    "import torch\nfs = torch.overrides.get_overridable_functions()",
    "from torch import overrides",
    "import torch.fx",
    "import typing\nm = [typing][0]",
    "import torch\nt = torch",
    "import torch.nn.functional as F\nt = F.torch",
    "import functools\nf = functools.singledispatch",
    "import dataclasses\nr = dataclasses.re",
])
def test_string_lookup_routes_are_refused(source):
    """Only allowlisted module attributes are reachable (grader/reachable.py), and no module is a value."""
    assert "unsafe_code" in {v.rule for v in check(source, forbidden=FORBIDDEN)}, source


def test_allowlist_keeps_attention_code_and_is_extensible(tmp_path):
    ok = ("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom typing import Optional\n"
          "x = torch.softmax(torch.randn(2, 3, dtype=torch.float64), dim=-1)\ny = F.linear(x, torch.eye(3))\n"
          "z = nn.init.xavier_uniform_(torch.empty(3, 3)) * math.sqrt(2) + torch.finfo(torch.float32).min\n"
          "m = torch.ones(3, 3, dtype=torch.bool).triu(1)\n")
    assert check(ok, forbidden=FORBIDDEN) == []
    assert [v.rule for v in check("import torch.fx")] == ["unsafe_code"]
    policy = load_policy().extended({"allowed_attributes": ["torch.fx"]}, "test")
    assert [v.rule for v in check("import torch.fx", policy=policy)] == []


def test_a_refused_file_points_at_the_refused_line(tmp_path):
    from tests.conftest import grade_json

    solution = CAT.get(2).solution_path.read_text()
    path = tmp_path / "with_os.py"
    path.write_text(solution + "\nimport os\n")
    code, doc = grade_json("exercise", "2", path, here=True)
    refused = [t for t in doc["tests"] if t["code"] == "policy_blocked"]
    assert code == 1 and refused and refused[0]["line"] == len(solution.splitlines()) + 2


@pytest.mark.parametrize("text, says", [
    ("extra_allowed_imports = [1]\n", "extra_allowed_imports[0]: must be str, not int"),
    ('[policy]\ndenied_names = "eval"\n', "denied_names: must be array, not str"),
    ('allowed_import = ["x"]\n', "allowed_import: unknown key (known: allowed_imports, extra_allowed_imports,"),
    ('static_check = "no"\n', "static_check: must be bool, not str"),
    ('denied_attributes = [""]\n', "denied_attributes[0]: Expected `str` of length >= 1"),
])
def test_a_malformed_policy_file_is_one_line_naming_the_file_and_the_key(tmp_path, text, says):
    from grader.policy import PolicyError, load_policy

    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    assert str(err.value).startswith(f"{path}: {says}") and "\n" not in str(err.value), str(err.value)


def test_the_cli_refuses_a_malformed_policy_file_with_exit_2(tmp_path):
    from tests.conftest import grade_here

    path = tmp_path / "policy.toml"
    path.write_text("extra_allowed_imports = [1]\n")
    proc = grade_here("exercise", "2", CAT.get(2).solution_path, "--policy", path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"{path}: extra_allowed_imports[0]: must be str, not int" in proc.stderr


OWN_METHOD = """
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def forward(self, q, k, v):
        return self.scaled_dot_product_attention(q, k, v)

    def scaled_dot_product_attention(self, q, k, v):
        return (q @ k.transpose(-2, -1)).softmax(-1) @ v
"""


def test_a_method_of_the_files_own_named_like_a_forbidden_api_is_its_own():
    """litgpt names its manual attention path scaled_dot_product_attention: self.<that> is the file's method when
    a class defines it and nothing assigns it; any route to torch's function is still refused."""
    assert rules(OWN_METHOD) == []
    for hostile in ("        self.scaled_dot_product_attention = F.scaled_dot_product_attention\n",
                    "        self.scaled_dot_product_attention = print\n"):
        source = OWN_METHOD.replace("    def forward(self, q, k, v):\n",
                                    "    def forward(self, q, k, v):\n" + hostile)
        assert "forbidden_api" in [rule for rule, _ in rules(source)], hostile
    assert "forbidden_api" in [rule for rule, _ in rules(OWN_METHOD.replace("self.scaled_dot", "q.scaled_dot", 1))]



def test_a_static_method_of_the_files_own_class_named_like_a_forbidden_api_is_its_own():
    """A published cross-attention calls its own static method as CrossAttention.scaled_dot_product_attention(...):
    the file's when the class is bound once and nothing assigns the attribute; a rebound class name, an
    attribute assigned from torch's function or another receiver's attribute of that name stays refused."""
    own = OWN_METHOD.replace("        return self.scaled_dot", "        return Attention.scaled_dot", 1).replace(
        "    def scaled_dot_product_attention(self, q, k, v):", "    @staticmethod\n    def scaled_dot_product_attention(q, k, v):")
    assert rules(own) == []
    for hostile in (own + "\nAttention = F\n",
                    own.replace("class Attention(nn.Module):\n",
                                "class Attention(nn.Module):\n    scaled_dot_product_attention = F.scaled_dot_product_attention\n"),
                    own + "\ndef f(q):\n    global Attention\n    return Attention.scaled_dot_product_attention(q, q, q)\n",
                    own.replace("return Attention.scaled_dot", "return Other.scaled_dot", 1)):
        assert "forbidden_api" in [rule for rule, _ in rules(hostile)], hostile

def test_a_parameter_named_like_a_denied_built_in_is_the_functions_own():
    """forward(self, input), PyTorch's own convention, reads its parameter, not the built-in input(); everywhere
    the name could still be the built-in it stays refused."""
    ok = "import torch\n\nclass A:\n    def forward(self, input):\n        input = input.float()\n        f = lambda t: input + t\n        return f(input)\n"
    assert check(ok) == []
    assert check("g = lambda input: input * 2\n") == []
    refused = {
        "default": "def f(input=input):\n    return input\n",
        "decorator": "@input\ndef f(input):\n    return input\n",
        "another function": "def f(input):\n    return input\n\ndef g():\n    return input('?')\n",
        "module level": "def f(input):\n    return input\nx = input('?')\n",
        "global": "def f(input):\n    def g():\n        global input\n        return input('?')\n    return g\n",
        "lambda default": "g = lambda input=input: input\n",
        "eval": "def f(x):\n    return eval(x)\n",
    }
    for why, source in refused.items():
        assert [v.rule for v in check(source)][:1] == ["unsafe_code"], why
