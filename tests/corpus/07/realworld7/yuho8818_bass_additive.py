# expect: masked_rows_not_zero
# also: fp16_fill_overflow
# bug-lines: 27, 29
# source: yuho8818/bass @9aacf776c7866445daccd8c452b1244bf49516bc, MHA/demo.py (MultiHeadAttention.forward, the attention part)
# changes: the attention core of the author's forward (scores / sqrt(head_dim), additive causal_mask * -1e9, softmax, @ v)
#          is kept as the function padded_attention; projections, head split/merge and the KV cache are dropped
#          because the contract hands in q, k, v already split; the author's mask argument (1 = blocked, added as
#          mask * -1e9) is built from the contract's key_padding_mask and causal flag; import torch.nn unused, dropped.
import torch
import torch.nn.functional as F


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, head_dim = query.shape
    S = key.size(2)
    causal_mask = None
    if key_padding_mask is not None:
        causal_mask = key_padding_mask.view(B, 1, 1, S)
    if causal:
        future = torch.triu(torch.ones(L, S, dtype=torch.bool, device=query.device), diagonal=1)
        causal_mask = future if causal_mask is None else (causal_mask | future)

    # 注意力打分
    attention_scores = torch.matmul(query, key.transpose(-1, -2)) / torch.sqrt(torch.tensor(head_dim, dtype=torch.float32))

    if causal_mask is not None:
        attention_scores += causal_mask * -1e9

    attention_probs = F.softmax(attention_scores, dim=-1)
    output = torch.matmul(attention_probs, value)
    return output
