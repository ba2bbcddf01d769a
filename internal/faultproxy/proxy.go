package faultproxy

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// Proxy is a reverse proxy on 127.0.0.1 in front of one registry that
// injects faults. Like internal/bench's counting proxy it keeps the
// client's Host header, so the registry's upload Location headers point
// back through the proxy and every request of an upload meets the faults.
type Proxy struct {
	*Injector
	// Addr is the proxy's HOST:PORT on 127.0.0.1.
	Addr string

	srv *http.Server
	tr  *http.Transport
}

// Start starts a proxy to the registry at target (HOST:PORT, plain HTTP)
// on a random port of 127.0.0.1.
func Start(target string, opts Options) (*Proxy, error) {
	rp, tr := Forward(target)
	quiet := log.New(io.Discard, "", 0)
	rp.ErrorLog = quiet
	p := &Proxy{Injector: New(opts), tr: tr}
	srv, addr, err := Listen(p.Wrap(rp))
	if err != nil {
		return nil, err
	}
	srv.ErrorLog = quiet
	p.srv, p.Addr = srv, addr
	return p, nil
}

// Forward returns a reverse proxy to the registry at target (HOST:PORT,
// plain HTTP) that keeps the client's Host header, so the registry's
// upload Location headers point back through the proxy, and streams
// responses as they come; and the transport it forwards through.
func Forward(target string) (*httputil.ReverseProxy, *http.Transport) {
	u := &url.URL{Scheme: "http", Host: target}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		Transport:     tr,
		FlushInterval: -1,
	}
	return rp, tr
}

// Listen serves h on a random port of 127.0.0.1 until the returned server
// is shut down, and returns the server and its HOST:PORT.
func Listen(h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}

// Close stops the proxy, closing connections still open.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		err = p.srv.Close()
	}
	p.tr.CloseIdleConnections()
	return err
}
