"""Rules that reach beyond what the engine has seen verbatim: nested domains and derived short forms."""

from __future__ import annotations

from services.analyzer.engine import CheckPrefs, check, learn
from services.analyzer.engine.abbreviations import drops_letters, plural, prefix_of, spellings, stem_of
from services.source.facts import FileFacts
from tests.analyzer.engine_factories import HELD_RAISED, imp, py_file

LOOSE = CheckPrefs(level="loose")


# --- layering: a nested domain falls under its ancestor's one-way rule ---------------------------


def _web_and_base(*, base_imports_web_sub: bool = False) -> list[FileFacts]:
    """`web` (with a nested `web/middleware`) sits on `base`: 8 files of `web` import `base`."""
    files = [
        py_file(f"web/m{i}.py", imports=[imp("base.core", 1, group="local", names=("x",), resolved="base/core.py")])
        for i in range(8)
    ]
    files += [py_file(f"web/middleware/mw{i}.py") for i in range(3)]
    files += [py_file("base/core.py"), py_file("base/routing.py"), py_file("base/middleware/gzip.py")]
    if base_imports_web_sub:
        files.append(
            py_file(
                "base/routing2.py",
                imports=[imp("web.middleware.mw0", 1, group="local", resolved="web/middleware/mw0.py")],
            )
        )
    return files


def _layering(facts: FileFacts, model: object, prefs: CheckPrefs | None = None) -> list[str]:
    found = check(facts, "x = 1\n", model, prefs=prefs) if prefs else check(facts, "x = 1\n", model)  # type: ignore[arg-type]
    return [f.message for f in found if f.rule == "dependencies.layering"]


def test_importing_a_nested_domain_of_the_upper_layer_inverts_the_layering() -> None:
    model = learn(_web_and_base(), thresholds=HELD_RAISED)
    facts = py_file(
        "base/app.py", imports=[imp("web.middleware.mw1", 3, group="local", resolved="web/middleware/mw1.py")]
    )

    found = _layering(facts, model)

    assert len(found) == 1
    assert "`web/middleware` is part of `web`" in found[0]


def test_a_nested_source_domain_falls_under_the_rule_too() -> None:
    model = learn(_web_and_base(), thresholds=HELD_RAISED)
    facts = py_file("base/middleware/new.py", imports=[imp("web.m1", 1, group="local", resolved="web/m1.py")])

    found = _layering(facts, model)

    assert len(found) == 1
    assert "`base/middleware` is part of `base`" in found[0]


def test_the_upper_layer_importing_a_nested_lower_domain_is_fine() -> None:
    model = learn(_web_and_base())
    facts = py_file(
        "web/m9.py", imports=[imp("base.middleware.gzip", 1, group="local", resolved="base/middleware/gzip.py")]
    )

    assert _layering(facts, model, LOOSE) == []


def test_contrary_evidence_below_the_ancestors_keeps_the_nested_pair_unjudged() -> None:
    # One file of `base` already imports `web/middleware`: the rule `web` -> `base` still holds
    # between the two exact domains, but says nothing about `web/middleware`.
    model = learn(_web_and_base(base_imports_web_sub=True), thresholds=HELD_RAISED)
    facts = py_file(
        "base/app.py", imports=[imp("web.middleware.mw1", 3, group="local", resolved="web/middleware/mw1.py")]
    )
    exact = py_file("base/app2.py", imports=[imp("web.m1", 3, group="local", resolved="web/m1.py")])

    assert _layering(facts, model, LOOSE) == []
    assert len(_layering(exact, model)) == 1


# --- vocabulary: short forms derived from the repository's own words ------------------------------


def test_prefix_and_dropped_letter_forms() -> None:
    for short, word in [("tok", "token"), ("arr", "array"), ("conf", "config")]:
        assert prefix_of(short, word)
    assert stem_of("inspect", "inspector")  # a stem before a suffix is a word
    assert not stem_of("tok", "token")
    assert not prefix_of("to", "token")
    assert not prefix_of("tokenize", "tokenizer")
    for short, word in [("tgt", "target"), ("hdl", "handle"), ("tpl", "template")]:
        assert drops_letters(short, word)
    assert any(drops_letters("txn", s) for s in spellings("transaction"))
    assert not drops_letters("fns", "finish")  # neither the last consonant nor most of them
    assert not drops_letters("amt", "autocomplete")  # too little of the word is left
    assert not drops_letters("tag", "target")  # a vowel after the first letter reads as a word
    assert (plural("value"), plural("property"), plural("index")) == ("values", "properties", "indexes")


def _repo(names: list[str], copies: int = 10) -> list[FileFacts]:
    return [py_file(f"app/m{i}.py", variables=[(n, j + 1) for j, n in enumerate(names)]) for i in range(copies)]


def _vocab(model: object, *names: str, prefs: CheckPrefs | None = None) -> list[tuple[str | None, str]]:
    facts = py_file("app/new.py", variables=[(n, i + 1) for i, n in enumerate(names)])
    found = check(facts, "x = 1\n", model, prefs=prefs) if prefs else check(facts, "x = 1\n", model)  # type: ignore[arg-type]
    return [(f.suggestion, f.level) for f in found if f.rule == "vocabulary.term"]


