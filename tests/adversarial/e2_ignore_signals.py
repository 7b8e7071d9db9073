# attack: ignore SIGTERM, SIGINT, SIGALRM and SIGHUP, then hang -> fail (unsafe_code)
# runtime: fail (timeout)
import signal

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


def scaled_dot_product_attention(query, key, value, mask=None):
    while True:
        pass
