# expect: fp16_fill_overflow
# also: masked_rows_not_zero
# bug-lines: 27, 31
# source: paul-hyun/transformer-evolution @1f8ce18d1a96fa359773376036eee1fd7d71fac2, transformer/model.py (get_attn_pad_mask, get_attn_decoder_mask, Decoder mask combination, MultiHeadAttention mask repeat, ScaledDotProductAttention)
# changes: function form; the pad mask is taken from key_padding_mask instead of seq_k.eq(i_pad) (an all-False mask when None), the decoder mask from the query length; projections, dropout and head merge removed (the contract passes split heads and returns them); d_head read from the query
import torch
import torch.nn as nn


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    batch_size, n_head, len_q, d_head = query.size()
    len_k = key.size(2)
    if key_padding_mask is None:
        key_padding_mask = torch.zeros(batch_size, len_k, dtype=torch.bool, device=query.device)
    # <pad>
    attn_mask = key_padding_mask.unsqueeze(1).expand(batch_size, len_q, len_k)
    if causal:
        subsequent_mask = torch.ones(batch_size, len_q, dtype=torch.long, device=query.device).unsqueeze(-1).expand(batch_size, len_q, len_q)
        subsequent_mask = subsequent_mask.triu(diagonal=1)
        attn_mask = torch.gt((attn_mask + subsequent_mask), 0)
    # (bs, n_head, n_q_seq, n_k_seq)
    attn_mask = attn_mask.unsqueeze(1).repeat(1, n_head, 1, 1)

    scale = 1 / (d_head ** 0.5)
    # (bs, n_head, n_q_seq, n_k_seq)
    scores = torch.matmul(query, key.transpose(-1, -2)).mul_(scale)
    scores.masked_fill_(attn_mask, -1e9)
    # (bs, n_head, n_q_seq, n_k_seq)
    attn_prob = nn.Softmax(dim=-1)(scores)
    # (bs, n_head, n_q_seq, d_v)
    context = torch.matmul(attn_prob, value)
    return context
