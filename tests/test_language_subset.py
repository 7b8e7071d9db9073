"""The submission's language is a subset defined by allowlist (grader/policy.py, SECURITY.md "The subset").

Three kinds of proof: the routes past the old deny-list are refused; honest code keeps passing (every
corpus file, dev, held-out and real-world, with the same policy verdict as its label implies); and a
seeded random search over attribute chains: whatever passes the policy, evaluated for real,
never yields a module, a frame, a code object, a traceback, a generator's internals or an escape hatch.
"""
from __future__ import annotations

import builtins
import importlib
import os
import random
import re
import types
from pathlib import Path

import pytest

from grader import reachable
from grader.catalog import load_catalog
from grader.policy import check
from grader.source import Unreadable, read_submission
from tests.conftest import CORPUS, ROOT
from tests.corpus_parts import part_of

SDPA = ("torch.nn.functional.scaled_dot_product_attention",)


@pytest.mark.parametrize("source", [
    "import torch\nM = torch.nn.functional\n",  # a module kept as a value...
    "import torch.nn.functional as F\nmods = [F]\n",
    "import torch\nx = (torch.nn, 1)\n",
    "import torch\nM = torch.nn.functional\nf = M.torch.overrides.get_overridable_functions()\n",  # ...and walked
    "g = (i for i in [1])\nframe = g.gi_frame.f_back\n",  # generator frames up to the worker's
    "def gen():\n    yield 1\nc = gen().gi_code.co_consts\n",
    "try:\n    1 / 0\nexcept Exception as e:\n    tb = e.__traceback__.tb_frame\n",
    "s = '{0.gi_frame.f_back.f_locals}'.format(g)\n",  # the same walk by str.format
    "import torch\nbase = torch.Tensor.mro()[1]\n",  # the class hierarchy
    "k = type(1).mro()\n",
    "import torch\ntorch.Tensor.numel = lambda self: 0\n",  # a library changed under the rule checks
    "import torch\nT = torch.Tensor\nT.numel = lambda self: 0\n",
    "import torch.nn.functional as F\ndel F.softmax\n",
    "names = dir(1)\n",  # builtins by allowlist
    "x = (1).not_a_public_attribute\n",  # attributes by allowlist
    "async def f():\n    return 1\n",
    # found by the red-team round: class patterns look attributes up by name, hooks Python calls by itself
    "def probe():\n    pass\nmatch probe:\n    case object(__globals__=G):\n        pass\n",
    "match x:\n    case object(gi_frame=f):\n        pass\n",
    "C = type('C', (), {'__init__': print})\n",
    "class T:\n    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n        return 1\n",
    "def __getattr__(name):\n    return 1\n",
    "class A:\n    def __init_subclass__(cls):\n        pass\n",
    # red-team round 2: a torch API that imports by string, an error that hands back the module, and a
    # keyword argument that made any attribute name the file's "own"
    "import torch\ntry:\n    torch.zeros(1).untyped_storage().type('os.x')\nexcept AttributeError as e:\n    m = e.obj\n",
    "NAMES = dict(getattr=1)\nB = (1).real\nG = B.getattr\n",
    "class C:\n    def system(self):\n        pass\nc = C()\nc.system()\nx = (1).system\n",
    "import torch\nS = torch.zeros(1).storage_type()\n",
    # red-team round 3: a helper that copies attributes named by strings, and a store on a library's object
    "import functools\nimport torch\nf = functools.wraps(torch.softmax, assigned=('x',), updated=())\n",
    "import functools\nfrom functools import wraps\n",
    "import functools\ncp = functools.cached_property(len)\ncp.attrname = 'x'\n",
    "import torch\nT = [torch.Tensor][0]\nT.numel = len\n",
    # red-team round 4: self is only a name (a method called through its class, a function's `self`
    # parameter), a library property's getter called on any object, dunders built from pieces
    "class Box:\n    def put(self, v):\n        self.x = v\nBox.put(len, 1)\n",
    "def put(self, v):\n    self.name = v\n",
    "class A:\n    def f(self):\n        def g(o):\n            self.x = o\n        return g\n",
    "import torch.nn as nn\ng = nn.RNN.all_weights.fget\n",
    "import torch.nn as nn\nm = nn.Linear.forward\n",
    "x = type(1).bit_length\n",
    "n = '__glob' + 'als__'\n",
    # red-team round 5: a metaclass as a class factory, dataclass fields' defaults as a getattr on a class
    "import numbers\nC = numbers.ABCMeta('C', (object,), {})\n",
    "from numbers import ABCMeta\n",
    "import dataclasses\nd = dataclasses.fields\n",
    "C = type(*('C', (object,), {}))\n",
    "t = type\nC = t('C', (object,), {})\n",
    # red-team round 6: a method used as a plain function in its own class body, ParameterDict's string keys
    "class Box:\n    def put(self, v):\n        self.x = v\n    put(len, 1)\n",
    "class Box:\n    def put(self, v):\n        self.x = v\n    stash = [put]\n",
    "class Box:\n    def put(self, v):\n        self.x = v\n    other = staticmethod(put)\n",
    "import torch.nn as nn\npd = nn.ParameterDict()\n",
    # found while proving receivers: a method reached through a subclass, a static method's "self"
    "import torch\nclass C:\n    def put(self, v):\n        self.numel = v\nclass D(C):\n    pass\nD.put(torch.Tensor, len)\n",
    "import torch\nclass C:\n    @staticmethod\n    def put(self, v):\n        self.numel = v\nC.put(torch.Tensor, len)\n",
])
def test_routes_past_the_old_policy_are_refused(source):
    found = check(source, forbidden=SDPA)
    assert found and all(v.rule in ("unsafe_code", "forbidden_api") for v in found), source


