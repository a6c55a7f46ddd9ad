"""Go, Java, Kotlin and C# extraction."""

from __future__ import annotations

from services.source.facts import Import

from .support import facts_of, roles, statements, symbol

GO = """
package store

import (
\t"fmt"
\tdb "github.com/acme/svc/internal/db"
)

// MaxItems caps a page.
const MaxItems = 10

var defaultStore *Store

// Store keeps invoices.
type Store struct {
\tName  string
\tcount int
}

type Reader interface {
\tRead() error
}

// Get returns one invoice.
func (s *Store) Get(key string, limit int) (int, error) {
\tvalue, err := db.Load(key)
\t_ = s.flush()
\tfmt.Println(value)
\treturn value, err
}

func helper(a, b int) {}
"""


def test_go_symbols_and_identifiers() -> None:
    facts = facts_of("internal/store/store.go", GO)
    assert facts.language == "go"
    assert facts.module == "internal/store/store"
    get = symbol(facts, "Get")
    assert (get.kind, get.parent, get.visibility, get.has_docstring) == ("method", "Store", "public", True)
    assert symbol(facts, "helper").visibility == "private"
    store = symbol(facts, "Store")
    assert (store.kind, store.has_docstring) == ("struct", True)
    assert symbol(facts, "Reader").kind == "interface"
    assert (symbol(facts, "MaxItems").kind, symbol(facts, "MaxItems").has_docstring) == ("constant", True)
    assert symbol(facts, "defaultStore").kind == "variable"
    assert roles(facts, "field") == ["Name", "count"]
    assert set(roles(facts, "parameter")) == {"s", "key", "limit", "a", "b"}
    assert roles(facts, "variable") == ["defaultStore", "value", "err"]


def test_go_imports_and_statements() -> None:
    facts = facts_of("internal/store/store.go", GO)
    assert facts.imports == (
        Import("fmt", ("",), 4, "", False, "stdlib"),
        Import("github.com/acme/svc/internal/db", ("db",), 5, "", False, "third_party"),
    )
    assert statements(facts) == [("ignored_error", 26, "s.flush"), ("print_call", 27, "fmt.Println")]
    assert facts.formatting is not None
    assert facts.formatting.indent_unit == "tab"


def test_go_tests() -> None:
    facts = facts_of("store/store_test.go", "package store\n\nfunc TestGet(t *testing.T) {}\nfunc helper() {}\n")
    assert facts.is_test
    assert facts.tests_for == ("store",)
    assert symbol(facts, "TestGet").is_test
    assert not symbol(facts, "helper").is_test
    assert roles(facts, "test_function") == ["TestGet"]


JAVA = """
package com.acme.billing;

import java.util.List;
import com.acme.core.Money;
import org.slf4j.Logger;

/** Invoices. */
public class InvoiceService implements Service {
    public static final int MAX_LINES = 100;
    private final Logger log;
    int retries;

    /** Creates it. */
    public InvoiceService(Logger log) { this.log = log; }

    protected List<Money> totals(int year, String... tags) {
        List<Money> out = new ArrayList<>();
        try { load(); } catch (Exception e) { }
        System.out.println(out);
        log.info("done");
        return out;
    }

    private static class Cache {}
    interface Listener { void changed(); }
    enum State { OPEN, PAID }
}
"""


def test_java() -> None:
    facts = facts_of("src/main/java/com/acme/billing/InvoiceService.java", JAVA)
    service = symbol(facts, "InvoiceService", "class")
    assert (service.visibility, service.has_docstring) == ("public", True)
    ctor = symbol(facts, "InvoiceService", "method")
    assert (ctor.visibility, ctor.has_docstring, ctor.parent) == ("public", True, "InvoiceService")
    totals = symbol(facts, "totals")
    assert (totals.visibility, totals.has_annotations) == ("protected", True)
    assert symbol(facts, "Cache").visibility == "private"
    assert symbol(facts, "Listener").kind == "interface"
    assert symbol(facts, "changed").visibility == "public"  # interface members
    assert symbol(facts, "State").visibility == "internal"  # package-private
    assert symbol(facts, "MAX_LINES").kind == "constant"
    assert roles(facts, "field") == ["log", "retries"]
    assert set(roles(facts, "parameter")) == {"log", "year", "tags"}
    assert roles(facts, "variable") == ["out"]
    assert [imp.group for imp in facts.imports] == ["stdlib", "local", "third_party"]
    assert facts.imports[1] == Import("com.acme.core.Money", ("Money",), 4, "", False, "local")
    assert statements(facts) == [
        ("broad_except", 18, "Exception"),
        ("swallowed_exception", 18, "Exception"),
        ("print_call", 19, "System.out"),
        ("logging_call", 20, "log"),
    ]


