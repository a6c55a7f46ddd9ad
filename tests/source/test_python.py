"""Python extraction: the deepest-covered language."""

from __future__ import annotations

from services.source.facts import Import

from .support import facts_of, ident, roles, statements, symbol

SOURCE = '''
"""Billing models."""
from __future__ import annotations

import logging
import os.path as osp
from dataclasses import dataclass, field
from typing import Final

from acme.billing import rates
from . import utils
from ..core.money import Money, round_cents

MAX_RETRIES: Final = 3
DEFAULT_CURRENCY = "EUR"
_cache = {}
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Invoice(Base):
    """An invoice."""

    number: str
    total: Money = field(default=0)
    KIND = "invoice"

    class Line:
        pass

    @property
    def net(self) -> Money:
        """Net amount."""
        return self.total

    async def send(self, to: str, *, retries: int = 3) -> None:
        self.sent_to = to
        attempt = 0
        attempt = attempt + 1

    @staticmethod
    def parse(text, strict=False):
        pass

    def _check(self, value: int):
        pass

    def __repr__(self) -> str:
        return "x"


def total(items: list[int], *args: int, **kwargs: str) -> int:
    def helper(x):
        return x
    try:
        value = compute(items)
    except:
        pass
    except (KeyError, Exception) as exc:
        ...
    except Exception:
        log.exception(f"failed {items}")
        logging.warning("root logger")
    print("done")
    assert value is not None
    return value


def _private_helper():
    pass
'''


def test_symbols_kinds_visibility_and_spans() -> None:
    facts = facts_of("src/acme/billing/models.py", SOURCE)
    assert facts.language == "python"
    assert facts.module == "acme.billing.models"
    module = symbol(facts, "models", "module")
    assert (module.start_line, module.has_docstring) == (1, True)
    invoice = symbol(facts, "Invoice")
    assert (invoice.kind, invoice.visibility, invoice.has_docstring) == ("class", "public", True)
    assert invoice.start_line == 19  # the decorator line belongs to the definition
    assert symbol(facts, "Line").parent == "Invoice"
    net = symbol(facts, "net")
    assert (net.kind, net.parent, net.has_docstring, net.has_annotations) == ("method", "Invoice", True, True)
    send = symbol(facts, "send")
    assert (send.kind, send.has_annotations, send.has_docstring) == ("method", True, False)
    assert symbol(facts, "parse").has_annotations is False
    check = symbol(facts, "_check")
    assert (check.visibility, check.has_annotations) == ("private", False)  # no return annotation
    assert symbol(facts, "__repr__").visibility == "public"
    func = symbol(facts, "total")
    assert (func.kind, func.parent, func.has_annotations) == ("function", "", True)
    helper = symbol(facts, "helper")
    assert (helper.kind, helper.parent) == ("function", "total")
    assert symbol(facts, "_private_helper").visibility == "private"


def test_module_constants_and_variables() -> None:
    facts = facts_of("pkg/mod.py", SOURCE)
    assert symbol(facts, "MAX_RETRIES").kind == "constant"
    assert symbol(facts, "MAX_RETRIES").has_annotations is True
    assert symbol(facts, "DEFAULT_CURRENCY").kind == "constant"
    cache = symbol(facts, "_cache")
    assert (cache.kind, cache.visibility) == ("variable", "private")
    assert symbol(facts, "log").kind == "variable"
    class_constant = symbol(facts, "KIND")
    assert (class_constant.kind, class_constant.parent) == ("constant", "Invoice")


def test_identifiers_by_role() -> None:
    facts = facts_of("pkg/mod.py", SOURCE)
    assert roles(facts, "class") == ["Invoice", "Line"]
    assert roles(facts, "method") == ["net", "send", "parse", "_check"]  # dunders are not chosen
    assert roles(facts, "function") == ["total", "helper", "_private_helper"]
    assert roles(facts, "field") == ["number", "total"]  # dataclass fields
    assert roles(facts, "attribute") == ["sent_to"]
    assert set(roles(facts, "parameter")) == {"to", "retries", "text", "strict", "value", "items", "args",
                                              "kwargs", "x"}  # fmt: skip
    assert "self" not in roles(facts, "parameter")
    assert roles(facts, "constant") == ["MAX_RETRIES", "DEFAULT_CURRENCY", "KIND"]
    assert [i.line for i in ident(facts, "attempt")] == [37]  # rebinding in one scope counts once
    assert "value" in roles(facts, "variable")


def test_imports_and_groups() -> None:
    facts = facts_of("src/acme/billing/models.py", SOURCE)
    assert facts.imports == (
        Import("__future__", ("annotations",), 2, "", False, "stdlib"),
        Import("logging", ("",), 4, "", False, "stdlib"),
        Import("os.path", ("",), 5, "", False, "stdlib", aliases=("osp",)),  # import os.path as osp
        Import("dataclasses", ("dataclass", "field"), 6, "", False, "stdlib"),
        Import("typing", ("Final",), 7, "", False, "stdlib"),
        Import("acme.billing", ("rates",), 9, "", False, "local"),  # same top-level package
        Import(".", ("utils",), 10, "", True, "local"),
        Import("..core.money", ("Money", "round_cents"), 11, "", True, "local"),
    )


