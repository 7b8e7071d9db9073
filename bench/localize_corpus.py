"""How often the localized line is a right line, on the dev corpus (tests/corpus/01..05).

Usage: python bench/localize_corpus.py
Each runnable buggy file is traced in a sandbox worker and aligned with the reference; the line it
reports is checked against RIGHT_LINES, judged by reading each file: the line(s) where the fix
belongs, and lines where a one-line fix also works (e.g. a softmax line that could take the missing
scale). A file with no localization counts as a miss. Prints each file and the two rates.
"""
from __future__ import annotations

import time
from pathlib import Path

from grader.catalog import load_catalog
from grader.diagnosis.localize import localize, parameter_line
from grader.runner import keep_warm
from grader.sandbox import Sandbox
from grader.harness import Harness

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"

RIGHT_LINES = {  # file: (lines where the fix belongs, lines where a one-line fix also works), judged by reading each file
    "01/api_names.py": ([12, 13, 14], []),
    "01/batched_transpose01.py": ([20], []),
    "01/batched_transpose_T.py": ([18], []),
    "01/no_scaling.py": ([18], []),
    "01/qkv_bias_ignored.py": ([12, 13, 14], []),
    "01/scale_not_sqrt.py": ([18], []),
    "01/scale_wrong_dim.py": ([21], []),
    "01/scale_wrong_dim_xshape.py": ([16], [17]),
    "01/scale_tensor_on_cpu.py": ([20], [21]),
    "01/softmax_dim1.py": ([22], []),
    "01/softmax_wrong_dim.py": ([21], []),
    "02/batched_transpose.py": ([9], []),
    "02/mask_after_softmax.py": ([10], []),
    "02/mask_inverted.py": ([12], []),
    "02/mask_inverted_not.py": ([10], []),
    "02/mask_missing.py": ([11], []),
    "02/mask_multiply.py": ([12], []),
    "02/mask_zero_fill.py": ([11], []),
    "02/no_scaling.py": ([9], []),
    "02/returns_swapped.py": ([13], []),
    "02/scale_not_sqrt.py": ([7], []),
    "02/scale_wrong_dim_dv.py": ([9], []),
    "02/softmax_wrong_dim.py": ([12], []),
    "03/api_names.py": ([12, 13, 14], []),
    "03/dropout_before_softmax.py": ([25], []),
    "03/dropout_in_eval.py": ([28], []),
    "03/dropout_missing.py": ([27], []),
    "03/dropout_on_output.py": ([27], []),
    "03/dropout_on_values.py": ([23], []),
    "03/mask_after_softmax.py": ([24], []),
    "03/mask_device_attribute.py": ([17], []),
    "03/mask_device_forward.py": ([24], []),
    "03/mask_diagonal.py": ([16], [24]),
    "03/mask_inverted.py": ([25], []),
    "03/mask_inverted_tril.py": ([23], []),
    "03/mask_missing.py": ([25], []),
    "03/mask_not_sliced.py": ([23], []),
    "03/mask_zero_fill.py": ([24], []),
    "03/no_scaling.py": ([22], []),
    "03/qkv_bias_ignored.py": ([12, 13, 14], []),
    "03/scale_wrong_dim.py": ([22], []),
    "03/softmax_wrong_dim.py": ([26], []),
    "04/dropout_in_eval.py": ([33], []),
    "04/dropout_missing.py": ([32], []),
    "04/dropout_on_output.py": ([34], []),
    "04/heads_merge_no_transpose.py": ([33], []),
    "04/heads_merge_reshape.py": ([33], []),
    "04/heads_view_direct.py": ([25], []),
    "04/heads_view_no_transpose.py": ([26], []),
    "04/mask_after_softmax.py": ([29], []),
    "04/mask_device.py": ([28], []),
    "04/mask_device_attribute.py": ([23], []),
    "04/head_scale_on_cpu.py": ([30], [31]),
    "04/mask_diagonal.py": ([20], [29]),
    "04/mask_inverted.py": ([30], []),
    "04/mask_not_sliced.py": ([28], []),
    "04/mask_zero_fill.py": ([29], []),
    "04/no_divisible_check.py": ([9, 10, 11, 12, 13], []),
    "04/no_scaling.py": ([30], []),
    "04/out_proj_missing.py": ([34], []),
    "04/out_proj_named_W_o.py": ([18], []),
    "04/qkv_bias_ignored.py": ([15, 16, 17], []),
    "04/scale_wrong_dim.py": ([30], []),
    "04/softmax_wrong_dim.py": ([30], []),
    "04/view_noncontiguous.py": ([33], []),
    "05/merge_not_transposed.py": ([34], []),
    "05/merge_view_noncontiguous.py": ([33], []),
    "05/no_scaling.py": ([30], []),
    "05/out_proj_dropped.py": ([34], []),
    "05/renamed_out_proj.py": ([17], []),
    "05/scale_hidden_size.py": ([30], []),
    "05/scale_not_sqrt.py": ([30], []),
    "05/skeleton_as_given.py": ([25], []),
    "05/softmax_wrong_dim.py": ([30], []),
    "05/split_direct_view.py": ([26], []),
    "05/split_fixed_merge_untouched.py": ([34], []),
}


def locate(path: Path, zygote):
    """(localization, seconds spent tracing and aligning, sandbox start excluded)."""
    ex = load_catalog().get(path.parent.name)
    sandbox = Sandbox(path, zygote=zygote).start()
    try:
        harness = Harness(ex, sandbox)
        harness.load()
        start = time.perf_counter()
        source = path.read_text(encoding="utf-8")
        found = localize(ex, harness, source) or parameter_line(ex, harness, source)
        return found, time.perf_counter() - start
    finally:
        sandbox.close()


def main() -> None:
    import torch

    torch.set_num_threads(1)
    zygote = keep_warm()
    strict = lenient = found = 0
    times = []
    for name, (right, also) in RIGHT_LINES.items():
        loc, seconds = locate(CORPUS / name, zygote)
        times.append(seconds)
        line = loc.line if loc else None
        found += loc is not None
        strict += line in right
        lenient += line in right or line in also
        mark = "right" if line in right else "one-line fix" if line in also else "none" if line is None else "WRONG"
        print(f"{name:40} {str(line):>5}  {mark:12} {loc.stage if loc else ''}")
    n = len(RIGHT_LINES)
    print(f"\n{n} buggy files; localized {found}; right line {strict}/{n} = {strict / n:.0%} "
          f"({strict}/{found} = {strict / max(found, 1):.0%} of those localized); "
          f"with one-line fixes {lenient}/{n} = {lenient / n:.0%}")
    times.sort()
    print(f"trace + alignment per file: median {times[len(times) // 2]:.3f} s, max {times[-1]:.3f} s")


if __name__ == "__main__":
    main()
