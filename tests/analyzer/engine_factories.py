"""Hand-built facts for engine tests: a compact way to describe a file the extractor would see."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from services.analyzer.engine import CheckPrefs, ConventionModel, Finding, check, learn
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, Thresholds
from services.source.extract import extract
from services.source.facts import FileFacts, Formatting, Identifier, Import, Statement, Symbol
from services.source.imports import resolve_imports

# A repository that raises the rules held loose until they earn the strict level on real changes
# (earned.py) in .codereview.yml: the checks of those rules, as it gets them.
HELD_RAISED = Thresholds(DEFAULT_THRESHOLDS.bars)


def learn_sources(files: dict[str, str], thresholds: Thresholds = HELD_RAISED) -> ConventionModel:
    """The model of a repository of ``files`` (path -> source, dedented), extracted as the indexer
    does; by default as a repository raising the held rules gets it, so that what a test pins is
    what the checks see, whatever level the rule serves at by default."""
    facts = [extract(path, textwrap.dedent(text).encode()) for path, text in files.items()]
    return learn(resolve_imports(facts), thresholds=thresholds)


def review_source(model: ConventionModel, path: str, text: str, prefs: CheckPrefs | None = None) -> list[Finding]:
    """The findings of one file ``text`` (dedented) at ``path``."""
    text = textwrap.dedent(text).lstrip("\n")
    return check(extract(path, text.encode()), text, model, prefs=prefs)


def found_rules(findings: list[Finding], prefix: str) -> list[tuple[str, int]]:
    """(rule, line) of the findings whose rule starts with ``prefix``."""
    return [(f.rule, f.start_line) for f in findings if f.rule.startswith(prefix)]


def client_module(i: int, documented_methods: bool = True, extra: str = "") -> str:
    """A documented, annotated client module of a repository of many alike (``client_repository``)."""
    doc = '        """Send it."""\n' if documented_methods else ""
    return (
        f'"""Client {i}."""\n\nfrom __future__ import annotations\n\nimport logging\n\n'
        "log = logging.getLogger(__name__)\n\n\n"
        f"class Client{i}:\n"
        f'    """Talks to service {i}."""\n\n'
        "    def send_request(self, header_name: str, header_value: str) -> str:\n"
        f"{doc}"
        "        for header in (header_name, header_value):\n"
        '            log.debug("header %s", header)\n'
        "        return header_name\n\n\n"
        f"def build_client_{i}(user_name: str, response_code: int) -> Client{i}:\n"
        '    """Build one."""\n'
        f"    return Client{i}()\n" + extra
    )


def client_repository(n: int = 30, documented_methods: bool = True) -> dict[str, str]:
    """``n`` client modules: a repository whose habits are clear."""
    return {f"acme/clients/client{i}.py": client_module(i, documented_methods) for i in range(n)}


# A module with no annotations, whose types a stub beside it may hold.
UNTYPED_MODULE = '"""C-accelerated quoting."""\n\n\ndef quote(text, safe):\n    """Quote."""\n    return text\n'


def formatting(
    *,
    unit: str = "space",
    width: int = 4,
    double: int = 10,
    single: int = 0,
    max_len: int = 70,
    trailing: int = 0,
    final_newline: bool = True,
    ending: str = "lf",
) -> Formatting:
    return Formatting(
        indent_unit=unit,
        indent_width=width,
        indented_lines=20,
        tab_indented_lines=20 if unit == "tab" else 0,
        space_indented_lines=20 if unit == "space" else 0,
        quote_double=double,
        quote_single=single,
        max_line_length=max_len,
        max_judged_line_length=max_len,
        line_length_p95=max_len - 5,
        long_lines=(1, 2, 3),
        trailing_whitespace_lines=trailing,
        final_newline=final_newline,
        line_ending=ending,
    )


def py_file(
    path: str,
    *,
    functions: Iterable[tuple[str, int]] = (),
    variables: Iterable[tuple[str, int]] = (),
    params: Iterable[tuple[str, int]] = (),
    classes: Iterable[tuple[str, int]] = (),
    imports: Iterable[Import] = (),
    statements: Iterable[Statement] = (),
    documented: bool = True,
    annotated: bool = True,
    undocumented: Iterable[str] = (),
    lines: int = 60,
    fmt: Formatting | None = None,
    is_test: bool = False,
    tests_for: tuple[str, ...] = (),
) -> FileFacts:
    """A Python file whose functions span 5 lines each from the given start line."""
    symbols: list[Symbol] = []
    idents: list[Identifier] = []
    missing = set(undocumented)
    for name, line in functions:
        role = "test_function" if is_test and name.startswith("test") else "function"
        idents.append(Identifier(name, role, line))
        vis = "private" if name.startswith("_") else "public"
        doc = documented and name not in missing
        symbols.append(Symbol("function", name, line, line + 4, vis, doc, annotated, "", is_test))
    for name, line in classes:
        idents.append(Identifier(name, "class", line))
        symbols.append(Symbol("class", name, line, line + 4, "public", documented, False))
    for name, line in variables:
        idents.append(Identifier(name, "variable", line))
    for name, line in params:
        idents.append(Identifier(name, "parameter", line))
    module = path[:-3].replace("/", ".").removesuffix(".__init__")
    return FileFacts(
        path=path,
        language="python",
        size=lines * 30,
        lines=lines,
        is_test=is_test,
        tests_for=tests_for,
        module=module,
        symbols=tuple(symbols),
        identifiers=tuple(idents),
        imports=tuple(imports),
        formatting=fmt or formatting(),
        statements=tuple(statements),
    )


def imp(module: str, line: int, *, group: str = "stdlib", names: tuple[str, ...] = ("",), resolved: str = "") -> Import:
    return Import(module, names, line, resolved, module.startswith("."), group)


def source_text(lines: int, overrides: dict[int, str] | None = None) -> str:
    """A file text of ``lines`` short lines with chosen lines replaced (1-based)."""
    body = [f"x{i} = {i}" for i in range(1, lines + 1)]
    for no, text in (overrides or {}).items():
        body[no - 1] = text
    return "\n".join(body) + "\n"


def synthetic_repo(modules: int = 25) -> list[FileFacts]:
    """A consistent repository: snake_case, documented and annotated, httpx + logging, api -> core."""
    files: list[FileFacts] = []
    for i in range(modules):
        files.append(
            py_file(
                f"app/api/handler{i}.py",
                functions=[(f"get_user_{i}", 10), (f"send_message_{i}", 20), (f"parse_request_{i}", 30)],
                variables=[("user_id", 12), ("message", 22)],
                params=[("user_name", 10), ("request", 30)],
                imports=[
                    imp("logging", 1),
                    imp("httpx", 2, group="third_party"),
                    imp("app.core.store", 3, group="local", names=("get",), resolved=f"app/core/store{i}.py"),
                ],
                statements=[Statement("logging_call", 15)],
            )
        )
        files.append(
            py_file(
                f"app/core/store{i}.py",
                functions=[(f"load_user_{i}", 10), (f"save_message_{i}", 20)],
                variables=[("user_name", 12), ("message_count", 22)],
                imports=[imp("logging", 1), imp("json", 2)],
                statements=[Statement("logging_call", 15)],
            )
        )
        files.append(
            py_file(
                f"tests/test_handler{i}.py",
                functions=[(f"test_get_user_{i}", 5)],
                is_test=True,
                tests_for=(f"app.api.handler{i}",),
                documented=False,
            )
        )
    return files


PLANTED_TEXT = '''import logging
import requests
from app.api.handler1 import x


def getUserName(usr_id: int) -> str:
    """Return the user's name."""
    try:
        return lookup(usr_id)
    except:
        print("failed")
        raise


