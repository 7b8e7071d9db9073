"""align(): line the trace up with the reference's stages, then ask the rules in order; the first that answers wins."""
from __future__ import annotations

import logging

from grader.diagnosis.localize import rules
from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.model import Localization, Stage, Traced

log = logging.getLogger(__name__)

RULES = [rules.other_path, rules.dropout_misplaced, rules.training_pass, rules.first_divergence, rules.computed_twice,
         rules.scrambled_layout, rules.merged_otherwise, rules.input_laid_out_otherwise,
         rules.raised_here, rules.nothing_after, rules.wrong_mask, rules.wrong_table, rules.untraced_angles, rules.out_of_order, rules.lost_precision, rules.scaled_earlier,
         rules.several_masks, rules.fill_then_more, rules.added_operand, rules.value_built_before, rules.other_shape,
         rules.roles_swapped, rules.unused_result, rules.missing_step, rules.step_skipped,
         rules.split_otherwise, rules.unexplained_elsewhere, rules.first_difference]


def align(entries: list[Traced], stages: list[Stage], raised: dict | None = None, *, train: bool = False,
          source: str = "", reference: list[Traced] = (), consts=(), reference_consts=()) -> Localization | None:
    """The last stage the submission reproduces, the first it doesn't, and the line where they part (or None)."""
    found = decide(entries, stages, raised, train=train, source=source, reference=reference, consts=consts,
                   reference_consts=reference_consts)
    return None if isinstance(found, rules.Abstain) else found


def decide(entries: list[Traced], stages: list[Stage], raised: dict | None = None, *, train: bool = False,
           source: str = "", reference: list[Traced] = (), consts=(), reference_consts=(),
           ran: frozenset[int] = frozenset()) -> Localization | rules.Abstain | None:
    """align(), telling a rule's abstention (ABSTAIN: no line can be trusted, whatever another pass finds) from
    nothing to locate (None). ran: the lines an earlier traced call ran while reproducing every stage."""
    if not stages:
        return None
    al = Alignment(entries, stages, raised, train=train, source=source, reference=reference, consts=consts,
                   reference_consts=reference_consts, ran=ran)
    if al.failing is None:
        log.debug("every stage is reproduced: nothing to locate")
        return None
    log.debug("failing stage %s, matched through %s", al.failing.name, al.through.name if al.through else None)
    for rule in RULES:
        found = rule(al)
        if isinstance(found, rules.Abstain):
            log.debug("rule %s abstains", rule.__name__)
            return found
        if found is not None:
            log.debug("rule %s: line %d", rule.__name__, found.line)
            return found
    return None
