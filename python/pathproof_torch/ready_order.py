"""Predict DDP's gradient-ready order from the autograd graph of the first forward, before backward runs.

DDP rebuilds its buckets after iteration 0 in the order in which the autograd engine ran each parameter's
AccumulateGrad node (reducer.cpp `autograd_hook` -> `push_rebuilt_params`; the same order is logged as
`prev_iteration_grad_ready_order_indices`). That order is a property of the engine's ready queue, so this module
replays the engine over the graph the forward built:

- dependencies are counted over `grad_fn.next_functions` from the roots (engine.cpp `compute_dependencies`);
- one ready queue, a libstdc++ `std::priority_queue` with the engine's comparator (`CompareNodeTaskTime`): the higher
  `sequence_nr` pops first, AccumulateGrad's is UINT64_MAX; ties are broken the way libstdc++'s heap breaks them,
  so its push_heap / pop_heap / __adjust_heap are replayed step by step;
- a node's next edges are visited in `next_functions` order, and a node is pushed when its dependency count reaches
  zero (engine.cpp `evaluate_function`);
- every AccumulateGrad popped is one parameter's gradient made ready (`node.variable`).

`sequence_nr` is the node's creation order in the forward. torch >= 2.0 exposes it (`Node._sequence_nr()`); torch 1.13
does not, so hold `CreationOrder()` around the first forward (and the loss) there: a `TorchDispatchMode` that numbers
the nodes as the autograd layer creates them.

Measured on torch 1.13.1 (Debian python3-torch, CPU, one gloo rank, tests/test_ready_order.py): 17 of 17 model shapes
exact -- TransformerEncoder over a frozen embedding with a learned position tensor on the parent (also with
static_graph=True), LSTM with 1 and 2 layers, GRU with 2 layers, a two-tower net, a conv net with BatchNorm, tied
input/output embeddings, a branch without gradient under find_unused_parameters=True, a residual MLP, a hand-written
attention block, nn.MultiheadAttention, an EmbeddingBag recommender, an ELMo-style scalar mix, a custom autograd
Function, non-reentrant checkpointing, an in-place write into a view -- and two roots passed to backward together.
10 of those 17 orders are not reverse parameter order, so that order cannot stand in for the engine's. The scalar
mix is exact only with the libstdc++ heap replay (a first-in-first-out tie-break misses it). Reentrant checkpointing
is not predicted, and says so (`complete` False). Without CreationOrder on 1.13 the graph-only guess (a depth-first
post-order) got 14 of the 17 and missed both LSTMs and the scalar mix: the creation order is needed.
On torch 2.6.0 (Debian trixie's python3-torch, run by hand in a chroot, not by the test command here) the same tests
pass: 17 of 17 exact from `_sequence_nr()`, and 17 of 17 from CreationOrder alone, whose numbering put every graph node
in `_sequence_nr()` order. CUDA, several ranks and other torch 2.x releases were not measured.
"""

UINT64_MAX = (1 << 64) - 1


def _torch():
    import torch  # lazily: the package is installed where torch may not be

    return torch


