"""Planted violations the engine missed on unseen repositories (issue #24 item 4) for a reason of
its own rather than a rule held loose: each test is small code shaped like the file that showed the
miss, with the deviation the engine now reports and the look-alike it still leaves alone."""

from __future__ import annotations

from tests.analyzer.engine_factories import found_rules, learn_sources, review_source


def _js_test(i: int) -> str:
    return (
        "'use strict'\n"
        "const test = require('tape')\n"
        "const pino = require('../browser')\n\n"
        f"test('level {i}', ({{ end, same }}) => {{\n"
        "  const expected = [\n"
        "    {\n"
        f"      level: {i},\n"
        "      msg: 'hello'\n"
        "    }\n"
        "  ]\n"
        "  const instance = pino({ browser: { write (actual) { same(actual, expected.shift()) } } })\n"
        "  instance.info('hello')\n"
        "  end()\n"
        "})\n"
    )


def test_a_brace_alone_on_its_line_opens_a_block() -> None:
    # pino's test/browser-levels.test.js: an array of expected log objects, each `{` on a line of
    # its own; a line never counted as an opener, so the object's body indented by 4 in a 2-space
    # repository passed.
    model = learn_sources({f"test/level{i}.test.js": _js_test(i) for i in range(30)})
    findings = review_source(
        model,
        "test/custom-level.test.js",
        """
        'use strict'
        const test = require('tape')

        test('set custom level and use it', ({ end, same }) => {
          const expected = [
            {
                level: 31,
                msg: 'this is a custom level'
            },
            {
              level: 40,
              msg: 'kept at two spaces'
            }
          ]
          same(expected.length, 2)
          end()
        })
        """,
    )
    assert found_rules(findings, "formatting.indent") == [("formatting.indent.width", 7)]


def _nox_module(i: int) -> str:
    return (
        f'"""Sessions of kind {i}."""\n\nfrom __future__ import annotations\n\nimport argparse\n\nimport colorlog\n\n\n'
        f"def parse_{i}(argv: list[str]) -> argparse.Namespace:\n"
        '    """Parse the command line."""\n'
        "    colorlog.basicConfig()\n"
        "    return argparse.ArgumentParser().parse_args(argv)\n"
    )


def test_a_pep_723_script_brings_in_what_its_metadata_does_not_list() -> None:
    # nox's tests/resources/pep721example1.py runs with the `rich` its `# /// script` block lists;
    # the whole file used to be exempt, so an `import sh` it does not list went unflagged.
    model = learn_sources({f"nox/part{i}.py": _nox_module(i) for i in range(40)})
    script = """
        # /// script
        # requires-python = ">=3.9"
        # dependencies = [
        #   "rich>=13",
        #   "Typing-Extensions; python_version < '3.11'",
        # ]
        # ///

        import rich
        import sh
        import typing_extensions

        rich.print("[blue]This worked!")
        """
    found = found_rules(review_source(model, "tests/resources/pep721example1.py", script), "dependencies.library.new")
    assert found == [("dependencies.library.new", 10)]


def _compat_module(i: int) -> str:
    return (
        f'"""Compatibility layer {i}."""\n\nfrom __future__ import annotations\n\n'
        "from collections.abc import Iterator\n\n\n"
        f"def iter_lines_{i}(text: str) -> Iterator[str]:\n"
        "    yield from text.splitlines()\n\n\n"
        f"def count_{i}(text: str) -> int:\n"
        "    return len(text)\n"
    )


def test_a_function_named_like_an_import_it_renames_is_the_modules_own() -> None:
    # pip-tools' piptools/_compat/pip_compat.py imports pip's function under another name and
    # wraps it under the original one (yarl's PEP 517 backend does the same with setuptools'
    # hooks); the import was taken to bind `parse_requirements`, so the wrapper passed for a
    # fallback of the imported API and its missing return annotation went unflagged.
    model = learn_sources({f"piptools/_compat/part{i}.py": _compat_module(i) for i in range(30)})
    findings = review_source(
        model,
        "piptools/_compat/pip_compat.py",
        """
        from __future__ import annotations

        from pip._internal.req import parse_requirements as _parse_requirements

        try:
            from pip._internal.utils import get_installed as iter_installed
        except ImportError:
            def iter_installed(paths: list[str]) -> list[str]:
                return paths


        def parse_requirements(filename: str, session: object):
            for parsed in _parse_requirements(filename, session=session):
                yield parsed
        """,
    )
    assert found_rules(findings, "typing") == [("typing.annotations.function", 12)]


def _execa_module(i: int) -> str:
    return (
        f"import {{normalizeOptions{i}}} from './options.js';\n\n"
        f"export const handleArguments{i} = (rawOptions, fileDescriptors) => {{\n"
        f"\tconst {{options: normalizedOptions, timeoutMs}} = normalizeOptions{i}(rawOptions);\n"
        "\tconst [firstDescriptor, ...otherDescriptors] = fileDescriptors;\n"
        "\treturn {normalizedOptions, timeoutMs, firstDescriptor, otherDescriptors};\n"
        "};\n"
    )


def test_a_destructuring_binds_the_names_of_its_renaming_pairs() -> None:
    # execa's lib/pipe/pipe-arguments.js: `const {options: sourceOptions, fileDescriptors} = ...`
    # names `sourceOptions`; only the shorthand `fileDescriptors` spells a key of the object. Every
    # name of an object pattern was left out, so `source_options` passed.
    model = learn_sources({f"lib/arguments/part{i}.js": _execa_module(i) for i in range(30)})
    findings = review_source(
        model,
        "lib/pipe/pipe-arguments.js",
        """
        export const normalizePipeArguments = ({source, sourcePromise}, ...pipeArguments) => {
        \tconst {options: source_options, file_descriptors} = SUBPROCESS_OPTIONS.get(source);
        \tconst {destination: {stream: destinationStream}} = getDestination(pipeArguments);
        \treturn {sourcePromise, source_options, file_descriptors, destinationStream};
        };
        """,
    )
    assert found_rules(findings, "naming") == [("naming.case.variable", 2)]


def test_a_benchmark_printing_its_results_is_no_library_code() -> None:
    # pino's benchmarks/utils/runbench.js and generate-benchmark-doc.js print what they measure;
    # the print idiom took them for library files (its own list of script directories lacked
    # `benchmarks/`), so 31 of 33 library files kept the habit, loose, and a `console.log('debug')`
    # planted in pino.js passed.
    library = "'use strict'\n\nfunction level{i} (value) {{\n  return value + {i}\n}}\n\nmodule.exports = level{i}\n"
    files = {f"lib/level{i}.js": library.format(i=i) for i in range(31)}
    bench = "'use strict'\n\nconst {{ run }} = require('./run')\n\nrun({i}).then((ms) => {{\n  console.log(ms)\n}})\n"
    files.update({f"benchmarks/utils/bench{i}.js": bench.format(i=i) for i in range(2)})
    model = learn_sources(files)
    planted = """
        'use strict'

        module.exports.destination = (dest) => {
          console.log('debug')
          return dest
        }
        """
    assert found_rules(review_source(model, "pino.js", planted), "idioms") == [("idioms.print", 4)]
    assert found_rules(review_source(model, "benchmarks/utils/runbench.js", planted), "idioms") == []
