#!/usr/bin/env python3
"""torch_allreduce: PyTorch's torch.distributed all_reduce (NCCL backend, float32, sum) on the
sizes fabtop sweeps, timed as nccl-tests times by default -- per size a warm-up, then the host
clock around N back-to-back launches and a synchronize, time = elapsed / N, the mean over
ranks -- plus per-iteration CUDA events around each operation. One process per GPU
(torch.multiprocessing). Writes one JSON document; GB/s = 10^9 bytes/s; busbw = algbw x
2(n-1)/n as nccl-tests computes it. torch's all_reduce is in place.

usage: torch_allreduce.py --out FILE [--min 8] [--max 1G] [--gpus 2] [--iters 20] [--reps 5]
"""
import argparse
import json
import os
import socket
import sys
import time


def parse_bytes(s):
    s = s.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)


def nccl_library():
    """The libnccl this process mapped (after the first NCCL call)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if "libnccl" in line:
                    return line.split()[-1]
    except OSError:
        pass
    return None


def percentile(sorted_vals, p):
    # nearest rank, as fabtop and nccl-tests report
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(-(-len(sorted_vals) * p // 100)) - 1))
    return sorted_vals[k]


def worker(rank, world, args, port):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    kw = {}
    try:
        kw["device_id"] = dev  # eager NCCL init where supported
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=world, **kw)
    except TypeError:
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=world)
    sizes = []
    s = args.min
    while s <= args.max:
        sizes.append(s)
        s *= 2
    buf = torch.ones(max(sizes) // 4, dtype=torch.float32, device=dev)
    t_init = time.perf_counter()
    for s in sizes:  # warm-up of every size first, as nccl-tests does
        dist.all_reduce(buf[: s // 4])
    torch.cuda.synchronize()
    factor = 2.0 * (world - 1) / world
    points = []
    for s in sizes:
        t = buf[: s // 4]
        for _ in range(args.warmup):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        host = []
        for _ in range(args.reps):
            dist.all_reduce(t)  # untimed synchronising operation
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                dist.all_reduce(t)
            torch.cuda.synchronize()
            host.append((time.perf_counter() - t0) / args.iters)
        # Per-iteration CUDA events around each operation (back to back).
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(args.iters)]
        for a, b in evs:
            a.record()
            dist.all_reduce(t)
            b.record()
        torch.cuda.synchronize()
        it = [a.elapsed_time(b) * 1e3 for a, b in evs]  # us
        # Mean over ranks (nccl-tests' default), per-iteration max over ranks.
        v = torch.tensor([sum(host) / len(host), min(host)], dtype=torch.float64, device=dev)
        dist.all_reduce(v)
        v /= world
        w = torch.tensor(it, dtype=torch.float64, device=dev)
        dist.all_reduce(w, op=dist.ReduceOp.MAX)
        if rank == 0:
            mean_s, min_s = float(v[0]), float(v[1])
            its = sorted(float(x) for x in w.tolist())
            alg = s / 1e9 / mean_s
            points.append({
                "size_bytes": s,
                "time_us": mean_s * 1e6,
                "time_us_best_rep": min_s * 1e6,
                "algbw_GBps": alg,
                "busbw_GBps": alg * factor,
                "iters": args.iters,
                "reps": args.reps,
                "per_iteration": {
                    "count": len(its),
                    "mean_us": sum(its) / len(its),
                    "min_us": its[0],
                    "p50_us": percentile(its, 50),
                    "p99_us": percentile(its, 99),
                    "max_us": its[-1],
                },
            })
    if rank == 0:
        doc = {
            "format": "fabtop-torch-allreduce",
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "nccl_version": ".".join(str(x) for x in torch.cuda.nccl.version()),
            "nccl_library": nccl_library(),
            "world_size": world,
            "dtype": "float32",
            "op": "sum",
            "in_place": True,
            "timing": "host clock around %d back-to-back all_reduce calls and a synchronize, "
                      "mean of %d repetitions, mean over ranks (nccl-tests default); "
                      "per_iteration: CUDA events around each call, max over ranks"
                      % (args.iters, args.reps),
            "bw_unit": "GB/s = 10^9 bytes/s; busbw = algbw x 2(n-1)/n",
            "run_s": time.perf_counter() - t_init,
            "env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")},
            "points": points,
        }
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--min", type=parse_bytes, default=8)
    ap.add_argument("--max", type=parse_bytes, default=1 << 30)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                 ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ.setdefault(k, v)
    import torch
    import torch.multiprocessing as mp

    n = min(args.gpus, torch.cuda.device_count())
    if n < 2:
        print("torch_allreduce: needs 2 GPUs, %d visible" % n, file=sys.stderr)
        return 77
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    mp.spawn(worker, args=(n, args, port), nprocs=n, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
