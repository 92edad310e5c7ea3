"""ready_order.predict against real DDP: one gloo rank on CPU, iteration 0, the prediction taken from the loss
before backward(), the witness read from `prev_iteration_grad_ready_order_indices` at the next forward."""

import os
import random
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
nn = torch.nn

from pathproof_torch import ready_order  # noqa: E402
from pathproof_torch.ready_order import CreationOrder, ddp_params, predict  # noqa: E402

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


@pytest.fixture(scope="module", autouse=True)
def gloo_one_rank():
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    d = tempfile.mkdtemp(prefix="ready-order-")
    dist.init_process_group("gloo", store=dist.FileStore(os.path.join(d, "store"), 1), rank=0, world_size=1)
    yield
    dist.destroy_process_group()
    torch.set_num_threads(threads)
    shutil.rmtree(d, ignore_errors=True)


def witness(ddp):
    s = ddp._get_ddp_logging_data().get("prev_iteration_grad_ready_order_indices", "")
    return [int(x) for x in s.split(",")] if s else []


def iteration0(model, inputs, loss_fn=lambda out: out.float().sum(), creation=True, **ddp_kwargs):
    """Wrap in DDP, predict from the loss of the first forward, run backward, log at the next forward.

    torch 2.x logs nothing for a static graph's first backward (reducer.cpp:670-673@v2.6.0 returns before
    grad_ready_order_indices_ is pushed), so there the predicted backward is the second one."""
    ddp = nn.parallel.DistributedDataParallel(model, **ddp_kwargs)
    params = ddp_params(model)
    warm = 1 if (TORCH2 and ddp_kwargs.get("static_graph")) else 0
    for _ in range(warm):
        loss_fn(ddp(*inputs)).backward()
    co = CreationOrder() if creation else None
    if co is not None:
        with co:
            loss = loss_fn(ddp(*inputs))
    else:
        loss = loss_fn(ddp(*inputs))
    pred = predict(loss, params, creation=co)
    loss.backward()
    ddp(*inputs)  # the next forward logs the previous iteration's order (logger.cpp:304-311@v1.13.1)
    return pred, witness(ddp), params, ddp


# --------------------------------------------------------------------------------------------------------------------
# Ordinary model shapes
# --------------------------------------------------------------------------------------------------------------------
class TransformerPos(nn.Module):
    """TransformerEncoder over a frozen embedding plus a learned position tensor registered on the parent."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(5, 8) * 0.1)
        self.emb = nn.Embedding(11, 8)
        self.emb.weight.requires_grad_(False)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)
        self.head = nn.Linear(8, 3)

    def forward(self, idx):
        x = self.emb(idx) + self.pos
        return self.head(self.enc(x.transpose(0, 1)))


class Recurrent(nn.Module):
    def __init__(self, cell, layers):
        super().__init__()
        self.rnn = cell(4, 6, layers)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.item = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
        self.score = nn.Bilinear(4, 4, 1)

    def forward(self, u, i):
        return self.score(self.user(u), self.item(i))


def conv_bn():
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3),
                         nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))


class TiedLM(nn.Module):
    """Input and output embeddings share one parameter (one AccumulateGrad with two inputs)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.mid = nn.Linear(6, 6)
        self.out = nn.Linear(6, 10)
        self.out.weight = self.emb.weight

    def forward(self, idx):
        return self.out(torch.tanh(self.mid(self.emb(idx))))


class UnusedBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)  # never used in forward: no gradient
        self.c = nn.Linear(4, 2)

    def forward(self, x):
        return self.c(torch.relu(self.a(x)))


class ResidualMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8)) for _ in range(3)])
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x)
        return self.out(x)


class AttentionBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(8, 8) for _ in range(4))
        self.ln = nn.LayerNorm(8)

    def forward(self, x):
        a = torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2) / 8 ** 0.5, -1)
        return self.ln(x + self.o(a @ self.v(x)))


class MHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.ff = nn.Linear(8, 2)

    def forward(self, x):
        return self.ff(self.attn(x, x, x)[0])


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.EmbeddingBag(20, 6, mode="sum")
        self.items = nn.EmbeddingBag(30, 6, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, u, uo, i, io):
        return self.mlp(torch.cat([self.users(u, uo), self.items(i, io)], 1))


