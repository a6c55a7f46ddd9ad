"""Issue #24's false-alarm and miss classes that test_engine_real_changes.py did not pin yet, one
test per class, each on small code shaped like what showed it, each with a real deviation beside
the false alarm so the rule is shown alive."""

from __future__ import annotations

from services.analyzer.review import Target
from tests.analyzer.engine_factories import UNTYPED_MODULE, client_repository, found_rules, learn_sources, review_source
from tests.analyzer.test_engine_baseline import _review as _review_change


def test_a_lower_case_status_class_and_a_sentinel_are_names_an_api_imposed() -> None:
    # httpx's `class codes(IntEnum)` mirrors `requests.codes`; `undefined = _Undefined()` is a
    # sentinel spelled like the value it stands for.
    files = client_repository()
    files.update({f"acme/limits/limit{i}.py": f'"""Limit {i}."""\n\nMAX_RETRIES_{i} = {i}\n' for i in range(20)})
    model = learn_sources(files)
    findings = review_source(
        model,
        "acme/clients/status.py",
        '''
        """Status codes."""

        from enum import IntEnum


        class codes(IntEnum):
            """HTTP status codes, as requests spells them."""

            OK = 200
            NOT_FOUND = 404


        class _Undefined:
            """Nothing was passed."""


        undefined = _Undefined()


        class statusTable:
            """A mixed-case class the repository does not write."""
        ''',
    )
    assert found_rules(findings, "naming") == [("naming.case.class", 20)]


def test_ops_itms_and_prs_are_not_read_as_options_items_and_parse() -> None:
    files = client_repository()
    files["acme/clients/options.py"] = (
        '"""Options."""\n\n\ndef parse_options(options: dict, items: list, parse_mode: str) -> dict:\n'
        '    """Parse."""\n    return options\n'
    )
    model = learn_sources(files)
    findings = review_source(
        model,
        "acme/clients/install.py",
        '''
        """Ad-hoc install links and merged pull requests."""


        def install_link(itms_url: str, ops: list[str], prs: list[int], usr_name: str) -> str:
            """The itms-services link, the operations and pull requests it lists."""
            return itms_url
        ''',
    )
    assert [(f.rule, f.suggestion) for f in findings if f.rule == "vocabulary.term"] == [
        ("vocabulary.term", "user_name")
    ]


def test_async_and_codec_overrides_of_documented_base_methods_need_no_docstring() -> None:
    # aclose of an async transport, decode of a decoder, click's get_command of a MultiCommand.
    files = client_repository()
    files["acme/commands/base.py"] = (
        '"""Commands."""\n\n\nclass MultiCommand:\n    """Holds commands."""\n\n'
        "    def get_command(self, ctx: object, name: str) -> object:\n"
        '        """The command ``name``."""\n        return None\n\n\n'
        'class BaseDecoder:\n    """Decodes content."""\n\n'
        '    def decode(self, data: bytes) -> bytes:\n        """Decode ``data``."""\n        return data\n\n\n'
        'class AsyncBaseTransport:\n    """An async transport."""\n\n'
        '    async def aclose(self) -> None:\n        """Release it."""\n\n\n'
        # As in click and httpx, the repository derives its own classes from these bases.
        'class Group(MultiCommand):\n    """A group."""\n\n\n'
        'class AsyncHTTPTransport(AsyncBaseTransport):\n    """Over HTTP."""\n'
    )
    model = learn_sources(files)
    findings = review_source(
        model,
        "acme/commands/lazy.py",
        '''
        """Lazy commands."""

        from acme.commands.base import AsyncBaseTransport, BaseDecoder, MultiCommand


        class LazyGroup(MultiCommand):
            """Loads commands on first use."""

            def get_command(self, ctx: object, name: str) -> object:
                return None

            def list_lazy(self) -> list[str]:
                return []


        class IdentityDecoder(BaseDecoder):
            """Leaves content as it is."""

            def decode(self, data: bytes) -> bytes:
                return data


        class MockTransport(AsyncBaseTransport):
            """Answers from a handler."""

            async def aclose(self) -> None:
                pass
        ''',
    )
    assert found_rules(findings, "documentation") == [("documentation.docstring.method", 12)]


