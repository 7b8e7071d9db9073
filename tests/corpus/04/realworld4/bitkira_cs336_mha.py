# expect: runtime_error
# also: mask_device
# bug-lines: 25, 50
# source: bitkira/Stanford-CS336 @06f175ead0a33e4c3a5a3e1ff46bb1e6a9bb4a4b, assignment1-basics-main/cs336_basics/MHA.py
#   (get_device, MultiheadSelfAttention) + @9aa7c5c007d9ec2a9bfb973377bb27ee59b03dbd, .../ScaledDotProductAttention.py
#   (scaled_dot_product_attention) + @7ca9e3b23037baccb21e018138204bd5d28e305e, .../Softmax.py (softmax), the versions stored
# changes: MultiheadSelfAttention(d_model, num_heads, max_seq_len=None, theta=None, token_positions=None) ->
#   MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False) with d_model = d_out; the author's
#   bias-free cs336 `linear` layers Q/K/V/O -> the contract's nn.Linear W_query/W_key/W_value (bias=qkv_bias, inputs d_in)
#   and out_proj (with bias); the RoPE branch (theta/max_seq_len/token_positions: no contract input; None by default) removed;
#   the imported helpers are inlined (sys.path hack dropped); einops rearrange "(h dk)" split/merge written as
#   view + transpose / transpose + reshape (einops not allowed). context_length and dropout are accepted and unused, as in
#   the author's class (it has neither).
import torch
import torch.nn as nn


def softmax(x, i): 
    return torch.exp(x - torch.max(x, dim=i, keepdim=True)[0]) / torch.sum(torch.exp(x - torch.max(x, dim=i, keepdim=True)[0]), dim=1, keepdim=True)


def scaled_dot_product_attention(q, k, v, mask):
    k = k.transpose(-2, -1)
    out = torch.matmul(q, k) / torch.sqrt(torch.tensor(q.shape[-1], dtype=q.dtype))
    out[~mask] = float('-inf')
    return torch.matmul(softmax(out, i=-1), v)


def get_device():
    if torch.cuda.is_available():
        return torch.device('cuda')
    elif torch.backends.mps.is_available():
        return torch.device('mps')
    else:
        return torch.device('cpu')

class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        d_model = d_out
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.device = get_device()
        self.num_heads = num_heads
        self.d_model = d_model
        self.W_query = nn.Linear(d_in, d_model, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_model, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_model, bias=qkv_bias)
        self.out_proj = nn.Linear(d_model, d_model)
    def forward(self, x):
        mask = torch.tril(torch.ones(x.shape[1], x.shape[1], dtype=int,  device = self.device)).bool()
        b, T = x.shape[0], x.shape[1]
        Q = self.W_query(x).view(b, T, self.num_heads, self.d_model//self.num_heads).transpose(1, 2)
        K = self.W_key(x).view(b, T, self.num_heads, self.d_model//self.num_heads).transpose(1, 2)
        V = self.W_value(x).view(b, T, self.num_heads, self.d_model//self.num_heads).transpose(1, 2)

        attention_score = scaled_dot_product_attention(Q, K, V, mask=mask)
        attention_score = attention_score.transpose(1, 2).reshape(b, T, self.d_model)
        return self.out_proj(attention_score)