class ScalarMix(nn.Module):
    """ELMo-style scalar mix: one scalar parameter per layer, concatenated; CatBackward pushes five AccumulateGrad
    tasks of equal priority at once, so the order they pop in is the libstdc++ heap's tie order."""

    def __init__(self, n=5):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6) for _ in range(n)])
        self.scalars = nn.ParameterList([nn.Parameter(torch.zeros(1)) for _ in range(n)])
        self.gamma = nn.Parameter(torch.ones(1))
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        hs = []
        for layer in self.layers:
            x = torch.tanh(layer(x))
            hs.append(x)
        w = torch.softmax(torch.cat(list(self.scalars)), 0)
        return self.out(self.gamma * sum(wi * h for wi, h in zip(w, hs)))


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, (g * x).sum(0)


class CustomFunction(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.ones(4))
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        return self.b(_Scale.apply(self.a(x), self.w))


class Checkpointed(nn.Module):
    def __init__(self, reentrant):
        super().__init__()
        self.reentrant = reentrant
        self.a = nn.Linear(4, 4)
        self.mid = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        return self.b(checkpoint(self.mid, self.a(x), use_reentrant=self.reentrant))


class InplaceView(nn.Module):
    """An in-place write into a view: autograd makes a CopySlices node that no dispatched op returns."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.b = nn.Linear(4, 6)
        self.c = nn.Linear(6, 2)

    def forward(self, x):
        h = self.a(x) * 1
        h[:, :3] = h[:, :3] * 2 + self.b(x)[:, :3]
        return self.c(torch.relu(h))


def _ints(*shape, high):
    return torch.randint(0, high, shape)


# name -> (model factory, inputs factory, ddp kwargs, expected unreached indices)
SHAPES = {
    "transformer-frozen-emb-pos": (TransformerPos, lambda: (_ints(2, 5, high=11),), {}, []),
    "transformer-static-graph": (TransformerPos, lambda: (_ints(2, 5, high=11),), {"static_graph": True}, []),
    "lstm-1-layer": (lambda: Recurrent(nn.LSTM, 1), lambda: (torch.randn(3, 2, 4),), {}, []),
    "lstm-2-layers": (lambda: Recurrent(nn.LSTM, 2), lambda: (torch.randn(3, 2, 4),), {}, []),
    "gru-2-layers": (lambda: Recurrent(nn.GRU, 2), lambda: (torch.randn(3, 2, 4),), {}, []),
    "two-tower": (TwoTower, lambda: (torch.randn(3, 4), torch.randn(3, 6)), {}, []),
    "conv-batchnorm": (conv_bn, lambda: (torch.randn(2, 3, 8, 8),), {}, []),
    "tied-embeddings": (TiedLM, lambda: (_ints(2, 3, high=10),), {}, []),
    "unused-branch-find-unused": (UnusedBranch, lambda: (torch.randn(3, 4),), {"find_unused_parameters": True},
                                  [2, 3]),
    "residual-mlp": (ResidualMLP, lambda: (torch.randn(4, 8),), {}, []),
    "attention-block": (AttentionBlock, lambda: (torch.randn(2, 5, 8),), {}, []),
    "multihead-attention": (MHA, lambda: (torch.randn(2, 5, 8),), {}, []),
    "embedding-bag-recommender": (
        Recommender,
        lambda: (_ints(6, high=20), torch.tensor([0, 3]), _ints(5, high=30), torch.tensor([0, 2])), {}, []),
    "scalar-mix": (ScalarMix, lambda: (torch.randn(3, 6),), {}, []),
    "custom-autograd-function": (CustomFunction, lambda: (torch.randn(3, 4),), {}, []),
    "checkpoint-non-reentrant": (lambda: Checkpointed(False), lambda: (torch.randn(3, 4),), {}, []),
    "inplace-into-view": (InplaceView, lambda: (torch.randn(3, 4),), {}, []),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_predicted_order_is_ddp_logged_order(name):
    make_model, make_inputs, kwargs, unreached = SHAPES[name]
    torch.manual_seed(0)
    model = make_model()
    pred, got, params, _ = iteration0(model, make_inputs(), **kwargs)
    assert got, "DDP logged no ready order"
    assert pred["order"] == got, (name, pred)
    assert pred["unreached"] == unreached
    assert sorted(got + unreached) == list(range(len(params)))
    assert pred["complete"], pred["notes"]
    assert pred["method"] == ("sequence_nr" if TORCH2 else "creation-order")


def test_most_shapes_are_not_reverse_parameter_order():
    """The reason this module exists: reverse parameter order (the old assumption) is wrong for ordinary models."""
    wrong = []
    for name in ["transformer-frozen-emb-pos", "lstm-1-layer", "lstm-2-layers", "gru-2-layers", "conv-batchnorm",
                 "residual-mlp", "attention-block", "scalar-mix", "custom-autograd-function"]:
        make_model, make_inputs, kwargs, _ = SHAPES[name]
        torch.manual_seed(0)
        pred, got, params, _ = iteration0(make_model(), make_inputs(), **kwargs)
        assert pred["order"] == got
        if got != list(reversed(range(len(params)))):
            wrong.append(name)
    assert len(wrong) >= 7, wrong


def test_heap_tie_order_matters(monkeypatch):
    """ScalarMix pushes five equal-priority AccumulateGrad tasks at once: a first-in-first-out tie-break predicts
    the wrong order, the libstdc++ heap replay the logged one."""

    class FifoTies:
        def __init__(self, comp):
            self.items, self.comp = [], comp

        def __len__(self):
            return len(self.items)

        def push(self, x):
            self.items.append(x)

        def pop(self):
            best = 0
            for j in range(1, len(self.items)):
                if self.comp(self.items[best], self.items[j]):  # strictly higher priority only: FIFO among equals
                    best = j
            return self.items.pop(best)

    make_model, make_inputs, kwargs, _ = SHAPES["scalar-mix"]
    torch.manual_seed(0)
    model = make_model()
    ddp = nn.parallel.DistributedDataParallel(model)
    x = make_inputs()
    with CreationOrder() as co:
        loss = ddp(*x).sum()
    params = ddp_params(model)
    exact = predict(loss, params, creation=co)
    monkeypatch.setattr(ready_order, "_StdPriorityQueue", FifoTies)
    fifo = predict(loss, params, creation=co)
    monkeypatch.undo()
    loss.backward()
    ddp(*x)
    got = witness(ddp)
    assert exact["order"] == got
    assert fifo["order"] != got


def test_heap_replay_matches_libstdcxx_priority_queue(tmp_path):
    """_StdPriorityQueue against the real std::priority_queue of this machine's libstdc++, on random push/pop
    sequences with many equal keys (the comparator sees only the key, like CompareNodeTaskTime)."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = tmp_path / "pq.cc"
    src.write_text(r"""
#include <cstdio>
#include <queue>
#include <vector>
struct T { long key; int id; };
struct C { bool operator()(const T& a, const T& b) const { return a.key < b.key; } };
int main() {
  std::priority_queue<T, std::vector<T>, C> q; char op; long k; int id = 0;
  while (std::scanf(" %c", &op) == 1) {
    if (op == 'u') { std::scanf("%ld", &k); q.push(T{k, id++}); }
    else { std::printf("%d\n", q.top().id); q.pop(); }
  }
}
""")
    exe = tmp_path / "pq"
    subprocess.run([cxx, "-O0", "-o", str(exe), str(src)], check=True)
    rng = random.Random(7)
    for trial in range(20):
        script, expect, live = [], [], 0
        q = ready_order._StdPriorityQueue(lambda a, b: a[0] < b[0])
        n = 0
        for _ in range(300):
            if live and rng.random() < 0.45:
                script.append("o")
                expect.append(q.pop()[1])
                live -= 1
            else:
                k = rng.choice([0, 1, 2, 3, 2 ** 62])  # few distinct keys: ties everywhere
                script.append(f"u {k}")
                q.push((k, n))
                n += 1
                live += 1
        out = subprocess.run([str(exe)], input="\n".join(script), capture_output=True, text=True, check=True).stdout
        assert [int(x) for x in out.split()] == expect, trial


