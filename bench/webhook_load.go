// webhook_load.go - the client side of bench/webhook that wrk and h2load do not
// cover: an open-loop paced load (latency at a fixed rate), a holder of many
// idle TLS connections (RSS per connection), a start-up timer and a verdict
// check. Standard library only; bench/webhook builds it with `go build`.
//
//	webhook_load check   -url U -ca F -bodies F
//	webhook_load pace    -url U -ca F -bodies F -rate R -duration D [-warmup D] [-conns N] [-proto h1|h2] [-samples F]
//	webhook_load hold    -url U -ca F -bodies F -conns N        (holds until stdin closes)
//	webhook_load startup -url U -ca F -bodies F -metrics M -- CMD ARGS...
//
// Bodies come from a TSV file, one AdmissionReview per line: "allowed|denied<TAB>json".
// Every subcommand prints one JSON object on stdout.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type body struct {
	expectAllowed bool
	json          []byte
}

type options struct {
	url      string
	ca       string
	bodies   string
	rate     float64
	duration time.Duration
	warmup   time.Duration
	conns    int
	proto    string
	metrics  string
	timeout  time.Duration
	samples  string
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "webhook_load: "+format+"\n", args...)
	os.Exit(1)
}

func emit(v any) {
	out, err := json.Marshal(v)
	if err != nil {
		die("encoding the result: %v", err)
	}
	fmt.Println(string(out))
}

func loadBodies(path string) []body {
	f, err := os.Open(path)
	if err != nil {
		die("%v", err)
	}
	defer f.Close()
	var out []body
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		expect, doc, ok := strings.Cut(sc.Text(), "\t")
		if !ok || (expect != "allowed" && expect != "denied") {
			die("%s: line %d: expected \"allowed|denied<TAB>json\"", path, len(out)+1)
		}
		out = append(out, body{expectAllowed: expect == "allowed", json: []byte(doc)})
	}
	if err := sc.Err(); err != nil {
		die("%s: %v", path, err)
	}
	if len(out) == 0 {
		die("%s: no bodies", path)
	}
	return out
}

func tlsConfig(caPath string, protos []string) *tls.Config {
	pem, err := os.ReadFile(caPath)
	if err != nil {
		die("%v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		die("%s: no certificate", caPath)
	}
	return &tls.Config{RootCAs: pool, NextProtos: protos, MinVersion: tls.VersionTLS12}
}

func client(o *options) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:     tlsConfig(o.ca, nil),
		MaxConnsPerHost:     o.conns,
		MaxIdleConnsPerHost: o.conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		Protocols:           new(http.Protocols),
	}
	switch o.proto {
	case "h1":
		tr.Protocols.SetHTTP1(true)
	case "h2":
		tr.Protocols.SetHTTP2(true)
	default:
		die("-proto: expected h1 or h2, found %q", o.proto)
	}
	return &http.Client{Transport: tr, Timeout: o.timeout}
}

type reviewResponse struct {
	Response *struct {
		Allowed bool `json:"allowed"`
		Status  *struct {
			Message string `json:"message"`
		} `json:"status"`
	} `json:"response"`
}

// post sends one review and says whether the verdict was the expected one.
func post(c *http.Client, u string, b body) (proto string, err error) {
	resp, err := c.Post(u, "application/json", bytes.NewReader(b.json))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.Proto, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.Proto, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var rr reviewResponse
	if err := json.Unmarshal(raw, &rr); err != nil || rr.Response == nil {
		return resp.Proto, fmt.Errorf("not an AdmissionReview response: %.80q", raw)
	}
	if rr.Response.Allowed != b.expectAllowed {
		msg := ""
		if rr.Response.Status != nil {
			msg = rr.Response.Status.Message
		}
		return resp.Proto, fmt.Errorf("expected allowed=%v, found allowed=%v (%s)", b.expectAllowed,
			rr.Response.Allowed, msg)
	}
	return resp.Proto, nil
}

// check: every body once, in order; a wrong verdict is a failed bench.
func runCheck(o *options) {
	bodies := loadBodies(o.bodies)
	c := client(o)
	allowed, denied := 0, 0
	var failures []string
	for i, b := range bodies {
		if _, err := post(c, o.url, b); err != nil {
			failures = append(failures, fmt.Sprintf("line %d: %v", i+1, err))
		} else if b.expectAllowed {
			allowed++
		} else {
			denied++
		}
	}
	emit(map[string]any{"bodies": len(bodies), "allowed": allowed, "denied": denied, "failures": failures})
	if len(failures) > 0 {
		os.Exit(1)
	}
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i].Microseconds())
}

