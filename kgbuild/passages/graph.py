"""Graph search over entity links: seeds from the question, one bounded expansion, path scores.

**Seeds.** The names a question mentions (titles of passages, catalog names and aliases,
matched like links: whole words, capitals kept) make the passages they are the title of
seeds: the question names that passage's subject. The best passages by the base score
(dense, else lexical) are seeds too: the semantic fallback, and the first hop of a question
that names no entity.

**Expansion.** From each seed, one hop through the names it mentions to the passages they
are the title of: the bridge of a two-hop question (the film's passage names its director,
whose own passage holds the answer). The other direction, to the passages that mention the
seed's title (``back``), is off by default: those are mostly other things that merely cite
the seed (a director's films), and on the visible set every weight above 0 made all@5 worse
(91 -> 87-90). A name more than ``hub_cap`` visible passages mention is a hub and is not
expanded through (linking everything, it says nothing).

A passage naming its own title (every chunk of a news article may repeat its headline) leads
nowhere: the other passages of the same document are not a bridge.

**Rounds.** The best passages after an expansion that were not yet expanded are expanded in
turn (``rounds``, 2): a question of three or four hops needs the bridge the first expansion
reached to lead on. On the two-hop visible set a second and third round change nothing
(measured), so the default costs two-hop questions nothing.

**Scores** are path scores: a passage reached from a seed gets ``lam`` times the seed's
score (its best path), added to its own base score, so a neighbour must still be about the
question to rise. Measured against personalized PageRank over the same links on the visible set
(``bench/passages_quality.py --ppr``: the same seeds as the personalization, passages ranked
by PageRank as HippoRAG does): R@5 88.5 / 91.0 / 94.0 and all@5 77 / 82 / 88 at damping 0.3 /
0.5 / 0.7, against the path scores' 97.0 / 94. Path scores are also exact, cheap and
explainable (each passage says which seed and name brought it in).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fuse import top
from .model import ReadModel

HUB_CAP = 100  # visible passages mentioning a name before it is a hub
SEEDS = 5  # best base-scored passages used as seeds
LAM = 0.5  # weight of a seed's score passed along one link
ROUNDS = 2  # a bridge reached by the first expansion is expanded in turn (3-4 hop questions)
QUESTION_BONUS = 1.0  # z-score units added to a passage whose title the question names


@dataclass
class GraphParams:
    """The graph search's few settings (see the module docstring)."""

    seeds: int = SEEDS
    lam: float = LAM
    question_bonus: float = QUESTION_BONUS
    hub_cap: int = HUB_CAP
    back: float = 0.0  # weight of the mentioned-by direction relative to mentions
    rounds: int = ROUNDS  # expansions: each from the best passages not yet expanded


@dataclass
class GraphResult:
    """Scores after propagation, the question's seed rows and names, and per reached row
    the (seed row, name index, direction) that brought it in."""

    scores: np.ndarray
    question_seeds: dict[int, int] = field(default_factory=dict)  # row -> name index
    reached: dict[int, tuple[int, int, str]] = field(default_factory=dict)


def visible_count(model: ReadModel, rows: np.ndarray, visible: np.ndarray | None) -> int:
    return len(rows) if visible is None else int(visible[rows].sum())


def question_seeds(model: ReadModel, names: list[int], visible: np.ndarray | None,
                   principal=None, hub_cap: int = HUB_CAP) -> dict[int, int]:
    """Rows (visible) the question's names (name indexes) lead to: the passages a name is
    the title of; for a catalog entity's name, the passages mentioning it (a star: the
    passages linked to the entity), unless it is a hub."""
    out: dict[int, int] = {}
    for k in names:
        rows = model.titled(k)
        if not len(rows) and model.entities(k, principal):
            rows = model.mentioned_by(k)
            if visible_count(model, rows, visible) > hub_cap:
                continue
        for row in rows.tolist():
            if visible is None or visible[row]:
                out.setdefault(row, k)
    return out


