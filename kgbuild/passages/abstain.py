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
   In a batch of questions, a name that many of them use and the corpus lacks (at least
   ``SHARED`` questions and 2 % of the batch: a news source the corpus keeps outside its
   text, say) says how the corpus was written, not that each question is unanswerable: it
   is left out of this step (:func:`shared_unknown`).
2. **evidence** (``weak-evidence``): the question names no passage's title and neither
   signal stands out: the best dense score is less than ``min_dense_z`` standard
   deviations above the mean of the visible passages, and the best BM25 score less than
   ``min_bm25_z``. Calibrated on the visible set with each question's gold passages hidden
   (a question the corpus cannot answer, with its near misses still there): at 4.5 and 9.0
   no answerable question abstains and 21 of 100 gold-hidden ones do (the names step
   catches none of those: their names are still mentioned elsewhere). The highest of N
   z-scores grows like sqrt(2 ln N), so the thresholds are scaled by that from the visible
   set's 994 passages to the principal's visible count; below 100 visible passages there is
   no population to stand out from and the step does not run, nor with dense search off.

Ranked passages are still listed with an abstention (``passages``), so a caller can see what
came closest; ``--format context`` prints none.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .lexical import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)
SHARED = 3  # questions of a batch sharing an unknown name before it is the corpus's gap
SHARED_SHARE = 0.02
MIN_DENSE_Z = 4.5
MIN_BM25_Z = 9.0
CALIBRATED_AT = 994  # passages of the set the thresholds were calibrated on
MIN_POPULATION = 100


@dataclass
class AbstainPolicy:
    """When to abstain (see the module docstring); ``enabled=False`` never abstains."""

    enabled: bool = True
    unknown_names: bool = True
    min_dense_z: float = MIN_DENSE_Z
    min_bm25_z: float = MIN_BM25_Z


def name_words(question: str) -> list[str]:
    """The words of ``question`` that name something: capitalised after the first word, or
    mixing letters and digits; stop words left out. Each once, in order."""
    out: list[str] = []
    for i, match in enumerate(_WORD.finditer(question)):
        word = match.group()
        if word.lower() in STOPWORDS or len(word) < 2 or "_" in word or (
                word.isupper() and len(word) < 3):  # US, UK: spelled out as often as not
            continue
        named = (i > 0 and word[0].isupper()) or (
            any(c.isdigit() for c in word) and any(c.isalpha() for c in word))
        if named and word not in out:
            out.append(word)
    return out


def shared_unknown(questions: list[str], knows_word) -> set[str]:
    """The names that at least :data:`SHARED` questions and 2 % of ``questions`` use and
    ``knows_word`` does not know (see the module docstring)."""
    if len(questions) < SHARED:
        return set()
    counts: dict[str, int] = {}
    for q in questions:
        for w in set(name_words(q)):
            counts[w] = counts.get(w, 0) + 1
    least = max(SHARED, math.ceil(SHARED_SHARE * len(questions)))
    return {w for w, c in counts.items() if c >= least and not knows_word(w)}


def decide(policy: AbstainPolicy, question: str, lexical_z: np.ndarray,
           dense_z: np.ndarray | None, has_seed: bool, retriever) -> dict | None:
    """None, or ``{step, reason, message, ...}`` saying which step found no evidence."""
    if not policy.enabled:
        return None
    if retriever.n_visible == 0:
        return {"step": "corpus", "reason": "empty", "message": "no passage is visible"}
    if policy.unknown_names:
        unknown = [w for w in name_words(question)
                   if w not in retriever.shared_unknown and not retriever.knows_word(w)]
        if unknown:
            shown = ", ".join(repr(w) for w in unknown[:5])
            return {"step": "names", "reason": "unknown-name", "names": unknown,
                    "message": f"the question names {shown}, which no passage mentions"}
    n = retriever.n_visible
    if has_seed or dense_z is None or n < MIN_POPULATION:
        return None
    scale = math.sqrt(math.log(n) / math.log(CALIBRATED_AT))
    min_dense, min_lexical = policy.min_dense_z * scale, policy.min_bm25_z * scale
    best_dense, best_lexical = _best(dense_z), _best(lexical_z)
    if best_dense < min_dense and best_lexical < min_lexical:
        return {"step": "evidence", "reason": "weak-evidence", "dense_z": round(best_dense, 3),
                "bm25_z": round(best_lexical, 3),
                "message": f"no passage is named and none stands out (best dense "
                           f"{best_dense:.2f} and BM25 {best_lexical:.2f} standard deviations "
                           f"above the mean, below {min_dense:.2f} and {min_lexical:.2f})"}
    return None


def _best(z: np.ndarray) -> float:
    finite = z[np.isfinite(z)]
    return float(finite.max()) if len(finite) else 0.0
