"""Import resolution over a whole repository."""

from __future__ import annotations

import time

from services.source.extract import extract
from services.source.facts import FileFacts
from services.source.imports import resolve_imports


def _repo(files: dict[str, str]) -> dict[str, FileFacts]:
    extracted = [extract(path, text.encode()) for path, text in files.items()]
    return {facts.path: facts for facts in resolve_imports(extracted)}


def _resolved(facts: FileFacts) -> dict[str, str]:
    return {imp.module: imp.resolved_path for imp in facts.imports}


def test_python_absolute_relative_and_packages() -> None:
    repo = _repo(
        {
            "src/acme/__init__.py": "",
            "src/acme/models.py": "from .money import Money\nfrom . import utils\nimport os\n",
            "src/acme/money.py": "",
            "src/acme/utils/__init__.py": "from ..models import Invoice\n",
            "src/acme/utils/dates.py": "",
            "tests/test_models.py": "import acme.models\nfrom acme.utils import dates\nfrom acme import missing\n",
            "tests/conftest.py": "",
            "scripts/run.py": "import helper\nimport requests\n",
            "scripts/helper.py": "",
        }
    )
    assert _resolved(repo["src/acme/models.py"]) == {
        ".money": "src/acme/money.py",
        ".": "src/acme/utils/__init__.py",
        "os": "",
    }
    assert _resolved(repo["src/acme/utils/__init__.py"]) == {"..models": "src/acme/models.py"}
    test = repo["tests/test_models.py"]
    assert _resolved(test) == {
        "acme.models": "src/acme/models.py",
        "acme.utils": "src/acme/utils/dates.py",  # a submodule imported from its package
        "acme": "src/acme/__init__.py",
    }
    assert all(imp.group == "local" for imp in test.imports)
    assert test.tests_for == ("models", "acme.models", "acme.utils.dates", "acme")
    assert _resolved(repo["scripts/run.py"]) == {"helper": "scripts/helper.py", "requests": ""}
    assert repo["scripts/run.py"].imports[1].group == "third_party"


def test_javascript_and_typescript_paths() -> None:
    repo = _repo(
        {
            "src/app.ts": (
                'import { a } from "./lib/money";\n'
                'import b from "./components";\n'
                'import c from "./util.js";\n'
                'import d from "@/lib/money";\n'
                'import React from "react";\n'
            ),
            "src/lib/money.ts": "",
            "src/components/index.tsx": "",
            "src/util.ts": "",
            "web/main.js": "const x = require('../src/lib/money');\n",
        }
    )
    assert _resolved(repo["src/app.ts"]) == {
        "./lib/money": "src/lib/money.ts",
        "./components": "src/components/index.tsx",
        "./util.js": "src/util.ts",
        "@/lib/money": "src/lib/money.ts",
        "react": "",
    }
    assert _resolved(repo["web/main.js"]) == {"../src/lib/money": "src/lib/money.ts"}


def test_go_with_and_without_go_mod() -> None:
    files = {
        "internal/db/db.go": "package db\n",
        "internal/db/db_test.go": "package db\n",
        "internal/store/store.go": "package store\n",
        "internal/store/cache.go": "package store\n",
        "cmd/server/main.go": (
            'package main\nimport (\n"fmt"\n"github.com/acme/svc/internal/db"\n'
            '"github.com/acme/svc/internal/store"\n"github.com/lib/pq"\n)\n'
        ),
    }
    inferred = _repo(files)
    expected = {
        "fmt": "",
        "github.com/acme/svc/internal/db": "internal/db/db.go",
        "github.com/acme/svc/internal/store": "internal/store/store.go",  # the file named after the package
        "github.com/lib/pq": "",
    }
    assert _resolved(inferred["cmd/server/main.go"]) == expected
    declared = _repo({**files, "go.mod": "module github.com/acme/svc\n\ngo 1.22\n"})
    assert declared["go.mod"].module == "github.com/acme/svc"
    assert _resolved(declared["cmd/server/main.go"]) == expected


def test_java_kotlin_php_ruby_c_rust() -> None:
    repo = _repo(
        {
            "src/main/java/com/acme/core/Money.java": "package com.acme.core;\npublic class Money {}\n",
            "src/main/java/com/acme/App.java": (
                "package com.acme;\nimport com.acme.core.Money;\nimport com.acme.core.*;\n"
                "import static com.acme.core.Money.ZERO;\nimport java.util.List;\n"
            ),
            "app/src/main/kotlin/com/acme/util/Strings.kt": "package com.acme.util\nfun pad() {}\n",
            "app/src/main/kotlin/com/acme/Main.kt": "package com.acme\nimport com.acme.util.pad\n",
            "app/Support/Str.php": "<?php\nnamespace App\\Support;\nclass Str {}\n",
            "app/Models/User.php": "<?php\nnamespace App\\Models;\nuse App\\Support\\Str;\n",
            "lib/acme/util.rb": "",
            "lib/acme/store.rb": "require_relative 'util'\nrequire 'acme/util'\nrequire 'json'\n",
            "include/acme/point.h": "struct point;\n",
            "src/point.c": '#include "acme/point.h"\n#include <stdio.h>\n',
            "src/lib.rs": "mod db;\nuse crate::db::Conn;\n",
            "src/db/mod.rs": "use super::lib;\n",
        }
    )
    assert _resolved(repo["src/main/java/com/acme/App.java"]) == {
        "com.acme.core.Money": "src/main/java/com/acme/core/Money.java",
        "com.acme.core": "src/main/java/com/acme/core/Money.java",
        "com.acme.core.Money.ZERO": "src/main/java/com/acme/core/Money.java",
        "java.util.List": "",
    }
    assert _resolved(repo["app/src/main/kotlin/com/acme/Main.kt"]) == {
        "com.acme.util.pad": "app/src/main/kotlin/com/acme/util/Strings.kt"
    }
    assert _resolved(repo["app/Models/User.php"]) == {"App\\Support\\Str": "app/Support/Str.php"}
    assert _resolved(repo["lib/acme/store.rb"]) == {
        "util": "lib/acme/util.rb",
        "acme/util": "lib/acme/util.rb",
        "json": "",
    }
    assert _resolved(repo["src/point.c"]) == {"acme/point.h": "include/acme/point.h", "stdio.h": ""}
    assert _resolved(repo["src/lib.rs"]) == {"self::db": "src/db/mod.rs", "crate::db": "src/db/mod.rs"}


def test_resolution_is_fast_for_ten_thousand_files() -> None:
    files: list[FileFacts] = []
    for package in range(100):
        for module in range(100):
            source = f"from pkg{package} import mod{(module + 1) % 100}\nimport pkg{(package + 1) % 100}.mod{module}\n"
            files.append(extract(f"src/pkg{package}/mod{module}.py", source.encode()))
        files.append(extract(f"src/pkg{package}/__init__.py", b""))
    started = time.perf_counter()
    resolved = resolve_imports(files)
    elapsed = time.perf_counter() - started
    assert all(imp.resolved_path for facts in resolved for imp in facts.imports)
    assert elapsed < 5.0, elapsed  # ~0.3 s measured; generous for loaded CI machines