def save_record(record: str) -> str:
    log.info(f"saving {record}")
    return 'saved'


def load_all() -> list:
    """Load everything."""
\treturn []
'''

# (rule, line, suggestion) of every deviation planted in PLANTED_TEXT
PLANTED: set[tuple[str, int, str | None]] = {
    ("dependencies.library.http_client", 2, None),
    ("dependencies.layering", 3, None),
    ("naming.case.function", 6, "get_user_name"),
    ("vocabulary.term", 6, "user_id"),
    ("idioms.bare_except", 10, None),  # `except Exception:` would break idioms.broad_except here
    ("idioms.print", 11, None),
    ("documentation.docstring.function", 15, None),
    ("idioms.logging_format", 16, None),
    ("formatting.quotes", 17, '    return "saved"'),
    ("formatting.indent.unit", 22, "    return []"),
}


def planted_facts(path: str = "app/core/new_store.py", shift: int = 0) -> FileFacts:
    """Facts of PLANTED_TEXT as the extractor would report them (lines moved down by ``shift``)."""

    def at(line: int) -> int:
        return line + shift

    return py_file(
        path,
        functions=[("getUserName", at(6)), ("save_record", at(15)), ("load_all", at(20))],
        params=[("usr_id", at(6)), ("record", at(15))],
        undocumented=["save_record"],
        imports=[
            imp("logging", at(1)),
            imp("requests", at(2), group="third_party"),
            imp("app.api.handler1", at(3), group="local", names=("x",), resolved="app/api/handler1.py"),
        ],
        statements=[
            Statement("bare_except", at(10)),
            Statement("print_call", at(11), "print"),
            Statement("logging_call", at(16)),
            Statement("fstring_log", at(16)),
        ],
        lines=23 + shift,
        fmt=formatting(double=3, single=1, max_len=50),
    )
