# expect: pass
# source: graykode/gpt-2-Pytorch/GPT2/model.py, class Attention (https://github.com/graykode/gpt-2-Pytorch/blob/401078fde5e85475590dc04c9ed11b79332b8717/GPT2/model.py)
# license: MIT (Copyright (c) 2019 OpenAI, HugginFace Inc. team. and TaeHwan Jung)
# changes: class renamed KVCacheAttention; constructor (nx, n_ctx, config, scale=False) -> the contract's
#          (d_in, d_out, context_length, num_heads, qkv_bias=False) with n_state = d_out, n_ctx = context_length,
#          config.n_head = num_heads and scale=True (what GPT2Model passes to every Block). The fused Conv1D c_attn
#          becomes the contract's three nn.Linear W_query/W_key/W_value (bias=qkv_bias) and Conv1D c_proj becomes
#          nn.Linear out_proj (Conv1D stores its weight transposed; the grader loads nn.Linear weights by name).
#          forward(x, layer_past=None) -> forward(x, k_cache=None, v_cache=None): layer_past is built from the two
#          caches in the author's own stacked format (keys stored transposed), and the returned `present` is
#          unstacked into (k_cache, v_cache) of shape (B, nh, P+T, hs). Split/merge, _attn and the mask slice
#          bias[:, :, ns-nd:ns, :ns] are the author's.
import torch
import math
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super(KVCacheAttention, self).__init__()
        n_state = d_out  # in Attention: n_state=768 (nx=n_embd)
        n_ctx = context_length
        # [switch nx => n_state from Block to Attention to keep identical to TF implem]
        assert n_state % num_heads == 0
        self.register_buffer("bias", torch.tril(torch.ones(n_ctx, n_ctx)).view(1, 1, n_ctx, n_ctx))
        self.n_head = num_heads
        self.split_size = n_state
        self.scale = True
        self.W_query = nn.Linear(d_in, n_state, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, n_state, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, n_state, bias=qkv_bias)
        self.out_proj = nn.Linear(n_state, n_state)

    def _attn(self, q, k, v):
        w = torch.matmul(q, k)
        if self.scale:
            w = w / math.sqrt(v.size(-1))
        nd, ns = w.size(-2), w.size(-1)
        b = self.bias[:, :, ns-nd:ns, :ns]
        w = w * b - 1e10 * (1 - b)
        w = nn.Softmax(dim=-1)(w)
        return torch.matmul(w, v)

    def merge_heads(self, x):
        x = x.permute(0, 2, 1, 3).contiguous()
        new_x_shape = x.size()[:-2] + (x.size(-2) * x.size(-1),)
        return x.view(*new_x_shape)  # in Tensorflow implem: fct merge_states

    def split_heads(self, x, k=False):
        new_x_shape = x.size()[:-1] + (self.n_head, x.size(-1) // self.n_head)
        x = x.view(*new_x_shape)  # in Tensorflow implem: fct split_states
        if k:
            return x.permute(0, 2, 3, 1)  # (batch, head, head_features, seq_length)
        else:
            return x.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def forward(self, x, k_cache=None, v_cache=None):
        layer_past = None
        if k_cache is not None:
            layer_past = torch.stack((k_cache, v_cache))
        query, key, value = self.W_query(x), self.W_key(x), self.W_value(x)
        query = self.split_heads(query)
        key = self.split_heads(key, k=True)
        value = self.split_heads(value)
        if layer_past is not None:
            past_key, past_value = layer_past[0].transpose(-2, -1), layer_past[1]  # transpose back cf below
            key = torch.cat((past_key, key), dim=-1)
            value = torch.cat((past_value, value), dim=-2)
        present = torch.stack((key.transpose(-2, -1), value))  # transpose to have same shapes for stacking
        a = self._attn(query, key, value)
        a = self.merge_heads(a)
        a = self.out_proj(a)
        return a, present[0], present[1]
