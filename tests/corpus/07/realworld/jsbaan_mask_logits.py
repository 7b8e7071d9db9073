# expect: padding_mask_ignored
# source: jsbaan/transformer-from-scratch/multi_head_attention.py, MultiHeadAttention.scaled_dot_product + mask_logits,
#   and utils.construct_future_mask (commit d4841b2)
# license: unknown (no license file in the repository)
# changes: the static methods become the contract's padded_attention(query, key, value, key_padding_mask=None,
#   causal=False); the author's src_padding_mask is True = real token (masked where == 0), so it is passed as
#   ~key_padding_mask; causal=True passes future_mask = construct_future_mask(L) as the author's decoder does.
#   Everything else as written (note mask_logits: the second masked_fill starts again from `logits`).
# bug-lines: 32
import math
from typing import Optional

import torch
from torch.nn import functional as F


def construct_future_mask(seq_len: int):
    subsequent_mask = torch.triu(torch.full((seq_len, seq_len), 1), diagonal=1)
    return subsequent_mask == 0


def mask_logits(
    logits: torch.Tensor,
    src_padding_mask: Optional[torch.BoolTensor] = None,
    future_mask: Optional[torch.BoolTensor] = None,
):
    if src_padding_mask is not None:
        masked_logits = logits.masked_fill(
            src_padding_mask[:, None, None, :] == 0, float("-inf")
        )
    if future_mask is not None:
        masked_logits = logits.masked_fill(future_mask == 0, float("-inf"))
    return masked_logits


def scaled_dot_product(q, k, v, src_padding_mask=None, future_mask=None):
    attn_logits = torch.matmul(q, torch.transpose(k, -2, -1),)

    # Scale logits by constant to create less spiky softmax distribution
    attn_logits = attn_logits / math.sqrt(q.size()[-1])

    # Apply attention mask (for pad tokens and future-masking in cross-attention)
    if src_padding_mask is not None or future_mask is not None:
        attn_logits = mask_logits(attn_logits, src_padding_mask, future_mask)  # type: ignore

    # Transform logits to attention probability distribution (one distribution per non-masked token index)
    attention = F.softmax(attn_logits, dim=-1)

    values = torch.matmul(attention, v)
    return values, attention


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    src_padding_mask = ~key_padding_mask if key_padding_mask is not None else None
    future_mask = construct_future_mask(query.size(-2)) if causal else None
    values, _ = scaled_dot_product(query, key, value, src_padding_mask, future_mask)
    return values