def test_reentrant_checkpoint_is_reported_not_guessed():
    torch.manual_seed(0)
    pred, got, params, _ = iteration0(Checkpointed(True), (torch.randn(3, 4),))
    assert not pred["complete"]
    assert any("CheckpointFunctionBackward" in n for n in pred["notes"])
    # the parameters inside the segment get their gradients in the nested backward, which the graph does not show
    assert set(pred["unreached"]) == {2, 3, 4, 5}
    assert set(pred["unreached"]) <= set(got)


def test_without_creation_order_it_says_so():
    torch.manual_seed(0)
    pred, got, _, _ = iteration0(Recurrent(nn.LSTM, 2), (torch.randn(3, 2, 4),), creation=False)
    if TORCH2:
        assert pred["method"] == "sequence_nr" and pred["order"] == got
    else:
        assert pred["method"] == "graph-only"
        assert not pred["complete"]
        assert sorted(pred["order"]) == sorted(got)


def test_unnumbered_node_is_noted():
    torch.manual_seed(0)
    pred, got, _, _ = iteration0(InplaceView(), (torch.randn(3, 4),))
    assert pred["order"] == got
    if not TORCH2:
        assert any("CopySlices" in n for n in pred["notes"])


def test_several_roots():
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(4, 4)
            self.h1 = nn.Linear(4, 1)
            self.h2 = nn.Linear(4, 1)

        def forward(self, x):
            h = torch.relu(self.trunk(x))
            return self.h1(h), self.h2(h)

    torch.manual_seed(0)
    model = TwoHeads()
    ddp = nn.parallel.DistributedDataParallel(model)
    x = torch.randn(3, 4)
    with CreationOrder() as co:
        a, b = ddp(x)
        roots = [a.sum(), (b * b).sum()]
    pred = predict(roots, ddp_params(model), creation=co)
    torch.autograd.backward(roots)
    ddp(x)
    assert pred["order"] == witness(ddp)
    assert pred["complete"]