# --------------------------------------------------------------------------------------------------------------------
# libstdc++'s std::priority_queue, replayed exactly.
#
# The engine's ReadyQueue is std::priority_queue<NodeTask, std::vector<NodeTask>, CompareNodeTaskTime>
# (engine.h:115-116@v1.13.1; ReadyQueue::push engine.cpp:211-223@v1.13.1, :233-245@v2.6.0; ReadyQueue::pop
# engine.cpp:239-247@v1.13.1, :261-268@v2.6.0). Linux builds of torch use libstdc++, where
#   push = c.push_back(x); std::push_heap(c.begin(), c.end(), comp)      bits/stl_queue.h:738-742 (GCC 12)
#   pop  = std::pop_heap(c.begin(), c.end(), comp); c.pop_back()         bits/stl_queue.h:773-778 (GCC 12)
# (the engine moves top() out first, leaving a moved-from element at index 0 that pop_heap moves to the back
# without comparing it). The sift steps below are bits/stl_heap.h (GCC 12): __push_heap :131-147, push_heap
# :195-218, __adjust_heap :220-249, __pop_heap :251-267, pop_heap :314-335 (`if (last - first > 1)`); they are the
# same in GCC 14 (checked by the test against a compiled std::priority_queue). MSVC and libc++ heaps differ.
# comp(a, b) == True means "b comes out before a" (CompareNodeTaskTime, engine.h:93-108@v1.13.1, :90-105@v2.6.0):
# with no shutdown or dummy tasks and every task at reentrant depth 0 it is `a.sequence_nr < b.sequence_nr`.
# --------------------------------------------------------------------------------------------------------------------
class _StdPriorityQueue:
    def __init__(self, comp):
        self.c = []
        self.comp = comp

    def __len__(self):
        return len(self.c)

    def _push_heap(self, hole, top, value):
        c, comp = self.c, self.comp
        parent = (hole - 1) // 2
        while hole > top and comp(c[parent], value):
            c[hole] = c[parent]
            hole = parent
            parent = (hole - 1) // 2
        c[hole] = value

    def _adjust_heap(self, hole, length, value):
        c, comp = self.c, self.comp
        top = hole
        second = hole
        while second < (length - 1) // 2:
            second = 2 * (second + 1)
            if comp(c[second], c[second - 1]):
                second -= 1
            c[hole] = c[second]
            hole = second
        if (length & 1) == 0 and second == (length - 2) // 2:
            second = 2 * (second + 1)
            c[hole] = c[second - 1]
            hole = second - 1
        self._push_heap(hole, top, value)

    def push(self, item):
        self.c.append(item)
        self._push_heap(len(self.c) - 1, 0, item)

    def pop(self):
        c = self.c
        top = c[0]
        if len(c) > 1:
            last = len(c) - 1
            value = c[last]
            c[last] = c[0]
            self._adjust_heap(0, last, value)
        c.pop()
        return top


# Python's floor division differs from C++'s truncation only for negative operands: (hole - 1) // 2 with hole == 0
# gives -1 in Python and 0 in C++; the loop condition `hole > top` stops first in both, so they agree.


# --------------------------------------------------------------------------------------------------------------------
# Creation order on torch 1.13
# --------------------------------------------------------------------------------------------------------------------
def _native_sequence_nr(node):
    """Node._sequence_nr() where torch has it (>= 2.0), else None."""
    f = getattr(node, "_sequence_nr", None)
    return f() if f is not None else None


def _has_sequence_nr():
    torch = _torch()
    x = torch.zeros(1, requires_grad=True)
    return _native_sequence_nr((x * 1).grad_fn) is not None


class CreationOrder:
    """Numbers autograd nodes in the order the forward creates them; hold it during the first forward and the loss.

    torch 1.13's nodes carry no Python-visible sequence number; Node's constructor takes the next one from a
    thread-local counter (function.h:134-137@v1.13.1, `at::sequence_number::get_and_increment()`). The autograd layer
    creates an op's node *before* it redispatches below autograd (generated VariableType kernels:
    `grad_fn = std::shared_ptr<XBackward>(new ...)`, then `at::redispatch::...`), and attaches it to the outputs after
    that call returns (`set_history`). A
    `TorchDispatchMode` sits below autograd and so sees every op that reaches a kernel, one call per node-creating op,
    in creation order; the grad_fn of op k's outputs is read when op k+1 arrives (or when the context exits), after
    autograd has attached it. Composite ops (an LSTM, multi_head_attention_forward) decompose above autograd, so
    each of their pieces is numbered separately.

    Nodes that never appear as the grad_fn of a dispatched op's output (a custom Function returning its input, a
    CopySlices made by an in-place write into a view, anything created before the context) stay unnumbered;
    `predict` places each just after the latest numbered node it consumes (a node is always created after its
    next_functions) and reports any comparison whose outcome depended on that guess. One known inversion: an
    in-place op whose backward needs the original self (`mul_`) creates its node, then clones self through the full
    dispatcher, then redispatches, so the clone is numbered first; the clone is saved for backward, not an edge, so
    the graph's own nodes keep their order (checked against `_sequence_nr()` on torch 2.6 for every test shape).

    The numbering keeps the graph's node objects alive while the CreationOrder is: drop it after `predict`.

    On torch >= 2.0 (`Node._sequence_nr()` exists) it does nothing unless `always=True`.
    """

    def __init__(self, always=False):
        self.always = always
        self.labels = {}  # node -> creation index
        self.devices = set()  # devices of the outputs of node-creating ops
        self.ops = 0
        self._pending = []
        self._mode = None
        self.active = False

    def _flush(self):
        pending, self._pending = self._pending, []
        for tick, outs in pending:
            for t in outs:
                fn = t.grad_fn
                if fn is not None and fn not in self.labels:
                    self.labels[fn] = tick
                    self.devices.add(str(t.device))

    def __enter__(self):
        torch = _torch()
        if not self.always and _has_sequence_nr():
            return self
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_flatten

        owner = self

        class _Numbering(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                owner._flush()
                out = func(*args, **(kwargs or {}))
                flat, _ = tree_flatten(out)
                tensors = [t for t in flat if isinstance(t, torch.Tensor)]
                if tensors:
                    owner._pending.append((owner.ops, tensors))
                owner.ops += 1
                return out

        self._mode = _Numbering()
        self._mode.__enter__()
        self.active = True
        return self

    def __exit__(self, *exc):
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None
            self._flush()
        return False

    def label(self, node):
        return self.labels.get(node)

    @property
    def numbering(self):
        """True while the context is entered and numbering (between __enter__ and __exit__ on torch 1.13)."""
        return self._mode is not None


# --------------------------------------------------------------------------------------------------------------------
# DDP's parameter list
# --------------------------------------------------------------------------------------------------------------------
def ddp_params(module):
    """The parameters DDP reduces, in its order: DistributedDataParallel._build_params_for_reducer
    (torch/nn/parallel/distributed.py:805-831@v1.13.1, :1273-1301@v2.6.0): named_modules() order, each module's own
    named_parameters(recurse=False), requires_grad only, minus `module._ddp_params_and_buffers_to_ignore`
    (:617-620@v1.13.1, :690-693@v2.6.0), a shared parameter kept at its first occurrence. (2.x's
    `delay_all_reduce_named_params` are also removed by DDP; they are not known from the module alone.)"""
    ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()) or ())
    out, memo = [], set()
    for mname, m in module.named_modules():
        for pname, p in m.named_parameters(recurse=False):
            full = f"{mname}.{pname}"
            if p.requires_grad and full not in ignore and p not in memo:
                memo.add(p)
                out.append(p)
    return out


