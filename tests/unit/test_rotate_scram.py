"""rotate_scram when the brokers take some users of a registration and refuse others (or never answer);
check_alter, what rotate and apply ask before their first change.

AlterUserScramCredentials is answered user by user, and mm2gov sends 500 users a request: a rotation
can be taken in part (a later batch refused, or one user of a batch). The real broker cannot be made to
refuse one user of a request mm2gov sends (every user gets the same mechanism and iterations, and the
client itself refuses an empty name), so the admin client here is a stand-in that answers each user's
future as told; the store is the real directory store.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from governance.errors import RuntimeFailure
from governance.kafka import admin
from governance.secrets.rotate import rotate_scram
from governance.secrets.store import DirSecretStore


class Brokers:
    """Takes every user but those in `refuse` (and never answers for those in `silent`); remembers the
    password each user holds."""

    def __init__(self, refuse: set[str] = frozenset(), silent: set[str] = frozenset()) -> None:
        self.refuse, self.silent, self.held = refuse, silent, {}

    def alter_user_scram_credentials(self, upserts: list[Any], request_timeout: float) -> dict[str, Future]:
        answers = {}
        for upsert in upserts:
            answers[upsert.user] = future = Future()
            if upsert.user in self.silent:
                continue  # the request reached the brokers, the answer never came back
            if upsert.user in self.refuse:
                future.set_exception(KafkaException(KafkaError(KafkaError.UNACCEPTABLE_CREDENTIAL, "refused")))
            else:
                self.held[upsert.user] = upsert.password.decode()
                future.set_result(None)
        return answers


def password(store: DirSecretStore, user: str) -> str | None:
    value = store.get_optional(f"scram-source-{user}", "password")
    return None if value is None else value.reveal()


def test_users_the_brokers_took_keep_their_new_secret_the_others_get_their_old_one(tmp_path):
    store, brokers = DirSecretStore(tmp_path), Brokers()
    rotate_scram("source", "SCRAM-SHA-512", ["User:a", "User:b"], {}, store, brokers)
    before = {user: password(store, user) for user in ("a", "b")}
    brokers.refuse = {"b"}

    with pytest.raises(RuntimeFailure) as failed:
        rotate_scram("source", "SCRAM-SHA-512", ["User:a", "User:b", "User:c"], {}, store, brokers)

    assert "SCRAM user b: UNACCEPTABLE_CREDENTIAL: refused" in str(failed.value)
    assert "2 of 3 users the brokers took keep their new secrets, the others' were restored" in str(failed.value)
    assert password(store, "a") == brokers.held["a"] != before["a"]  # taken: the new one, as on the brokers
    assert password(store, "b") == before["b"] == brokers.held["b"]  # refused: the old one, still on the brokers
    assert password(store, "c") == brokers.held["c"]  # had none, taken: kept
    assert all(value not in str(failed.value) for value in brokers.held.values())


def test_nothing_taken_puts_every_secret_back_and_removes_the_new_ones(tmp_path):
    store, brokers = DirSecretStore(tmp_path), Brokers()
    rotate_scram("source", "SCRAM-SHA-512", ["User:a"], {}, store, brokers)
    before = password(store, "a")
    brokers.refuse = {"a", "c"}

    with pytest.raises(RuntimeFailure) as failed:
        rotate_scram("source", "SCRAM-SHA-512", ["User:a", "User:c"], {}, store, brokers)

    assert "the old secrets were restored, nothing changed on this cluster" in str(failed.value)
    assert password(store, "a") == before and password(store, "c") is None


def test_users_without_an_answer_are_named_their_outcome_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(admin, "ANSWER_WAIT", 0.05)  # how long mm2gov waits for one user's answer
    store, brokers = DirSecretStore(tmp_path), Brokers()
    rotate_scram("source", "SCRAM-SHA-512", ["User:a", "User:b"], {}, store, brokers)
    brokers.silent = {"b"}

    with pytest.raises(RuntimeFailure) as failed:
        rotate_scram("source", "SCRAM-SHA-512", ["User:a", "User:b"], {}, store, brokers)

    assert "1 of 2 users the brokers took keep their new secrets, the others' were restored; 1 user(s) got no " \
           "answer (b...): their old secrets may no longer work, run `mm2gov secrets rotate` again" in str(failed.value)
    assert password(store, "a") == brokers.held["a"]


@pytest.mark.parametrize(("allowed", "refused"), [({"ALTER", "DESCRIBE"}, False), ({"ALL"}, False),
                                                  (set(), True), ({"DESCRIBE", "ALTER_CONFIGS"}, True)])
def test_check_alter_refuses_an_admin_the_brokers_do_not_allow_to_alter(allowed, refused):
    if refused:
        with pytest.raises(RuntimeFailure, match="cluster c: its admin principal may not ALTER the cluster"):
            admin.check_alter("c", allowed, "registering SCRAM passwords")
    else:
        admin.check_alter("c", allowed, "registering SCRAM passwords")


def test_check_alter_lets_brokers_that_do_not_say_through_with_a_warning(caplog):
    admin.check_alter("c", None, "registering SCRAM passwords")  # a broker older than KIP-430 (Kafka 2.3)
    assert "do not report what the admin may do (KIP-430)" in caplog.text
