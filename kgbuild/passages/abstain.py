"""Abstention: saying the corpus holds no evidence instead of padding the context.

A question is answered from passages about the things it names. Two steps can find that
the corpus has none, and the answer says which:

1. **names** (``unknown-name``): the question names something (a word written with a
   capital letter after the first word, or a word mixing letters and digits: the proper
   names and identifiers of English text) that no passage the principal sees contains, not
   even as a near spelling (one edit for short words, two for long ones: a typo is not an
   unknown name). A corpus that never mentions "Zorblatt Industries" cannot say what
   Zorblatt Industries reported. Measured on the visible set: 2 of 100 answerable questions
   name a word the corpus lacks, both typos the near-spelling check forgives.
2. **evidence** (``weak-evidence``): the question names no passage's title and neither
   signal stands out: the best dense score is less than ``min_dense_z`` standard
   deviations above the corpus's mean and no passage shares a rare word with it (the best
   BM25 score under ``min_bm25``). The thresholds are calibrated on the visible questions
   with their gold passages hidden (``bench/passages_quality.py --abstain``), set where no
   answerable visible question abstains.

Ranked passages are still listed with an abstention (``passages``), so a caller can see what
came closest; ``--format context`` prints none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .lexical import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)
MIN_DENSE_Z = 3.0
MIN_BM25 = 0.0  # 0: the evidence step needs the lexical signal to be absent altogether


@dataclass
class AbstainPolicy:
    """When to abstain (see the module docstring); ``enabled=False`` never abstains."""

    enabled: bool = True
    unknown_names: bool = True
    min_dense_z: float = MIN_DENSE_Z
    min_bm25: float = MIN_BM25


def name_words(question: str) -> list[str]:
    """The words of ``question`` that name something: capitalised after the first word, or
    mixing letters and digits; stop words left out. Each once, in order."""
    out: list[str] = []
    for i, match in enumerate(_WORD.finditer(question)):
        word = match.group()
        if word.lower() in STOPWORDS or len(word) < 2 or "_" in word:
            continue
        named = (i > 0 and word[0].isupper()) or (
            any(c.isdigit() for c in word) and any(c.isalpha() for c in word))
        if named and word not in out:
            out.append(word)
    return out


def decide(policy: AbstainPolicy, question: str, bm: np.ndarray, cos: np.ndarray | None,
           dense_z: np.ndarray | None, has_seed: bool, retriever) -> dict | None:
    """None, or ``{step, reason, message, ...}`` saying which step found no evidence."""
    if not policy.enabled:
        return None
    if retriever.n_visible == 0:
        return {"step": "corpus", "reason": "empty", "message": "no passage is visible"}
    if policy.unknown_names:
        unknown = [w for w in name_words(question) if not retriever.knows_word(w)]
        if unknown:
            shown = ", ".join(repr(w) for w in unknown[:5])
            return {"step": "names", "reason": "unknown-name", "names": unknown,
                    "message": f"the question names {shown}, which no passage mentions"}
    if has_seed:
        return None
    best_bm = float(bm[np.isfinite(bm)].max()) if np.isfinite(bm).any() else 0.0
    if dense_z is not None:
        finite = dense_z[np.isfinite(dense_z)]
        best_z = float(finite.max()) if len(finite) else 0.0
        if best_z < policy.min_dense_z and best_bm <= policy.min_bm25:
            return {"step": "evidence", "reason": "weak-evidence",
                    "dense_z": round(best_z, 3), "bm25": round(best_bm, 3),
                    "message": f"no passage stands out (best dense score {best_z:.2f} standard "
                               f"deviations above the mean, below {policy.min_dense_z:g}; no "
                               f"passage shares a content word)"}
    elif best_bm <= policy.min_bm25:
        return {"step": "evidence", "reason": "weak-evidence", "bm25": round(best_bm, 3),
                "message": "no passage shares a content word with the question"}
    return None
