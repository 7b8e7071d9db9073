# expect: fp16_fill_overflow
# bug-lines: 28
# source: espnet/espnet @0213427187b25b80800949b7d0ae8f6184f0fe2c, espnet/nets/pytorch_backend/transformer/attention.py (MIN_VALUE, MultiHeadedAttention.forward)
# changes: function padded_attention instead of the module; q/k/v arrive already split into heads (linear_q/k/v, the head split, the merge and linear_out removed: no contract input for them); d_k read from query; numpy.finfo(numpy.float32).min written as torch.finfo(torch.float32).min (numpy is not an allowed import); the contract's key_padding_mask (True = padding) and causal flag turned once into the author's keep-mask (batch, time1, time2), 1 = attend; dropout and self.attn removed
import math

import torch


MIN_VALUE = float(torch.finfo(torch.float32).min)


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    n_batch, time1, time2 = query.size(0), query.size(-2), key.size(-2)
    mask = None
    if key_padding_mask is not None or causal:
        mask = torch.ones(n_batch, time1, time2, dtype=torch.bool, device=query.device)
        if key_padding_mask is not None:
            mask = mask & ~key_padding_mask[:, None, :]
        if causal:
            mask = mask & torch.ones(time1, time2, dtype=torch.bool, device=query.device).tril()

    d_k = query.size(-1)
    q, k, v = query, key, value
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)  # (batch, head, time1, time2)
    if mask is not None:
        mask.unsqueeze_(1).eq_(0)  # (batch, 1, time1, time2)
        scores = scores.masked_fill(mask, MIN_VALUE)
        attn = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)  # (batch, head, time1, time2)
    else:
        attn = torch.softmax(scores, dim=-1)

    x = torch.matmul(attn, v)  # (batch, head, time1, d_k)
    return x
