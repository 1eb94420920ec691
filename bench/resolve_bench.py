"""Benchmark: the staged resolver against a naive type-blind all-pairs rapidfuzz baseline.

    python bench/resolve_bench.py                     # 1k, 10k and 50k entities
    python bench/resolve_bench.py --sizes 1000 --seed 7

For each size it generates a Backstage-like catalog (services, libraries, APIs, groups, ...;
the same base names reused across types, near-duplicate names inside a type) and mentions
of it: 80% name a catalog entity through realistic variants (case, separators, camelCase,
type suffixes added or dropped, plurals, abbreviations, one-edit typos, word order,
references, acronyms, curated nicknames), 20% are out-of-catalog look-alikes (an extra or
swapped word, another version, a name that exists only in an incompatible type). 15% of
mentions carry no type. Everything is drawn from ``random.Random(seed)``.

Each method runs in a forked child process: wall time covers indexing plus resolving every
mention; peak memory is the child's peak RSS growth (``VmHWM`` after ``clear_refs``), which
also counts the baseline's C-allocated score matrix that tracemalloc cannot see. The staged
resolver resolves the mentions as one batch (``Resolver.resolve_many``) twice: in one
process, and with ``--workers`` processes (the baseline's ``cdist`` uses every core too);
``--single`` adds a run of ``Resolver.resolve`` one mention at a time. CPU time includes the
forked workers'; peak memory is the main process's only. ``--previous REV`` also runs the
one-process staged resolver of git revision REV on the same data (its ``kgbuild`` and schemas
extracted to a temporary folder, run by this script in a child process) and says whether
every mention's outcome (ID, status) is the same.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import pickle
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process, utils

from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import load_schema

WORDS = """payment billing ledger checkout cart order inventory catalog search recommendation user
profile identity auth notification email sms shipping fulfillment warehouse pricing discount
coupon loyalty reward fraud risk compliance audit report analytics metric logging tracing
gateway proxy router scheduler worker queue stream event ingest export import sync cache
session token secret vault config feature flag experiment tenant account invoice subscription
plan quota usage rating review comment media image video upload storage document template
render pdf translation locale geo map address tax currency exchange settlement payout refund
dispute merchant partner vendor supplier contract customer employee payroll benefit hiring
onboarding support ticket chat message inbox calendar booking reservation availability route
delivery driver fleet vehicle tracking telemetry device sensor firmware update release deploy
build artifact registry package license entitlement permission role policy access directory
graph index crawler scraper parser validator converter formatter encoder transcoder thumbnail
preview editor viewer dashboard portal console admin backoffice insight forecast budget cost
finance treasury lending credit loan mortgage insurance claim quote underwriting policyholder
kyc onboarding sanction screening alert incident oncall status health probe canary rollout
mirror backup archive retention purge consent privacy gdpr cookie session captcha otp mfa sso
saml oauth ldap scim webhook callback relay bridge adapter connector integration marketplace
listing seller buyer auction bid offer cashback wallet card issuing acquiring terminal pos
kiosk menu kitchen recipe grocery pharmacy clinic patient appointment prescription lab
""".split()
CODENAMES = """atlas orion zephyr nimbus quasar helios aurora borealis kepler galileo hermes apollo
athena artemis juno vesta ceres titan rhea phoebe triton nereid europa callisto ganymede io
pegasus phoenix hydra draco lyra vega altair deneb rigel sirius polaris castor pollux
""".split()
FIRST = "ana ben carla dev eli fatima george hana ivan jun kai lena marco nadia omar priya quinn rosa sami tara uma victor wen xavier yara zoe".split()
LAST = "adams bauer chen diaz evans fischer garcia haddad ito jensen kowalski lopez moreau nakamura okafor patel quist rossi silva tanaka ueda varga weber xu yilmaz zimmer".split()

TYPES = {  # type -> (share of entities, Backstage kind, label suffixes)
    "Service": (0.28, "component", ["service", "svc"]),
    "Library": (0.20, "component", ["lib"]),
    "Website": (0.05, "component", ["web", "ui", "site"]),
    "API": (0.15, "api", ["api"]),
    "Resource": (0.10, "resource", []),
    "System": (0.04, "system", ["system"]),
    "Domain": (0.01, "domain", []),
    "Group": (0.08, "group", ["team"]),
    "User": (0.09, "user", []),
}
ABBREV = {"management": "mgmt", "service": "svc", "configuration": "cfg", "account": "acct",
          "message": "msg", "database": "db", "administration": "admin"}


def bench_key(words: list[str]) -> str:
    """The generator's own notion of 'the same name' (kept independent of kgbuild)."""
    return " ".join(sorted(w[:-1] if w.endswith("s") else w for w in words))


