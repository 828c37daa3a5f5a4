"""A learner's question in the course's words: typos fixed, everyday words joined by the course's terms.

Matching counts shared terms, so "diffrence between prefil and decode" and "why is my chatbot slow to
type each word?" would share little with the course although it covers both. Before matching:

* a word that is neither English (pyspellchecker's dictionary) nor the course's is replaced by the
  course word it is closest to, when one is close enough (difflib's ratio >= TYPO_CUTOFF, same first
  letter, words of at least 4 letters, at most TYPO_EDITS edits unless one word starts the other): "prefil" ->
  "prefill", "kernals" -> "kernels", while "postgres" stays (it only shares letters with "progress"); an English
  word the course does not use ("texts", "card") is left alone;
* everyday words are followed by the course's term for them ("graphics card" -> "graphics card gpu");
* two words the course writes as one name are joined ("flash attention" -> "FlashAttention").

The rewritten question only feeds matching and retrieval; the learner's own words are what is stored
and shown.
"""

from __future__ import annotations

import difflib
import functools
import re
import threading
from collections import Counter

import numpy as np
from spellchecker import SpellChecker

TYPO_CUTOFF = 0.8
# A slip changes a letter or two: "postgres" is four edits from the course's "progress", a name, not a slip.
TYPO_EDITS = 2

