"""Which imports name a language's standard library: the "stdlib" import group."""

from __future__ import annotations

import sys

PYTHON: frozenset[str] = frozenset(sys.stdlib_module_names) | {"__future__"}

# fmt: off
NODE: frozenset[str] = frozenset({
    "assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants",
    "crypto", "dgram", "diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2",
    "https", "inspector", "module", "net", "os", "path", "perf_hooks", "process", "punycode",
    "querystring", "readline", "repl", "stream", "string_decoder", "sys", "timers", "tls",
    "trace_events", "tty", "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib", "test",
})

C_HEADERS: frozenset[str] = frozenset({
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "iso646.h",
    "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h", "stdarg.h",
    "stdatomic.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "stdnoreturn.h",
    "string.h", "tgmath.h", "threads.h", "time.h", "uchar.h", "wchar.h", "wctype.h",
    "unistd.h", "fcntl.h", "pthread.h", "dirent.h", "sys/types.h", "sys/stat.h", "sys/socket.h",
    "sys/time.h", "sys/wait.h", "sys/mman.h", "netinet/in.h", "arpa/inet.h", "netdb.h", "poll.h",
    "dlfcn.h", "strings.h", "termios.h", "sys/ioctl.h", "sys/select.h", "sys/un.h", "syslog.h",
    "algorithm", "any", "array", "atomic", "bitset", "cassert", "cctype", "cerrno", "cfloat",
    "charconv", "chrono", "cinttypes", "climits", "clocale", "cmath", "codecvt", "complex",
    "concepts", "condition_variable", "coroutine", "csetjmp", "csignal", "cstdarg", "cstddef",
    "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "cwchar", "deque", "exception",
    "execution", "filesystem", "format", "forward_list", "fstream", "functional", "future",
    "initializer_list", "iomanip", "ios", "iosfwd", "iostream", "istream", "iterator", "limits",
    "list", "locale", "map", "memory", "memory_resource", "mutex", "new", "numbers", "numeric",
    "optional", "ostream", "queue", "random", "ranges", "ratio", "regex", "scoped_allocator",
    "set", "shared_mutex", "source_location", "span", "sstream", "stack", "stdexcept",
    "stop_token", "streambuf", "string", "string_view", "system_error", "thread", "tuple",
    "type_traits", "typeindex", "typeinfo", "unordered_map", "unordered_set", "utility",
    "valarray", "variant", "vector", "version",
})

RUBY: frozenset[str] = frozenset({
    "abbrev", "base64", "benchmark", "bigdecimal", "cgi", "csv", "date", "delegate", "digest",
    "English", "erb", "etc", "fileutils", "find", "forwardable", "io/console", "ipaddr", "json",
    "logger", "monitor", "net/http", "observer", "open-uri", "open3", "openssl", "optparse",
    "ostruct", "pathname", "pp", "prettyprint", "pstore", "psych", "racc", "rdoc", "readline",
    "resolv", "ripper", "securerandom", "set", "shellwords", "singleton", "socket", "stringio",
    "strscan", "tempfile", "time", "timeout", "tmpdir", "tsort", "uri", "weakref", "yaml", "zlib",
})
# fmt: on

_PREFIXES: dict[str, tuple[str, ...]] = {
    "java": ("java.", "javax.", "jdk.", "sun.", "com.sun."),
    "kotlin": ("kotlin.", "kotlinx.", "java.", "javax.", "android."),
    "csharp": ("System", "Microsoft."),
}


def group_of(language: str, module: str, *, relative: bool, own_package: str = "") -> str:
    """stdlib | third_party | local for an import as written in ``language``.

    Imports are "local" here only when the syntax says so (relative) or they share the
    file's own top-level package; ``imports.resolve_imports`` upgrades the rest that
    resolve to a file of the repository.
    """
    if relative:
        return "local"
    if language == "python":
        top = module.split(".", 1)[0]
        if top in PYTHON:
            return "stdlib"
    elif language in ("javascript", "typescript", "tsx"):
        name = module.split("/", 1)[0]
        if module.startswith("node:") or name in NODE:
            return "stdlib"
        if module.startswith(("@/", "~/")):
            return "local"
        return "third_party"
    elif language == "go":
        return "third_party" if "." in module.split("/", 1)[0] else "stdlib"
    elif language in _PREFIXES:
        if module.startswith(_PREFIXES[language]) or module == "System":
            return "stdlib"
    elif language == "rust":
        top = module.split("::", 1)[0]
        if top in ("std", "core", "alloc"):
            return "stdlib"
        if top in ("crate", "self", "super"):
            return "local"
        return "third_party"
    elif language in ("c", "cpp"):
        return "stdlib" if module in C_HEADERS else "third_party"
    elif language == "ruby":
        return "stdlib" if module in RUBY else "third_party"
    if own_package and (module == own_package or module.startswith(own_package + _sep(language))):
        return "local"
    return "third_party"


def _sep(language: str) -> str:
    return "\\" if language == "php" else "."
