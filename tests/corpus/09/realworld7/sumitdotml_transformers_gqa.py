# expect: mask_missing
# bug-lines: 86
# source: sumitdotml/transformers @f8464dbac2a81ea33eaefb42681dfaa90f023e15, llama/llama2/model.py (GroupedMultiQueryAttention)
# changes: renamed GroupedQueryAttention(d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False) (contract);
#          W_q/W_k/W_v/W_o renamed W_query/W_key/W_value/out_proj, input width d_in, bias=qkv_bias, out_proj with bias
#          (contract); RoPE (self.rope, offset) and the past_key_value cache and attention_mask arguments are removed
#          because forward(x) takes x only; the (output, current_key_value) return becomes output.
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        num_heads: int,
        num_kv_groups: int,
        qkv_bias: bool = False,
    ) -> None:
        super().__init__()
        assert (
            d_out % num_heads == 0
        ), "hidden_dim (or d_model) should be divisible by num_heads"

        assert (
            num_heads % num_kv_groups == 0
        ), "num_heads should be divisible by num_kv_heads since this is a GQA"

        self.hidden_dim = d_out
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_groups
        self.head_dim = d_out // num_heads
        self.num_query_groups = num_heads // num_kv_groups

        self.W_query = nn.Linear(
            in_features=d_in, out_features=d_out, bias=qkv_bias
        )
        self.W_key = nn.Linear(
            in_features=d_in,
            out_features=num_kv_groups * self.head_dim,
            bias=qkv_bias,
        )
        self.W_value = nn.Linear(
            in_features=d_in,
            out_features=num_kv_groups * self.head_dim,
            bias=qkv_bias,
        )
        self.out_proj = nn.Linear(
            in_features=d_out, out_features=d_out
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, _ = x.shape  # [batch, seq_len_curr, hidden_dim]
        q = self.W_query(x)  # [batch, seq_len_curr, hidden_dim]
        k = self.W_key(x)  # [batch, seq_len_curr, num_kv_heads * head_dim]
        v = self.W_value(x)  # [batch, seq_len_curr, num_kv_heads * head_dim]

        # [batch, seq_len_curr, hidden_dim] -> [batch, seq_len_curr, num_heads, head_dim] -> [batch, num_heads, seq_len_curr, head_dim]
        q = q.view(batch, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

        # [batch, seq_len_curr, num_kv_heads * head_dim] -> [batch, seq_len_curr, num_kv_heads, head_dim] ->
        # -> [batch, num_kv_heads, seq_len_curr, head_dim]
        k = k.view(batch, seq_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, seq_len, self.num_kv_heads, self.head_dim).transpose(1, 2)

        # since the num_heads in q is not the same as the num_kv_heads in k and v, I need to match them
        # for instance, if num_heads = 8 and num_kv_heads = 4, I need to make num_kv_heads = 8 with the help
        # of torch's interpolation.
        k_repeated = k.repeat_interleave(
            self.num_query_groups, dim=1
        )  # [batch, num_kv_heads, seq_len_total, head_dim] -> [batch, num_heads, seq_len_total, head_dim]
        v_repeated = v.repeat_interleave(
            self.num_query_groups, dim=1
        )  # [batch, num_kv_heads, seq_len_total, head_dim] -> [batch, num_heads, seq_len_total, head_dim]

        # attn_scores shape: [batch, num_heads, seq_len_curr, seq_len_total]
        attn_scores = (q @ torch.transpose(k_repeated, -1, -2)) / math.sqrt(
            self.head_dim
        )

        # attn_weight shape: [batch, num_heads, seq_len_curr, seq_len_total]
        attn_weight = torch.softmax(attn_scores, dim=-1)

        # output shape: [batch, num_heads, seq_len_curr, head_dim]
        output = attn_weight @ v_repeated

        # Input shape: [batch, num_heads, seq_len_curr, head_dim]
        # Output shape: [batch, seq_len_curr, num_heads, head_dim]
        output = output.transpose(1, 2).contiguous()

        # [batch, seq_len_curr, num_heads, head_dim] -> [batch, seq_len_curr, hidden_dim]
        output = output.view(batch, seq_len, self.hidden_dim)

        output = self.out_proj(output)
        return output
