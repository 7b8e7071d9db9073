# expect: padding_mask_inverted
# source: jadore801120/attention-is-all-you-need-pytorch, transformer/SubLayers.py class MultiHeadAttention and
#         transformer/Modules.py class ScaledDotProductAttention (https://github.com/jadore801120/attention-is-all-you-need-pytorch/blob/132907dd272e2cc92e3c10e6c4e783a87ff8893d/transformer/SubLayers.py)
# license: MIT (Copyright (c) 2017 Victor Huang)
# changes: class renamed CrossAttention; constructor (n_head, d_model, d_k, d_v, dropout=0.1) -> the contract's
#          (d_in, d_context, d_out, num_heads, qkv_bias=False) with n_head = num_heads, d_k = d_v = d_out // num_heads,
#          dropout 0; w_qs/w_ks/w_vs/fc renamed W_query/W_key/W_value/out_proj, W_query taking d_in inputs and
#          W_key/W_value d_context inputs (the author's are all d_model wide), bias=qkv_bias for the three and a
#          bias for out_proj (all were bias=False). The residual connection and LayerNorm that the author puts inside
#          the sublayer (q += residual; layer_norm(q)) belong to the decoder layer in the contract and are removed,
#          with the output dropout. forward(q, k, v, mask=None) -> forward(x, context, context_padding_mask=None) as
#          the decoder calls its enc_attn(dec_output, enc_output, enc_output, mask=src_mask); the author's
#          src_mask is (B, 1, S) with 1 = real token and 0 = padding (get_pad_mask: seq != pad_idx), so the contract's
#          (B, S) mask is given the author's shape with unsqueeze(1) and keeps its meaning (True = padding).
#          The split, ScaledDotProductAttention (q / temperature, masked_fill(mask == 0, -1e9)) and merge are the author's.
# bug-lines: 35
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledDotProductAttention(nn.Module):
    ''' Scaled Dot-Product Attention '''

    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)

    def forward(self, q, k, v, mask=None):

        attn = torch.matmul(q / self.temperature, k.transpose(2, 3))

        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e9)

        attn = self.dropout(F.softmax(attn, dim=-1))
        output = torch.matmul(attn, v)

        return output, attn


class CrossAttention(nn.Module):
    ''' Multi-Head Attention module '''

    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()

        n_head = num_heads
        d_k = d_v = d_out // num_heads
        self.n_head = n_head
        self.d_k = d_k
        self.d_v = d_v

        self.W_query = nn.Linear(d_in, n_head * d_k, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, n_head * d_k, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, n_head * d_v, bias=qkv_bias)
        self.out_proj = nn.Linear(n_head * d_v, d_out)

        self.attention = ScaledDotProductAttention(temperature=d_k ** 0.5, attn_dropout=0.0)


    def forward(self, x, context, context_padding_mask=None):
        q, k, v = x, context, context
        mask = None if context_padding_mask is None else context_padding_mask.unsqueeze(1)

        d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
        sz_b, len_q, len_k, len_v = q.size(0), q.size(1), k.size(1), v.size(1)

        # Pass through the pre-attention projection: b x lq x (n*dv)
        # Separate different heads: b x lq x n x dv
        q = self.W_query(q).view(sz_b, len_q, n_head, d_k)
        k = self.W_key(k).view(sz_b, len_k, n_head, d_k)
        v = self.W_value(v).view(sz_b, len_v, n_head, d_v)

        # Transpose for attention dot product: b x n x lq x dv
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

        if mask is not None:
            mask = mask.unsqueeze(1)   # For head axis broadcasting.

        q, attn = self.attention(q, k, v, mask=mask)

        # Transpose to move the head dimension back: b x lq x n x dv
        # Combine the last two dimensions to concatenate all the heads together: b x lq x (n*dv)
        q = q.transpose(1, 2).contiguous().view(sz_b, len_q, -1)
        q = self.out_proj(q)

        return q
