"""Common abbreviations of words that appear in identifiers.

Neither form is "right": a repository that writes ``msg`` everywhere wants ``msg``. The table only
says which spellings are variants of one term; the repository's own counts pick the preferred one.
Words whose short form is the universal spelling (``id``, ``args``) or a builtin of a language
(``str``, ``dict``, ``len``, ``max``, ``iter``, ``exec``, ``del``) are left out on purpose: code
says ``str`` because the type is called that, not for lack of a preferred term.
"""

from __future__ import annotations

ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "address": ("addr",),
    "allocate": ("alloc",),
    "application": ("app",),
    "argument": ("arg",),
    "attribute": ("attr",),
    "authentication": ("authn",),
    "authorization": ("authz",),
    "average": ("avg",),
    "buffer": ("buf", "buff"),
    "button": ("btn",),
    "calculate": ("calc",),
    "callback": ("cb",),
    "certificate": ("cert",),
    "character": ("char", "chr"),
    "column": ("col",),
    "command": ("cmd",),
    "compare": ("cmp",),
    "configuration": ("config", "cfg", "conf"),
    "config": ("cfg", "conf"),
    "connection": ("conn",),
    "context": ("ctx",),
    "count": ("cnt",),
    "current": ("cur", "curr"),
    "database": ("db",),
    "decrement": ("dec",),
    "default": ("dflt",),
    "definition": ("defn",),
    "description": ("desc",),
    "destination": ("dest", "dst"),
    "difference": ("diff",),
    "directory": ("dir",),
    "document": ("doc",),
    "element": ("elem", "el"),
    "environment": ("env",),
    "error": ("err",),
    "event": ("evt",),
    "exception": ("exc",),
    "expression": ("expr",),
    "extension": ("ext",),
    "filename": ("fname", "fn"),
    "format": ("fmt",),
    "frequency": ("freq",),
    "function": ("func", "fn"),
    "generate": ("gen",),
    "header": ("hdr",),
    "height": ("hgt",),
    "identifier": ("ident",),
    "image": ("img",),
    "increment": ("inc", "incr"),
    "index": ("idx", "ndx"),
    "information": ("info",),
    "initialize": ("init",),
    "language": ("lang",),
    "library": ("lib",),
    "location": ("loc",),
    "manager": ("mgr",),
    "memory": ("mem",),
    "message": ("msg", "mesg"),
    "module": ("mod",),
    "number": ("num", "nr"),
    "object": ("obj",),
    "operation": ("op",),
    "package": ("pkg",),
    "parameter": ("param",),
    "password": ("passwd", "pwd"),
    "pointer": ("ptr",),
    "position": ("pos",),
    "previous": ("prev",),
    "properties": ("props",),
    "property": ("prop",),
    "quantity": ("qty",),
    "query": ("qry",),
    "receive": ("recv",),
    "record": ("rec",),
    "reference": ("ref",),
    "register": ("reg",),
    "repository": ("repo",),
    "request": ("req",),
    "response": ("resp", "res"),
    "result": ("res",),
    "return": ("ret",),
    "sequence": ("seq",),
    "server": ("srv",),
    "source": ("src",),
    "specification": ("spec",),
    "statement": ("stmt",),
    "synchronize": ("sync",),
    "table": ("tbl",),
    "temporary": ("tmp", "temp"),
    "text": ("txt",),
    "timestamp": ("ts",),
    "user": ("usr",),
    "utility": ("util",),
    "value": ("val",),
    "variable": ("var",),
    "version": ("ver",),
    "window": ("win", "wnd"),
}

# abbreviation -> the words it abbreviates
EXPANSIONS: dict[str, tuple[str, ...]] = {}
for _word, _abbrevs in ABBREVIATIONS.items():
    for _a in _abbrevs:
        EXPANSIONS[_a] = (*EXPANSIONS.get(_a, ()), _word)

_VOWELS = frozenset("aeiou")


def skeleton(word: str) -> str:
    """First letter plus the remaining consonants, doubled letters collapsed: user -> usr."""
    out = [word[0]]
    for c in word[1:]:
        if c not in _VOWELS and c != out[-1]:
            out.append(c)
    return "".join(out)
