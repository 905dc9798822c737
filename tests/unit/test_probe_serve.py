"""`probe --serve`'s metrics: one run's figures per tenant and flow, a failed run counted as an error and the
SLO as not met (the real /metrics of a real flow: tests/integration/test_probe.py)."""

from __future__ import annotations

import math
import threading

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from governance.errors import RuntimeFailure
from governance.probe.assess import Slo, assess, misses
from governance.probe.canary import Canary, Received
from governance.probe.serve import ProbeMetrics, guarded


def samples(metrics: ProbeMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(metrics.registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


PAY = (("flow", "payments-onprem-to-cloud"), ("tenant", "payments"))


def test_a_run_becomes_counters_gauges_and_a_latency_histogram():
    sent = [Canary("r", p, 0, 1000) for p in range(3)]
    received = [Received(0, 0, sent[0].encode(), 1200), Received(1, 0, sent[1].encode(), 1400),
                Received(1, 1, sent[1].encode(), 1500), Received(2, 0, b"other", 1500)]
    result = assess("r", sent, received)
    metrics = ProbeMetrics()
    missed = misses(result, Slo(latency_p99_ms=300))
    metrics.record("payments", "payments-onprem-to-cloud", 300, result, missed, now=1234.5)
    found = samples(metrics)
    assert found[("mm2gov_probe_canaries_sent_total", PAY)] == 3
    assert found[("mm2gov_probe_canaries_delivered_total", PAY)] == 2
    assert found[("mm2gov_probe_canaries_lost_total", PAY)] == 1
    assert found[("mm2gov_probe_canaries_duplicated_total", PAY)] == 1
    assert found[("mm2gov_probe_foreign_records_total", PAY)] == 1
    assert found[("mm2gov_probe_latency_seconds_count", PAY)] == 2
    assert math.isclose(found[("mm2gov_probe_latency_seconds_sum", PAY)], 0.6)
    assert found[("mm2gov_probe_latency_seconds_bucket", (*PAY[:1], ("le", "0.25"), *PAY[1:]))] == 1
    assert found[("mm2gov_probe_latency_p99_seconds", PAY)] == 0.4
    assert found[("mm2gov_probe_slo_latency_p99_seconds", PAY)] == 0.3
    assert found[("mm2gov_probe_slo_met", PAY)] == 0
    assert found[("mm2gov_probe_runs_total", (*PAY[:1], ("result", "slo_missed"), *PAY[1:]))] == 1
    assert found[("mm2gov_probe_last_run_timestamp_seconds", PAY)] == 1234.5


def test_a_failed_run_is_an_error_and_the_loop_goes_on():
    metrics = ProbeMetrics()

    def unreachable(_metrics: ProbeMetrics) -> None:
        raise RuntimeFailure("cluster onprem (127.0.0.1:1) unreachable")

    guarded("payments", "payments-onprem-to-cloud", unreachable)(metrics)
    found = samples(metrics)
    assert found[("mm2gov_probe_runs_total", (*PAY[:1], ("result", "error"), *PAY[1:]))] == 1
    assert found[("mm2gov_probe_slo_met", PAY)] == 0


def test_a_scrape_shows_whole_runs_only():
    """The HTTP server collects in its own thread while runs are recorded: every scrape must show as many
    latencies as delivered canaries and as many delivered canaries as runs carried (test_probe.py asserts this
    on one scrape of the real server; it once saw two runs counted and one run's latencies)."""
    sent = [Canary("r", p, seq, 1000) for p in range(3) for seq in range(5)]
    result = assess("r", sent, [Received(c.partition, c.seq, c.encode(), 1100) for c in sent])
    metrics, runs, seen = ProbeMetrics(), 300, []
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            seen.append(samples(metrics))

    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        for _ in range(runs):
            metrics.record("payments", "payments-onprem-to-cloud", 300, result, [], now=1.0)
    finally:
        stop.set()
        scraper.join()
    seen.append(samples(metrics))
    ok = ("mm2gov_probe_runs_total", (*PAY[:1], ("result", "ok"), *PAY[1:]))
    whole = [(s.get(ok, 0) * 15, s.get(("mm2gov_probe_canaries_delivered_total", PAY), 0),
              s.get(("mm2gov_probe_latency_seconds_count", PAY), 0)) for s in seen]
    assert whole[-1] == (runs * 15,) * 3
    assert len(seen) > 10  # scrapes ran while runs were recorded
    assert [w for w in whole if len(set(w)) > 1] == []


def test_an_admission_scrape_shows_whole_reviews_only():
    """The webhook's metrics share the mechanism (governance/metrics.py): every scrape taken while reviews are
    recorded counts as many decisions as answer times, and a denial's violation with it."""
    from governance.admission.decider import Verdict
    from governance.admission.server import Metrics

    metrics, reviews, seen = Metrics(), 600, []
    denied = Verdict(False, ({"rule": "mirrormaker_scope"},))
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            seen.append(generate_latest(metrics.registry).decode())

    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        for _ in range(reviews):
            metrics.record("KafkaMirrorMaker2", denied, 0.003)
    finally:
        stop.set()
        scraper.join()
    seen.append(generate_latest(metrics.registry).decode())

    def figures(text: str) -> tuple[float, float, float]:
        found = {(s.name, tuple(sorted(s.labels.items()))): s.value
                 for family in text_string_to_metric_families(text) for s in family.samples}
        return (found.get(("mm2gov_admission_decisions_total", (("kind", "KafkaMirrorMaker2"),
                                                                 ("result", "denied"))), 0),
                found.get(("mm2gov_admission_violations_total", (("rule", "mirrormaker_scope"),)), 0),
                found.get(("mm2gov_admission_duration_seconds_count", ()), 0))

    whole = [figures(text) for text in seen]
    assert whole[-1] == (reviews,) * 3
    assert len(seen) > 10
    assert [w for w in whole if len(set(w)) > 1] == []
