// Command client-go-bench runs client-go's SharedIndexInformer (JSON, not protobuf) against a server
// for kube-informer's benchmark (bench/run.ts) and prints its measurements as JSON lines on stdout.
//
// Protocol (the same as the Node contenders, see bench/lib/contender.ts):
//
//	{"type":"synced", ...}   once the cache holds --pods objects
//	{"type":"done", ...}     once --events MODIFIED notifications were handled (--mode watch)
//	{"type":"sample", ...}   every --sample-ms in --mode steady, until stdin closes
//
// The process exits when stdin reaches EOF (the parent's lifeline) or after printing "done".
//
// The server is --server/--token (the fake server) or --kubeconfig (a real kube-apiserver, the
// kubeconfig's current context); --namespace limits the informer to one namespace.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func cpuMs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e3 + float64(t.Usec)/1e3 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func heap() (uint64, uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.Sys
}

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func main() {
	server := flag.String("server", "", "API server URL (http or https)")
	token := flag.String("token", "", "bearer token")
	insecure := flag.Bool("insecure", true, "skip TLS verification")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig file to use instead of --server/--token/--insecure (a real kube-apiserver)")
	namespace := flag.String("namespace", metav1.NamespaceAll, "watch only this namespace (default: all)")
	mode := flag.String("mode", "sync", "sync | watch | steady")
	pods := flag.Int("pods", 0, "objects the cache must hold to count as synced")
	events := flag.Int("events", 0, "MODIFIED notifications to wait for in watch mode")
	handlers := flag.Int("handlers", 1, "no-op handlers to register")
	metaOnly := flag.Bool("metadata", false, "a metadata-only informer (PartialObjectMetadata)")
	sampleMs := flag.Int("sample-ms", 10000, "memory sample period in steady mode")
	listRv := flag.String("list-rv", "", "list at exactly this resourceVersion (the watch then replays from it)")
	flag.Parse()

	// The first list at an exact version, so the watch replays the server's recorded history at full speed.
	tweak := func(o *metav1.ListOptions) {
		if *listRv != "" && !o.AllowWatchBookmarks && o.Continue == "" && !o.Watch {
			o.ResourceVersion = *listRv
			o.ResourceVersionMatch = metav1.ResourceVersionMatchExact
		}
	}

	cfg := &rest.Config{Host: *server, BearerToken: *token, TLSClientConfig: rest.TLSClientConfig{Insecure: *insecure}}
	if *kubeconfig != "" {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig); err != nil {
			panic(err)
		}
	}
	// JSON like the Node contenders (not protobuf), and no client-side rate limit.
	cfg.QPS = -1
	cfg.ContentConfig = rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	heap0, _ := heap()
	cpu0 := cpuMs()
	t0 := time.Now()

	var inf cache.SharedIndexInformer
	if *metaOnly {
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			panic(err)
		}
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
		inf = metadatainformer.NewFilteredMetadataInformer(mc, gvr, *namespace, 0, cache.Indexers{}, tweak).Informer()
	} else {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			panic(err)
		}
		inf = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*namespace), informers.WithTweakListOptions(tweak)).Core().V1().Pods().Informer()
	}
	// Each handler counts its MODIFIED notifications; the run is done when every handler saw --events.
	counts := make([]atomic.Int64, *handlers)
	var finished atomic.Int64
	var firstNs, lastNs atomic.Int64
	var cpuFirst atomic.Uint64
	done := make(chan struct{})
	target := int64(*events)
	regs := make([]cache.ResourceEventHandlerRegistration, 0, *handlers)
	for h := 0; h < *handlers; h++ {
		count := &counts[h]
		first := h == 0
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) {},
			UpdateFunc: func(any, any) {
				n := count.Add(1)
				if first && n == 1 {
					firstNs.Store(time.Now().UnixNano())
					cpuFirst.Store(uint64(cpuMs() * 1000))
				}
				if n == target && finished.Add(1) == int64(len(counts)) {
					lastNs.Store(time.Now().UnixNano())
					close(done)
				}
			},
			DeleteFunc: func(any) {},
		})
		if err != nil {
			panic(err)
		}
		regs = append(regs, reg)
	}
	allSynced := func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return inf.HasSynced()
	}
	go inf.Run(ctx.Done())

	// Synced = the informer and every handler say so and the cache holds every object.
	for !(allSynced() && len(inf.GetStore().ListKeys()) >= *pods) {
		time.Sleep(time.Millisecond)
	}
	syncMs := float64(time.Since(t0).Microseconds()) / 1e3
	syncCpu := cpuMs() - cpu0
	heap1, sys1 := heap()
	cached := len(inf.GetStore().ListKeys())
	emit(map[string]any{"type": "synced", "syncMs": syncMs, "syncCpuMs": syncCpu, "cached": cached,
		"heapBefore": heap0, "heapAfter": heap1, "rss": sys1, "runtime": runtime.Version()})

	stdinClosed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdinClosed) }()

	switch *mode {
	case "watch":
		select {
		case <-done:
		case <-stdinClosed:
			return
		}
		cpuEnd := cpuMs()
		seconds := float64(lastNs.Load()-firstNs.Load()) / 1e9
		h, sys := heap()
		emit(map[string]any{"type": "done", "events": target, "seconds": seconds,
			"cpuMs": cpuEnd - float64(cpuFirst.Load())/1000, "heapAfter": h, "rss": sys})
	case "steady":
		tick := time.NewTicker(time.Duration(*sampleMs) * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stdinClosed:
				return
			case <-tick.C:
				h, sys := heap()
				emit(map[string]any{"type": "sample", "t": time.Since(t0).Seconds(), "heap": h, "rss": sys,
					"events": counts[0].Load(), "cpuMs": cpuMs() - cpu0})
			}
		}
	default:
		// sync only
	}
}
