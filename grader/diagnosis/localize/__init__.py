"""Points at the line: "Where it goes wrong: line N" for a failing verdict. Feedback only, never the verdict: any
failure here means no localization (logged at debug level), never a failed grade.

The pipeline, one module per stage:

  run.py         localize_verdict(), localize(): trace the submission in its worker and the reference here
  reference.py   the reference's stages: its `# stage: name` comments and the tensors traced on those lines
  untrusted.py   validate(): the submission's trace is untrusted; malformed entries are dropped
  compare.py     matching an entry to a stage (up to layout, or one head of it); the first stage not reproduced
  alignment.py   Alignment: what the rules read (matched through, failing stage, the entry where they part)
  explain.py     how that entry differs (softmax over another dim, an inverted mask, a factor, ...)
  constants.py   the masks and tables the code builds (the trace's consts) against the reference's, and where wrong ones begin
  rules/         the small rules, tried in order by align.py; each names a line, abstains, or passes on
  source.py      what the parsed source says (where a mask or a scalar is built, the return after a line)
  text.py        stage names as words
  parameters.py  parameters the grader could not load: the line creating the layer
  raising.py     an exception raised only for some inputs: the line the worker reported
  gate.py        the stages each named mistake acts on: a line elsewhere is not reported
"""
from grader.diagnosis.layout import equivalent, same_values
from grader.diagnosis.localize.align import RULES, align
from grader.diagnosis.localize.alignment import Alignment, also_computed
from grader.diagnosis.localize.compare import first_failing, is_part, matches, part_dims
from grader.diagnosis.localize.model import Localization, Stage, Traced
from grader.diagnosis.localize.parameters import parameter_line
from grader.diagnosis.localize.reference import stage_lines, stages_from_trace, trace_reference
from grader.diagnosis.localize.rules import ABSTAIN, frequencies_only, half_precision
from grader.diagnosis.localize.run import localize, localize_verdict, trace_call
from grader.diagnosis.localize.source import mask_built_at, return_after
from grader.diagnosis.localize.untrusted import validate
from grader.sandbox.trace import MAX_ELEMENTS

__all__ = ["ABSTAIN", "Alignment", "Localization", "MAX_ELEMENTS", "RULES", "Stage", "Traced", "align", "also_computed",
           "equivalent", "first_failing", "frequencies_only", "half_precision", "is_part", "localize", "localize_verdict",
           "mask_built_at", "matches", "parameter_line", "part_dims", "return_after", "same_values", "stage_lines",
           "stages_from_trace", "trace_call", "trace_reference", "validate"]