// pace: open loop. Request i is due at start + i/rate whatever happened to the
// ones before; its latency counts from that due time, so a stall of the server
// (or of this client) shows up in the tail instead of silently lowering the
// rate (coordinated omission). "service" counts from the actual send.
func runPace(o *options) {
	if o.rate <= 0 || o.duration <= 0 {
		die("pace needs -rate and -duration")
	}
	bodies := loadBodies(o.bodies)
	c := client(o)
	// Open the connections before the clock starts: handshakes are not the load.
	var warm sync.WaitGroup
	for i := 0; i < o.conns; i++ {
		warm.Add(1)
		go func(i int) {
			defer warm.Done()
			post(c, o.url, bodies[i%len(bodies)])
		}(i)
	}
	warm.Wait()

	interval := time.Duration(float64(time.Second) / o.rate)
	total := int((o.warmup + o.duration).Seconds() * o.rate)
	skip := int(o.warmup.Seconds() * o.rate)
	latency := make([]time.Duration, total)
	service := make([]time.Duration, total)
	failed := make([]bool, total)
	var errs atomic.Int64
	var firstErr atomic.Value
	var protoSeen atomic.Value
	var wg sync.WaitGroup

	// Dispatch on a thread of its own that sleeps in nanosleep(2): the Go
	// runtime's timers wake from epoll_wait with a whole-millisecond timeout
	// (runtime/netpoll_epoll.go), so time.Sleep returns up to ~1 ms late, and
	// that lateness would count in every latency below, whichever the server.
	// A second P serves the connections while this one sleeps.
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1000, 0) // 1 us, this thread
	late := make([]time.Duration, total)

	start := time.Now().Add(10 * time.Millisecond)
	for i := 0; i < total; i++ {
		due := start.Add(time.Duration(i) * interval)
		sleepUntil(due)
		late[i] = time.Since(due)
		wg.Add(1)
		go func(i int, due time.Time) {
			defer wg.Done()
			sent := time.Now()
			proto, err := post(c, o.url, bodies[i%len(bodies)])
			done := time.Now()
			latency[i], service[i] = done.Sub(due), done.Sub(sent)
			if proto != "" {
				protoSeen.Store(proto)
			}
			if err != nil {
				failed[i] = true
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}(i, due)
	}
	dispatched := time.Since(start)
	wg.Wait()

	lat := append([]time.Duration(nil), latency[skip:]...)
	svc := append([]time.Duration(nil), service[skip:]...)
	lateness := append([]time.Duration(nil), late[skip:]...)
	sort.Slice(lateness, func(a, b int) bool { return lateness[a] < lateness[b] })
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	sort.Slice(svc, func(a, b int) bool { return svc[a] < svc[b] })
	if o.samples != "" {
		writeSamples(o.samples, lat)
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	measuredFailures := 0
	for _, f := range failed[skip:] {
		if f {
			measuredFailures++
		}
	}
	res := map[string]any{
		"proto": protoSeen.Load(), "rate": o.rate, "requests": len(lat), "warmup_requests": skip,
		"errors": errs.Load(), "measured_errors": measuredFailures,
		"achieved_rps": float64(total) / dispatched.Seconds(),
		"mean_us":      float64(sum.Microseconds()) / float64(max(1, len(lat))),
		"p50_us":       percentile(lat, 0.50), "p90_us": percentile(lat, 0.90),
		"p99_us": percentile(lat, 0.99), "p999_us": percentile(lat, 0.999),
		"max_us":     percentile(lat, 1),
		"svc_p50_us": percentile(svc, 0.50), "svc_p99_us": percentile(svc, 0.99),
		"late_p50_us": percentile(lateness, 0.50), "late_p99_us": percentile(lateness, 0.99),
		"first_error": firstErr.Load(),
	}
	emit(res)
}

// writeSamples keeps the measured latencies, in microseconds, one per line:
// bench/webhook pools the short paced runs of its interleaved step into one
// p99 per server.
func writeSamples(path string, lat []time.Duration) {
	var b strings.Builder
	for _, d := range lat {
		fmt.Fprintf(&b, "%d\n", d.Microseconds())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		die("writing the latencies: %v", err)
	}
}

const prSetTimerslack = 29 // PR_SET_TIMERSLACK, <linux/prctl.h>

// sleepUntil blocks this OS thread in nanosleep(2) until t (see runPace).
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(d.Nanoseconds())
		syscall.Nanosleep(&ts, nil)
	}
}

func hostPort(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		die("-url: %v", err)
	}
	return p.Host
}