def test_dropped_letters_and_prefixes_of_repository_words_are_flagged() -> None:
    model = learn(
        _repo(["target_path", "handle_event", "transaction_id", "token_kind", "tokens_seen"]), thresholds=HELD_RAISED
    )

    assert _vocab(model, "tgt_path") == [("target_path", "strict")]
    assert _vocab(model, "hdl_event") == [("handle_event", "strict")]
    assert _vocab(model, "txn_id") == [("transaction_id", "strict")]
    assert _vocab(model, "tok_kind") == [("token_kind", "strict")]  # tokens is token's inflection


def test_plurals_of_short_forms_are_derived() -> None:
    model = learn(
        _repo(["errors_seen", "error_kind", "values_list", "option_name", "options_list"]), thresholds=HELD_RAISED
    )

    assert _vocab(model, "errs_seen") == [("errors_seen", "strict")]
    assert _vocab(model, "vals_list") == [("values_list", "strict")]
    assert _vocab(model, "opts_list") == [("options_list", "strict")]


def test_plural_of_a_short_form_the_repository_writes_is_loose_only() -> None:
    files = _repo(["events_seen", "event_kind"])
    files.append(py_file("app/one.py", variables=[("evt", 1)]))
    model = learn(files)

    assert _vocab(model, "evts_seen") == []
    assert _vocab(model, "evts_seen", prefs=LOOSE) == [("events_seen", "loose")]


def test_ambiguous_words_and_common_words_are_not_read_as_short_forms() -> None:
    model = learn(_repo(["target_path", "tangent_path", "dependency_name", "dependant_name", "format_spec"]))

    assert _vocab(model, "tgt_path", prefs=LOOSE) == []  # target or tangent
    assert _vocab(model, "dep_name", prefs=LOOSE) == []  # dependency or dependant
    assert _vocab(model, "form_spec", prefs=LOOSE) == []  # an English word, not format


def test_the_stem_of_a_repository_word_is_a_word() -> None:
    model = learn(_repo(["inspector_name", "history_list", "historic_mode"]))

    assert _vocab(model, "inspect_name", prefs=LOOSE) == []
    assert _vocab(model, "hist_list", prefs=LOOSE) == []  # history = hist + ory


def test_a_short_form_the_repository_writes_is_not_flagged_strictly() -> None:
    files = _repo(["target_path"])
    files.append(py_file("app/one.py", variables=[("tgt", 1)]))
    model = learn(files)

    assert _vocab(model, "tgt_path") == []


def test_a_short_form_that_avoids_a_keyword_or_builtin_is_not_flagged() -> None:
    model = learn(_repo(["return_value", "format_spec", "range_start", "message_text"]), thresholds=HELD_RAISED)

    assert _vocab(model, "ret", prefs=LOOSE) == []  # `return` is a keyword
    assert _vocab(model, "fmt", prefs=LOOSE) == []  # `format` a builtin
    assert _vocab(model, "ret_value") == [("return_value", "strict")]  # fine inside a longer name
    assert _vocab(model, "msg") == [("message", "strict")]


def test_a_stray_singular_short_form_does_not_excuse_its_plural() -> None:
    files = _repo(["errors_seen", "error_kind"], copies=30)
    files.append(py_file("app/one.py", variables=[("err", 1)]))  # 1 name in 31 with `error`: a stray
    model = learn(files, thresholds=HELD_RAISED)

    assert _vocab(model, "errs_seen") == [("errors_seen", "strict")]


def test_a_short_stem_before_a_long_ending_is_a_short_form() -> None:
    # pytest writes `session` and `instance` everywhere and never `sess` or `inst`.
    model = learn(
        _repo(["session_id", "session_scope", "instance_name", "instances_seen", "inspector_name"]),
        thresholds=HELD_RAISED,
    )

    assert _vocab(model, "sess_scope") == [("session_scope", "strict")]  # sess + ion
    assert _vocab(model, "inst_name") == [("instance_name", "strict")]  # inst + ance
    assert _vocab(model, "insts_seen") == [("instances_seen", "strict")]
    assert _vocab(model, "inspect_name", prefs=LOOSE) == []  # a longer stem is still a word
    assert stem_of("lint", "linter")  # and a short one before a short ending


def test_trans_written_x_is_read_back() -> None:
    model = learn(_repo(["transform_source", "transform_kind"]), thresholds=HELD_RAISED)

    assert _vocab(model, "xform_source") == [("transform_source", "strict")]


def test_the_rename_keeps_the_other_words_as_written() -> None:
    model = learn(_repo(["header_otp", "header_name", "session_startdir", "session_id"]), thresholds=HELD_RAISED)

    assert _vocab(model, "hdrOTP") == [("headerOTP", "strict")]
    assert _vocab(model, "Sess_startdir") == [("Session_startdir", "strict")]