@pytest.mark.parametrize("source", [
    "import torch\nimport torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
    "        self.proj = nn.Linear(d, d)\n        self.register_buffer('mask', torch.ones(2, 2).tril())\n"
    "    def forward(self, x):\n        B, T, C = x.shape\n        m = self.mask[:T, :T].bool()\n"
    "        return self.proj(x).masked_fill(~m, float('-inf')).softmax(-1)\n",
    "import math\nfrom collections import namedtuple\nP = namedtuple('P', 'q k v')\np = P(1, 2, 3)\ny = p.q + math.sqrt(p.v)\n",
    "import functools\nf = functools.partial(max, 1)\nprint(f.func, f.args)\n",
    "import torch\nx = torch.finfo(torch.float32).min\ny = torch.ones(2).to(torch.float64).device.type\n",
    "def gen():\n    yield 1\ntotal = sum(i for i in gen())\n",
    "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n        ctx.scale = 2\n        return x * 2\n    @staticmethod\n"
    "    def backward(ctx, g):\n        (x,) = ctx.saved_tensors\n        return g * ctx.scale\n",
])
def test_honest_code_passes(source):
    assert check(source, forbidden=SDPA) == []


# honest code the allowlist refuses: measured false refusals (file under tests/corpus -> what the refusal says),
# kept here so that a policy change that lets them through, or refuses them otherwise, is seen. realworld3's two
# (torch.functional as a module, self.eval()) pass since the eighth session; the eighth session's two (setattr(self,
# name, layer) in a loop over literal names, a device helper asking torch.cuda.is_available()) since the ninth
HONEST_REFUSED: dict[str, str] = {}


