"""Libraries that do the same job, per ecosystem: the table behind "a new `requests` where the
repository uses `httpx` everywhere". Labels map to module prefixes; a label may group modules that
are one choice (``urllib.request`` sits on ``http.client``).
"""

from __future__ import annotations

from functools import lru_cache

PYTHON_JOBS: dict[str, dict[str, tuple[str, ...]]] = {
    "http_client": {
        "requests": ("requests",),
        "httpx": ("httpx",),
        "aiohttp": ("aiohttp",),
        "urllib3": ("urllib3",),
        "urllib.request": ("urllib.request", "http.client", "urllib2", "httplib"),
        "pycurl": ("pycurl",),
        "treq": ("treq",),
    },
    "logging": {
        "logging": ("logging",),
        "loguru": ("loguru",),
        "structlog": ("structlog",),
        "logbook": ("logbook",),
        "eliot": ("eliot",),
    },
    "testing": {"unittest": ("unittest",), "pytest": ("pytest", "_pytest"), "nose": ("nose", "nose2")},
    "mocking": {"unittest.mock": ("unittest.mock",), "mock": ("mock",)},
    "json": {
        "json": ("json",),
        "orjson": ("orjson",),
        "ujson": ("ujson",),
        "simplejson": ("simplejson",),
        "rapidjson": ("rapidjson",),
    },
    "datetime": {
        "datetime": ("datetime",),
        "arrow": ("arrow",),
        "pendulum": ("pendulum",),
        "delorean": ("delorean",),
        "maya": ("maya",),
    },
    "cli": {
        "argparse": ("argparse",),
        "optparse": ("optparse",),
        "getopt": ("getopt",),
        "click": ("click",),
        "typer": ("typer",),
        "docopt": ("docopt",),
        "fire": ("fire",),
    },
    "orm": {
        "sqlalchemy": ("sqlalchemy",),
        "peewee": ("peewee",),
        "django.db": ("django.db",),
        "tortoise": ("tortoise",),
        "pony": ("pony.orm",),
    },
    "async": {
        "asyncio": ("asyncio",),
        "trio": ("trio",),
        "curio": ("curio",),
        "gevent": ("gevent",),
        "twisted": ("twisted",),
        "eventlet": ("eventlet",),
    },
    "yaml": {"pyyaml": ("yaml",), "ruamel.yaml": ("ruamel.yaml", "ruamel")},
    "toml": {"tomllib": ("tomllib",), "toml": ("toml",), "tomli": ("tomli",), "tomlkit": ("tomlkit",)},
    "validation": {
        "pydantic": ("pydantic",),
        "marshmallow": ("marshmallow",),
        "attrs": ("attr", "attrs"),
        "cerberus": ("cerberus",),
        "voluptuous": ("voluptuous",),
    },
    "templating": {"jinja2": ("jinja2",), "mako": ("mako",), "chameleon": ("chameleon",)},
    "web_framework": {
        "flask": ("flask",),
        "fastapi": ("fastapi",),
        "django": ("django",),
        "starlette": ("starlette",),
        "bottle": ("bottle",),
        "tornado": ("tornado",),
        "falcon": ("falcon",),
        "sanic": ("sanic",),
    },
    "regex": {"re": ("re",), "regex": ("regex",)},
}

JS_JOBS: dict[str, dict[str, tuple[str, ...]]] = {
    "http_client": {
        "axios": ("axios",),
        "node-fetch": ("node-fetch", "cross-fetch", "isomorphic-fetch"),
        "got": ("got",),
        "superagent": ("superagent",),
        "request": ("request",),
        "undici": ("undici",),
        "ky": ("ky",),
    },
    "logging": {
        "winston": ("winston",),
        "pino": ("pino",),
        "bunyan": ("bunyan",),
        "log4js": ("log4js",),
        "loglevel": ("loglevel",),
    },
    "testing": {
        "jest": ("jest", "@jest/globals"),
        "mocha": ("mocha",),
        "vitest": ("vitest",),
        "ava": ("ava",),
        "tap": ("tap",),
        "jasmine": ("jasmine",),
        "node:test": ("node:test",),
    },
    "assertion": {"chai": ("chai",), "assert": ("assert", "node:assert"), "should": ("should",)},
    "datetime": {"moment": ("moment",), "dayjs": ("dayjs",), "date-fns": ("date-fns",), "luxon": ("luxon",)},
    "utility": {"lodash": ("lodash", "lodash-es"), "underscore": ("underscore",), "ramda": ("ramda",)},
    "cli": {
        "commander": ("commander",),
        "yargs": ("yargs",),
        "meow": ("meow",),
        "minimist": ("minimist",),
        "cac": ("cac",),
    },
    "orm": {
        "sequelize": ("sequelize",),
        "typeorm": ("typeorm",),
        "prisma": ("@prisma/client",),
        "mongoose": ("mongoose",),
        "knex": ("knex",),
        "drizzle": ("drizzle-orm",),
    },
    "validation": {
        "zod": ("zod",),
        "yup": ("yup",),
        "joi": ("joi", "@hapi/joi"),
        "ajv": ("ajv",),
        "superstruct": ("superstruct",),
    },
    "web_framework": {
        "express": ("express",),
        "koa": ("koa",),
        "fastify": ("fastify",),
        "hapi": ("@hapi/hapi",),
        "restify": ("restify",),
    },
}

JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx", "jsx"})
# Part of a job's label by prefix, but a different job: unittest.mock is not a test runner.
_EXCLUDED: dict[str, frozenset[str]] = {"unittest": frozenset({"unittest.mock"})}


def jobs_for(language: str) -> dict[str, dict[str, tuple[str, ...]]]:
    if language == "python":
        return PYTHON_JOBS
    if language in JS_LANGUAGES:
        return JS_JOBS
    return {}


@lru_cache(maxsize=65_536)
def classify(language: str, module: str) -> tuple[tuple[str, str], ...]:
    """The (job, label) pairs an imported module belongs to."""
    sep = "." if language == "python" else "/"
    out: list[tuple[str, str]] = []
    for job, labels in jobs_for(language).items():
        for label, prefixes in labels.items():
            if any(module == p or module.startswith(p + sep) for p in prefixes) and not any(
                module == x or module.startswith(x + sep) for x in _EXCLUDED.get(label, ())
            ):
                out.append((job, label))
    return tuple(out)
