"""A batch of mentions resolved on several cores: forked children share the resolver's index
copy-on-write and send their results back pickled (:meth:`Resolver.resolve_many
<kgbuild.resolve.resolver.Resolver.resolve_many>`)."""

from __future__ import annotations

import gc
import os
import pickle
from typing import Callable

from .results import Resolution


def _pack(res: Resolution) -> tuple:
    """A resolution's fields but the mention, for sending between processes."""
    return (res.type, res.status, res.id, res.stage, res.score, res.candidates, res.reason,
            res.searched, res.suggested_id, res.details, res.own_id)


def resolve_forked(resolve: Callable[[list[tuple]], list[Resolution]], items: list[tuple],
                   workers: int) -> list[Resolution]:
    """``resolve(items)`` (a resolution per ``(mention, type, own_id)``) in order: every
    ``workers``-th item from ``k`` in the ``k``-th of ``workers - 1`` forked children (pickled
    back), the rest here; a child's error is raised here, a child that died has its share
    done here."""
    children = []
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()  # keep the children's collector off the shared pages
    try:
        for k in range(1, workers):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # child: resolve every workers-th item from k, send them back
                code = 0
                try:
                    os.close(read)
                    try:
                        out = (True, [_pack(r) for r in resolve(items[k::workers])])
                    except BaseException as exc:  # re-raised in the parent
                        out = (False, exc)
                    data = pickle.dumps(out, pickle.HIGHEST_PROTOCOL)
                    with os.fdopen(write, "wb") as fh:
                        fh.write(data)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            os.close(write)
            children.append((k, pid, read))
    finally:
        if frozen:
            gc.unfreeze()
    results: list = [None] * len(items)
    try:
        results[0::workers] = resolve(items[0::workers])
    finally:
        packed = []
        for k, pid, read in children:
            with os.fdopen(read, "rb") as fh:
                data = fh.read()
            os.waitpid(pid, 0)
            packed.append((k, data))
    for k, data in packed:
        try:
            ok, out = pickle.loads(data)
        except Exception:  # the child died: do its share here
            ok, out = True, [_pack(r) for r in resolve(items[k::workers])]
        if not ok:
            raise out
        results[k::workers] = [Resolution(m, *rest) for (m, _, _), rest in zip(items[k::workers], out)]
    return results
