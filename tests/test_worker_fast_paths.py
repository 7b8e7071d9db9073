"""The worker's shortcuts give the answers of the slow paths they skip: Unchanged.same() before changed()'s name-by-name
look, and stays() in place of a Module.to(cpu) that would do nothing."""
import torch

from grader.sandbox.worker import Unchanged, stays

CPU = torch.device("cpu")


class Holder:
    def f(self):
        return 1

    def h(self):
        return 3


def test_unchanged_sees_a_rebound_an_added_and_a_removed_attribute():
    kept = Unchanged((Holder,))
    assert kept.same() and kept.changed() is None
    original = Holder.f
    Holder.f = lambda self: 2
    assert not kept.same() and kept.changed() == "Holder.f"
    Holder.f = original
    assert kept.changed() is None
    Holder.g = 1
    assert kept.changed() == "Holder.g"
    del Holder.g
    del Holder.f
    assert kept.changed() == "Holder.f"
    Holder.f = original  # the same object again, after h in the table now: not a change
    assert not kept.same() and kept.changed() is None


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(3, 4)
        self.register_buffer("mask", torch.ones(2, 2))


class OwnTo(Plain):
    def to(self, *args, **kwargs):
        return super().to(*args, **kwargs)


class OwnApply(torch.nn.Linear):
    def _apply(self, fn, recurse=True):
        return super()._apply(fn, recurse)


class Odd(torch.Tensor):
    pass


def test_stays_only_where_to_cpu_changes_nothing():
    assert stays(Plain().double(), CPU)
    assert not stays(Plain(), torch.device("meta"))
    assert not stays(OwnTo(), CPU)
    tree = Plain()
    tree.inner = OwnApply(3, 4)
    assert not stays(tree, CPU)
    odd = Plain()
    odd.register_buffer("mask", torch.ones(2).as_subclass(Odd))
    assert not stays(odd, CPU)
    on_meta = Plain()
    on_meta.register_buffer("mask", torch.ones(2, device="meta"))
    assert not stays(on_meta, CPU)
    shared = Plain()
    shared.again = shared.inner  # a submodule twice: to() as before
    assert not stays(shared, CPU)
    looped = Plain()
    looped.inner.back = looped  # a cycle: to() as before (it recurses until it fails)
    assert not stays(looped, CPU)


def test_a_module_that_stays_is_what_to_cpu_returns():
    module = Plain().double()
    before = {n: (t, t.clone()) for n, t in [*module.named_parameters(), *module.named_buffers()]}
    assert stays(module, CPU)
    assert module.to(CPU) is module
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        assert t is before[name][0] and torch.equal(t, before[name][1])
