"""Which stages each named mistake acts on: a line is reported only at one of them.

The alignment finds where the submission first parts from the reference; the diagnosis names the mistake from the
behaviour. When the two disagree (a missing cache named, a line found at the queries), the line is about something
else than the named mistake, and none is shown. Keyed by diagnosis id (grader/diagnosis/catalog.toml), never by
exercise; ANY: a mistake that can sit anywhere (an exception, a device, a dtype, an unnamed difference).
"""
from __future__ import annotations

ANY = None
PROJECTIONS = frozenset({"parameters", "queries", "keys", "values"})
HEADS = frozenset({"queries", "keys", "values", "cached_keys", "cached_values", "repeated_keys", "repeated_values", "scores"})
SCALE = frozenset({"queries", "keys", "scores", "scaled_scores", "weights", "output"})
MASK = frozenset({"scores", "scaled_scores", "masked_scores", "weights", "dropped_weights", "zeroed_weights", "output"})
WEIGHTS = frozenset({"masked_scores", "weights", "dropped_weights", "zeroed_weights", "context", "output"})
MERGE = frozenset({"context", "merged", "output"})
CACHE = frozenset({"cached_keys", "cached_values", "scores", "scaled_scores", "masked_scores"})
ROPE = frozenset({"angles", "rotated"})
FLOW = frozenset({"scores", "scaled_scores", "masked_scores", "weights", "dropped_weights", "context", "merged", "output"})

ACTS_ON: dict[str, frozenset | None] = {
    **dict.fromkeys(("no_scaling", "scale_not_sqrt", "scale_wrong_dim"), SCALE),
    "softmax_wrong_dim": WEIGHTS - {"masked_scores"},
    "batched_transpose": frozenset({"keys", "scores"}),
    **dict.fromkeys(("mask_missing", "mask_inverted", "mask_diagonal", "mask_zero_fill", "mask_after_softmax",
                     "mask_not_sliced", "mask_combine_wrong", "padding_mask_inverted", "padding_mask_ignored",
                     "padding_mask_on_queries", "padding_mask_broadcast", "fp16_fill_overflow", "masked_rows_nan",
                     "masked_rows_not_zero", "masked_rows_nan_grad", "cross_causal_mask", "kv_cache_mask_offset"), MASK),
    "heads_split_wrong": HEADS,
    **dict.fromkeys(("heads_merge_wrong", "view_noncontiguous", "out_proj_missing"), MERGE),
    **dict.fromkeys(("dropout_misplaced", "dropout_missing", "dropout_in_eval"), WEIGHTS),
    **dict.fromkeys(("api_mismatch", "heads_not_divisible"), frozenset({"parameters"})),
    "qkv_bias_ignored": PROJECTIONS | {"scores", "scaled_scores", "weights"},
    **dict.fromkeys(("qkv_split_order", "qkv_split_wrong", "cross_kv_from_queries"), PROJECTIONS | {"scores"}),
    **dict.fromkeys(("kv_cache_not_appended", "kv_cache_order", "kv_cache_ignored"), CACHE),
    "kv_cache_layout": CACHE | HEADS,
    **dict.fromkeys(("gqa_group_mapping", "gqa_kv_heads_wrong"), HEADS - {"queries", "cached_keys", "cached_values"}),
    **dict.fromkeys(("scores_materialised", "online_softmax_no_rescale", "online_softmax_block_average",
                     "online_softmax_overflow", "tiled_remainder_dropped", "tiled_causal_diagonal",
                     "flash_not_causal", "flash_scaled_twice", "flash_paths_disagree"), FLOW),
    **dict.fromkeys(("rope_pairing", "rope_frequencies", "rope_direction", "rope_positions_ignored", "rope_base_ignored",
                     "rope_angle_precision"), ROPE),
    **dict.fromkeys(("mask_device", "tensor_on_cpu", "dtype_not_kept", "runtime_error", "crash", "nan_output",
                     "output_shape", "wrong_output", "timeout", "memory_limit", "forbidden_api", "unsafe_code",
                     "not_started", "syntax_error", "import_error"), ANY),
}


def acts_on(diagnosis: str | None, stage: str) -> bool:
    """The named mistake acts on this stage (an id the table lacks: any stage, as before the gate)."""
    if diagnosis is None or diagnosis not in ACTS_ON:
        return True
    stages = ACTS_ON[diagnosis]
    return stages is ANY or stage in stages
