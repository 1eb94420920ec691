"""``kgbuild init``: a commented ``kgbuild.toml`` that works as written.

Every setting the project file takes (:mod:`kgbuild.project.config`) is in the template with
what it does and its default: the ones a build needs are set, every other one is a comment
to uncomment. tests/project/test_init.py loads each commented line on its own, so the
template never names a key or value the file would refuse.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import KgbuildError
from ..io.atomic import atomic_write
from .config import CONFIG_FILE

TEMPLATE = """\
# kgbuild.toml: this folder is a kgbuild project (written by `kgbuild init`; docs/sources.md,
# "Projects"). Paths are relative to this folder; command-line flags override any setting.
# A line starting with "# key =" shows a setting's default: remove the "# " to change it.

# What `kgbuild build` with no arguments reads: files and folders, scanned recursively
# (Backstage catalogs, SBOMs, compose files, package manifests and lock files, Kubernetes,
# Helm, Terraform, OpenAPI, CODEOWNERS).
sources = {sources}

# The schema: a bundled name ("software") or the path of a schema YAML (one may extend the
# bundled schema with your own kinds).
schema = "software"

# The store: the graph, one named graph per source document; rebuilds re-extract only what
# changed. It writes its own .gitignore.
store = ".kgbuild"

# Files and folders to skip: gitignore-style patterns matched against paths relative to
# this folder.
exclude = []

# Honour the .gitignore files of the scanned folders (and of the folders above them).
gitignore = true

# Skip (and report) source files larger than this many MiB (1 to 1048576).
max_file_size = 20

# An access.yaml mapping source path globs to access labels; without one, everything is
# public (what `--principal` callers of traverse, show and serve may see).
# access = "access.yaml"

# The alias registry: aliases and accepted/rejected matches that rename mentioned entities
# (default: aliases.yaml in this folder, if there is one).
# aliases = "aliases.yaml"

# `kgbuild extract`: relations from prose through an OpenAI-compatible LLM. The key is read
# from $OPENAI_API_KEY only, and sent to a base_url named here only with --trust-project-url.
# [llm]
# model = "gpt-4o-mini"                     # else $KGBUILD_MODEL or --model (no default)
# base_url = "http://localhost:11434/v1"    # else $OPENAI_BASE_URL, else OpenAI
# mode = "chunk"                            # "chunk" (recalls more) or "document"
# chunk_size = 4000                         # characters per chunk (100 to 1000000)
# chunk_overlap = 400                       # characters a chunk repeats of the one before
# gleanings = 0                             # extra passes asking for missed relations (0-5)
# structured_output = "auto"                # or json_schema, json_object_schema, json_object
# concurrency = 4                           # requests in flight (1-256)
# timeout = 120                             # seconds per request attempt, answer included
# max_retries = 2                           # retries on 429, 5xx and timeouts (0-10)
# max_tokens = 4096                         # completion tokens per answer
# max_response_size = 32                    # MiB: the largest answer read
# temperature = 0.0                         # 0 to 2
# price = {{input = 0.15, output = 0.60}}     # US dollars per million tokens (cost estimate)

# `kgbuild ingest` and `kgbuild retrieve`: the embeddings endpoint of passage retrieval.
# [embeddings]
# base_url = "http://localhost:8000/v1"     # else $KGBUILD_EMBEDDINGS_URL, $OPENAI_BASE_URL
# model = "text-embedding-3-small"          # the passages' model
# query_model = "text-embedding-3-small"    # the questions' (default: the passage model's twin)
# passage_prefix = ""                       # text put before each passage
# query_prefix = ""                         # text put before each question

# `kgbuild retrieve`: the optional rerank step (POST {{base_url}}/rerank).
# [rerank]
# base_url = "http://localhost:8080/v1"     # else $KGBUILD_RERANK_URL (none: no rerank)
# model = "bge-reranker-v2-m3"              # else $KGBUILD_RERANK_MODEL, else the server's
# top_n = 30                                # fused passages reranked (1-1000)
# timeout = 60                              # seconds for a whole request

# `kgbuild build`: a running Backstage's catalog API, read besides the sources. The token
# comes from the environment variable token_env, sent to this url only with
# --trust-project-url.
# [backstage]
# url = "http://localhost:7007"             # the backend's base URL (required in the table)
# token_env = "BACKSTAGE_TOKEN"
# page_size = 500                           # entities per page (1-10000)
# max_entities = 200000                     # the most read
# max_page_size = 64                        # MiB: the largest page read
# timeout = 600                             # seconds for the whole listing
# request_timeout = 120                     # seconds for one page
"""


def project_template(sources: tuple[str, ...] = (".",)) -> str:
    """The commented ``kgbuild.toml`` text, building ``sources``."""
    listed = ", ".join(f'"{s}"' for s in sources)
    return TEMPLATE.format(sources=f"[{listed}]")


def init_project(folder: str | Path = ".", *, force: bool = False,
                 sources: tuple[str, ...] = (".",)) -> Path:
    """Write :func:`project_template` as ``folder``/kgbuild.toml and return its path; an
    existing file is kept (:class:`KgbuildError` ``output``) unless ``force``."""
    path = Path(folder) / CONFIG_FILE
    if path.exists() and not force:
        raise KgbuildError(f"{path} exists: kept (--force replaces it)", code="output")
    if path.exists() and not path.is_file():
        raise KgbuildError(f"{path} is not a regular file: not replaced", code="output")
    atomic_write(path, project_template(sources))
    return path