def render(words: list[str], rng: random.Random) -> str:
    style = rng.choice(["kebab", "snake", "space", "camel", "pascal", "title", "dot", "upper"])
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "pascal":
        return "".join(w.capitalize() for w in words)
    if style == "title":
        return " ".join(w.capitalize() for w in words)
    if style == "upper":
        return "_".join(w.upper() for w in words)
    return {"kebab": "-", "snake": "_", "space": " ", "dot": "."}[style].join(words)


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    op = rng.choice(["sub", "swap", "del", "ins"])
    if op == "sub":
        return word[:i] + rng.choice("aeiounrst".replace(word[i], "")) + word[i + 1:]
    if op == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op == "del":
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def make_catalog(n: int, rng: random.Random) -> list[dict]:
    """``n`` entities: id, type, label, base words, label suffix, nickname (or None)."""
    pool = WORDS + CODENAMES
    entities: list[dict] = []
    used: dict[str, set[str]] = {t: set() for t in TYPES}  # bench keys per type
    ids: set[str] = set()
    by_base: list[list[str]] = []
    types = list(TYPES)
    weights = [TYPES[t][0] for t in types]
    while len(entities) < n:
        t = rng.choices(types, weights)[0]
        if t == "User":
            words = [rng.choice(FIRST), rng.choice(LAST)] + ([str(rng.randrange(2, 99))] if rng.random() < 0.5 else [])
        elif by_base and rng.random() < 0.2:  # same base name in another type
            words = list(rng.choice(by_base))
        elif by_base and rng.random() < 0.1:  # near-duplicate inside a type: extra word or version
            words = list(rng.choice(by_base)) + [rng.choice(pool + ["v2", "v3", "legacy", "internal"])]
        else:
            words = rng.sample(pool, rng.choice([1, 2, 2, 2, 3, 3]))
        key = bench_key(words)
        kind = TYPES[t][1]
        name = "-".join(words)
        if key in used[t] or f"{kind}:default/{name}" in ids or len(key) < 3:
            continue
        used[t].add(key)
        ids.add(f"{kind}:default/{name}")
        by_base.append(words)
        suffix = rng.choice(TYPES[t][2]) if TYPES[t][2] and rng.random() < 0.5 else None
        full = words + ([suffix] if suffix else [])
        label = " ".join(w.capitalize() for w in full) if rng.random() < 0.4 else "-".join(full)
        nickname = None
        if t not in ("User",) and rng.random() < 0.02:
            nickname = f"{rng.choice(CODENAMES)}-{rng.randrange(100, 999)}"
        entities.append({"id": f"{kind}:default/{name}", "type": t, "label": label,
                         "words": words, "suffix": suffix, "nickname": nickname})
    return entities


VARIANTS = {"exact": 8, "ref": 5, "case": 10, "separator": 15, "suffix": 14, "plural": 7,
            "abbrev": 4, "typo": 15, "reorder": 4, "acronym": 3, "nickname": 2, "combined": 13}


