import json
import logging
import pickle

import pytest

from governance.secrets.values import PASSWORD_ALPHABET, REDACTED, SecretValue, random_password


def test_every_printable_form_is_redacted(caplog):
    secret = SecretValue("canary-6f1d2a")
    caplog.set_level(logging.INFO)
    logging.getLogger("t").info("value %s %r", secret, secret)
    rendered = [str(secret), repr(secret), f"{secret}", f"{secret!r}", f"{secret}", caplog.text]
    assert all("canary-6f1d2a" not in text for text in rendered)
    assert REDACTED in str(secret)


def test_reveal_returns_the_value_and_equality_compares_values():
    assert SecretValue("a").reveal() == "a"
    assert SecretValue("a") == SecretValue("a") and SecretValue("a") != SecretValue("b")


def test_json_and_pickle_refuse_instead_of_leaking():
    with pytest.raises(TypeError):
        json.dumps({"password": SecretValue("canary")})
    with pytest.raises(TypeError):
        pickle.dumps(SecretValue("canary"))


def test_random_password_has_at_least_32_bytes_of_entropy():
    first, second = random_password(), random_password()
    assert first != second
    assert len(first.reveal()) == 43  # 43 x log2(62) = 256.1 bits


def test_random_passwords_are_letters_and_digits_so_no_command_line_reads_one_as_an_option():
    drawn = [random_password(4).reveal() for _ in range(2000)]  # 6 characters each
    assert all(p.isascii() and p.isalnum() and len(p) == 6 for p in drawn)
    assert {c for p in drawn for c in p} == set(PASSWORD_ALPHABET)  # the whole alphabet is used
