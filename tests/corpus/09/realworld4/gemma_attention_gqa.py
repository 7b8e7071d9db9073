# expect: heads_not_divisible
# bug-lines: 30
# source: google/gemma_pytorch @014acb7ac4563a5f77c76d7ff98f31b568c16508, gemma/model.py (GemmaAttention; the causal mask tensor that
#   GemmaForCausalLM.generate builds)
# changes: GemmaAttention(config, attn_type) -> GroupedQueryAttention(d_in, d_out, context_length, num_heads, num_kv_groups,
#   qkv_bias=False) with hidden_size = d_in, num_attention_heads = num_heads, num_key_value_heads = num_kv_groups,
#   head_dim = d_out // num_heads (Gemma's config gives head_dim separately), query_pre_attn_scalar = None; the fused
#   qkv_proj (split into q | k | v sizes) -> the contract's W_query, W_key, W_value, o_proj -> out_proj (nn.Linear,
#   bias=qkv_bias / with bias, as the contract defines them; Gemma's own Linear has no bias); rotary embeddings, QK-norm,
#   logit soft-capping, the sliding-window branch and the KV-cache writes are removed (no contract input; without a cache
#   the keys and values are the tokens' own); the additive mask generate() passes in (full of -2.3819763e38, triu 1) is a
#   registered buffer sliced to the tokens, as generate() slices it by input positions.
import torch
from torch import nn
import torch.nn.functional as F


class GroupedQueryAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()

        self.num_heads = num_heads
        self.num_kv_heads = num_kv_groups

        assert self.num_heads % self.num_kv_heads == 0
        self.num_queries_per_kv = self.num_heads // self.num_kv_heads

        self.hidden_size = d_in
        self.head_dim = d_out // num_heads

        self.q_size = self.num_heads * self.head_dim
        self.kv_size = self.num_kv_heads * self.head_dim

        self.scaling = self.head_dim**-0.5

        self.W_query = nn.Linear(self.hidden_size, self.q_size, bias=qkv_bias)
        self.W_key = nn.Linear(self.hidden_size, self.kv_size, bias=qkv_bias)
        self.W_value = nn.Linear(self.hidden_size, self.kv_size, bias=qkv_bias)
        self.out_proj = nn.Linear(self.num_heads * self.head_dim, d_out)

        max_seq_len = context_length
        mask_tensor = torch.full((1, 1, max_seq_len, max_seq_len),
                                 -2.3819763e38).to(torch.float)
        mask_tensor = torch.triu(mask_tensor, diagonal=1)
        self.register_buffer("mask", mask_tensor)

    def forward(self, x):
        hidden_states = x
        hidden_states_shape = hidden_states.shape
        assert len(hidden_states_shape) == 3

        batch_size, input_len, _ = hidden_states_shape
        mask = self.mask[:, :, :input_len, :input_len]

        xq, xk, xv = self.W_query(hidden_states), self.W_key(hidden_states), self.W_value(hidden_states)

        xq = xq.view(batch_size, -1, self.num_heads, self.head_dim)
        xk = xk.view(batch_size, -1, self.num_kv_heads, self.head_dim)
        xv = xv.view(batch_size, -1, self.num_kv_heads, self.head_dim)

        key = xk
        value = xv
        if self.num_kv_heads != self.num_heads:
            # [batch_size, max_seq_len, n_local_heads, head_dim]
            key = torch.repeat_interleave(key, self.num_queries_per_kv, dim=2)
            value = torch.repeat_interleave(value,
                                            self.num_queries_per_kv,
                                            dim=2)

        # [batch_size, n_local_heads, input_len, head_dim]
        q = xq.transpose(1, 2)
        # [batch_size, n_local_heads, max_seq_len, head_dim]
        k = key.transpose(1, 2)
        v = value.transpose(1, 2)

        # [batch_size, n_local_heads, input_len, max_seq_len]
        q.mul_(self.scaling)
        scores = torch.matmul(q, k.transpose(2, 3))

        scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(q)

        # [batch_size, n_local_heads, input_len, head_dim]
        output = torch.matmul(scores, v)

        # [batch_size, input_len, hidden_dim]
        output = (output.transpose(1, 2).contiguous().view(
            batch_size, input_len, -1))
        output = self.out_proj(output)
        return output
