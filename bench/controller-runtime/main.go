// Command controller-runtime-bench runs the operator of kube-informer's operator benchmark phase
// (bench/lib/operator-phase.ts) as controller-runtime: a manager with its cache, one controller
// `For(&BenchSet{})` (GenerationChangedPredicate) `.Owns(&corev1.ConfigMap{})`, and prints JSON lines.
//
// The reconcile, the same on the three sides of the phase (bench/operator/*.ts are the Node ones):
// read the BenchSet from the cache; for each i < spec.children, read ConfigMap <name>-<i> from the cache:
// missing → create it (spec.data, a controller owner reference), data or owner reference different →
// update it (PUT, the cached resourceVersion); then, when status.observedGeneration or status.ready
// differ, PUT the status subresource. Any error requeues the key with the controller's backoff.
//
// Protocol (stdout, one JSON object a line; see bench/lib/operator-side.ts):
//
//	{"type":"start","t":…}                                          once the process runs (epoch ms)
//	{"type":"first","t":…}                                          when the first reconcile starts (epoch ms)
//	{"type":"reconciled","count":…,"firstStartMs":…,"atMs":…,"cpuAtFirstMs":…,"cpuMs":…}   when --expect reconciles completed
//	{"type":"final","reconciles":…,"errors":…,"writes":…,"cpuMs":…,"maxRssKiB":…,"starts":[[key,gen,ms],…]}   at stdin EOF, then exit
//
// `starts` lists the reconciles that began on a BenchSet of generation ≥ 2 (the writer's spec changes) or
// carrying the storm annotation (the storm phase's new primaries, bench/lib/storm-phase.ts). --work-ms makes
// each reconcile wait that long first, standing for an outside call (the storm phase).
//
// The controller's queue is controller-runtime's default: the priority queue (UsePriorityQueue defaults to
// true since v0.23), where the initial list's adds and unchanged updates enter at LowPriority (-100).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// stormAnnotation marks the storm phase's new primaries (bench/lib/operator-side.ts STORM_ANNOTATION).
const stormAnnotation = "bench.kube-informer.io/storm"

// GroupVersion of the bench CRD (bench/lib/operator-world.ts installs it).
var GroupVersion = schema.GroupVersion{Group: "bench.kube-informer.io", Version: "v1"}

// BenchSetSpec asks for Children ConfigMaps holding Data.
type BenchSetSpec struct {
	Children int               `json:"children"`
	Data     map[string]string `json:"data,omitempty"`
}

// BenchSetStatus is what the reconcile reports.
type BenchSetStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	Ready              int   `json:"ready,omitempty"`
}

// BenchSet is the primary resource, written by hand as kubebuilder would generate it.
type BenchSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BenchSetSpec   `json:"spec,omitempty"`
	Status            BenchSetStatus `json:"status,omitempty"`
}

// BenchSetList is a list of BenchSets.
type BenchSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchSet `json:"items"`
}

// DeepCopyInto copies the receiver into out.
func (in *BenchSet) DeepCopyInto(out *BenchSet) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Data = maps.Clone(in.Spec.Data)
}

// DeepCopy copies the receiver.
func (in *BenchSet) DeepCopy() *BenchSet {
	if in == nil {
		return nil
	}
	out := new(BenchSet)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *BenchSet) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *BenchSetList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(BenchSetList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]BenchSet, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func cpuMs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e3 + float64(t.Usec)/1e3 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// maxRssKiB is VmHWM of /proc/self/status (the peak resident set), 0 if unreadable.
func maxRssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

var outMu sync.Mutex

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Println(string(b))
}

func nowMs() float64 { return float64(time.Now().UnixMicro()) / 1e3 }

