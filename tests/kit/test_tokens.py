from services.kit import tokens


def test_generated_tokens_parse_and_carry_their_kind() -> None:
    pat = tokens.generate(tokens.PERSONAL_PREFIX)
    session = tokens.generate(tokens.SESSION_PREFIX)
    assert pat.startswith("crp_")
    assert len(pat) == 4 + 36
    assert tokens.parse(pat) == "crp"
    assert tokens.parse(session) == "crs"
    assert pat != tokens.generate(tokens.PERSONAL_PREFIX)


def test_typos_and_foreign_tokens_are_rejected_without_lookup() -> None:
    token = tokens.generate(tokens.PERSONAL_PREFIX)
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert tokens.parse(flipped) is None
    assert tokens.parse("bogus") is None
    assert tokens.parse("ghp_" + token[4:]) is None
    assert tokens.parse(token + "x") is None


def test_only_a_digest_is_stored() -> None:
    token = tokens.generate(tokens.PERSONAL_PREFIX)
    assert len(tokens.digest(token)) == 64
    assert token not in tokens.digest(token)
