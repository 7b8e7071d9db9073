# expect: pass
# source: huggingface/transformers/src/transformers/models/llama/modeling_llama.py, repeat_kv + LlamaAttention.forward
#   (eager path), and the causal mask of LlamaModel._update_causal_mask (full of finfo.min, triu(diagonal=1))
#   (commit 0022728)
# license: Apache-2.0
# changes: LlamaAttention(config, layer_idx) -> GroupedQueryAttention(d_in, d_out, context_length, num_heads,
#   num_kv_groups, qkv_bias) (contract; hidden_size = d_in with head_dim = d_out // num_heads, num_key_value_heads =
#   num_kv_groups, attention_bias = qkv_bias, attention_dropout = 0.0, pretraining_tp = 1); q_proj/k_proj/v_proj/o_proj
#   -> W_query/W_key/W_value/out_proj (contract names; o_proj maps d_out -> d_out and keeps bias=attention_bias);
#   rotary embedding and the cache left out (the contract has no positions and no cache); the model-level additive
#   causal mask is built inside forward (the contract's module is causal on its own); returns only attn_output.
#   integrator: adapted to the contract's full text (info.toml), which the first adaptation missed: out_proj with bias (o_proj has bias=attention_bias in HF), and the num_heads % num_kv_groups check
import math

import torch
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """
    This is the equivalent of torch.repeat_interleave(x, dim=1, repeats=n_rep). The hidden states go from (batch,
    num_key_value_heads, seqlen, head_dim) to (batch, num_attention_heads, seqlen, head_dim)
    """
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class GroupedQueryAttention(nn.Module):
    """Multi-headed attention from 'Attention Is All You Need' paper"""

    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        self.attention_dropout = 0.0
        self.hidden_size = d_out
        self.num_heads = num_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_key_value_heads = num_kv_groups
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.is_causal = True

        if (self.head_dim * self.num_heads) != self.hidden_size:
            raise ValueError(
                f"hidden_size must be divisible by num_heads (got `hidden_size`: {self.hidden_size}"
                f" and `num_heads`: {self.num_heads})."
            )
        if self.num_heads % self.num_key_value_heads != 0:
            raise ValueError("num_heads must be divisible by num_kv_groups")

        self.W_query = nn.Linear(d_in, self.num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(self.hidden_size, self.hidden_size)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()

        query_states = self.W_query(hidden_states)
        key_states = self.W_key(hidden_states)
        value_states = self.W_value(hidden_states)

        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        # LlamaModel._update_causal_mask
        dtype, device = hidden_states.dtype, hidden_states.device
        min_dtype = torch.finfo(dtype).min
        causal_mask = torch.full((q_len, q_len), fill_value=min_dtype, dtype=dtype, device=device)
        causal_mask = torch.triu(causal_mask, diagonal=1)
        attention_mask = causal_mask[None, None, :, :]

        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)

        if attention_mask is not None:  # no matter the length, we just slice it
            causal_mask = attention_mask
            attn_weights = attn_weights + causal_mask

        # upcast attention to fp32
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_weights = nn.functional.dropout(attn_weights, p=self.attention_dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)

        attn_output = attn_output.transpose(1, 2).contiguous()

        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)

        attn_output = self.out_proj(attn_output)

        return attn_output