def _labelled_files():
    exercises = {f"{e.number:02d}": e for e in load_catalog().exercises}
    for path in sorted(CORPUS.glob("*/**/*.py")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        label = re.match(r"# expect: (\w+)", first)
        yield path, exercises[path.relative_to(CORPUS).parts[0]], label[1] if label else "pass"
    for folder in ("solutions", "exercises"):
        for path in sorted((ROOT / folder).glob("[0-9][0-9]_*.py")):
            yield path, exercises[path.name[:2]], "pass"


def _refused(wanted) -> tuple[list[str], int]:
    """The honest files among _labelled_files() that wanted(path) selects which the policy refuses, and how many
    honest files were checked; a file labelled unsafe_code, forbidden_api or syntax_error must be refused."""
    refused, counted = [], 0
    for path, ex, label in _labelled_files():
        if not wanted(path):
            continue
        try:
            found = check(read_submission(path), forbidden=ex.forbidden)
        except (SyntaxError, Unreadable):
            found = ["syntax"]
        if label in ("unsafe_code", "forbidden_api", "syntax_error"):
            assert found, f"{path} is labelled {label} and passed the policy"
            continue
        known = HONEST_REFUSED.get(path.relative_to(CORPUS).as_posix() if path.is_relative_to(CORPUS) else "")
        if known:
            assert found and known in found[0].message, (path, found)
            continue
        counted += 1
        if found:
            refused.append(f"{path.relative_to(ROOT)}: {found[0]}")
    return refused, counted


def test_no_dev_file_solution_or_skeleton_is_refused_unless_its_label_says_so():
    """The dev corpus, the solutions and the skeletons: only the files labelled unsafe_code, forbidden_api or
    syntax_error are refused."""
    refused, counted = _refused(lambda path: not path.is_relative_to(CORPUS) or part_of(path) == "dev")
    assert counted > 250 and refused == [], "\n".join(refused)


@pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_UNSEEN_CORPUS"),
                    reason="the policy over the ~760 held-out and real-world files: .ci/run (ATTENTION_KIT_UNSEEN_CORPUS=1)")
def test_no_unseen_corpus_file_is_refused_unless_its_label_says_so():
    """The held-out and real-world parts: code nobody here wrote for the policy (the count with the dev test's is
    the honest-code figure of SECURITY.md)."""
    refused, counted = _refused(lambda path: path.is_relative_to(CORPUS) and part_of(path) != "dev")
    assert counted > 500 and refused == [], "\n".join(refused)


def test_every_module_an_allowlisted_attribute_holds_is_tracked_as_a_module():
    """A module reached by an allowed attribute must be in grader.reachable's table, or the policy
    would let it become a value."""
    for module, rule in reachable.table().items():
        if not isinstance(rule, frozenset):
            continue
        owner = importlib.import_module(module)
        for name in rule:
            value = getattr(owner, name, None)
            if isinstance(value, types.ModuleType):
                assert reachable.is_module(f"{module}.{name}"), f"{module}.{name} is a module the table does not cover"


def test_no_allowlisted_attribute_is_a_metaclass():
    """A metaclass called with three arguments builds any class from a namespace of strings (numbers.ABCMeta was
    one, found by the red-team round 5 of issue 19): none may be reachable."""
    found = []
    for module in reachable.table():
        owner = importlib.import_module(module)
        for name in dir(owner):
            value = getattr(owner, name, None)
            if reachable.allowed(module, name) and isinstance(value, type) and issubclass(value, type):
                found.append(f"{module}.{name}")
    assert found == []


