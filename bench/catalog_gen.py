"""Generate a synthetic Backstage catalog: one file per component, ~10 edges per component.

Used by the incremental-build benchmark and the crash tests. Deterministic for a seed.
"""

from __future__ import annotations

import random
from pathlib import Path


def component_yaml(i: int, n: int, rng: random.Random, owner: str | None = None) -> str:
    deps = sorted({rng.randrange(n) for _ in range(6)} - {i})
    apis = sorted({rng.randrange(max(1, n // 10)) for _ in range(2)})
    lines = ["apiVersion: backstage.io/v1alpha1", "kind: Component", "metadata:",
             f"  name: comp-{i:05d}", f"  description: Synthetic component number {i}", "spec:",
             f"  type: {'library' if i % 3 == 0 else 'service'}", "  lifecycle: production",
             f"  owner: {owner or f'team-{i % max(1, n // 50):04d}'}",
             f"  system: sys-{i % max(1, n // 20):04d}", "  dependsOn:"]
    lines += [f"    - component:comp-{d:05d}" for d in deps]
    lines.append("  consumesApis:")
    lines += [f"    - api-{a:05d}" for a in apis]
    return "\n".join(lines) + "\n"


def component_path(root: Path, i: int, per_folder: int | None = None) -> Path:
    """Component ``i``'s file: ``components/comp-NNNNN.yaml``, or with ``per_folder``
    ``components/FFFF/comp-NNNNN.yaml`` (``per_folder`` components a folder, as an estate's
    repositories spread them)."""
    folder = root / "components"
    if per_folder:
        folder = folder / f"{i // per_folder:04d}"
    return folder / f"comp-{i:05d}.yaml"


def write_catalog(root: Path, n: int, seed: int = 7, per_folder: int | None = None) -> list[Path]:
    """Write ``n`` component files plus org/system/API files under ``root`` (see
    :func:`component_path`); returns the components' files."""
    rng = random.Random(seed)
    (root / "components").mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(n):
        p = component_path(root, i, per_folder)
        if per_folder and i % per_folder == 0:
            p.parent.mkdir(exist_ok=True)
        p.write_text(component_yaml(i, n, rng))
        files.append(p)
    groups = [f"apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: team-{g:04d}\n"
              f"spec:\n  type: team\n  children: []\n" for g in range(max(1, n // 50))]
    (root / "groups.yaml").write_text("---\n".join(groups))
    systems = [f"apiVersion: backstage.io/v1alpha1\nkind: System\nmetadata:\n  name: sys-{s:04d}\n"
               f"spec:\n  owner: team-{s % max(1, n // 50):04d}\n" for s in range(max(1, n // 20))]
    (root / "systems.yaml").write_text("---\n".join(systems))
    apis = [f"apiVersion: backstage.io/v1alpha1\nkind: API\nmetadata:\n  name: api-{a:05d}\n"
            f"spec:\n  type: openapi\n  lifecycle: production\n  owner: team-0000\n"
            f"  definition: 'openapi: 3.0.0'\n" for a in range(max(1, n // 10))]
    (root / "apis.yaml").write_text("---\n".join(apis))
    return files
