# expect: pass
# source: Decalogue/flyllm @f50e6874b440f0153c85ab67850eb11fd13b48e3, llm/GQA.md (GroupedQueryAttention, the basic version)
# changes: contract signature and names (d_model split into d_in -> d_out; W_q/W_k/W_v/W_o renamed W_query/W_key/W_value/out_proj, bias=qkv_bias on the projections, out_proj always with bias); self-attention forward(x) (query = key = value = x); the contract's causal rule passed as the author's keep-mask (1 = attend), a tril buffer of context_length sliced to T; dropout and return_attention removed (not in the contract)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_model must be divisible by num_query_heads"
        assert num_heads % num_kv_groups == 0, "num_query_heads must be divisible by num_kv_heads"

        self.d_model = d_out
        self.num_query_heads = num_heads
        self.num_kv_heads = num_kv_groups
        self.d_k = d_out // num_heads
        self.num_groups = num_heads // num_kv_groups
        self.scale = 1.0 / math.sqrt(self.d_k)

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.d_k, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.d_k, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

        self.register_buffer("causal_keep", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        query = key = value = x
        batch_size, seq_len_q, _ = query.shape
        seq_len_k = key.shape[1]
        mask = self.causal_keep[:seq_len_q, :seq_len_k]

        Q = self.W_query(query).view(batch_size, seq_len_q, self.num_query_heads, self.d_k)
        Q = Q.transpose(1, 2)  # [batch_size, num_query_heads, seq_len_q, d_k]

        K = self.W_key(key).view(batch_size, seq_len_k, self.num_kv_heads, self.d_k)
        K = K.transpose(1, 2)  # [batch_size, num_kv_heads, seq_len_k, d_k]

        V = self.W_value(value).view(batch_size, seq_len_k, self.num_kv_heads, self.d_k)
        V = V.transpose(1, 2)  # [batch_size, num_kv_heads, seq_len_k, d_k]

        K = K.repeat_interleave(self.num_groups, dim=1)
        V = V.repeat_interleave(self.num_groups, dim=1)

        scores = torch.matmul(Q, K.transpose(-2, -1)) * self.scale

        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)  # [batch_size, 1, seq_len_q, seq_len_k]
            scores = scores.masked_fill(mask == 0, float('-inf'))

        attention_weights = F.softmax(scores, dim=-1)

        context = torch.matmul(attention_weights, V)

        context = context.transpose(1, 2).contiguous()
        context = context.view(batch_size, seq_len_q, self.d_model)

        output = self.out_proj(context)
        return output
