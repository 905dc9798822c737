"""kafka/quotas.py's pure parts: the AlterClientQuotas entry a change becomes (what test_quota_reconcile's
simulation of the brokers assumes) and the kafka-python settings of a confluent-kafka config."""

from __future__ import annotations

from governance.kafka.quotas import _entry, client_settings
from governance.model.quota import ClientQuota, QuotaChange


def test_a_change_is_one_entry_on_the_user_entity_setting_and_removing_its_keys():
    change = QuotaChange("cloud", "User:mm2-x", ClientQuota(producer_byte_rate=10, request_percentage=50.0),
                         ClientQuota(producer_byte_rate=20, consumer_byte_rate=5))
    entry = _entry(change)
    assert [(e.entity_type, e.entity_name) for e in entry.entity] == [("user", "mm2-x")]
    assert [(op.key, op.value, op.remove) for op in entry.ops] == [
        ("consumer_byte_rate", 5.0, False), ("producer_byte_rate", 20.0, False), ("request_percentage", 0.0, True)]


def test_settings_follow_the_confluent_config():
    plain = client_settings({"bootstrap.servers": "a:1,b:2"})
    assert plain["bootstrap_servers"] == ["a:1", "b:2"] and plain["security_protocol"] == "PLAINTEXT"
    assert "ssl_context" not in plain and "sasl_mechanism" not in plain
    scram = client_settings({"bootstrap.servers": "a:1", "security.protocol": "SASL_SSL",
                             "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "admin", "sasl.password": "pw",
                             "ssl.endpoint.identification.algorithm": "none"})
    assert (scram["sasl_mechanism"], scram["sasl_plain_username"], scram["sasl_plain_password"]) == (
        "SCRAM-SHA-512", "admin", "pw")
    assert scram["ssl_context"].check_hostname is False  # as librdkafka's "none"
    assert client_settings({"bootstrap.servers": "a:1", "security.protocol": "SSL"})["ssl_context"].check_hostname