# --------------------------------------------------------------------------------------------------------------------
# The engine replay
# --------------------------------------------------------------------------------------------------------------------
class _GraphRoot:
    """engine.cpp Engine::execute (:1087-1090@v1.13.1, :1301-1304@v2.6.0): one root edge is run directly
    (`skip_dummy_node`); several get a GraphRoot whose next edges are the roots, in order. The root is the first and
    only task pushed (execute_with_graph_task, engine.cpp:1158@v1.13.1), at reentrant depth 0 for a backward() that
    is not itself inside a backward."""

    def __init__(self, edges):
        self.next_functions = tuple(edges)


def _is_accumulate_grad(node):
    return type(node).__name__ == "AccumulateGrad" or (
        hasattr(node, "variable") and "AccumulateGrad" in _name(node))


def _name(node):
    try:
        return node.name()
    except Exception:
        return type(node).__name__


def _root_edges(roots):
    torch = _torch()
    if isinstance(roots, torch.Tensor):
        roots = [roots]
    edges = []
    for t in roots:
        if not t.requires_grad:
            raise ValueError("a root does not require grad: backward() from it would fail")
        if t.grad_fn is not None:
            edges.append((t.grad_fn, t.output_nr if hasattr(t, "output_nr") else 0))
        else:  # a leaf: its edge is its gradient accumulator (autograd's gradient_edge)
            edges.append((_leaf_accumulator(t), 0))
    return edges


def _leaf_accumulator(t):
    # x.expand_as(x).grad_fn.next_functions[0][0] is the leaf's (cached) AccumulateGrad node.
    return t.expand_as(t).grad_fn.next_functions[0][0]


def _graph(root):
    """compute_dependencies (engine.cpp:1008-1044@v1.13.1, :1209-1245@v2.6.0): every valid next edge of every node
    reachable from the root adds one dependency to its target. Returns (dependencies, nodes, consumers)."""
    deps, seen, consumers = {}, {root}, {}
    stack = [root]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            consumers.setdefault(nxt, []).append(fn)
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps, seen, consumers


