// Command loadgen POSTs one body to one URL from keep-alive connections and prints
// latency percentiles as JSON. It exists because a Python load generator spends
// more of a 2-core machine than the servers it measures.
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

type options struct {
	url         string
	body        []byte
	expect      []byte
	connections int
	duration    time.Duration
	rate        float64
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
	caFile := flag.String("cacert", "", "PEM CA that signed an https server's certificate")
	insecure := flag.Bool("insecure", false, "skip certificate verification (loopback only)")
	expect := flag.String("expect", "", "count an answer without this substring as an error")
	connections := flag.Int("connections", 16, "keep-alive connections (and concurrent requests)")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	rate := flag.Float64("rate", 0, "requests/s in all, open loop; 0 sends flat out")
	flag.Parse()
	if *url == "" || *bodyFile == "" || *connections < 1 || *duration <= 0 || *rate < 0 {
		fail("usage: loadgen -url URL -body FILE [-cacert CA | -insecure] [-connections N] [-duration D] [-rate R]")
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		fail(err.Error())
	}
	client, err := newClient(*caFile, *insecure, *connections)
	if err != nil {
		fail(err.Error())
	}
	opts := options{*url, body, []byte(*expect), *connections, *duration, *rate}
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

// post sends the body once; false when the answer is not a 200 with the expected text.
func post(client *http.Client, opts options) bool {
	request, err := http.NewRequest(http.MethodPost, opts.url, bytes.NewReader(opts.body))
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
	return err == nil && response.StatusCode == http.StatusOK && bytes.Contains(answer, opts.expect)
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
			for {
				var due time.Time
				if interval > 0 {
					due = start.Add(time.Duration(next.Add(1)-1) * interval)
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
					due = time.Now()
					if due.Before(start) {
						time.Sleep(start.Sub(due))
						continue
					}
					if !due.Before(end) {
						break
					}
				}
				if !post(client, opts) {
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