def test_go_subtest_style_test_names_are_how_go_test_names_cases() -> None:
    files = {
        f"store/part{i}_test.go": (
            f'package store\n\nimport "testing"\n\nfunc TestGetValue{i}(t *testing.T) {{\n}}\n\n'
            f"func TestSetValue{i}(t *testing.T) {{\n}}\n"
        )
        for i in range(20)
    }
    files.update(
        {f"store/part{i}.go": f"package store\n\nfunc readValue{i}() int {{\n\treturn {i}\n}}\n" for i in range(20)}
    )
    model = learn_sources(files)
    text = (
        'package store\n\nimport "testing"\n\nfunc TestParse_WithFlags(t *testing.T) {\n}\n\n'
        "func read_all_values() int {\n\treturn 0\n}\n"
    )
    assert found_rules(review_source(model, "store/parse_test.go", text), "naming") == [("naming.case.function", 8)]


def test_keys_a_data_format_fixes_are_not_the_authors_names() -> None:
    # A V8 heap snapshot's `meta.node_fields`, destructured as the format spells it.
    files = {
        f"src/part{i}.js": (
            f"export function readPart{i}(snapshotData) {{\n  const nodeCount = snapshotData.length;\n"
            "  return nodeCount;\n}\n"
        )
        for i in range(30)
    }
    model = learn_sources(files)
    text = """\
    export function readSnapshot(snapshot) {
      const { node_fields, node_types } = snapshot.snapshot.meta;
      const fieldCount = snapshot.snapshot.meta.node_fields.length;
      const edge_count = fieldCount + node_types.length;
      return node_fields.length + edge_count;
    }
    """
    assert found_rules(review_source(model, "src/heap.js", text), "naming") == [("naming.case.variable", 4)]


def test_comprehension_variables_are_judged_for_vocabulary() -> None:
    model = learn_sources(client_repository())
    findings = review_source(
        model,
        "acme/clients/names.py",
        '''
        """Header names."""


        def header_names(headers: list[str]) -> list[str]:
            """Every header's name."""
            return [hdr.split(":")[0] for hdr in headers]
        ''',
    )
    assert [(f.rule, f.start_line, f.suggestion) for f in findings if f.rule == "vocabulary.term"] == [
        ("vocabulary.term", 6, "header")
    ]


def test_a_stub_added_in_the_same_change_types_its_module() -> None:
    stub = "def quote(text: str, safe: str) -> str: ...\n"
    pair = _review_change(
        Target("acme/_speedups.pyi", "added", stub.encode(), None),
        Target("acme/_speedups.py", "added", UNTYPED_MODULE.encode(), None),
    )
    assert [f.rule for f in pair.findings if f.rule.startswith("typing")] == []
    alone = _review_change(Target("acme/_speedups.py", "added", UNTYPED_MODULE.encode(), None))
    assert [f.rule for f in alone.findings if f.rule.startswith("typing")] == ["typing.annotations.function"]


def test_foreign_libraries_for_json_templates_and_regular_expressions() -> None:
    files = client_repository()
    files.update(
        {
            f"acme/render/page{i}.py": (
                f'"""Page {i}."""\n\nimport json\nimport re\n\nimport jinja2\n\n\n'
                f"def render_{i}(text: str) -> str:\n"
                '    """Render."""\n'
                '    return jinja2.Template(re.sub("a", "b", json.dumps(text))).render()\n'
            )
            for i in range(12)
        }
    )
    model = learn_sources(files)
    text = '''
        """A faster page."""

        import mako.template
        import orjson
        import regex


        def render_fast(text: str) -> str:
            """Render."""
            return mako.template.Template(regex.sub("a", "b", orjson.dumps(text).decode())).render()
        '''
    found = sorted(
        f.rule for f in review_source(model, "acme/render/fast.py", text) if f.rule.startswith("dependencies")
    )
    assert found == [
        "dependencies.library.json",
        "dependencies.library.regex",
        "dependencies.library.templating",
    ]


