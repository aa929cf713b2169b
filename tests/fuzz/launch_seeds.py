#!/usr/bin/env python3
"""launch_seeds: write the seed corpora of fabtop sweep's targets into corpus/launch_*:
rendezvous records (fuzz_launch_record: the layout of engine/launch/launch_record.h, sealed
with BLAKE2b-256, which is libsodium's crypto_generichash with no key), --groups files
(fuzz_launch_groups) and launcher environments (fuzz_launch_env). Run from tests/fuzz; the
files are committed, this script says how they were made."""
import hashlib, os, struct

SLOT, SUM = 4096, 32


def text(s, n):
    b = s.encode()
    assert len(b) < n
    return b + bytes(n - len(b))


def nic(model, fw, rdma, netdev, ll, mtu, ib_mtu, rate, addr):
    return (text(model, 64) + text(fw, 32) + text(rdma, 32) + text(netdev, 32) +
            struct.pack("<IIII", ll, mtu, ib_mtu, rate) + text(addr, 48))


def record(host, nics, nics_total=None, rail=0, local=(0, 1), ngpus=8, port=0,
           version="0.1.0", rank=0, size=4, layout=2, nccl_gpu="0000:18:00.0"):
    nics_total = len(nics) if nics_total is None else nics_total
    body = (text(host, 64) + struct.pack("<iiiIIIHH", local[0], local[1], rail, ngpus,
                                         nics_total, len(nics), port, 0) + text(nccl_gpu, 16) +
            b"".join(nics))
    head = (b"FTSWEEP\0" + struct.pack("<HHI", layout, 0, len(body)) + text(version, 32) +
            struct.pack("<II", rank, size) + bytes(8))
    slot = head + body
    slot += bytes(SLOT - SUM - len(slot))
    return slot + hashlib.blake2b(slot, digest_size=SUM).digest()


