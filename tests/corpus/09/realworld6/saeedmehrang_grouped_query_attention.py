# expect: pass
# source: saeedmehrang/saeedmehrang.github.io @016713851715f01a52df6ce76b7e68db5c005ee5, content/blogs/grouped-query-attention/index.md (GroupedQueryAttention code block)
# changes: constructor and layer names from the contract (q_proj/k_proj/v_proj -> W_query/W_key/W_value with qkv_bias, d_model split into d_in and d_out, num_query_heads/num_kv_heads -> num_heads/num_kv_groups); the optional mask argument replaced by the causal keep-mask (tril, 1 = attend) a caller would pass, built on x's device; demo code removed
import torch
import torch.nn as nn
import math


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_model must be divisible by num_query_heads"
        assert num_heads % num_kv_groups == 0, "num_query_heads must be divisible by num_kv_heads"

        self.d_model = d_out
        self.num_query_heads = num_heads
        self.num_kv_heads = num_kv_groups
        self.num_queries_per_kv = num_heads // num_kv_groups
        self.head_dim = d_out // num_heads

        # Query projection: still projects to full d_model
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)

        # Key and Value projections: project to fewer dimensions
        # Only num_kv_heads worth of dimensions instead of num_query_heads
        self.kv_dim = num_kv_groups * self.head_dim
        self.W_key = nn.Linear(d_in, self.kv_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.kv_dim, bias=qkv_bias)

        # Output projection
        self.out_proj = nn.Linear(d_out, d_out)

        # Scaling factor
        self.scale = math.sqrt(self.head_dim)

    def forward(self, x):
        batch_size, seq_len, _ = x.shape
        mask = torch.tril(torch.ones(seq_len, seq_len, device=x.device))

        # Apply linear projections
        Q = self.W_query(x)  # (batch_size, seq_len, d_model)
        K = self.W_key(x)  # (batch_size, seq_len, kv_dim) <- Smaller!
        V = self.W_value(x)  # (batch_size, seq_len, kv_dim) <- Smaller!

        # Reshape queries for multiple heads
        Q = Q.view(batch_size, seq_len, self.num_query_heads, self.head_dim).transpose(1, 2)
        # Shape: (batch_size, num_query_heads, seq_len, head_dim)

        # Reshape keys and values for fewer heads
        K = K.view(batch_size, seq_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        V = V.view(batch_size, seq_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        # Shape: (batch_size, num_kv_heads, seq_len, head_dim)

        # Repeat K and V to match the number of query heads
        # Each KV head is shared by num_queries_per_kv query heads
        K = K.repeat_interleave(self.num_queries_per_kv, dim=1)
        V = V.repeat_interleave(self.num_queries_per_kv, dim=1)
        # Shape: (batch_size, num_query_heads, seq_len, head_dim)

        # Now the rest is identical to Multi-Head Attention
        scores = torch.matmul(Q, K.transpose(-2, -1)) / self.scale

        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))

        attn_weights = torch.softmax(scores, dim=-1)
        attn_output = torch.matmul(attn_weights, V)

        # Concatenate heads
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.view(batch_size, seq_len, self.d_model)

        # Apply output projection
        output = self.out_proj(attn_output)

        return output
