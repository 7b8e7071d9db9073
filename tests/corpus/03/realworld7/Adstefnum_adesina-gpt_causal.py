# expect: mask_device
# also: dropout_missing
# bug-lines: 31, 41, 43
# source: Adstefnum/adesina-gpt @69cb0121790c277cacc57503f8bdaec26028e6a0, attention.py (SelfAttention.__init__, CausalAttention.forward)
# changes: the base class's constructor parameters renamed input_dim/output_dim -> d_in/d_out; CausalAttention (which
#          inherited SelfAttention's 3-argument constructor) given the contract's constructor
#          (d_in, d_out, context_length, dropout, qkv_bias=False) that forwards d_in, d_out, qkv_bias to the base;
#          the author's code uses neither context_length nor dropout, and that is kept
import torch

class SelfAttention(torch.nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        
    def forward(self, inputs):
        queries = self.W_query(inputs)
        keys = self.W_key(inputs)
        values = self.W_value(inputs)
        
        attention_scores = queries @ keys.transpose(-2,-1)
        attention_weights = torch.softmax(attention_scores / torch.sqrt(torch.tensor(keys.shape[-1])), dim=-1)
        context_vector = attention_weights @ values
        
        return context_vector

class CausalAttention(SelfAttention):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, qkv_bias)

    def forward(self, inputs):
        queries = self.W_query(inputs)
        keys = self.W_key(inputs)
        values = self.W_value(inputs)
        
        attention_scores = queries @ keys.transpose(-2,-1)

        context_length = attention_scores.shape[1]
        causal_mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        masked_attention_scores = attention_scores.masked_fill(causal_mask.bool(), -torch.inf)
        attention_weights = torch.softmax(masked_attention_scores / torch.sqrt(torch.tensor(keys.shape[-1])), dim=-1)
        context_vector = attention_weights @ values
        
        return context_vector 