def test_ddp_params_is_ddps_own_list():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.frozen = nn.Linear(3, 3)
            self.frozen.requires_grad_(False)
            self.shared = nn.Linear(3, 3)
            self.again = self.shared  # the same module twice
            self.tied = nn.Linear(3, 3)
            self.tied.weight = self.shared.weight  # the same parameter in two modules
            self.ignored = nn.Linear(3, 3)

        def forward(self, x):
            return self.tied(self.again(self.frozen(x))) + self.ignored(x)

    m = M()
    m._ddp_params_and_buffers_to_ignore = ["ignored.weight"]
    ddp = nn.parallel.DistributedDataParallel(m)
    theirs, _ = ddp._build_params_for_reducer()
    mine = ddp_params(m)
    assert [id(p) for p in mine] == [id(p) for p in theirs]
    assert len(mine) == 4  # shared.weight, shared.bias, tied.bias, ignored.bias


@pytest.mark.skipif(not TORCH2, reason="needs Node._sequence_nr() (torch >= 2.0) as the reference")
def test_creation_order_agrees_with_sequence_nr(monkeypatch):
    """The mechanism torch 1.13 depends on, checked where the engine's own numbers can be read: for every shape,
    CreationOrder's numbering puts the graph's nodes in _sequence_nr() order, and predicting from it alone gives the
    logged order."""
    for name in sorted(SHAPES):
        make_model, make_inputs, kwargs, _ = SHAPES[name]
        torch.manual_seed(0)
        model = make_model()
        x = make_inputs()
        ddp = nn.parallel.DistributedDataParallel(model, **kwargs)
        if kwargs.get("static_graph"):
            ddp(*x).float().sum().backward()
        with CreationOrder(always=True) as co:
            loss = ddp(*x).float().sum()
        _, nodes, _ = ready_order._graph(loss.grad_fn)
        numbered = sorted((lab, n._sequence_nr()) for n, lab in co.labels.items() if n in nodes)
        assert numbered, name
        assert [s for _, s in numbered] == sorted(s for _, s in numbered), name
        monkeypatch.setattr(ready_order, "_native_sequence_nr", lambda node: None)
        pred = predict(loss, ddp_params(model), creation=co)
        monkeypatch.undo()
        loss.backward()
        ddp(*x)
        assert pred["method"] == "creation-order", name
        assert pred["order"] == witness(ddp), name


def test_unnumbered_node_that_decides_a_comparison_is_flagged(monkeypatch):
    """A part of the forward run before CreationOrder was entered leaves nodes unnumbered; when one of them meets,
    in the ready queue, a node that may have been created before or after it, the prediction says it guessed."""

    class Split(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)
            self.c = nn.Linear(4, 4)

    torch.manual_seed(0)
    m = Split()
    x = torch.randn(3, 4)
    h = torch.tanh(m.a(x))  # outside: AddmmBackward and TanhBackward get no number
    with CreationOrder(always=True) as co:
        hc = m.c(x)
        hb = m.b(h)
        loss = hb.sum() + hc.sum()
    monkeypatch.setattr(ready_order, "_native_sequence_nr", lambda node: None)  # the 1.13 path, on any torch
    pred = predict(loss, ddp_params(m), creation=co)
    assert pred["method"] == "creation-order"
    assert not pred["complete"]
    assert any("unnumbered" in n for n in pred["notes"]), pred["notes"]
    assert any("without a creation number" in n for n in pred["notes"])
