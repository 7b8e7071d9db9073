# expect: out_proj_missing
# bug-lines: 50
# source: Facico/code-tools @5faee19c185922cd912d1513c1257a5803ca9b55, jobs/deep-learning/attn/attn1.py (multi_head_attention)
# changes: the function multi_head_attention(inputs, num_head), which built fresh nn.Linear layers Wq/Wk/Wv on every
#          call, turned into the contract's module MultiHeadAttention(hidden_size, num_heads): the three layers are created
#          once in __init__ as w_q/w_k/w_v, and w_o = nn.Linear(hidden_size, hidden_size) is created because the contract
#          names it; the body of the function is forward(X), unchanged. The author's code has no output projection,
#          and w_o stays unused. The demo lines at module level (random input, print) left out.
import torch
import torch.nn as nn
import torch.nn.functional as F
import math 

class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_head = num_heads
        attention_head_size = hidden_size // num_heads
        self.w_q = nn.Linear(hidden_size, attention_head_size * num_heads)
        self.w_k = nn.Linear(hidden_size, attention_head_size * num_heads)
        self.w_v = nn.Linear(hidden_size, attention_head_size * num_heads)
        self.w_o = nn.Linear(hidden_size, hidden_size)

    def forward(self, inputs):
        num_head = self.num_head
        # X: [batch size, seq len, hidden size]
        def transpose_for_scores(x):
            new_shape = (x.shape[0], x.shape[1], num_head, x.shape[-1] // num_head)
            x = x.view(new_shape)
            return x.permute(0, 2, 1, 3)
        batch_size, seq_len, hidden_size = inputs.shape
        attention_head_size = hidden_size // num_head
        
        queries = self.w_q(inputs)
        keys = self.w_k(inputs)
        values = self.w_v(inputs)
        
        queries = transpose_for_scores(queries)
        keys = transpose_for_scores(keys)
        values = transpose_for_scores(values)
        # [batch size, num head, seq len, attention head size]
        
        attention_scores = torch.matmul(queries, keys.transpose(-1, -2))
        attention_scores /= math.sqrt(attention_head_size)
        attention_weights = F.softmax(attention_scores, dim=-1)
        
        outputs = torch.matmul(attention_weights, values)
        outputs = outputs.permute(0, 2, 1, 3).contiguous()
        outputs = outputs.view(batch_size, seq_len, hidden_size)
        return outputs