# -- loosenings, each with the routes it must not open ----------------------------------------------------------------
# torch.functional is a module of the table (its __all__); self.eval(), self.modules() and names the file never defines
# pass on a self grader/receivers.py proves is an instance of the file's own nn.Module class.
H = "import torch\nimport torch.nn as nn\n"
M = H + "class A(nn.Module):\n    def forward(self, x):\n"
I = H + "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
LOOSENING_HOSTILE = {
    # torch.functional
    "tf_F": "from torch import functional as F\ny = F.F.scaled_dot_product_attention\n",
    "tf_F2": "from torch import functional as F\ny = F.F.softmax\n",
    "tf_torch": "from torch import functional as F\ny = F.torch.nn.functional.scaled_dot_product_attention\n",
    "tf_torch2": "from torch import functional as F\ny = F.torch.ops\n",
    "tf_operator": "from torch import functional as F\ng = F.operator.attrgetter('x')\n",
    "tf_htf": "from torch import functional as F\nh = F.handle_torch_function\n",
    "tf_VF": "from torch import functional as F\nh = F._VF\n",
    "tf_itertools": "from torch import functional as F\nh = F.itertools\n",
    "tf_value": "from torch import functional as F\nM = F\n",
    "tf_value2": "import torch\nM = [torch.functional]\n",
    "tf_import_F": "from torch.functional import F\n",
    "tf_import_torch": "from torch.functional import torch\n",
    "tf_import_sdpa": "import torch.functional as TF\ny = TF.scaled_dot_product_attention\n",
    "tf_chain": "import torch\ny = torch.functional.F.scaled_dot_product_attention(1, 2, 3)\n",
    "tf_boolean_dispatch": "from torch.functional import boolean_dispatch\n",
    "tf_overload": "import torch\nz = torch.functional.overload\n",
    "tf_Tensor_mro": "import torch\nz = torch.functional.Tensor.mro\n",
    # eval / modules: the built-in and routes to it
    "builtin_eval": M + "        return eval('1')\n",
    "getattr_eval": M + "        return getattr(self, 'eval')()\n",
    "builtins_eval": "import builtins\nbuiltins.eval('1')\n",
    "dunder_builtins": M + "        return __builtins__['eval']('1')\n",
    "lambda_eval": M + "        return (lambda: eval)()('1')\n",
    "class_dict": M + "        return self.__class__.__dict__\n",
    "alias_eval": "e = eval\n",
    "default_eval": H + "class A(nn.Module):\n    def forward(self, x, e=eval):\n        return self.eval()\n",
    "decorator_eval": H + "class A(nn.Module):\n    @eval\n    def forward(self, x):\n        return self.eval()\n",
    "classbody_eval": H + "class A(nn.Module):\n    eval = eval\n    def forward(self, x):\n        return self.eval('1')\n",
    "comprehension_eval": M + "        return [eval for _ in x]\n",
    "override_eval_default": H + "class A(nn.Module):\n    def eval(self, s=eval):\n        return s\n    def forward(self, x):\n        return self.eval()('1')\n",
    "subclass_torch_override": H + "class A(nn.Linear):\n    eval = eval\n    def forward(self, x):\n        return self.eval('1')\n",
    "lambda_self_param": M + "        f = lambda self: self.eval\n        return f(x)\n",
    "nested_def_self": M + "        def g(self):\n            return self.eval\n        return g(x)\n",
    "not_module_class": "class A:\n    def f(self):\n        return self.eval()\n",
    "plain_function": "def f(self):\n    return self.eval()\n",
    "other_receiver": M + "        return x.eval()\n",
    "other_name": H + "class A(nn.Module):\n    def forward(this, x):\n        return this.eval()\n",
    "unbound_call": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\nA.f(x)\n",
    "alias_class": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\nB = A\nB.f(x)\n",
    "container_class": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\n[A][0].f(x)\n",
    "deco_class": H + "def d(c):\n    return c.f(len)\n@d\nclass A(nn.Module):\n    def f(self):\n        return self.eval()\n",
    "pass_class": H + "def d(c):\n    return c.f(len)\nclass A(nn.Module):\n    def f(self):\n        return self.eval()\nd(A)\n",
    "classmethod": H + "class A(nn.Module):\n    @classmethod\n    def g(cls, o):\n        return cls.f(o)\n    def f(self):\n        return self.eval()\n",
    "classmethod_alias": H + "cm = classmethod\nclass A(nn.Module):\n    @cm\n    def g(cls, o):\n        return cls.f(o)\n"
    "    def f(self):\n        return self.W_value\n",
    "own_decorator_other": H + "def d(f):\n    return f\nclass A(nn.Module):\n    @d\n    def g(self):\n        pass\n"
    "    def f(self):\n        return self.eval()\n",
    "classmethod_wrap": H + "def g(c, o):\n    return c.f(o)\nclass A(nn.Module):\n    h = classmethod(g)\n    def f(self):\n        return self.eval()\n",
    "subclass_classmethod": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\nclass B(A):\n    @classmethod\n    def g(cls, o):\n        return cls.f(o)\n",
    "subclass_value": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\nclass B(A):\n    pass\nB.f(x)\n",
    "type_self": H + "class A(nn.Module):\n    def f(self):\n        t = type(self)\n        return self.eval()\n",
    "super_type": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\nclass B(A):\n    def g(self, o):\n        return super(B, type(self)).f(o)\n",
    "metaclass_kw": H + "class A(nn.Module, metaclass=M):\n    def f(self):\n        return self.eval()\n",
    "own_decorator": H + "def d(f):\n    f(len)\n    return f\nclass A(nn.Module):\n    @d\n    def f(self):\n        return self.eval()\n",
    "partial_decorator": H + "import functools\nclass A(nn.Module):\n    @functools.partial\n    def f(self):\n        return self.eval()\n",
    "staticmethod_self": H + "class A(nn.Module):\n    @staticmethod\n    def f(self):\n        return self.eval()\nA.f(x)\n",
    "rebound_nn": H + "nn = x\nclass A(nn.Module):\n    def f(self):\n        return self.eval()\n",
    "fake_nn": "import collections as nn\nclass A(nn.Module):\n    def f(self):\n        return self.eval()\n",
    "mixin_base": H + "import collections\nclass A(nn.Module, collections.ChainMap):\n    def f(self):\n        return self.eval()\n",
    "redefined_class": H + "class A(nn.Module):\n    def f(self):\n        return self.eval()\nA = x\n",
    "store_eval": M + "        self.eval = x\n        return 1\n",
    "except_self": M + "        try:\n            pass\n        except Exception as self:\n            return self.eval\n",
    "global_self": M + "        def g():\n            global self\n            return self.eval()\n        return g()\n",
    "walrus_self": M + "        (self := x)\n        return self.eval()\n",
    "private_unknown": M + "        return self._modules\n",
    "dunder_unknown": M + "        return self.__dict__\n",
    "introspective_unknown": M + "        return self.f_globals\n",
    "escape_unknown": M + "        return self.system\n",
    "modules_on_other": "import sys\nm = x.modules\n",
    "compile_on_self": M + "        return self.compile()\n",
    "chain_eval": M + "        return self.attn.eval()\n",
    "sdpa_unknown_self": M + "        return self.scaled_dot_product_attention(x, x, x)\n",
    "classbody_call": H + "class A(nn.Module):\n    h = print('x')\n    def f(self):\n        return self.eval()\n",
    "nested_class": H + "class O:\n    class A(nn.Module):\n        def f(self):\n            return self.eval()\n"
    "class B(O.A):\n    @classmethod\n    def g(cls, o):\n        return cls.f(o)\n",
    "classbody_statement": H + "class A(nn.Module):\n    print(1)\n    def f(self):\n        return self.eval()\n",
    "isinstance_shadow": H + "def isinstance(a, b):\n    return b.f(len)\nclass A(nn.Module):\n    def f(self):\n        return self.eval()\nisinstance(1, A)\n",
    # setattr(self, NAME, v) with NAME a literal (or a for loop's variable over literals) is self.NAME = v; any other
    "setattr_torch": I + "        setattr(torch, 'softmax', lambda x, dim: x)\n",
    "setattr_torch_loop": I + "        for name in ('softmax', 'allclose'):\n            setattr(torch, name, print)\n",
    "setattr_library_class": I + "        setattr(nn.Linear, 'forward', lambda s, x: x)\n",
    "setattr_builtin": I + "        setattr(print, 'x', 1)\n",
    "setattr_module_level": H + "setattr(torch, 'x', 1)\n",
    "setattr_other_object": I + "        x = self.q = nn.Linear(2, 2)\n        setattr(x, 'forward', print)\n",
    "setattr_computed": I + "        for name in ('q',):\n            setattr(self, name + '_', 1)\n",
    "setattr_variable_list": I + "        names = ('q',)\n        for name in names:\n            setattr(self, name, 1)\n",
    "setattr_rebound": I + "        for name in ('q',):\n            name = 'forward'\n            setattr(self, name, print)\n",
    # the loop variable rebound in the body by a def (a decorator can return any run-time string), a class, an
    # except ... as or an import ... as (tenth session's red team: a decorated def made it "__mul__")
    "setattr_rebound_by_def": H + "def spelled(f):\n    return '__m' + 'ul__'\nclass A(nn.Module):\n    def f(self, v):\n"
    "        for n in ('q',):\n            @spelled\n            def n():\n                pass\n            setattr(self, n, v)\n",
    "setattr_rebound_by_class": I + "        for n in ('q',):\n            class n:\n                pass\n            setattr(self, n, 1)\n",
    "setattr_rebound_by_except": I + "        for n in ('q',):\n            try:\n                pass\n            except ValueError as n:\n"
    "                pass\n            setattr(self, n, 1)\n",
    "setattr_rebound_by_import": I + "        for math in ('q',):\n            import math\n            setattr(self, math, 1)\n",
    # self rebound by a decorated def, a class or an except ... as: self.x = v would store on what it was bound to
    "self_rebound_by_def": H + "def tensor_class(f):\n    return torch.Tensor\nclass A(nn.Module):\n    def f(self, v):\n"
    "        @tensor_class\n        def self():\n            pass\n        self.detach = v\n",
    "self_rebound_by_class": I + "        class self:\n            pass\n        self.x = 1\n",
    "self_rebound_by_except": I + "        try:\n            pass\n        except ValueError as self:\n            self.x = 1\n",
    "setattr_walrus": I + "        for name in ('q',):\n            setattr(self, (name := 'x'), 1)\n",
    "setattr_comprehension": I + "        for name in ('q',):\n            [setattr(self, name, 1) for name in ['x']]\n",
    "setattr_outside_loop": I + "        for name in ('q',):\n            pass\n        setattr(self, name, 1)\n",
    "setattr_parameter": H + "class A(nn.Module):\n    def f(self, name):\n        for name in ('q',):\n            pass\n"
    "        setattr(self, name, 1)\n",
    "setattr_dunder": I + "        for name in ('__class__',):\n            setattr(self, name, int)\n",
    "setattr_escape": I + "        for name in ('q', 'eval'):\n            setattr(self, name, print)\n",
    "setattr_private": I + "        setattr(self, '_forward_hooks', {})\n",
    "setattr_keywords": I + "        setattr(self, 'q', 1, **{})\n",
    "setattr_kept": I + "        f = setattr\n        f(self, 'q', 1)\n",
    "setattr_plain_function": H + "def f(self):\n    setattr(self, 'q', 1)\n",
    # torch.cuda and torch.backends: only whether a device is there
    "cuda_set_device": H + "torch.cuda.set_device(0)\n",
    "cuda_seed": H + "torch.cuda.manual_seed_all(0)\n",
    "cuda_value": H + "c = torch.cuda\n",
    "cuda_import_value": "from torch import cuda\nc = [cuda]\n",
    "cuda_import_init": "from torch.cuda import init\n",
    "cuda_private": H + "torch.cuda._lazy_call(print)\n",
    "cuda_patch": H + "torch.cuda.is_available = lambda: True\n",
    "cudnn_flag": H + "torch.backends.cudnn.deterministic = True\n",
    "backends_other": H + "torch.backends.cuda.matmul.allow_tf32 = True\n",
    "mps_other": H + "torch.backends.mps.empty_cache()\n",
}
LOOSENING_HONEST = {
    "tf_einsum": "from torch import functional as F\ny = F.einsum('ij->ji', x)\n",
    "tf_absent": "from torch import functional as F\ny = F.softmax(x, dim=-1)\n",
    "tf_module_path": "import torch\ny = torch.functional.norm(x)\nfrom torch.functional import einsum\n",
    "self_eval": M + "        if self.eval():\n            return x\n",
    "self_modules": M + "        for m in self.modules():\n            pass\n        return x\n",
    "self_unknown": M + "        return self.W_value(x)\n",
    "grad_decorated": H + "class A(nn.Module):\n    @torch.no_grad()\n    def f(self):\n        return self.eval()\n",
    "subclass_ok": H + "class A(nn.Module):\n    n = 0\n    def f(self):\n        return self.eval()\nclass B(A):\n    def g(self):\n        return self.modules()\nb = B()\nok = isinstance(b, (A, B)) and A.n == 0 and A.__name__\n",
    "super_two": H + "class A(nn.Linear):\n    def __init__(self):\n        super(A, self).__init__(2, 2)\n        self.eval()\n",
    "pass_body": H + "class A(nn.Module):\n    pass\nclass B(A):\n    def f(self):\n        return self.eval()\n",
    "nested": M + "        f = lambda: self.eval()\n        return [self.modules() for _ in x]\n",
    "setattr_loop": I + "        for name in ('W_query', 'W_key'):\n            setattr(self, name, nn.Linear(2, 2))\n"
    "    def forward(self, x):\n        return self.W_query(x) + self.W_key(x)\n",
    "setattr_constant": I + "        setattr(self, 'proj', nn.Linear(2, 2))\n    def forward(self, x):\n        return self.proj(x)\n",
    "device_helper": H + "def get_device():\n    if torch.cuda.is_available():\n        return torch.device('cuda')\n"
    "    if torch.backends.mps.is_available():\n        return torch.device('mps')\n    return torch.device('cpu')\n",
    "device_import": "from torch.cuda import is_available\ndevice = 'cuda' if is_available() else 'cpu'\n",
}