def typed_steps(traverser, schema, model: ReadModel, names: list[int], principal,
                cap: int) -> list[tuple[int, str, int]]:
    """One hop through the schema's typed edges from the catalog entities the question names
    (a traversal of the store's read model, as the principal): ``(name index of a neighbour,
    predicate, name index it came from)``."""
    by_entity: dict[str, list[int]] = {}
    for k, entities in model.catalog.items():
        for node, _ in entities:
            by_entity.setdefault(node, []).append(k)
    from ..retrieve.traverse import TraversalSpec

    out: list[tuple[int, str, int]] = []
    follow = [f"{e}:both" for e in sorted(schema.edge_types)]
    for k in names:
        seeds = model.entities(k, principal)
        if not seeds or not follow:
            continue
        result = traverser.run(TraversalSpec(seeds=seeds, follow=follow, hops=1, cap=cap))
        for edge in result.edges:
            for end in (edge["subject"], edge["object"]):
                if end not in seeds:
                    out += [(j, edge["predicate"], k) for j in by_entity.get(end, ()) if j != k]
    return out


def propagate(model: ReadModel, base: np.ndarray, names: list[int],
              visible: np.ndarray | None, params: GraphParams, principal=None,
              typed: list[tuple[int, str, int]] = ()) -> GraphResult:
    """Path scores from the question's names and the best base rows (see the module
    docstring); ``base`` is -inf for rows that cannot be ranked. ``typed``: the catalog
    neighbours of the question's entities (:func:`typed_steps`): the passages mentioning a
    neighbour are reached from the passages mentioning the entity."""
    scores = base.copy()
    qseeds = question_seeds(model, names, visible, principal, params.hub_cap)
    for row in qseeds:
        if np.isfinite(scores[row]):
            scores[row] += params.question_bonus
    finite = np.isfinite(scores)
    hub: dict[int, bool] = {}

    def is_hub(k: int) -> bool:
        if k not in hub:
            hub[k] = visible_count(model, model.mentioned_by(k), visible) > params.hub_cap
        return hub[k]

    result = GraphResult(scores, qseeds)
    expanded: set[int] = set()
    gained: dict[int, float] = {}
    for j, predicate, k in typed:  # entity -> typed edge -> entity -> passages mentioning it
        star = [r for r, name in qseeds.items() if name == k and np.isfinite(scores[r])]
        w = max([scores[r] for r in star] or [params.question_bonus])
        rows = model.mentioned_by(j)
        if w <= 0 or visible_count(model, rows, visible) > params.hub_cap:
            continue
        for b in rows.tolist():
            if finite[b] and (visible is None or visible[b]) and b not in qseeds:
                add = params.lam * float(w)
                if add > gained.get(b, 0.0):
                    scores[b] += add - gained.get(b, 0.0)
                    gained[b] = add
                    result.reached[b] = (star[0] if star else -1, j, predicate)
    seeds = list(dict.fromkeys([*qseeds, *top(scores, params.seeds, model.idrank).tolist()]))
    for _ in range(params.rounds):
        gain: dict[int, tuple[float, int, int, str]] = {}
        for a in seeds:
            expanded.add(a)
            s = scores[a]
            if not np.isfinite(s) or s <= 0:
                continue
            own = int(model.title[a])  # its own title names its document: no bridge there
            steps = [(k, model.titled(k), "mentions", s) for k in model.mentions(a).tolist()
                     if k != own]
            if model.title[a] >= 0 and params.back > 0:
                k = int(model.title[a])
                steps.append((k, model.mentioned_by(k), "mentioned-by", s * params.back))
            for k, rows, way, w in steps:
                if is_hub(k):
                    continue
                for b in rows.tolist():
                    if b == a or not finite[b] or (visible is not None and not visible[b]):
                        continue
                    if b not in gain or w > gain[b][0]:
                        gain[b] = (float(w), a, k, way)
        for b, (w, a, k, way) in gain.items():
            add = params.lam * w
            if add > gained.get(b, 0.0):  # a row keeps its best path, never two
                scores[b] += add - gained.get(b, 0.0)
                gained[b] = add
                result.reached[b] = (a, k, way)
        seeds = [r for r in top(scores, params.seeds, model.idrank).tolist() if r not in expanded]
        if not seeds:
            break
    return result
