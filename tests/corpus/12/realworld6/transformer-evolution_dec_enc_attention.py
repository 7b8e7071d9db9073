# expect: heads_not_divisible
# bug-lines: 31
# source: paul-hyun/transformer-evolution @1f8ce18d1a96fa359773376036eee1fd7d71fac2, transformer/model.py (get_attn_pad_mask, ScaledDotProductAttention, MultiHeadAttention as the decoder's dec_enc_attn)
# changes: constructor and layer names from the contract (W_Q/W_K/W_V/linear -> W_query/W_key/W_value/out_proj, d_hidn/n_head/d_head from d_in, d_context, d_out, num_heads, qkv_bias); the (bs, len_q, len_k) pad mask of get_attn_pad_mask is built from context_padding_mask (all False when None); dropout removed; returns the output only (not attn_prob); head size d_head = d_out // num_heads (the source configures d_head and n_head separately)
import torch
import torch.nn as nn


""" scale dot product attention """
class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_head):
        super().__init__()
        self.scale = 1 / (d_head ** 0.5)

    def forward(self, Q, K, V, attn_mask):
        # (bs, n_head, n_q_seq, n_k_seq)
        scores = torch.matmul(Q, K.transpose(-1, -2)).mul_(self.scale)
        scores.masked_fill_(attn_mask, -1e9)
        # (bs, n_head, n_q_seq, n_k_seq)
        attn_prob = nn.Softmax(dim=-1)(scores)
        # (bs, n_head, n_q_seq, d_v)
        context = torch.matmul(attn_prob, V)
        # (bs, n_head, n_q_seq, d_v), (bs, n_head, n_q_seq, n_v_seq)
        return context, attn_prob


""" multi head attention """
class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.n_head = num_heads
        self.d_head = d_out // num_heads

        self.W_query = nn.Linear(d_in, self.d_head * self.n_head, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, self.d_head * self.n_head, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, self.d_head * self.n_head, bias=qkv_bias)
        self.scaled_dot_attn = ScaledDotProductAttention(self.d_head)
        self.out_proj = nn.Linear(self.n_head * self.d_head, d_out)

    def forward(self, x, context, context_padding_mask=None):
        Q, K, V = x, context, context
        batch_size, len_q, len_k = Q.size(0), Q.size(1), K.size(1)
        if context_padding_mask is None:
            context_padding_mask = torch.zeros(batch_size, len_k, dtype=torch.bool, device=K.device)
        attn_mask = context_padding_mask.unsqueeze(1).expand(batch_size, len_q, len_k)  # <pad>
        # (bs, n_head, n_q_seq, d_head)
        q_s = self.W_query(Q).view(batch_size, -1, self.n_head, self.d_head).transpose(1,2)
        # (bs, n_head, n_k_seq, d_head)
        k_s = self.W_key(K).view(batch_size, -1, self.n_head, self.d_head).transpose(1,2)
        # (bs, n_head, n_v_seq, d_head)
        v_s = self.W_value(V).view(batch_size, -1, self.n_head, self.d_head).transpose(1,2)

        # (bs, n_head, n_q_seq, n_k_seq)
        attn_mask = attn_mask.unsqueeze(1).repeat(1, self.n_head, 1, 1)

        # (bs, n_head, n_q_seq, d_head), (bs, n_head, n_q_seq, n_k_seq)
        context, attn_prob = self.scaled_dot_attn(q_s, k_s, v_s, attn_mask)
        # (bs, n_head, n_q_seq, h_head * d_head)
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, self.n_head * self.d_head)
        # (bs, n_head, n_q_seq, e_embd)
        output = self.out_proj(context)
        # (bs, n_q_seq, d_hidn)
        return output
