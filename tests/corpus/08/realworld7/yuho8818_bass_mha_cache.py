# expect: mask_missing
# bug-lines: 16, 43
# source: yuho8818/bass @9aacf776c7866445daccd8c452b1244bf49516bc, MHA/demo.py (MultiHeadAttention)
# changes: renamed KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias=False) (contract); q_linear/k_linear/
#          v_linear/o_linear renamed W_query/W_key/W_value/out_proj with d_in -> d_out and bias=qkv_bias (contract names);
#          forward(x, k_cache=None, v_cache=None) returns (y, k, v) instead of taking past_key_value/use_cache; the author's
#          optional causal_mask argument is not in the contract's signature, so it stays None as the author's default.
import torch
import torch.nn as nn
import torch.nn.functional as F

class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        causal_mask = None
        batch_size = x.size(0)
        query = self.W_query(x)
        key = self.W_key(x)
        value = self.W_value(x)

        # 多头拆分
        query = query.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)

        # 拼接缓存 这里的拼接逻辑其实就是复用kv-cache
        if k_cache is not None:
            past_key, past_value = k_cache, v_cache
            key = torch.cat([past_key, key], dim=2)
            value = torch.cat([past_value, value], dim=2)

        # 注意力打分
        attention_scores = torch.matmul(query, key.transpose(-1, -2)) / torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32))

        if causal_mask is not None:
            attention_scores += causal_mask * -1e9

        attention_probs = F.softmax(attention_scores, dim=-1)
        output = torch.matmul(attention_probs, value)

        # 合并多头
        output = output.transpose(1, 2).contiguous().view(batch_size, -1, self.num_heads * self.head_dim)
        output = self.out_proj(output)

        return output, key, value
