"""Shared by the server tests: a fixture store, a config with tokens, the CLI's JSON."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import zlib
from pathlib import Path

import httpx
from click.testing import CliRunner
from conftest import free_port

from kgbuild.cli.main import main

PCI_TOKEN = "pci-reader-token"
ADMIN_TOKEN = "admin-token"
PATH = "ownedBy:out/ownerOf:out/dependsOn:in"

# traverse specs as the API takes them; cli_args() gives the same as options
SPECS = [
    {"seeds": ["api:default/payments-api"], "path": PATH},
    {"question": "Who depends on the library of the team owning Payments API?", "path": PATH},
    {"seeds": ["group:default/commerce-platform"], "follow": ["ownerOf"], "hops": 1},
    {"seeds": ["component:default/payments-service"], "hops": 2, "cap": 2, "max_nodes": 6},
    {"names": ["Payments DB"], "follow": ["dependsOn:in", "ownedBy"], "hops": 2},
    {"seeds": ["system:default/payments"], "follow": ["partOf:in"], "types": ["Resource"]},
    {"seeds": ["component:default/nope"], "path": "ownedBy"},
    {"seeds": ["api:default/payments-api"], "path": "ownedBy/ownerOf", "cap": None,
     "include_seeds": True, "max_chars": 300},
    {"question": "Who owns Pricing SDK?", "types": ["Group"]},  # the CLI's shortest typed path
    {"seeds": ["component:default/checkout-service"], "follow": ["dependsOn", "ownedBy"],
     "exclude_qualifiers": ["dev"], "extractors": ["backstage"], "min_confidence": 0.5},
]


def cli_args(spec: dict) -> list[str]:
    """``kgbuild traverse`` options for an API spec."""
    args = []
    for key, value in spec.items():
        flag = {"seeds": "--seed", "names": "--name", "types": "--type",
                "exclude_qualifiers": "--exclude-qualifier", "extractors": "--extractor"}.get(
            key, "--" + key.replace("_", "-"))
        if key == "cap" and value is None:
            args.append("--no-cap")
        elif isinstance(value, bool):
            args += [flag] if value else []
        elif isinstance(value, list):
            for v in value:
                args += [flag, str(v)]
        else:
            args += ["--hub-cap" if key == "cap" else flag, str(value)]
    return args


def cli_json(store: Path, spec: dict, *principal: str) -> dict:
    r = CliRunner().invoke(main, ["traverse", "--store", str(store), *cli_args(spec),
                                  *principal, "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def write_config(folder: Path, **limits) -> Path:
    lines = ["tokens:",
             "  - name: pci-reader",
             f"    sha256: {hashlib.sha256(PCI_TOKEN.encode()).hexdigest()}",
             "    labels: [pci]",
             "  - name: admin",
             f"    sha256: {hashlib.sha256(ADMIN_TOKEN.encode()).hexdigest()}",
             "    all_access: true"]
    if limits:
        lines.append("limits:")
        lines += [f"  {k}: {v}" for k, v in limits.items()]
    path = folder / "serve.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def start_serve(store: Path, config: Path, folder: Path) -> tuple[subprocess.Popen, str]:
    """``kgbuild serve`` of ``store`` as a real process on a free 127.0.0.1 port (its output
    in ``folder/server.log``), once it answers ``/health`` (60 s at most): the process and its
    base URL. The caller stops it."""
    port = free_port()
    with open(folder / "server.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "kgbuild.cli", "serve", "--store",
                                 str(store), "--port", str(port), "--config", str(config)],
                                stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.TransportError:
            pass
        assert proc.poll() is None, (folder / "server.log").read_text()
        assert time.monotonic() < deadline, "the server did not answer within 60 s"
        time.sleep(0.2)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def word_vector(text: str) -> list[float]:
    """A text's words counted in 32 hashed buckets: texts sharing words are similar."""
    out = [0.0] * 32
    for word in text.lower().replace("?", " ").split():
        if len(word) > 3:
            out[zlib.crc32(word.encode()) % 32] += 1.0
    return out


LEDGER = """apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: general-ledger
  title: General Ledger
  description: Books every payment twice.
spec:
  type: service
  lifecycle: production
  owner: commerce-platform
  system: payments
  dependsOn:
    - component:pricing-sdk
    - resource:payments-db
"""


def access_stores(folder: Path) -> tuple[Path, Path]:
    """The fixture catalog built twice (same timestamps): with a document only the finance
    label may see (``finance/ledger.yaml``, by an access.yaml rule), and without it."""
    import shutil

    from conftest import FIXTURE_CATALOG

    from kgbuild.project.pipeline import build_graph
    from kgbuild.schema.loader import load_schema

    catalog = folder / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    (catalog / "finance").mkdir()
    (catalog / "finance" / "ledger.yaml").write_text(LEDGER)
    rules = folder / "access.yaml"
    rules.write_text("rules:\n  - paths: ['finance/**']\n    labels: [finance]\n")
    schema = load_schema()
    build_graph([catalog], schema, store=folder / "with", timestamp=0,
                access=rules).store.close()
    shutil.rmtree(catalog / "finance")
    build_graph([catalog], schema, store=folder / "without", timestamp=0).store.close()
    return folder / "with", folder / "without"


def cli_query(store: Path, sparql: str, fmt: str = "json") -> str:
    """What ``kgbuild query`` prints."""
    r = CliRunner().invoke(main, ["query", sparql, "--store", str(store), "--format", fmt,
                                  "--limit", "100000"])
    assert r.exit_code in (0, 1), r.output
    return r.stdout
