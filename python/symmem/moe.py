"""Expert-parallel dispatch and combine on torch tensors (symmem/moe.hpp says how they work).

    ep = symmem.moe.ExpertParallel(hidden=7168, topk=8, num_experts=256, max_tokens=128, fp8=True)
    recv_x, recv_scales, counts = ep.dispatch(x, topk_idx, topk_weights, scales=scales)
    y = experts(recv_x, recv_scales, counts)            # [E_local, capacity, H] bf16
    out = ep.combine(y)                                  # [T, H] bf16, weighted by topk_weights

The halves apart (one round: round_tokens 0), so that other work runs while rows are on the wire:
ep.dispatch_send(x, topk_idx, topk_weights, scales=scales); ...; ep.dispatch_recv(), and
ep.combine_send(y); ...; ep.combine_recv().

Outputs live in tensors the object owns and reuses (the same addresses every call: a CUDA graph
can capture dispatch and combine). Every rank calls dispatch and combine in the same order; the
token count may differ across ranks (at most max_tokens)."""
from . import _current_stream, _group, _lib, _torch, InvalidArgument


class ExpertParallel:
    def __init__(self, hidden, topk, num_experts, max_tokens, *, capacity=0, fp8=False, ue8m0=False, round_tokens=0,
                 one_kernel=None, group=None):
        torch = _torch()
        g = _group(group)
        self.group = g
        # one_kernel: None lets symmem choose (one kernel a round where ranks have their own GPUs
        # and an operation is one round, and for a dispatch of several rounds at 1-2 ranks on GPUs
        # whose memory peaks below 4 TB/s), True / False force one / two kernels a round.
        # one_kernel / dispatch_one_kernel: what was chosen for combine / dispatch (a dispatch
        # through lines, below, is two kernels whatever one_kernel says). With None and
        # several rounds where ranks have their own GPUs, dispatch and combine stream instead
        # (streamed: each as one persistent kernel; SYMMEM_MOE_RING=0 in every rank's environment
        # keeps the rounds).
        if one_kernel not in (None, True, False):
            raise InvalidArgument(f"moe.ExpertParallel: one_kernel={one_kernel!r} must be None, True or False")
        kernels = 0 if one_kernel is None else (2 if one_kernel else 1)
        self._ep = _lib().ExpertParallel(g._comm, hidden, topk, num_experts, max_tokens, capacity, fp8, ue8m0, round_tokens,
                                         kernels)
        self.one_kernel = self._ep.one_kernel_per_round
        self.dispatch_one_kernel = self._ep.dispatch_one_kernel_per_round
        self.streamed = self._ep.dispatch_streamed and self._ep.combine_streamed
        self.lines = self._ep.dispatch_lines  # one round of few tokens: dispatch and combine travel as LL lines
        self.ue8m0 = ue8m0
        self.hidden, self.topk, self.num_experts, self.max_tokens, self.fp8 = hidden, topk, num_experts, max_tokens, fp8
        self.local_experts, self.capacity = self._ep.local_experts, self._ep.capacity
        self.bytes_per_rank = self._ep.bytes_per_rank  # symmetric memory a rank, of the group's heap (symmem/moe.hpp says what)
        dev = torch.device("cuda", torch.cuda.current_device())
        el, cap, groups = self.local_experts, self.capacity, (hidden + 127) // 128
        self.recv_x = torch.empty(el, cap, hidden, dtype=torch.float8_e4m3fn if fp8 else torch.bfloat16, device=dev)
        words = (groups + 3) // 4 if ue8m0 else groups  # UE8M0: 4 exponents packed in an int32
        self.recv_scales = torch.empty(el, cap, words, dtype=torch.int32 if ue8m0 else torch.float32, device=dev) if fp8 else None
        self.expert_counts = torch.empty(el, dtype=torch.int32, device=dev)
        self.out = torch.empty(max_tokens, hidden, dtype=torch.bfloat16, device=dev)
        self._tokens = 0
        self._views = {}  # tokens -> out[:tokens], made once (a slice costs ~1-2 us a call)
        # What every call checks or passes, looked up once (each tensor attribute read costs
        # ~0.1-0.3 us of host time; the outputs are this object's and never move).
        self._x_dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
        self._scale_dtype = torch.int32 if ue8m0 else torch.float32
        self._idx_dtypes = (torch.int32, torch.int64)
        self._int64, self._fp32, self._bf16 = torch.int64, torch.float32, torch.bfloat16
        self._expert_shape = (el, cap, hidden)
        self._out_ptrs = (self.recv_x.data_ptr(), self.recv_scales.data_ptr() if fp8 else 0, self.expert_counts.data_ptr())
        self._out_ptr = self.out.data_ptr()
        self._dev = dev.index

    def _inputs(self, who, x, topk_idx, topk_weights, scales):
        """Checks dispatch's inputs; their pointers and token count as the extension takes them."""
        xs = x.shape
        T = xs[0]
        if len(xs) != 2 or xs[1] != self.hidden or not x.is_contiguous():
            raise InvalidArgument(f"moe {who}: x must be a contiguous [T, {self.hidden}] tensor, got {tuple(xs)}")
        dev = self._dev
        if x.get_device() != dev or topk_idx.get_device() != dev or (topk_weights is not None and topk_weights.get_device() != dev) \
                or (scales is not None and scales.get_device() != dev):
            where = [f"{n} on {t.device}" for n, t in (("x", x), ("topk_idx", topk_idx), ("topk_weights", topk_weights),
                                                        ("scales", scales)) if t is not None and t.get_device() != dev]
            raise InvalidArgument(f"moe {who}: {', '.join(where)}; every input must be on this rank's GPU, cuda:{dev}")
        if x.dtype != self._x_dtype:
            raise InvalidArgument(f"moe {who}: x is {x.dtype}; this ExpertParallel was made for {self._x_dtype}")
        idx_dtype = topk_idx.dtype
        if topk_idx.shape != (T, self.topk) or idx_dtype not in self._idx_dtypes or not topk_idx.is_contiguous():
            raise InvalidArgument(f"moe {who}: topk_idx must be a contiguous int32/int64 [{T}, {self.topk}] tensor")
        if topk_weights is not None and (topk_weights.shape != (T, self.topk) or topk_weights.dtype != self._fp32
                                         or not topk_weights.is_contiguous()):
            raise InvalidArgument(f"moe {who}: topk_weights must be a contiguous fp32 [{T}, {self.topk}] tensor")
        if self.fp8 and (scales is None or scales.dtype != self._scale_dtype or scales.shape != (T, self.recv_scales.shape[2])
                         or not scales.is_contiguous()):
            raise InvalidArgument(f"moe {who}: an fp8 dispatch needs contiguous scales [{T}, {self.recv_scales.shape[2]}] "
                                  f"{self._scale_dtype} ({'packed UE8M0' if self.ue8m0 else 'one per 128 channels'})")
        if not T:
            return 0, 0, 0, idx_dtype == self._int64, 0, 0
        return (x.data_ptr(), scales.data_ptr() if scales is not None else 0, topk_idx.data_ptr(), idx_dtype == self._int64,
                topk_weights.data_ptr() if topk_weights is not None else 0, T)

    def dispatch(self, x, topk_idx, topk_weights=None, *, scales=None):
        """x: [T, H] bf16 (or float8_e4m3fn with scales [T, ceil(H/128)] fp32, or int32 of packed
        UE8M0 exponents [T, ceil(ceil(H/128)/4)] with ue8m0=True); topk_idx: [T, K]
        int32/int64, -1 for none; topk_weights: [T, K] fp32. Returns (recv_x, recv_scales or None,
        expert_counts)."""
        args = self._inputs("dispatch", x, topk_idx, topk_weights, scales)
        self._ep.dispatch(*args, *self._out_ptrs, _current_stream())
        self._tokens = args[5]
        return self.recv_x, self.recv_scales, self.expert_counts

    def dispatch_send(self, x, topk_idx, topk_weights=None, *, scales=None):
        """dispatch's send half (one round: round_tokens 0): this rank's rows leave for the ranks
        of their experts. Work of the caller's may follow on the stream before dispatch_recv,
        which takes what the peers sent (the inputs must stay unchanged until then)."""
        args = self._inputs("dispatch_send", x, topk_idx, topk_weights, scales)
        self._ep.dispatch_send(*args, _current_stream())
        self._tokens = args[5]

    def dispatch_recv(self):
        """dispatch's receive half, after dispatch_send: returns (recv_x, recv_scales or None, expert_counts)."""
        self._ep.dispatch_recv(*self._out_ptrs, _current_stream())
        return self.recv_x, self.recv_scales, self.expert_counts

    def _expert_out(self, who, expert_out):
        if expert_out.get_device() != self._dev:
            raise InvalidArgument(f"moe {who}: expert_out is on {expert_out.device}; it must be on this rank's GPU, cuda:{self._dev}")
        if expert_out.shape != self._expert_shape or expert_out.dtype != self._bf16 or not expert_out.is_contiguous():
            raise InvalidArgument(f"moe {who}: expert_out must be a contiguous bf16 "
                                  f"[{self.local_experts}, {self.capacity}, {self.hidden}] tensor")
        return expert_out.data_ptr()

    def _out_view(self):
        view = self._views.get(self._tokens)
        if view is None:
            view = self._views[self._tokens] = self.out[: self._tokens]
        return view

    def combine(self, expert_out, weighted=True):
        """expert_out: [E_local, capacity, H] bf16 (row r of expert e answers recv_x[e, r]).
        Returns [T, H] bf16 for this rank's tokens of the last dispatch."""
        self._ep.combine(self._expert_out("combine", expert_out), self._out_ptr, bool(weighted), _current_stream())
        return self._out_view()

    def combine_send(self, expert_out, weighted=True):
        """combine's send half: each token's partial row goes back to its source rank. Work of the
        caller's may follow before combine_recv (expert_out must stay unchanged until then)."""
        self._ep.combine_send(self._expert_out("combine_send", expert_out), bool(weighted), _current_stream())

    def combine_recv(self):
        """combine's receive half, after combine_send: returns [T, H] bf16, as combine."""
        self._ep.combine_recv(self._out_ptr, _current_stream())
        return self._out_view()
