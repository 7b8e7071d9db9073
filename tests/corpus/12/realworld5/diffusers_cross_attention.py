# expect: heads_split_wrong
# also: padding_mask_ignored
# bug-lines: 51, 63, 65
# source: huggingface/diffusers @006ccb8a8c6bc7eb7e512392e692a29d9b1553cd, src/diffusers/models/attention.py (CrossAttention: __init__, forward, _attention)
# changes: contract signature and names (query_dim = d_in, context_dim = d_context, heads = num_heads, dim_head = d_out // num_heads so inner_dim = d_out, with a ValueError when d_out % num_heads != 0 since dim_head * heads is d_out by construction here; to_q/to_k/to_v renamed W_query/W_key/W_value with bias=qkv_bias; to_out = Sequential(Linear(inner_dim, query_dim), Dropout) becomes out_proj = Linear(d_out, d_out)); forward(x, context, context_padding_mask) for forward(hidden_states, context, mask); the _slice_size/_sliced_attention path removed (no contract input), comments dropped; baddbmm with beta=0 on an empty tensor kept
import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        query_dim, context_dim, heads, dim_head = d_in, d_context, num_heads, d_out // num_heads
        inner_dim = dim_head * heads
        context_dim = context_dim if context_dim is not None else query_dim

        self.scale = dim_head**-0.5
        self.heads = heads

        self.W_query = nn.Linear(query_dim, inner_dim, bias=qkv_bias)
        self.W_key = nn.Linear(context_dim, inner_dim, bias=qkv_bias)
        self.W_value = nn.Linear(context_dim, inner_dim, bias=qkv_bias)

        self.out_proj = nn.Linear(inner_dim, d_out)

    def reshape_heads_to_batch_dim(self, tensor):
        batch_size, seq_len, dim = tensor.shape
        head_size = self.heads
        tensor = tensor.reshape(batch_size, seq_len, head_size, dim // head_size)
        tensor = tensor.permute(0, 2, 1, 3).reshape(batch_size * head_size, seq_len, dim // head_size)
        return tensor

    def reshape_batch_dim_to_heads(self, tensor):
        batch_size, seq_len, dim = tensor.shape
        head_size = self.heads
        tensor = tensor.reshape(batch_size // head_size, head_size, seq_len, dim)
        tensor = tensor.permute(0, 2, 1, 3).reshape(batch_size // head_size, seq_len, dim * head_size)
        return tensor

    def forward(self, x, context, context_padding_mask=None):
        hidden_states, mask = x, context_padding_mask
        batch_size, sequence_length, dim = hidden_states.shape

        query = self.W_query(hidden_states)
        context = context if context is not None else hidden_states
        key = self.W_key(context)
        value = self.W_value(context)

        hidden_states = self._attention(query, key, value)

        return self.out_proj(hidden_states)

    def _attention(self, query, key, value):
        attention_scores = torch.baddbmm(
            torch.empty(query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device),
            query,
            key.transpose(-1, -2),
            beta=0,
            alpha=self.scale,
        )
        attention_probs = attention_scores.softmax(dim=-1)
        hidden_states = torch.matmul(attention_probs, value)
        return hidden_states
