"""The benchmark's own word lists: abbreviations to plant and libraries that do the same job.

Written for the benchmark, not taken from the engine (``services/analyzer/engine``), so that the
engine is measured on spellings and libraries it was not built around. Where a pair or a library
happens to be in the engine's tables too, the report says so per planted kind (``evaluate``).

Abbreviations are the forms programmers write in identifiers, of the two kinds the literature on
identifier expansion describes (Lawrie, Feild, Binkley, SCAM 2007; Hill et al., "AMAP", MSR 2008):
a prefix of the word (``impl``, ``repr``, ``orig``) and a word with letters dropped (``msg``,
``txn``, ``grp``). Short forms that are ordinary English words (``cat``, ``net``, ``out``, ``no``)
are left out: replacing ``category`` by ``cat`` changes the meaning as much as the spelling.
"""

from __future__ import annotations

# word -> abbreviations written for it in code
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "address": ("addr",),
    "administrator": ("admin",),
    "allocate": ("alloc",),
    "application": ("app",),
    "argument": ("arg",),
    "array": ("arr",),
    "asynchronous": ("async",),
    "attribute": ("attr",),
    "authentication": ("auth",),
    "authorization": ("auth",),
    "average": ("avg",),
    "boolean": ("bool",),
    "buffer": ("buf",),
    "button": ("btn",),
    "calculate": ("calc",),
    "callback": ("cb",),
    "certificate": ("cert",),
    "character": ("char", "ch"),
    "collection": ("coll",),
    "column": ("col",),
    "command": ("cmd",),
    "compare": ("cmp",),
    "condition": ("cond",),
    "configuration": ("config", "cfg", "conf"),
    "connection": ("conn",),
    "constant": ("const",),
    "context": ("ctx",),
    "control": ("ctrl",),
    "conversion": ("conv",),
    "coordinate": ("coord",),
    "count": ("cnt",),
    "current": ("cur", "curr"),
    "database": ("db",),
    "declaration": ("decl",),
    "default": ("dflt",),
    "definition": ("defn",),
    "dependency": ("dep",),
    "description": ("desc",),
    "destination": ("dest", "dst"),
    "dictionary": ("dict",),
    "dimension": ("dim",),
    "directory": ("dir",),
    "distance": ("dist",),
    "document": ("doc",),
    "element": ("elem",),
    "encoding": ("enc",),
    "environment": ("env",),
    "error": ("err",),
    "escape": ("esc",),
    "event": ("evt",),
    "exception": ("exc",),
    "execute": ("exec",),
    "expression": ("expr",),
    "extension": ("ext",),
    "field": ("fld",),
    "filename": ("fname",),
    "format": ("fmt",),
    "frequency": ("freq",),
    "function": ("func", "fn"),
    "generator": ("gen",),
    "group": ("grp",),
    "handle": ("hdl",),
    "header": ("hdr",),
    "horizontal": ("horiz",),
    "identifier": ("ident",),
    "image": ("img",),
    "implementation": ("impl",),
    "increment": ("incr",),
    "index": ("idx",),
    "information": ("info",),
    "initialize": ("init",),
    "instance": ("inst",),
    "integer": ("int",),
    "iterator": ("iter",),
    "keyword": ("kw",),
    "language": ("lang",),
    "length": ("len",),
    "library": ("lib",),
    "location": ("loc",),
    "manager": ("mgr",),
    "maximum": ("max",),
    "memory": ("mem",),
    "message": ("msg",),
    "minimum": ("min",),
    "miscellaneous": ("misc",),
    "module": ("mod",),
    "multiply": ("mul",),
    "namespace": ("ns",),
    "negative": ("neg",),
    "number": ("num",),
    "object": ("obj",),
    "operator": ("op",),
    "option": ("opt",),
    "original": ("orig",),
    "package": ("pkg",),
    "parameter": ("param",),
    "password": ("passwd", "pwd"),
    "pointer": ("ptr",),
    "position": ("pos",),
    "previous": ("prev",),
    "priority": ("prio",),
    "process": ("proc",),
    "program": ("prog",),
    "property": ("prop",),
    "quantity": ("qty",),
    "random": ("rand", "rnd"),
    "receive": ("recv",),
    "receiver": ("rcvr",),
    "rectangle": ("rect",),
    "reference": ("ref",),
    "register": ("reg",),
    "repository": ("repo",),
    "representation": ("repr",),
    "request": ("req",),
    "response": ("resp",),
    "result": ("res",),
    "return": ("ret",),
    "second": ("sec",),
    "segment": ("seg",),
    "select": ("sel",),
    "separator": ("sep",),
    "sequence": ("seq",),
    "server": ("srv",),
    "session": ("sess",),
    "source": ("src",),
    "specification": ("spec",),
    "standard": ("std",),
    "statement": ("stmt",),
    "statistics": ("stats",),
    "string": ("str",),
    "structure": ("struct",),
    "synchronize": ("sync",),
    "system": ("sys",),
    "table": ("tbl",),
    "target": ("tgt",),
    "template": ("tmpl", "tpl"),
    "temporary": ("tmp", "temp"),
    "text": ("txt",),
    "timestamp": ("ts",),
    "token": ("tok",),
    "total": ("tot",),
    "transaction": ("txn",),
    "transform": ("xform",),
    "utility": ("util",),
    "value": ("val",),
    "variable": ("var",),
    "version": ("ver",),
    "vertical": ("vert",),
    "window": ("win",),
}


