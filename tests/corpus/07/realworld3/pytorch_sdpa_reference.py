# expect: runtime_error
# also: tensor_on_cpu
# bug-lines: 27
# source: pytorch/pytorch, torch/nn/functional.py, docstring of scaled_dot_product_attention ("Efficient implementation equivalent to the following", as published for torch 2.1-2.4; no commit pinned)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   the reference function kept as written; a contract function padded_attention converts the padding mask to its keep convention
#   (True = may attend) and, since the reference refuses attn_mask together with is_causal, passes one combined mask when both are asked for
import math

import torch


# Efficient implementation equivalent to the following:
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None) -> torch.Tensor:
    # Efficient implementation equivalent to the following:
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        assert attn_mask is None
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
        attn_bias.to(query.dtype)

    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf"))
        else:
            attn_bias += attn_mask
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    attn_weight = torch.dropout(attn_weight, dropout_p, train=True)
    return attn_weight @ value


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # adapter: the reference's boolean attn_mask means True = may attend, and it refuses
    # attn_mask together with is_causal, so a causal padded call passes one combined mask
    if key_padding_mask is None:
        return scaled_dot_product_attention(query, key, value, is_causal=causal)
    B, S = key_padding_mask.shape
    L = query.size(-2)
    keep = ~key_padding_mask.view(B, 1, 1, S)
    if causal:
        keep = keep & torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=0)
    return scaled_dot_product_attention(query, key, value, attn_mask=keep)