type reconciler struct {
	client.Client
	children int
	expect   int64
	work     time.Duration

	reconciles, errors, writes atomic.Int64
	firstOnce                  sync.Once
	firstStartMs, cpuAtFirst   float64
	startsMu                   sync.Mutex
	starts                     [][3]any
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	start := nowMs()
	r.firstOnce.Do(func() {
		r.firstStartMs, r.cpuAtFirst = start, cpuMs()
		emit(map[string]any{"type": "first", "t": start})
	})
	defer func() {
		if err != nil {
			r.errors.Add(1)
		}
		if r.reconciles.Add(1) == r.expect {
			emit(map[string]any{"type": "reconciled", "count": r.expect, "firstStartMs": r.firstStartMs, "atMs": nowMs(), "cpuAtFirstMs": r.cpuAtFirst, "cpuMs": cpuMs()})
		}
	}()
	var set BenchSet
	err = r.Get(ctx, req.NamespacedName, &set)
	if err == nil && (set.Generation > 1 || set.Annotations[stormAnnotation] != "") {
		r.startsMu.Lock()
		r.starts = append(r.starts, [3]any{req.Namespace + "/" + req.Name, set.Generation, start})
		r.startsMu.Unlock()
	}
	if r.work > 0 {
		time.Sleep(r.work)
	}
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ready := 0
	for i := 0; i < set.Spec.Children; i++ {
		name := set.Name + "-" + strconv.Itoa(i)
		var cm corev1.ConfigMap
		err := r.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: name}, &cm)
		switch {
		case apierrors.IsNotFound(err):
			cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: set.Namespace}, Data: maps.Clone(set.Spec.Data)}
			if err := controllerutil.SetControllerReference(&set, &cm, r.Scheme()); err != nil {
				return ctrl.Result{}, err
			}
			r.writes.Add(1)
			if err := r.Create(ctx, &cm); err != nil {
				return ctrl.Result{}, err
			}
		case err != nil:
			return ctrl.Result{}, err
		case !maps.Equal(cm.Data, set.Spec.Data) || !metav1.IsControlledBy(&cm, &set):
			cm.Data = maps.Clone(set.Spec.Data)
			if err := controllerutil.SetControllerReference(&set, &cm, r.Scheme()); err != nil {
				return ctrl.Result{}, err
			}
			r.writes.Add(1)
			if err := r.Update(ctx, &cm); err != nil {
				return ctrl.Result{}, err
			}
		}
		ready++
	}
	if set.Status.ObservedGeneration != set.Generation || set.Status.Ready != ready {
		set.Status = BenchSetStatus{ObservedGeneration: set.Generation, Ready: ready}
		r.writes.Add(1)
		if err := r.Status().Update(ctx, &set); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func main() {
	kubeconfig := flag.String("kubeconfig-file", "", "kubeconfig of the server, its current context (controller-runtime registers --kubeconfig itself)")
	namespace := flag.String("namespace", "", "the namespace of the BenchSets and ConfigMaps")
	concurrency := flag.Int("concurrency", 1, "MaxConcurrentReconciles")
	expect := flag.Int64("expect", 0, "print a reconciled line when this many reconciles completed (0: never)")
	workMs := flag.Float64("work-ms", 0, "milliseconds each reconcile waits first, standing for an outside call (0: none)")
	flag.Parse()
	emit(map[string]any{"type": "start", "t": nowMs()})
	log.SetLogger(logr.Discard())

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		panic(err)
	}
	// JSON like the Node sides (not protobuf), and no client-side rate limit (the Node clients have none).
	cfg.QPS = -1
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	scheme.AddKnownTypes(GroupVersion, &BenchSet{}, &BenchSetList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
	})
	if err != nil {
		panic(err)
	}
	r := &reconciler{Client: mgr.GetClient(), expect: *expect, work: time.Duration(*workMs * float64(time.Millisecond))}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&BenchSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: *concurrency}).
		Complete(r)
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	_, _ = io.Copy(io.Discard, os.Stdin)
	r.startsMu.Lock()
	starts := r.starts
	r.startsMu.Unlock()
	emit(map[string]any{"type": "final", "reconciles": r.reconciles.Load(), "errors": r.errors.Load(), "writes": r.writes.Load(),
		"cpuMs": cpuMs(), "maxRssKiB": maxRssKiB(), "starts": starts})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}
