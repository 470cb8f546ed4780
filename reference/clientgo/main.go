// clientgo drives a server with client-go v0.36.0's typed clients, as controllers talk to
// kube-apiserver, and prints what it saw as JSON lines (a transcript; the recorder masks it).
//
//	clientgo --server URL --token T --ca FILE --encoding json|protobuf --phase main|sigterm
//
// The main phase: typed create, get, list with paging, watch, the four patch types, deletes with
// preconditions, and two informers (a watch-list, client-go's default, and a list then a watch)
// that must each see every change. The sigterm phase holds a POST in flight, waits for a line on
// stdin (the server has been sent SIGTERM and stopped accepting), then GETs: the server answers
// 429 with a Retry-After, client-go waits that long and retries.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const namespace = "default"

var out = json.NewEncoder(os.Stdout)

// serverHost is the server's host:port, which an error text names: a transcript says SERVER.
var serverHost string

func masked(text string) string {
	if serverHost == "" {
		return text
	}
	return strings.ReplaceAll(text, serverHost, "SERVER")
}

// say prints one transcript line.
func say(step string, fields map[string]any) {
	line := map[string]any{"step": step}
	for k, v := range fields {
		line[k] = v
	}
	if err := out.Encode(line); err != nil {
		panic(err)
	}
}

// outcome is an object or the error a call returned, as a transcript shows it.
func outcome(obj any, err error) map[string]any {
	if err == nil {
		return map[string]any{"object": obj}
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return map[string]any{"error": map[string]any{"code": s.Code, "reason": s.Reason, "message": s.Message}}
	}
	return map[string]any{"error": map[string]any{"text": masked(err.Error())}}
}

// gates are client-go's own feature gates with WatchListClient set by the program: each informer
// reads it when its reflector is made.
type gates struct {
	mu        sync.Mutex
	defaults  clientfeatures.Gates
	watchList bool
}

func (g *gates) Enabled(f clientfeatures.Feature) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f == clientfeatures.WatchListClient {
		return g.watchList
	}
	return g.defaults.Enabled(f)
}

func (g *gates) setWatchList(on bool) {
	g.mu.Lock()
	g.watchList = on
	g.mu.Unlock()
}

var features *gates

func config(server, token, ca, encoding, agent string) *rest.Config {
	cfg := &rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: ca},
		UserAgent: agent, QPS: -1}
	// client-go v0.36's typed clients default to protobuf (rest.Request's UseProtobufAsDefault):
	// JSON has to be asked for
	if encoding == "protobuf" {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	} else {
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	}
	return cfg
}

func mustClient(cfg *rest.Config) *kubernetes.Clientset {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return c
}

func configMap(name, label string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": label}}, Data: data}
}

func main() {
	server := flag.String("server", "", "the server's URL")
	token := flag.String("token", "", "a bearer token")
	ca := flag.String("ca", "", "the CA certificate file")
	encoding := flag.String("encoding", "json", "json or protobuf")
	phase := flag.String("phase", "main", "main or sigterm")
	flag.Parse()
	// before any client is made, so that client-go never reads the gates it replaces
	features = &gates{defaults: clientfeatures.FeatureGates(), watchList: true}
	clientfeatures.ReplaceFeatureGates(features)
	serverHost = strings.TrimPrefix(strings.TrimPrefix(*server, "https://"), "http://")
	if *encoding != "json" && *encoding != "protobuf" {
		fmt.Fprintln(os.Stderr, "--encoding must be json or protobuf")
		os.Exit(2)
	}
	switch *phase {
	case "main":
		mainPhase(*server, *token, *ca, *encoding)
	case "sigterm":
		sigtermPhase(*server, *token, *ca, *encoding)
	default:
		fmt.Fprintln(os.Stderr, "--phase must be main or sigterm")
		os.Exit(2)
	}
}