@pytest.mark.parametrize("name", sorted(LOOSENING_HOSTILE))
def test_loosenings_keep_every_route_refused(name):
    assert check(LOOSENING_HOSTILE[name], forbidden=SDPA + ("torch.nn.MultiheadAttention",)), name


@pytest.mark.parametrize("name", sorted(LOOSENING_HONEST))
def test_loosenings_let_honest_forms_pass(name):
    assert check(LOOSENING_HONEST[name], forbidden=SDPA) == [], name


def test_torch_functional_reaches_no_module_and_no_forbidden_kernel():
    """torch.functional holds torch, nn.functional (as F), operator and handle_torch_function; its allowed names are
    functions of its __all__, none of them a module or SDPA, and its namespace as read from its source covers every
    name it holds once torch is imported (so a name outside it really is an AttributeError)."""
    import torch
    import torch.functional as tf

    allowed = reachable.table()["torch.functional"]
    assert allowed and not {"F", "torch", "operator", "itertools", "handle_torch_function", "Tensor"} & allowed
    for name in allowed:
        value = getattr(tf, name)
        assert not isinstance(value, types.ModuleType), name
        assert value is not torch.nn.functional.scaled_dot_product_attention, name
    assert set(dir(tf)) <= reachable.namespace("torch.functional")
    assert "softmax" not in reachable.namespace("torch.functional")


