"""The rules, in the order align() tries them (align.py RULES). Each reads an Alignment and returns a Localization
(this line), ABSTAIN (no line can be trusted: report none) or None (not this rule's case: ask the next one).

  abstain.py     Abstain, ABSTAIN
  kinds.py       kinds of ops (products, moves, rearrangements) and of differences (a mask's pattern)
  tensors.py     questions about tensors alone (dropout of x? the product of other roles? a factor?)
  reads.py       what a line reads that the trace does not follow, and where it was made
  dropout.py     a dropout that is not the reference's; a missing one in training mode
  loop.py        a reference marking only its output: the first tensor it never computes
  layout.py      computed twice, laid out otherwise, roles swapped
  raised.py      a forward that raised before the failing stage
  split.py       heads split otherwise on one line, after a projection right up to layout
  missing.py     a missing step, an unused result
  paths.py       a call on another path (flash=True) after one that reproduced every stage
  values.py      a mask or a scale made on another line; half precision
  constants.py   a mask or a table the code builds (the trace's consts) that is none of the reference's
  ambiguous.py   the cases that abstain
  difference.py  the first entry that differs, by shape or by how

Each module's rules are tested in tests/test_localize_rules_<module>.py, without a sandbox."""
from grader.diagnosis.localize.rules.abstain import ABSTAIN, Abstain
from grader.diagnosis.localize.rules.ambiguous import (fill_then_more, out_of_order, several_masks, unexplained_elsewhere,
                                                       untraced_angles)
from grader.diagnosis.localize.rules.constants import wrong_mask, wrong_table
from grader.diagnosis.localize.rules.difference import first_difference, other_shape
from grader.diagnosis.localize.rules.dropout import dropout_misplaced, training_pass
from grader.diagnosis.localize.rules.kinds import ADDS, CASTS, MOVES, NOT_THE_MASK, PATTERN, PRODUCTS, REARRANGE
from grader.diagnosis.localize.rules.layout import (computed_twice, input_laid_out_otherwise, merged_otherwise, roles_swapped, scrambled_layout,
                                                    swapped_roles)
from grader.diagnosis.localize.rules.loop import first_divergence, loop_cut_short
from grader.diagnosis.localize.rules.missing import missing_step, nothing_after, step_skipped, unused_result
from grader.diagnosis.localize.rules.paths import other_path
from grader.diagnosis.localize.rules.raised import raised_here
from grader.diagnosis.localize.rules.split import split_otherwise
from grader.diagnosis.localize.rules.reads import moved_before, rearranged_input, shaped_elsewhere, untraced_reads
from grader.diagnosis.localize.rules.tensors import (dropped_from, frequencies_only, half_precision, line_result, other_roles,
                                                     products, scaled_reference)
from grader.diagnosis.localize.rules.values import (added_operand, built_before, lost_precision, scaled_earlier,
                                                     value_built_before)

__all__ = ["ABSTAIN", "ADDS", "Abstain", "CASTS", "MOVES", "NOT_THE_MASK", "PATTERN", "PRODUCTS", "REARRANGE", "added_operand", "built_before", "computed_twice",
           "dropout_misplaced", "dropped_from", "fill_then_more", "first_difference", "first_divergence", "frequencies_only", "half_precision",
           "input_laid_out_otherwise", "line_result", "loop_cut_short", "lost_precision", "merged_otherwise", "missing_step", "moved_before", "nothing_after",
           "other_path", "other_roles", "other_shape", "out_of_order", "products", "raised_here", "rearranged_input", "roles_swapped",
           "scaled_earlier", "scaled_reference", "scrambled_layout", "several_masks", "shaped_elsewhere", "split_otherwise", "step_skipped", "swapped_roles",
           "training_pass", "unexplained_elsewhere", "untraced_angles", "untraced_reads", "unused_result", "value_built_before", "wrong_mask", "wrong_table"]
