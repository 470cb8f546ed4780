// genericserver-go: what `genericserver serve` is, in Go. A GenericAPIServer of k8s.io/apiserver
// v0.36.0 with serve's sample endpoints and kube-apiserver's flags where serve takes them, so that the
// lifecycle corpus (tests/parity/lifecycle*) can record the real shutdown for the cases kube-apiserver's
// own flags cannot set up: a pre-shutdown hook that sleeps, fails or panics, and a sample watch.
//
//	/echo?message=x         200, the header "echo: x", no body
//	/slow?seconds=N         200 "slept Ns" after N seconds; 503 if the request's context ends first;
//	                        with &flush=1 the 200 header at once and the outcome as the body
//	/api/v1/namespaces/default/configmaps?watch=1
//	                        a watch (long-running: the watch wait group and its grace period apply)
//	                        of an empty namespace: the header, then no event until the server's
//	                        shutdown signal or the client leaves
//
// It logs as kube-apiserver does (klog; --v=1 for the [graceful-termination] lines) and exits 0 after a
// graceful shutdown, 1 on an error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/options"
	restclient "k8s.io/client-go/rest"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/klog/v2"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	scheme.AddUnversionedTypes(metav1.Unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}

// hook is the sample pre-shutdown hook's behaviour: "" (none), "ok", "fail", "panic" or "sleep:DURATION".
func hook(mode string) (server.PreShutdownHookFunc, error) {
	switch {
	case mode == "ok":
		return func() error { return nil }, nil
	case mode == "fail":
		return func() error { return errors.New("sample pre-shutdown hook failed") }, nil
	case mode == "panic":
		return func() error { panic("sample pre-shutdown hook panicked") }, nil
	case strings.HasPrefix(mode, "sleep:"):
		d, err := time.ParseDuration(strings.TrimPrefix(mode, "sleep:"))
		if err != nil {
			return nil, err
		}
		return func() error { time.Sleep(d); return nil }, nil
	}
	return nil, fmt.Errorf("want ok, fail, panic or sleep:DURATION, got %q", mode)
}

func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("echo", r.URL.Query().Get("message"))
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func slow(w http.ResponseWriter, r *http.Request) {
	text := r.URL.Query().Get("seconds")
	seconds, err := strconv.ParseFloat(text, 64)
	if err != nil || seconds < 0 || math.IsInf(seconds, 1) {
		http.Error(w, fmt.Sprintf("invalid seconds %q: want a number >= 0", text), http.StatusBadRequest)
		return
	}
	d := time.Duration(seconds * float64(time.Second))
	flushed := r.URL.Query().Get("flush") == "1"
	if flushed {
		// the header at once, so that a client knows the handler is running
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	select {
	case <-time.After(d):
		if !flushed {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		fmt.Fprintf(w, "slept %s\n", d)
	case <-r.Context().Done():
		if flushed {
			fmt.Fprintf(w, "gave up waiting: %v\n", r.Context().Err())
			return
		}
		http.Error(w, fmt.Sprintf("gave up waiting: %v", r.Context().Err()), http.StatusServiceUnavailable)
	}
}

// watch stands for the watch handler on an empty namespace (serve's store starts empty): the 200 header
// at once and no event. The chain counts it in the watch wait group, and it returns when the shutdown
// signal the watch-termination filter attached fires, as handlers/watch.go's serveWatch does.
func watch(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	var shutdown <-chan struct{}
	if signal := apirequest.ServerShutdownSignalFrom(r.Context()); signal != nil {
		shutdown = signal.ShuttingDown()
	}
	select {
	case <-shutdown:
	case <-r.Context().Done():
	}
}

func main() {
	run := options.NewServerRunOptions()
	secure := options.NewSecureServingOptions()
	secure.BindAddress = nil
	audit := options.NewAuditOptions()
	fs := pflag.NewFlagSet("genericserver-go", pflag.ContinueOnError)
	run.AddUniversalFlags(fs)
	secure.AddFlags(fs)
	audit.AddFlags(fs)
	tokenFile := fs.String("token-auth-file", "", "a CSV of token,user,uid[,\"group1,group2\"]")
	anonymousAuth := fs.Bool("anonymous-auth", true, "let requests no authenticator recognises in as system:anonymous")
	hookMode := fs.String("sample-pre-shutdown-hook", "", "a pre-shutdown hook: ok, fail, panic or sleep:DURATION")
	goflags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(goflags)
	fs.AddGoFlagSet(goflags)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := run.Complete(); err != nil {
		klog.Fatal(err)
	}
	if len(secure.ServerCert.CertKey.CertFile) == 0 {
		if err := secure.MaybeDefaultWithSelfSignedCerts("localhost", nil, nil); err != nil {
			klog.Fatal(err)
		}
	}
	if errs := append(append(run.Validate(), secure.Validate()...), audit.Validate()...); len(errs) > 0 {
		klog.Fatal(errs)
	}

	config := server.NewConfig(codecs)
	config.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString("1.36", "", "")
	config.LoopbackClientConfig = &restclient.Config{}
	config.EnableProfiling = false
	if err := run.ApplyTo(config); err != nil {
		klog.Fatal(err)
	}
	if err := secure.ApplyTo(&config.SecureServing); err != nil {
		klog.Fatal(err)
	}
	if err := audit.ApplyTo(config); err != nil {
		klog.Fatal(err)
	}
	var authenticators []authenticator.Request
	if *tokenFile != "" {
		tokens, err := tokenfile.NewCSV(*tokenFile)
		if err != nil {
			klog.Fatal(err)
		}
		authenticators = append(authenticators, bearertoken.New(tokens))
	}
	if *anonymousAuth {
		authenticators = append(authenticators, anonymous.NewAuthenticator(nil))
	}
	config.Authentication.Authenticator = union.New(authenticators...)
	config.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()

	s, err := config.Complete(nil).New("genericserver-go", server.NewEmptyDelegate())
	if err != nil {
		klog.Fatal(err)
	}
	s.Handler.NonGoRestfulMux.HandleFunc("/echo", echo)
	s.Handler.NonGoRestfulMux.HandleFunc("/slow", slow)
	s.Handler.NonGoRestfulMux.HandleFunc("/api/v1/namespaces/default/configmaps", watch)
	if *hookMode != "" {
		h, err := hook(*hookMode)
		if err != nil {
			fmt.Fprintf(os.Stderr, "invalid argument for --sample-pre-shutdown-hook: %v\n", err)
			os.Exit(2)
		}
		s.AddPreShutdownHookOrDie("sample-pre-shutdown-hook", h)
	}
	ctx := server.SetupSignalContext()
	if err := s.PrepareRun().RunWithContext(ctx); err != nil {
		klog.Error(err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}
