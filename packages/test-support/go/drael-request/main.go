// drael-request: one request to a Drael service from Go, with nats.go and the standard library.
//
//	NATS_URL=nats://127.0.0.1:4222 go run . sandbox.run.v1 '{"tenant":"team-a","runtime":"python","code":"print(6*7)"}'
//
// It sends the request's JSON as it is (no packet, no Drael library), prints the reply envelope
// ({"result": ...} or {"error": {...}}) and exits 0 on a result, 1 on an error reply, 2 when no
// reply came in time. DRAEL_NATS_PREFIX prefixes the subject; TRACEPARENT, when set, is sent as
// the W3C traceparent header so the service's span joins the caller's trace.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

// Reply is the envelope every Drael subject answers with: exactly one of Result and Error is set.
type Reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *WireError      `json:"error,omitempty"`
}

// WireError is a typed error: Retryable says whether the same request may succeed later.
type WireError struct {
	Code      string                 `json:"code"`
	Message   string                 `json:"message"`
	Retryable bool                   `json:"retryable"`
	Details   map[string]interface{} `json:"details,omitempty"`
}

// Request sends body on subject and waits up to timeout for the reply envelope.
func Request(nc *nats.Conn, subject string, body []byte, timeout time.Duration) (*Reply, error) {
	msg := nats.NewMsg(subject)
	msg.Data = body
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	msg.Header.Set("x-request-id", "go-"+hex.EncodeToString(id)) // find the call in the service's logs
	if tp := os.Getenv("TRACEPARENT"); tp != "" {
		msg.Header.Set("traceparent", tp)
	}
	res, err := nc.RequestMsg(msg, timeout)
	if errors.Is(err, nats.ErrNoResponders) {
		// No replica got the request: nothing ran, so it is always safe to retry after a pause.
		return &Reply{Error: &WireError{Code: "unavailable", Message: subject + ": no service is answering", Retryable: true}}, nil
	}
	if err != nil {
		return nil, err
	}
	var reply Reply
	if err := json.Unmarshal(res.Data, &reply); err != nil {
		return nil, fmt.Errorf("%s: reply is not the envelope: %w", subject, err)
	}
	return &reply, nil
}

func main() { os.Exit(run()) }

func run() int {
	timeout := flag.Duration("timeout", 60*time.Second, "how long to wait for the reply (sandbox.run.v1: its timeout_s + 30 s)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: drael-request [-timeout 60s] <subject> <request JSON>")
		return 2
	}
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	subject := flag.Arg(0)
	if prefix := os.Getenv("DRAEL_NATS_PREFIX"); prefix != "" {
		subject = prefix + "." + subject
	}
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer nc.Close()
	reply, err := Request(nc, subject, []byte(flag.Arg(1)), *timeout)
	if errors.Is(err, nats.ErrTimeout) {
		// It may still run: retry only an idempotent subject, or a request with an idempotency key.
		fmt.Println(`{"error":{"code":"timeout","message":"no reply in time","retryable":true}}`)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out, err := json.Marshal(reply)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(string(out))
	if reply.Error != nil {
		return 1
	}
	return 0
}
