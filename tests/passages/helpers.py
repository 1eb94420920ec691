"""Helpers of the passage tests: corpora as JSONL, a bag-of-words embedder."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

DIM = 64


def bag_vector(text: str) -> list[float]:
    """A deterministic bag-of-words vector (each word hashed into one of DIM buckets): texts
    sharing words are close, as a real embedder's would be, at no cost."""
    text = re.sub(r"^(query|passage): ", "", text)
    vec = np.zeros(DIM)
    for word in re.findall(r"\w+", text.lower()):
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
    vec[0] += 0.01
    return vec.tolist()


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