def test_a_declaration_file_spells_the_names_of_the_code_it_declares() -> None:
    # axios's index.d.ts declares `type responseEncoding` for index.js's users: renaming it breaks
    # them. A `.d.ts` holds no code of its own (like a `.pyi`), so its names mirror what it declares.
    files = {
        f"lib/core/part{i}.ts": (
            f"export type PartOptions{i} = {{ size: number }};\n\n"
            f"export function readPart{i}(options: PartOptions{i}): number {{\n  return options.size;\n}}\n"
        )
        for i in range(30)
    }
    model = learn_sources(files)
    declaration = "export type responseEncoding = 'ascii' | 'utf8';\n\nexport type Method = 'get' | 'post';\n"
    assert found_rules(review_source(model, "index.d.ts", declaration), "naming") == []
    assert found_rules(review_source(model, "lib/core/encoding.ts", declaration), "naming") == [
        ("naming.case.class", 1)
    ]


def test_short_forms_the_change_or_the_language_reads_otherwise_are_not_renamed() -> None:
    # Wrong expansions judged on the lift-held replay: filelock's `cls_name` -> `close_name` (the
    # skeleton of close) and `for con in list(_all_connections)` -> `context`; nox's
    # `uv_vers = uv_version(uv_bin)` -> `uv_versions`; packaging's `op_fn` -> `op_filename`.
    files = client_repository()
    files["acme/clients/lifecycle.py"] = (
        '"""Lifecycle."""\n\n\n'
        "def close_client(client: object, close_timeout: float) -> None:\n"
        '    """Close it."""\n\n\n'
        "def enter_context(context: object, context_name: str) -> None:\n"
        '    """Enter it."""\n\n\n'
        "def supported_versions(versions: list[str], min_versions: int) -> list[str]:\n"
        '    """The versions."""\n    return versions\n\n\n'
        "def write_filename(filename: str, filename_suffix: str) -> None:\n"
        '    """Write it."""\n'
    )
    files.update(
        {
            f"acme/clients/more{i}.py": (
                f'"""More {i}."""\n\n\n'
                f"def closed_{i}(close_flag: bool, context_value: int, version: str, versions: list) -> None:\n"
                f'    """More."""\n\n\ndef named_{i}(filename_value: str) -> None:\n    """Named."""\n'
            )
            for i in range(10)
        }
    )
    model = learn_sources(files)
    locks = review_source(
        model,
        "acme/clients/locks.py",
        '''
        """Read-write locks kept in sqlite."""

        import sqlite3

        _all_connections: set[sqlite3.Connection] = set()


        def _cleanup_connections() -> None:
            """Close what is left."""
            for con in list(_all_connections):
                con.close()


        def resolve_lifetime(lifetime: float, cls_name: str, usr_name: str) -> float:
            """The lifetime for ``cls_name``."""
            return lifetime
        ''',
    )
    versions = review_source(
        model,
        "acme/clients/tools.py",
        '''
        """Tool versions."""


        def uv_version(binary: str) -> tuple[int, ...]:
            """The tool's version."""
            return (1,)


        def check(binary: str) -> tuple[int, ...]:
            """Check it."""
            uv_vers = uv_version(binary)
            return uv_vers


        def apply_operator(op_fn: object, vers: str) -> bool:
            """Apply it."""
            return bool(op_fn)
        ''',
    )
    # usr, a short form the repository never writes for a word it spells out, is still renamed.
    assert [(f.suggestion, f.level) for f in locks if f.rule == "vocabulary.term"] == [("user_name", "strict")]
    # `vers` is one version cut short, not `ver` + s (`uv_vers` -> `uv_version` would shadow the
    # function); `fn` is a function as often as a file name: loose only.
    assert [(f.suggestion, f.level) for f in versions if f.rule == "vocabulary.term"] == [("version", "strict")]
