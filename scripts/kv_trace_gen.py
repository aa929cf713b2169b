#!/usr/bin/env python3
"""kv_trace_gen: write a synthetic request trace in the Mooncake format (one JSON object a
line: timestamp in ms, input_length and output_length in tokens, hash_ids: one id per
512-token block of the input, equal ids meaning equal prefixes) for fabtop's kv flows
(params.arrival: {"process": "trace", "trace": FILE}).

Requests arrive as a Poisson process; each opens with one of a few shared prefixes (a system
prompt or a conversation so far: its blocks' ids are the group's) followed by blocks of its
own, so later requests of a group reuse the blocks earlier ones moved. Nothing here comes
from anyone's data: every number is drawn from the seed.

  scripts/kv_trace_gen.py --requests 40 --rate 20 --seed 1 > engine/mixes/traces/kv-small.jsonl
"""
import argparse
import json
import random
import sys

BLOCK = 512


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=40, help="requests (default 40)")
    ap.add_argument("--rate", type=float, default=20.0, help="mean arrivals per second (20)")
    ap.add_argument("--groups", type=int, default=4, help="shared prefixes (4)")
    ap.add_argument("--prefix-blocks", type=int, default=4,
                    help="512-token blocks of the longest shared prefix (4)")
    ap.add_argument("--own-tokens", type=int, nargs=2, default=[256, 3072],
                    metavar=("MIN", "MAX"), help="tokens of a request's own part (256 3072)")
    ap.add_argument("--output-tokens", type=int, nargs=2, default=[16, 512],
                    metavar=("MIN", "MAX"), help="output tokens (16 512)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.requests < 1 or a.rate <= 0 or a.groups < 1 or a.prefix_blocks < 0:
        ap.error("--requests and --groups must be at least 1, --rate above 0")
    rng = random.Random(a.seed)
    # Ids: group g's prefix blocks are g * 1000 + i; a request's own blocks count up from
    # 1,000,000 so they never collide with a prefix.
    prefix_len = [rng.randint(1, max(1, a.prefix_blocks)) if a.prefix_blocks else 0
                  for _ in range(a.groups)]
    own_id = 1000000
    t = 0.0
    for _ in range(a.requests):
        g = rng.randrange(a.groups)
        own = rng.randint(*a.own_tokens)
        shared = prefix_len[g] * BLOCK
        n_in = shared + own
        blocks = (n_in + BLOCK - 1) // BLOCK
        ids = [g * 1000 + i for i in range(prefix_len[g])]
        while len(ids) < blocks:
            ids.append(own_id)
            own_id += 1
        sys.stdout.write(json.dumps({"timestamp": int(round(t)), "input_length": n_in,
                                     "output_length": rng.randint(*a.output_tokens),
                                     "hash_ids": ids}) + "\n")
        t += rng.expovariate(a.rate) * 1000.0


if __name__ == "__main__":
    main()