_SCATTERED_READS = "scattered irregular access gather latency memory wall"  # "grabs data from all over memory"
# Everyday wording -> the course's terms. General vocabulary of the subject, not tied to any one question.
EVERYDAY = {
    "graphics card": "gpu",
    "all over memory": _SCATTERED_READS,
    "all over the memory": _SCATTERED_READS,
    "random places in memory": _SCATTERED_READS,
    "random spots in memory": _SCATTERED_READS,
    "random memory locations": _SCATTERED_READS,
    "random addresses": _SCATTERED_READS,
    "jumps around memory": _SCATTERED_READS,
    "jumps around in memory": _SCATTERED_READS,
    "video card": "gpu",
    "graphics chip": "gpu",
    "chatbot": "llm decode token",
    "chat bot": "llm decode token",
    "ai assistant": "chatbot llm decode token",
    "ai assistants": "chatbot llm decode token",
    "ai model": "llm model",
    "language model": "llm",
    "processor": "cpu",
    "each word": "token decode",
    "every word": "token decode",
    "next word": "token decode",
    "word by word": "token decode",
    "one word at a time": "token decode",
    "in one go": "fused kernel fusion",
    "all at once": "fused kernel fusion",
    "saving the result": "intermediate hbm write",
    "save the result": "intermediate hbm write",
    "loading it back": "intermediate hbm read",
    "load it back": "intermediate hbm read",
    "slower and slower": "slower over hours",
    "words per second": "tokens throughput decode",
    "typing": "decode token",
    "types each word": "decode token",
    "first word": "ttft prefill",
    "reads the prompt": "prefill",
    "reading the prompt": "prefill",
    "long texts": "long sequence attention",
    "long documents": "long sequence attention",
    "long conversations": "long context kv cache",
    "remembers": "kv cache",
    "memory chips": "hbm",
    "graphics memory": "hbm",
    "video memory": "hbm vram",
    "on-chip": "sram shared memory",
    "lots of people": "batching batch",
    "many users": "batching batch",
    "many people": "batching batch",
    # Load as a user feels it: everyone on the service at once, its busy hours.
    "everyone's using": "batching batch busy load",
    "everybody's using": "batching batch busy load",
    "everyone is using": "batching batch busy load",
    "everybody is using": "batching batch busy load",
    "everyone uses": "batching batch busy load",
    "everybody uses": "batching batch busy load",
    "busy times": "batching batch busy load",
    "busy hours": "batching batch busy load",
    "peak hours": "batching batch busy load",
    "rush hour": "batching batch busy load",
    "at the same time": "batching concurrent",
    # The busy gauge a newcomer sees: nvidia-smi's utilization, in a task manager or a dashboard.
    "usage meter": "gpu utilization nvidia-smi",
    "task manager": "gpu utilization nvidia-smi",
    "usage graph": "gpu utilization nvidia-smi",
    "busy meter": "gpu utilization nvidia-smi",
    "several gpus": "multi-gpu tensor parallelism",
    "more than one gpu": "multi-gpu tensor parallelism",
    "several cards": "multi-gpu tensor parallelism",
    "small steps": "kernels launch",
    "tiny steps": "kernels launch",
    "one big step": "fused kernel fusion",
    "sits idle": "launch overhead idle",
    "keeps waiting": "launch overhead idle",
    "waiting around": "launch overhead idle",
    "moving data": "memory bandwidth bytes",
    "waiting for data": "memory-bound bandwidth bytes",
    "waiting on data": "memory-bound bandwidth bytes",
    "waiting for memory": "memory-bound bandwidth bytes",
    "waiting on memory": "memory-bound bandwidth bytes",
    "fetching data": "memory bandwidth bytes",
    "calculating": "compute flops",
    "calculations": "compute flops",
    "combine the steps": "fused kernel fusion",
    "combining the steps": "fused kernel fusion",
    "combine steps": "fused kernel fusion",
    "merge the steps": "fused kernel fusion",
    "putting stuff away": "intermediate hbm write",
    "fetching it back": "intermediate hbm read",
    "long conversation": "long context kv cache",
    "conversation gets long": "long context kv cache",
    "conversation so far": "kv cache context",
    "at the same moment": "batching concurrent",
    "before it starts replying": "ttft prefill",
    "before it starts answering": "ttft prefill",
    "before it answers": "ttft prefill",
    "before it replies": "ttft prefill",
    "before the answer starts": "ttft prefill",
    "moment before": "ttft prefill",
    "doing nothing": "idle",
    "little jobs": "kernels launch",
    "tiny jobs": "kernels launch",
    "small jobs": "kernels launch",
    "longer we chat": "long context kv cache",
    "the longer the chat": "long context kv cache",
    "said earlier": "kv cache context",
    "earlier in the chat": "kv cache context",
    "earlier in the conversation": "kv cache context",
    "reading them back": "intermediate hbm read",
    "reading it back": "intermediate hbm read",
    "read it back": "intermediate hbm read",
    "writing things to memory": "intermediate hbm write",
    "sums a second": "flop/s compute",
    "splitting the model": "multi-gpu tensor parallelism",
    "splitting an ai": "multi-gpu tensor parallelism",
    "split the model": "multi-gpu tensor parallelism",
    "fetching stuff": "memory bandwidth bytes",
    "gluing": "fused kernel fusion",
    "glue together": "fused kernel fusion",
    "in-between results": "intermediate",
    "in-between values": "intermediate",
    "8 bits": "fp8 int8 quantization",
    "4 bits": "int4 quantization",
    "been talking": "long context kv cache",
    "conversation goes on": "long context kv cache",
    "words at a time": "token decode",
    "one giant program": "kernels launch sequence",
    "one big program": "kernels launch sequence",
    "freeze": "p99 tail latency",
    "freezes": "p99 tail latency",
    "hiccup": "p99 tail latency",
    "hiccups": "p99 tail latency",
    "stutters": "p99 tail latency",
    # Chatbot products: everyday names for a served LLM.
    "chatgpt": "chatbot llm decode token",
    "claude": "chatbot llm decode token",
    "gemini": "chatbot llm decode token",
    "copilot": "chatbot llm decode token",
    "same moment": "batching concurrent",
    "copying data": "memory bandwidth bytes",
    "how fast memory": "memory bandwidth",
    "math": "compute flops",
    "number crunching": "compute flops",
    "replay": "cuda graph",
    # How a service feels to its users: speed words rarer in English than the subjects the course lacks.
    "sluggish": "slow latency",
    "laggy": "slow latency",
    "unresponsive": "slow latency",
    "choppy": "p99 tail latency",
    "jittery": "p99 tail latency",
    "glitchy": "p99 tail latency",
    "record and replay": "cuda graph capture",
    "out of memory": "memory capacity kv cache",
    "memory use": "memory capacity",
    "memory usage": "memory capacity",
    "memory grows": "kv cache grows",
    "long story": "long sequence kv cache",
    "long answer": "long sequence kv cache",
    "long reply": "long sequence kv cache",
    "add up": "sum reduction",
    "adding up": "sum reduction",
    "8-bit": "fp8 int8 quantization",
    "4-bit": "int4 quantization",
    "smaller numbers": "quantization lower precision",
    "less precision": "quantization lower precision",
    "lower precision": "quantization",
    "fewer digits": "quantization lower precision",
    "fewer bits": "quantization lower precision",
    "smaller number format": "quantization lower precision",
    "number format": "dtype precision",
    "serve more": "batching throughput",
    "more users": "batching batch",
    "single user": "batch 1",
    "one sequence at a time": "batch 1",
    "one request at a time": "batch 1",
    "one prompt at a time": "batch 1",
    "generating text": "decode token",
    "generating tokens": "decode token",
    "generates text": "decode token",
    "one user": "batch 1",
    "only user": "batch 1",
    "only one using": "batch 1",
    "by myself": "batch 1",
    "first request": "cold start warm-up",
    "first requests": "cold start warm-up",
    "downside": "cost trade-off",
    "downsides": "cost trade-off",
    "drawback": "cost trade-off",
    "drawbacks": "cost trade-off",
    "disadvantage": "cost trade-off",
    "disadvantages": "cost trade-off",
    "the catch": "cost trade-off",
    "oom": "out of memory",
    "ooms": "out of memory",
    "oomed": "out of memory",
    "any catch": "cost trade-off",
    # The GPU's parts in a newcomer's words: its "workers" are threads, and a group of 32 of them a warp.
    "workers": "threads lanes",
    "group of 32": "warp",
    "groups of 32": "warp",
    "main memory": "hbm",
    "32-bit": "fp32",
    "full precision": "fp32",
    # GPUs exchanging partial results while they serve one model.
    "talk to each other": "communication all-reduce multi-gpu",
    "talking to each other": "communication all-reduce multi-gpu",
    "talk to one another": "communication all-reduce multi-gpu",
    "chatting with each other": "communication all-reduce multi-gpu",
    "chat with each other": "communication all-reduce multi-gpu",
    "multi-card": "multi-gpu",
    # Rates and sizes spelt out.
    "terabytes per second": "tb/s bandwidth",
    "terabytes a second": "tb/s bandwidth",
    "gigabytes per second": "gb/s bandwidth",
    "gigabytes a second": "gb/s bandwidth",
    # The generation before Hopper, named by the one after it ("older cards" is older than whatever was said last).
    "before hopper": "ampere a100",
    "pre-hopper": "ampere a100",
    # Chat shorthand for the course's words.
    "thruput": "throughput",
    "thru": "through",
    "attn": "attention",
    "mem": "memory",
    "smem": "shared memory",
    "gmem": "global memory hbm",
    "bw": "bandwidth",
    "seq len": "sequence length",
    "seqlen": "sequence length",
    "ctx": "context",
    "regs": "registers",
    # A service that slows down through the day, and one that is slow only now and then.
    "by the evening": "slower over hours",
    "by evening": "slower over hours",
    "through the day": "slower over hours",
    "over the day": "slower over hours",
    "every so often": "p99 tail latency",
    "now and then": "p99 tail latency",
    "once in a while": "p99 tail latency",
    # A size that is not a round number.
    "odd width": "dimension alignment",
    "odd size": "dimension alignment",
    # Maths done for each piece of data brought in: arithmetic intensity.
    "calculations per": "arithmetic intensity flop/byte",
    "math per": "arithmetic intensity flop/byte",
    "maths per": "arithmetic intensity flop/byte",
    # Recording the GPU's work once and playing it back: a CUDA graph.
    "recording": "cuda graph capture",
    "recorded": "cuda graph capture",
    "pre-record": "cuda graph capture",
    "replaying": "cuda graph replay",
    "play back": "cuda graph replay",
    "playing back": "cuda graph replay",
    # Spelt-out names the course writes short.
    "floating-point operations": "flops",
    "floating point operations": "flops",
    "floating-point ops": "flops",
    "time to first token": "ttft",
    "time per output token": "tpot",
    "inter-token latency": "tpot",
    "user-facing latency": "ttft tpot",
    "high-bandwidth memory": "hbm",
    "streaming multiprocessor": "sm",
    "streaming multiprocessors": "sms",
    "key-value cache": "kv cache",
    "key value cache": "kv cache",
    "grouped-query attention": "gqa",
    "grouped query attention": "gqa",
    # Registers: the tiny private storage slots each worker (thread) gets.
    "tiny fast storage": "registers",
    "fast storage slots": "registers",
    "scratch slots": "registers",
    "private storage": "registers",
    # Register spills: those slots overflowing into slow memory.
    "spill over": "registers spill local memory",
    "spills over": "registers spill local memory",
    # Shared memory: the fast scratch storage on the chip that a team of workers shares.
    "inside the chip": "on-chip sram shared memory",
    "built-in memory": "on-chip sram shared memory",
    "fast scratch storage": "shared memory sram",
    "shared scratch": "shared memory sram",
    "team of workers": "thread block shared memory",
    # L2: the chip-wide cache the hardware manages by itself.
    "hardware cache": "l2 cache",
    "built-in cache": "l2 cache",
    # Attention: every word compared with every other word.
    "every other word": "attention scores score matrix",
    "comparing every word": "attention scores score matrix",
    "word comparison": "attention scores score matrix",
    "score table": "attention score matrix",
    # Softmax: turning the scores into shares that add up to one.
    "scores into probabilities": "attention softmax",
    "scores into percentages": "attention softmax",
    "add up to one": "softmax normalizer",
    # FlashAttention: the memory-saving attention trick, done piece by piece.
    "memory-saving attention": "flashattention tiling",
    "attention in chunks": "flashattention tiling",
    "attention piece by piece": "flashattention tiling",
    # KV cache: the model's memory of the conversation so far.
    "conversation memory": "kv cache",
    "memory of the conversation": "kv cache",
    "chat history": "kv cache context",
    "chat memory": "kv cache",
    "previous words": "kv cache context",
    "words so far": "kv cache context",
    "remember the conversation": "kv cache",
    # Paged KV cache: handing out memory in fixed-size pages instead of one reserved chunk per chat.
    "memory pages": "paged kv blocks pagedattention",
    "handing out memory": "paged kv blocks allocator",
    "reserved chunk": "contiguous reservation paged kv blocks",
    "list of pages": "block table paged kv",
    # Memory wasted in holes and gaps: fragmentation.
    "swiss cheese": "fragmentation allocator",
    "holes in memory": "fragmentation allocator",
    # Sharing the blocks of a prompt every chat starts with: prefix sharing.
    "same system prompt": "prefix sharing paged kv blocks",
    "shared system prompt": "prefix sharing paged kv blocks",
    # Decode: the model writing its reply.
    "writing the answer": "decode token",
    "writing the reply": "decode token",
    # Prefill: the model reading the prompt.
    "reading my prompt": "prefill",
    "reading my question": "prefill",
    "processing the prompt": "prefill",
    "the whole prompt": "prefill",
    # Chunked prefill: a long prompt taken in pieces.
    "prompt in chunks": "chunked prefill",
    "split the prompt": "chunked prefill",
    # TTFT: the wait before anything of the reply appears.
    "before anything appears": "ttft prefill",
    # Batching: several chats or requests served in one step.
    "several chats": "batching batch",
    "many chats": "batching batch",
    "many conversations": "batching batch",
    "grouping requests": "batching batch",
    # Continuous batching: new people joining the group being worked on.
    "join the group": "continuous batching",
    "new people join": "continuous batching",
    # Throughput versus latency: the server's total output against one user's speed.
    "requests per second": "throughput batching",
    "speed per user": "per-user latency tpot",
    # Kernel launch overhead: the cost of starting each job and telling the card about it.
    "starting each job": "kernel launch overhead",
    "starting each step": "kernel launch overhead",
    "step started": "kernel launch overhead",
    "cost of starting": "kernel launch overhead",
    "tell the card": "kernel launch",
    "telling the card": "kernel launch",
    "tell the graphics card": "kernel launch",
    "next bit of work": "kernel launch launch-bound",
    # Launch-bound: the CPU cannot hand out work as fast as the GPU finishes it.
    "cpu can't keep up": "launch-bound host cpu",
    "keep up with the gpu": "launch-bound host cpu",
    # Host sync: the CPU stopping to wait for the GPU.
    "wait for the gpu": "host sync synchronization",
    "waiting for the gpu": "host sync synchronization",
    # CUDA stream: the card's queue of work; the CPU returns before the work is done.
    "queue of work": "cuda stream queue",
    "to-do list": "cuda stream queue",
    # Kernel: one small program the card runs.
    "gpu program": "kernel",
    # SMs: the GPU's many little processors.
    "little processors": "sms streaming multiprocessors",
    # Kernel fusion: merging steps, doing them together.
    "merging steps": "fused kernel fusion",
    "merging the steps": "fused kernel fusion",
    "merge several steps": "fused kernel fusion",
    "steps together": "fused kernel fusion",
    # CUDA graphs: handing the card the whole recorded list of steps at once.
    "whole list of steps": "cuda graph capture replay",
    "list of steps at once": "cuda graph capture replay",
    "record once": "cuda graph capture replay",
    # Roofline: the roof chart, the speed-limit chart with a slanted and a flat line.
    "roof chart": "roofline",
    "speed limit chart": "roofline",
    "speed-limit chart": "roofline",
    "slanted line": "roofline bandwidth roof",
    "where the lines meet": "roofline ridge point",
    "where the two lines meet": "roofline ridge point",
    # Memory-bound: starved for data, waiting on deliveries.
    "starved for data": "memory-bound bandwidth",
    "waiting on deliveries": "memory-bound bandwidth",
    "limited by memory": "memory-bound bandwidth",
    "held back by memory": "memory-bound bandwidth",
    # Compute-bound: held back by the math itself.
    "limited by the math": "compute-bound flop/s",
    "limited by math": "compute-bound flop/s",
    "held back by the math": "compute-bound flop/s",
    "math speed": "compute flop/s",
    "crunching numbers": "compute flops",
    # Arithmetic intensity: how much math is done for each byte fetched.
    "for each byte": "arithmetic intensity flop/byte",
    "work per byte": "arithmetic intensity flop/byte",
    # Weights: the model's stored numbers, read from memory at every step.
    "model's numbers": "weights",
    "model's stored numbers": "weights",
    # Matmul: multiplying big matrices.
    "matrix multiplication": "matmul gemm",
    "matrix multiply": "matmul gemm",
    # Tensor cores: the card's dedicated multiply hardware.
    "multiply hardware": "tensor cores",
    "multiply units": "tensor cores",
    # Alignment: sizes that are not round numbers.
    "round number": "multiple of 8 alignment",
    "rounder number": "multiple of 8 alignment",
    # Warps: workers moving in lockstep.
    "in lockstep": "warp simt",
    # Warp divergence: workers of one warp taking different paths.
    "take different paths": "warp divergence branch",
    # Bank conflicts: workers queueing at the same shelf of the scratch storage.
    "same shelf": "bank conflicts shared memory",
    "queueing at the same": "bank conflicts shared memory",
    # Swizzling: scrambling the layout so accesses spread out.
    "scrambled layout": "xor swizzle swizzling",
    # Coalescing: workers reading data that sits side by side.
    "sitting next to each other": "coalesced contiguous",
    "side by side in memory": "coalesced contiguous",
    # Pipelining with async copies: fetching the next batch of data while working on this one.
    "fetch the next": "pipelining async copy prefetch",
    "fetching the next": "pipelining async copy prefetch",
    "load the next": "pipelining async copy prefetch",
    "copy in the background": "pipelining async copy cp.async",
    "two memory slots": "double buffering pipelining",
    "assembly line": "pipelining pipeline stages",
    # Warp specialization: some workers fetch while others compute.
    "some workers fetch": "warp specialization producer",
    # Tensor parallelism: the GPUs combining their partial results with an all-reduce.
    "combine their results": "all-reduce communication",
    "share their results": "all-reduce communication",
    "between gpus": "communication nvlink interconnect",
    "between the gpus": "communication nvlink interconnect",
    # Pipeline parallelism: layers placed on different GPUs or machines.
    "layers on different": "pipeline parallelism stages",
    "several machines": "pipeline parallelism across nodes",
    # Quantization: shrinking the model's stored numbers.
    "shrink the model": "quantization weights",
    "compress the model": "quantization weights",
    "smaller format": "quantization lower precision",
    "rougher format": "quantization lower precision",
    "lower-precision": "quantization",
    "16-bit": "bf16 fp16",
    "full-precision": "fp32",
    "lose accuracy": "accuracy quantization",
    "lose quality": "accuracy quantization",
    # Grouped-query attention.
    "grouped attention": "gqa grouped-query attention",
    # Occupancy: how many workers the chip keeps busy at once.
    "workers fit": "occupancy resident warps",
    "keep the chip busy": "occupancy sms",
    # Tail latency: the rare slow replies.
    "rare slowdowns": "p99 tail latency",
    "occasional slowdowns": "p99 tail latency",
    # Preemption and admission control: chats pushed out or turned away when memory runs short.
    "out of room": "memory capacity kv cache preempt",
    "kicked out": "preempt preemption",
    "turn away": "admission control",
    # Profilers: the timing chart of what ran when.
    "timing chart": "nsight systems timeline profiler",
    "timing tool": "nsight profiler",
    # torch.compile recompiles: freezing on an unusual length or a new input size.
    "unusual length": "recompiles torch.compile new shape",
    "new input size": "recompiles torch.compile new shape",
    # Warm-up: slow first answers right after a restart.
    "after a restart": "warm-up compile cache",
}
_EVERYDAY = sorted(EVERYDAY.items(), key=lambda kv: -len(kv[0]))
# Tensor cores, as a newcomer hears of them: special or dedicated circuits, units, parts or hardware, "AI cores",
# "parts just for AI maths". Not "AI chips", which are the accelerators themselves.
_TENSOR_CORE_WORDS = "circuits?|circuitry|units?|hardware|parts?|cores?|chips?|blocks?|engines?"
_TENSOR_CORES = re.compile(
    rf"\b(?:special(?:i[sz]ed)?|dedicated)\s+(?:(?!memory|storage|ram\b|cache)[\w-]+\s+){{0,2}}(?:{_TENSOR_CORE_WORDS})\b|"
    rf"\b(?:ai|matrix)\s+(?:maths?\s+(?:{_TENSOR_CORE_WORDS})|(?!chips?\b)(?:{_TENSOR_CORE_WORDS}))\b|"
    rf"\b(?:{_TENSOR_CORE_WORDS})\s+(?:(?:just|only|made|built)\s+){{0,2}}for\s+(?:ai|matrix|matrices)\b",
    re.IGNORECASE,
)
# A branch on a thread's index taken apart within a warp ("if (threadIdx.x % 2)", "branching on lane % 2"): the
# code idiom of warp divergence, whatever words come with it.
_DIVERGENT_BRANCH = re.compile(
    r"\b(?:if|branch\w*|else)\b.{0,60}?\b(?:threadidx(?:\.[xyz])?|lane|tid)\s*%\s*(?!32\b)\d"
    r"|\b(?:threadidx(?:\.[xyz])?|lane|tid)\s*%\s*(?!32\b)\d+.{0,60}?\b(?:if|branch\w*|else)\b",
    re.IGNORECASE | re.DOTALL,
)
# Several steps made into one ("combining a few small steps into one", "merge these ops into a single one"), or the
# programs made so ("these combined speedy programs"): fusion.
_INTO_ONE = re.compile(
    r"\b(?:combin|merg|glu|squash|squeez|join)\w*\s+(?:[\w-]+\s+){0,4}?(?:steps?|operations?|ops|jobs|stages?)\s+"
    r"(?:[\w-]+\s+){0,2}?into\s+(?:one|a\s+single)\b"
    r"|\b(?:combined|merged|glued|squashed)\s+(?:[\w-]+\s+){0,2}?(?:programs?|steps?|operations?|ops|jobs|routines?)\b",
    re.IGNORECASE,
)
# How a newcomer's picture of a mechanism reads, whatever the picture (a kitchen, a warehouse, a post office), and
# the course's terms for that mechanism. Each asks for the shape of the situation, not for its nouns.
_PREP = (
    r"(?:start|begin|prep|prepar|chop|cut|fetch|load|grab|get|wash|fold|bring|order|measur|mix|set|lay|queue|stag"
    r"|pick|pull)\w*"
)
_MECHANISMS = [
    # Taking in the message quickly but writing the reply slowly ("reads my whole paste almost instantly but writes
    # back slowly"): prefill against decode.
    (
        re.compile(
            r"^(?=.*\b(?:fast|faster|quick\w*|instant\w*|slow\w*)\b)(?:.*\bread(?:s|ing)?\b.*\b(?:writ(?:e|es|ing)|typ(?:e|es|ing)"
            r"|repl(?:y|ies|ying))\b|.*\b(?:writ(?:e|es|ing)|typ(?:e|es|ing)|repl(?:y|ies|ying))\b.*\bread(?:s|ing)?\b)",
            re.IGNORECASE | re.DOTALL,
        ),
        "prefill decode compute-bound memory-bound",
    ),
    # A service slower late in the day than in the morning ("slower by the afternoon", "sluggish as the day goes on",
    # "after a few hours of traffic"): what builds up over hours of serving.
    (
        re.compile(
            r"\b(?:by|towards?|until|till)\s+(?:the\s+)?(?:afternoon|evening|night|end\s+of\s+the\s+day"
            r"|lunch\w*|midday)\b|\bas\s+the\s+day\s+(?:goes|wears)\s+on\b"
            r"|\b(?:after|over)\s+(?:a\s+(?:few|couple\s+of)\s+|several\s+|many\s+)?hours\b",
            re.IGNORECASE,
        ),
        "slower over hours",
    ),
    # Threads moving as a squad, each doing the same move at the same moment ("little squads that all have to do the
    # same move at once, like a rowing crew"): a warp, 32 threads issued one instruction together.
    (
        re.compile(
            r"\b(?:threads|workers)\s+in\s+(?:\w+\s+){0,2}?(?:squads|teams|crews|gangs|packs|groups|bunches|troops)\b"
            r"|\b(?:squads|teams|crews|gangs|packs|bunches|troops)\s+of\s+(?:\w+\s+)?(?:threads|workers)\b"
            r"|\b(?:same|identical)\s+(?:move|step|instruction|motion|stroke|command)s?\b[^.?!]{0,20}\b(?:at\s+once"
            r"|at\s+the\s+same\s+(?:time|moment)|together|simultaneously|in\s+sync|in\s+unison)\b",
            re.IGNORECASE,
        ),
        "warp 32 threads one instruction lockstep simt",
    ),
    # Getting the next thing ready while the current one is worked on ("while my pasta boils I chop the next
    # veggies", "start the next load washing while you fold the last one"): overlap, prefetching the next tile.
    (
        re.compile(
            rf"\bwhile\b[^.?!]{{0,60}}\b{_PREP}\s+(?:[\w'-]+\s+){{0,5}}?next\b"
            rf"|\b{_PREP}\s+(?:[\w'-]+\s+){{0,5}}?next\b[^.?!]{{0,60}}\bwhile\b",
            re.IGNORECASE,
        ),
        "overlap prefetch next tile software pipelining",
    ),
    # Learning where to go next only once the current trip is over ("I only find out the next street after the
    # last parcel shows up"): dependent loads, the latency memory wall.
    (
        re.compile(
            r"\b(?:only|not|never|can'?t|cannot)\s+(?:\w+\s+){0,2}?(?:find\w*\s+out|learn\w*|know\w*|discover\w*)\b"
            r"[^.?!]{0,40}\bnext\b[^.?!]{0,60}\b(?:after|until|till|once)\b",
            re.IGNORECASE,
        ),
        "dependent loads pointer chasing latency irregular access memory wall",
    ),
    # The road is empty yet everything is late ("the delivery trucks are mostly empty", "the conveyor belts sit
    # idle"): bandwidth to spare, latency the limit.
    (
        re.compile(
            r"\b(?:trucks?|vans?|belts?|conveyors?|roads?|highways?|pipes?|lanes)\b[^.?!]{0,50}\b(?:empty|idle|quiet)\b",
            re.IGNORECASE,
        ),
        "hbm far from busy latency irregular access memory wall",
    ),
    # Looking up where a thing is before fetching it ("look up each item's shelf number in a catalogue before
    # walking over"): an indirection, a dependent load.
    (
        re.compile(r"\blook\w*\s+up\b[^.?!]{0,80}\bbefore\b", re.IGNORECASE),
        "indirection lookup dependent loads latency irregular access memory wall",
    ),
    # A fast worker handed one small order at a time, standing around in between: launch overhead.
    (
        re.compile(
            r"\bone\s+(?:\w+\s+){0,2}?(?:order|ticket|slip|task|instruction|job|chore|note)s?\s+at\s+a\s+time\b"
            r"(?=.*\b(?:stand\w*\s+around|idle|wait\w*|sits?\s+around|twiddl\w*|bored)\b)",
            re.IGNORECASE | re.DOTALL,
        ),
        "launch overhead launch-bound cpu host gaps gpu idle",
    ),
    # Taking the half-done work away to storage between steps and fetching it back ("putting everything back in the
    # fridge in between", "ships everything to a warehouse, then step B fetches it back", "every op is a trip to the
    # fridge"): an intermediate's HBM round trip, what fusion removes.
    (
        re.compile(
            r"\b(?:back\s+(?:in|into|on|to)|trips?\s+to|(?:ship|send|haul|driv|carr|tak)\w*\s+(?:[\w'-]+\s+){0,3}?to)\s+"
            r"(?:the\s+|a\s+)?(?:fridge|freezer|warehouse|storage|storeroom|cupboard|pantry|cellar|basement|depot)\b",
            re.IGNORECASE,
        ),
        "intermediate hbm round trip write read back fusion",
    ),
    # A work surface too small to hold what is being worked on: the working set outgrows the cache.
    (
        re.compile(
            r"\b(?:desk|workbench|bench|counter|table|worktop)\s+is\s+(?:too\s+small|tiny|full)\b", re.IGNORECASE
        ),
        "working set larger than the cache evicted locality reuse",
    ),
    # More or faster workers that would not help, because supplies arrive too slowly: bandwidth-bound, the roofline.
    (
        re.compile(
            r"\b(?:faster|more|bigger|better|stronger|extra)\s+(?:machines?|workers?|cooks?|chefs?|engines?|ovens?)\b"
            r"[^.?!]{0,60}\b(?:nothing|no\s+(?:help|use|good|difference)|(?:doesn'?t|does\s+not|won'?t|wouldn'?t)\s+help"
            r"|pointless|useless)\b",
            re.IGNORECASE,
        ),
        "bandwidth-bound memory-bound roofline bandwidth roof compute roof",
    ),
    # One trip carrying many riders, the cost shared among them: batching, the weights read once per step.
    (
        re.compile(
            r"\b(?:bus|train|coach|carpool|ferry|elevator|lift|plane)\b[^.?!]{0,60}\b(?:many|lots\s+of|more|several"
            r"|full\s+of|all\s+the)\s+(?:passengers|people|riders|travell?ers)\b",
            re.IGNORECASE,
        ),
        "batching batch weights read once per step decode",
    ),
    # The whole route driven for one parcel: each decode step reads every weight for one token.
    (
        re.compile(
            r"\b(?:whole|full|entire)\s+(?:route|trip|journey|library|warehouse|catalog\w*)\b[^.?!]{0,60}\b"
            r"(?:one|single|each|every)\s+(?:parcel|package|book|item|word|letter|customer|order)\b",
            re.IGNORECASE,
        ),
        "decode weights read every token memory-bound batch",
    ),
    # A running best and a running total kept over a pile taken a stack at a time: the online softmax.
    (
        re.compile(r"\brunning\s+(?:best|max\w*|highest|top|total|sum|tally)\b", re.IGNORECASE),
        "online softmax running max running sum rescale tiles",
    ),
    # Half of a group wanting one thing and the other half another: warp divergence.
    (
        re.compile(
            r"\bhalf\b[^.?!]{0,40}\b(?:want|go|do|take|choose|pick|turn)\w*\b[^.?!]{0,60}\b(?:other|rest)\s+"
            r"(?:half|of\s+them)\b",
            re.IGNORECASE,
        ),
        "warp divergence branches both paths one after the other",
    ),
    # A helper that moves whole chunks so the workers need not: TMA's bulk copies.
    (
        re.compile(
            r"\b(?:helper|assistant|mover|courier|forklift)\b[^.?!]{0,60}\b(?:moves?|carr(?:y|ies)|copies|ships?"
            r"|hauls?)\b[^.?!]{0,40}\b(?:chunks?|blocks?|tiles?|boxes|loads)\b",
            re.IGNORECASE,
        ),
        "tma tensor memory accelerator bulk copy",
    ),
    # Two copies of a small workspace, one filled while the other is used: double buffering.
    (
        re.compile(
            r"\btwo\s+(?:copies|sets|versions)\s+of\s+(?:its\s+|the\s+|their\s+|a\s+)?(?:\w+\s+){0,2}?"
            r"(?:workspace|buffer|scratch\w*|tray|desk|board)s?\b",
            re.IGNORECASE,
        ),
        "double buffering two shared-memory buffers overlap",
    ),
    # Everyone sent to the same one of many counters ("they all pile up at one counter", "everybody lining up at
    # the same checkout"): a bank conflict.
    (
        re.compile(
            r"\b(?:all|everyone|everybody|every\s+\w+)\b[^.?!]{0,80}\b(?:same|one|single)\s+"
            r"(?:counter|checkout|cashier|till|window|desk|teller|booth|gate|register)s?\b",
            re.IGNORECASE,
        ),
        "bank conflict same bank serialized",
    ),
]
EVERYDAY_WORDS = frozenset(
    [
        *(word for phrase in EVERYDAY for word in phrase.split()),
        *("special", "specialized", "specialised", "dedicated", "circuit", "circuits", "circuitry", "matrix"),
    ]
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")

# Everyday words that pyspellchecker's frequency list (built from older text) lacks, and chat shorthand:
# without them "app" or "hw" would be taken for a subject the course does not cover.
NEWER_EVERYDAY_WORDS = [
    *("app", "apps", "smartphone", "smartphones", "wifi", "hw", "sw", "pls", "thx", "btw", "idk"),
    *("plz", "btwn", "meh", "ok", "dev", "devs", "mem", "ml", "gotcha", "gotchas"),
    *("tbh", "imo", "imho", "afaik", "iirc", "fwiw", "ngl", "nvm", "lol", "eli5", "cuz", "smth", "sth", "ppl", "rn"),
    *("wtf", "omg", "smh", "lmao", "bruh", "noob", "noobs", "n00b", "newb", "newbie", "newbies"),
    *("pseudocode", "snippet", "snippets"),  # the form of an answer, not a subject
]

_english_lock = threading.Lock()
_english: SpellChecker | None = None


def course_words(texts: list[str], pairs: Counter) -> frozenset[str]:
    """The lower-cased words of four letters or more that the course's texts use (answer_plan caches them),
    and, spelt with a space ("flash attention"), the two-word forms of the names the course writes as one
    word more often than as two (see split_names)."""
    words = frozenset(w.lower() for text in texts for w in _WORD.findall(text))
    return words | split_names(texts, words, pairs)


_PLAIN = re.compile(r"[A-Za-z]+")


def split_names(texts: list[str], words: frozenset[str], pairs: Counter) -> frozenset[str]:
    """ "flash attention" for the course's "FlashAttention": two English words that the course joins into a
    name of its own, and writes joined more often than apart ("CUDA graph", though the course's code says
    `CUDAGraph`, stays two words). `pairs`: course_pairs of the same texts."""
    joined = Counter(w.lower() for text in texts for w in _PLAIN.findall(text) if len(w) >= 7)
    out = set()
    for word, uses in joined.items():
        if english().known([word]):
            continue
        for cut in range(3, len(word) - 2):
            pair = f"{word[:cut]} {word[cut:]}"
            if english().known([word[:cut], word[cut:]]) == {word[:cut], word[cut:]} and uses > pairs[pair]:
                out.add(pair)
    return frozenset(p for p in out if p.replace(" ", "") in words)


def english() -> SpellChecker:
    global _english
    if _english is None:
        with _english_lock:
            if _english is None:
                checker = SpellChecker()
                for word in NEWER_EVERYDAY_WORDS:
                    checker.word_frequency.add(word, 50_000)  # as common as "online"
                _english = checker
    return _english


# Two letters swapped in a common word ("teh", "hwo", "waht") are put back only when the result is this
# common in English (occurrences in pyspellchecker's list): "tma" must not become "tam".
COMMON_WORD = 1_000_000
_SHORT_LOWER = re.compile(r"\b[a-z]{3,5}\b")
# "how dose it work?": a real word typed for "does", which no spelling check catches.
_DOSE = re.compile(
    r"\b(how|what|why|where|when|which|who|so|and|but)\s+dose\b|\bdose(?=\s+(?:it|this|that|the|a|an|my|your)\b)",
    re.IGNORECASE,
)


def _swapped(word: str) -> str | None:
    """The common English word that `word` is with two neighbouring letters swapped, if any."""
    frequency = english().word_frequency
    swaps = {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}
    best = max(swaps, key=lambda w: frequency[w])  # "hwo": "how" rather than "who"
    return best if frequency[best] >= COMMON_WORD else None


class _LetterCounts:
    """A word list with each word's count of every letter the list uses, as one matrix: difflib's second test
    (quick_ratio, the letters two words share whatever their order) for all of them in one numpy step."""

    def __init__(self, words: frozenset[str]):
        self.words = sorted(words)
        self.letters = {c: i for i, c in enumerate(sorted({c for w in self.words for c in w}))}
        self.counts = np.zeros((len(self.words), len(self.letters)), dtype=np.int16)
        for row, w in enumerate(self.words):
            for c in w:
                self.counts[row, self.letters[c]] += 1
        self.lengths = np.array([len(w) for w in self.words], dtype=np.float64)

    def passing_quick_ratio(self, word: str, cutoff: float) -> list[str]:
        """The words whose quick_ratio with `word` reaches the cut-off (and so their real_quick_ratio, never
        lower): the only ones get_close_matches goes on to compare letter by letter."""
        mine = np.zeros(len(self.letters), dtype=np.int16)
        for c in word:
            if c in self.letters:
                mine[self.letters[c]] += 1
        shared = np.minimum(self.counts, mine).sum(axis=1)
        quick = 2.0 * shared / (self.lengths + len(word))
        return [self.words[i] for i in np.flatnonzero(quick >= cutoff - 1e-9)]


@functools.lru_cache(maxsize=8)
def _letter_counts(words: frozenset[str]) -> _LetterCounts:
    return _LetterCounts(words)


@functools.lru_cache(maxsize=4096)
def close_words(word: str, words: frozenset[str], *, n: int, cutoff: float) -> tuple[str, ...]:
    """difflib.get_close_matches(word, words, n, cutoff), remembered (a question's rare words are checked more
    than once, and learners repeat their words), and asked only of the words that pass its cheaper tests:
    a Python-level pass of those over a course's thousands of words took longer than the rest of a typo check."""
    pool = _letter_counts(words).passing_quick_ratio(word, cutoff)
    return tuple(difflib.get_close_matches(word, pool, n=n, cutoff=cutoff))


def typo_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal string alignment
    distance. difflib's ratio, which finds the close words, counts shared letters in order and so takes an
    anagram-like name ("postgres", "progress") for a slip."""
    previous, current = [], list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        before, previous, current = previous, current, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
    return current[len(b)]


def is_slip(typed: str, word: str) -> bool:
    """`typed` could be `word` mistyped (TYPO_EDITS), or is `word` with an ending ("threadidx") or cut short."""
    return typed.startswith(word) or word.startswith(typed) or typo_distance(typed, word) <= TYPO_EDITS


def fix_typos(question: str, words: frozenset[str]) -> str:
    def fix(m: re.Match) -> str:
        word = m.group(0).rstrip("'-")  # a closing quote or dash is not part of the word: "'induction heads'"
        tail = m.group(0)[len(word) :]
        lower = word.lower().removesuffix("'s")
        if lower in words or english().known([lower]):
            return word + tail
        candidates = close_words(lower, words, n=3, cutoff=TYPO_CUTOFF)
        close = [w for w in candidates if w[0] == lower[0] and is_slip(lower, w.lower())]
        return (close[0] if close else word) + tail

    def unswap(m: re.Match) -> str:
        word = m.group(0)
        if word in words or english().known([word]):
            return word
        return _swapped(word) or word

    question = _DOSE.sub(lambda m: f"{m.group(1)} does" if m.group(1) else "does", question)
    return _WORD.sub(fix, _SHORT_LOWER.sub(unswap, question))


# A course phrase that a mistyped word is put back into: the course writes it at least this often, and never
# writes the pair as typed ("shard memory" -> "shared memory").
PHRASE_USES = 20

# Short forms learners type for names the course writes out: "FA3" is FlashAttention-3, "gmem" global memory. Read
# as the course's names, they are matched, and not named as something the course does not cover.
_SHORT_FORMS = [
    (re.compile(r"\bFA-?\s?([123])\b", re.IGNORECASE), r"FlashAttention-\1"),
    (re.compile(r"\bFA\b"), "FlashAttention"),  # in capitals: "fa" is no name
    (re.compile(r"\bgmem\b", re.IGNORECASE), "global memory"),
]


def expand_short_forms(question: str) -> str:
    """ "what about FA3?" -> "what about FlashAttention-3?" (see _SHORT_FORMS)."""
    for pattern, name in _SHORT_FORMS:
        question = pattern.sub(name, question)
    return question


def course_pairs(texts: list[str]) -> Counter:
    """How often the course's texts write each pair of neighbouring words (lower case)."""
    pairs: Counter = Counter()
    for text in texts:
        plain = [w.lower() for w in _PLAIN.findall(text)]
        pairs.update(f"{a} {b}" for a, b in zip(plain, plain[1:], strict=False))
    return pairs


def fix_phrases(question: str, words: frozenset[str], pairs: Counter) -> str:
    """ "shard memory" -> "shared memory", "sharde memory" -> "shared memory": a word one edit away from a word
    that the course writes with its neighbour as a phrase of its own (PHRASE_USES), where the course never
    writes the pair as typed, and only towards a word more common in English than the one typed. A real word
    typed for another ("shard") is caught too, which no spelling check does; the phrase the course uses
    decides, not the word alone."""
    found = list(_PLAIN.finditer(question))
    frequency = english().word_frequency
    fixes: dict[int, str] = {}
    for (i, a), b in zip(enumerate(found), found[1:], strict=False):
        first, second = a.group(0).lower(), b.group(0).lower()
        if pairs[f"{first} {second}"] or len(first) < 4 or len(second) < 4:
            continue
        for at, typed, phrase in ((i, first, "{} " + second), (i + 1, second, first + " {}")):
            # Only towards a word more common in English than the one typed: "shard" -> "shared", not "memory
            # will" -> "memory wall".
            candidates = [
                w
                for w in english().edit_distance_1(typed)
                if w in words and w != typed and frequency[w] > frequency[typed]
            ]
            best = max(candidates, key=lambda w: pairs[phrase.format(w)], default=None)
            if best and pairs[phrase.format(best)] >= PHRASE_USES and at not in fixes:
                fixes[at] = best
                break
    out = question
    for at in sorted(fixes, reverse=True):
        m = found[at]
        out = out[: m.start()] + fixes[at] + out[m.end() :]
    return out


# "In one go" means fusion when it is steps that are done in one go, not when it is the text: "the whole prompt in
# one go" is prefill, "the reply all at once" is decode. Their terms are left out when the message names the text.
_ABOUT_THE_TEXT = re.compile(r"\b(?:prompts?|repl(?:y|ies)|answers?|responses?|documents?|outputs?|texts?)\b")
_ONLY_FOR_STEPS = frozenset({"in one go", "all at once"})
# "the GPU keeps waiting" is a GPU left idle between launches; "a kernel that keeps waiting on scattered loads"
# names what it waits for, and that, not idleness, is its subject.
_WAITS_ON_SOMETHING = re.compile(r"\bkeeps waiting\s+(?:on|for)\b")
# "split the model over 4 GPUs" glosses as tensor parallelism, the usual way to do it; a learner who names the
# kind of split ("... with pipeline parallelism") has said which one, and the gloss would only pull the other.
_NAMES_ITS_PARALLELISM = re.compile(r"\b(?:pipeline|tensor|expert|data|sequence|context)[\s-]+parallel", re.I)
# "at the same time" is batching when it is people or requests served together ("lots of users asking at the same
# time"), not when it is the hardware's parts working in parallel or a meter that reads busy and slow at once.
# "out of memory" is a GPU that ran out, except where something is read or fetched out of memory ("it hauls the whole
# model out of memory for every word"): that is where the bytes come from, not a lack of room.
_FETCHED_FROM_MEMORY = re.compile(
    r"\b(?:read|reads|reading|haul\w*|fetch\w*|load\w*|pull\w*|stream\w*|cop(?:y|ies|ying)|bring\w*|get|gets|getting)\b"
    r"(?:\s+[\w'-]+){0,6}?\s+out of memory\b"
)
_SERVED_TOGETHER = re.compile(
    r"\b(?:people|persons?|users?|requests?|chats?|conversations?|customers?|clients?|everyone|everybody|"
    r"messages?|questions?|queries|prompts?|sequences?)\b",
    re.IGNORECASE,
)


# A matrix or vector size as a learner writes it: "K=8190", "8192x8190", "the inner dim is 8190", "a vocab of
# 50,257"; and two sizes side by side, "from 8192 to 8190".
_SIZE = re.compile(
    r"\b[kmn]\s*=\s*(\d[\d,]*)"
    r"|\b(\d[\d,]*)\s*[x×]\s*(\d[\d,]*)(?:\s*[x×]\s*(\d[\d,]*))?"
    r"|\b(?:dims?|dimensions?|hidden|vocab\w*|shapes?|sizes?|widths?)\b\D{0,20}?(\d[\d,]*)",
    re.IGNORECASE,
)
_TWO_SIZES = re.compile(r"\b(\d[\d,]*)\s+(?:to|instead\s+of|vs\.?|versus|and)\s+(\d[\d,]*)\b", re.IGNORECASE)
UNALIGNED = "not a multiple of 8 alignment"


def _names_an_unaligned_size(question: str) -> bool:
    """Whether the message gives a matrix size that is not a multiple of 8 ("K=8190", "a vocab of 50,257"): the
    tensor cores' alignment rule is then what it is about, whatever else it describes."""
    sizes = [int(g.replace(",", "")) for m in _SIZE.finditer(question) for g in m.groups() if g]
    for m in _TWO_SIZES.finditer(question):
        a, b = (int(g.replace(",", "")) for g in m.groups())
        if (a % 64 == 0 or b % 64 == 0) and abs(a - b) <= max(a, b) // 50:
            sizes += [a, b]  # "8192 to 8190": one aligned, the other a hair away from it
    return any(n >= 64 and n % 8 for n in sizes)


def mechanism_terms(text: str) -> list[str]:
    """The course's terms for each mechanism the text pictures (see _MECHANISMS)."""
    return [terms for pattern, terms in _MECHANISMS if pattern.search(text)]


def add_course_terms(question: str) -> str:
    lower = question.lower()
    about_the_text = bool(_ABOUT_THE_TEXT.search(lower))
    extra = [
        terms
        for phrase, terms in _EVERYDAY
        if re.search(rf"\b{re.escape(phrase)}\b", lower)
        and not (about_the_text and phrase in _ONLY_FOR_STEPS)
        and not (phrase == "keeps waiting" and _WAITS_ON_SOMETHING.search(lower))
        and not (terms.endswith("parallelism") and _NAMES_ITS_PARALLELISM.search(lower))
        and not (phrase == "at the same time" and not _SERVED_TOGETHER.search(lower))
        and not (phrase == "out of memory" and _FETCHED_FROM_MEMORY.search(lower))
    ]
    if _TENSOR_CORES.search(question):
        extra.append("tensor cores")
    if _DIVERGENT_BRANCH.search(question):
        extra.append("warp divergence")
    if _INTO_ONE.search(question):
        extra.append("fused kernel fusion")
    if _names_an_unaligned_size(question):
        extra.append(UNALIGNED)
    extra += mechanism_terms(question)
    return f"{question} {' '.join(extra)}" if extra else question


_PAIR = re.compile(r"\b([A-Za-z]{3,})[ \t-]+([A-Za-z]{3,})\b")


def join_split_names(question: str, words: frozenset[str]) -> str:
    """ "flash attention" -> "FlashAttention", "paged attention" -> "PagedAttention": two words that the course
    writes as one name (see split_names). Matching then sees the name the course uses, not two common words
    that miss it."""

    def join(m: re.Match) -> str:
        first, second = m.group(1), m.group(2)
        if f"{first} {second}".lower() in words:
            return first[:1].upper() + first[1:] + second[:1].upper() + second[1:]
        return m.group(0)

    return _PAIR.sub(join, question)


def rewrite(question: str, words: frozenset[str]) -> str:
    """The question for matching: course terms added for everyday words, typos fixed, and split names joined."""
    return join_split_names(fix_typos(add_course_terms(question), words), words)