def in_catalog_mention(e: dict, names: set[str], rng: random.Random) -> tuple[str, str]:
    """A variant of ``e``'s name; reordered words never spell another entity's name."""
    words, suffix = list(e["words"]), e["suffix"]
    variant = rng.choices(list(VARIANTS), list(VARIANTS.values()))[0]
    full = words + ([suffix] if suffix else [])
    if variant == "nickname" and e["nickname"]:
        return e["nickname"], variant
    if variant == "ref":
        name = e["id"].split("/", 1)[1]
        return rng.choice([e["id"], f"{e['id'].split(':')[0]}:{name}", f"default/{name}"]), variant
    if variant == "case":
        return rng.choice([e["label"].lower(), e["label"].upper(), e["label"].title()]), variant
    if variant == "separator":
        return render(full, rng), variant
    if variant == "suffix" and TYPES[e["type"]][2]:
        return render(words if suffix else words + [rng.choice(TYPES[e["type"]][2])], rng), variant
    nouns = [k for k, w in enumerate(full) if w in WORDS]
    if variant == "plural" and nouns:
        i = rng.choice(nouns)
        w = full[i]
        full[i] = w[:-1] + "ies" if w.endswith("y") else w + ("es" if w.endswith(("s", "x")) else "s")
        return render(full, rng), variant
    if variant == "abbrev" and any(w in ABBREV for w in full):
        return render([ABBREV.get(w, w) for w in full], rng), variant
    if variant == "typo" and any(len(w) >= 5 for w in full):
        i = rng.choice([k for k, w in enumerate(full) if len(w) >= 5])
        full[i] = typo(full[i], rng)
        return render(full, rng), variant
    if variant == "reorder" and len(words) >= 2 and " ".join(reversed(words)) not in names:
        return " ".join(reversed(words)) + (f" {suffix}" if suffix else ""), variant
    if variant == "acronym" and len(full) >= 3:
        return "".join(w[0] for w in full).upper(), variant
    if variant == "combined":
        ws = words if (suffix and rng.random() < 0.5) else full
        if TYPES[e["type"]][2] and not suffix and rng.random() < 0.5:
            ws = ws + [rng.choice(TYPES[e["type"]][2])]
        out = render(ws, rng)
        return (out.upper() if rng.random() < 0.3 else out), variant
    return e["label"], "exact"


TYPE_WORDS = {t.lower() for t in TYPES} | {s for spec in TYPES.values() for s in spec[2]} | {
    "component", "library", "website", "group", "squad", "frontend", "template", "location"}


def out_of_catalog_mention(entities: list[dict], keys: dict[str, set[str]],
                           rng: random.Random) -> tuple[str, str, str]:
    """(mention, type, kind) naming nothing in the catalog under that type."""
    pool = [w for w in WORDS + CODENAMES if w not in TYPE_WORDS]
    while True:
        e = rng.choice(entities)
        t, words = e["type"], list(e["words"])
        kind = rng.choice(["extra", "extra", "swap", "version", "other-type", "fresh"])
        if kind == "extra":
            words.insert(rng.randrange(len(words) + 1), rng.choice(pool))
        elif kind == "swap":
            words[rng.randrange(len(words))] = rng.choice(pool)
        elif kind == "version":
            words.append(rng.choice(["v2", "v3", "v4", "2", "next"]))
        elif kind == "other-type":  # the name exists, but only as an incompatible type
            t = rng.choice([x for x in TYPES if x != t and x != "User"])
        else:
            words = rng.sample(pool, 2)
        # Not a name of this type or of a type it may resolve to:
        compatible = {"Service": ("Service",), "Library": ("Library",), "Website": ("Website",)}.get(t, (t,))
        if any(bench_key(words) in keys[c] for c in compatible) or len(bench_key(words)) < 4:
            continue
        return render(words, rng), t, kind


def make_mentions(entities: list[dict], n: int, rng: random.Random) -> list[dict]:
    keys: dict[str, set[str]] = {t: set() for t in TYPES}
    for e in entities:
        keys[e["type"]].add(bench_key(e["words"]))
    names = {" ".join(e["words"]) for e in entities}
    out = []
    for _ in range(n):
        if rng.random() < 0.8:
            e = rng.choice(entities)
            text, variant = in_catalog_mention(e, names, rng)
            r = rng.random()
            mtype = None if r < 0.15 else ("Component" if r < 0.2 and e["type"] in ("Service", "Library", "Website") else e["type"])
            out.append({"text": text, "type": mtype, "gold": e["id"], "gold_type": e["type"], "variant": variant})
        else:
            text, t, kind = out_of_catalog_mention(entities, keys, rng)
            out.append({"text": text, "type": t, "gold": None, "gold_type": t, "variant": "ooc-" + kind})
    return out


# -- the two methods ---------------------------------------------------------------------
def run_staged(entities: list[dict], mentions: list[dict],
               workers: int = 1) -> list[tuple[str | None, str]]:
    """Index every entity, then resolve every mention: as a batch with ``resolve_many`` over
    ``workers`` processes, or (``workers=0``) one at a time with ``resolve``."""
    schema = load_schema()
    registry = AliasRegistry()
    for e in entities:
        if e["nickname"]:
            registry.add_alias(e["type"], e["id"], e["nickname"])
    r = Resolver(schema, registry)
    r.add_entities((e["id"], e["type"], e["label"]) for e in entities)
    if workers == 0:  # one mention at a time
        out = []
        for m in mentions:
            res = r.resolve(m["text"], m["type"])
            out.append((res.id, res.status))
        return out
    results = r.resolve_many([(m["text"], m["type"]) for m in mentions], workers=workers)
    return [(res.id, res.status) for res in results]


