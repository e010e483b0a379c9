# fla beside gdn (session 36, docs/PERF.md): fla's chunk_gated_delta_rule and fused_recurrent_gated_delta_rule
# on fla's own sources, which are not in this repository: they go in the git-ignored .fla/fla (FLA_ROOT), carried
# to the device, never committed. The fla packages' __init__ files are skipped (stub modules), so that only the ops
# and their helpers load (no transformers).
# The case: the Qwen3.6 layer (Hk=16, Hv=32, D=128), bf16 q/k/v, f32 gates and state [N, Hv, Dv, Dk] (state_v_first),
# the L2 norm in the kernel. Timed as gdn bench times: CUDA graph replay, median per call; a graph holds one call
# per state pool, with as many pools as 256 MiB of states hold (at most 128) for T <= 64, one otherwise.
# Session 37: each case timed both ways gdn bench can time it, alternating: "b2b" (its default since session 37:
# replays queued back to back, each timed between the events around it) and "idle" (--idle-replays, session 36's
# way: the stream synchronized before each replay, so the host's launch latency is in the time); and "b2b8": back to
# back with at least 8 calls per graph (call i on pool i mod pools), gdn bench's default graph since session 37.
import os, sys, types, statistics, time
root = os.environ.get('FLA_ROOT', '.fla')  # fla's sources (git-ignored, never committed): .fla/fla
for name in ['fla', 'fla.ops', 'fla.modules', 'fla.layers', 'fla.models']:
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(root, *name.split('.'))]
    m.__version__ = '0.0'
    sys.modules[name] = m
import torch
import torch.nn.functional as F
from fla.ops.gated_delta_rule.chunk import chunk_gated_delta_rule
from fla.ops.gated_delta_rule.fused_recurrent import fused_recurrent_gated_delta_rule

Hk, Hv, D = 16, 32, 128
dev = 'cuda'

def inputs(B, T, seed=0):
    g = torch.Generator(device=dev).manual_seed(seed)
    q = torch.randn(B, T, Hk, D, device=dev, generator=g).bfloat16()
    k = torch.randn(B, T, Hk, D, device=dev, generator=g).bfloat16()
    v = torch.randn(B, T, Hv, D, device=dev, generator=g).bfloat16()
    gl = F.logsigmoid(torch.randn(B, T, Hv, device=dev, generator=g) + 4.0)
    beta = torch.sigmoid(torch.randn(B, T, Hv, device=dev, generator=g))
    return q, k, v, gl, beta

def graph_of(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        fn()
    for _ in range(20):
        gr.replay()
    torch.cuda.synchronize()
    return gr

def idle_times(gr, reps):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        a.record(); gr.replay(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1000.0)
    return ts

def b2b_times(gr, reps):
    # one warm replay in the queue, then replay r between events r and r + 1
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    gr.replay()
    ev[0].record()
    for r in range(reps):
        gr.replay(); ev[r + 1].record()
    torch.cuda.synchronize()
    return [ev[r].elapsed_time(ev[r + 1]) * 1000.0 for r in range(reps)]

def timed(fn1, n1, fn8, n8, reps):
    g1, g8 = graph_of(fn1), graph_of(fn8)
    res = {'idle': [], 'b2b': [], 'b2b8': []}
    for rnd in range(2):
        res['idle'] += [t / n1 for t in idle_times(g1, reps)]
        res['b2b'] += [t / n1 for t in b2b_times(g1, reps)]
        res['b2b8'] += [t / n8 for t in b2b_times(g8, max(10, reps // 4))]
    return {k: statistics.median(v) for k, v in res.items()}

def case(kind, B, T):
    q, k, v, gl, beta = inputs(B, T)
    sb = B * Hv * D * D * 4
    P = max(1, min(128, (256 << 20) // sb)) if T <= 64 else 1
    h0 = [torch.randn(B, Hv, D, D, device=dev) * 0.1 for _ in range(P)]
    f = chunk_gated_delta_rule if kind == 'chunk' else fused_recurrent_gated_delta_rule
    def one(i):
        return f(q, k, v, g=gl, beta=beta, scale=D ** -0.5, initial_state=h0[i], output_final_state=True,
                 use_qk_l2norm_in_kernel=True, state_v_first=True)
    n8 = max(P, 8)
    def fn1():
        for i in range(P):
            one(i)
    def fn8():
        for i in range(n8):
            one(i % P)
    reps = 30 if T >= 4096 else 100
    return timed(fn1, P, fn8, n8, reps), P

cases = [('rec', 1, 1), ('rec', 64, 1), ('rec', 256, 1), ('rec', 1, 4), ('rec', 64, 4),
         ('chunk', 1, 512), ('chunk', 1, 4096), ('chunk', 1, 32768), ('chunk', 8, 4096), ('chunk', 64, 4096)]
if len(sys.argv) > 1 and ':' in sys.argv[1]:  # kind:B:T,... (session 47: e.g. rec:64:8,rec:256:8)
    cases = [(w.split(':')[0], int(w.split(':')[1]), int(w.split(':')[2])) for w in sys.argv[1].split(',')]
elif len(sys.argv) > 1:
    cases = [c for c in cases if c[0] == sys.argv[1]]
print('torch', torch.__version__, 'device', torch.cuda.get_device_name(), flush=True)
for kind, B, T in cases:
    t0 = time.time()
    try:
        us, P = case(kind, B, T)
        print(f'fla {kind} B={B} T={T}: b2b {us["b2b"]:.2f} us, idle {us["idle"]:.2f} us, b2b8 {us["b2b8"]:.2f} us '
              f'(pools per graph {P}; '
              f'{time.time() - t0:.0f} s with tuning)', flush=True)
    except Exception as e:
        print(f'fla {kind} B={B} T={T}: failed: {type(e).__name__}: {str(e)[:300]}', flush=True)
