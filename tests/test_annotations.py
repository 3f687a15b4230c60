"""Type annotations on public callables: every public function of qlib annotates each
parameter and its return, except those listed in ``tests/unannotated_public.txt``; that
list may only shrink (a listed function that is now annotated must leave it)."""
import importlib
import inspect
import pathlib
import pkgutil

import qlib

LIST = pathlib.Path(__file__).with_name("unannotated_public.txt")


def _public_functions():
    seen = set()
    for m in pkgutil.walk_packages(qlib.__path__, "qlib."):
        if any(p.startswith("_") for p in m.name.split(".")[1:]) or m.name.startswith("qlib.sweep"):
            continue                                   # qlib.sweep needs the optional extra
        mod = importlib.import_module(m.name)
        for name in getattr(mod, "__all__", []):
            f = getattr(mod, name)
            if inspect.isfunction(f) and id(f) not in seen:
                seen.add(id(f))
                yield f"{f.__module__}.{f.__qualname__}", f


def _unannotated(f):
    sig = inspect.signature(f)
    bad = [p for p, q in sig.parameters.items()
           if q.annotation is inspect.Parameter.empty and q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD)]
    return bad or sig.return_annotation is inspect.Signature.empty


def test_public_functions_are_annotated_or_listed():
    listed = {x.strip() for x in LIST.read_text().splitlines() if x.strip() and not x.startswith("#")}
    funcs = dict(_public_functions())
    assert len(funcs) > 100                            # the walk found the package
    missing = sorted(n for n, f in funcs.items() if _unannotated(f) and n not in listed)
    assert not missing, f"annotate these public functions: {missing}"
    stale = sorted(n for n in listed if n in funcs and not _unannotated(funcs[n]))
    assert not stale, f"annotated now, remove from {LIST.name}: {stale}"
