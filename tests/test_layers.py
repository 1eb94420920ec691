"""The package's import layers: each part imports only from its own folder and the layers
below it (schema <- graph <- parts <- cli), read from the source with ``ast``."""

import ast
from functools import cache
from pathlib import Path

import kgbuild

PACKAGE = Path(kgbuild.__file__).parent

# lowest first; parts on one line are siblings and may not import each other
LAYERS = [
    {"errors", "vocab"},  # (vocab: every IRI the code names, as plain strings)
    {"io"},
    {"llm"},
    {"schema"},
    {"graph"},
    {"resolve"},  # (the store's read model holds the resolver's names table)
    {"store", "extract", "validate"},
    {"remote"},
    {"retrieve"},
    {"passages"},
    {"project"},
    {"evaluate", "render", "adapters"},
    {"serve"},
    {"cli"},
]
RANK = {part: i for i, layer in enumerate(LAYERS) for part in layer}


def part_of(module: str) -> str:
    return module.split(".")[1]


@cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree (parsed once for every test here)."""
    return ast.parse(path.read_text())


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every kgbuild import in ``path``, at any depth."""
    module = "kgbuild." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [f"{target}.{a.name}" for a in node.names] if not node.module else [target]
            else:
                names = [node.module or ""]
            found += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, m) for line, m in found if m.startswith("kgbuild.")]


def test_every_part_is_in_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}
    parts.discard("__main__")
    assert parts == set(RANK), "every folder of kgbuild/ belongs to exactly one layer"


def test_imports_run_down_the_layers_only():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) == 1:  # kgbuild/__init__.py exports the verbs of every part
            continue
        own = rel.parts[0].removesuffix(".py")
        for line, target in imports(path):
            other = part_of(target)
            if other == own:
                continue
            if RANK[other] >= RANK[own]:
                wrong.append(f"kgbuild/{rel}:{line} imports {target} ({own} may not use {other})")
    assert wrong == [], "\n".join(wrong)


def test_no_part_imports_another_parts_private_names():
    """A name starting with ``_`` is its module's own: another part never imports it."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        own = rel.parts[0].removesuffix(".py")
        package = ("kgbuild", *rel.parts[:-1])
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                target = package[:len(package) - node.level + 1] + tuple(
                    (node.module or "").split(".")) * bool(node.module)
            else:
                target = tuple((node.module or "").split("."))
            if target[0] == "kgbuild" and len(target) > 1 and target[1] != own:
                wrong += [f"kgbuild/{rel}:{node.lineno} imports {a.name} from {'.'.join(target)}"
                          for a in node.names if a.name.startswith("_")]
    assert wrong == [], "\n".join(wrong)
