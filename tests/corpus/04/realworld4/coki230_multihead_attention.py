# expect: mask_inverted
# bug-lines: 25
# source: coki230/build_llm @052e09bb20a746fc5ddbcc6d815c89023ed7c164, MultiHeadAttention.py (MultiHeadAttention)
# changes: output layer last_Layer -> out_proj (contract name); imports of tiktoken and the author's gptDatasetV1 and the
#   FeedForward/GELU classes and commented-out driver lines after the class dropped (not attention, not importable here).
import torch



class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttention, self).__init__()
        assert  d_out % num_heads == 0, "Embedding size must be divisible by number of heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = torch.nn.Linear(d_out, d_out)
        self.dropout = torch.nn.Dropout(dropout)
        self.register_buffer('mask',
                             torch.tril(torch.ones(context_length, context_length), diagonal=1))


    def forward(self, inputs):
        b, num_tokens, d_in = inputs.shape
        query = self.W_query(inputs)
        key = self.W_key(inputs)
        value = self.W_value(inputs)

        key = key.view(b, num_tokens, self.num_heads, self.head_dim)
        value = value.view(b, num_tokens, self.num_heads, self.head_dim)
        query = query.view(b, num_tokens, self.num_heads, self.head_dim)

        key = key.transpose(1, 2)
        value = value.transpose(1, 2)
        query = query.transpose(1, 2)

        attn_scores = query @ key.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]

        attn_scores.masked_fill_(mask_bool, -torch.inf)


        attn_weights = torch.nn.functional.softmax(attn_scores / key.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)


        context_vec = (attn_weights @ value).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)

        output = self.out_proj(context_vec)
        return output