func mainPhase(server, token, ca, encoding string) {
	ctx := context.Background()
	prefix := "cg-" + map[string]string{"json": "json", "protobuf": "pb"}[encoding]
	label := prefix
	cms := mustClient(config(server, token, ca, encoding, "clientgo/"+encoding+"/main")).CoreV1().ConfigMaps(namespace)

	for _, n := range []string{"a", "b", "c", "d"} {
		obj, err := cms.Create(ctx, configMap(prefix+"-"+n, label, map[string]string{"n": n}), metav1.CreateOptions{})
		say("create "+n, outcome(obj, err))
	}
	obj, err := cms.Create(ctx, configMap(prefix+"-a", label, nil), metav1.CreateOptions{})
	say("create a again", outcome(obj, err))
	a, err := cms.Get(ctx, prefix+"-a", metav1.GetOptions{})
	say("get a", outcome(a, err))
	obj, err = cms.Get(ctx, prefix+"-missing", metav1.GetOptions{})
	say("get missing", outcome(obj, err))

	// paging: two pages of two, then the last page
	selector := "app=" + label
	var names []string
	listRV := ""
	opts := metav1.ListOptions{LabelSelector: selector, Limit: 2}
	for page := 1; ; page++ {
		list, err := cms.List(ctx, opts)
		say(fmt.Sprintf("list page %d", page), outcome(list, err))
		if err != nil {
			break
		}
		for _, i := range list.Items {
			names = append(names, i.Name)
		}
		if listRV == "" {
			listRV = list.ResourceVersion
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	say("listed", map[string]any{"names": names})

	// a watch from the first page's resourceVersion: the update of a is its first event
	w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: listRV})
	if err != nil {
		say("watch", outcome(nil, err))
	} else {
		a.Data = map[string]string{"n": "a", "updated": "yes"}
		updated, err := cms.Update(ctx, a, metav1.UpdateOptions{})
		say("update a", outcome(updated, err))
		select {
		case ev, ok := <-w.ResultChan():
			if ok {
				say("watch event", map[string]any{"type": ev.Type, "object": ev.Object})
			} else {
				say("watch event", map[string]any{"closed": true})
			}
		case <-time.After(30 * time.Second):
			say("watch event", map[string]any{"timeout": true})
		}
		w.Stop()
	}
	a.ResourceVersion = "1"
	obj, err = cms.Update(ctx, a, metav1.UpdateOptions{})
	say("update a stale", outcome(obj, err))

	patches := []struct {
		name string
		pt   types.PatchType
		body string
	}{
		{"json", types.JSONPatchType, `[{"op":"add","path":"/data/json","value":"1"}]`},
		{"merge", types.MergePatchType, `{"data":{"merge":"1"}}`},
		{"strategic", types.StrategicMergePatchType, `{"data":{"strategic":"1"},"metadata":{"labels":{"patched":"yes"}}}`},
		{"json-failing-test", types.JSONPatchType, `[{"op":"test","path":"/data/n","value":"z"}]`},
	}
	for _, p := range patches {
		obj, err := cms.Patch(ctx, prefix+"-a", p.pt, []byte(p.body), metav1.PatchOptions{})
		say("patch "+p.name, outcome(obj, err))
	}
	// server-side apply, on an object of its own (outside the label the lists and informers select)
	applied, err := cms.Apply(ctx, corev1ac.ConfigMap(prefix+"-applied", namespace).WithData(map[string]string{"applied": "1"}),
		metav1.ApplyOptions{FieldManager: "clientgo", Force: true})
	say("patch apply", outcome(applied, err))
	err = cms.Delete(ctx, prefix+"-applied", metav1.DeleteOptions{})
	say("delete applied", outcome(nil, err))

	// deletes with preconditions: a wrong uid, a wrong resourceVersion, then the right ones
	b, err := cms.Get(ctx, prefix+"-b", metav1.GetOptions{})
	say("get b", outcome(b, err))
	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	err = cms.Delete(ctx, prefix+"-b", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	say("delete b wrong uid", outcome(nil, err))
	wrongRV := "1"
	err = cms.Delete(ctx, prefix+"-b", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &wrongRV}})
	say("delete b wrong resourceVersion", outcome(nil, err))
	if b != nil {
		err = cms.Delete(ctx, prefix+"-b", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &b.UID, ResourceVersion: &b.ResourceVersion}})
		say("delete b", outcome(nil, err))
	}
	err = cms.Delete(ctx, prefix+"-b", metav1.DeleteOptions{})
	say("delete b again", outcome(nil, err))

	informer(ctx, server, token, ca, encoding, prefix, label, "watchlist", true)
	informer(ctx, server, token, ca, encoding, prefix, label, "listwatch", false)

	for _, n := range []string{"a", "c", "d"} {
		err := cms.Delete(ctx, prefix+"-"+n, metav1.DeleteOptions{})
		say("delete "+n, outcome(nil, err))
	}
}

// recorder keeps an informer's handler calls and wakes whoever waits for one.
type recorder struct {
	mu     sync.Mutex
	seen   []string
	change chan struct{}
}

func (r *recorder) add(what string) {
	r.mu.Lock()
	r.seen = append(r.seen, what)
	r.mu.Unlock()
	select {
	case r.change <- struct{}{}:
	default:
	}
}

// waitFor waits until the handler saw what (30 s at most).
func (r *recorder) waitFor(what string) bool {
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		for _, s := range r.seen {
			if s == what {
				r.mu.Unlock()
				return true
			}
		}
		r.mu.Unlock()
		select {
		case <-r.change:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return false
		}
	}
}