def test_proven_receivers_meet_only_torch_nn_public_api():
    """The bases a proven class may have are nn.Module subclasses whose public attributes are all in the value
    allowlist (plus eval and modules): an attribute the file never names finds nothing else on the class."""
    import torch.nn as nn

    from grader.receivers import MODULE_METHODS

    names = reachable.module_classes()
    assert {"Module", "Linear", "LayerNorm", "Sequential"} <= names
    extra = set()
    for name in names:
        cls = getattr(nn, name, None)
        if cls is None:
            continue  # defined in nn/modules but not exported as nn.<name>: the policy never resolves it
        assert isinstance(cls, type) and issubclass(cls, nn.Module), name
        extra |= {a for a in dir(cls) if not a.startswith("_") and a not in reachable.value_attributes()}
    assert extra <= MODULE_METHODS, extra
    assert [k for k in vars(nn.Module()) if not k.startswith("_") and k not in reachable.value_attributes()] == []


# -- the fuzz: whatever passes the policy reaches nothing outside the subset -------------------------

PRELUDE = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport math\nimport typing\n"
           "import functools\nimport collections\n")
ROOTS = ["torch", "torch.functional", "nn", "F", "math", "typing", "functools", "collections", "x", "lin", "gen", "err", "fn",
         "[1]", "'s'", "(1).real", "torch.float32", "torch.Tensor", "nn.Module", "x.grad_fn", "type(x)", "super"]
