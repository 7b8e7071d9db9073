"""`grade exercise N --repro`: a short script that makes the first failing check's call again, on your file."""
from __future__ import annotations

from pathlib import Path

from grader.results import Verdict


def tensor_code(recipe: dict, dtype: str, device: str) -> str:
    """Python that builds the tensor the grader sent, as the grader drew it (seeded) or from its values."""
    kind = recipe.get("dtype", "float64")
    floating = kind.startswith(("float", "bfloat"))
    move = (f".to(torch.{dtype})" if floating and dtype != "float64" else "") + (f".to({device!r})" if device != "cpu" else "")
    if "seed" in recipe:
        return (f"torch.randn({tuple(recipe['shape'])}, generator=torch.Generator().manual_seed({recipe['seed']}), "
                f"dtype=torch.float64){move}")
    if recipe.get("values") is not None:
        return f"torch.tensor({recipe['values']!r}, dtype=torch.{kind}){move}"
    return f"torch.randn({tuple(recipe['shape'])}, dtype=torch.float64){move}  # the grader's values differ"


def weights_code(recipe: dict | None) -> list[str]:
    if not recipe:
        return []
    if "draws" not in recipe:
        return [f"# the grader loaded its own weights ({', '.join(recipe.get('names', []))}); here they stay as built"]
    lines = [f"g = torch.Generator().manual_seed({recipe['seed']})", "weights = {"]
    lines += [f"    {name!r}: torch.randn({tuple(shape)}, generator=g, dtype=torch.float64) * {scale:.6g},"
              for name, shape, scale in recipe["draws"]]
    lines += ["}", "model.load_state_dict(weights, strict=False)  # the grader loads its weights by name"]
    return lines


def script(v: Verdict, *, ex, path: Path) -> str:
    failing = next((t for t in v.failures() if t.repro), None)
    if failing is None:
        first = next(iter(v.failures()), None)
        why = "nothing failed" if first is None else f"{first.name} failed before calling your code: {first.message}"
        return f"# No call to reproduce: {why}"
    call = failing.repro
    dtype, device = call["dtype"], call["device"]
    emulated = device == "emulated"  # the grader's cuda:0 on the CPU: the script runs under the same emulation
    if emulated:
        device = "cuda"
    lines = [
        f"# Reproduces the failing check {failing.name} ({failing.category}) of exercise {v.exercise} · {v.slug}",
        f"# The grader said: {failing.message}",
        "import importlib.util",
        "",
        "import torch",
        "",
        f"spec = importlib.util.spec_from_file_location('submission', {str(Path(path).resolve())!r})",
        "submission = importlib.util.module_from_spec(spec)",
        "spec.loader.exec_module(submission)",
        "",
    ]
    if emulated:
        lines += ["from grader.sandbox.emulated import EmulatedDevice, to_device  # cuda:0 computed on the CPU, as graded",
                  "", "emulated = EmulatedDevice()"]
    if call["init"] is not None:
        args = ", ".join(f"{k}={val!r}" for k, val in call["init"].items())
        lines += [f"torch.manual_seed({call['seed']})"]
        if emulated:  # built as on a GPU machine (torch.cuda.is_available(), device="cuda"), as graded
            lines += ["with emulated:", f"    model = submission.{call['entry']}({args})", f"model = model.to(torch.{dtype})"]
        else:
            lines += [f"model = submission.{call['entry']}({args}).to(torch.{dtype})"]
        lines += weights_code(call["params"])
        move = "to_device(model, emulated)" if emulated else f"model.to({device!r})" if device != "cpu" else "model"
        lines += [f"model = {move}.train({call['train']})"]
        target = "model"
    else:
        target = f"submission.{call['entry']}"
    inputs = [f"arg{i} = {tensor_code(r, dtype, device)}" for i, r in enumerate(call["args"])]
    inputs += [f"{k} = {tensor_code(r, dtype, device)}" for k, r in call["kwargs"].items()]
    names = [f"arg{i}" for i in range(len(call["args"]))]
    names += [f"{k}={k}" for k in call["kwargs"]] + [f"{k}={val!r}" for k, val in call["scalars"].items()]
    body = inputs
    if call["grad"]:
        body += [f"for t in ({', '.join(n.split('=')[0] for n in names[:len(call['args'])])},):",
                 "    t.requires_grad_(True)  # the grader also checks gradients"]
    body += [f"torch.manual_seed({call['seed'] + 1})  # dropout draws, as in the grader",
             f"result = {target}({', '.join(names)})"]
    body += ["for i, out in enumerate(result if isinstance(result, (tuple, list)) else [result]):",
             "    print(f'output {i}: shape {tuple(out.shape)}, dtype {out.dtype}, device {out.device}')",
             "    print(out)"]  # under the emulation too: outside it, a device tensor reports the CPU
    lines += ["with emulated:", *("    " + line for line in body)] if emulated else body
    return "\n".join(lines)
