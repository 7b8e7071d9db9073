# expect: runtime_error
# also: heads_not_divisible
# bug-lines: 26, 42, 62, 63
# source: xxw1995/my_llama @1b9cbd3049ff28eb9eed9cf3a652fd5ac1f1a50a, my_easy_llama.py (repeat_kv, _make_causal_mask, LlamaAttention)
# changes: constructor from the contract instead of LlamaConfig (hidden_size -> d_in for the projections' input and d_out for their output, num_attention_heads -> num_heads, num_key_value_heads -> num_kv_groups, attention_bias -> qkv_bias; out_proj keeps its bias as the contract asks), layer names q_proj/k_proj/v_proj/o_proj -> W_query/W_key/W_value/out_proj; forward (which the source nests inside __init__) written as the module's method; rotary embedding, position_ids, past_key_value/use_cache and the attention-weights output removed (the contract has none); the additive causal mask LlamaModel._prepare_decoder_attention_mask builds with _make_causal_mask (only when q_len > 1) is built at the entry
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

def _make_causal_mask(
    input_ids_shape: torch.Size, dtype: torch.dtype, device: torch.device, past_key_values_length: int = 0
):
   bsz, tgt_len = input_ids_shape

   mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
   mask_cond = torch.arange(mask.size(-1), device=device)
   mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
   mask = mask.to(dtype)

   if past_key_values_length > 0:
      mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype, device=device), mask], dim=-1)

   return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)

class GroupedQueryAttention(nn.Module):

   def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
      super().__init__()
      self.hidden_size = d_out
      self.num_heads = num_heads
      self.head_dim = d_out // self.num_heads
      self.num_key_value_heads = num_kv_groups
      self.num_key_value_groups = self.num_heads // self.num_key_value_heads

      self.W_query = nn.Linear(d_in, self.num_heads * self.head_dim, bias=qkv_bias)
      self.W_key = nn.Linear(d_in, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
      self.W_value = nn.Linear(d_in, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
      self.out_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=True)

   def forward(self, x):
      hidden_states = x
      bsz, q_len, _ = hidden_states.size()
      attention_mask = None
      if q_len > 1:
         attention_mask = _make_causal_mask((bsz, q_len), hidden_states.dtype, device=hidden_states.device)
      query_states = self.W_query(hidden_states)
      key_states = self.W_key(hidden_states)
      value_states = self.W_value(hidden_states)

      query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
      key_states = key_states.view(bsz, q_len, self.num_key_value_head, self.head_dim).transpose(1, 2)
      value_states = value_states.view(bsz, q_len, self.num_key_value_head, self.head_dim).transpose(1, 2)

      key_states = repeat_kv(key_states, self.num_key_value_groups)
      value_states = repeat_kv(value_states, self.num_key_value_groups)

      attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)

      if attention_mask is not None:
         attn_weights = attn_weights + attention_mask

      attn_weights = nn.functional.softmax(attn_weights, dim = -1, dtype = torch.float32).to(query_states.dtype)
      attn_output = torch.matmul(attn_weights, value_states)
      attn_output = attn_output.transpose(1, 2).contiguous()
      attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
      attn_output = self.out_proj(attn_output)

      return attn_output
