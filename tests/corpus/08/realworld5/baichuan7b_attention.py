# expect: pass
# source: baichuan-inc/Baichuan-7B @0ae400d69160aff8a1cadca97a8aad47b6a70ac6, models/modeling_baichuan.py (_make_causal_mask, Attention.__init__/_shape/forward, inference branch)
# changes: the fused W_pack split into the contract's W_query/W_key/W_value (bias=qkv_bias; its [q | k | v] rows), o_proj renamed out_proj with bias; the xformers training branch, RoPE, position_ids, output_attentions and use_cache removed (no contract input); hidden_size = d_out, inputs of width d_in; past_key_value = (k_cache, v_cache) in, the cache returned always; the decoder mask the model builds with _make_causal_mask(past_key_values_length=P) built inside forward
import math
from typing import Optional

import torch
from torch import nn


def _make_causal_mask(
        input_ids_shape: torch.Size, dtype: torch.dtype, device: torch.device, past_key_values_length: int = 0
):
    """
    Make causal mask used for bi-directional self-attention.
    """
    bsz, tgt_len = input_ids_shape
    mask = torch.full((tgt_len, tgt_len), torch.tensor(torch.finfo(dtype).min, device=device), device=device)
    mask_cond = torch.arange(mask.size(-1), device=device)
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)

    if past_key_values_length > 0:
        mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype, device=device), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.hidden_size = d_out
        self.num_heads = num_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.max_position_embeddings = context_length

        if (self.head_dim * self.num_heads) != self.hidden_size:
            raise ValueError(
                f"hidden_size must be divisible by num_heads (got `hidden_size`: {self.hidden_size}"
                f" and `num_heads`: {self.num_heads})."
            )
        self.W_query = nn.Linear(d_in, self.hidden_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.hidden_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.hidden_size, bias=qkv_bias)
        self.out_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size)

    def _shape(self, tensor: torch.Tensor, seq_len: int, bsz: int):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, x, k_cache=None, v_cache=None):
        bsz, q_len, _ = x.size()
        past_key_value = None if k_cache is None else (k_cache, v_cache)
        past_key_values_length = 0 if past_key_value is None else past_key_value[0].shape[-2]
        attention_mask: Optional[torch.Tensor] = _make_causal_mask(
            (bsz, q_len), x.dtype, x.device, past_key_values_length=past_key_values_length
        )

        query_states = self.W_query(x).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.W_key(x).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.W_value(x).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

        kv_seq_len = key_states.shape[-2]
        if past_key_value is not None:
            kv_seq_len += past_key_value[0].shape[-2]

        if past_key_value is not None:
            key_states = torch.cat([past_key_value[0], key_states], dim=2)
            value_states = torch.cat([past_key_value[1], value_states], dim=2)

        past_key_value = (key_states, value_states)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)

        if attn_weights.size() != (bsz, self.num_heads, q_len, kv_seq_len):
            raise ValueError(
                f"Attention weights should be of size {(bsz, self.num_heads, q_len, kv_seq_len)}, but is"
                f" {attn_weights.size()}"
            )

        if attention_mask is not None:
            if attention_mask.size() != (bsz, 1, q_len, kv_seq_len):
                raise ValueError(
                    f"Attention mask should be of size {(bsz, 1, q_len, kv_seq_len)}, but is {attention_mask.size()}"
                )
            attn_weights = attn_weights + attention_mask
            attn_weights = torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min))

        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states)

        if attn_output.size() != (bsz, self.num_heads, q_len, self.head_dim):
            raise ValueError(
                f"`attn_output` should be of size {(bsz, self.num_heads, q_len, self.head_dim)}, but is"
                f" {attn_output.size()}"
            )

        attn_output = attn_output.transpose(1, 2)
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        attn_output = self.out_proj(attn_output)

        return attn_output, past_key_value[0], past_key_value[1]
