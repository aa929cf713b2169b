#!/bin/sh
# e2e_model: a model preset in the setup view, in tmux at 80x24: Llama-3.1-8B chosen after
# the mix presets, TP raised and the sizes following (KV per rank, all-reduce), TP 3 refused
# in the status line naming the option, the transport set to tcp, and S starting the
# model's mix on loopback until the live view shows its flows; q then quits cleanly.
. "$(dirname "$0")/e2e_lib.sh"

start -- --input synth.xml
wait_for "F2 Setup"
keys F2
wait_for "< api >"
press_until Right "< model Llama-3.1-8B >"
wait_for "Test setup: a model's serving traffic"
wait_for "KV per token 128 KiB, per rank 128 KiB (8 KV heads per rank)"
wait_for "All-reduce: none at TP 1"
wait_for "32 layers, 32/8 heads/KV"
pass "model preset: Llama-3.1-8B and its sizes at TP 1"

keys j Right
wait_for "KV per token 128 KiB, per rank 64 KiB (4 KV heads per rank)"
wait_for "All-reduce 256 KiB per decode (64 a step)"
wait_for "\$ fabtop run --model Llama-3.1-8B --tp 2 --transport"
pass "TP 2: the sizes follow"

keys Right
wait_for "refused: --tp 3 does not divide Llama-3.1-8B's 32 attention heads"
keys Left
wait_for "per rank 64 KiB (4 KV heads per rank)"
pass "TP 3 refused, named"

# The transport is the 11th field; tcp over loopback.
keys G k
press_until Right "< tcp >"
wait_for "\$ fabtop run --model Llama-3.1-8B --tp 2 --transport tcp"
wait_for "ring 2 x 128 KiB"
pass "transport tcp: the ring emulated"

keys S
wait_for "running model-Llama-3.1-8B" 10
wait_for "tp-decode" 20
screen | grep -qF "Test setup" && fail "still in the setup view"
pass "the model's mix runs in the live view"

quit_and_check
echo "PASS: e2e_model"
