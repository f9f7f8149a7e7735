"""Training-job specs: model shape, parallelism, precision, compute, and the paper's presets.

A :class:`Workload` is everything :func:`~ns3wormhole.workload.dag.build_dag` needs:

* :class:`ModelSpec` -- a GPT-style decoder: ``num_layers``, ``hidden``, ``heads``,
  ``seq_len``, ``vocab``, ``ffn_hidden`` (default ``4*hidden``); a mixture-of-experts model
  when ``num_experts > 0`` (every layer's MLP is replaced by ``num_experts`` experts of
  ``expert_ffn_hidden``, each token routed to ``top_k`` of them).
* :class:`ParallelSpec` -- ``tp``, ``dp``, ``pp``, ``ep`` and ``gpus_per_server`` (8).
  Rank placement is documented in :mod:`ns3wormhole.workload.placement`.
* :class:`Precision` -- bytes per gradient element and per activation element.
* :class:`ComputeSpec` -- effective TFLOPS per GPU (or explicit per-layer times), NVLink
  bandwidth/latency for intra-server transfers, and whether TP traffic is modelled.
* ``micro_batch`` (default 1), ``global_batch`` (default ``dp * pp * micro_batch``, as in the
  paper's setup, so each DP replica runs ``pp`` micro-batches) and ``iterations``.

Parameter counts (standard GPT formulas, Megatron-LM / Narayanan et al. 2021)
-----------------------------------------------------------------------------
Per dense layer, hidden ``h`` and MLP width ``f``:

* attention: ``4h^2 + 4h`` (Q, K, V and output projections with biases),
* MLP: ``2hf + f + h`` (two projections with biases),
* two layer norms: ``4h``;

so with ``f = 4h`` a layer has ``12h^2 + 13h`` parameters.  Embeddings: ``V*h`` (token,
tied with the output layer) ``+ s*h`` (learned positions) and a final layer norm ``2h``.
Total ``P = L(12h^2 + 13h) + Vh + sh + 2h``: gpt-13b gives 12.9e9, gpt-175b 174.6e9.

An MoE layer keeps attention and layer norms, replaces the MLP by ``E`` experts of
``2h f_e + f_e + h`` each and adds a router ``h*E``.

FLOPs (per GPU, one micro-batch of ``b*s`` tokens): forward ``2 * params * tokens``, backward
twice that.  Dense and attention parameters are split over the TP group; for MoE layers each
GPU dispatches ``b*s/TP`` tokens (sequence-parallel split over the TP ranks, as Megatron
requires for MoE with TP) and, with balanced routing, runs ``b*s/TP * top_k`` token-expert
pairs at ``2 * expert_params`` FLOPs each.  The last stage also runs the output layer
(``2*V*h*tokens/TP``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

__all__ = [
    "ComputeSpec",
    "ModelSpec",
    "ParallelSpec",
    "Precision",
    "Workload",
    "PRESETS",
    "gpt",
    "moe",
    "preset",
    "preset_names",
]


def _check_positive(owner: str, **values: int | float | None) -> None:
    for key, v in values.items():
        if v is not None and not v > 0:
            raise ValueError(f"{owner}.{key} must be > 0, got {v!r}")


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ModelSpec:
    """Shape of a GPT-style decoder-only model (dense when ``num_experts == 0``)."""

    name: str
    num_layers: int
    hidden: int
    heads: int
    seq_len: int = 2048
    vocab: int = 50257
    ffn_hidden: int | None = None
    """MLP width of a dense layer; default ``4 * hidden``."""
    num_experts: int = 0
    """Experts per MoE layer; 0 = dense model."""
    top_k: int = 2
    """Experts each token is routed to (MoE only)."""
    expert_ffn_hidden: int | None = None
    """MLP width of one expert; default ``ffn_hidden``."""

    def __post_init__(self) -> None:
        _check_positive(
            "model", num_layers=self.num_layers, hidden=self.hidden, heads=self.heads, seq_len=self.seq_len,
            vocab=self.vocab, ffn_hidden=self.ffn_hidden, expert_ffn_hidden=self.expert_ffn_hidden,
        )
        if self.hidden % self.heads:
            raise ValueError(f"model.hidden ({self.hidden}) must be a multiple of model.heads ({self.heads})")
        if self.num_experts < 0:
            raise ValueError(f"model.num_experts must be >= 0, got {self.num_experts}")
        if self.is_moe and not 1 <= self.top_k <= self.num_experts:
            raise ValueError(f"model.top_k must be in 1..num_experts ({self.num_experts}), got {self.top_k}")

    # ---------------------------------------------------------------- shapes
    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def ffn(self) -> int:
        return self.ffn_hidden if self.ffn_hidden is not None else 4 * self.hidden

    @property
    def expert_ffn(self) -> int:
        return self.expert_ffn_hidden if self.expert_ffn_hidden is not None else self.ffn

    # ---------------------------------------------------------------- parameter counts
    @property
    def attention_params(self) -> int:
        """Attention block of one layer, including its two layer norms (``4h^2 + 8h``)."""
        h = self.hidden
        return 4 * h * h + 4 * h + 4 * h

    @staticmethod
    def _mlp(h: int, f: int) -> int:
        return 2 * h * f + f + h

    @property
    def mlp_params(self) -> int:
        """Dense MLP of one layer."""
        return self._mlp(self.hidden, self.ffn)

    @property
    def expert_params(self) -> int:
        """One expert (MoE only)."""
        return self._mlp(self.hidden, self.expert_ffn)

    @property
    def router_params(self) -> int:
        return self.hidden * self.num_experts

    @property
    def layer_params(self) -> int:
        """All parameters of one transformer layer (all experts for MoE)."""
        if self.is_moe:
            return self.attention_params + self.router_params + self.num_experts * self.expert_params
        return self.attention_params + self.mlp_params

    @property
    def embedding_params(self) -> int:
        """Token (tied with the output layer) and position embeddings."""
        return self.vocab * self.hidden + self.seq_len * self.hidden

    @property
    def num_params(self) -> int:
        """Total parameter count ``L*layer + V*h + s*h + 2h``."""
        return self.num_layers * self.layer_params + self.embedding_params + 2 * self.hidden

    @property
    def active_params(self) -> int:
        """Parameters one token touches (top_k experts per MoE layer)."""
        if not self.is_moe:
            return self.num_params
        per_layer = self.attention_params + self.router_params + self.top_k * self.expert_params
        return self.num_layers * per_layer + self.embedding_params + 2 * self.hidden


def gpt(name: str, num_layers: int, hidden: int, heads: int, **kw: int) -> ModelSpec:
    """A dense GPT model."""
    return ModelSpec(name=name, num_layers=num_layers, hidden=hidden, heads=heads, **kw)


def moe(base: ModelSpec, num_experts: int, top_k: int = 2, name: str | None = None, **kw: int) -> ModelSpec:
    """An MoE model on the backbone of ``base``: every MLP becomes ``num_experts`` experts."""
    return replace(base, name=name or f"moe-{num_experts}x{base.name}", num_experts=num_experts, top_k=top_k, **kw)


# --------------------------------------------------------------------------- parallelism


@dataclass(frozen=True)
class ParallelSpec:
    """Parallel layout: ``world = tp * dp * pp``; ``ep`` folds into the ``tp*dp`` ranks of a stage.

    Expert parallelism does not add a factor to the world size (as in Table 1:
    TP8-EP8-DP4-PP2 is 64 GPUs): the ``tp*dp`` GPUs of a pipeline stage are regrouped into
    ``tp*dp/ep`` EP groups of ``ep`` GPUs (expert tensor-parallel size 1); the GPUs holding the
    same experts form expert-data-parallel groups of ``tp*dp/ep``.  See
    :mod:`ns3wormhole.workload.placement` for which GPUs these are.
    """

    tp: int = 1
    dp: int = 1
    pp: int = 1
    ep: int = 1
    gpus_per_server: int = 8

    def __post_init__(self) -> None:
        _check_positive("parallel", tp=self.tp, dp=self.dp, pp=self.pp, ep=self.ep, gpus_per_server=self.gpus_per_server)
        if (self.tp * self.dp) % self.ep:
            raise ValueError(f"parallel.ep ({self.ep}) must divide tp*dp ({self.tp * self.dp})")
        if self.gpus_per_server % self.tp and self.tp % self.gpus_per_server:
            raise ValueError(
                f"parallel.tp ({self.tp}) and gpus_per_server ({self.gpus_per_server}) must divide one another"
            )

    @property
    def world(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def edp(self) -> int:
        """Expert-data-parallel size: replicas of each expert within a stage."""
        return self.tp * self.dp // self.ep

    @property
    def num_servers(self) -> int:
        return -(-self.world // self.gpus_per_server)

    def label(self) -> str:
        ep = f"-EP{self.ep}" if self.ep > 1 else ""
        return f"TP{self.tp}{ep}-DP{self.dp}-PP{self.pp}"


# --------------------------------------------------------------------------- precision / compute


@dataclass(frozen=True)
class Precision:
    """Element sizes in bytes: gradients (DP all-reduce) and activations (PP, EP, TP)."""

    param_bytes: int = 2
    """Bytes per gradient element all-reduced over DP (bf16 = 2; fp32 grads = 4)."""
    act_bytes: int = 2
    """Bytes per activation element (bf16 = 2)."""

    def __post_init__(self) -> None:
        _check_positive("precision", param_bytes=self.param_bytes, act_bytes=self.act_bytes)


@dataclass(frozen=True)
class ComputeSpec:
    """How long a GPU computes, and how intra-server (NVLink) transfers are timed.

    Compute times come from FLOPs at ``effective_tflops`` unless given explicitly:
    ``layer_fwd_ns`` is the forward time of one dense layer (or of the attention part of an
    MoE layer), ``expert_fwd_ns`` the forward time of the expert part of an MoE layer,
    ``head_fwd_ns`` the output layer on the last stage.  Backward is ``bwd_factor`` x forward.

    Transfers between GPUs of the same server never become network flows: they are delays of
    ``nvlink_latency_ns + bytes / nvlink_Bps``.  TP traffic (two all-reduces of the layer's
    activations per dense layer and direction, one per MoE layer) is added to the compute
    time as an NVLink ring all-reduce when ``tp_comm`` is on.
    """

    effective_tflops: float = 150.0
    """Sustained TFLOPS per GPU (A100 bf16 peak 312 at ~50 % MFU)."""
    bwd_factor: float = 2.0
    layer_fwd_ns: int | None = None
    expert_fwd_ns: int | None = None
    head_fwd_ns: int | None = None
    optimizer_ns: int = 0
    """Optimizer step after the gradient all-reduce, per GPU."""
    nvlink_gbps: float = 2880.0
    """NVLink bandwidth per GPU in Gbit/s (SimAI's default, 360 GB/s)."""
    nvlink_latency_ns: int = 25
    tp_comm: bool = True
    """Add TP all-reduce time over NVLink to each layer's compute (False: TP is free)."""

    def __post_init__(self) -> None:
        _check_positive(
            "compute", effective_tflops=self.effective_tflops, bwd_factor=self.bwd_factor, nvlink_gbps=self.nvlink_gbps
        )
        for key in ("layer_fwd_ns", "expert_fwd_ns", "head_fwd_ns", "optimizer_ns", "nvlink_latency_ns"):
            v = getattr(self, key)
            if v is not None and v < 0:
                raise ValueError(f"compute.{key} must be >= 0, got {v}")

    @property
    def nvlink_Bps(self) -> float:
        return self.nvlink_gbps * 1e9 / 8

    def flops_ns(self, flops: float) -> int:
        return int(round(flops / (self.effective_tflops * 1e12) * 1e9))

    def nvlink_ns(self, nbytes: float) -> int:
        return int(round(self.nvlink_latency_ns + nbytes / self.nvlink_Bps * 1e9))

    def nvlink_allreduce_ns(self, nbytes: float, n: int) -> int:
        """Ring all-reduce of ``nbytes`` over ``n`` GPUs on NVLink: 2(n-1) steps of nbytes/n."""
        if n <= 1:
            return 0
        steps = 2 * (n - 1)
        return int(round(steps * (self.nvlink_latency_ns + nbytes / n / self.nvlink_Bps * 1e9)))


# --------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class Workload:
    """One training job: model, layout, precision, compute; ``iterations`` steps in one DAG."""

    model: ModelSpec
    parallel: ParallelSpec
    precision: Precision = field(default_factory=Precision)
    compute: ComputeSpec = field(default_factory=ComputeSpec)
    micro_batch: int = 1
    global_batch: int | None = None
    """Sequences per iteration; default ``dp * pp * micro_batch`` (paper: micro-batch 1, GBS = DP x PP)."""
    iterations: int = 1
    a2a_per_layer: int = 2
    """EP all-to-alls per MoE layer and direction: 2 = dispatch and combine."""
    name: str = ""

    def __post_init__(self) -> None:
        _check_positive("workload", micro_batch=self.micro_batch, global_batch=self.global_batch, iterations=self.iterations)
        if self.a2a_per_layer not in (1, 2):
            raise ValueError(f"workload.a2a_per_layer must be 1 or 2, got {self.a2a_per_layer}")
        par, m = self.parallel, self.model
        if self.batch % (par.dp * self.micro_batch):
            raise ValueError(
                f"workload.global_batch ({self.batch}) must be a multiple of dp*micro_batch ({par.dp * self.micro_batch})"
            )
        if m.num_layers < par.pp:
            raise ValueError(f"model.num_layers ({m.num_layers}) must be >= parallel.pp ({par.pp})")
        if m.is_moe and m.num_experts % par.ep:
            raise ValueError(f"parallel.ep ({par.ep}) must divide model.num_experts ({m.num_experts})")
        if not m.is_moe and par.ep != 1:
            raise ValueError("parallel.ep > 1 needs an MoE model (model.num_experts > 0)")

    @property
    def batch(self) -> int:
        if self.global_batch is not None:
            return self.global_batch
        return self.parallel.dp * self.parallel.pp * self.micro_batch

    @property
    def num_microbatches(self) -> int:
        """Micro-batches each DP replica runs per iteration."""
        return self.batch // (self.parallel.dp * self.micro_batch)

    @property
    def tokens(self) -> int:
        """Tokens of one micro-batch."""
        return self.micro_batch * self.model.seq_len

    def layers_per_stage(self) -> list[int]:
        """Layers of each pipeline stage; a remainder goes to the first stages."""
        q, r = divmod(self.model.num_layers, self.parallel.pp)
        return [q + (1 if s < r else 0) for s in range(self.parallel.pp)]

    def with_(self, **changes: object) -> "Workload":
        """A copy with some fields replaced (``compute=``, ``iterations=`` ...)."""
        return replace(self, **changes)

    # ---------------------------------------------------------------- per-GPU quantities
    def layer_fwd_ns(self) -> int:
        """Forward time of one dense layer (MoE: its attention part), per GPU, incl. TP comm."""
        m, c, tp = self.model, self.compute, self.parallel.tp
        if c.layer_fwd_ns is not None:
            t = c.layer_fwd_ns
        else:
            params = m.attention_params + (m.router_params if m.is_moe else m.mlp_params)
            t = c.flops_ns(2.0 * params * self.tokens / tp)
        if c.tp_comm and tp > 1:
            n_ar = 1 if m.is_moe else 2
            t += n_ar * c.nvlink_allreduce_ns(self.tokens * m.hidden * self.precision.act_bytes, tp)
        return t

    def expert_fwd_ns(self) -> int:
        """Forward time of the expert part of one MoE layer, per GPU."""
        m, c = self.model, self.compute
        if not m.is_moe:
            return 0
        if c.expert_fwd_ns is not None:
            return c.expert_fwd_ns
        return c.flops_ns(2.0 * m.expert_params * self.dispatch_tokens * m.top_k)

    def head_fwd_ns(self) -> int:
        """Output layer (logits) forward time on the last stage, per GPU."""
        c = self.compute
        if c.head_fwd_ns is not None:
            return c.head_fwd_ns
        if c.layer_fwd_ns is not None:
            return 0
        return c.flops_ns(2.0 * self.model.vocab * self.model.hidden * self.tokens / self.parallel.tp)

    def bwd_ns(self, fwd_ns: int) -> int:
        return int(round(fwd_ns * self.compute.bwd_factor))

    @property
    def dispatch_tokens(self) -> int:
        """Tokens one GPU dispatches per MoE layer and micro-batch (``b*s/TP``)."""
        return max(1, self.tokens // self.parallel.tp)

    def pp_bytes(self) -> int:
        """Activation (or its gradient) one GPU sends to the next stage per micro-batch: ``b*s*h*act/TP``."""
        return max(1, self.tokens * self.model.hidden * self.precision.act_bytes // self.parallel.tp)

    def a2a_pair_bytes(self) -> int:
        """Bytes each EP rank sends to each other EP rank per all-to-all: ``b*s/TP * top_k * h * act / EP``."""
        m = self.model
        return max(1, self.dispatch_tokens * m.top_k * m.hidden * self.precision.act_bytes // self.parallel.ep)

    def dense_grad_bytes(self, stage: int) -> int:
        """Non-expert gradient bytes one GPU of ``stage`` all-reduces over its DP group.

        Layers' dense (attention, router, dense MLP) parameters split over TP; the first
        stage adds the embeddings and the last the output layer and final norm (Megatron
        keeps a copy of the tied embedding on the last stage)."""
        m, par = self.model, self.parallel
        layers = self.layers_per_stage()[stage]
        per_layer = m.attention_params + (m.router_params if m.is_moe else m.mlp_params)
        params = layers * per_layer
        if stage == 0:
            params += m.embedding_params
        if stage == par.pp - 1:
            params += m.vocab * m.hidden * (1 if par.pp > 1 else 0) + 2 * m.hidden
        return -(-params // par.tp) * self.precision.param_bytes

    def expert_grad_bytes(self, stage: int) -> int:
        """Expert gradient bytes one GPU of ``stage`` all-reduces over its expert-DP group."""
        m, par = self.model, self.parallel
        if not m.is_moe:
            return 0
        experts_per_rank = m.num_experts // par.ep
        return self.layers_per_stage()[stage] * experts_per_rank * m.expert_params * self.precision.param_bytes

    def describe(self) -> str:
        m = self.model
        return (
            f"{self.name or m.name}: {m.num_params / 1e9:.1f}B params, {self.parallel.label()} on "
            f"{self.parallel.world} GPUs, {self.num_microbatches} micro-batches of {self.micro_batch}x{m.seq_len}"
        )


# --------------------------------------------------------------------------- presets (paper Table 1)

_GPT = {
    # GPT-3 paper (Brown et al. 2020) / Megatron shapes; seq 2048, GPT-2 vocabulary.
    "7b": gpt("gpt-7b", num_layers=32, hidden=4096, heads=32),
    "13b": gpt("gpt-13b", num_layers=40, hidden=5120, heads=40),
    "22b": gpt("gpt-22b", num_layers=48, hidden=6144, heads=64),
    "175b": gpt("gpt-175b", num_layers=96, hidden=12288, heads=96),
}

_TABLE1: list[tuple[str, ModelSpec, ParallelSpec]] = [
    ("gpt-7b", _GPT["7b"], ParallelSpec(tp=8, dp=4, pp=2)),
    ("gpt-13b", _GPT["13b"], ParallelSpec(tp=8, dp=4, pp=4)),
    ("gpt-22b", _GPT["22b"], ParallelSpec(tp=8, dp=8, pp=4)),
    ("gpt-175b", _GPT["175b"], ParallelSpec(tp=8, dp=16, pp=8)),
    ("moe-8x7b", moe(_GPT["7b"], 8, name="moe-8x7b"), ParallelSpec(tp=8, dp=4, pp=2, ep=8)),
    ("moe-8x13b", moe(_GPT["13b"], 8, name="moe-8x13b"), ParallelSpec(tp=8, dp=4, pp=4, ep=8)),
    ("moe-8x22b", moe(_GPT["22b"], 8, name="moe-8x22b"), ParallelSpec(tp=8, dp=8, pp=4, ep=8)),
    ("moe-32x22b", moe(_GPT["22b"], 32, name="moe-32x22b"), ParallelSpec(tp=8, dp=16, pp=8, ep=8)),
]

PRESETS: dict[str, Workload] = {name: Workload(model=m, parallel=p, name=name) for name, m, p in _TABLE1}
"""The paper's Table 1 workloads.  MoE models put ``E`` experts (GPT MLP, top-2) on the GPT
backbone of the same name; micro-batch 1 and global batch DP x PP."""


def preset_names() -> list[str]:
    return list(PRESETS)


def preset(name: str, **changes: object) -> Workload:
    """A Table 1 workload by name (``"gpt-13b"``, ``"moe-8x7b"`` ...), optionally with fields
    replaced: ``preset("gpt-7b", iterations=2, compute=ComputeSpec(tp_comm=False))``."""
    try:
        w = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown workload preset {name!r}; known: {', '.join(PRESETS)}") from None
    return replace(w, **changes) if changes else w