DANGEROUS = ["gi_frame", "gi_code", "f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "tb_next",
             "co_consts", "cr_frame", "mro", "modules", "__class__", "__globals__", "__builtins__", "__dict__",
             "__subclasses__", "__bases__", "__self__", "__func__", "__module__", "overrides", "operator",
             "attrgetter", "os", "sys", "builtins", "importlib", "_C", "utils", "hub", "fx", "ops", "library",
             "func", "torch", "functional", "nn", "abc", "reduce", "register_hook", "next_functions",
             "with_traceback", "args", "metadata", "im_func", "func_globals", "frame", "exc_info"]
NAMES = sorted({*DANGEROUS, *[n for n in dir(__import__("torch").Tensor) if not n.startswith("_")][::8],
                *[n for n in dir(__import__("torch").nn.Module) if not n.startswith("_")][::3],
                "softmax", "Linear", "sqrt", "inf", "Optional", "partial", "OrderedDict", "weight", "T", "shape"})
FORBIDDEN_VALUES = {id(f) for f in (eval, exec, compile, open, __import__, getattr, setattr, delattr, globals,
                                    locals, vars, breakpoint, input)}


def _namespace():
    import torch

    def gen():
        yield 1

    def fn():
        return 1

    x = torch.ones(2, requires_grad=True) * 2
    return {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": __import__("math"),
            "typing": __import__("typing"), "functools": __import__("functools"),
            "collections": __import__("collections"), "x": x, "lin": torch.nn.Linear(2, 2), "gen": gen(),
            "err": ValueError("e"), "fn": fn, "__builtins__": builtins}