def put(target, name, data):
    os.makedirs(os.path.join("corpus", target), exist_ok=True)
    with open(os.path.join("corpus", target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# Mode byte (fuzz_launch_record.c): bit 0 reseal, bits 1-2 records compared - 1, bit 3 a
# small text buffer. A resealed seed is cut after its body: the target pads it with zeros.
IB, ETH = 1, 2
CX7 = "MT2910 Family [ConnectX-7]"
usual = [nic(CX7, "28.40.1000", "mlx5_%d" % i, "ib%d" % i, IB, 4092, 4096, 400000,
             "10.0.%d.1" % i) for i in range(2)]
odd = [nic(CX7, "28.39.2048", "mlx5_0", "eth0", ETH, 9000, 4096, 200000, "10.1.0.7"),
       nic("BCM57508 NetXtreme-E", "", "bnxt_re0", "eth1", ETH, 1500, 1024, 100000, "")]
eight = [nic(CX7, "28.40.1000", "mlx5_%d" % i, "ib%d" % i, IB, 4092, 4096, 400000,
             "10.0.%d.3" % i) for i in range(8)]
plain = record("rk-h1", usual, port=40123)
put("launch_record", "rec-2nics", b"\x06" + plain)
put("launch_record", "rec-0nics", b"\x02" + record("login-1", [], rail=-1, local=(-1, -1),
                                                   ngpus=0))
put("launch_record", "rec-8nics-of-12", b"\x0e" + record("rk-h3", eight, nics_total=12, rail=7,
                                                         local=(7, 8), rank=2))
put("launch_record", "rec-empty-strings",
    b"\x04" + record("h", [nic("", "", "", "", 0, 0, 0, 0, "")], version="", local=(-1, -1)))
put("launch_record", "rec-layout3", b"\x00" + record("rk-h2", usual, layout=3, version="0.9.0"))


def cut(slot):
    return slot[:SLOT - SUM].rstrip(b"\0")


put("launch_record", "reseal-2nics", b"\x07" + cut(plain))
put("launch_record", "reseal-unlike", b"\x07" + cut(record("rk-h4", odd, rail=1, ngpus=7,
                                                           local=(1, 2), rank=3)))
put("launch_record", "reseal-8nics", b"\x0b" + cut(record("rk-h5", eight, rail=3, local=(3, 8))))

# --groups files: tests/sweep_start (test_launch.c, sweep_start.sh), tests/rack
# (rack_sweep.sh), and hand-written ones.
put("launch_groups", "test-launch", "# rack 3\nleaf1 rk-h1 rk-h2  # two\n\nleaf2\trk-h3 rk-h4\r\n")
put("launch_groups", "sweep-start-not-in-job", "# leaves\nleaf1 rk-h1\nleaf2 rk-h9 rk-h10\n")
put("launch_groups", "sweep-start-no-host", "leaf1 rk-h1\nleaf2\n")
put("launch_groups", "sweep-start-twice", "leaf1 rk-h1\nleaf2 rk-h1\n")
put("launch_groups", "rack-sweep", "leaf1 rk-h1 rk-h2 rk-h3 rk-h4\nleaf2 rk-h5 rk-h6 rk-h7 rk-h8\n")
put("launch_groups", "comments",
    "# leaf switches of rack 3\n   # indented\nleaf1 rk-h1 rk-h2 # the first two\n"
    "#leaf9 rk-h9\nspine-a\trk-h3\t\trk-h4\nleaf2 rk-h5 rk-h6 rk-h7 rk-h8\n"
    "edge node-1 a\n# end")
put("launch_groups", "group-twice", "leaf1 rk-h1\nleaf1 rk-h2\n")
put("launch_groups", "non-ascii", "leaf1 rk-h1 n\xc3\xb6de-2\n")
put("launch_groups", "long-name", "leaf1 " + "h" * 63 + "\nleaf2 " + "h" * 64 + "\n")
put("launch_groups", "nul", b"leaf1 rk-h1\n\0leaf2 rk-h2\n")
put("launch_groups", "only-comments", "# nothing\n\n")

# Launcher environments: NAME=VALUE entries, one a line (or NUL-separated).
put("launch_env", "mpirun", "OMPI_COMM_WORLD_SIZE=16\nOMPI_COMM_WORLD_RANK=9\n"
    "OMPI_COMM_WORLD_LOCAL_RANK=1\nOMPI_COMM_WORLD_LOCAL_SIZE=8\nPMIX_RANK=9\n")
put("launch_env", "srun-pmix", b"SLURM_STEP_ID=0\0SLURM_PROCID=5\0SLURM_NTASKS=8\0"
    b"SLURM_LOCALID=3\0PMIX_RANK=5\0PMIX_NAMESPACE=slurm.pmix.7.0")
put("launch_env", "srun", "SLURM_JOB_ID=7\nSLURM_STEP_ID=0\nSLURM_PROCID=0\nSLURM_NTASKS=8\n"
    "SLURM_LOCALID=0\n")
put("launch_env", "prterun", "PMIX_RANK=2\nPMIX_NAMESPACE=prterun-x\n")
put("launch_env", "none", "HOME=/root\nSLURM_JOB_ID=7\n")
put("launch_env", "bad-size", "OMPI_COMM_WORLD_SIZE=0x10\n")
put("launch_env", "bad-rank", "OMPI_COMM_WORLD_SIZE=4\nOMPI_COMM_WORLD_RANK=4\n")
put("launch_env", "huge", "OMPI_COMM_WORLD_SIZE=99999999999\nSLURM_NTASKS=-1\n")
put("launch_env", "pmix-negative", "PMIX_RANK=-1\n")
# Regression (found by fuzz_launch_env): a local rank beyond the local size passed
# launch_env_read, and rank 0 then refused that rank's rendezvous record.
put("launch_env", "regress-local-rank", "OMPI_COMM_WORLD_SIZE=16\nOMPI_COMM_WORLD_RANK=9\n"
    "OMPI_COMM_WORLD_LOCAL_RANK=9\nOMPI_COMM_WORLD_LOCAL_SIZE=8\nPMIX_RANK=9\n")
