// Command loadgen POSTs bodies to one URL from keep-alive connections and prints
// latency percentiles as JSON. It exists because a Python load generator spends
// more of a 2-core machine than the servers it measures.
//
// -body sends one body; -bodies sends many, cycled in order (request k sends body
// k mod n), each with its own expected substring: a file of JSON lines
// {"body": "<base64>", "expect": "<substring>"}. Every answer is checked.
//
// With -rate > 0 it is open loop: request k is due at start + k/rate, and its
// latency runs from that due time, so a server that falls behind shows its queue
// (no coordinated omission). With -rate 0 every connection sends back to back
// and latency runs from the send.
//
// Output: {"requests", "errors", "unsent", "rps", "p50_ms", "p99_ms"}; errors are
// transport failures, non-200 answers and answers without -expect; unsent are
// due requests that could not even be sent before the run's hard stop.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

type request struct {
	body   []byte
	expect []byte
}

type options struct {
	url         string
	requests    []request
	connections int
	duration    time.Duration
	rate        float64
}

type line struct {
	Body   []byte `json:"body"` // base64 in the file
	Expect string `json:"expect"`
}

type result struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Unsent   int64   `json:"unsent"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
}

func main() {
	url := flag.String("url", "", "URL to POST to")
	bodyFile := flag.String("body", "", "file holding the request body (sent as application/json)")
	bodiesFile := flag.String("bodies", "", "JSON lines {\"body\": base64, \"expect\": substring}, cycled in order")
	caFile := flag.String("cacert", "", "PEM CA that signed an https server's certificate")
	insecure := flag.Bool("insecure", false, "skip certificate verification (loopback only)")
	expect := flag.String("expect", "", "count an answer without this substring as an error")
	connections := flag.Int("connections", 16, "keep-alive connections (and concurrent requests)")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	rate := flag.Float64("rate", 0, "requests/s in all, open loop; 0 sends flat out")
	flag.Parse()
	if *url == "" || (*bodyFile == "") == (*bodiesFile == "") || *connections < 1 || *duration <= 0 || *rate < 0 {
		fail("usage: loadgen -url URL (-body FILE [-expect S] | -bodies FILE) [-cacert CA | -insecure] " +
			"[-connections N] [-duration D] [-rate R]")
	}
	var requests []request
	if *bodyFile != "" {
		body, err := os.ReadFile(*bodyFile)
		if err != nil {
			fail(err.Error())
		}
		requests = []request{{body, []byte(*expect)}}
	} else {
		text, err := os.ReadFile(*bodiesFile)
		if err != nil {
			fail(err.Error())
		}
		for _, raw := range bytes.Split(text, []byte("\n")) {
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			var item line
			if err := json.Unmarshal(raw, &item); err != nil {
				fail("bad line in " + *bodiesFile + ": " + err.Error())
			}
			requests = append(requests, request{item.Body, []byte(item.Expect)})
		}
		if len(requests) == 0 {
			fail("no bodies in " + *bodiesFile)
		}
	}
	client, err := newClient(*caFile, *insecure, *connections)
	if err != nil {
		fail(err.Error())
	}
	opts := options{*url, requests, *connections, *duration, *rate}
	out, _ := json.Marshal(run(client, opts))
	fmt.Println(string(out))
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "loadgen:", message)
	os.Exit(2)
}

// newClient shares one transport across workers, HTTP/1.1 only (the webhook speaks
// nothing else), with exactly `connections` connections kept alive.
func newClient(caFile string, insecure bool, connections int) (*http.Client, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", caFile)
		}
		config.RootCAs = pool
	}
	transport := &http.Transport{
		TLSClientConfig:     config,
		MaxConnsPerHost:     connections,
		MaxIdleConnsPerHost: connections,
		MaxIdleConns:        connections,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	return &http.Client{Transport: transport, Timeout: 10 * time.Second}, nil
}

// post sends one body once; false when the answer is not a 200 with its expected text.
func post(client *http.Client, url string, one request) bool {
	request, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(one.body))
	if err != nil {
		return false
	}
	request.Header.Set("Content-Type", "application/json")
	response, err := client.Do(request)
	if err != nil {
		return false
	}
	answer, err := io.ReadAll(response.Body) // read to the end: the connection is then reused
	response.Body.Close()
	return err == nil && response.StatusCode == http.StatusOK && bytes.Contains(answer, one.expect)
}

func run(client *http.Client, opts options) result {
	start := time.Now().Add(100 * time.Millisecond)
	end := start.Add(opts.duration)
	hardStop := end.Add(max(opts.duration, 5*time.Second)) // a hopeless backlog is cut, and reported as unsent
	var interval time.Duration
	if opts.rate > 0 {
		interval = time.Duration(float64(time.Second) / opts.rate)
	}
	var next atomic.Int64 // the next request slot (open loop)
	var unsent atomic.Int64
	latencies := make([][]time.Duration, opts.connections)
	errors := make([]int, opts.connections)
	var wg sync.WaitGroup
	for w := range opts.connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make([]time.Duration, 0, 4096)
			sent := int64(w) // flat out: this worker's next body, cycling with the others'
			for {
				var due time.Time
				var slot int64
				if interval > 0 {
					slot = next.Add(1) - 1
					due = start.Add(time.Duration(slot) * interval)
					if !due.Before(end) {
						break
					}
					if now := time.Now(); now.After(hardStop) {
						unsent.Add(1)
						continue
					} else if wait := due.Sub(now); wait > 0 {
						time.Sleep(wait)
					}
				} else {
					slot = sent
					due = time.Now()
					if due.Before(start) {
						time.Sleep(start.Sub(due))
						continue
					}
					if !due.Before(end) {
						break
					}
				}
				if interval == 0 {
					sent += int64(opts.connections)
				}
				if !post(client, opts.url, opts.requests[slot%int64(len(opts.requests))]) {
					errors[w]++
				}
				own = append(own, time.Since(due))
			}
			latencies[w] = own
		}()
	}
	wg.Wait()
	elapsed := max(time.Since(start), opts.duration)
	var all []time.Duration
	failed := 0
	for w := range opts.connections {
		all = append(all, latencies[w]...)
		failed += errors[w]
	}
	slices.Sort(all)
	return result{
		Requests: len(all),
		Errors:   failed,
		Unsent:   unsent.Load(),
		RPS:      float64(len(all)) / elapsed.Seconds(),
		P50ms:    percentile(all, 0.50),
		P99ms:    percentile(all, 0.99),
	}
}

// percentile of sorted latencies in milliseconds, nearest rank as bench/admission.py had it.
func percentile(sorted []time.Duration, fraction float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	index := min(len(sorted)-1, int(float64(len(sorted))*fraction))
	return float64(sorted[index].Microseconds()) / 1000
}
