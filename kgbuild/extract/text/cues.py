"""Relation cues: the words that say which relation a quote states.

A quote can name both ends of a relation and still state another one ("produced by X" is
no evidence that X is a *cast member*). A predicate's **cues** are the content words of
everything the schema says about it: its name (``musicComposer`` -> music, composer), its
inverse's name, its description's label and text, and an optional ``cues:`` list in the
schema YAML (``schema import`` fills it from ``rdfs:label``, ``skos:altLabel`` and
``rdfs:comment``). A quote carries a cue when one of its words has the same **root** as a
cue word.

Roots come from a small English morphology (:func:`root`), not a stemmer: relation words are
mostly verbs and the nouns made from them, and a cue must join the agent noun, the action
noun and the verb's forms (direct / directs / directed / directing / director / direction;
produce / producer / production; star / starring / starred). A Snowball stemmer keeps
``director`` apart from ``direct`` and ``wrote`` apart from ``write``, which is exactly the
join a cue needs, so :func:`root` strips inflections (-s, -ed, -ing, with a doubled
consonant undone), a few derivational suffixes that turn a verb into a noun for the one
who does it or the act (-er, -or, -ion, -ment, -ance/-ence, -ship, -ity), and maps the
irregular forms of the English strong verbs (a closed list: wrote/written -> write,
born -> birth, led -> lead) and a few suppletive noun/verb pairs (death/died) onto one root.

Function words (articles, prepositions, pronouns, auxiliaries) are never cues: they occur in
every sentence whatever relation it states.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from functools import lru_cache
from typing import Iterable

__all__ = ["root", "same_root", "content_words", "cue_roots", "CueIndex", "Cue", "STOP_WORDS",
           "predicate_roots", "has_cue", "cues_in", "learn_lexicon", "shipped_lexicon",
           "LEXICON_FILE"]

# Words that carry no relation: articles, prepositions, conjunctions, pronouns, auxiliaries,
# and the generic nouns a schema's names are built with ("name", "type", "number").
STOP_WORDS = frozenset("""
a an the of in on at to for from by with as into onto over under about after before
between through during within without upon via per than then and or nor but not no so
is are was were be been being am has have had having do does did done will would shall
should can could may might must this that these those it its it's he she they them their
his her hers him we us our you your i my me who whom whose which what when where why how
there here also other another some any each every all both either neither one ones such
same own very more most much many few less least only just even still yet s
name names type types number numbers value values code id identifier thing things kind
something someone x y
""".split())

# Irregular forms of English strong verbs and suppletive pairs, onto one root. A closed list
# of the language, not of any data set: the verbs that name relations between things.
_IRREGULAR = {
    "born": "birth", "bore": "birth", "borne": "birth", "birthplace": "birth",
    "wrote": "writ", "written": "writ", "write": "writ", "writes": "writ", "writing": "writ",
    "writer": "writ", "writers": "writ",
    "led": "lead", "leads": "lead", "leading": "lead", "leader": "lead", "leaders": "lead",
    "leadership": "lead",
    "made": "make", "makes": "make", "making": "make", "maker": "make",
    "built": "build", "builds": "build", "building": "build", "builder": "build",
    "sold": "sell", "sells": "sell", "seller": "sell", "sale": "sell", "sales": "sell",
    "bought": "buy", "buys": "buy", "buyer": "buy",
    "won": "win", "wins": "win", "winning": "win", "winner": "win",
    "sang": "sing", "sung": "sing", "sings": "sing", "singer": "sing", "singing": "sing",
    "song": "sing", "songs": "sing",
    "drew": "draw", "drawn": "draw", "draws": "draw", "drawing": "draw",
    "gave": "give", "given": "give", "gives": "give",
    "held": "hold", "holds": "hold", "holder": "hold",
    "knew": "know", "known": "know", "knows": "know", "knowledge": "know",
    "spoke": "speak", "spoken": "speak", "speaks": "speak", "speaker": "speak",
    "speech": "speak",
    "ran": "run", "runs": "run", "running": "run", "runner": "run",
    "grew": "grow", "grown": "grow", "grows": "grow", "growth": "grow",
    "flew": "fly", "flown": "fly", "flies": "fly", "flight": "fly", "flights": "fly",
    "began": "begin", "begun": "begin", "begins": "begin", "beginning": "begin",
    "died": "death", "dies": "death", "die": "death", "dead": "death", "dying": "death",
    "taught": "teach", "teaches": "teach", "teacher": "teach", "teaching": "teach",
    "fought": "fight", "fights": "fight", "fighter": "fight",
    "chose": "choose", "chosen": "choose", "choice": "choose",
    "drove": "drive", "driven": "drive", "driver": "drive",
    "rose": "rise", "risen": "rise",
    "became": "become", "becomes": "become",
    "brought": "bring", "brings": "bring",
    "paid": "pay", "pays": "pay", "payment": "pay",
    "meant": "mean", "means": "mean", "meaning": "mean",
    "lost": "lose", "loses": "lose", "loss": "lose",
    "left": "leave", "leaves": "leave",
    "met": "meet", "meets": "meet", "meeting": "meet",
    "sent": "send", "sends": "send",
    "shot": "shoot", "shoots": "shoot",
    "stood": "stand", "stands": "stand",
    "took": "take", "taken": "take", "takes": "take",
    "told": "tell", "tells": "tell",
    "thought": "think", "thinks": "think",
    "found": "found", "founded": "found", "founding": "found", "founder": "found",
    "founders": "found", "foundation": "found",
    "lived": "live", "lives": "live", "living": "live", "life": "live", "resident": "resid",
    "married": "marri", "marries": "marri", "marry": "marri", "marriage": "marri",
    "wife": "spouse", "husband": "spouse", "spouses": "spouse",
    "children": "child", "daughter": "child", "son": "child", "sons": "child",
    "daughters": "child",
    "people": "person", "persons": "person",
}

_VOWELS = set("aeiouy")


def _fold(word: str) -> str:
    word = unicodedata.normalize("NFKD", word)
    return "".join(c for c in word if not unicodedata.combining(c)).casefold()


@lru_cache(maxsize=65536)
def root(word: str) -> str:
    """The root a word shares with its inflected and derived forms (see the module
    docstring): ``directed``, ``director``, ``directs`` -> ``direct``; ``wrote`` -> ``writ``."""
    w = _fold(word).strip("'’")
    if w.endswith("'s") or w.endswith("’s"):
        w = w[:-2]
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or not w.isalpha():
        return w
    w = _inflection(w)
    w = _derivation(w)
    return _IRREGULAR.get(w, w)


def _inflection(w: str) -> str:
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and _VOWELS & set(w[:-len(suffix)]):
            stem = w[:-len(suffix)]
            if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]  # starring -> star, planned -> plan
            return _silent_e(stem)
    return _silent_e(w)


def _silent_e(w: str) -> str:
    # produce / produced -> produc; compose / composer -> compos
    if w.endswith("e") and len(w) > 4 and w[-2] not in _VOWELS:
        return w[:-1]
    return w


# derivational suffixes, longest first: the act or state (-ation, -ion, -ment, -ance,
# -ship, -ity) and the one who does it (-er, -or, -ist, -ian, -ee)
_DERIVATIONS = ("ation", "ition", "ion", "ment", "ance", "ence", "ship", "ity", "ist", "ian",
                "ee", "er", "or", "ive", "al")


def _derivation(w: str) -> str:
    for suffix in _DERIVATIONS:
        if w.endswith(suffix) and len(w) - len(suffix) >= (3 if suffix in ("er", "or") else 4):
            return _silent_e(w[:-len(suffix)])
    return w


def same_root(a: str, b: str) -> bool:
    """Whether two roots are one: equal, or the shorter (five letters at least) begins the
    longer, which has at most three more (``product``/``produc``, ``nominat``/``nomin``:
    the suffix rules leave a verb's final consonant on one side only)."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 5 and len(long_) - len(short) <= 3 and long_.startswith(short)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[_\W]+")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def content_words(text: str) -> list[str]:
    """The words of a name or text that may carry a relation: camelCase and underscores
    split, function words dropped, lower case."""
    out = []
    for part in _CAMEL.split(text or ""):
        for m in _WORD.finditer(part):
            w = _fold(m.group())
            if len(w) > 1 and w not in STOP_WORDS:
                out.append(w)
    return out


def cue_roots(texts: Iterable[str]) -> frozenset[str]:
    """The roots of every content word of ``texts``."""
    return frozenset(root(w) for t in texts for w in content_words(t))


@dataclass(frozen=True)
class Cue:
    """A cue word found in a text: its span and root."""

    start: int
    end: int
    word: str
    root: str


_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


@lru_cache(maxsize=256)
def _text_roots(text: str) -> tuple[Cue, ...]:
    out = []
    for m in _TOKEN.finditer(text):
        w = _fold(m.group())
        if w in STOP_WORDS or len(w) < 3:  # (and "th" of "35th")
            continue
        out.append(Cue(m.start(), m.end(), m.group(), root(w)))
    return tuple(out)


class CueIndex:
    """The cue roots of every predicate of a schema, and which roots only one predicate has."""

    def __init__(self, cues: dict[str, frozenset[str]]):
        self.cues = cues
        owners: dict[str, set[str]] = {}
        for name, roots in cues.items():
            for r in roots:
                owners.setdefault(r, set()).add(name)
        self.owners = {r: frozenset(n) for r, n in owners.items()}

    def found(self, predicate: str, text: str) -> list[Cue]:
        """The cue words of ``predicate`` in ``text``."""
        roots = self.cues.get(predicate, frozenset())
        return [c for c in _text_roots(text) if c.root in roots]

    def words(self, text: str) -> tuple[Cue, ...]:
        return _text_roots(text)


def predicate_roots(name: str, inverse: str | None = None, description: str = "",
                    cues: Iterable[str] = ()) -> frozenset[str]:
    """The cue roots of a predicate: the content words of its name, its inverse's name, its
    description's label (before a colon) and text, and its ``cues:`` list."""
    return cue_roots([name, inverse or "", description, *cues])


def type_roots(types: Iterable[str]) -> frozenset[str]:
    return cue_roots(types)


def lexicon_roots(roots: frozenset[str], lexicon: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """``roots`` and the expression roots a lexicon gives each of them."""
    out = set(roots)
    for r in roots:
        out.update(lexicon.get(r, ()))
    return frozenset(out)


def cues_in(text: str, roots: frozenset[str], common: bool = False) -> list[Cue]:
    """The words of ``text`` whose root is one of ``roots`` (or the same root), or that join
    two of them into one word ("deathplace", "almaMater"); with ``common``, lower-case words
    only (inside running text a capitalised word is part of a name: "Fulton County")."""
    return [c for c in _text_roots(text) if (not common or not c.word[:1].isupper())
            and (c.root in roots or any(same_root(c.root, r) for r in roots)
                 or _compound(c, roots))]


def has_cue(text: str, roots: frozenset[str], common: bool = False) -> Cue | None:
    """The first cue word of ``text`` (see :func:`cues_in`), or None."""
    found = cues_in(text, roots, common)
    return found[0] if found else None


def _compound(cue: Cue, roots: frozenset[str]) -> bool:
    """Whether a word is two cue words written as one: a closed compound ("deathplace") or
    camelCase ("almaMater"), the way a relation's name is often written in running text."""
    word = _fold(cue.word)
    if len(word) < 7:
        return False
    for r in roots:
        rest = word[len(r):]
        if len(r) >= 3 and word.startswith(r) and len(rest) >= 3 and root(rest) in roots:
            return True
    return False


def learn_lexicon(examples: Iterable[tuple[str, str, tuple[int, int], tuple[int, int]]],
                  min_count: int = 3, min_share: float = 0.2, min_lift: float = 4.0
                  ) -> dict[str, tuple[str, ...]]:
    """Which words express a predicate's words, learned from sentences whose relations are
    known: ``examples`` are (predicate name, sentence, subject span, object span). The words
    between the two mentions (and the three before the later one when they are adjacent)
    are the ways a sentence says the relation; a word joins a predicate word's expressions
    when it is seen with it at least ``min_count`` times, in at least ``min_share`` of its
    sentences, and ``min_lift`` times more often than in all sentences (so "born" joins
    "birth", while "the" or "is" join nothing). Keyed by roots, so what is learned for
    ``birthPlace`` serves ``place of birth``."""
    by_label: dict[str, dict[str, int]] = {}
    label_n: dict[str, int] = {}
    overall: dict[str, int] = {}
    total = 0
    for predicate, sentence, s_span, o_span in examples:
        a, b = sorted([s_span, o_span])
        words = [c for c in _text_roots(sentence) if c.word.islower()]  # names are capitalised
        link = {c.root for c in words if a[1] <= c.start and c.end <= b[0]}
        if not link:  # adjacent mentions ("X's director Y"): the words before the later one
            before = [c for c in words if c.end <= b[0]]
            link = {c.root for c in before[-3:]}
        total += 1
        for r in link:
            overall[r] = overall.get(r, 0) + 1
        for label in {root(w) for w in content_words(predicate)}:
            label_n[label] = label_n.get(label, 0) + 1
            seen = by_label.setdefault(label, {})
            for r in link:
                seen[r] = seen.get(r, 0) + 1
    out: dict[str, tuple[str, ...]] = {}
    for label, seen in by_label.items():
        n = label_n[label]
        keep = sorted(r for r, k in seen.items() if r != label and k >= min_count
                      and k / n >= min_share and (k / n) / (overall[r] / total) >= min_lift)
        if keep:
            out[label] = tuple(keep)
    return out


LEXICON_FILE = Path(__file__).with_name("cue_lexicon.json")


@lru_cache(maxsize=1)
def shipped_lexicon() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The lexicon shipped with kgbuild (``cue_lexicon.json``, written by
    ``bench/text2kgbench_replay.py --learn-lexicon``); empty when absent."""
    try:
        data = json.loads(LEXICON_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    return tuple(sorted((k, tuple(v)) for k, v in data.get("lexicon", {}).items()))
