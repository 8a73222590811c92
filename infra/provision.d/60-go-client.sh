# Go and nats.go from Debian: packages/test-support/test/plain-json.spec.ts builds the Go program
# of docs/calling-services.md (packages/test-support/go/drael-request) and runs it against the
# real services. No Go module proxy is reachable from these machines, so the test builds in GOPATH
# mode against Debian's sources under /usr/share/gocode (nats.go 1.22.1 and its nkeys, nuid deps).
apt_install golang-go golang-github-nats-io-go-nats-dev