def _topo_children_first(root, nodes):
    """Nodes ordered so that every node comes after all its next_functions."""
    order, state = [], {}
    for start in [root]:
        stack = [(start, iter(start.next_functions))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt, _ in it:
                if nxt is None or nxt in state:
                    continue
                state[nxt] = 1
                stack.append((nxt, iter(nxt.next_functions)))
                advanced = True
                break
            if not advanced:
                stack.pop()
                order.append(node)
    return order


def reaches(roots, params):
    """True when a backward from `roots` reaches the gradient accumulator of any of `params`: a backward that reaches
    none of them (a GAN's discriminator step, while the generator's DDP is the one watched) fires none of the
    watched DDP's hooks, so its order says nothing about that DDP's buckets."""
    torch = _torch()
    if isinstance(roots, torch.Tensor):
        roots = [roots]
    wanted = {id(p) for p in params}
    stack, seen = [], set()
    for t in roots:
        if not isinstance(t, torch.Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) in wanted:
                return True
            continue
        stack.append(t.grad_fn)
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        if _is_accumulate_grad(fn) and id(getattr(fn, "variable", None)) in wanted:
            return True
        for nxt, _ in fn.next_functions:
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    return False


def predict(roots, params, creation=None):
    """Predict the order in which DDP's autograd hooks fire in the first backward from `roots`.

    roots: the loss (a tensor, before backward) or a sequence of tensors, as passed to torch.autograd.backward.
    params: the parameters in DDP's order (`ddp_params(module)`).
    creation: a `CreationOrder` held during the forward; needed on torch 1.13, ignored where `_sequence_nr()` exists.

    Returns {"order": [indices into params, in ready order], "unreached": [indices whose AccumulateGrad the graph
    does not reach: no gradient, no hook], "method": str, "notes": [str], "complete": bool}. `complete` is False when
    something the engine does cannot be known before backward (see notes); the order is then a best guess.
    """
    torch = _torch()
    notes = []
    complete = True
    index = {id(p): i for i, p in enumerate(params)}

    edges = _root_edges(roots)
    root = edges[0][0] if len(edges) == 1 else _GraphRoot(edges)
    deps, nodes, consumers = _graph(root)

    # ---- keys: the engine's sequence_nr, or creation labels ----
    native = {n: _native_sequence_nr(n) for n in nodes if not isinstance(n, _GraphRoot)}
    seq_native = any(v is not None for v in native.values())
    labels = {}
    if seq_native:
        method = "sequence_nr"
        for n, v in native.items():
            if v is not None and not _is_accumulate_grad(n):
                labels[n] = v
    elif creation is not None and creation.active:
        method = "creation-order"
        for n in nodes:
            if not isinstance(n, _GraphRoot) and not _is_accumulate_grad(n):
                lab = creation.label(n)
                if lab is not None:
                    labels[n] = lab
    topo = _topo_children_first(root, nodes)
    acc = {n for n in nodes if not isinstance(n, _GraphRoot) and _is_accumulate_grad(n)}
    if not seq_native and not (creation is not None and creation.active):
        # A guess, not the engine's input: a depth-first post-order over next_functions in argument order is one
        # creation order the graph allows (every node after its inputs, each input's subgraph before the next).
        method = "graph-only"
        complete = False
        notes.append("no creation order: this torch has no Node._sequence_nr() and no CreationOrder was held during "
                     "the forward; nodes are numbered by a depth-first post-order of the graph, a guess")
        for i, n in enumerate(topo):
            if not isinstance(n, _GraphRoot) and not _is_accumulate_grad(n):
                labels[n] = i

    # Unlabeled nodes: placed just after the latest labeled node among their (transitive) next_functions;
    # (lo, hi) is the interval their true creation index lies in, for the ambiguity check.
    key, lo = {}, {}
    unlabeled = []
    for n in topo:
        if isinstance(n, _GraphRoot):
            continue
        if n in acc:
            key[n] = (UINT64_MAX, 0)
            lo[n] = -1
            continue
        if n in labels:
            key[n] = (labels[n], 0)
            lo[n] = labels[n]
            continue
        base, depth = -1, 0
        for c, _ in n.next_functions:
            if c is None or c in acc:
                continue
            kc = key[c]
            if (kc[0], kc[1] + 1) > (base, depth):
                base, depth = kc[0], kc[1] + 1
        key[n] = (base, depth if depth else 1)
        lo[n] = base
        unlabeled.append(n)
    hi = {}
    for n in reversed(topo):
        if isinstance(n, _GraphRoot) or n in acc:
            continue
        h = float("inf")
        for c in consumers.get(n, ()):
            if isinstance(c, _GraphRoot):
                continue
            h = min(h, labels[c] if c in labels else hi.get(c, float("inf")))
        hi[n] = h
    unl = set(unlabeled)
    if unlabeled and method != "graph-only":
        names = sorted({_name(n) for n in unlabeled})
        notes.append(f"{len(unlabeled)} node(s) without a creation number, placed after their inputs: "
                     + ", ".join(names[:8]) + (" ..." if len(names) > 8 else ""))

    ambiguous = []

    # CompareNodeTaskTime (engine.h:93-108@v1.13.1, :90-105@v2.6.0) with every task at reentrant depth 0 (a
    # backward() not run inside another backward: engine.cpp:1078-1084@v1.13.1) and no shutdown or dummy tasks:
    # t1.fn_->sequence_nr() < t2.fn_->sequence_nr(). AccumulateGrad's is UINT64_MAX (accumulate_grad.cpp:18-21
    # @v1.13.1, :17-20@v2.6.0), so those nodes tie with each other and beat every other node.
    def comp(t1, t2):
        if t1 is root:
            return False
        if t2 is root:
            return True
        k1, k2 = key[t1], key[t2]
        if method != "graph-only" and (t1 in unl or t2 in unl):
            _check_ambiguous(t1, t2)
        return k1 < k2

    def _check_ambiguous(a, b):
        for u, m in ((a, b), (b, a)):
            if u in unl and m not in unl and m not in acc:
                if lo[u] < labels[m] < hi[u]:
                    ambiguous.append((u, m))
                    return
        if a in unl and b in unl and a is not b:
            if max(lo[a], lo[b]) < min(hi[a], hi[b]) and lo[a] != lo[b]:
                ambiguous.append((a, b))

    # ---- reentrant and device checks ----
    # CheckpointFunction.backward recomputes its segment and calls torch.autograd.backward on it
    # (torch/utils/checkpoint.py:111-157@v1.13.1, :321@v2.6.0): a nested graph task at depth + 1 that shares this
    # thread's ready queue (engine.cpp:1171-1205@v1.13.1), over nodes that do not exist before backward.
    for n in nodes:
        nm = _name(n)
        if "CheckpointFunctionBackward" in nm:
            complete = False
            notes.append("reentrant checkpointing (CheckpointFunctionBackward): its backward runs a nested "
                         "backward on a graph recomputed during backward; the order of the parameters inside is "
                         "not predicted")
            break
    devices = {str(p.device) for p in params}
    if isinstance(roots, torch.Tensor):
        devices.add(str(roots.device))
    else:
        devices.update(str(t.device) for t in roots)
    if creation is not None and creation.active:
        devices.update(creation.devices)
    # A task goes to the ready queue of its device; CPU tasks to the graph task's own (engine.cpp:1255-1270,
    # input_buffer.cpp:193-209@v1.13.1; engine.cpp:1172, 1495-1511@v2.6.0). Each queue has its own thread.
    if len(devices) > 1:
        complete = False
        notes.append("the graph spans several devices (" + ", ".join(sorted(devices)) + "): each device's ready "
                     "queue is drained by its own thread, so their interleaving is not predicted")

    # ---- the replay ----
    # thread_main (engine.cpp:427-522@v1.13.1) pops one task at a time and runs evaluate_function on it; the root is
    # the only task at first (engine.cpp:1158@v1.13.1). evaluate_function (:932-992@v1.13.1, :1133-1193@v2.6.0)
    # walks the node's outputs in next_edges order, decrements each target's dependency count and pushes the target
    # when it reaches 0. DDP's hook is a post hook on the AccumulateGrad node (reducer.cpp:179-197@v1.13.1,
    # :187@v2.6.0), so a popped AccumulateGrad is one parameter's hook firing; it returns no outputs
    # (accumulate_grad.cpp:25-61@v1.13.1), so evaluate_function stops there (engine.cpp:905@v1.13.1).
    queue = _StdPriorityQueue(comp)
    queue.push(root)
    order, seen_params, foreign = [], set(), 0
    while len(queue):
        task = queue.pop()
        if task in acc:
            i = index.get(id(task.variable))
            if i is None:
                foreign += 1
            elif i not in seen_params:
                seen_params.add(i)
                order.append(i)
            continue  # AccumulateGrad returns no outputs (num_outputs == 0)
        for nxt, _ in task.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                queue.push(nxt)

    if foreign:
        notes.append(f"{foreign} leaf tensor(s) outside params get gradients too (no DDP hook)")
    if ambiguous:
        complete = False
        pairs = sorted({f"{_name(u)}~{_name(m)}" for u, m in ambiguous})
        notes.append(f"{len(ambiguous)} queue comparison(s) depended on where an unnumbered node was placed: "
                     + ", ".join(pairs[:5]))
    unreached = [i for i in range(len(params)) if i not in seen_params]
    return {"order": order, "unreached": unreached, "method": method, "notes": notes, "complete": complete}