def run_previous(rev: str, n: int, args) -> tuple[list, float, float, float]:
    """:func:`run_staged` (one process) as git revision ``rev`` has it, on the data of size
    ``n``: (outcomes, wall seconds, CPU seconds, peak MB), measured in a child process."""
    repo = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "kgbuild", "schema"],
                             capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="resolve-bench-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        out = subprocess.run([sys.executable, __file__, "--sizes", str(n), "--seed", str(args.seed),
                              "--mentions", str(args.mentions), "--staged-json"],
                             env={**os.environ, "PYTHONPATH": tmp}, capture_output=True,
                             text=True, check=True)
    outcomes, seconds, cpu, peak = json.loads(out.stdout)
    return [tuple(o) for o in outcomes], seconds, cpu, peak


SCORERS = {"token_sort_ratio": fuzz.token_sort_ratio, "ratio": fuzz.ratio, "WRatio": fuzz.WRatio}


def run_baseline(entities: list[dict], mentions: list[dict], cutoff: int,
                 scorer: str) -> list[tuple[str | None, str]]:
    """Type-blind all-pairs: every mention against every entity name (label, nickname);
    the best-scoring name at or above ``cutoff`` wins."""
    names, owner = [], []
    for e in entities:
        for name in filter(None, (e["label"], e["nickname"])):
            names.append(name)
            owner.append(e["id"])
    scores = process.cdist([m["text"] for m in mentions], names, scorer=SCORERS[scorer],
                           processor=utils.default_process, dtype=np.uint8, workers=-1)
    best = scores.argmax(axis=1)
    top = scores[np.arange(len(mentions)), best]
    return [(owner[b], "resolved") if s >= cutoff else (None, "new") for b, s in zip(best, top)]