def _outside(value) -> str | None:
    if isinstance(value, (types.FrameType, types.CodeType, types.TracebackType)):
        return type(value).__name__
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if id(value) in FORBIDDEN_VALUES:
        return f"escape hatch {value!r}"
    if isinstance(value, dict) and ("__builtins__" in value or "__import__" in value):
        return "a namespace dict"
    return None


def chains(count: int = 1500, seed: int = 0) -> list[tuple[str, list[str]]]:
    """count attribute chains root.name1...name4 drawn with a fixed seed (a plain PRNG: hypothesis spent three times
    the oracle's own time drawing them)."""
    rng = random.Random(seed)
    return [(rng.choice(ROOTS), [rng.choice(NAMES) for _ in range(rng.randint(1, 4))]) for _ in range(count)]


def _walk(root: str, steps: list[str]):
    """Each value along root.step1.step2..., evaluated in this (the test's) process; stops at an error."""
    try:
        value = eval(root, _namespace())
    except Exception:  # noqa: BLE001
        return
    yield root, value
    for i, step in enumerate(steps):
        try:
            value = getattr(value, step)
        except Exception:  # noqa: BLE001 - an AttributeError ends the chain harmlessly
            return
        yield ".".join([root, *steps[: i + 1]]), value


def _escape(root: str, steps: list[str]) -> str | None:
    """What root.steps reaches outside the subset although the policy passed it (None: refused, or nothing)."""
    expr = root + "".join(f".{s}" for s in steps)
    if check(PRELUDE + f"value = {expr}\n", forbidden=SDPA):
        return None  # refused: nothing runs
    for shown, value in _walk(root, steps):
        if isinstance(value, types.ModuleType) and shown != expr and reachable.is_module(value.__name__):
            continue  # a module of the table, dereferenced further: the policy checks the next step
        if _outside(value):
            return f"{expr} passed the policy; {shown} is {_outside(value)}"
    return None


def test_what_passes_the_policy_stays_inside_the_subset():
    escapes = [found for chain in chains() if (found := _escape(*chain))]
    assert escapes == [], "\n".join(escapes)


def test_the_fuzz_finds_the_hole_in_a_weakened_policy(monkeypatch):
    """With the value allowlist and the introspection rule switched off, the same oracle reports escapes."""
    monkeypatch.setattr(reachable, "introspective", lambda name: False)
    monkeypatch.setattr("grader.policy._Checker.value_attribute", lambda self, name: True)
    assert "frame" in _escape("gen", ["gi_frame"])
    assert _escape("F", ["torch"]) is None  # the module table refuses it...
    monkeypatch.setattr(reachable, "allowed", lambda module, name: True)
    assert "module" in _escape("F", ["math"])  # ...and without it, a module reached through a module shows


def test_an_instructors_denied_attributes_still_apply_to_proven_receivers():
    from grader.policy import load_policy

    source = "import torch.nn as nn\nclass A(nn.Module):\n    def f(self):\n        return self.eval()\n"
    assert check(source) == []
    assert check(source, policy=load_policy().extended({"denied_attributes": ["eval"]}, "instructor.toml"))