// informer runs a ConfigMap informer on the label (a watch-list or a list then a watch, as
// watchList says), then makes an object, changes it and deletes it, and reports what the
// informer's handler saw of each.
func informer(ctx context.Context, server, token, ca, encoding, prefix, label, name string, watchList bool) {
	features.setWatchList(watchList)
	client := mustClient(config(server, token, ca, encoding, "clientgo/"+encoding+"/informer-"+name))
	writer := mustClient(config(server, token, ca, encoding, "clientgo/"+encoding+"/main")).CoreV1().ConfigMaps(namespace)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=" + label }))
	inf := factory.Core().V1().ConfigMaps().Informer()
	rec := &recorder{change: make(chan struct{}, 1)}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { rec.add("add " + obj.(*corev1.ConfigMap).Name) },
		UpdateFunc: func(_, obj any) {
			cm := obj.(*corev1.ConfigMap)
			rec.add("update " + cm.Name + " " + cm.Data["step"])
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			rec.add("delete " + obj.(*corev1.ConfigMap).Name)
		},
	})
	stop := make(chan struct{})
	factory.Start(stop)
	synced := cache.WaitForCacheSync(stop, inf.HasSynced)
	rec.mu.Lock()
	initial := append([]string(nil), rec.seen...)
	rec.mu.Unlock()
	sort.Strings(initial)
	say("informer "+name+" synced", map[string]any{"synced": synced, "seen": initial})

	n := prefix + "-" + name
	obj, err := writer.Create(ctx, configMap(n, label, map[string]string{"step": "created"}), metav1.CreateOptions{})
	say("informer "+name+" create", outcome(obj, err))
	saw := map[string]bool{"add " + n: rec.waitFor("add " + n)}
	if obj != nil {
		obj.Data = map[string]string{"step": "updated"}
		upd, err := writer.Update(ctx, obj, metav1.UpdateOptions{})
		say("informer "+name+" update", outcome(upd, err))
		saw["update "+n+" updated"] = rec.waitFor("update " + n + " updated")
	}
	err = writer.Delete(ctx, n, metav1.DeleteOptions{})
	say("informer "+name+" delete", outcome(nil, err))
	saw["delete "+n] = rec.waitFor("delete " + n)
	close(stop)
	factory.Shutdown()
	stored := []string{}
	for _, o := range inf.GetStore().List() {
		stored = append(stored, o.(*corev1.ConfigMap).Name)
	}
	sort.Strings(stored)
	say("informer "+name+" saw", map[string]any{"saw": saw, "store": stored})
}

// attempts is a transport that writes down every answer client-go's requests get, and calls
// on429 at the first 429; the attempt after a 429 says whether client-go waited the
// Retry-After it was given.
type attempts struct {
	next    http.RoundTripper
	mu      sync.Mutex
	last429 time.Time
	waitFor time.Duration
	on429   func()
	once    sync.Once
}

func (t *attempts) RoundTrip(req *http.Request) (*http.Response, error) {
	line := map[string]any{"method": req.Method, "path": req.URL.Path}
	t.mu.Lock()
	if !t.last429.IsZero() {
		line["waited-retry-after"] = time.Since(t.last429) >= t.waitFor
		t.last429 = time.Time{}
	}
	t.mu.Unlock()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		line["error"] = masked(err.Error())
	} else {
		line["status"] = resp.StatusCode
		line["retry-after"] = resp.Header.Get("Retry-After")
		if resp.StatusCode == http.StatusTooManyRequests {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			line["body"] = string(body)
			resp.Body = io.NopCloser(strings.NewReader(string(body)))
			seconds, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			t.mu.Lock()
			t.last429, t.waitFor = time.Now(), time.Duration(seconds)*time.Second
			t.mu.Unlock()
			t.once.Do(t.on429)
		}
	}
	say("attempt", line)
	return resp, err
}

func sigtermPhase(server, token, ca, encoding string) {
	ctx := context.Background()
	prefix := "cg-sigterm-" + map[string]string{"json": "json", "protobuf": "pb"}[encoding]
	held := mustClient(config(server, token, ca, encoding, "clientgo/"+encoding+"/held")).CoreV1().RESTClient()
	cfg := config(server, token, ca, encoding, "clientgo/"+encoding+"/sigterm")
	body, feed := io.Pipe()
	doc, _ := json.Marshal(configMap(prefix+"-held", prefix, map[string]string{"held": "yes"}))
	tr := &attempts{on429: func() {
		go func() { // the held POST's body ends: the server finishes it, and the drain with it
			_, _ = feed.Write(doc[len(doc)/2:])
			feed.Close()
		}()
	}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { tr.next = rt; return tr }
	cms := mustClient(cfg).CoreV1().ConfigMaps(namespace)

	// a POST whose body comes later: in flight until the first 429, so the drain waits for it
	done := make(chan map[string]any)
	go func() {
		res := held.Post().Namespace(namespace).Resource("configmaps").
			SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
		var code int
		res.StatusCode(&code)
		obj, err := res.Get()
		o := outcome(obj, err)
		o["code"] = code
		done <- o
	}()
	// the transport has taken the first half once this returns: the request is on its way
	if _, err := feed.Write(doc[:len(doc)/2]); err != nil {
		say("held", map[string]any{"error": err.Error()})
	}
	say("holding", map[string]any{"body": string(doc)})

	// the harness sends the server SIGTERM, waits for NotAcceptingNewRequest and says go
	line := make([]byte, 64)
	if _, err := os.Stdin.Read(line); err != nil {
		say("stdin", map[string]any{"error": err.Error()})
	}
	obj, err := cms.Get(ctx, prefix+"-held", metav1.GetOptions{})
	say("get after sigterm", outcome(obj, err))
	say("held POST", <-done)
}
