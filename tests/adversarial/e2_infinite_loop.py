# attack: an infinite Python loop inside the function -> fail (timeout)
def scaled_dot_product_attention(query, key, value, mask=None):
    n = 0
    while True:
        n += 1
