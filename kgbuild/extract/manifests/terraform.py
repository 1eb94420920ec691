"""Terraform (``*.tf``): resources, data sources, module calls, ``depends_on`` and references.

Parsed by tree-sitter's HCL grammar (``tree-sitter-hcl``): every expression keeps its
position, so each reference is an edge at its own line, and a syntax error is located
while the blocks around it are still read (the broken block is reported and skipped).

The files of one folder are one Terraform module, so IDs are scoped to the folder:
``terraform:<folder>/<type>.<name>`` for a resource, ``terraform:<folder>/data.<type>.<name>``
for a data source (both Resources, ``specType`` the resource type), and
``terraform:<folder>/module.<name>`` for a module call (a Component); each is ``partOf`` the
folder's module ``terraform:<folder>`` (a Component). Edges:

* ``depends_on = [...]``: ``dependsOn`` each entry (qualifier ``depends_on``);
* a reference in any argument (``aws_vpc.main.id``, ``data.aws_ami.ubuntu.id``,
  ``module.vpc.vpc_id``, inside strings' ``${...}`` too): ``dependsOn`` what it names
  (qualifier ``reference``), once per target and block;
* a module call's ``source``: ``dependsOn`` the module it instantiates (qualifier
  ``source``, plus ``version:<constraint>``): a local path is that folder's
  ``terraform:<folder>``, anything else (registry, git, URL) ``terraform-module:<source>``.

``var.*``, ``local.*``, ``each.*``, ``count.*``, ``path.*``, ``self.*`` and ``terraform.*``
name no block and are not edges.
"""

from __future__ import annotations

import posixpath
from pathlib import Path, PurePosixPath

import tree_sitter
import tree_sitter_hcl

from ...errors import InputError, Problem
from ...io.text import brief, clip, read_text
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import input_problem

NOT_BLOCKS = {"var", "local", "each", "count", "path", "self", "terraform"}
MAX_ERRORS = 20
_LANGUAGE = tree_sitter.Language(tree_sitter_hcl.language())


def module_id(folder: str) -> str:
    return f"terraform:{folder or '.'}"


class TerraformExtractor:
    name = "terraform"
    version = 1
    emits = frozenset({"Component", "Resource", "dependsOn", "partOf"})
    ownable = False  # infrastructure, not a component with owners of its own

    def claims(self, path: Path, head: bytes) -> bool:
        return path.suffix == ".tf"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        data = text.encode("utf-8", "surrogatepass")
        tree = tree_sitter.Parser(_LANGUAGE).parse(data)
        return _Module(src, ctx, data, text.split("\n"), tree).read()