# Plurals that would read as other words.
_NOT_PLURALS = frozenset({"wins", "cons", "decs", "mins", "maxs"})


def variants(word: str) -> tuple[str, ...]:
    """Abbreviations of ``word``, and of a plural the plural of a three-letter-or-longer
    abbreviation that does not end in ``s`` (``messages`` -> ``msgs``; not ``results`` -> ``ress``)."""
    if word in ABBREVIATIONS:
        return ABBREVIATIONS[word]
    if word.endswith("s") and word[:-1] in ABBREVIATIONS and not word.endswith("ss"):
        plurals = (a + "s" for a in ABBREVIATIONS[word[:-1]] if len(a) >= 3 and not a.endswith("s"))
        return tuple(p for p in plurals if p not in _NOT_PLURALS)
    return ()


# Libraries by job, per ecosystem: label -> module prefixes that are that one choice.
PYTHON_LIBRARIES: dict[str, dict[str, tuple[str, ...]]] = {
    "http client": {
        "requests": ("requests",),
        "httpx": ("httpx",),
        "aiohttp": ("aiohttp",),
        "urllib3": ("urllib3",),
        "httplib2": ("httplib2",),
        "stdlib http": ("urllib.request", "http.client"),
        "pycurl": ("pycurl",),
    },
    "logging": {
        "logging": ("logging",),
        "loguru": ("loguru",),
        "structlog": ("structlog",),
        "logbook": ("logbook",),
    },
    "json": {
        "json": ("json",),
        "simplejson": ("simplejson",),
        "ujson": ("ujson",),
        "orjson": ("orjson",),
    },
    "test runner": {"unittest": ("unittest",), "pytest": ("pytest",), "nose": ("nose",)},
    "command line": {
        "argparse": ("argparse",),
        "optparse": ("optparse",),
        "getopt": ("getopt",),
        "click": ("click",),
        "typer": ("typer",),
        "docopt": ("docopt",),
    },
    "dates": {"datetime": ("datetime",), "arrow": ("arrow",), "pendulum": ("pendulum",)},
    "serialization": {"pickle": ("pickle",), "dill": ("dill",), "cloudpickle": ("cloudpickle",)},
    "xml": {"ElementTree": ("xml.etree",), "minidom": ("xml.dom",), "lxml": ("lxml",)},
    "yaml": {"PyYAML": ("yaml",), "ruamel": ("ruamel",)},
    "templates": {"jinja2": ("jinja2",), "mako": ("mako",)},
    "subprocesses": {"subprocess": ("subprocess",), "sh": ("sh",), "plumbum": ("plumbum",)},
    "terminal colour": {"colorama": ("colorama",), "termcolor": ("termcolor",)},
}
# Not a test runner: the mock library ships inside unittest.
PYTHON_NOT = {"unittest": ("unittest.mock",)}

JS_LIBRARIES: dict[str, dict[str, tuple[str, ...]]] = {
    "http client": {
        "axios": ("axios",),
        "node-fetch": ("node-fetch",),
        "got": ("got",),
        "superagent": ("superagent",),
        "undici": ("undici",),
        "ky": ("ky",),
    },
    "logging": {"winston": ("winston",), "pino": ("pino",), "bunyan": ("bunyan",), "loglevel": ("loglevel",)},
    "test runner": {"jest": ("jest", "@jest/globals"), "mocha": ("mocha",), "vitest": ("vitest",), "ava": ("ava",)},
    "assertions": {"chai": ("chai",), "node assert": ("assert", "node:assert"), "should": ("should",)},
    "command line": {"commander": ("commander",), "yargs": ("yargs",), "minimist": ("minimist",), "meow": ("meow",)},
    "dates": {"moment": ("moment",), "dayjs": ("dayjs",), "date-fns": ("date-fns",), "luxon": ("luxon",)},
    "utilities": {"lodash": ("lodash", "lodash-es"), "underscore": ("underscore",), "ramda": ("ramda",)},
    "multipart forms": {"form-data": ("form-data",), "formdata-node": ("formdata-node",)},
}
JS = frozenset({"javascript", "typescript", "tsx"})


def libraries(language: str) -> dict[str, dict[str, tuple[str, ...]]]:
    if language == "python":
        return PYTHON_LIBRARIES
    return JS_LIBRARIES if language in JS else {}


def jobs_of(language: str, module: str) -> set[tuple[str, str]]:
    """(job, label) pairs an imported module counts for: the module is a label's prefix or inside it."""
    sep = "." if language == "python" else "/"
    out = set()
    for job, labels in libraries(language).items():
        for label, prefixes in labels.items():
            inside = any(module == p or module.startswith(p + sep) for p in prefixes)
            excluded = any(module == p or module.startswith(p + sep) for p in PYTHON_NOT.get(label, ()))
            if inside and not excluded:
                out.add((job, label))
    return out