// hold: N separate TLS connections, each with one answered HTTP/1.1 request
// (a connection the API server has used), then idle until stdin closes.
func runHold(o *options) {
	b := loadBodies(o.bodies)[0]
	p, err := url.Parse(o.url)
	if err != nil {
		die("-url: %v", err)
	}
	cfg := tlsConfig(o.ca, []string{"http/1.1"})
	req := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\n\r\n%s", p.RequestURI(), p.Host, len(b.json), b.json)
	conns := make([]net.Conn, o.conns)
	var failures atomic.Int64
	var firstErr atomic.Value
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			err := func() error {
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", p.Host, cfg)
				if err != nil {
					return err
				}
				conns[i] = c
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(req); err != nil {
					return err
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					return err
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				c.SetDeadline(time.Time{})
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("HTTP %d", resp.StatusCode)
				}
				return nil
			}()
			if err != nil {
				failures.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}(i)
	}
	wg.Wait()
	emit(map[string]any{"held": int64(o.conns) - failures.Load(), "failures": failures.Load(),
		"first_error": firstErr.Load(), "open_ms": time.Since(t0).Milliseconds()})
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// vmRSS: VmRSS of pid in KB, 0 if unknown.
func vmRSS(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int
			fmt.Sscan(rest, &kb)
			return kb
		}
	}
	return 0
}

// startup: run the server, poll every millisecond, report when its port
// accepted a TCP connection, answered a review over TLS, and said ready.
func runStartup(o *options, argv []string) {
	if len(argv) == 0 || o.metrics == "" {
		die("startup needs -metrics ADDR and a command after --")
	}
	b := loadBodies(o.bodies)[0]
	o.conns, o.timeout = 1, 200*time.Millisecond
	c := client(o)
	ready := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	addr := hostPort(o.url)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// The bench measures the CPU it uses: keep the child where the caller put it.
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		die("%v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ms := func() float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	deadline := t0.Add(30 * time.Second)
	var listenMs, serveMs, readyMs float64
	var fail error
	for listenMs == 0 || serveMs == 0 || readyMs == 0 {
		select {
		case err := <-exited:
			fail = fmt.Errorf("server exited during start-up: %v", err)
		default:
		}
		if fail != nil {
			break
		}
		if time.Now().After(deadline) {
			fail = errors.New("not ready within 30 s")
			break
		}
		if listenMs == 0 {
			if conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
				conn.Close()
				listenMs = ms()
			}
		} else if serveMs == 0 {
			if _, err := post(c, o.url, b); err == nil {
				serveMs = ms()
			}
		}
		if readyMs == 0 {
			if resp, err := ready.Get("http://" + o.metrics + "/readyz"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					readyMs = ms()
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	// Resident memory once ready and idle (the poller's one connection aside).
	rssKB := 0
	if fail == nil {
		time.Sleep(300 * time.Millisecond)
		rssKB = vmRSS(cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
	emit(map[string]any{"start_unix_ms": t0.UnixMilli(), "listen_ms": listenMs, "first_answer_ms": serveMs,
		"ready_ms": readyMs, "rss_ready_kb": rssKB})
	if fail != nil {
		die("%v", fail)
	}
}

func main() {
	if len(os.Args) < 2 {
		die("usage: webhook_load check|pace|hold|startup [flags]")
	}
	o := &options{}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	fs.StringVar(&o.url, "url", "", "https://127.0.0.1:PORT/validate/tenants")
	fs.StringVar(&o.ca, "ca", "", "CA bundle that signed the serving certificate")
	fs.StringVar(&o.bodies, "bodies", "", "TSV file: allowed|denied<TAB>AdmissionReview JSON")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second (pace)")
	fs.DurationVar(&o.duration, "duration", 0, "measured time (pace)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "time sent but not measured (pace)")
	fs.IntVar(&o.conns, "conns", 16, "connections (pace: at most; hold: exactly)")
	fs.StringVar(&o.proto, "proto", "h1", "h1 or h2")
	fs.StringVar(&o.metrics, "metrics", "", "ADDR:PORT of the plain-HTTP /readyz (startup)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per request")
	fs.StringVar(&o.samples, "samples", "", "file for the measured latencies, us per line (pace)")
	fs.Parse(os.Args[2:])
	if o.url == "" || o.ca == "" || o.bodies == "" {
		die("-url, -ca and -bodies are required")
	}
	switch os.Args[1] {
	case "check":
		runCheck(o)
	case "pace":
		runPace(o)
	case "hold":
		// A signal ends a hold like a closed stdin: the kernel closes the sockets.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		go func() { <-ctx.Done(); os.Exit(0) }()
		runHold(o)
	case "startup":
		runStartup(o, fs.Args())
	default:
		die("unknown subcommand %q", os.Args[1])
	}
}