def test_error_handling_and_logging_statements() -> None:
    facts = facts_of("pkg/mod.py", SOURCE)
    assert statements(facts) == [
        ("bare_except", 56, ""),
        ("swallowed_exception", 56, ""),
        ("broad_except", 58, "Exception"),
        ("swallowed_exception", 58, "(KeyError, Exception)"),
        ("broad_except", 60, "Exception"),
        ("logging_call", 61, "logging.getLogger"),
        ("fstring_log", 61, "logging.getLogger"),
        ("logging_call", 62, "logging"),
        ("print_call", 63, "print"),
        ("assert", 64, ""),
    ]


def test_logger_styles() -> None:
    structlog = facts_of("a.py", "import structlog\nlogger = structlog.get_logger()\nlogger.info('x', k=1)\n")
    assert statements(structlog) == [("logging_call", 3, "structlog")]
    loguru = facts_of("a.py", "from loguru import logger\nlogger.debug(f'{x}')\nparser.error('not a log')\n")
    assert statements(loguru) == [("logging_call", 2, "loguru"), ("fstring_log", 2, "loguru")]


def test_prints_of_a_main_block_and_of_a_rebound_print() -> None:
    source = "def f():\n    print(1)\n\nif __name__ == '__main__':\n    print(2)\n    f()\n"
    assert statements(facts_of("m.py", source)) == [("print_call", 2, "print"), ("print_call", 5, "main")]
    rich = facts_of("m.py", "from rich import print\n\ndef f():\n    print('[b]x[/b]')\n")
    assert statements(rich) == []
    own = facts_of("m.py", "def print(*objects):\n    pass\n\ndef f():\n    print(1)\n")
    assert statements(own) == []
    demo_source = "def f():\n    print(1)\n\nif __name__ == '__main__':\n    from rich import print\n    print(2)\n"
    demo = facts_of("m.py", demo_source)
    assert statements(demo) == [("print_call", 2, "print"), ("print_call", 6, "main")]


def test_a_module_that_turns_type_checking_off_says_so() -> None:
    mypy = facts_of("m.py", "# Copyright\n# mypy: allow-untyped-defs, allow-untyped-calls\n\ndef f(x):\n    return x\n")
    assert statements(mypy) == [("typing_off", 2, "# mypy: allow-untyped-defs, allow-untyped-calls")]
    pep484 = facts_of("m.py", "#!/usr/bin/env python\n# type: ignore\nimport os\n")
    # The #! line says the module is executable (idioms.is_script reads it at the root).
    assert statements(pep484) == [("shebang", 1, ""), ("typing_off", 2, "# type: ignore")]
    # A type: ignore after code is about that line only; other mypy options say nothing of annotations.
    line_only = facts_of("m.py", "import os\n# type: ignore\nx = 1  # type: ignore\n# mypy: warn-unreachable\n")
    assert statements(line_only) == []


def test_unpacked_names_sit_on_their_own_lines() -> None:
    facts = facts_of("m.py", "def f():\n    (\n        first,\n        second,\n    ) = g()\n")
    assert [(i.name, i.line) for i in facts.identifiers if i.role == "variable"] == [("first", 3), ("second", 4)]


def test_definitions_of_a_main_block_are_not_public() -> None:
    source = "def api():\n    pass\n\nif __name__ == '__main__':\n    def demo():\n        pass\n    demo()\n"
    facts = facts_of("m.py", source)
    assert symbol(facts, "api").visibility == "public"
    assert symbol(facts, "demo").visibility == "private"


def test_all_makes_unlisted_names_internal() -> None:
    facts = facts_of("m.py", "__all__ = ['api']\n\ndef api(): pass\n\ndef other(): pass\n\nX = 1\n")
    assert symbol(facts, "api").visibility == "public"
    assert symbol(facts, "other").visibility == "internal"
    assert symbol(facts, "X").visibility == "internal"
    assert "__all__" not in {s.name for s in facts.symbols}


def test_enum_protocol_and_test_detection() -> None:
    facts = facts_of(
        "tests/test_models.py",
        """
        import enum
        from typing import Protocol
        from acme.models import Invoice
        class Color(enum.Enum):
            RED = 1
        class Sized(Protocol):
            def size(self) -> int: ...
        class TestInvoice:
            def test_total(self):
                assert Invoice()
            def helper(self):
                pass
        def test_module_level():
            pass
        """,
    )
    assert facts.is_test
    assert facts.tests_for == ("models",)  # acme.models joins once resolve_imports finds it local
    assert symbol(facts, "Color").kind == "enum"
    assert symbol(facts, "Sized").kind == "interface"
    assert symbol(facts, "TestInvoice").is_test
    assert symbol(facts, "test_total").is_test
    assert not symbol(facts, "helper").is_test
    assert roles(facts, "test_function") == ["test_total", "test_module_level"]
    assert statements(facts) == []  # asserts are only noted outside tests