def test_java_tests() -> None:
    facts = facts_of(
        "src/test/java/com/acme/InvoiceServiceTest.java",
        "class InvoiceServiceTest {\n  @Test\n  void totals() {}\n  void helper() {}\n}\n",
    )
    assert facts.is_test
    assert facts.tests_for == ("InvoiceService",)
    assert symbol(facts, "InvoiceServiceTest").is_test
    assert symbol(facts, "totals").is_test
    assert not symbol(facts, "helper").is_test


def test_kotlin() -> None:
    facts = facts_of(
        "app/src/main/kotlin/com/acme/Store.kt",
        """
        package com.acme.store

        import kotlin.math.max
        import com.acme.util.*

        /** Page size. */
        const val PAGE_SIZE = 20
        private val cache = mutableMapOf<String, Int>()

        /** A store. */
        class Store(private val name: String, size: Int) : Api {
            var count: Int = 0
            internal fun get(key: String): Int { val local = 1; return local }
            companion object { const val TAG = "store" }
        }
        interface Api
        enum class Color { RED }
        object Registry { fun all() {} }
        fun topLevel(a: Int) { println(a) }
        fun risky() { try { load() } catch (e: Exception) { } }
        """,
    )
    assert symbol(facts, "PAGE_SIZE").kind == "constant"
    assert symbol(facts, "PAGE_SIZE").has_docstring
    assert symbol(facts, "cache").visibility == "private"
    store = symbol(facts, "Store")
    assert (store.kind, store.has_docstring) == ("class", True)
    get = symbol(facts, "get")
    assert (get.kind, get.parent, get.visibility) == ("method", "Store", "internal")
    assert symbol(facts, "TAG").parent == "Store"
    assert symbol(facts, "Api").kind == "interface"
    assert symbol(facts, "Color").kind == "enum"
    assert symbol(facts, "all").parent == "Registry"
    assert symbol(facts, "topLevel").kind == "function"
    assert roles(facts, "field") == ["name", "count"]
    assert set(roles(facts, "parameter")) == {"size", "key", "a"}
    assert roles(facts, "variable") == ["cache", "local"]
    assert [(imp.module, imp.names, imp.group) for imp in facts.imports] == [
        ("kotlin.math.max", ("max",), "stdlib"),
        ("com.acme.util", ("*",), "local"),
    ]
    assert statements(facts) == [
        ("print_call", 19, "println"),
        ("broad_except", 20, "Exception"),
        ("swallowed_exception", 20, "Exception"),
    ]


def test_csharp() -> None:
    facts = facts_of(
        "src/Acme.Billing/InvoiceStore.cs",
        """
        using System;
        using Acme.Core;
        using Json = Newtonsoft.Json;

        namespace Acme.Billing
        {
            /// <summary>Stores invoices.</summary>
            public class InvoiceStore : IStore
            {
                public const int MaxItems = 10;
                private readonly string _name;
                public int Count { get; set; }

                /// <summary>Loads one.</summary>
                public async Task<int> LoadAsync(string key) { var total = 1; return total; }
                void Helper() { Console.WriteLine("x"); }
            }
            interface IStore {}
            internal struct Point { public int X; }
        }
        """,
    )
    store = symbol(facts, "InvoiceStore")
    assert (store.visibility, store.has_docstring) == ("public", True)
    load = symbol(facts, "LoadAsync")
    assert (load.visibility, load.has_docstring, load.parent) == ("public", True, "InvoiceStore")
    assert symbol(facts, "Helper").visibility == "private"
    assert symbol(facts, "IStore").visibility == "internal"
    assert symbol(facts, "Point").kind == "struct"
    assert symbol(facts, "MaxItems").kind == "constant"
    assert roles(facts, "field") == ["_name", "X"]
    assert roles(facts, "attribute") == ["Count"]
    assert roles(facts, "variable") == ["total"]
    assert [(imp.module, imp.names, imp.group) for imp in facts.imports] == [
        ("System", ("",), "stdlib"),
        ("Acme.Core", ("",), "local"),
        ("Newtonsoft.Json", ("Json",), "third_party"),
    ]
    assert statements(facts) == [("print_call", 16, "Console.WriteLine")]