def measure(fn, *args) -> tuple[list, float, float, float]:
    """Run ``fn`` in a forked child: (result, wall seconds, CPU seconds, peak RSS growth in MB)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read)
        gc.collect()
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = _status_kb("VmRSS")
        t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
        result = fn(*args)
        seconds = time.perf_counter() - t0
        cpu = time.process_time() - c0 + _children_cpu() - k0  # with resolve_many's workers
        peak = (_status_kb("VmHWM") - base) / 1024
        with os.fdopen(write, "wb") as fh:
            pickle.dump((result, seconds, cpu, peak), fh)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = pickle.load(fh)
    os.waitpid(pid, 0)
    return data


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (resolve_many's forked workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def score(entities: list[dict], mentions: list[dict], outcomes: list) -> dict:
    schema = load_schema()
    type_of = {e["id"]: e["type"] for e in entities}
    tp = fp = flagged = cross = ooc_merged = 0
    in_catalog = sum(1 for m in mentions if m["gold"])
    by_variant: dict[str, list[int]] = {}
    for m, (rid, status) in zip(mentions, outcomes):
        ok = rid is not None and rid == m["gold"]
        row = by_variant.setdefault(m["variant"], [0, 0, 0, 0])  # n, correct, wrong, flagged
        row[0] += 1
        if status in ("review", "ambiguous"):
            flagged += 1
            row[3] += 1
        if rid is None:
            continue
        tp += ok
        fp += not ok
        row[1 if ok else 2] += 1
        if type_of[rid] not in schema.compatible_types(m["gold_type"]):
            cross += 1
        if m["gold"] is None:
            ooc_merged += 1
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / in_catalog if in_catalog else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "flagged_rate": flagged / len(mentions), "cross_type_merges": cross,
            "ooc_merged": ooc_merged, "by_variant": by_variant}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,50000", help="comma-separated entity counts")
    ap.add_argument("--mentions", type=float, default=1.0, help="mentions per entity")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--cutoff", type=int, default=85, help="baseline score cutoff")
    ap.add_argument("--scorer", choices=sorted(SCORERS), default="token_sort_ratio",
                    help="baseline rapidfuzz scorer")
    ap.add_argument("--workers", type=int, default=2,
                    help="processes for the parallel staged run (resolve_many; the baseline's "
                         "cdist uses every core); the single-process run is always shown too")
    ap.add_argument("--single", action="store_true",
                    help="also resolve one mention at a time (Resolver.resolve) in one process")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--variants", action="store_true", help="also print a per-variant table")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--previous", metavar="REV",
                    help="also run git revision REV's staged resolver (one process) on the same "
                         "data and compare every outcome")
    ap.add_argument("--staged-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.staged_json:  # (the child of --previous: the staged run of this kgbuild, as JSON)
        import kgbuild
        where = os.environ.get("PYTHONPATH", "")
        if not kgbuild.__file__.startswith(where):
            raise SystemExit(f"kgbuild imported from {kgbuild.__file__}, not from {where}")
        n = int(args.sizes)
        rng = random.Random(f"{args.seed}:{n}")
        entities = make_catalog(n, rng)
        mentions = make_mentions(entities, int(n * args.mentions), rng)
        print(json.dumps(measure(run_staged, entities, mentions, 1)))
        return
    report = []
    for n in (int(x) for x in args.sizes.split(",")):
        rng = random.Random(f"{args.seed}:{n}")
        entities = make_catalog(n, rng)
        mentions = make_mentions(entities, int(n * args.mentions), rng)
        row = {"entities": n, "mentions": len(mentions)}
        methods = [("staged", run_staged, (1,))]
        if args.single:
            methods.append(("staged-one", run_staged, (0,)))
        if args.workers > 1:
            methods.append((f"staged-{args.workers}w", run_staged, (args.workers,)))
        if not args.no_baseline:
            methods.append(("baseline", run_baseline, (args.cutoff, args.scorer)))
        if args.previous:
            methods.insert(1, (f"staged@{args.previous}", None, ()))
        outcomes_of = {}
        for name, fn, extra in methods:
            if fn is None:
                outcomes, seconds, cpu, peak = run_previous(args.previous, n, args)
            else:
                outcomes, seconds, cpu, peak = measure(fn, entities, mentions, *extra)
            outcomes_of[name] = outcomes
            row[name] = {**score(entities, mentions, outcomes), "seconds": seconds,
                         "cpu_seconds": cpu, "peak_mb": peak}
        if args.previous:
            row["same_outcomes_as_previous"] = \
                outcomes_of["staged"] == outcomes_of[f"staged@{args.previous}"]
        report.append(row)
        print_row(row, args.variants)
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)


def print_row(row: dict, variants: bool) -> None:
    print(f"\n== {row['entities']:,} entities, {row['mentions']:,} mentions ==")
    cols = ("precision", "recall", "f1", "flagged_rate", "cross_type_merges", "ooc_merged",
            "seconds", "cpu_seconds", "peak_mb")
    names = [k for k in row if k.startswith("staged") and isinstance(row[k], dict)] + ["baseline"]
    print(f"{'method':<11}" + "".join(f"{c:>18}" for c in cols))
    for name in names:
        if name in row:
            print(f"{name:<11}" + "".join(_fmt(row[name][c]) for c in cols))
    if "baseline" in row:
        b = row["baseline"]
        for name in names[:-1]:
            s = row[name]
            print(f"{name} vs baseline: {b['seconds'] / s['seconds']:.1f}x less wall time, "
                  f"{b['cpu_seconds'] / s['cpu_seconds']:.1f}x less CPU time, "
                  f"{b['peak_mb'] / max(s['peak_mb'], 0.1):.1f}x less peak memory")
    if "same_outcomes_as_previous" in row:
        print("every outcome (ID, status) the same as the previous revision's: "
              + ("yes" if row["same_outcomes_as_previous"] else "NO"))
    if variants:
        print(f"{'variant':<18}{'n':>7}{'correct':>9}{'wrong':>7}{'flagged':>9}")
        for v, (k, ok, bad, fl) in sorted(row["staged"]["by_variant"].items()):
            print(f"{v:<18}{k:>7}{ok:>9}{bad:>7}{fl:>9}")


def _fmt(x) -> str:
    return f"{x:>18,}" if isinstance(x, int) else f"{x:>18.3f}"


if __name__ == "__main__":
    main()