class _Module:
    def __init__(self, src: SourceFile, ctx: Context, data: bytes, lines: list[str], tree):
        self.src, self.ctx, self.data, self.lines, self.tree = src, ctx, data, lines, tree
        self.doc_id = src.doc_id
        self.folder = str(PurePosixPath(src.doc_id).parent)
        self.module = module_id(self.folder)
        self.out = Extraction()

    def text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def line(self, node) -> int:
        return node.start_point[0] + 1

    def evidence(self, node) -> str:
        n = self.line(node)
        return clip(self.lines[n - 1].strip() if n <= len(self.lines) else self.text(node))

    def read(self) -> Extraction:
        root = self.tree.root_node
        broken = self._errors(root) if root.has_error else set()
        body = next((c for c in root.children if c.type == "body"), None)
        blocks = []
        for node in (body.children if body is not None else ()):
            if node.type == "ERROR":  # what the parser could not place: its whole blocks count
                blocks.extend(c for c in node.children if c.type == "block" and not c.has_error)
            elif node.type == "block":
                blocks.append(node)
        for block in blocks:
            if self.out.full(self.doc_id, self.line(block)):
                break
            if block.id in broken:
                continue
            self._block(block)
        return self.out

    def _errors(self, root) -> set[int]:
        """Report the syntax errors (first :data:`MAX_ERRORS`); the top-level blocks that
        hold one, by node id."""
        broken: set[int] = set()
        stack, reported = [root], 0
        while stack:
            node = stack.pop()
            if not node.has_error:
                continue
            if node.type == "ERROR" or node.is_missing:
                if reported < MAX_ERRORS:
                    what = f"missing {node.type}" if node.is_missing else \
                        f"unexpected {brief(self.text(node)[:40], 50)}"
                    self.out.problems.append(Problem("error", "bad-terraform", f"HCL syntax "
                                                     f"error: {what}; the block is skipped",
                                                     self.doc_id, self.line(node)))
                reported += 1
                top = node  # the top-level block holding it
                while top.parent is not None and not (
                        top.parent.type == "body" and top.parent.parent is not None
                        and top.parent.parent.type == "config_file"):
                    top = top.parent
                broken.add(top.id)
                continue
            stack.extend(node.children)
        if reported > MAX_ERRORS:
            self.out.problems.append(Problem("error", "bad-terraform", f"{reported - MAX_ERRORS:,} "
                                             "more syntax errors", self.doc_id, None))
        return broken

    def _labels(self, block) -> tuple[str, list[str]]:
        children = block.children
        kind = self.text(children[0]) if children and children[0].type == "identifier" else ""
        labels = []
        for c in children[1:]:
            if c.type == "string_lit":
                labels.append("".join(self.text(x) for x in c.children
                                      if x.type == "template_literal"))
            elif c.type == "identifier":
                labels.append(self.text(c))
        return kind, labels

    def _block(self, block) -> None:
        kind, labels = self._labels(block)
        if kind == "resource" and len(labels) == 2:
            address, node_type, spec = f"{labels[0]}.{labels[1]}", "Resource", labels[0]
        elif kind == "data" and len(labels) == 2:
            address, node_type, spec = f"data.{labels[0]}.{labels[1]}", "Resource", \
                f"data.{labels[0]}"
        elif kind == "module" and len(labels) == 1:
            address, node_type, spec = f"module.{labels[0]}", "Component", "terraform-module"
        else:
            if kind in ("resource", "data", "module"):
                self.out.problems.append(Problem("warning", "bad-terraform", f"{kind} block with "
                                                 f"labels {brief(labels)}; skipped", self.doc_id,
                                                 self.line(block)))
            return
        me = f"{self.module}/{address}"
        attrs = {k: v for k, v in {"specType": spec}.items() if k in self.ctx.schema.attributes}
        self.out.nodes.append(NodeRecord(me, node_type, address, line=self.line(block),
                                         attributes=attrs))
        self.out.edges.append(EdgeRecord(me, "partOf", self.module, line=self.line(block),
                                         evidence=self.evidence(block), subject_type=node_type,
                                         object_type="Component",
                                         object_label=PurePosixPath(self.folder).name
                                         or self.folder))
        body = next((c for c in block.children if c.type == "body"), None)
        if body is None:
            return
        seen: set[tuple[str, str]] = set()
        if kind == "module":
            self._source(me, body)
        stack = [(c, False) for c in reversed(body.children)]
        while stack:
            node, explicit = stack.pop()
            if node.type == "attribute":
                name = self.text(node.children[0]) if node.children else ""
                explicit = name == "depends_on"
            if node.type == "variable_expr":
                target = self._target(node)
                if target is not None:
                    qualifier = "depends_on" if explicit else "reference"
                    if (target[0], qualifier) not in seen and target[0] != me:
                        seen.add((target[0], qualifier))
                        if self.out.full(self.doc_id, self.line(node)):
                            return
                        self.out.edges.append(EdgeRecord(
                            me, "dependsOn", target[0], line=self.line(node),
                            evidence=self.evidence(node), subject_type=node_type,
                            object_type=target[1], object_label=target[2],
                            qualifiers=(qualifier,)))
                continue
            stack.extend((c, explicit) for c in reversed(node.children))

    def _target(self, var) -> tuple[str, str, str] | None:
        """(ID, type, label) of the block a traversal starting at ``var`` names, if any."""
        parts = [self.text(var)]
        sibling = var.next_sibling
        while sibling is not None and sibling.type == "get_attr" and len(parts) < 3:
            ident = next((c for c in sibling.children if c.type == "identifier"), None)
            if ident is None:
                break
            parts.append(self.text(ident))
            sibling = sibling.next_sibling
        first = parts[0]
        if first in NOT_BLOCKS:
            return None
        if first == "module" and len(parts) >= 2:
            address = f"module.{parts[1]}"
            return f"{self.module}/{address}", "Component", address
        if first == "resource" and len(parts) >= 3:  # resource.<type>.<name> (Terraform 1.4+)
            address = f"{parts[1]}.{parts[2]}"
            return f"{self.module}/{address}", "Resource", address
        if first == "data" and len(parts) >= 3:
            address = f"data.{parts[1]}.{parts[2]}"
            return f"{self.module}/{address}", "Resource", address
        if "_" in first and len(parts) >= 2:
            address = f"{first}.{parts[1]}"
            return f"{self.module}/{address}", "Resource", address
        return None

    def _source(self, me: str, body) -> None:
        values: dict[str, tuple[str, object]] = {}
        for attr in body.children:
            if attr.type != "attribute" or not attr.children:
                continue
            name = self.text(attr.children[0])
            if name in ("source", "version"):
                literal = [n for n in _walk(attr) if n.type == "template_literal"]
                if literal:
                    values[name] = ("".join(self.text(n) for n in literal), attr)
        if "source" not in values:
            return
        source, attr = values["source"]
        qualifiers = ("source",) + ((f"version:{values['version'][0]}",)
                                    if "version" in values else ())
        if source.startswith(("./", "../")):
            folder = posixpath.normpath(posixpath.join(self.folder, source))
            target, label = module_id(folder), PurePosixPath(folder).name or folder
        else:
            target, label = f"terraform-module:{source}", source
        self.out.edges.append(EdgeRecord(me, "dependsOn", target, line=self.line(attr),
                                         evidence=self.evidence(attr), subject_type="Component",
                                         object_type="Component", object_label=label,
                                         qualifiers=qualifiers))


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


register(TerraformExtractor())