def test_relative_imports_feed_tests_for() -> None:
    facts = facts_of("pkg/tests/test_api.py", "from ..api import handler\nfrom . import conftest\n")
    assert facts.module == "pkg.tests.test_api"
    assert facts.tests_for == ("api", "pkg.api")


def test_package_module_names() -> None:
    assert facts_of("src/acme/__init__.py", "").module == "acme"
    assert facts_of("lib/tools/run.py", "").module == "tools.run"
    assert facts_of("services/api/src/api/app.py", "").module == "api.app"
    assert facts_of("scripts/run.py", "").module == "scripts.run"


def test_only_a_silent_catch_all_swallows() -> None:
    source = (
        "def pop_raw(cache, raw, name, value):\n"
        "    cache[name] = value\n"
        "    try:\n        del raw[name]\n    except KeyError:\n        pass\n"
        "    try:\n        raw.close()\n    except Exception:\n        # closing twice is harmless\n        pass\n"
        "    try:\n        raw.flush()\n    except Exception:\n        pass\n"
        "    return value\n"
    )
    found = [s for s in statements(facts_of("pkg/cache.py", source)) if s[0] == "swallowed_exception"]
    assert found == [("swallowed_exception", 14, "Exception")]


def test_a_bare_except_that_raises_another_exception_is_still_bare() -> None:
    source = (
        "def duration(value, units):\n"
        "    try:\n        unit = next(u for r, u in units if r == value)\n"
        "    except:\n        raise ValueError(f'invalid unit: {value}') from None\n"
        "    try:\n        return int(unit)\n"
        "    except:\n        log.exception('unit')\n        raise\n"
        "    try:\n        return float(unit)\n"
        "    except Exception as exc:\n        raise ValueError(str(exc)) from exc\n"
    )
    found = [s for s in statements(facts_of("pkg/parsers.py", source)) if s[0] in ("bare_except", "broad_except")]
    # Ctrl-C inside `next()` would come out as a ValueError; a bare `raise` lets it go on, and a
    # broad `except Exception` never catches it.
    assert found == [("bare_except", 4, "")]


def test_a_broad_handler_that_translates_with_six_raise_from_is_neither_broad_nor_swallowing() -> None:
    """dateutil's parser turns every failure of ``Decimal(val)`` into a ValueError with
    ``six.raise_from`` (Python 2's ``raise ... from e``); a handler that only logs is still broad."""
    source = (
        "import six\nfrom six import reraise\n\n\n"
        "def _to_decimal(self, val):\n"
        "    try:\n        return Decimal(val)\n"
        "    except Exception as e:\n"
        "        msg = 'Could not convert %s to decimal' % val\n"
        "        six.raise_from(ValueError(msg), e)\n"
        "    try:\n        return float(val)\n"
        "    except Exception:\n        reraise(*sys.exc_info())\n"
        "    try:\n        return int(val)\n"
        "    except:\n        six.raise_from(ValueError(val), None)\n"
        "    try:\n        return complex(val)\n"
        "    except Exception:\n        log.warning('raise_from')\n"
    )
    found = [s for s in statements(facts_of("dateutil/parser/_parser.py", source)) if s[0].endswith("_except")]
    # A bare `except:` turning Ctrl-C into ValueError is still bare, as with `raise ... from`.
    assert found == [("bare_except", 17, ""), ("broad_except", 21, "Exception")]


def test_imports_a_try_guards_against_import_error_are_optional() -> None:
    """anyio's ``_eventloop.py`` runs without sniffio; a ``try:`` guarding another error, or an
    import after the ``try``, is no such guard."""
    facts = facts_of(
        "pkg/_eventloop.py",
        "try:\n    import sniffio\nexcept ModuleNotFoundError:\n    sniffio = None\n"
        "try:\n    from orjson import dumps\nexcept (ImportError, AttributeError):\n    from json import dumps\n"
        "try:\n    import yaml\nexcept ValueError:\n    yaml = None\n"
        "try:\n    import werkzeug\nexcept:\n    werkzeug = None\n"
        "import idna\n\n\ndef load():\n    try:\n        import uvloop\n    except ImportError:\n        return None\n"
        "    return uvloop\n",
    )
    assert [(i.module, i.optional) for i in facts.imports] == [
        ("sniffio", True),
        ("orjson", True),
        ("json", False),
        ("yaml", False),
        ("werkzeug", True),
        ("idna", False),
        ("uvloop", True),
    ]


def test_an_elif_type_checking_branch_imports_for_the_type_checker_only() -> None:
    """packaging's ``version.py``: ``warnings.deprecated`` on 3.13, typing_extensions' for the
    type checker, and a fallback at run time."""
    facts = facts_of(
        "src/packaging/version.py",
        "import sys\nimport typing\n\nif sys.version_info >= (3, 13):\n"
        "    from warnings import deprecated as _deprecated\nelif typing.TYPE_CHECKING:\n"
        "    from typing_extensions import deprecated as _deprecated\nelse:\n    import functools\n",
    )
    assert [(i.module, i.typing_only) for i in facts.imports] == [
        ("sys", False),
        ("typing", False),
        ("warnings", False),
        ("typing_extensions", True),
        ("functools", False),
    ]
